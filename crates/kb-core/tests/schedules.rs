#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The schedules driven by a clock the test controls: two weeks of ten-minute steps in
//! Europe/Paris, across the end of summer time, with two kb processes on one vault and a
//! restart that misses a 07:00. Exactly one daily digest per day, one weekly review per
//! week, each at its local time; the missed one runs once; the two processes never both
//! send.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Duration, NaiveDate, Timelike, Utc};
use chrono_tz::Europe::Paris;
use kb_core::{Assistant, Config};

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
}

async fn open(dir: &std::path::Path) -> Arc<Assistant> {
    let config = Config { time_zone: Some("Europe/Paris".into()), ..Config::offline(dir) };
    Arc::new(Assistant::open(config).await.unwrap())
}

/// Who sent what, at which simulated moment.
#[derive(Default)]
struct Sent {
    /// (local date, kind) → the moments a digest of that kind was written that day.
    runs: BTreeMap<(NaiveDate, &'static str), Vec<DateTime<Utc>>>,
}

impl Sent {
    async fn tick(&mut self, kb: &Arc<Assistant>, now: DateTime<Utc>) {
        let written = kb.run_schedules(now).await.unwrap();
        if written.is_empty() {
            return;
        }
        let digests = kb.outreach().digests(written.len()).await.unwrap();
        for digest in digests.iter().filter(|d| written.contains(&d.id)) {
            let kind = if digest.kind == "weekly" { "weekly" } else { "daily" };
            self.runs.entry((now.with_timezone(&Paris).date_naive(), kind)).or_default().push(now);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_weeks_of_schedules_send_once_each_at_local_time_across_dst_and_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path()).await;
    let mut second = open(dir.path()).await;
    let mut sent = Sent::default();

    // Sunday 2026-10-18, midnight in Paris; summer time ends on 2026-10-25.
    let start = at("2026-10-17T22:00:00Z");
    let end = start + Duration::days(14);
    // On 2026-10-28 kb is down from 05:00 to 09:30 local: its 07:00 is missed.
    let down_from = at("2026-10-28T04:00:00Z");
    let down_until = at("2026-10-28T08:30:00Z");
    let step = Duration::minutes(10);
    let mut now = start;
    let mut restarted = false;
    while now < end {
        let kb_down = now >= down_from && now < down_until;
        if now >= down_until && !restarted {
            // kb comes back: a new process on the same vault and database.
            second = open(dir.path()).await;
            restarted = true;
        }
        // The two processes look at the clock in turn, in either order; while kb is down
        // (the second process restarting, the first stopped too), nobody does.
        if !kb_down {
            if now.minute().is_multiple_of(20) {
                sent.tick(&first, now).await;
                sent.tick(&second, now).await;
            } else {
                sent.tick(&second, now).await;
                sent.tick(&first, now).await;
            }
        }
        now += step;
    }
    assert!(restarted);

    let days: Vec<NaiveDate> =
        (0..14).map(|d| NaiveDate::from_ymd_opt(2026, 10, 18).unwrap() + Duration::days(d)).collect();
    for day in &days {
        let daily = sent.runs.get(&(*day, "daily")).cloned().unwrap_or_default();
        assert_eq!(daily.len(), 1, "{day}: {daily:?}");
        let local = daily[0].with_timezone(&Paris);
        if *day == NaiveDate::from_ymd_opt(2026, 10, 28).unwrap() {
            // Missed while down: sent once, at the restart.
            assert_eq!((local.hour(), local.minute()), (9, 30), "{local}");
        } else {
            assert_eq!((local.hour(), local.minute()), (7, 0), "{day}: sent at {local}");
        }
    }
    // The same 07:00 local is 05:00 UTC in summer time and 06:00 UTC after it.
    let utc_hour =
        |day: u32| sent.runs[&(NaiveDate::from_ymd_opt(2026, 10, day).unwrap(), "daily")][0].hour();
    assert_eq!((utc_hour(24), utc_hour(26)), (5, 6));

    let weekly: Vec<_> = sent.runs.iter().filter(|((_, kind), _)| *kind == "weekly").collect();
    assert_eq!(weekly.len(), 2, "{weekly:?}");
    for ((day, _), moments) in weekly {
        assert_eq!(moments.len(), 1);
        assert_eq!(day.format("%a").to_string(), "Sun");
        let local = moments[0].with_timezone(&Paris);
        assert_eq!((local.hour(), local.minute()), (16, 0), "{local}");
    }
    // Nothing before the first start was "missed": the first tick only noted the slots.
    assert!(!sent.runs.contains_key(&(NaiveDate::from_ymd_opt(2026, 10, 17).unwrap(), "daily")));
    let kept = first.outreach().digests(100).await.unwrap();
    assert_eq!(kept.len(), 16, "14 daily digests and 2 weekly reviews kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_set_off_never_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config { time_zone: Some("Europe/Paris".into()), ..Config::offline(dir.path()) };
    config.outreach.daily = None;
    config.outreach.weekly = None;
    let kb = Arc::new(Assistant::open(config).await.unwrap());
    let mut now = at("2026-10-17T22:00:00Z");
    for _ in 0..(3 * 24) {
        assert!(kb.run_schedules(now).await.unwrap().is_empty());
        now += Duration::hours(1);
    }
    assert!(kb.outreach().status().await.next_runs.is_empty());
}
