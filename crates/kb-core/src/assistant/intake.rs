//! [`Intake`]: files handed to an [`Assistant`] (an upload, `kb capture --file`), kept in
//! `attachments/` and filed as a note of their own holding the text they have (a PDF's, a
//! text file's) and a link to the file.

use std::time::Duration;

use kb_domain::Frontmatter;
use kb_domain::fields::keys;
use kb_intake::{FileKind, file_kind, file_text};
use kb_storage::vault::{KeptFile, Upload, UploadError};
use kb_tools::tools::capture::{CaptureArgs, CaptureData, ClassifyAndCapture, Document};
use kb_tools::{CaptureSource, ErrorCode};
use serde_json::Value;

use super::Assistant;
use crate::error::ToolFailure;

/// The longest kb reads a file's text (a PDF made to keep a parser busy is given up).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Files handed to kb; see the module's documentation.
#[derive(Debug, Clone, Copy)]
pub struct Intake<'a> {
    kb: &'a Assistant,
    source: CaptureSource,
}

impl<'a> Intake<'a> {
    pub(super) fn new(kb: &'a Assistant, source: CaptureSource) -> Intake<'a> {
        Intake { kb, source }
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
        let filed = self.kb.run::<ClassifyAndCapture>(args, self.source).await;
        if filed.is_err() && kept.created {
            // Nothing links the file: it goes, as the capture did.
            let _ = std::fs::remove_file(self.kb.vault.root().join(&kept.path));
        }
        filed
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
    let stem = base.rsplit_once('.').map_or(base, |(stem, _)| if stem.is_empty() { base } else { stem });
    let title: String = stem.chars().filter(|c| !c.is_control()).collect();
    if title.trim().is_empty() { "Untitled file".to_string() } else { title.trim().to_string() }
}

fn unreadable(why: String) -> ToolFailure {
    ToolFailure::new(ErrorCode::UnreadableFile, format!("{why}; nothing was kept"))
}

fn upload_failure(error: UploadError) -> ToolFailure {
    match error {
        UploadError::TooLarge { .. } => ToolFailure::new(ErrorCode::InvalidArguments, error.to_string()),
        UploadError::Io(_) => ToolFailure::new(ErrorCode::Internal, error.to_string()),
    }
}
