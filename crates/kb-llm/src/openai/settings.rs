//! How to reach an OpenAI-compatible server: [`OpenAiSettings`], read from the environment
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `KB_MODEL`, `KB_LLM_TIMEOUT_SECS`).
//!
//! The API key never appears in a `Debug` output or a log line.

use std::time::Duration;

/// OpenAI's own endpoint, used when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The model used when `KB_MODEL` is not set.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// How long one call may take when `KB_LLM_TIMEOUT_SECS` is not set.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Requests sent in all for one call when the server keeps answering 429.
pub const DEFAULT_MAX_TRIES: u32 = 3;
/// The first wait after a 429; it doubles at each further try.
pub const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// The longest wait between two tries; a `Retry-After` asking for more ends the retries.
pub const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(10);

/// A setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A variable holds a value of the wrong form.
    #[error("{name} is invalid ({value:?}): {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// What it holds (never the key).
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// The settings of [`crate::openai::OpenAiChatModel`].
#[derive(Clone, PartialEq)]
pub struct OpenAiSettings {
    /// The API key (sent as a bearer token; local servers accept any).
    pub api_key: String,
    /// The API root including `/v1` (`None`: OpenAI's).
    pub base_url: Option<String>,
    /// The model name sent with every request.
    pub model: String,
    /// The longest a call may take, retries included; also the HTTP client's timeout.
    pub timeout: Duration,
    /// Requests sent in all for one call while the server answers 429.
    pub max_tries: u32,
    /// The first wait after a 429 (doubled at each try, plus jitter).
    pub retry_base_delay: Duration,
    /// The longest wait between tries; a longer `Retry-After` ends the retries at once.
    pub max_retry_delay: Duration,
}

impl std::fmt::Debug for OpenAiSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiSettings")
            .field("api_key", &"<redacted>")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_tries", &self.max_tries)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("max_retry_delay", &self.max_retry_delay)
            .finish()
    }
}

impl OpenAiSettings {
    /// Settings for `model` with `api_key` on OpenAI, and the defaults of everything else.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> OpenAiSettings {
        OpenAiSettings {
            api_key: api_key.into(),
            base_url: None,
            model: model.into(),
            timeout: DEFAULT_TIMEOUT,
            max_tries: DEFAULT_MAX_TRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_retry_delay: DEFAULT_MAX_RETRY_DELAY,
        }
    }

    /// Reads the settings from the process environment; `Ok(None)` when `OPENAI_API_KEY` is
    /// unset or blank (kb then runs its offline model).
    pub fn from_env() -> Result<Option<OpenAiSettings>, SettingsError> {
        OpenAiSettings::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OpenAiSettings>, SettingsError> {
        let read = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let Some(api_key) = read("OPENAI_API_KEY") else {
            return Ok(None);
        };
        let mut settings =
            OpenAiSettings::new(api_key, read("KB_MODEL").unwrap_or_else(|| DEFAULT_MODEL.into()));
        settings.base_url = read("OPENAI_BASE_URL");
        if let Some(secs) = read("KB_LLM_TIMEOUT_SECS") {
            settings.timeout = parse_timeout(&secs)?;
        }
        settings.validate()?;
        Ok(Some(settings))
    }

    /// Checks what would otherwise fail later: a key that cannot be sent in a header, a
    /// base URL that is not http(s), a zero timeout or try count.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if reqwest::header::HeaderValue::from_str(&format!("Bearer {}", self.api_key)).is_err() {
            return Err(SettingsError::Invalid {
                name: "OPENAI_API_KEY",
                value: "<redacted>".into(),
                reason: "it holds characters that cannot be sent in an HTTP header",
            });
        }
        if let Some(base) = &self.base_url {
            let parsed = reqwest::Url::parse(base).ok();
            if !parsed.is_some_and(|url| matches!(url.scheme(), "http" | "https")) {
                return Err(SettingsError::Invalid {
                    name: "OPENAI_BASE_URL",
                    value: base.clone(),
                    reason: "expected an http(s) URL ending in /v1, such as http://localhost:11434/v1",
                });
            }
        }
        if self.model.trim().is_empty() {
            return Err(SettingsError::Invalid {
                name: "KB_MODEL",
                value: self.model.clone(),
                reason: "it is empty",
            });
        }
        if self.timeout.is_zero() {
            return Err(SettingsError::Invalid {
                name: "KB_LLM_TIMEOUT_SECS",
                value: "0".into(),
                reason: "expected a positive number of seconds",
            });
        }
        if self.max_tries == 0 {
            return Err(SettingsError::Invalid {
                name: "max_tries",
                value: "0".into(),
                reason: "at least one request must be sent",
            });
        }
        Ok(())
    }

    /// The API root requests go to, without a trailing `/`.
    pub fn api_base(&self) -> String {
        self.base_url.as_deref().unwrap_or(DEFAULT_BASE_URL).trim_end_matches('/').to_string()
    }

    /// The timeout in whole seconds, rounded up (as reported in [`kb_domain::LlmError::Timeout`]).
    pub fn timeout_secs(&self) -> u64 {
        self.timeout.as_secs() + u64::from(self.timeout.subsec_nanos() > 0)
    }
}

fn parse_timeout(text: &str) -> Result<Duration, SettingsError> {
    match text.parse::<u64>() {
        Ok(secs) if secs > 0 => Ok(Duration::from_secs(secs)),
        _ => Err(SettingsError::Invalid {
            name: "KB_LLM_TIMEOUT_SECS",
            value: text.to_string(),
            reason: "expected a positive whole number of seconds",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn from(vars: &[(&str, &str)]) -> Result<Option<OpenAiSettings>, SettingsError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        OpenAiSettings::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn no_key_means_no_settings() {
        assert_eq!(from(&[]), Ok(None));
        assert_eq!(from(&[("OPENAI_API_KEY", "  "), ("KB_MODEL", "llama3")]), Ok(None));
    }

    #[test]
    fn defaults_and_overrides() {
        let s = from(&[("OPENAI_API_KEY", "sk-test")]).unwrap().unwrap();
        assert_eq!(s.model, DEFAULT_MODEL);
        assert_eq!(s.api_base(), DEFAULT_BASE_URL);
        assert_eq!(s.timeout, Duration::from_secs(30));
        assert_eq!(s.max_tries, 3);
        let s = from(&[
            ("OPENAI_API_KEY", "ollama"),
            ("OPENAI_BASE_URL", "http://localhost:11434/v1/"),
            ("KB_MODEL", "llama3.2"),
            ("KB_LLM_TIMEOUT_SECS", "90"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.api_base(), "http://localhost:11434/v1");
        assert_eq!(s.model, "llama3.2");
        assert_eq!(s.timeout_secs(), 90);
    }

    #[test]
    fn bad_values_are_named() {
        let err = from(&[("OPENAI_API_KEY", "k"), ("KB_LLM_TIMEOUT_SECS", "soon")]).unwrap_err();
        assert!(err.to_string().contains("KB_LLM_TIMEOUT_SECS"), "{err}");
        assert!(from(&[("OPENAI_API_KEY", "k"), ("KB_LLM_TIMEOUT_SECS", "0")]).is_err());
        let err = from(&[("OPENAI_API_KEY", "k"), ("OPENAI_BASE_URL", "localhost:11434")]).unwrap_err();
        assert!(err.to_string().contains("OPENAI_BASE_URL"), "{err}");
        let err = from(&[("OPENAI_API_KEY", "sk-secret\u{7}bell")]).unwrap_err();
        assert!(!err.to_string().contains("sk-secret"), "{err}");
    }

    #[test]
    fn debug_never_shows_the_key() {
        let s = OpenAiSettings::new("sk-very-secret-key", "gpt-4o-mini");
        let shown = format!("{s:?}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(shown.contains("gpt-4o-mini"));
    }

    #[test]
    fn timeouts_round_up_to_whole_seconds() {
        let mut s = OpenAiSettings::new("k", "m");
        s.timeout = Duration::from_millis(300);
        assert_eq!(s.timeout_secs(), 1);
    }
}
