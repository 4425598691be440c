//! Gathering a digest's facts from the catalogue's records of the entries: pure functions
//! of the records, today's date and the current time, so the same vault always gives the
//! same facts, and no file is read.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use kb_domain::{CatalogueEntry, Category};

use super::{DigestFacts, DigestKind, DigestSection};

/// Inbox entries older than this are flagged.
const INBOX_WAIT_DAYS: i64 = 3;
/// Projects untouched this long are open loops; "lately" and "this week" mean this long.
const WEEK_DAYS: i64 = 7;

/// The facts of a digest of `kind` over `entries`.
pub fn gather_facts(
    kind: DigestKind,
    entries: &[Arc<CatalogueEntry>],
    today: NaiveDate,
    now: DateTime<Utc>,
) -> DigestFacts {
    let split = Split::of(entries, now);
    let items: Vec<Vec<String>> = match kind {
        DigestKind::Daily => vec![
            top_actions(&split.actionable, 3),
            people_to_connect(&split.people, 3),
            watch_out_for(&split.actionable, &split.inbox, today, now),
            small_win(&split.recent, now),
        ],
        DigestKind::Weekly => vec![
            quick_stats(&split.recent, now),
            moved_forward(&split.recent, now),
            open_loops(&split.actionable, now),
            patterns(&split.recent, now),
            top_actions(&split.actionable, 3),
            needs_review(&split.inbox),
        ],
    };
    let sections =
        kind.headings().iter().zip(items).map(|(heading, items)| DigestSection { heading, items }).collect();
    DigestFacts { kind, today, sections }
}

/// The records a section is gathered from.
type Entries<'a> = [&'a CatalogueEntry];

/// The records sorted, in one pass, into what each section looks at, so that a large vault
/// is walked once and each section reads only its own few.
struct Split<'a> {
    /// Projects and admin items.
    actionable: Vec<&'a CatalogueEntry>,
    /// People.
    people: Vec<&'a CatalogueEntry>,
    /// The inbox.
    inbox: Vec<&'a CatalogueEntry>,
    /// Entries created or updated this week.
    recent: Vec<&'a CatalogueEntry>,
}

impl<'a> Split<'a> {
    fn of(entries: &'a [Arc<CatalogueEntry>], now: DateTime<Utc>) -> Split<'a> {
        let mut split =
            Split { actionable: Vec::new(), people: Vec::new(), inbox: Vec::new(), recent: Vec::new() };
        for entry in entries {
            let entry: &CatalogueEntry = entry;
            match entry.category() {
                Category::Projects | Category::Admin => split.actionable.push(entry),
                Category::People => split.people.push(entry),
                Category::Inbox => split.inbox.push(entry),
                Category::Ideas => {}
            }
            if within(entry.updated_at(), now, WEEK_DAYS) || within(created_at(entry), now, WEEK_DAYS) {
                split.recent.push(entry);
            }
        }
        split
    }
}

fn created_at(entry: &CatalogueEntry) -> Option<DateTime<Utc>> {
    entry.created_at
}

fn due_date(entry: &CatalogueEntry) -> Option<NaiveDate> {
    entry.due_date
}

fn is_done(entry: &CatalogueEntry) -> bool {
    entry.is_done()
}

/// An open action: an active project's next action or a pending admin item.
fn is_open_action(entry: &CatalogueEntry) -> bool {
    match entry.category() {
        Category::Projects => entry.status().is_none_or(|s| s == "active"),
        Category::Admin => entry.status().is_none_or(|s| s == "pending"),
        _ => false,
    }
}

fn within(at: Option<DateTime<Utc>>, now: DateTime<Utc>, days: i64) -> bool {
    at.is_some_and(|t| now - t <= Duration::days(days))
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
    let actions = entries
        .iter()
        .filter(|e| is_open_action(e))
        .map(|e| {
            let key = match due_date(e) {
                Some(due) => (false, Some(due), Reverse(None)),
                None => (true, None, Reverse(e.updated_at())),
            };
            (key, *e)
        })
        .collect();
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
        .map(|e| (e.last_touched, *e))
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
        .filter_map(|e| due_date(e).filter(|d| *d < today).map(|d| (d, *e)))
        .collect();
    let overdue = first_by_key(
        overdue,
        3,
        |e| format!("{} was due {}", e.name(), due_date(e).map(|d| d.to_string()).unwrap_or_default()),
        false,
    );
    let since = |e: &CatalogueEntry| created_at(e).or_else(|| e.updated_at());
    let waiting = inbox
        .iter()
        .filter(|e| e.category() == Category::Inbox)
        .filter_map(|e| since(e).filter(|t| now - *t > Duration::days(INBOX_WAIT_DAYS)).map(|t| (t, *e)))
        .collect();
    let waiting = first_by_key(
        waiting,
        2,
        |e| {
            let when = since(e).map(|t| t.date_naive().to_string()).unwrap_or_default();
            format!("{} has waited in the inbox since {when}", e.name())
        },
        false,
    );
    overdue.into_iter().chain(waiting).collect()
}

/// The most recent thing done this week.
fn small_win(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    entries
        .iter()
        .filter(|e| is_done(e) && within(e.updated_at(), now, WEEK_DAYS))
        .max_by_key(|e| e.updated_at())
        .map(|e| format!("{} is done", e.name()))
        .into_iter()
        .collect()
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
        .map(|e| (Reverse(e.updated_at()), *e))
        .collect();
    // Most recent first, ties by text from the end.
    let text = |e: &CatalogueEntry| {
        if is_done(e) { format!("{} is done", e.name()) } else { format!("{} was updated", e.name()) }
    };
    first_by_key(moved, 4, text, true)
}

/// Projects untouched for a week, blocked or waiting.
fn open_loops(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let is_loop = |e: &CatalogueEntry| match e.status() {
        Some("blocked" | "waiting") => true,
        Some("someday") => false,
        _ => e.updated_at().is_some_and(|t| now - t >= Duration::days(WEEK_DAYS)),
    };
    // Sorted by text, which starts with the name: the name is the key.
    let loops = entries
        .iter()
        .filter(|e| e.category() == Category::Projects && !is_done(e) && is_loop(e))
        .map(|e| (e.name(), *e))
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
        entries.iter().copied().filter(|e| within(e.updated_at(), now, WEEK_DAYS)).collect();
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
    let inbox =
        entries.iter().filter(|e| e.category() == Category::Inbox).map(|e| (created_at(e), *e)).collect();
    let text = |e: &CatalogueEntry| match &e.suggested_category {
        Some(s) => format!("{} (maybe {s})", e.name()),
        None => e.name().to_string(),
    };
    first_by_key(inbox, 5, text, false)
}

#[cfg(test)]
mod tests {
    use super::first_by_key;
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
}
