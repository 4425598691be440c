//! The system prompt: its text lives in `prompt.md` (easy to read and change); this module
//! fills in today's date, the vault overview (its entries, cut to a budget), and the
//! conversation summary.

use chrono::NaiveDate;
use kb_domain::{EntrySummary, FolderCount};

/// The prompt's text, with `{today}`, `{timezone}`, `{overview}` and `{conversation}`
/// slots.
const TEMPLATE: &str = include_str!("prompt.md");

/// What the vault overview says when the vault is empty.
pub const EMPTY_OVERVIEW: &str = "(The knowledge base is empty so far.)";
/// What the conversation section says when there is nothing older than the window.
pub const NO_SUMMARY: &str = "(No earlier turns to summarise: the recent messages follow.)";

/// Roughly how many characters make a token, for budgets.
const CHARS_PER_TOKEN: usize = 4;

/// What the system prompt is made of.
#[derive(Debug, Clone, Copy)]
pub struct PromptInputs<'a> {
    /// Today's date.
    pub today: NaiveDate,
    /// The person's time zone, when configured (an IANA name like `Europe/Paris`).
    pub time_zone: Option<&'a str>,
    /// Entries of the vault, most recent first, for the vault overview.
    pub entries: &'a [EntrySummary],
    /// The top folders of the person's own notes, for the vault overview.
    pub folders: &'a [FolderCount],
    /// How many tokens the vault overview may take.
    pub overview_token_budget: usize,
    /// The summary of turns older than the window, if any.
    pub summary: Option<&'a str>,
}

/// Builds the system prompt.
pub fn system_prompt(inputs: &PromptInputs<'_>) -> String {
    let timezone = inputs.time_zone.map(|tz| format!(" (time zone {tz})")).unwrap_or_default();
    let conversation = match inputs.summary {
        Some(s) if !s.trim().is_empty() => format!("Summary of earlier turns:\n{}", s.trim()),
        _ => NO_SUMMARY.to_string(),
    };
    let today = inputs.today.format("%A %Y-%m-%d").to_string();
    let mut overview = vault_overview(inputs.entries, inputs.overview_token_budget);
    overview.push_str(&own_folders(inputs.folders));
    fill(
        TEMPLATE,
        &[
            ("{today}", &today),
            ("{timezone}", &timezone),
            ("{conversation}", &conversation),
            ("{overview}", &overview),
        ],
    )
}

/// The template with each slot replaced in one pass, so that a slot's name inside a
/// filled-in value (an entry named `{overview}`, a summary quoting `{conversation}`) stays
/// as written.
fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + slots.iter().map(|(_, v)| v.len()).sum::<usize>());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match slots.iter().find(|(slot, _)| rest.starts_with(slot)) {
            Some((slot, value)) => {
                out.push_str(value);
                rest = &rest[slot.len()..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The vault overview: lines `- [name](path) — summary`, most recent first, cut to the
/// budget with a count of what was left out.
pub fn vault_overview(entries: &[EntrySummary], token_budget: usize) -> String {
    if entries.is_empty() {
        return EMPTY_OVERVIEW.to_string();
    }
    let budget = token_budget.saturating_mul(CHARS_PER_TOKEN);
    let mut out = String::new();
    let mut shown = 0;
    for entry in entries {
        let line = overview_line(entry);
        if out.len() + line.len() > budget && shown > 0 {
            break;
        }
        out.push_str(&line);
        shown += 1;
    }
    let left_out = entries.len() - shown;
    if left_out > 0 {
        out.push_str(&format!("({left_out} more entries not shown: use search_entries or list_entries.)\n"));
    }
    out
}

/// The line saying where the person's own notes are, when they have any: each top folder
/// (the biggest first, at most [`FOLDERS_SHOWN`]) with how many notes it holds.
pub fn own_folders(folders: &[FolderCount]) -> String {
    if folders.is_empty() {
        return String::new();
    }
    let mut biggest: Vec<&FolderCount> = folders.iter().collect();
    biggest.sort_by(|a, b| b.notes.cmp(&a.notes).then_with(|| a.folder.cmp(&b.folder)));
    let named: Vec<String> = biggest
        .iter()
        .take(FOLDERS_SHOWN)
        .map(|f| {
            if f.folder.is_empty() {
                format!("the vault root ({})", f.notes)
            } else {
                format!("{}/ ({})", f.folder, f.notes)
            }
        })
        .collect();
    let more = folders.len().saturating_sub(FOLDERS_SHOWN);
    let more = if more > 0 { format!(" and {more} more folders") } else { String::new() };
    format!(
        "The person's own notes (category other, outside the category folders) are in {}{more}: find them with \
         search_entries, list them with list_entries (category other, folder), read one with get_entry by its path.\n",
        named.join(", ")
    )
}

/// How many top folders of the person's own notes the overview names.
pub const FOLDERS_SHOWN: usize = 12;

/// One entry's line in the vault overview.
fn overview_line(entry: &EntrySummary) -> String {
    let status = entry.status.as_deref().map(|s| format!(" [{s}]")).unwrap_or_default();
    if entry.summary.is_empty() {
        format!("- [{}]({}){status}\n", entry.name, entry.path)
    } else {
        format!("- [{}]({}){status} — {}\n", entry.name, entry.path, entry.summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::{Category, EntryPath};

    fn summary(i: usize) -> EntrySummary {
        EntrySummary {
            path: EntryPath::parse(&format!("ideas/idea-{i}.md")).unwrap(),
            category: Category::Ideas,
            name: format!("Idea {i}"),
            status: None,
            updated_at: None,
            summary: "x".repeat(50),
        }
    }

    #[test]
    fn the_overview_is_cut_to_its_budget_with_a_count() {
        let entries: Vec<_> = (0..100).map(summary).collect();
        let section = vault_overview(&entries, 100);
        assert!(section.len() <= 100 * CHARS_PER_TOKEN + 80, "{}", section.len());
        assert!(section.starts_with("- [Idea 0](ideas/idea-0.md)"));
        assert!(section.contains("more entries not shown"));
        let all = vault_overview(&entries[..2], 10_000);
        assert!(!all.contains("not shown"));
        assert_eq!(vault_overview(&[], 100), EMPTY_OVERVIEW);
    }

    #[test]
    fn the_prompt_asks_for_citations_of_what_tools_returned() {
        let prompt = system_prompt(&PromptInputs {
            today: NaiveDate::from_ymd_opt(2026, 11, 21).unwrap(),
            time_zone: None,
            entries: &[],
            folders: &[],
            overview_token_budget: 100,
            summary: None,
        });
        for asked in
            ["`[path:line]`", "`[path:start-end]`", "`[admin/passport.md:5-7]`", "`%5D`", "taken out"]
        {
            assert!(prompt.contains(asked), "{asked}");
        }
    }

    #[test]
    fn the_persons_own_folders_are_named_biggest_first() {
        let folder = |name: &str, notes| FolderCount { folder: name.into(), notes };
        assert_eq!(own_folders(&[]), "");
        let line = own_folders(&[folder("", 3), folder("Journal", 412), folder("Work", 88)]);
        assert!(line.contains("in Journal/ (412), Work/ (88), the vault root (3):"), "{line}");
        let many: Vec<FolderCount> = (0..20).map(|n| folder(&format!("F{n:02}"), 100 - n)).collect();
        let line = own_folders(&many);
        assert!(
            line.contains("F00/ (100)") && line.contains("and 8 more folders") && !line.contains("F12/"),
            "{line}"
        );
    }
}
