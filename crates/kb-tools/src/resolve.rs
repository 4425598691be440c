//! References to entries as people make them: a tool argument that names an entry takes
//! its path, or its name ("Priya", "the passport thing"). A name is resolved by, in order:
//! the exact name or an alias (case, accents and punctuation aside, with and without the
//! filler around it), a name whose words begin or are begun by the reference's ("Priya" →
//! "Priya Raman"), and a single clearly-best search hit. One match: the tool goes on and
//! says what it resolved. Several: nothing changes and the candidates come back so the
//! person is asked. None: "Entry not found" with the nearest names.
//!
//! A reference holding a `/` or ending in `.md` is first taken as a vault path, with or
//! without its `.md`, when there is a note there (`Journal/2025/Day one`, in any folder).

use kb_domain::names::{fold_name, reference_keys};
use kb_domain::{Category, EntryPath, EntrySummary, NameRelation, SearchHit, SearchQuery};
use serde::Serialize;

use crate::args::entry_path;
use crate::blocking::run_blocking;
use crate::context::ToolServices;
use crate::result::{Clarification, ErrorCode, ToolError};

/// How many candidates a reference that names several entries brings back.
pub const MAX_CANDIDATES: usize = 5;

/// One entry a reference may mean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Candidate {
    /// Its path.
    pub path: String,
    /// Its name.
    pub name: String,
    /// Its category.
    #[serde(serialize_with = "crate::output::category")]
    #[schemars(with = "crate::output::CategoryName")]
    pub category: Category,
    /// One line about it.
    pub summary: String,
}

impl From<EntrySummary> for Candidate {
    fn from(summary: EntrySummary) -> Candidate {
        Candidate {
            path: summary.path.to_string(),
            name: summary.name,
            category: summary.category,
            summary: summary.summary,
        }
    }
}

/// How a reference by name was resolved, for the tool's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Resolution {
    /// The reference as given.
    pub reference: String,
    /// The path it resolved to.
    pub path: String,
    /// How: `name`, `alias`, `partial name` or `search`.
    pub by: &'static str,
}

/// An entry a tool argument points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The entry's path.
    pub path: EntryPath,
    /// How a name was resolved; `None` when the argument was a path.
    pub resolution: Option<Resolution>,
}

/// Whether a reference is written as a vault path rather than a name: it ends in `.md`;
/// or it holds a slash and starts like a path (`/`, `\\`, `.`), climbs (`..`), or starts with
/// a category folder (`ideas/x.txt`). Such a reference is checked as a path (one outside
/// the vault is refused). A name with a slash ("AC/DC", "Q3/Q4 plan") stays a name.
pub fn is_path_like(reference: &str) -> bool {
    let r = reference.trim();
    if r.to_ascii_lowercase().ends_with(".md") {
        return true;
    }
    if !(r.contains('/') || r.contains('\\')) {
        return false;
    }
    let first = r.split(['/', '\\']).next().unwrap_or("");
    r.starts_with(['/', '\\', '.']) || r.contains("..") || first.parse::<Category>().is_ok()
}

/// Resolves `reference`, the value of the argument `argument`, to one entry. A path is
/// taken as given (checked like any path); a name is looked up as the module doc says.
pub async fn resolve_entry(
    reference: &str,
    argument: &'static str,
    services: &ToolServices,
) -> Result<Resolved, ToolError> {
    if let Some(path) = existing_note_path(reference.trim(), services).await {
        return Ok(Resolved { path, resolution: None });
    }
    if is_path_like(reference) {
        return Ok(Resolved { path: entry_path(reference.trim())?, resolution: None });
    }
    let keys = reference_keys(reference);
    if keys.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!("{argument} is empty: give the entry's path or its name"),
        ));
    }
    let found = |summary: EntrySummary, by: &'static str| Resolved {
        resolution: Some(Resolution { reference: reference.to_string(), path: summary.path.to_string(), by }),
        path: summary.path,
    };
    let mut partial: Vec<EntrySummary> = Vec::new();
    for key in &keys {
        let repo = services.repository.clone();
        let lookup = key.clone();
        let matches = run_blocking(move || repo.find_by_name(&lookup)).await??;
        let same: Vec<_> = matches.iter().filter(|m| m.relation == NameRelation::Same).collect();
        match same.as_slice() {
            [one] => {
                let by = if one.alias.is_some() { "alias" } else { "name" };
                return Ok(found(one.entry.clone(), by));
            }
            [] => {}
            several => {
                let candidates = several.iter().map(|m| Candidate::from(m.entry.clone())).collect();
                return Err(ambiguous(reference, argument, candidates));
            }
        }
        if partial.is_empty() {
            partial = matches.into_iter().map(|m| m.entry).collect();
        }
    }
    match partial.len() {
        0 => {}
        1 => return Ok(found(partial.remove(0), "partial name")),
        _ => {
            let candidates = partial.into_iter().take(MAX_CANDIDATES).map(Candidate::from).collect();
            return Err(ambiguous(reference, argument, candidates));
        }
    }
    let key = keys.last().cloned().unwrap_or_default();
    let repo = services.search.clone();
    let query = SearchQuery {
        text: key.clone(),
        category: None,
        limit: MAX_CANDIDATES,
        offset: 0,
        prefix: false,
        ..Default::default()
    };
    let results = run_blocking(move || repo.search(&query)).await??;
    if results.fuzzy || results.entries.is_empty() {
        let nearest: Vec<String> =
            results.entries.iter().map(|h| format!("{} ({})", h.name, h.path)).collect();
        let mut message = format!("Entry not found: “{reference}”.");
        if !nearest.is_empty() {
            message.push_str(&format!(" The nearest names: {}.", nearest.join(", ")));
        }
        return Err(ToolError::new(ErrorCode::NotFound, message));
    }
    if let Some(best) = clearly_best(&results.entries, results.total, &key) {
        let repo = services.repository.clone();
        let path = best.path.clone();
        let entry = run_blocking(move || repo.get(&path)).await??;
        return Ok(found(entry.summary(), "search"));
    }
    let mut candidates = Vec::new();
    for hit in &results.entries {
        let repo = services.repository.clone();
        let path = hit.path.clone();
        if let Ok(Ok(entry)) = run_blocking(move || repo.get(&path)).await {
            candidates.push(Candidate::from(entry.summary()));
        }
    }
    if candidates.is_empty() {
        // The hits' files are gone (the index is a moment behind): nothing to choose from.
        return Err(ToolError::new(ErrorCode::NotFound, format!("Entry not found: “{reference}”.")));
    }
    Err(ambiguous(reference, argument, candidates))
}

/// The path of the note `reference` names as a vault path (with or without its `.md`),
/// when it holds a `/` or ends in `.md` and there is a note there.
async fn existing_note_path(reference: &str, services: &ToolServices) -> Option<EntryPath> {
    let ends_in_md = reference.to_ascii_lowercase().ends_with(".md");
    if !reference.contains('/') && !ends_in_md {
        return None;
    }
    let written = [Some(reference.to_string()), (!ends_in_md).then(|| format!("{reference}.md"))];
    for path in written.into_iter().flatten().filter_map(|text| EntryPath::parse(&text).ok()) {
        let repo = services.repository.clone();
        let wanted = path.clone();
        if let Ok(Ok(_)) = run_blocking(move || repo.get(&wanted)).await {
            return Some(path);
        }
    }
    None
}

/// For a destructive call that runs at once (an API or CLI request, no question asked):
/// a name resolved only by its first words or by a search is not enough to delete or merge
/// on. Such a resolution fails as `AMBIGUOUS` with the one entry it found as the candidate,
/// and nothing changes; a path, an exact name or an alias goes ahead.
pub async fn require_exact(
    resolved: &Resolved,
    argument: &'static str,
    confirmation: crate::context::Confirmation,
    services: &ToolServices,
) -> Result<(), ToolError> {
    let Some(resolution) = &resolved.resolution else { return Ok(()) };
    if confirmation != crate::context::Confirmation::NotNeeded || matches!(resolution.by, "name" | "alias") {
        return Ok(());
    }
    let repo = services.repository.clone();
    let path = resolved.path.clone();
    let entry = run_blocking(move || repo.get(&path)).await??;
    let candidate = Candidate::from(entry.summary());
    let message = format!(
        "“{}” only loosely matches {} ({}), by {}: to change it at once, give its path or its exact name.",
        resolution.reference, candidate.name, candidate.path, resolution.by
    );
    Err(ToolError::new(ErrorCode::Ambiguous, message).with_clarification(Clarification {
        key: "candidates",
        candidates: vec![candidate],
        argument: Some(argument),
        otherwise: None,
    }))
}

/// The one hit a search clearly means: the only hit; else the only hit whose name holds
/// every word of `key`; else a hit scoring at least twice the next.
fn clearly_best<'a>(hits: &'a [SearchHit], total: usize, key: &str) -> Option<&'a SearchHit> {
    if total == 1 {
        return hits.first();
    }
    let words: Vec<&str> = key.split(' ').collect();
    let named: Vec<&SearchHit> = hits
        .iter()
        .filter(|h| {
            let name = fold_name(&h.name);
            let name_words: Vec<&str> = name.split(' ').collect();
            words.iter().all(|w| name_words.contains(w))
        })
        .collect();
    if let [one] = named.as_slice() {
        return Some(one);
    }
    match hits {
        [first, second, ..] if named.is_empty() && first.score >= 2.0 * second.score => Some(first),
        _ => None,
    }
}

/// The failure of a reference that names several entries: nothing changed, the candidates
/// come back, and a picked one fills `argument` when the call runs again.
fn ambiguous(reference: &str, argument: &'static str, candidates: Vec<Candidate>) -> ToolError {
    let listed: Vec<String> = candidates.iter().map(|c| format!("{} ({})", c.name, c.path)).collect();
    let message = format!(
        "“{reference}” could mean several entries: {}. Nothing was changed: ask the person which one they mean, \
         then call again with its path.",
        listed.join(", ")
    );
    ToolError::new(ErrorCode::Ambiguous, message).with_clarification(Clarification {
        key: "candidates",
        candidates,
        argument: Some(argument),
        otherwise: None,
    })
}

#[cfg(test)]
mod tests {
    use super::is_path_like;

    #[test]
    fn paths_and_names_with_slashes_are_told_apart() {
        for path in [
            "ideas/x.md",
            "../x.md",
            "/etc/passwd",
            "ideas/../../x.md",
            "notes/x.md",
            "ideas/x.txt",
            "ideas\\x.md",
            "people/priya",
        ] {
            assert!(is_path_like(path), "{path} is a path");
        }
        for name in ["AC/DC", "Q3/Q4 plan", "Priya", "the passport thing", "either/or"] {
            assert!(!is_path_like(name), "{name} is a name");
        }
    }
}
