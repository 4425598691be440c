//! [`Attachments`]: the vault's files that are not notes (images, PDFs, drawings, …) and
//! which of them a link names, as Obsidian finds an attachment: by its path (from the
//! linking note's folder, then from the vault root, then as the end of a path), or by its
//! file name anywhere in the vault (case aside; the one nearest the linking note when
//! several share the name). Only names are kept: kb reads none of these files.

use std::collections::{BTreeSet, HashMap};

/// The files of a vault that are not notes, by vault-relative path (`assets/photo.png`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attachments {
    /// Each file's path, by its lowercased file name.
    by_name: HashMap<String, BTreeSet<String>>,
}

impl Attachments {
    /// The attachments at `paths` (vault-relative, `/`-separated).
    pub fn new(paths: impl IntoIterator<Item = String>) -> Attachments {
        let mut attachments = Attachments::default();
        for path in paths {
            attachments.insert(path);
        }
        attachments
    }

    /// Adds the file at `path`.
    pub fn insert(&mut self, path: String) {
        self.by_name.entry(file_name(&path).to_lowercase()).or_default().insert(path);
    }

    /// How many files there are.
    pub fn len(&self) -> usize {
        self.by_name.values().map(BTreeSet::len).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The file a link written in the note at `source` names, `target` being the link's
    /// target as written (a Markdown link's escapes decoded; no `#heading`, no `|alias`).
    pub fn find(&self, source: &str, target: &str) -> Option<&str> {
        let written = target.trim();
        let rooted = written.starts_with('/');
        let wanted = written.trim_start_matches('/');
        let candidates = self.by_name.get(&file_name(wanted).to_lowercase())?;
        let at = |key: Option<String>| {
            key.and_then(|key| candidates.iter().find(|path| path.to_lowercase() == key)).map(String::as_str)
        };
        let folder = folder_of(source);
        if !rooted && let Some(found) = at(normalize(&join(folder, wanted))) {
            return Some(found);
        }
        if let Some(found) = at(normalize(wanted)) {
            return Some(found);
        }
        if rooted {
            return None;
        }
        let suffix = format!("/{}", wanted.to_lowercase());
        let path_end = |path: &&String| !wanted.contains('/') || path.to_lowercase().ends_with(&suffix);
        candidates
            .iter()
            .filter(path_end)
            .min_by_key(|path| (folder_of(path) != folder, path.matches('/').count()))
            .map(String::as_str)
    }
}

/// The folder of the vault where kb keeps the files handed to it (uploads, voice notes,
/// a mail's attachments). It is never read as notes.
pub const ATTACHMENTS_FOLDER: &str = "attachments";

/// The vault path kb keeps a file handed to it under: `attachments/HASH-SLUG.EXT`, from
/// the file's SHA-256 (`sha256_hex`, its first 16 digits) and the name it was sent with,
/// of which only a slug of its stem and a short extension of letters and digits are kept
/// (the sender never chooses a path).
pub fn attachment_path(sha256_hex: &str, sent_name: &str) -> String {
    let base =
        file_name(sent_name.trim().trim_end_matches(['/', '\\'])).rsplit('\\').next().unwrap_or_default();
    // A name that is only an extension (`.pdf`) keeps it: the file is `HASH-file.pdf`.
    let (stem, extension) = base.rsplit_once('.').unwrap_or((base, ""));
    let slug = crate::Slug::from_name(stem);
    let named = deunicode::deunicode(stem).chars().any(|c| c.is_ascii_alphanumeric());
    let slug = if named { slug.as_str() } else { "file" };
    let extension: String = extension.to_ascii_lowercase();
    let hash: String = sha256_hex.chars().take(16).collect();
    if !extension.is_empty() && extension.len() <= 8 && extension.chars().all(|c| c.is_ascii_alphanumeric()) {
        format!("{ATTACHMENTS_FOLDER}/{hash}-{slug}.{extension}")
    } else {
        format!("{ATTACHMENTS_FOLDER}/{hash}-{slug}")
    }
}

/// The last part of a path.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder of a vault path (`""` at the root).
fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// `relative` under `folder`.
fn join(folder: &str, relative: &str) -> String {
    if folder.is_empty() { relative.to_string() } else { format!("{folder}/{relative}") }
}

/// A path lowercased with its `.` and `..` parts worked out; `None` when it leaves the
/// vault.
fn normalize(path: &str) -> Option<String> {
    crate::links::normalize(path).map(|path| path.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_files_name_comes_from_kb_never_from_the_sender() {
        let hash = "0123456789abcdef0123";
        assert_eq!(
            attachment_path(hash, "Quarterly Report.PDF"),
            "attachments/0123456789abcdef-quarterly-report.pdf"
        );
        assert_eq!(attachment_path(hash, "../../etc/passwd"), "attachments/0123456789abcdef-passwd");
        assert_eq!(
            attachment_path(hash, "C:\\Users\\me\\voice.webm"),
            "attachments/0123456789abcdef-voice.webm"
        );
        assert_eq!(attachment_path(hash, ".bashrc"), "attachments/0123456789abcdef-file.bashrc");
        assert_eq!(attachment_path(hash, ".pdf"), "attachments/0123456789abcdef-file.pdf");
        assert_eq!(attachment_path(hash, "note.md"), "attachments/0123456789abcdef-note.md");
        assert_eq!(attachment_path(hash, ""), "attachments/0123456789abcdef-file");
        assert_eq!(attachment_path(hash, "x.tar.gz"), "attachments/0123456789abcdef-x-tar.gz");
        assert_eq!(attachment_path(hash, "weird.ex%e"), "attachments/0123456789abcdef-weird");
        assert_eq!(attachment_path(hash, "日記.txt"), "attachments/0123456789abcdef-ri-ji.txt");
    }

    fn vault() -> Attachments {
        Attachments::new(
            [
                "icon.svg",
                "assets/photo.png",
                "Journal/assets/photo.png",
                "docs/Some.pdf",
                "Journal/2025/scan.pdf",
            ]
            .map(String::from),
        )
    }

    #[test]
    fn files_are_found_by_path_or_by_name_anywhere() {
        let files = vault();
        assert_eq!(files.len(), 5);
        assert_eq!(files.find("Home.md", "icon.svg"), Some("icon.svg"));
        assert_eq!(files.find("Journal/2025/Day.md", "ICON.svg"), Some("icon.svg"));
        assert_eq!(files.find("Home.md", "Some.pdf"), Some("docs/Some.pdf"));
        assert_eq!(files.find("Home.md", "/docs/Some.pdf"), Some("docs/Some.pdf"));
        assert_eq!(files.find("Journal/2025/Day.md", "scan.pdf"), Some("Journal/2025/scan.pdf"));
        assert_eq!(
            files.find("Journal/2025/Day.md", "../assets/photo.png"),
            Some("Journal/assets/photo.png")
        );
        assert_eq!(
            files.find("Work/x.md", "2025/scan.pdf"),
            Some("Journal/2025/scan.pdf"),
            "the end of a path"
        );
        // Several share the name: the nearest to the note.
        assert_eq!(files.find("Journal/assets/x.md", "photo.png"), Some("Journal/assets/photo.png"));
        assert_eq!(files.find("Home.md", "photo.png"), Some("assets/photo.png"));
        for missing in ["nothing.png", "/scan.pdf", "../../../icon.svg", "other/Some.pdf", ""] {
            assert_eq!(files.find("Journal/2025/Day.md", missing), None, "{missing}");
        }
    }
}
