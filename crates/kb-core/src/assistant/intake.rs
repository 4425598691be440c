//! [`Intake`]: files handed to an [`Assistant`] (an upload, `kb capture --file`), kept in
//! `attachments/` and filed as a note of their own holding the text they have (a PDF's, a
//! text file's) and a link to the file; and voice notes, kept the same way and filed as
//! their transcript.

use std::time::Duration;

use kb_domain::Frontmatter;
use kb_domain::fields::keys;
use kb_intake::{FileKind, file_kind, file_text};
use kb_storage::vault::{KeptFile, Upload, UploadError};
use kb_tools::args::FilingCategoryArg;
use kb_tools::tools::capture::{
    CallerClassification, CaptureArgs, CaptureData, ClassifyAndCapture, Document,
};
use kb_tools::{CaptureSource, ErrorCode};
use serde_json::Value;

use super::Assistant;
use crate::error::ToolFailure;

/// The longest kb reads a file's text (a PDF made to keep a parser busy is given up).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Files handed to kb; see the module's documentation.
#[derive(Debug, Clone)]
pub struct Intake<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
    /// Who asks: their changes name them, and their role bounds what the tools may do.
    actor: kb_domain::Actor,
}

impl<'a> Intake<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> Intake<'a> {
        Intake { kb, source, actor: kb_domain::Actor::local() }
    }

    /// The same, asked by `actor`: the captures name them, and a reader's are refused.
    pub fn as_actor(self, actor: &kb_domain::Actor) -> Intake<'a> {
        Intake { actor: actor.clone(), ..self }
    }

    /// The largest file kb takes (`KB_UPLOAD_MAX_BYTES`).
    pub fn upload_limit(self) -> u64 {
        self.kb.intake.upload_max_bytes
    }

    /// Starts receiving a file: write its bytes to the [`Upload`] as they come, then hand
    /// it to [`Intake::file`]. Dropped, it leaves nothing.
    pub fn start_upload(self) -> Result<Upload, ToolFailure> {
        Upload::start(self.kb.vault.root(), self.upload_limit()).map_err(upload_failure)
    }

    /// Keeps the file received in `upload`, sent as `sent_name` with `content_type`, and
    /// files a note for it (classified from its name and text; `hints` as for a capture).
    /// A file whose text cannot be read (a broken PDF) is refused and nothing is kept.
    pub async fn file(
        self,
        mut upload: Upload,
        sent_name: &str,
        content_type: Option<&str>,
        hints: Option<String>,
    ) -> Result<CaptureData, ToolFailure> {
        let received = upload.received().map_err(upload_failure)?.to_path_buf();
        let kind = file_kind(&received, sent_name, content_type)
            .map_err(|e| ToolFailure::new(ErrorCode::Internal, e.to_string()))?;
        let reading = tokio::task::spawn_blocking(move || file_text(&received, kind));
        let text = match tokio::time::timeout(READ_TIMEOUT, reading).await {
            Err(_) => {
                return Err(unreadable(format!(
                    "its text could not be read within {} s",
                    READ_TIMEOUT.as_secs()
                )));
            }
            Ok(Err(_)) => return Err(unreadable("reading its text failed".to_string())),
            Ok(Ok(Err(error))) => return Err(unreadable(error.to_string())),
            Ok(Ok(Ok(text))) => text,
        };
        let name = sent_name.to_string();
        let kept = tokio::task::spawn_blocking(move || upload.keep(&name))
            .await
            .map_err(|_| ToolFailure::new(ErrorCode::Internal, "keeping the file failed"))?
            .map_err(upload_failure)?;
        let document = document(&kept, sent_name, kind, text);
        let args = CaptureArgs {
            text: title_of(sent_name),
            hints,
            merge_into: None,
            create_new: None,
            classification: None,
            document: Some(document),
        };
        let filed = self.kb.run_as::<ClassifyAndCapture>(args, self.source, &self.actor).await;
        if filed.is_err() && kept.created {
            // Nothing links the file: it goes, as the capture did.
            let _ = std::fs::remove_file(self.kb.vault.root().join(&kept.path));
        } else if filed.is_ok() {
            self.kb.vault.keep_linked(&kept.path);
        }
        filed
    }
}

/// A voice note filed: the capture, and why it was not transcribed when it was not.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VoiceNote {
    /// The capture of its transcript (or, untranscribed, of its audio alone).
    #[serde(flatten)]
    pub filed: CaptureData,
    /// Whether its words were transcribed into the note.
    pub transcribed: bool,
    /// Why they were not, when they were not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl<'a> Intake<'a> {
    /// Keeps the voice note received in `upload` (sent as `sent_name`) in `attachments/`
    /// and files its transcript as a capture (`source: voice`). Without a transcription
    /// server, or when it fails, the recording is kept all the same, in a note of its own
    /// in the inbox, and the answer says why it has no words.
    pub async fn voice(
        self,
        mut upload: Upload,
        sent_name: &str,
        hints: Option<String>,
    ) -> Result<VoiceNote, ToolFailure> {
        let received = upload.received().map_err(upload_failure)?.to_path_buf();
        let transcript = match &self.kb.transcriber {
            None => Err("no transcription server is set (KB_TRANSCRIBE_MODEL)".to_string()),
            Some(transcriber) => {
                let bytes = tokio::fs::read(&received).await.map_err(|e| {
                    ToolFailure::new(ErrorCode::Internal, format!("the recording cannot be read: {e}"))
                })?;
                let audio = kb_domain::Audio { bytes, file_name: audio_name(sent_name) };
                match transcriber.transcribe(audio).await {
                    Ok(text) if text.trim().is_empty() => Err("no words were heard in it".to_string()),
                    Ok(text) => Ok(text),
                    Err(error) => {
                        tracing::warn!(%error, "a voice note was not transcribed; its audio is kept");
                        Err(error.to_string())
                    }
                }
            }
        };
        let name = audio_name(sent_name);
        let kept = tokio::task::spawn_blocking(move || upload.keep(&name))
            .await
            .map_err(|_| ToolFailure::new(ErrorCode::Internal, "keeping the recording failed"))?
            .map_err(upload_failure)?;
        let mut fields = Frontmatter::new();
        fields.set(keys::ATTACHMENT, Value::String(kept.path.clone()));
        let link = Some(format!("![[{}]]", kept.path));
        let (args, problem) = match transcript {
            Ok(text) => {
                let document =
                    Document { title: None, text: text.clone(), link, fields, source: CaptureSource::Voice };
                let args = CaptureArgs {
                    text,
                    hints,
                    merge_into: None,
                    create_new: None,
                    classification: None,
                    document: Some(document),
                };
                (args, None)
            }
            Err(problem) => {
                let title = format!("Voice note {}", self.kb.services.clock.now().format("%Y-%m-%d %H:%M"));
                let document = Document {
                    title: Some(title.clone()),
                    text: String::new(),
                    link,
                    fields,
                    source: CaptureSource::Voice,
                };
                // Unheard, it cannot be classified: it waits in the inbox for the person.
                let unsure = CallerClassification {
                    category: FilingCategoryArg::Ideas,
                    confidence: 0.0,
                    name: title.clone(),
                    fields: None,
                    tags: None,
                };
                let args = CaptureArgs {
                    text: title,
                    hints: None,
                    merge_into: None,
                    create_new: None,
                    classification: Some(unsure),
                    document: Some(document),
                };
                (args, Some(problem))
            }
        };
        let filed = self.kb.run_as::<ClassifyAndCapture>(args, self.source, &self.actor).await;
        match filed {
            Ok(filed) => {
                self.kb.vault.keep_linked(&kept.path);
                Ok(VoiceNote { filed, transcribed: problem.is_none(), problem })
            }
            Err(failure) => {
                if kept.created {
                    let _ = std::fs::remove_file(self.kb.vault.root().join(&kept.path));
                }
                Err(failure)
            }
        }
    }

    /// Whether voice notes are transcribed (a transcription server is set).
    pub fn transcribes(self) -> bool {
        self.kb.transcriber.is_some()
    }
}

/// A recording's file name, with an extension a transcription server knows the format by
/// (`webm` when it has none).
fn audio_name(sent_name: &str) -> String {
    let base = sent_name.rsplit(['/', '\\']).next().unwrap_or(sent_name).trim();
    if base.rsplit_once('.').is_some_and(|(stem, ext)| !stem.is_empty() && !ext.is_empty()) {
        base.to_string()
    } else {
        format!("{}.webm", if base.is_empty() { "voice-note" } else { base })
    }
}

/// The note a kept file is filed as: its embed first, then the text it holds.
fn document(kept: &KeptFile, sent_name: &str, kind: FileKind, text: Option<String>) -> Document {
    let mut fields = Frontmatter::new();
    fields.set(keys::ATTACHMENT, Value::String(kept.path.clone()));
    tracing::info!(path = %kept.path, size = kept.size, ?kind, "file kept");
    Document {
        title: Some(title_of(sent_name)),
        text: text.unwrap_or_default(),
        link: Some(format!("![[{}]]", kept.path)),
        fields,
        source: CaptureSource::File,
    }
}

/// A file's title: the name it was sent with, without its folder or extension.
fn title_of(sent_name: &str) -> String {
    let base = sent_name.rsplit(['/', '\\']).next().unwrap_or(sent_name).trim();
    let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
    let title: String = stem.chars().filter(|c| !c.is_control()).collect();
    if title.chars().any(char::is_alphanumeric) {
        title.trim().to_string()
    } else {
        "Untitled file".to_string()
    }
}

fn unreadable(why: String) -> ToolFailure {
    ToolFailure::new(ErrorCode::UnreadableFile, format!("{why}; nothing was kept"))
}

fn upload_failure(error: UploadError) -> ToolFailure {
    match error {
        UploadError::TooLarge { .. } => ToolFailure::new(ErrorCode::InvalidArguments, error.to_string()),
        UploadError::Io(_) => ToolFailure::new(
            ErrorCode::DiskError,
            format!(
                "{error}; check that kb may write to the vault's attachments folder and that the disk has room"
            ),
        ),
    }
}
