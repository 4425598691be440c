//! `kb sync`: a round of sync now, printing what came and went (a removal marked so) and
//! the conflicts met;
//! `kb sync status`: where sync stands.

use kb_core::Assistant;
use serde_json::json;

use crate::cli::SyncAction;
use crate::failure::CliError;
use crate::output::{self, Format};

/// Runs `kb sync` (with `action`, `kb sync status`).
pub async fn run(kb: &Assistant, action: Option<SyncAction>, format: Format) -> Result<(), CliError> {
    if let Some(SyncAction::Resolve { .. }) = &action {
        // A conflict copy another sync tool made is resolved the same way, sync on or off.
    } else if kb.sync().is_none() {
        return Err(CliError::usage(
            "sync is off: set KB_SYNC_REMOTE to a git remote (a bare repository's path, ssh://… or https://…)",
        ));
    }
    let sync = kb.sync();
    match action {
        Some(SyncAction::Resolve { path, keep }) => {
            let keep = kb_core::domain::conflicts::ConflictKeep::parse(&keep)
                .ok_or_else(|| CliError::usage("--keep is mine, theirs or both"))?;
            let resolved = kb.history().resolve_conflict(&path, keep).await?;
            if format.is_json() {
                return output::print_json(&json!({
                    "note": resolved.note.as_str(),
                    "copy": resolved.copy.as_str(),
                    "keep": resolved.keep.as_str(),
                    "keptAs": resolved.kept_as.as_ref().map(|p| p.as_str()),
                }));
            }
            let done = match resolved.keep {
                kb_core::domain::conflicts::ConflictKeep::Mine => {
                    format!("{} now holds the copy's version; {} is gone", resolved.note, resolved.copy)
                }
                kb_core::domain::conflicts::ConflictKeep::Theirs => {
                    format!("{} keeps its version; {} is gone", resolved.note, resolved.copy)
                }
                kb_core::domain::conflicts::ConflictKeep::Both => {
                    let kept = resolved.kept_as.as_ref().unwrap_or(&resolved.copy);
                    format!("kept both: {} and {kept}, a note of its own", resolved.note)
                }
            };
            output::print_text(&format!("{done} (kb undo takes it back)\n"))
        }
        Some(SyncAction::Status) => {
            let Some(sync) = sync else { return Ok(()) };
            let status = sync.status().await?;
            if format.is_json() {
                return output::print_json(&json!(status));
            }
            let mut out = format!("remote     {}\ndevice     {}\n", status.remote, status.device);
            out.push_str(&format!(
                "ahead      {} commits\nbehind     {} commits\n",
                status.ahead, status.behind
            ));
            let last = status.last_sync.map_or_else(|| "never".to_string(), |at| at.to_rfc3339());
            out.push_str(&format!("last sync  {last}\n"));
            if let Some(problem) = &status.last_error {
                out.push_str(&format!("last error {problem}\n"));
            }
            if status.conflicts.is_empty() {
                out.push_str("conflicts  none\n");
            } else {
                out.push_str(&format!("conflicts  {}\n", status.conflicts.len()));
                let copies = status.conflicts.iter().map(|copy| output::printable(copy));
                copies.for_each(|copy| out.push_str(&format!("  {copy}\n")));
            }
            output::print_text(&out)
        }
        None => {
            let Some(sync) = sync else { return Ok(()) };
            let report = sync.round_now().await?;
            if format.is_json() {
                return output::print_json(&json!(report));
            }
            // A path no longer in the vault came or went as a removal.
            let gone = |path: &str| {
                if kb.vault_root().join(path).symlink_metadata().is_err() { "  (removed)" } else { "" }
            };
            let mut out = String::new();
            for path in &report.came {
                out.push_str(&format!("came  {}{}\n", output::printable(path), gone(path)));
            }
            for path in &report.went {
                out.push_str(&format!("went  {}{}\n", output::printable(path), gone(path)));
            }
            for conflict in &report.conflicts {
                let (note, copy) = (output::printable(&conflict.path), output::printable(&conflict.copy));
                out.push_str(&if conflict.copy_holds_what_came {
                    format!("conflict  {note} stays as saved here; what came is in {copy}\n")
                } else {
                    format!("conflict  {note} kept the remote's version; this device's is in {copy}\n")
                });
            }
            if out.is_empty() {
                out.push_str("in sync: nothing came or went\n");
            }
            output::print_text(&out)
        }
    }
}
