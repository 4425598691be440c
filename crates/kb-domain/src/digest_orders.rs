//! [`DigestOrders`]: the catalogue's records kept in the orders a digest reads them (open
//! actions by due date, people by when they were last touched, the inbox by arrival, the
//! week's activity newest first, …), so that a digest walks the few records at the front of
//! each order instead of the whole vault; and [`DigestCandidates`], what one walk hands the
//! digest. The same [`DigestOrders`] keeps the orders the nudge rules read (active projects by
//! `updated_at`, admin items not done by due date, people with follow-ups by when they were
//! last touched, the inbox by `created_at`, every record newest created first), so that
//! [`DigestOrders::nudge_candidates`] walks only the records a rule picks.
//!
//! The rules of which entries a digest is about live here too ([`is_open_action`],
//! [`is_open_loop`], the windows), so the orders and the digest that reads them agree.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::catalogue::CatalogueEntry;
use crate::category::Category;
use crate::fields::statuses;
use crate::nudges::{
    Bounds, NudgeCandidates, NudgeSettings, follow_up_touched, inbox_arrival, is_active_project,
    is_admin_not_done,
};
use crate::path::EntryPath;

/// "This week", "lately": this many days back from now.
pub const WEEK_DAYS: i64 = 7;
/// Inbox entries waiting longer than this many days are flagged.
pub const INBOX_WAIT_DAYS: i64 = 3;
/// No digest section lists more than this many entries from one order; each candidate list
/// holds at least this many (when there are), plus every entry tied with the last.
pub const FIRST: usize = 5;

/// An open action: an active project's next action or a pending admin item (no status
/// counts as active or pending).
pub fn is_open_action(entry: &CatalogueEntry) -> bool {
    match entry.category() {
        Category::Projects => entry.status().is_none_or(|s| s == statuses::ACTIVE),
        Category::Admin => entry.status().is_none_or(|s| s == statuses::PENDING),
        _ => false,
    }
}

/// Whether a project that is not done is an open loop at `now`: blocked or waiting, or
/// (unless parked as someday) untouched for a week.
pub fn is_open_loop(entry: &CatalogueEntry, now: DateTime<Utc>) -> bool {
    match entry.status() {
        Some("blocked" | "waiting") => true,
        Some("someday") => false,
        _ => entry.updated_at().is_some_and(|t| now - t >= Duration::days(WEEK_DAYS)),
    }
}

/// Whether `at` is known and no more than `days` before `now` (later times count).
pub fn within(at: Option<DateTime<Utc>>, now: DateTime<Utc>, days: i64) -> bool {
    at.is_some_and(|t| now - t <= Duration::days(days))
}

/// The order of open actions: dated ones first, soonest due first; then the most recently
/// updated.
pub type ActionKey = (bool, Option<NaiveDate>, Reverse<Option<DateTime<Utc>>>);

/// Where an open action stands in [`ActionKey`] order.
pub fn action_key(entry: &CatalogueEntry) -> ActionKey {
    match entry.due_date {
        Some(due) => (false, Some(due), Reverse(None)),
        None => (true, None, Reverse(entry.updated_at())),
    }
}

/// Since when an inbox entry has waited: its creation, else its last update.
pub fn inbox_since(entry: &CatalogueEntry) -> Option<DateTime<Utc>> {
    entry.created_at.or_else(|| entry.updated_at())
}

/// The latest of an entry's creation and update times.
fn last_activity(entry: &CatalogueEntry) -> Option<DateTime<Utc>> {
    entry.created_at.max(entry.updated_at())
}

/// The records a digest reads, each list a superset of what its sections can show: the
/// sections still filter and order them, so a digest over these lists says exactly what it
/// would say over every record.
#[derive(Debug, Clone, Default)]
pub struct DigestCandidates {
    /// The first open actions in [`ActionKey`] order.
    pub open_actions: Vec<Arc<CatalogueEntry>>,
    /// The first people with follow-ups, least recently touched first.
    pub follow_ups: Vec<Arc<CatalogueEntry>>,
    /// The first projects and admin items not done and due before today, soonest first.
    pub overdue: Vec<Arc<CatalogueEntry>>,
    /// The first inbox entries waiting longer than [`INBOX_WAIT_DAYS`], oldest first.
    pub inbox_waiting: Vec<Arc<CatalogueEntry>>,
    /// The first inbox entries by `created_at` (undated first).
    pub inbox_oldest: Vec<Arc<CatalogueEntry>>,
    /// Every entry created or updated within [`WEEK_DAYS`].
    pub recent: Vec<Arc<CatalogueEntry>>,
    /// The first open-loop projects by name.
    pub open_loops: Vec<Arc<CatalogueEntry>>,
}

/// One order: records under their key, ties broken by path.
type Order<K> = BTreeMap<(K, EntryPath), Arc<CatalogueEntry>>;

/// One place in an order: its key and the record.
type Placed<K> = ((K, EntryPath), Arc<CatalogueEntry>);

/// A record's places (or a whole vault's) in each order, gathered before they are put in
/// the orders.
#[derive(Default)]
struct Lists {
    actions: Vec<Placed<ActionKey>>,
    follow_ups: Vec<Placed<Option<NaiveDate>>>,
    due: Vec<Placed<NaiveDate>>,
    inbox_arrival: Vec<Placed<Option<DateTime<Utc>>>>,
    inbox_since: Vec<Placed<DateTime<Utc>>>,
    activity: Vec<Placed<Reverse<DateTime<Utc>>>>,
    projects_by_name: Vec<Placed<String>>,
    nudge_stale: Vec<Placed<DateTime<Utc>>>,
    nudge_due: Vec<Placed<NaiveDate>>,
    nudge_follow_ups: Vec<Placed<NaiveDate>>,
    nudge_inbox: Vec<Placed<DateTime<Utc>>>,
    created: Vec<Placed<Reverse<DateTime<Utc>>>>,
}

/// Puts `record` in every order it belongs to: the one place the rules of each order are
/// written, for a record inserted and for a whole vault gathered.
fn place(record: &Arc<CatalogueEntry>, lists: &mut Lists) {
    if is_open_action(record) {
        lists.actions.push(placed(action_key(record), record));
    }
    if record.category() == Category::People && !record.follow_ups.is_empty() {
        lists.follow_ups.push(placed(record.last_touched, record));
    }
    if let Some(due) = record.due_date.filter(|_| is_actionable_not_done(record)) {
        lists.due.push(placed(due, record));
    }
    if record.category() == Category::Inbox {
        lists.inbox_arrival.push(placed(record.created_at, record));
        if let Some(since) = inbox_since(record) {
            lists.inbox_since.push(placed(since, record));
        }
    }
    if let Some(at) = last_activity(record) {
        lists.activity.push(placed(Reverse(at), record));
    }
    if is_loop_candidate(record) {
        lists.projects_by_name.push(placed(record.name().to_string(), record));
    }
    if let Some(updated) = record.updated_at().filter(|_| is_active_project(record)) {
        lists.nudge_stale.push(placed(updated, record));
    }
    if let Some(due) = record.due_date.filter(|_| is_admin_not_done(record)) {
        lists.nudge_due.push(placed(due, record));
    }
    if let Some(touched) = follow_up_touched(record) {
        lists.nudge_follow_ups.push(placed(touched, record));
    }
    if let Some(arrived) = inbox_arrival(record) {
        lists.nudge_inbox.push(placed(arrived, record));
    }
    if let Some(created) = record.created_at {
        lists.created.push(placed(Reverse(created), record));
    }
}

/// Puts `list` in `order`: made from it in one pass when the order is empty.
fn merge<K: Ord>(order: &mut Order<K>, list: Vec<Placed<K>>) {
    if order.is_empty() {
        *order = list.into_iter().collect();
    } else {
        order.extend(list);
    }
}

/// `record`'s place under `key`.
fn placed<K>(key: K, record: &Arc<CatalogueEntry>) -> Placed<K> {
    ((key, record.summary.path.clone()), Arc::clone(record))
}

/// The catalogue's records in every order a digest reads, kept in step by
/// [`DigestOrders::insert`] and [`DigestOrders::remove`] (a few tree operations per change).
#[derive(Debug, Clone, Default)]
pub struct DigestOrders {
    actions: Order<ActionKey>,
    follow_ups: Order<Option<NaiveDate>>,
    due: Order<NaiveDate>,
    inbox_arrival: Order<Option<DateTime<Utc>>>,
    inbox_since: Order<DateTime<Utc>>,
    activity: Order<Reverse<DateTime<Utc>>>,
    projects_by_name: Order<String>,
    /// Active projects with an `updated_at`, by it (oldest first).
    nudge_stale: Order<DateTime<Utc>>,
    /// Admin items not done with a due date, by it.
    nudge_due: Order<NaiveDate>,
    /// People with follow-ups and a day last touched, by it (see
    /// [`crate::nudges::NudgeRule::FollowUp`]).
    nudge_follow_ups: Order<NaiveDate>,
    /// Inbox entries with a `created_at`, by it (oldest first).
    nudge_inbox: Order<DateTime<Utc>>,
    /// Every record with a `created_at`, newest first.
    created: Order<Reverse<DateTime<Utc>>>,
}

impl DigestOrders {
    /// The orders of `records`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Arc<CatalogueEntry>>) -> DigestOrders {
        // Each order is gathered as a list and sorted once (a map built from it in one
        // pass), rather than inserted into record by record: a third of the time at 100,000.
        let mut lists = Lists::default();
        for record in records {
            place(record, &mut lists);
        }
        let mut orders = DigestOrders::default();
        orders.absorb(lists);
        orders
    }

    /// Puts the places of `lists` in the orders.
    fn absorb(&mut self, lists: Lists) {
        let Lists {
            actions,
            follow_ups,
            due,
            inbox_arrival,
            inbox_since,
            activity,
            projects_by_name,
            nudge_stale,
            nudge_due,
            nudge_follow_ups,
            nudge_inbox,
            created,
        } = lists;
        merge(&mut self.actions, actions);
        merge(&mut self.follow_ups, follow_ups);
        merge(&mut self.due, due);
        merge(&mut self.inbox_arrival, inbox_arrival);
        merge(&mut self.inbox_since, inbox_since);
        merge(&mut self.activity, activity);
        merge(&mut self.projects_by_name, projects_by_name);
        merge(&mut self.nudge_stale, nudge_stale);
        merge(&mut self.nudge_due, nudge_due);
        merge(&mut self.nudge_follow_ups, nudge_follow_ups);
        merge(&mut self.nudge_inbox, nudge_inbox);
        merge(&mut self.created, created);
    }

    /// Adds a record (remove the entry's previous record first).
    pub fn insert(&mut self, record: &Arc<CatalogueEntry>) {
        let mut lists = Lists::default();
        place(record, &mut lists);
        self.absorb(lists);
    }

    /// Takes out a record that [`DigestOrders::insert`] added.
    pub fn remove(&mut self, record: &CatalogueEntry) {
        let path = record.summary.path.clone();
        self.actions.remove(&(action_key(record), path.clone()));
        self.follow_ups.remove(&(record.last_touched, path.clone()));
        if let Some(due) = record.due_date {
            self.due.remove(&(due, path.clone()));
        }
        self.inbox_arrival.remove(&(record.created_at, path.clone()));
        if let Some(since) = inbox_since(record) {
            self.inbox_since.remove(&(since, path.clone()));
        }
        if let Some(at) = last_activity(record) {
            self.activity.remove(&(Reverse(at), path.clone()));
        }
        self.projects_by_name.remove(&(record.name().to_string(), path.clone()));
        if let Some(updated) = record.updated_at() {
            self.nudge_stale.remove(&(updated, path.clone()));
        }
        if let Some(due) = record.due_date {
            self.nudge_due.remove(&(due, path.clone()));
        }
        if let Some(touched) = follow_up_touched(record) {
            self.nudge_follow_ups.remove(&(touched, path.clone()));
        }
        if let Some(arrived) = inbox_arrival(record) {
            self.nudge_inbox.remove(&(arrived, path.clone()));
        }
        if let Some(created) = record.created_at {
            self.created.remove(&(Reverse(created), path));
        }
    }

    /// What a digest on `today` at `now` reads. Costs the records at the front of each
    /// order and the week's activity, not the vault.
    pub fn candidates(&self, today: NaiveDate, now: DateTime<Utc>) -> DigestCandidates {
        let waited_since = now - Duration::days(INBOX_WAIT_DAYS);
        DigestCandidates {
            open_actions: first_with_ties(self.actions.iter(), |_| true),
            follow_ups: first_with_ties(self.follow_ups.iter(), |_| true),
            overdue: first_with_ties(self.due.iter().take_while(|((due, _), _)| *due < today), |_| true),
            inbox_waiting: first_with_ties(
                self.inbox_since.iter().take_while(|((since, _), _)| *since < waited_since),
                |_| true,
            ),
            inbox_oldest: first_with_ties(self.inbox_arrival.iter(), |_| true),
            recent: self
                .activity
                .iter()
                .take_while(|((Reverse(at), _), _)| within(Some(*at), now, WEEK_DAYS))
                .map(|(_, record)| Arc::clone(record))
                .collect(),
            open_loops: first_with_ties(self.projects_by_name.iter(), |record| is_open_loop(record, now)),
        }
    }

    /// What the nudges on `today` at `now` under `settings` read (see
    /// [`crate::nudges::evaluate`]): every record a rule picks, and every record created
    /// within [`NudgeSettings::quiet_days`], each once.
    ///
    /// Each order is walked from its front while its rule holds, and each rule's test is
    /// monotonic along its order, so a walk stops at its first miss: the cost is the records
    /// returned, one miss per order and a tree descent each, not the vault.
    pub fn nudge_candidates(
        &self,
        today: NaiveDate,
        now: DateTime<Utc>,
        settings: NudgeSettings,
    ) -> NudgeCandidates {
        let bounds = Bounds::at(today, now, settings);
        let stale = self.nudge_stale.iter().take_while(|((updated, _), _)| bounds.is_stale(*updated));
        let due = self.nudge_due.iter().take_while(|((due, _), _)| bounds.is_due(*due));
        let follow_ups =
            self.nudge_follow_ups.iter().take_while(|((touched, _), _)| bounds.is_follow_up_due(*touched));
        let inbox = self.nudge_inbox.iter().take_while(|((arrived, _), _)| bounds.has_waited(*arrived));
        // The rules' orders hold records of different categories, so only a record created
        // lately can come twice.
        let picked: Vec<Arc<CatalogueEntry>> = stale
            .map(|(_, record)| Arc::clone(record))
            .chain(due.map(|(_, record)| Arc::clone(record)))
            .chain(follow_ups.map(|(_, record)| Arc::clone(record)))
            .chain(inbox.map(|(_, record)| Arc::clone(record)))
            .collect();
        let seen: HashSet<&EntryPath> = picked.iter().map(|record| &record.summary.path).collect();
        let captured: Vec<Arc<CatalogueEntry>> = self
            .created
            .iter()
            .take_while(|((Reverse(created), _), _)| bounds.is_recent_capture(*created))
            .filter(|((_, path), _)| !seen.contains(path))
            .map(|(_, record)| Arc::clone(record))
            .collect();
        let mut records = picked;
        records.extend(captured);
        NudgeCandidates { records }
    }
}

/// A project or admin item that is not done.
fn is_actionable_not_done(record: &CatalogueEntry) -> bool {
    matches!(record.category(), Category::Projects | Category::Admin) && !record.is_done()
}

/// A project that can be an open loop at some time: not done, not parked as someday.
fn is_loop_candidate(record: &CatalogueEntry) -> bool {
    record.category() == Category::Projects && !record.is_done() && record.status() != Some("someday")
}

/// The first [`FIRST`] records of an order that `keep` accepts, and every further one tied
/// on the key with the last of them (a section breaks such ties by its own text).
fn first_with_ties<'a, K: PartialEq + 'a>(
    order: impl Iterator<Item = (&'a (K, EntryPath), &'a Arc<CatalogueEntry>)>,
    keep: impl Fn(&CatalogueEntry) -> bool,
) -> Vec<Arc<CatalogueEntry>> {
    let mut chosen = Vec::new();
    let mut last_key: Option<&K> = None;
    for ((key, _), record) in order {
        if chosen.len() >= FIRST && last_key != Some(key) {
            break;
        }
        if keep(record) {
            chosen.push(Arc::clone(record));
            last_key = Some(key);
        }
    }
    chosen
}
