//! find_duplicates: entries that are likely one and the same — the same name or alias
//! (case, accents and punctuation aside), or, within one category, a name whose words begin
//! another's ("Priya" and "Priya Raman") — grouped, each group with its reason. Over the
//! whole vault, over the entries named like `name`, or over the entries a search for `text`
//! finds. An inbox entry counts as in every category (it is a capture not filed yet).

use std::collections::{BTreeMap, HashMap};

use kb_domain::conflicts::is_conflict_copy;
use kb_domain::names::{first_word, fold_name, relate};
use kb_domain::{Category, EntrySummary, NameRelation, SearchQuery};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::blocking::run_blocking;
use crate::context::{ToolContext, ToolServices};
use crate::resolve::Candidate;
use crate::result::{ErrorCode, ToolError, ToolOutput};
use crate::tool::{Tool, ToolCategory, ToolHints};

/// At most this many groups are listed.
pub const MAX_GROUPS: usize = 20;
/// A search for `text` looks at this many hits.
const TEXT_HITS: usize = 20;
/// A first word shared by more entries than this is only checked for the same names
/// (comparing every pair would cost its square).
const PAIRWISE_LIMIT: usize = 200;

/// Arguments of find_duplicates.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct FindDuplicatesArgs {
    /// Only duplicates among the entries named like this ("Priya"): same name, alias, or first words.
    pub name: Option<String>,
    /// Only duplicates among the entries a search for these words finds.
    pub text: Option<String>,
}

/// A group of entries that are likely the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DuplicateGroup {
    /// Why they look alike: "the same name", "one name is the start of the other".
    pub reason: String,
    /// The entries, by path.
    pub entries: Vec<Candidate>,
}

/// What find_duplicates answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FindDuplicatesData {
    /// The groups, largest first (at most 20).
    pub groups: Vec<DuplicateGroup>,
    /// How many groups there are in all.
    pub total: usize,
}

/// The find_duplicates tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct FindDuplicates;

impl Tool for FindDuplicates {
    const NAME: &'static str = "find_duplicates";
    const DESCRIPTION: &'static str = "Find entries that are likely duplicates of each other (the same name or alias, \
        or a first name and a full name in the same category), grouped with the reason. Use when the user asks \
        about duplicates or to tidy up, or before merge_entries. Give name to look only at entries named like it, \
        text to look only at what a search for it finds, or neither for the whole vault.";
    const CATEGORY: ToolCategory = ToolCategory::Query;
    const HINTS: ToolHints = ToolHints::READ_ONLY;
    type Args = FindDuplicatesArgs;
    type Output = FindDuplicatesData;

    async fn run(
        &self,
        args: FindDuplicatesArgs,
        _ctx: &ToolContext,
        services: &ToolServices,
    ) -> Result<ToolOutput<FindDuplicatesData>, ToolError> {
        let named =
            |s: &Option<String>| s.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        let entries = match (named(&args.name), named(&args.text)) {
            (Some(_), Some(_)) => {
                return Err(ToolError::new(ErrorCode::InvalidArguments, "give name or text, not both"));
            }
            (Some(name), None) => {
                let repo = services.repository.clone();
                let matches = run_blocking(move || repo.find_by_name(&name)).await??;
                let mut entries = Vec::new();
                for m in matches {
                    entries.push((m.entry, m.alias.into_iter().collect()));
                }
                entries
            }
            (None, Some(text)) => {
                let search = services.search.clone();
                let query = SearchQuery {
                    text,
                    category: None,
                    limit: TEXT_HITS,
                    offset: 0,
                    prefix: false,
                    ..Default::default()
                };
                let hits = run_blocking(move || search.search(&query)).await??;
                let repo = services.repository.clone();
                let paths: Vec<_> = hits.entries.into_iter().map(|h| h.path).collect();
                run_blocking(move || {
                    paths
                        .iter()
                        .filter_map(|p| repo.get(p).ok())
                        .map(|e| {
                            let record = kb_domain::CatalogueEntry::of(&e);
                            (record.summary, record.aliases)
                        })
                        .collect::<Vec<_>>()
                })
                .await?
            }
            (None, None) => {
                let repo = services.repository.clone();
                run_blocking(move || repo.named_entries()).await??
            }
        };
        // The person's own notes outside the category folders are theirs to name as they
        // like (many daily notes share a name): only entries are told as duplicates.
        // A conflict copy bears its note's name: it is a sync conflict, told by its nudge.
        let entries: Vec<_> = entries
            .into_iter()
            .filter(|(summary, _)| {
                summary.category.is_folder() && !is_conflict_copy(summary.path.file_name())
            })
            .collect();
        let groups = duplicate_groups(&entries);
        let total = groups.len();
        Ok(ToolOutput::data(FindDuplicatesData {
            groups: groups.into_iter().take(MAX_GROUPS).collect(),
            total,
        }))
    }
}

/// Groups `entries` (summaries with their aliases) into sets that are likely one entry: two
/// entries belong together when a name or alias of one is the same as one of the other's,
/// or, in one category (or with one in the inbox), when one's words begin the other's.
/// Largest groups first, then by their first path.
pub fn duplicate_groups(entries: &[(EntrySummary, Vec<String>)]) -> Vec<DuplicateGroup> {
    let names: Vec<Vec<String>> = entries
        .iter()
        .map(|(summary, aliases)| {
            let mut names: Vec<String> = std::iter::once(&summary.name)
                .chain(aliases)
                .map(|n| fold_name(n))
                .filter(|n| !n.is_empty())
                .collect();
            names.dedup();
            names
        })
        .collect();
    let mut by_first_word: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, list) in names.iter().enumerate() {
        let mut words: Vec<&str> = list.iter().map(|n| first_word(n)).collect();
        words.sort_unstable();
        words.dedup();
        for word in words {
            by_first_word.entry(word).or_default().push(i);
        }
    }
    let mut sets = UnionFind::new(entries.len());
    let mut strongest: HashMap<usize, NameRelation> = HashMap::new();
    let mut link = |sets: &mut UnionFind, a: usize, b: usize, relation: NameRelation| {
        sets.union(a, b);
        for i in [a, b] {
            let slot = strongest.entry(i).or_insert(relation);
            *slot = (*slot).min(relation);
        }
    };
    for members in by_first_word.values() {
        if members.len() > PAIRWISE_LIMIT {
            let mut same: HashMap<&str, usize> = HashMap::new();
            for &i in members {
                for name in &names[i] {
                    if let Some(&j) = same.get(name.as_str()) {
                        if j != i {
                            link(&mut sets, i, j, NameRelation::Same);
                        }
                    } else {
                        same.insert(name, i);
                    }
                }
            }
            continue;
        }
        for (k, &i) in members.iter().enumerate() {
            for &j in &members[k + 1..] {
                let relation =
                    names[i].iter().flat_map(|a| names[j].iter().filter_map(move |b| relate(a, b))).min();
                match relation {
                    Some(NameRelation::Same) => link(&mut sets, i, j, NameRelation::Same),
                    Some(NameRelation::Prefix)
                        if comparable(entries[i].0.category, entries[j].0.category) =>
                    {
                        link(&mut sets, i, j, NameRelation::Prefix)
                    }
                    _ => {}
                }
            }
        }
    }
    let mut grouped: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..entries.len() {
        grouped.entry(sets.find(i)).or_default().push(i);
    }
    let mut groups: Vec<DuplicateGroup> = grouped
        .into_values()
        .filter(|members| members.len() > 1)
        .map(|members| {
            let relation = members.iter().filter_map(|i| strongest.get(i)).min().copied();
            let mut listed: Vec<Candidate> =
                members.iter().map(|&i| Candidate::from(entries[i].0.clone())).collect();
            listed.sort_by(|a, b| a.path.cmp(&b.path));
            DuplicateGroup {
                reason: relation.unwrap_or(NameRelation::Same).reason().to_string(),
                entries: listed,
            }
        })
        .collect();
    groups.sort_by(|a, b| {
        b.entries.len().cmp(&a.entries.len()).then_with(|| a.entries[0].path.cmp(&b.entries[0].path))
    });
    groups
}

/// Whether a first name and a full name in these categories may be one entry: in one
/// category, or when one waits in the inbox (a capture not filed yet).
fn comparable(a: Category, b: Category) -> bool {
    a == b || a == Category::Inbox || b == Category::Inbox
}

/// Disjoint sets of indexes (path halving).
struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    fn new(n: usize) -> UnionFind {
        UnionFind { parent: (0..n).collect() }
    }

    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::EntryPath;
    use proptest::prelude::*;

    fn summary(path: &str, name: &str) -> (EntrySummary, Vec<String>) {
        let path = EntryPath::parse(path).unwrap();
        let category = path.category();
        (
            EntrySummary {
                path,
                category,
                name: name.into(),
                status: None,
                updated_at: None,
                summary: String::new(),
            },
            vec![],
        )
    }

    #[test]
    fn first_and_full_names_group_within_a_category_and_same_names_across() {
        let entries = vec![
            summary("people/priya.md", "Priya"),
            summary("people/priya-raman.md", "Priya Raman"),
            summary("projects/priya-raman-intro.md", "Priya Raman intro"),
            summary("inbox/zoe.md", "Zoë Kim"),
            summary("people/zoe-kim.md", "zoe kim"),
            summary("ideas/bakery.md", "Bakery"),
        ];
        let groups = duplicate_groups(&entries);
        let paths: Vec<Vec<&str>> =
            groups.iter().map(|g| g.entries.iter().map(|c| c.path.as_str()).collect()).collect();
        assert_eq!(
            paths,
            [vec!["inbox/zoe.md", "people/zoe-kim.md"], vec!["people/priya-raman.md", "people/priya.md"]]
        );
        assert_eq!(groups[0].reason, "the same name");
        assert_eq!(groups[1].reason, "one name is the start of the other");
    }

    #[test]
    fn an_alias_counts_as_a_name() {
        let mut bob = summary("people/robert-ng.md", "Robert Ng");
        bob.1.push("Bob Ng".into());
        let groups = duplicate_groups(&[bob, summary("inbox/bob-ng.md", "Bob Ng")]);
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].entries.len(), 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Every pair of entries with the same folded name ends in one group, and no group
        /// holds an entry whose names relate to no other member's.
        #[test]
        fn same_names_always_share_a_group(
            picks in proptest::collection::vec((0..5usize, 0..6usize), 0..30),
        ) {
            const NAMES: [&str; 6] = ["Sam", "sam lee", "SAM  Lee", "Sam Ortiz", "Lee", "Álvaro"];
            let entries: Vec<_> = picks
                .iter()
                .enumerate()
                .map(|(i, (c, n))| summary(&format!("{}/e{i}.md", Category::ALL[*c].as_str()), NAMES[*n]))
                .collect();
            let groups = duplicate_groups(&entries);
            let group_of = |path: &str| groups.iter().position(|g| g.entries.iter().any(|c| c.path == path));
            for (a, ea) in entries.iter().enumerate() {
                for eb in entries.iter().skip(a + 1) {
                    if fold_name(&ea.0.name) == fold_name(&eb.0.name) {
                        let ga = group_of(&ea.0.path.to_string());
                        prop_assert!(ga.is_some());
                        prop_assert_eq!(ga, group_of(&eb.0.path.to_string()));
                    }
                }
            }
            for group in &groups {
                for c in &group.entries {
                    let related = group.entries.iter().any(|o| {
                        o.path != c.path && relate(&fold_name(&o.name), &fold_name(&c.name)).is_some()
                    });
                    prop_assert!(related, "{} is in a group with nothing like it", c.path);
                }
            }
        }
    }
}
