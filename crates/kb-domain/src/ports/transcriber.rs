//! The transcription port: [`Transcriber`] turns a voice note's audio into text (an
//! OpenAI-compatible `/v1/audio/transcriptions` server), and [`TranscriptionError`], how it
//! fails, worded as the transcription server's.

use async_trait::async_trait;

use crate::cause::SharedCause;

/// A voice note to transcribe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audio {
    /// The recording's bytes.
    pub bytes: Vec<u8>,
    /// Its file name (the server tells the format by its extension: `note.webm`).
    pub file_name: String,
}

/// A model that transcribes speech.
#[async_trait]
pub trait Transcriber: Send + Sync {
    /// The model's name, as sent to the server.
    fn model(&self) -> &str;

    /// The words spoken in `audio`.
    async fn transcribe(&self, audio: Audio) -> Result<String, TranscriptionError>;
}

/// Why a voice note was not transcribed. Where the failure came from an error underneath
/// (the HTTP client's), that error is kept as the `source()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the transcription server failed: {detail} (is it answering at KB_TRANSCRIBE_BASE_URL?)")]
pub struct TranscriptionError {
    /// What went wrong, in a few words.
    pub detail: String,
    /// The error underneath, when there is one.
    #[source]
    pub cause: Option<SharedCause>,
}
