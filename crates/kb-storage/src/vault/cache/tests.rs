//! The cache's tests: lists, names, references and the kept orders against a full sort.

use kb_domain::names::fold_name;
use kb_domain::{DigestOrders, NameMatch};
use proptest::prelude::*;

use super::names::name_match;
use super::*;

/// A name of one to three words from a small pool (so names often relate), written
/// with the case, accents and punctuation people use.
fn a_name() -> impl Strategy<Value = String> {
    let word =
        prop::sample::select(vec!["Priya", "raman", "ZOË", "o'brien", "Ada", "ada", "Kiln", "9", "a-b"]);
    prop::collection::vec(word, 1..=3).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// The lookup by folded name finds exactly what comparing the name with every entry's name
    /// and aliases finds, with the same relation and alias, however entries change.
    #[test]
    fn names_are_found_as_a_look_at_every_entry_would_find_them(
        entries in prop::collection::vec((0..12u8, a_name(), prop::collection::vec(a_name(), 0..3)), 1..30),
        removed in prop::collection::vec(0..12u8, 0..4),
        wanted in prop::collection::vec(a_name(), 1..6),
        looked_after in 0..30usize,
    ) {
        let mut cache = Cache::default();
        for (inserted, (n, name, aliases)) in entries.iter().enumerate() {
            // The names are built part way (or never: each entry is then looked at),
            // then kept as entries change.
            if inserted == looked_after {
                cache.build_parts();
            }
            let aliases = serde_json::to_string(aliases).unwrap();
            let text = format!("---\nname: {name:?}\naliases: {aliases}\n---\n");
            cache.insert(&entry(&format!("people/p{n}.md"), &text));
        }
        for n in removed {
            cache.remove(&EntryPath::parse(&format!("people/p{n}.md")).unwrap());
        }
        for name in wanted {
            let folded = fold_name(&name);
            let mut expected: Vec<NameMatch> =
                cache.entries.values().filter_map(|c| name_match(&c.record, &folded)).collect();
            expected.sort_by(|a, b| a.relation.cmp(&b.relation).then_with(|| a.entry.path.cmp(&b.entry.path)));
            let key = |m: &NameMatch| (m.entry.path.clone(), m.relation, m.alias.clone());
            let found: Vec<_> = cache.find_by_name(&name).iter().map(key).collect();
            prop_assert_eq!(found, expected.iter().map(key).collect::<Vec<_>>(), "{}", name);
        }
    }
}

fn entry(path: &str, text: &str) -> Entry {
    Entry::from_document(EntryPath::parse(path).unwrap(), text).unwrap()
}

#[test]
fn list_sorts_filters_and_pages() {
    let mut cache = Cache::default();
    cache.insert(&entry("projects/old.md", "---\nstatus: active\nupdated_at: 2026-01-01T00:00:00Z\n---\n"));
    cache.insert(&entry("projects/new.md", "---\nstatus: done\nupdated_at: 2026-02-01T00:00:00Z\n---\n"));
    cache.insert(&entry("projects/undated.md", "---\nstatus: active\n---\n"));
    cache.insert(&entry("ideas/i.md", "---\nupdated_at: 2027-01-01T00:00:00Z\n---\n"));
    let all = cache.list(&ListFilter::default());
    let order: Vec<String> = all.entries.iter().map(|s| s.path.to_string()).collect();
    assert_eq!(order, ["ideas/i.md", "projects/new.md", "projects/old.md", "projects/undated.md"]);
    let page = cache.list(&ListFilter {
        category: Some(Category::Projects),
        status: Some("active".into()),
        limit: 1,
        offset: 1,
        ..ListFilter::default()
    });
    assert_eq!(page.total, 2);
    assert_eq!(page.entries.len(), 1);
    assert_eq!(page.entries[0].path.to_string(), "projects/undated.md");
}

#[test]
fn other_notes_list_by_folder_and_below() {
    let mut cache = Cache::default();
    for path in ["Journal/2025/a.md", "Journal/b.md", "Journal 2/c.md", "Work/d.md", "e.md", "ideas/f.md"] {
        cache.insert(&entry(path, "text"));
    }
    let mut list = |category: Option<Category>, folder: &str, offset: usize| {
        let filter =
            ListFilter { category, folder: Some(folder.into()), limit: 1, offset, ..ListFilter::default() };
        let page = cache.list(&filter);
        (page.total, page.entries.iter().map(|s| s.path.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(list(Some(Category::Other), "Journal", 0), (2, vec!["Journal/2025/a.md".to_string()]));
    assert_eq!(list(Some(Category::Other), "Journal/", 1), (2, vec!["Journal/b.md".to_string()]));
    assert_eq!(list(None, "Journal/2025", 0).0, 1);
    assert_eq!(list(Some(Category::Other), "", 0).0, 5, "no folder: every other note");
    assert_eq!(list(None, "ideas", 0), (1, vec!["ideas/f.md".to_string()]));
    assert_eq!(cache.list(&ListFilter { category: Some(Category::Other), ..ListFilter::default() }).total, 5);
    let folders = |cache: &mut Cache| -> Vec<(String, usize)> {
        cache.other_note_folders().into_iter().map(|f| (f.folder, f.notes)).collect()
    };
    let expected = [("", 1), ("Journal", 2), ("Journal 2", 1), ("Work", 1)].map(|(f, n)| (f.to_string(), n));
    assert_eq!(folders(&mut cache), expected);
    cache.remove(&EntryPath::parse("Journal/2025/a.md").unwrap());
    cache.remove(&EntryPath::parse("Work/d.md").unwrap());
    cache.insert(&entry("Journal/b.md", "changed"));
    let expected = [("", 1), ("Journal", 1), ("Journal 2", 1)].map(|(f, n)| (f.to_string(), n));
    assert_eq!(folders(&mut cache), expected);
}

#[test]
fn malformed_and_removed_paths() {
    let mut cache = Cache::default();
    let path = EntryPath::parse("ideas/x.md").unwrap();
    cache.insert(&entry("ideas/x.md", "x"));
    cache.mark_malformed(&MalformedFile { path: path.clone(), reason: "bad".into() });
    assert_eq!(cache.len(), 0);
    assert!(cache.is_taken(&path));
    assert_eq!(cache.malformed().len(), 1);
    assert!(!cache.remove(&path));
    assert!(!cache.is_taken(&path));
}

#[test]
fn referrers_follow_inserts_and_removals() {
    let mut cache = Cache::default();
    let target = EntryPath::parse("projects/p.md").unwrap();
    cache.insert(&entry("people/a.md", "---\nrelated_projects: [projects/p.md]\n---\n"));
    cache.insert(&entry("ideas/b.md", "See [p](../projects/p.md)."));
    let names = |c: &mut Cache| c.referrers_of(&target).iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(names(&mut cache), ["people/a.md", "ideas/b.md"]);
    cache.insert(&entry("people/a.md", "---\nrelated_projects: []\n---\n"));
    assert_eq!(names(&mut cache), ["ideas/b.md"]);
    cache.remove(&EntryPath::parse("ideas/b.md").unwrap());
    assert!(names(&mut cache).is_empty());
    assert!(cache.derived.no_referrers());
}

/// One step of a random history of the cache.
#[derive(Debug, Clone)]
enum Step {
    Insert {
        slot: usize,
        category: usize,
        status: Option<usize>,
        day: Option<u32>,
    },
    Remove {
        slot: usize,
        category: usize,
    },
    Malformed {
        slot: usize,
        category: usize,
    },
    /// Asks for every derived part, so that it is built here and kept up to date by
    /// the steps after (without one, each is built at the end from the entries).
    Look,
}

const STATUSES: [&str; 3] = ["active", "done", "waiting"];

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        6 => (0..12usize, 0..5usize, proptest::option::of(0..3usize), proptest::option::of(1..4u32))
            .prop_map(|(slot, category, status, day)| Step::Insert { slot, category, status, day }),
        2 => (0..12usize, 0..5usize).prop_map(|(slot, category)| Step::Remove { slot, category }),
        1 => (0..12usize, 0..5usize).prop_map(|(slot, category)| Step::Malformed { slot, category }),
        1 => Just(Step::Look),
    ]
}

/// Builds every derived part of `cache` a list, a digest, a name or a move asks for.
fn look_at_everything(cache: &mut Cache) {
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap();
    let now = today.and_hms_opt(12, 0, 0).unwrap().and_utc();
    for category in std::iter::once(None).chain(Category::ALL.map(Some)) {
        for status in std::iter::once(None).chain(STATUSES.map(|s| Some(s.to_string()))) {
            cache.list(&ListFilter { category, status, ..ListFilter::default() });
        }
    }
    cache.digest_candidates(today, now);
    cache.derived.by_name(Cache::sources(&cache.entries));
    cache.referrers_of(&slot_path(0, 0));
    cache.other_note_folders();
}

fn slot_path(slot: usize, category: usize) -> EntryPath {
    EntryPath::parse(&format!("{}/e{slot}.md", Category::ALL[category].as_str())).unwrap()
}

/// What a list must answer, worked out from every entry by sorting.
fn brute_force(all: &BTreeMap<EntryPath, kb_domain::EntrySummary>, filter: &ListFilter) -> ListPage {
    let mut matching: Vec<&kb_domain::EntrySummary> = all
        .values()
        .filter(|s| filter.category.is_none_or(|c| s.category == c))
        .filter(|s| filter.status.as_deref().is_none_or(|want| s.status.as_deref() == Some(want)))
        .collect();
    matching.sort_by(|a, b| match (a.updated_at, b.updated_at) {
        (Some(x), Some(y)) => y.cmp(&x).then_with(|| a.path.cmp(&b.path)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.path.cmp(&b.path),
    });
    let total = matching.len();
    let limit = if filter.limit == 0 { usize::MAX } else { filter.limit };
    ListPage { entries: matching.into_iter().skip(filter.offset).take(limit).cloned().collect(), total }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// Whatever happens to the entries, every list the kept orders answer is the one
    /// sorting every entry would give, the digest's and the nudges' orders are those of
    /// the entries now, and the entry list holds every entry.
    #[test]
    fn kept_orders_answer_like_a_full_sort(
        steps in proptest::collection::vec(step(), 1..60),
        category in proptest::option::of(0..5usize),
        status in proptest::option::of(0..4usize),
        limit in 0..6usize,
        offset in 0..6usize,
    ) {
        let mut cache = Cache::default();
        let mut truth: BTreeMap<EntryPath, kb_domain::EntrySummary> = BTreeMap::new();
        let mut records: BTreeMap<EntryPath, Arc<CatalogueEntry>> = BTreeMap::new();
        for step in steps {
            match step {
                Step::Insert { slot, category, status, day } => {
                    let path = slot_path(slot, category);
                    let mut text = String::from("---\n");
                    if let Some(s) = status {
                        text.push_str(&format!("status: {}\n", STATUSES[s]));
                    }
                    if let Some(d) = day {
                        text.push_str(&format!("updated_at: 2026-11-0{d}T10:00:00Z\n"));
                        text.push_str(&format!("due_date: 2026-11-0{}\n", 5 - d));
                        text.push_str("follow_ups: [call]\n");
                        if d != 2 {
                            text.push_str(&format!("created_at: 2026-11-0{}T10:00:00Z\n", 4 - d));
                        }
                    }
                    text.push_str("---\nbody\n");
                    let e = Entry::from_document(path.clone(), &text).unwrap();
                    cache.insert(&e);
                    truth.insert(path.clone(), e.summary());
                    records.insert(path, Arc::new(CatalogueEntry::of(&e)));
                }
                Step::Remove { slot, category } => {
                    let path = slot_path(slot, category);
                    proptest::prop_assert_eq!(cache.remove(&path), truth.remove(&path).is_some());
                    records.remove(&path);
                }
                Step::Malformed { slot, category } => {
                    let path = slot_path(slot, category);
                    cache.mark_malformed(&MalformedFile { path: path.clone(), reason: "bad".into() });
                    truth.remove(&path);
                    records.remove(&path);
                }
                Step::Look => look_at_everything(&mut cache),
            }
        }
        // Status 3 is one no entry has.
        let filter = ListFilter {
            category: category.map(|c| Category::ALL[c]),
            status: status.map(|s| STATUSES.get(s).copied().unwrap_or("blocked").to_string()),
            limit,
            offset,
            ..ListFilter::default()
        };
        proptest::prop_assert_eq!(cache.list(&filter), brute_force(&truth, &filter));
        proptest::prop_assert_eq!(cache.len(), truth.len());
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap();
        let now = today.and_hms_opt(12, 0, 0).unwrap().and_utc() + chrono::Duration::days(2);
        let paths = |c: kb_domain::DigestCandidates| {
            [c.open_actions, c.follow_ups, c.overdue, c.inbox_waiting, c.inbox_oldest, c.recent, c.open_loops]
                .map(|list| list.iter().map(|r| r.summary.path.clone()).collect::<Vec<_>>())
        };
        proptest::prop_assert_eq!(
            paths(cache.digest_candidates(today, now)),
            paths(DigestOrders::of(records.values()).candidates(today, now))
        );
        // Lines that fall between the generated days, so each rule picks some and not others.
        let settings = kb_domain::nudges::NudgeSettings {
            stale_days: 3,
            due_within_days: 0,
            follow_up_days: 1,
            inbox_days: 3,
            quiet_days: 3,
        };
        let nudge_paths = |c: kb_domain::nudges::NudgeCandidates| {
            c.records.iter().map(|r| r.summary.path.clone()).collect::<Vec<_>>()
        };
        proptest::prop_assert_eq!(
            nudge_paths(cache.nudge_candidates(today, now, settings)),
            nudge_paths(DigestOrders::of(records.values()).nudge_candidates(today, now, settings))
        );
        let listed: Vec<kb_domain::EntrySummary> = cache
            .entry_list_snapshot()
            .categories
            .into_iter()
            .flat_map(|(_, items)| items.into_iter().map(|r| r.summary.clone()))
            .collect();
        proptest::prop_assert_eq!(listed.len(), truth.len());
    }
}
