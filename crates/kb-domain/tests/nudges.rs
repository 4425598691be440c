#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Properties of the nudge rules and of the records [`DigestOrders::nudge_candidates`]
//! hands them, over generated catalogues (every category, statuses done, active and
//! others, dates on and around each rule's line, fields missing), moments, settings
//! (including more days than the calendar holds) and snoozes:
//!
//! - the nudges over the candidates are the nudges over every record;
//! - each rule lists exactly the entries that meet it, by an oracle written here from the
//!   rules' definitions in whole seconds and day numbers (no chrono arithmetic);
//! - the candidates are exactly the records a rule picks and those created lately;
//! - a snoozed nudge is absent until its snooze ends, and back from then on;
//! - orders kept by inserts and removes answer as ones built afresh.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use kb_domain::nudges::{Nudge, NudgeRule, NudgeSettings, Snoozes, evaluate};
use kb_domain::{CatalogueEntry, Category, DigestOrders, EntryPath, EntrySummary};
use proptest::prelude::*;

/// Statuses, with the ones rules name, others, a different case and none.
const STATUSES: [Option<&str>; 8] = [
    None,
    Some("active"),
    Some("done"),
    Some("pending"),
    Some("waiting"),
    Some("someday"),
    Some("Active"),
    Some("DONE"),
];
const NAMES: [&str; 3] = ["Alpha", "Beta", "alpha"];
/// Offsets within a day, in seconds: on the hour, a second either side, and later.
const JITTERS: [i64; 5] = [0, -1, 1, 10 * 3600, 86_399];

/// Midnight UTC of the day everything is generated around.
fn base() -> DateTime<Utc> {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc()
}

/// `day` days from [`base`], plus the `jitter`th offset.
fn instant(day: i64, jitter: usize) -> DateTime<Utc> {
    base() + Duration::days(day) + Duration::seconds(JITTERS[jitter])
}

/// The date `day` days from [`base`].
fn date(day: i64) -> NaiveDate {
    base().date_naive() + Duration::days(day)
}

fn path_of(slot: usize, category: Category) -> EntryPath {
    EntryPath::parse(&format!("{}/e{slot}.md", category.as_str())).unwrap()
}

/// An offset within a day, most often the first (so that times tie and meet lines).
fn jitter() -> impl Strategy<Value = usize> {
    prop_oneof![2 => Just(0usize), 3 => 0..JITTERS.len()]
}

fn a_time(days: std::ops::Range<i64>) -> impl Strategy<Value = Option<DateTime<Utc>>> {
    proptest::option::weighted(0.8, (days, jitter()).prop_map(|(d, j)| instant(d, j)))
}

fn a_date(days: std::ops::Range<i64>) -> impl Strategy<Value = Option<NaiveDate>> {
    proptest::option::weighted(0.75, days.prop_map(date))
}

prop_compose! {
    /// A catalogue record with the fields the rules read, each often absent, on a line or
    /// tied with another record's.
    fn record()(
        slot in 0..24usize,
        category in 0..Category::ALL.len(),
        status in prop_oneof![3 => Just(1usize), 2 => Just(2usize), 3 => 0..STATUSES.len()],
        name in 0..NAMES.len(),
        updated in a_time(-30..4),
        created in a_time(-30..4),
        due in a_date(-12..26),
        touched in a_date(-30..3),
        follow_ups in prop_oneof![1 => Just(0usize), 2 => 1..3usize],
    ) -> Arc<CatalogueEntry> {
        let category = Category::ALL[category];
        Arc::new(CatalogueEntry {
            summary: EntrySummary {
                path: path_of(slot, category),
                category,
                name: NAMES[name].to_string(),
                status: STATUSES[status].map(str::to_string),
                updated_at: updated,
                summary: String::new(),
            },
            created_at: created,
            due_date: due,
            next_action: None,
            follow_ups: (0..follow_ups).map(|i| format!("ask {i}")).collect(),
            last_touched: touched,
            tags: Vec::new(),
            suggested_category: None,
            aliases: Vec::new(),
        })
    }
}

/// A catalogue: records with distinct paths (a later one for a path replaces the earlier).
fn catalogue() -> impl Strategy<Value = Vec<Arc<CatalogueEntry>>> {
    proptest::collection::vec(record(), 0..70).prop_map(|records| {
        let by_path: BTreeMap<EntryPath, Arc<CatalogueEntry>> =
            records.into_iter().map(|r| (r.summary.path.clone(), r)).collect();
        by_path.into_values().collect()
    })
}

/// A setting: mostly a few days (often 0), sometimes more days than the calendar holds.
fn days_setting() -> impl Strategy<Value = u32> {
    prop_oneof![
        12 => 0..22u32,
        1 => 1_000..200_000u32,
        1 => Just(95_000_000u32),
        1 => Just(u32::MAX),
    ]
}

prop_compose! {
    fn settings()(
        stale_days in days_setting(),
        due_within_days in days_setting(),
        follow_up_days in days_setting(),
        inbox_days in days_setting(),
        quiet_days in days_setting(),
    ) -> NudgeSettings {
        NudgeSettings { stale_days, due_within_days, follow_up_days, inbox_days, quiet_days }
    }
}

prop_compose! {
    /// A moment: `now` on the records' grid (so lines fall on records) and a local `today`
    /// within a day of now's UTC date.
    fn moment()(day in -3..5i64, jitter in jitter(), local in -1..2i64) -> (NaiveDate, DateTime<Utc>) {
        let now = instant(day, jitter);
        (now.date_naive() + Duration::days(local), now)
    }
}

/// Snooze lengths from a moment, in seconds: ended, ending now, and not yet ended.
const SNOOZE_ENDS: [i64; 6] = [-86_400, -1, 0, 1, 3_600, 3 * 86_400];

/// Whole seconds since the epoch.
fn secs(at: DateTime<Utc>) -> i64 {
    at.timestamp()
}

/// A day's number.
fn day_number(day: NaiveDate) -> i64 {
    i64::from(day.num_days_from_ce())
}

/// Seconds in `days` days.
fn in_secs(days: u32) -> i64 {
    i64::from(days) * 86_400
}

/// The nudges the rules' definitions give, as (rule, path) in listing order, computed in
/// plain integers with no chrono arithmetic.
fn oracle(
    records: &[Arc<CatalogueEntry>],
    today: NaiveDate,
    now: DateTime<Utc>,
    s: NudgeSettings,
) -> Vec<(NudgeRule, Option<String>)> {
    let mut stale: Vec<(i64, String)> = Vec::new();
    let mut due: Vec<(i64, String)> = Vec::new();
    let mut follow: Vec<(i64, String)> = Vec::new();
    let mut inbox: Vec<(i64, String)> = Vec::new();
    let mut captured = false;
    for r in records {
        let path = r.summary.path.to_string();
        let status = r.summary.status.as_deref();
        if let Some(c) = r.created_at
            && secs(c) > secs(now) - in_secs(s.quiet_days)
        {
            captured = true;
        }
        match r.summary.category {
            Category::Projects => {
                if status == Some("active")
                    && let Some(u) = r.summary.updated_at
                    && secs(u) <= secs(now) - in_secs(s.stale_days)
                {
                    stale.push((secs(u), path));
                }
            }
            Category::Admin => {
                if status != Some("done")
                    && let Some(d) = r.due_date
                    && day_number(d) <= day_number(today) + i64::from(s.due_within_days)
                {
                    due.push((day_number(d), path));
                }
            }
            Category::People => {
                let touched = r.last_touched.or(r.summary.updated_at.map(|u| u.date_naive()));
                if !r.follow_ups.is_empty()
                    && let Some(t) = touched
                    && day_number(t) <= day_number(today) - i64::from(s.follow_up_days)
                {
                    follow.push((day_number(t), path));
                }
            }
            Category::Inbox => {
                if let Some(c) = r.created_at
                    && secs(c) <= secs(now) - in_secs(s.inbox_days)
                {
                    inbox.push((secs(c), path));
                }
            }
            Category::Ideas | Category::Other => {}
        }
    }
    let mut out = Vec::new();
    for (rule, mut list) in [
        (NudgeRule::AdminDue, due),
        (NudgeRule::FollowUp, follow),
        (NudgeRule::StaleProject, stale),
        (NudgeRule::InboxWaiting, inbox),
    ] {
        list.sort();
        out.extend(list.into_iter().map(|(_, path)| (rule, Some(path))));
    }
    if !captured {
        out.push((NudgeRule::NoCapture, None));
    }
    out
}

/// The paths of the records created after `now - quiet_days` (in integers).
fn created_lately(records: &[Arc<CatalogueEntry>], now: DateTime<Utc>, s: NudgeSettings) -> BTreeSet<String> {
    records
        .iter()
        .filter(|r| r.created_at.is_some_and(|c| secs(c) > secs(now) - in_secs(s.quiet_days)))
        .map(|r| r.summary.path.to_string())
        .collect()
}

fn rules_and_paths(nudges: &[Nudge]) -> Vec<(NudgeRule, Option<String>)> {
    nudges.iter().map(|n| (n.rule, n.path.clone())).collect()
}

fn refs(records: &[Arc<CatalogueEntry>]) -> impl Iterator<Item = &CatalogueEntry> {
    records.iter().map(Arc::as_ref)
}

/// Snoozes on the `picks`th nudges of `nudges` (by index, wrapping), each ending the given
/// number of seconds from `now`; one more on a key no nudge has.
fn snoozes_of(nudges: &[Nudge], picks: &[(usize, usize)], now: DateTime<Utc>) -> Snoozes {
    let mut snoozes = Snoozes::new();
    snoozes.insert("stale_project:projects/none.md".into(), now + Duration::days(1));
    if nudges.is_empty() {
        return snoozes;
    }
    for &(pick, end) in picks {
        snoozes.insert(nudges[pick % nudges.len()].key.clone(), now + Duration::seconds(SNOOZE_ENDS[end]));
    }
    snoozes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// (a) and (b): over the candidates the orders hand over, the nudges are those over
    /// every record, snoozed or not; each rule lists exactly what its definition picks, in
    /// its order; and the candidates are exactly those records plus the ones created
    /// lately, each once.
    #[test]
    fn candidates_give_the_nudges_of_the_whole_vault_and_rules_meet_their_definitions(
        records in catalogue(),
        (today, now) in moment(),
        settings in settings(),
        picks in proptest::collection::vec((0..64usize, 0..SNOOZE_ENDS.len()), 0..4),
    ) {
        let none = Snoozes::new();
        let all = evaluate(refs(&records), today, now, settings, &none);
        let candidates = DigestOrders::of(&records).nudge_candidates(today, now, settings).records;
        let over_candidates = evaluate(refs(&candidates), today, now, settings, &none);
        prop_assert_eq!(&over_candidates, &all);

        let expected = oracle(&records, today, now, settings);
        prop_assert_eq!(rules_and_paths(&all), expected.clone());
        for nudge in &all {
            prop_assert_eq!(&nudge.key, &Nudge::key_of(nudge.rule, nudge.path.as_deref()));
            let record = records.iter().find(|r| Some(r.summary.path.to_string()) == nudge.path);
            prop_assert_eq!(nudge.name.as_deref(), record.map(|r| r.name()));
        }

        let candidate_paths: Vec<String> = candidates.iter().map(|r| r.summary.path.to_string()).collect();
        let distinct: BTreeSet<String> = candidate_paths.iter().cloned().collect();
        prop_assert_eq!(distinct.len(), candidate_paths.len(), "a candidate came twice");
        let mut wanted = created_lately(&records, now, settings);
        wanted.extend(expected.iter().filter_map(|(_, path)| path.clone()));
        prop_assert_eq!(distinct, wanted);
        for candidate in &candidates {
            let original = records.iter().find(|r| r.summary.path == candidate.summary.path);
            prop_assert_eq!(Some(candidate), original);
        }

        let snoozes = snoozes_of(&all, &picks, now);
        prop_assert_eq!(
            evaluate(refs(&candidates), today, now, settings, &snoozes),
            evaluate(refs(&records), today, now, settings, &snoozes)
        );
    }

    /// (c): a nudge snoozed until after now is absent and every other one present; from the
    /// moment its snooze ends (today unchanged, so each entry's rule still holds) it is back,
    /// and a second before it is not.
    #[test]
    fn a_snoozed_nudge_is_away_until_its_snooze_ends(
        records in catalogue(),
        (today, now) in moment(),
        settings in settings(),
        picks in proptest::collection::vec((0..64usize, 0..SNOOZE_ENDS.len()), 1..5),
    ) {
        let unsnoozed = evaluate(refs(&records), today, now, settings, &Snoozes::new());
        let snoozes = snoozes_of(&unsnoozed, &picks, now);
        let snoozed = evaluate(refs(&records), today, now, settings, &snoozes);
        let expected: Vec<Nudge> = unsnoozed
            .iter()
            .filter(|n| snoozes.get(&n.key).is_none_or(|until| *until <= now))
            .cloned()
            .collect();
        prop_assert_eq!(&snoozed, &expected);
        for nudge in &unsnoozed {
            let Some(until) = snoozes.get(&nudge.key).copied().filter(|until| *until > now) else { continue };
            prop_assert!(!snoozed.iter().any(|n| n.key == nudge.key));
            let key_at = |at: DateTime<Utc>| {
                evaluate(refs(&records), today, at, settings, &snoozes).iter().any(|n| n.key == nudge.key)
            };
            let unsnoozed_at = |at: DateTime<Utc>| {
                evaluate(refs(&records), today, at, settings, &Snoozes::new()).iter().any(|n| n.key == nudge.key)
            };
            prop_assert!(!key_at(until - Duration::seconds(1)));
            prop_assert_eq!(key_at(until), unsnoozed_at(until));
            prop_assert_eq!(key_at(until + Duration::days(1)), unsnoozed_at(until + Duration::days(1)));
            if nudge.rule != NudgeRule::NoCapture {
                prop_assert!(key_at(until), "{} did not come back at {until}", nudge.key);
            }
        }
    }
}

/// One change to a catalogue.
#[derive(Debug, Clone)]
enum Step {
    /// The record of an entry, new or changed.
    Put(Arc<CatalogueEntry>),
    /// The entry at the `slot`th path of a category goes.
    Remove(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => record().prop_map(Step::Put),
        1 => (0..24usize, 0..Category::ALL.len()).prop_map(|(slot, c)| Step::Remove(slot, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// (d): orders kept by inserts and removes through a series of changes hand the
    /// same nudge candidates (and digest candidates), in the same order, as orders built
    /// afresh from the records now, and so the same nudges.
    #[test]
    fn kept_orders_answer_like_fresh_ones(
        steps in proptest::collection::vec(step(), 1..90),
        (today, now) in moment(),
        settings in settings(),
    ) {
        let mut orders = DigestOrders::default();
        let mut records: BTreeMap<EntryPath, Arc<CatalogueEntry>> = BTreeMap::new();
        for step in steps {
            match step {
                Step::Put(record) => {
                    if let Some(old) = records.insert(record.summary.path.clone(), Arc::clone(&record)) {
                        orders.remove(&old);
                    }
                    orders.insert(&record);
                }
                Step::Remove(slot, category) => {
                    if let Some(old) = records.remove(&path_of(slot, Category::ALL[category])) {
                        orders.remove(&old);
                    }
                }
            }
        }
        let all: Vec<Arc<CatalogueEntry>> = records.into_values().collect();
        let fresh = DigestOrders::of(&all);
        let kept = orders.nudge_candidates(today, now, settings).records;
        let anew = fresh.nudge_candidates(today, now, settings).records;
        prop_assert_eq!(&kept, &anew);
        let none = Snoozes::new();
        prop_assert_eq!(
            evaluate(refs(&kept), today, now, settings, &none),
            evaluate(refs(&all), today, now, settings, &none)
        );
        let paths = |c: kb_domain::DigestCandidates| {
            [c.open_actions, c.follow_ups, c.overdue, c.inbox_waiting, c.inbox_oldest, c.recent, c.open_loops]
                .map(|list| list.iter().map(|r| r.summary.path.clone()).collect::<Vec<_>>())
        };
        prop_assert_eq!(paths(orders.candidates(today, now)), paths(fresh.candidates(today, now)));
    }
}

/// The edge cases named one by one: lines met exactly, missing dates, done items, a person
/// with follow-ups and no date at all, an inbox entry without `created_at`.
#[test]
fn edge_cases_on_the_lines() {
    let now = instant(0, 3);
    let today = now.date_naive();
    let s = NudgeSettings::default();
    let make = |path: &str, status: Option<&str>, f: &dyn Fn(&mut CatalogueEntry)| {
        let path = EntryPath::parse(path).unwrap();
        let mut record = CatalogueEntry {
            summary: EntrySummary {
                category: path.category(),
                path,
                name: "n".into(),
                status: status.map(str::to_string),
                updated_at: None,
                summary: String::new(),
            },
            created_at: None,
            due_date: None,
            next_action: None,
            follow_ups: Vec::new(),
            last_touched: None,
            tags: Vec::new(),
            suggested_category: None,
            aliases: Vec::new(),
        };
        f(&mut record);
        Arc::new(record)
    };
    let records = vec![
        make("projects/on-line.md", Some("active"), &|r| {
            r.summary.updated_at = Some(now - Duration::days(14))
        }),
        make("projects/a-second-short.md", Some("active"), &|r| {
            r.summary.updated_at = Some(now - Duration::days(14) + Duration::seconds(1))
        }),
        make("projects/undated.md", Some("active"), &|_| {}),
        make("projects/no-status.md", None, &|r| r.summary.updated_at = Some(now - Duration::days(99))),
        make("admin/due-on-line.md", None, &|r| r.due_date = Some(today + Duration::days(2))),
        make("admin/a-day-later.md", Some("pending"), &|r| r.due_date = Some(today + Duration::days(3))),
        make("admin/done.md", Some("done"), &|r| r.due_date = Some(today - Duration::days(9))),
        make("admin/undated.md", None, &|_| {}),
        make("people/no-date.md", None, &|r| r.follow_ups = vec!["call".into()]),
        make("people/by-update.md", None, &|r| {
            r.follow_ups = vec!["call".into()];
            r.summary.updated_at = Some(now - Duration::days(7));
        }),
        make("people/touched-lately.md", None, &|r| {
            r.follow_ups = vec!["call".into()];
            r.last_touched = Some(today - Duration::days(6));
            r.summary.updated_at = Some(now - Duration::days(60));
        }),
        make("people/nothing-to-do.md", None, &|r| r.last_touched = Some(today - Duration::days(60))),
        make("inbox/no-created.md", None, &|r| r.summary.updated_at = Some(now - Duration::days(60))),
        make("inbox/on-line.md", None, &|r| r.created_at = Some(now - Duration::days(3))),
    ];
    let nudges = evaluate(refs(&records), today, now, s, &Snoozes::new());
    let keys: Vec<&str> = nudges.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "admin_due:admin/due-on-line.md",
            "follow_up:people/by-update.md",
            "stale_project:projects/on-line.md",
            "inbox_waiting:inbox/on-line.md",
            "no_capture",
        ]
    );
    let candidates = DigestOrders::of(&records).nudge_candidates(today, now, s).records;
    assert_eq!(candidates.len(), 4);
    // A capture exactly `quiet_days` ago is not a capture made lately; a second later is.
    let lately =
        make("ideas/x.md", None, &|r| r.created_at = Some(now - Duration::days(3) + Duration::seconds(1)));
    let with = [records.clone(), vec![lately]].concat();
    assert!(
        !evaluate(refs(&with), today, now, s, &Snoozes::new()).iter().any(|n| n.rule == NudgeRule::NoCapture)
    );
    assert_eq!(DigestOrders::of(&with).nudge_candidates(today, now, s).records.len(), 5);
}

/// Settings of more days than the calendar holds draw their lines past every date instead
/// of panicking.
#[test]
fn settings_beyond_the_calendar_do_not_panic() {
    let now = instant(0, 0);
    let today = now.date_naive();
    let huge = NudgeSettings {
        stale_days: u32::MAX,
        due_within_days: u32::MAX,
        follow_up_days: u32::MAX,
        inbox_days: u32::MAX,
        quiet_days: u32::MAX,
    };
    let admin = Arc::new(CatalogueEntry {
        summary: EntrySummary {
            path: EntryPath::parse("admin/far.md").unwrap(),
            category: Category::Admin,
            name: "Far".into(),
            status: None,
            updated_at: None,
            summary: String::new(),
        },
        created_at: Some(DateTime::<Utc>::MIN_UTC),
        due_date: Some(NaiveDate::MAX),
        next_action: None,
        follow_ups: Vec::new(),
        last_touched: None,
        tags: Vec::new(),
        suggested_category: None,
        aliases: Vec::new(),
    });
    let records = vec![admin];
    let nudges = evaluate(refs(&records), today, now, huge, &Snoozes::new());
    let keys: Vec<&str> = nudges.iter().map(|n| n.key.as_str()).collect();
    assert_eq!(keys, ["admin_due:admin/far.md"]);
    assert_eq!(DigestOrders::of(&records).nudge_candidates(today, now, huge).records.len(), 1);
}
