//! [`OpenAiTranscriber`]: voice notes transcribed by an OpenAI-compatible
//! `/v1/audio/transcriptions` server, with its settings
//! ([`TranscriptionSettings`], `KB_TRANSCRIBE_*`).

use std::sync::OnceLock;
use std::time::Duration;

use async_trait::async_trait;
use kb_domain::cause::SharedCause;
use kb_domain::{Audio, Transcriber, TranscriptionError};

use crate::openai::settings::{DEFAULT_BASE_URL, SettingsError};

/// How long one transcription may take unless told otherwise: a few minutes of speech.
pub const DEFAULT_TRANSCRIBE_TIMEOUT: Duration = Duration::from_secs(120);

/// The settings of [`OpenAiTranscriber`].
#[derive(Clone, PartialEq, Eq)]
pub struct TranscriptionSettings {
    /// The model (`KB_TRANSCRIBE_MODEL`, such as `whisper-1`).
    pub model: String,
    /// The API root including `/v1` (`KB_TRANSCRIBE_BASE_URL`; default the chat server's).
    pub base_url: String,
    /// The key (`KB_TRANSCRIBE_API_KEY`; the chat key only when the server is the chat
    /// server).
    pub api_key: Option<String>,
    /// How long one transcription may take.
    pub timeout: Duration,
}

impl std::fmt::Debug for TranscriptionSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptionSettings")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl TranscriptionSettings {
    /// The settings `lookup` gives, when `KB_TRANSCRIBE_MODEL` is set.
    pub fn from_lookup(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<TranscriptionSettings>, SettingsError> {
        let read = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let Some(model) = read("KB_TRANSCRIBE_MODEL") else { return Ok(None) };
        let chat_base = read("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
        let base_url = read("KB_TRANSCRIBE_BASE_URL").unwrap_or_else(|| chat_base.clone());
        let same_server =
            base_url.trim_end_matches('/').eq_ignore_ascii_case(chat_base.trim_end_matches('/'));
        let api_key = match read("KB_TRANSCRIBE_API_KEY") {
            Some(key) => Some(key),
            // The chat key goes only where chat requests go.
            None if same_server => read("OPENAI_API_KEY"),
            None => None,
        };
        let parsed = reqwest::Url::parse(&base_url).ok();
        if !parsed.is_some_and(|url| matches!(url.scheme(), "http" | "https")) {
            return Err(SettingsError::Invalid {
                name: "KB_TRANSCRIBE_BASE_URL",
                value: base_url,
                reason: "expected an http(s) URL ending in /v1, such as http://localhost:8000/v1",
            });
        }
        if let Some(key) = &api_key
            && reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).is_err()
        {
            return Err(SettingsError::Invalid {
                name: "KB_TRANSCRIBE_API_KEY",
                value: "***".into(),
                reason: "expected text that can go in an HTTP header",
            });
        }
        Ok(Some(TranscriptionSettings { model, base_url, api_key, timeout: DEFAULT_TRANSCRIBE_TIMEOUT }))
    }
}

/// Transcribes voice notes on an OpenAI-compatible server: a multipart `POST` of the
/// model and the audio to `{base}/audio/transcriptions`, answered `{"text": …}` (the only
/// field read: local servers such as whisper.cpp's send nothing else).
pub struct OpenAiTranscriber {
    /// Made at the first transcription.
    client: OnceLock<reqwest::Client>,
    settings: TranscriptionSettings,
}

impl std::fmt::Debug for OpenAiTranscriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiTranscriber").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl OpenAiTranscriber {
    /// A transcriber with `settings` (checked when read).
    pub fn new(settings: TranscriptionSettings) -> OpenAiTranscriber {
        OpenAiTranscriber { client: OnceLock::new(), settings }
    }

    fn client(&self) -> Result<&reqwest::Client, TranscriptionError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(self.settings.timeout))
            .timeout(self.settings.timeout)
            .build()
            .map_err(|error| failed(format!("cannot set up the HTTP client: {error}"), None))?;
        Ok(self.client.get_or_init(|| client))
    }
}

#[async_trait]
impl Transcriber for OpenAiTranscriber {
    fn model(&self) -> &str {
        &self.settings.model
    }

    async fn transcribe(&self, audio: Audio) -> Result<String, TranscriptionError> {
        let file = reqwest::multipart::Part::bytes(audio.bytes).file_name(audio.file_name);
        let form =
            reqwest::multipart::Form::new().text("model", self.settings.model.clone()).part("file", file);
        let url = format!("{}/audio/transcriptions", self.settings.base_url.trim_end_matches('/'));
        let mut request = self.client()?.post(url).multipart(form);
        if let Some(key) = &self.settings.api_key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|error| {
            let detail = if error.is_timeout() {
                format!("no answer within {} s", self.settings.timeout.as_secs())
            } else {
                "it cannot be reached".to_string()
            };
            failed(detail, Some(SharedCause::new(error)))
        })?;
        let status = response.status();
        if !status.is_success() {
            return Err(failed(format!("it answered {status}"), None));
        }
        let answer: serde_json::Value = response
            .json()
            .await
            .map_err(|error| failed("its answer is not JSON".to_string(), Some(SharedCause::new(error))))?;
        match answer.get("text").and_then(serde_json::Value::as_str) {
            Some(text) => Ok(text.trim().to_string()),
            None => Err(failed("its answer has no text".to_string(), None)),
        }
    }
}

/// The longest wait for a connection, when the call's timeout is longer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

fn failed(detail: String, cause: Option<SharedCause>) -> TranscriptionError {
    TranscriptionError { detail, cause }
}
