//! Nudges: what kb points out on its own, decided by fixed rules over the catalogue (no
//! model): active projects left alone, admin items due soon or overdue, people with
//! follow-ups not touched for a while, inbox entries left waiting, and days without a
//! capture; and, when the vault is synced, each conflict copy waiting for a decision. A
//! person may snooze a nudge; a snoozed one stays out until its snooze ends.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::catalogue::CatalogueEntry;
use crate::category::Category;
use crate::fields::statuses;

/// Which rule a nudge comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NudgeRule {
    /// An active project unchanged for [`NudgeSettings::stale_days`].
    StaleProject,
    /// An admin item not done, due within [`NudgeSettings::due_within_days`] or overdue.
    AdminDue,
    /// A person with follow-ups, not touched for [`NudgeSettings::follow_up_days`].
    FollowUp,
    /// An inbox entry waiting [`NudgeSettings::inbox_days`] or more.
    InboxWaiting,
    /// No capture for [`NudgeSettings::quiet_days`].
    NoCapture,
    /// A conflict copy a sync (or another sync tool) left beside a note.
    SyncConflict,
}

impl NudgeRule {
    /// Every rule, in the order nudges are listed.
    pub const ALL: [NudgeRule; 6] = [
        NudgeRule::SyncConflict,
        NudgeRule::AdminDue,
        NudgeRule::FollowUp,
        NudgeRule::StaleProject,
        NudgeRule::InboxWaiting,
        NudgeRule::NoCapture,
    ];

    /// The rule as written in keys and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            NudgeRule::StaleProject => "stale_project",
            NudgeRule::AdminDue => "admin_due",
            NudgeRule::FollowUp => "follow_up",
            NudgeRule::InboxWaiting => "inbox_waiting",
            NudgeRule::NoCapture => "no_capture",
            NudgeRule::SyncConflict => "sync_conflict",
        }
    }

    /// The rule named `text` (as [`NudgeRule::as_str`] writes it).
    pub fn parse(text: &str) -> Option<NudgeRule> {
        NudgeRule::ALL.into_iter().find(|rule| rule.as_str() == text)
    }
}

/// How long before each rule speaks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NudgeSettings {
    /// Days an active project may go unchanged (`KB_STALE_DAYS`, 14).
    pub stale_days: u32,
    /// An admin item due within this many days (or overdue) is pointed out (2).
    pub due_within_days: u32,
    /// Days a person's follow-ups may wait since they were last touched (7).
    pub follow_up_days: u32,
    /// Days an inbox entry may wait (3).
    pub inbox_days: u32,
    /// Days without a capture before a gentle nudge (3).
    pub quiet_days: u32,
}

impl Default for NudgeSettings {
    fn default() -> NudgeSettings {
        NudgeSettings { stale_days: 14, due_within_days: 2, follow_up_days: 7, inbox_days: 3, quiet_days: 3 }
    }
}

/// One thing kb points out (read back from a kept digest when a delivery resumes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nudge {
    /// What identifies it for snoozing: `{rule}:{path}`, or the rule alone for a nudge
    /// about no entry.
    pub key: String,
    /// The rule.
    pub rule: NudgeRule,
    /// The entry it is about, when there is one.
    pub path: Option<String>,
    /// That entry's name.
    pub name: Option<String>,
    /// What to tell the person, one line.
    pub message: String,
}

impl Nudge {
    /// The key of the nudge of `rule` about `path` (or about nothing).
    pub fn key_of(rule: NudgeRule, path: Option<&str>) -> String {
        match path {
            Some(path) => format!("{}:{path}", rule.as_str()),
            None => rule.as_str().to_string(),
        }
    }

    /// The nudge about the conflict copy at `copy` (vault-relative).
    pub fn conflict(copy: &str) -> Nudge {
        Nudge {
            key: Nudge::key_of(NudgeRule::SyncConflict, Some(copy)),
            rule: NudgeRule::SyncConflict,
            path: Some(copy.to_string()),
            name: None,
            message: if copy.ends_with(".md") && copy.contains(".conflict-") {
                format!("{copy} holds another version of a note, from a sync: keep mine, theirs or both")
            } else if copy.contains(".conflict-") {
                format!("{copy} holds another version of a file, from a sync: keep or delete it by hand")
            } else {
                format!("{copy} is a conflict copy another sync left: keep or delete it by hand")
            },
        }
    }

    fn about(rule: NudgeRule, record: &CatalogueEntry, message: String) -> Nudge {
        let path = record.summary.path.to_string();
        Nudge {
            key: Nudge::key_of(rule, Some(&path)),
            rule,
            path: Some(path),
            name: Some(record.summary.name.clone()),
            message,
        }
    }
}

/// The catalogue records the nudges of a moment are decided from: every record any rule
/// could pick, and every record created within [`NudgeSettings::quiet_days`] (whether
/// there was a capture lately). More records than that change nothing.
#[derive(Debug, Clone, Default)]
pub struct NudgeCandidates {
    /// The records.
    pub records: Vec<std::sync::Arc<CatalogueEntry>>,
}

/// Snoozed nudges: key → when the snooze ends.
pub type Snoozes = HashMap<String, DateTime<Utc>>;

/// Whether `record` is an active project (status `active`, exactly), in the running for
/// [`NudgeRule::StaleProject`] by its `updated_at`. These record tests, like [`Bounds`], are
/// shared by [`evaluate`] and the orders [`crate::DigestOrders`] keeps, so the two agree.
pub(crate) fn is_active_project(record: &CatalogueEntry) -> bool {
    record.category() == Category::Projects && record.status() == Some(statuses::ACTIVE)
}

/// Whether `record` is an admin item not done (no status is not done), in the running for
/// [`NudgeRule::AdminDue`] by its due date.
pub(crate) fn is_admin_not_done(record: &CatalogueEntry) -> bool {
    record.category() == Category::Admin && !record.is_done()
}

/// When a person with follow-ups was last touched for [`NudgeRule::FollowUp`]: their
/// `last_touched`, else the day of their `updated_at`; `None` for any other record, and for
/// a person with neither date (who is never nudged).
pub(crate) fn follow_up_touched(record: &CatalogueEntry) -> Option<NaiveDate> {
    if record.category() != Category::People || record.follow_ups.is_empty() {
        return None;
    }
    record.last_touched.or_else(|| record.updated_at().map(|at| at.date_naive()))
}

/// When an inbox entry arrived for [`NudgeRule::InboxWaiting`]: its `created_at` (an inbox
/// entry without one is never nudged); `None` for any other record.
pub(crate) fn inbox_arrival(record: &CatalogueEntry) -> Option<DateTime<Utc>> {
    record.created_at.filter(|_| record.category() == Category::Inbox)
}

/// The lines the rules draw on `today` at `now`. Each test is monotonic in its argument
/// (true up to, or from, a line), so a walk of an order can stop at the first miss.
///
/// The lines are worked out with checked arithmetic: a setting of more days than the
/// calendar holds puts its line before (or after) every date rather than panicking.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// The latest `updated_at` of a stale project; `None` when no time is that old.
    stale_by: Option<DateTime<Utc>>,
    /// The latest due date pointed out; `None` when every date is.
    due_by: Option<NaiveDate>,
    /// The latest day a person may have been touched to be nudged; `None` when none is.
    follow_up_by: Option<NaiveDate>,
    /// The latest arrival of an inbox entry left waiting; `None` when no time is that old.
    inbox_by: Option<DateTime<Utc>>,
    /// Creations after this are captures made lately; `None` when every creation is.
    captured_after: Option<DateTime<Utc>>,
}

impl Bounds {
    /// The lines of `settings` on `today` at `now`.
    pub(crate) fn at(today: NaiveDate, now: DateTime<Utc>, settings: NudgeSettings) -> Bounds {
        let days = |n: u32| Duration::days(i64::from(n));
        let before = |n: u32| now.checked_sub_signed(days(n));
        Bounds {
            stale_by: before(settings.stale_days),
            due_by: today.checked_add_signed(days(settings.due_within_days)),
            follow_up_by: today.checked_sub_signed(days(settings.follow_up_days)),
            inbox_by: before(settings.inbox_days),
            captured_after: before(settings.quiet_days),
        }
    }

    /// Whether an active project updated at `updated` is stale.
    pub(crate) fn is_stale(&self, updated: DateTime<Utc>) -> bool {
        self.stale_by.is_some_and(|by| updated <= by)
    }

    /// Whether an admin item due on `due` is due soon or overdue.
    pub(crate) fn is_due(&self, due: NaiveDate) -> bool {
        self.due_by.is_none_or(|by| due <= by)
    }

    /// Whether a person with follow-ups touched on `touched` is due a follow-up.
    pub(crate) fn is_follow_up_due(&self, touched: NaiveDate) -> bool {
        self.follow_up_by.is_some_and(|by| touched <= by)
    }

    /// Whether an inbox entry that arrived at `arrived` has waited long enough.
    pub(crate) fn has_waited(&self, arrived: DateTime<Utc>) -> bool {
        self.inbox_by.is_some_and(|by| arrived <= by)
    }

    /// Whether an entry created at `created` is a capture made lately.
    pub(crate) fn is_recent_capture(&self, created: DateTime<Utc>) -> bool {
        self.captured_after.is_none_or(|after| created > after)
    }
}

/// The nudge `record` gets by its rule on `today` at `now` (before snoozes), with what
/// orders it within the rule (most pressing first), when a rule fires for it.
fn nudge_of(
    record: &CatalogueEntry,
    today: NaiveDate,
    now: DateTime<Utc>,
    bounds: &Bounds,
) -> Option<(NudgeRule, i64, Nudge)> {
    let name = record.name();
    let midnight = |day: NaiveDate| day.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp());
    if is_active_project(record) {
        let updated = record.updated_at().filter(|at| bounds.is_stale(*at))?;
        let idle = (now - updated).num_days();
        let message = format!("{name} has not moved for {idle} days");
        Some((
            NudgeRule::StaleProject,
            updated.timestamp(),
            Nudge::about(NudgeRule::StaleProject, record, message),
        ))
    } else if is_admin_not_done(record) {
        let due = record.due_date.filter(|due| bounds.is_due(*due))?;
        let message = match (due - today).num_days() {
            d if d < 0 => format!("{name} was due {due} ({} days ago)", -d),
            0 => format!("{name} is due today"),
            1 => format!("{name} is due tomorrow"),
            d => format!("{name} is due in {d} days ({due})"),
        };
        Some((NudgeRule::AdminDue, midnight(due), Nudge::about(NudgeRule::AdminDue, record, message)))
    } else if let Some(touched) = follow_up_touched(record) {
        if !bounds.is_follow_up_due(touched) {
            return None;
        }
        let message = format!("Follow up with {name}: {}", record.follow_ups.join("; "));
        Some((NudgeRule::FollowUp, midnight(touched), Nudge::about(NudgeRule::FollowUp, record, message)))
    } else {
        let arrived = inbox_arrival(record).filter(|at| bounds.has_waited(*at))?;
        let waiting = (now - arrived).num_days();
        let message = format!("{name} has waited in the inbox for {waiting} days: file it?");
        Some((
            NudgeRule::InboxWaiting,
            arrived.timestamp(),
            Nudge::about(NudgeRule::InboxWaiting, record, message),
        ))
    }
}

/// The nudges of `records` on `today` at `now`, without the snoozed ones, in
/// [`NudgeRule::ALL`] order and, within a rule, most pressing first (then by path).
///
/// A nudge is snoozed while its snooze ends after `now`. Records are expected to have
/// distinct paths (as a catalogue's do); their order does not matter.
pub fn evaluate<'a>(
    records: impl IntoIterator<Item = &'a CatalogueEntry>,
    today: NaiveDate,
    now: DateTime<Utc>,
    settings: NudgeSettings,
    snoozes: &Snoozes,
) -> Vec<Nudge> {
    let bounds = Bounds::at(today, now, settings);
    let mut found: Vec<(NudgeRule, i64, Nudge)> = Vec::new();
    let mut captured_lately = false;
    for record in records {
        if record.created_at.is_some_and(|at| bounds.is_recent_capture(at)) {
            captured_lately = true;
        }
        found.extend(nudge_of(record, today, now, &bounds));
    }
    if !captured_lately {
        let message = format!(
            "Nothing captured for {} days or more: anything on your mind worth keeping?",
            settings.quiet_days
        );
        let nudge = Nudge {
            key: Nudge::key_of(NudgeRule::NoCapture, None),
            rule: NudgeRule::NoCapture,
            path: None,
            name: None,
            message,
        };
        found.push((NudgeRule::NoCapture, 0, nudge));
    }
    let order = |rule: NudgeRule| NudgeRule::ALL.iter().position(|r| *r == rule).unwrap_or(usize::MAX);
    found.sort_by(|a, b| (order(a.0), a.1, &a.2.path).cmp(&(order(b.0), b.1, &b.2.path)));
    found
        .into_iter()
        .map(|(_, _, nudge)| nudge)
        .filter(|nudge| snoozes.get(&nudge.key).is_none_or(|until| *until <= now))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::Nudge;

    #[test]
    fn a_conflict_nudge_says_how_its_copy_is_resolved() {
        let note = Nudge::conflict("projects/shed.conflict-desk-20261129-120000.md");
        assert!(note.message.ends_with("keep mine, theirs or both"), "{}", note.message);
        let file = Nudge::conflict("att/pic.conflict-desk-20261129-120000.png");
        assert!(file.message.contains("another version of a file") && file.message.ends_with("by hand"));
        let other = Nudge::conflict("notes/a.sync-conflict-20261129-120000-ABCDEFG.md");
        assert!(other.message.contains("another sync left"), "{}", other.message);
    }
}
