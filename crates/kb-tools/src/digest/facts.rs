//! Gathering a digest's facts from the catalogue's records of the entries: pure functions
//! of the records, today's date and the current time, so the same vault always gives the
//! same facts, and no file is read.

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
    entries: &Entries,
    today: NaiveDate,
    now: DateTime<Utc>,
) -> DigestFacts {
    let items: Vec<Vec<String>> = match kind {
        DigestKind::Daily => vec![
            top_actions(entries, 3),
            people_to_connect(entries, 3),
            watch_out_for(entries, today, now),
            small_win(entries, now),
        ],
        DigestKind::Weekly => vec![
            quick_stats(entries, now),
            moved_forward(entries, now),
            open_loops(entries, now),
            patterns(entries, now),
            top_actions(entries, 3),
            needs_review(entries),
        ],
    };
    let sections =
        kind.headings().iter().zip(items).map(|(heading, items)| DigestSection { heading, items }).collect();
    DigestFacts { kind, today, sections }
}

/// The records a digest is gathered from.
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

/// Next actions of active projects and pending admin items, soonest due first.
fn top_actions(entries: &Entries, n: usize) -> Vec<String> {
    let mut actions: Vec<(Option<NaiveDate>, Option<DateTime<Utc>>, String)> = entries
        .iter()
        .filter(|e| is_open_action(e))
        .map(|e| {
            let what = match (e.category(), &e.next_action) {
                (Category::Projects, Some(action)) => format!("{action} ({})", e.name()),
                _ => e.name().to_string(),
            };
            let due = due_date(e);
            let text = match due {
                Some(d) => format!("{what}, due {d}"),
                None => what,
            };
            (due, e.updated_at(), text)
        })
        .collect();
    // Dated items first, soonest first; then the most recently touched.
    actions.sort_by(|a, b| match (a.0, b.0) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.2.cmp(&b.2)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)),
    });
    actions.into_iter().take(n).map(|a| a.2).collect()
}

/// People with follow-ups, least recently touched first.
fn people_to_connect(entries: &Entries, n: usize) -> Vec<String> {
    let mut people: Vec<(Option<NaiveDate>, String)> = entries
        .iter()
        .filter(|e| e.category() == Category::People)
        .filter_map(|e| {
            let first = e.follow_ups.first()?;
            Some((e.last_touched, format!("{}: {first}", e.name())))
        })
        .collect();
    people.sort();
    people.into_iter().take(n).map(|p| p.1).collect()
}

/// Overdue items and inbox entries waiting more than three days.
fn watch_out_for(entries: &Entries, today: NaiveDate, now: DateTime<Utc>) -> Vec<String> {
    let mut overdue: Vec<(NaiveDate, String)> = entries
        .iter()
        .filter(|e| matches!(e.category(), Category::Projects | Category::Admin) && !is_done(e))
        .filter_map(|e| due_date(e).filter(|d| *d < today).map(|d| (d, format!("{} was due {d}", e.name()))))
        .collect();
    overdue.sort();
    let mut waiting: Vec<(DateTime<Utc>, String)> = entries
        .iter()
        .filter(|e| e.category() == Category::Inbox)
        .filter_map(|e| {
            let since = created_at(e).or_else(|| e.updated_at())?;
            (now - since > Duration::days(INBOX_WAIT_DAYS)).then(|| {
                (since, format!("{} has waited in the inbox since {}", e.name(), since.date_naive()))
            })
        })
        .collect();
    waiting.sort();
    overdue.into_iter().map(|o| o.1).take(3).chain(waiting.into_iter().map(|w| w.1).take(2)).collect()
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
    let mut moved: Vec<(Option<DateTime<Utc>>, String)> = entries
        .iter()
        .filter(|e| e.category() != Category::Inbox && within(e.updated_at(), now, WEEK_DAYS))
        .filter(|e| is_done(e) || !within(created_at(e), now, WEEK_DAYS))
        .map(|e| {
            let text = if is_done(e) {
                format!("{} is done", e.name())
            } else {
                format!("{} was updated", e.name())
            };
            (e.updated_at(), text)
        })
        .collect();
    moved.sort_by(|a, b| b.cmp(a));
    moved.into_iter().take(4).map(|m| m.1).collect()
}

/// Projects untouched for a week, blocked or waiting.
fn open_loops(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let mut loops: Vec<String> = entries
        .iter()
        .filter(|e| e.category() == Category::Projects && !is_done(e))
        .filter_map(|e| match e.status() {
            Some(s @ ("blocked" | "waiting")) => Some(format!("{} is {s}", e.name())),
            Some("someday") => None,
            _ => match e.updated_at() {
                Some(t) if now - t >= Duration::days(WEEK_DAYS) => {
                    Some(format!("{} untouched since {}", e.name(), t.date_naive()))
                }
                _ => None,
            },
        })
        .collect();
    loops.sort();
    loops.truncate(4);
    loops
}

/// Tags that recur among this week's entries, and where captures went.
fn patterns(entries: &Entries, now: DateTime<Utc>) -> Vec<String> {
    let recent: Vec<&Arc<CatalogueEntry>> =
        entries.iter().filter(|e| within(e.updated_at(), now, WEEK_DAYS)).collect();
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
    let mut inbox: Vec<(Option<DateTime<Utc>>, String)> = entries
        .iter()
        .filter(|e| e.category() == Category::Inbox)
        .map(|e| {
            let text = match &e.suggested_category {
                Some(s) => format!("{} (maybe {s})", e.name()),
                None => e.name().to_string(),
            };
            (created_at(e), text)
        })
        .collect();
    inbox.sort();
    inbox.into_iter().take(5).map(|i| i.1).collect()
}
