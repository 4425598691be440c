//! Finding entries by the names people call them: an entry's folded name and aliases,
//! looked up in the sorted names once they are built, else by a look at every entry.

use std::collections::{BTreeMap, BTreeSet};

use kb_domain::conflicts::is_conflict_copy;
use kb_domain::names::{fold_name, may_fold_to_start_with, relate};
use kb_domain::{CatalogueEntry, EntryPath, EntrySummary, NameMatch};

use super::{Cache, Cached};

/// The folded names that may relate to the folded `wanted` (see [`relate`]): itself and
/// each of its leading runs of words, looked up one by one, then every name that begins
/// with its words, as one range of the sorted names.
fn related_names<'a, T>(
    by_name: &'a BTreeMap<String, T>,
    wanted: &str,
) -> impl Iterator<Item = &'a T> + use<'a, T> {
    let word_ends = wanted.match_indices(' ').map(|(at, _)| at).chain([wanted.len()]);
    let shorter_or_same: Vec<&T> = word_ends.filter_map(|end| by_name.get(&wanted[..end])).collect();
    // Folded names hold only lowercase letters, digits and single spaces: after "w " come
    // exactly the names "w …", and "w!" (the character after the space) bounds them.
    let longer = (!wanted.is_empty())
        .then(|| by_name.range(format!("{wanted} ")..format!("{wanted}!")).map(|(_, paths)| paths))
        .into_iter()
        .flatten();
    shorter_or_same.into_iter().chain(longer)
}

/// How a record's name, else its closest alias, relates to the folded name `wanted`.
pub(crate) fn name_match(record: &CatalogueEntry, wanted: &str) -> Option<NameMatch> {
    let by_name = relate(&fold_name(record.name()), wanted).map(|relation| (relation, None));
    let by_alias = record
        .aliases
        .iter()
        .filter_map(|alias| relate(&fold_name(alias), wanted).map(|relation| (relation, Some(alias.clone()))))
        .min_by_key(|(relation, _)| *relation);
    let (relation, alias) = match (by_name, by_alias) {
        (Some(name), Some(alias)) if alias.0 < name.0 => alias,
        (Some(name), _) => name,
        (None, alias) => alias?,
    };
    Some(NameMatch { entry: record.summary.clone(), relation, alias })
}

impl Cache {
    /// The entries whose folded name or an alias relates to `name` (see
    /// [`EntryCatalogue::find_by_name`](kb_domain::EntryCatalogue::find_by_name)), conflict
    /// copies aside: the same names first, then by path. Once the names are built ([`Cache::build_parts`], as
    /// a long-running process does) this costs the names it relates to; before, it looks
    /// at every entry's names without building them: a one-shot command asks once or
    /// twice, and building the names would cost it several looks.
    pub(crate) fn find_by_name(&self, name: &str) -> Vec<NameMatch> {
        let wanted = fold_name(name);
        let mut found: Vec<NameMatch> = match self.derived.names() {
            Some(by_name) => {
                // An entry may be reached through its name and an alias both: each once.
                let paths: BTreeSet<&EntryPath> = related_names(by_name, &wanted).flatten().collect();
                paths
                    .into_iter()
                    .filter_map(|path| self.entries.get(path))
                    .filter_map(|cached| name_match(&cached.record, &wanted))
                    .collect()
            }
            None => {
                // Only names that may fold to the wanted one's first letter are folded.
                let first = wanted.as_bytes().first().copied();
                let may_match = |cached: &&Cached| {
                    first.is_some_and(|first| {
                        std::iter::once(cached.record.name())
                            .chain(cached.record.aliases.iter().map(String::as_str))
                            .any(|name| may_fold_to_start_with(name, first))
                    })
                };
                let candidates = self.entries.values().filter(may_match);
                candidates.filter_map(|cached| name_match(&cached.record, &wanted)).collect()
            }
        };
        // A conflict copy bears its note's name until the conflict is resolved: a name
        // means the note.
        found.retain(|found| !is_conflict_copy(found.entry.path.file_name()));
        found.sort_by(|a, b| a.relation.cmp(&b.relation).then_with(|| a.entry.path.cmp(&b.entry.path)));
        found
    }

    /// Every readable entry's summary with its aliases, by path.
    pub(crate) fn named_entries(&self) -> Vec<(EntrySummary, Vec<String>)> {
        self.entries.values().map(|c| (c.record.summary.clone(), c.record.aliases.clone())).collect()
    }
}
