//! Gathering a digest's facts from the catalogue's records of the entries: pure functions
//! of the records, today's date and the current time, so the same vault always gives the
//! same facts, and no file is read.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use kb_domain::digest_orders::{
    INBOX_WAIT_DAYS, WEEK_DAYS, action_key, inbox_since, is_open_action, is_open_loop, within,
};
use kb_domain::{CatalogueEntry, Category, DigestCandidates};

use super::{DigestFacts, DigestKind, DigestSection};

/// The facts of a digest of `kind` over the catalogue's `candidates` (see
/// [`DigestCandidates`]: each section filters and orders its own list).
pub fn gather_facts(
    kind: DigestKind,
    candidates: &DigestCandidates,
    today: NaiveDate,
    now: DateTime<Utc>,
) -> DigestFacts {
    let c = candidates;
    let items: Vec<Vec<String>> = match kind {
        DigestKind::Daily => vec![
            top_actions(&c.open_actions, 3),
            people_to_connect(&c.follow_ups, 3),
            watch_out_for(&c.overdue, &c.inbox_waiting, today, now),
            small_win(&c.recent, now),
        ],
        DigestKind::Weekly => vec![
            quick_stats(&c.recent, now),
            moved_forward(&c.recent, now),
            open_loops(&c.open_loops, now),
            patterns(&c.recent, now),
            top_actions(&c.open_actions, 3),
            needs_review(&c.inbox_oldest),
        ],
    };
    let sections =
        kind.headings().iter().zip(items).map(|(heading, items)| DigestSection { heading, items }).collect();
    DigestFacts { kind, today, sections }
}

/// The records a section is gathered from.
type Entries = [Arc<CatalogueEntry>];

fn created_at(entry: &CatalogueEntry) -> Option<DateTime<Utc>> {
    entry.created_at
}

fn due_date(entry: &CatalogueEntry) -> Option<NaiveDate> {
    entry.due_date
}

fn is_done(entry: &CatalogueEntry) -> bool {
    entry.is_done()
}

/// The texts of the `n` first of `items` in the order of their key, then of their text
/// (descending texts when `texts_descending`). Only the items that can be among the
/// first `n` — those whose key is not beyond the `n`-th smallest — are written out, so a
/// digest over a large vault formats a handful of lines, not one per entry.
fn first_by_key<K: Ord + Clone, T>(
    mut items: Vec<(K, T)>,
    n: usize,
    text: impl Fn(T) -> String,
    texts_descending: bool,
) -> Vec<String> {
    if n == 0 || items.is_empty() {
        return Vec::new();
    }
    let cut = n.min(items.len()) - 1;
    items.select_nth_unstable_by(cut, |a, b| a.0.cmp(&b.0));
    let bound = items[cut].0.clone();
    let mut chosen: Vec<(K, String)> =
        items.into_iter().filter(|(key, _)| *key <= bound).map(|(key, item)| (key, text(item))).collect();
    chosen.sort_by(|a, b| {
        let by_text = if texts_descending { b.1.cmp(&a.1) } else { a.1.cmp(&b.1) };
        a.0.cmp(&b.0).then(by_text)
    });
    chosen.into_iter().take(n).map(|(_, text)| text).collect()
}

/// Next actions of active projects and pending admin items, soonest due first.
fn top_actions(entries: &Entries, n: usize) -> Vec<String> {
    // Dated items first, soonest first; then the most recently touched.
    let actions = entries.iter().filter(|e| is_open_action(e)).map(|e| (action_key(e), e.as_ref())).collect();
    first_by_key(actions, n, action_text, false)
}

/// How an open action reads in a digest.
fn action_text(e: &CatalogueEntry) -> String {
    let what = match (e.category(), &e.next_action) {
        (Category::Projects, Some(action)) => format!("{action} ({})", e.name()),
        _ => e.name().to_string(),
    };
    match due_date(e) {
        Some(d) => format!("{what}, due {d}"),
        None => what,
    }
}

/// People with follow-ups, least recently touched first.
fn people_to_connect(entries: &Entries, n: usize) -> Vec<String> {
    let people = entries
        .iter()
        .filter(|e| e.category() == Category::People && !e.follow_ups.is_empty())
        .map(|e| (e.last_touched, e.as_ref()))
        .collect();
    first_by_key(
        people,
        n,
        |e| format!("{}: {}", e.name(), e.follow_ups.first().map_or("", String::as_str)),
        false,
    )
}

/// Overdue items and inbox entries waiting more than three days.
fn watch_out_for(entries: &Entries, inbox: &Entries, today: NaiveDate, now: DateTime<Utc>) -> Vec<String> {
    let overdue = entries
        .iter()
        .filter(|e| matches!(e.category(), Category::Projects | Category::Admin) && !is_done(e))
        .filter_map(|e| due_date(e).filter(|d| *d < today).map(|d| (d, e.as_ref())))
        .collect();
    let overdue = first_by_key(
        overdue,
        3,
        |e| format!("{} was due {}", e.name(), due_date(e).map(|d| d.to_string()).unwrap_or_default()),
        false,
    );
    let waiting = inbox
        .iter()
        .filter(|e| e.category() == Category::Inbox)
        .filter_map(|e| {
            inbox_since(e).filter(|t| now - *t > Duration::days(INBOX_WAIT_DAYS)).map(|t| (t, e.as_ref()))
        })
        .collect();
    let waiting = first_by_key(
        waiting,
        2,
        |e| {
            let when = inbox_since(e).map(|t| t.date_naive().to_string()).unwrap_or_default();
            format!("{} has waited in the inbox since {when}", e.name())
        },
        false,
    );
    overdue.into_iter().chain(waiting).collect()
}

/// The most recent thing done this week (among ties, the first by name).
fn small_win(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let done = entries
        .iter()
        .filter(|e| is_done(e) && within(e.updated_at(), now, WEEK_DAYS))
        .map(|e| (Reverse(e.updated_at()), e.as_ref()))
        .collect();
    first_by_key(done, 1, |e| format!("{} is done", e.name()), false)
}

/// Captures and changes this week, by category.
fn quick_stats(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let mut counts: BTreeMap<Category, (usize, usize)> = BTreeMap::new();
    for e in entries {
        let captured = within(created_at(e), now, WEEK_DAYS);
        let changed = !captured && within(e.updated_at(), now, WEEK_DAYS);
        if captured || changed {
            let slot = counts.entry(e.category()).or_default();
            slot.0 += usize::from(captured);
            slot.1 += usize::from(changed);
        }
    }
    counts.into_iter().map(|(c, (new, changed))| format!("{c}: {new} captured, {changed} changed")).collect()
}

/// Things finished or advanced this week.
fn moved_forward(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let moved = entries
        .iter()
        .filter(|e| e.category() != Category::Inbox && within(e.updated_at(), now, WEEK_DAYS))
        .filter(|e| is_done(e) || !within(created_at(e), now, WEEK_DAYS))
        .map(|e| (Reverse(e.updated_at()), e.as_ref()))
        .collect();
    // Most recent first, ties by text from the end.
    let text = |e: &CatalogueEntry| {
        if is_done(e) { format!("{} is done", e.name()) } else { format!("{} was updated", e.name()) }
    };
    first_by_key(moved, 4, text, true)
}

/// Projects untouched for a week, blocked or waiting.
fn open_loops(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    // Sorted by text, which starts with the name: the name is the key.
    let loops = entries
        .iter()
        .filter(|e| e.category() == Category::Projects && !is_done(e) && is_open_loop(e, now))
        .map(|e| (e.name(), e.as_ref()))
        .collect();
    let text = |e: &CatalogueEntry| match (e.status(), e.updated_at()) {
        (Some(s @ ("blocked" | "waiting")), _) => format!("{} is {s}", e.name()),
        (_, Some(t)) => format!("{} untouched since {}", e.name(), t.date_naive()),
        _ => e.name().to_string(),
    };
    first_by_key(loops, 4, text, false)
}

/// Tags that recur among this week's entries, and where captures went.
fn patterns(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let recent: Vec<&CatalogueEntry> =
        entries.iter().map(Arc::as_ref).filter(|e| within(e.updated_at(), now, WEEK_DAYS)).collect();
    let mut tags: BTreeMap<String, usize> = BTreeMap::new();
    for e in &recent {
        for tag in &e.tags {
            *tags.entry(tag.to_lowercase()).or_default() += 1;
        }
    }
    let mut common: Vec<(usize, String)> =
        tags.into_iter().filter(|(_, n)| *n >= 2).map(|(t, n)| (n, t)).collect();
    common.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let mut out: Vec<String> =
        common.into_iter().take(2).map(|(n, t)| format!("#{t} came up {n} times")).collect();
    let mut by_category: BTreeMap<Category, usize> = BTreeMap::new();
    for e in &recent {
        *by_category.entry(e.category()).or_default() += 1;
    }
    if let Some((category, n)) = by_category.into_iter().max_by_key(|(c, n)| (*n, std::cmp::Reverse(*c)))
        && n >= 2
    {
        out.push(format!("most activity was in {category} ({n} entries)"));
    }
    out
}

/// The inbox, oldest first.
fn needs_review(entries: &Entries) -> Vec<String> {
    let inbox = entries
        .iter()
        .filter(|e| e.category() == Category::Inbox)
        .map(|e| (created_at(e), e.as_ref()))
        .collect();
    let text = |e: &CatalogueEntry| match &e.suggested_category {
        Some(s) => format!("{} (maybe {s})", e.name()),
        None => e.name().to_string(),
    };
    first_by_key(inbox, 5, text, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::{DigestOrders, EntryPath, EntrySummary};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Formatting only the items that can come first gives the same lines as
        /// formatting and sorting every item.
        #[test]
        fn first_by_key_is_a_full_sort_cut_short(
            items in proptest::collection::vec((0..6u8, "[a-c]{0,3}"), 0..40),
            n in 0..8usize,
            descending in any::<bool>(),
        ) {
            let mut all: Vec<(u8, String)> = items.clone();
            all.sort_by(|a, b| {
                let by_text = if descending { b.1.cmp(&a.1) } else { a.1.cmp(&b.1) };
                a.0.cmp(&b.0).then(by_text)
            });
            let expected: Vec<String> = all.into_iter().take(n).map(|(_, t)| t).collect();
            prop_assert_eq!(first_by_key(items, n, |t: String| t, descending), expected);
        }
    }

    const STATUSES: [Option<&str>; 7] = [
        None,
        Some("active"),
        Some("done"),
        Some("waiting"),
        Some("blocked"),
        Some("someday"),
        Some("pending"),
    ];
    const NAMES: [&str; 4] = ["Alpha", "Beta", "Gamma", "alpha"];
    const TAGS: [&str; 3] = ["home", "work", "Home"];

    /// A day at 10:00, `offset` days from 2026-11-20 (whole days, so that keys tie often).
    fn at(offset: i64) -> DateTime<Utc> {
        let day = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap_or_default() + Duration::days(offset);
        day.and_hms_opt(10, 0, 0).unwrap_or_default().and_utc()
    }

    prop_compose! {
        /// A catalogue record with the fields digests read, each often absent or tied.
        fn record()(
            slot in 0..400usize,
            category in 0..5usize,
            status in 0..STATUSES.len(),
            name in 0..NAMES.len(),
            updated in proptest::option::of(-20..3i64),
            created in proptest::option::of(-20..3i64),
            due in proptest::option::of(-6..6i64),
            touched in proptest::option::of(-20..1i64),
            follow_ups in 0..3usize,
            tags in proptest::collection::vec(0..TAGS.len(), 0..3),
            next_action in any::<bool>(),
        ) -> Arc<CatalogueEntry> {
            let category = Category::ALL[category];
            let path = EntryPath::parse(&format!("{}/e{slot}.md", category.as_str())).unwrap_or_else(|e| panic!("{e}"));
            Arc::new(CatalogueEntry {
                summary: EntrySummary {
                    path,
                    category,
                    name: NAMES[name].to_string(),
                    status: STATUSES[status].map(str::to_string),
                    updated_at: updated.map(at),
                    summary: String::new(),
                },
                created_at: created.map(at),
                due_date: due.map(|d| at(d).date_naive()),
                next_action: next_action.then(|| "call".to_string()),
                follow_ups: (0..follow_ups).map(|i| format!("ask {i}")).collect(),
                last_touched: touched.map(|d| at(d).date_naive()),
                tags: tags.into_iter().map(|t| TAGS[t].to_string()).collect(),
                suggested_category: next_action.then(|| "ideas".to_string()),
                aliases: Vec::new(),
            })
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// A digest over the few records the kept orders hand over says exactly what it
        /// says over every record, for both kinds, whatever the vault and the time.
        #[test]
        fn the_orders_give_the_facts_of_the_whole_vault(
            records in proptest::collection::vec(record(), 0..120),
            hours in -30..60i64,
        ) {
            let mut by_path = BTreeMap::new();
            for r in records {
                by_path.insert(r.summary.path.clone(), r);
            }
            let all: Vec<Arc<CatalogueEntry>> = by_path.into_values().collect();
            let now = at(0) + Duration::hours(hours);
            let today = now.date_naive();
            let everything = DigestCandidates {
                open_actions: all.clone(),
                follow_ups: all.clone(),
                overdue: all.clone(),
                inbox_waiting: all.clone(),
                inbox_oldest: all.clone(),
                recent: all.clone(),
                open_loops: all.clone(),
            };
            let walked = DigestOrders::of(&all).candidates(today, now);
            for kind in [DigestKind::Daily, DigestKind::Weekly] {
                prop_assert_eq!(
                    gather_facts(kind, &walked, today, now),
                    gather_facts(kind, &everything, today, now)
                );
            }
        }
    }
}
