//! The settings of what kb takes in besides typed text: links' pages (`KB_FETCH_*`) and
//! files (`KB_UPLOAD_MAX_BYTES`), voice notes (`KB_TRANSCRIBE_*`) and mail
//! (`KB_MAIL_*`, in [`super::mail`]).

use std::time::Duration;

use kb_intake::FetchSettings;
use kb_llm::openai::TranscriptionSettings;

use super::mail::MailConfig;
use super::{ConfigError, count};

/// How kb takes in what people send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IntakeConfig {
    /// How a captured link's page is fetched (`KB_FETCH_TIMEOUT_SECS`, 10;
    /// `KB_FETCH_MAX_BYTES`, 5 MB; `KB_FETCH_ALLOW_PRIVATE`, off).
    pub fetch: FetchSettings,
    /// The largest file kb takes (`KB_UPLOAD_MAX_BYTES`, 50 MB).
    pub upload_max_bytes: u64,
    /// The server that transcribes voice notes (`KB_TRANSCRIBE_*`; none: a voice note is
    /// kept as audio only).
    pub transcription: Option<TranscriptionSettings>,
    /// The mailbox kb files mail from (`KB_MAIL_*`; none: no mail is taken in).
    pub mail: Option<MailConfig>,
}

/// The largest file kb takes unless told otherwise: 50 MB.
pub const DEFAULT_UPLOAD_MAX_BYTES: u64 = 50 * 1024 * 1024;

impl Default for IntakeConfig {
    fn default() -> IntakeConfig {
        IntakeConfig {
            fetch: FetchSettings::default(),
            upload_max_bytes: DEFAULT_UPLOAD_MAX_BYTES,
            transcription: None,
            mail: None,
        }
    }
}

impl IntakeConfig {
    /// Reads the settings through `lookup`.
    pub(super) fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> Result<IntakeConfig, ConfigError> {
        let defaults = FetchSettings::default();
        let timeout = count(lookup, "KB_FETCH_TIMEOUT_SECS", defaults.timeout.as_secs() as usize)?;
        if timeout > 3_600 {
            return Err(ConfigError::Invalid {
                name: "KB_FETCH_TIMEOUT_SECS",
                value: timeout.to_string(),
                expected: "a whole number of seconds from 1 to 3600",
            });
        }
        let max_bytes = count(lookup, "KB_FETCH_MAX_BYTES", defaults.max_bytes as usize)?;
        let fetch = FetchSettings {
            timeout: Duration::from_secs(timeout as u64),
            max_bytes: max_bytes as u64,
            allow_private: flag(lookup, "KB_FETCH_ALLOW_PRIVATE")?,
        };
        let upload_max_bytes =
            count(lookup, "KB_UPLOAD_MAX_BYTES", DEFAULT_UPLOAD_MAX_BYTES as usize)? as u64;
        let transcription = TranscriptionSettings::from_lookup(lookup)
            .map_err(|e| ConfigError::Setting { name: "KB_TRANSCRIBE_BASE_URL", problem: e.to_string() })?;
        let mail = MailConfig::from_lookup(lookup)?;
        Ok(IntakeConfig { fetch, upload_max_bytes, transcription, mail })
    }
}

/// A switch: `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (unset: off).
pub(super) fn flag(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<bool, ConfigError> {
    match lookup(name).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(false),
        Some(value) => match value.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            _ => Err(ConfigError::Invalid { name, value, expected: "1 (on) or 0 (off)" }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<IntakeConfig, ConfigError> {
        IntakeConfig::from_lookup(&|name: &str| {
            pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn fetching_defaults_to_public_addresses_ten_seconds_and_five_megabytes() {
        let fetch = read(&[]).unwrap().fetch;
        assert_eq!(fetch, FetchSettings::default());
        assert!(!fetch.allow_private);
        let set = read(&[
            ("KB_FETCH_TIMEOUT_SECS", "3"),
            ("KB_FETCH_MAX_BYTES", "1000"),
            ("KB_FETCH_ALLOW_PRIVATE", "1"),
        ])
        .unwrap()
        .fetch;
        assert_eq!((set.timeout, set.max_bytes, set.allow_private), (Duration::from_secs(3), 1000, true));
        assert!(read(&[("KB_FETCH_ALLOW_PRIVATE", "maybe")]).is_err());
        assert!(read(&[("KB_FETCH_TIMEOUT_SECS", "0")]).is_err());
    }
}
