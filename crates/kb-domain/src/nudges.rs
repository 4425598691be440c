//! Nudges: what kb points out on its own, decided by fixed rules over the catalogue (no
//! model): active projects left alone, admin items due soon or overdue, people with
//! follow-ups not touched for a while, inbox entries left waiting, and days without a
//! capture. A person may snooze a nudge; a snoozed one stays out until its snooze ends.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Serialize;

use crate::catalogue::CatalogueEntry;
use crate::category::Category;

/// Which rule a nudge comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
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
}

impl NudgeRule {
    /// Every rule, in the order nudges are listed.
    pub const ALL: [NudgeRule; 5] = [
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
        }
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

/// One thing kb points out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Nudge {
    /// What identifies it for snoozing: `{rule}:{path}`, or the rule alone for a nudge
    /// about no entry.
    pub key: String,
    /// The rule.
    pub rule: NudgeRule,
    /// The entry it is about, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// That entry's name.
    #[serde(skip_serializing_if = "Option::is_none")]
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

/// The nudges of `records` on `today` at `now`, without the snoozed ones, in
/// [`NudgeRule::ALL`] order and, within a rule, most pressing first (then by path).
pub fn evaluate<'a>(
    records: impl IntoIterator<Item = &'a CatalogueEntry>,
    today: NaiveDate,
    now: DateTime<Utc>,
    settings: NudgeSettings,
    snoozes: &Snoozes,
) -> Vec<Nudge> {
    let days = |n: u32| Duration::days(i64::from(n));
    let mut found: Vec<(NudgeRule, i64, String, Nudge)> = Vec::new();
    let mut captured_lately = false;
    for record in records {
        let summary = &record.summary;
        let done = summary.status.as_deref() == Some("done");
        if record.created_at.is_some_and(|at| at > now - days(settings.quiet_days)) {
            captured_lately = true;
        }
        let path = summary.path.to_string();
        match summary.category {
            Category::Projects if summary.status.as_deref() == Some("active") => {
                if let Some(updated) = summary.updated_at.filter(|at| *at <= now - days(settings.stale_days))
                {
                    let idle = (now - updated).num_days();
                    let message = format!("{} has not moved for {idle} days", summary.name);
                    found.push((
                        NudgeRule::StaleProject,
                        updated.timestamp(),
                        path,
                        Nudge::about(NudgeRule::StaleProject, record, message),
                    ));
                }
            }
            Category::Admin if !done => {
                if let Some(due) =
                    record.due_date.filter(|due| *due <= today + days(settings.due_within_days))
                {
                    let message = match (due - today).num_days() {
                        d if d < 0 => format!("{} was due {due} ({} days ago)", summary.name, -d),
                        0 => format!("{} is due today", summary.name),
                        1 => format!("{} is due tomorrow", summary.name),
                        d => format!("{} is due in {d} days ({due})", summary.name),
                    };
                    found.push((
                        NudgeRule::AdminDue,
                        due.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp()),
                        path,
                        Nudge::about(NudgeRule::AdminDue, record, message),
                    ));
                }
            }
            Category::People if !record.follow_ups.is_empty() => {
                let touched = record.last_touched.or_else(|| summary.updated_at.map(|at| at.date_naive()));
                if let Some(touched) = touched.filter(|t| *t <= today - days(settings.follow_up_days)) {
                    let message =
                        format!("Follow up with {}: {}", summary.name, record.follow_ups.join("; "));
                    found.push((
                        NudgeRule::FollowUp,
                        touched.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp()),
                        path,
                        Nudge::about(NudgeRule::FollowUp, record, message),
                    ));
                }
            }
            Category::Inbox => {
                if let Some(arrived) = record.created_at.filter(|at| *at <= now - days(settings.inbox_days)) {
                    let waiting = (now - arrived).num_days();
                    let message =
                        format!("{} has waited in the inbox for {waiting} days: file it?", summary.name);
                    found.push((
                        NudgeRule::InboxWaiting,
                        arrived.timestamp(),
                        path,
                        Nudge::about(NudgeRule::InboxWaiting, record, message),
                    ));
                }
            }
            _ => {}
        }
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
        found.push((NudgeRule::NoCapture, 0, String::new(), nudge));
    }
    let order = |rule: NudgeRule| NudgeRule::ALL.iter().position(|r| *r == rule).unwrap_or(usize::MAX);
    found.sort_by(|a, b| (order(a.0), a.1, &a.2).cmp(&(order(b.0), b.1, &b.2)));
    found
        .into_iter()
        .map(|(_, _, _, nudge)| nudge)
        .filter(|nudge| snoozes.get(&nudge.key).is_none_or(|until| *until <= now))
        .collect()
}
