//! When kb sends its digests on its own: the daily digest at a time of day and the weekly
//! review on a day of the week, in the person's time zone. Pure: the instants a schedule
//! falls on, for any `chrono` time zone, across daylight-saving changes.

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};

/// Which digest a schedule sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScheduleKind {
    /// The daily digest.
    Daily,
    /// The weekly review.
    Weekly,
}

impl ScheduleKind {
    /// `daily` or `weekly` (the digest type, and the schedule's name in the database).
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::Daily => "daily",
            ScheduleKind::Weekly => "weekly",
        }
    }
}

/// A schedule: every day at `time`, or every `weekday` at `time`, local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// What it sends.
    pub kind: ScheduleKind,
    /// The day of the week (weekly schedules only).
    pub weekday: Option<Weekday>,
    /// The local time of day.
    pub time: NaiveTime,
}

/// A schedule setting that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{setting}: {problem} (got {given:?})")]
pub struct ScheduleError {
    /// The setting (`KB_DAILY_DIGEST_AT`, …).
    pub setting: &'static str,
    /// What was given.
    pub given: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// How far a slot is looked for: more than a week, so a weekly slot is always found.
const SEARCH_DAYS: i64 = 8;

impl Schedule {
    /// The daily schedule of `text`: a time `HH:MM`, or `off` (`None`).
    pub fn daily(setting: &'static str, text: &str) -> Result<Option<Schedule>, ScheduleError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let time = parse_time(text).ok_or_else(|| ScheduleError {
            setting,
            given: text.to_string(),
            problem: "expected a time such as 07:00, or off",
        })?;
        Ok(Some(Schedule { kind: ScheduleKind::Daily, weekday: None, time }))
    }

    /// The weekly schedule of `text`: a day and a time (`sunday 16:00`, `Sun 16:00`), or
    /// `off` (`None`).
    pub fn weekly(setting: &'static str, text: &str) -> Result<Option<Schedule>, ScheduleError> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(None);
        }
        let problem = || ScheduleError {
            setting,
            given: text.to_string(),
            problem: "expected a day and a time such as sunday 16:00, or off",
        };
        let (day, time) = text.split_once(char::is_whitespace).ok_or_else(problem)?;
        let weekday = day.trim().parse::<Weekday>().map_err(|_| problem())?;
        let time = parse_time(time.trim()).ok_or_else(problem)?;
        Ok(Some(Schedule { kind: ScheduleKind::Weekly, weekday: Some(weekday), time }))
    }

    /// The instant this schedule falls on, on local `date` in `zone`, if it falls on that
    /// date. A time skipped by a change to summer time falls an hour later; a time that
    /// happens twice (back to winter time) falls on the first.
    pub fn slot_on<Z: TimeZone>(&self, date: NaiveDate, zone: &Z) -> Option<DateTime<Utc>> {
        if self.weekday.is_some_and(|day| date.weekday() != day) {
            return None;
        }
        let local = date.and_time(self.time);
        let resolved = match zone.from_local_datetime(&local) {
            LocalResult::Single(at) => Some(at),
            LocalResult::Ambiguous(first, _) => Some(first),
            LocalResult::None => zone.from_local_datetime(&(local + Duration::hours(1))).earliest(),
        };
        resolved.map(|at| at.with_timezone(&Utc))
    }

    /// The latest instant of this schedule at or before `now`.
    pub fn latest_slot<Z: TimeZone>(&self, now: DateTime<Utc>, zone: &Z) -> Option<DateTime<Utc>> {
        let today = now.with_timezone(zone).date_naive();
        (0..=SEARCH_DAYS)
            .filter_map(|back| today.checked_sub_signed(Duration::days(back)))
            .filter_map(|date| self.slot_on(date, zone))
            .find(|slot| *slot <= now)
    }

    /// The first instant of this schedule after `now`.
    pub fn next_slot<Z: TimeZone>(&self, now: DateTime<Utc>, zone: &Z) -> Option<DateTime<Utc>> {
        let today = now.with_timezone(zone).date_naive();
        (-1..=SEARCH_DAYS)
            .filter_map(|ahead| today.checked_add_signed(Duration::days(ahead)))
            .filter_map(|date| self.slot_on(date, zone))
            .find(|slot| *slot > now)
    }
}

fn parse_time(text: &str) -> Option<NaiveTime> {
    NaiveTime::parse_from_str(text, "%H:%M").ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn settings_are_read_or_refused_clearly() {
        let daily = Schedule::daily("KB_DAILY_DIGEST_AT", "07:00").ok().flatten();
        assert_eq!(daily.map(|s| s.time), NaiveTime::from_hms_opt(7, 0, 0));
        assert_eq!(Schedule::daily("KB_DAILY_DIGEST_AT", "OFF"), Ok(None));
        let weekly = Schedule::weekly("KB_WEEKLY_REVIEW_AT", "Sunday 16:00").ok().flatten();
        assert_eq!(weekly.and_then(|s| s.weekday), Some(Weekday::Sun));
        assert!(Schedule::weekly("KB_WEEKLY_REVIEW_AT", "sun 16:00").is_ok_and(|s| s.is_some()));
        for bad in ["7am", "25:00", "", "07:00:00"] {
            let error =
                Schedule::daily("KB_DAILY_DIGEST_AT", bad).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(error.starts_with("KB_DAILY_DIGEST_AT: expected a time"), "{bad}: {error}");
        }
        for bad in ["16:00", "someday 16:00", "sunday", "sunday noon"] {
            assert!(Schedule::weekly("KB_WEEKLY_REVIEW_AT", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slots_fall_on_local_time() {
        let paris_winter = FixedOffset::east_opt(3600)
            .unwrap_or_else(|| FixedOffset::west_opt(0).unwrap_or_else(|| unreachable!()));
        let daily = Schedule {
            kind: ScheduleKind::Daily,
            weekday: None,
            time: NaiveTime::from_hms_opt(7, 0, 0).unwrap_or_default(),
        };
        assert_eq!(
            daily.latest_slot(at("2026-11-23T06:59:00Z"), &paris_winter),
            Some(at("2026-11-23T06:00:00Z"))
        );
        assert_eq!(
            daily.latest_slot(at("2026-11-23T05:59:00Z"), &paris_winter),
            Some(at("2026-11-22T06:00:00Z"))
        );
        assert_eq!(
            daily.next_slot(at("2026-11-23T06:00:00Z"), &paris_winter),
            Some(at("2026-11-24T06:00:00Z"))
        );
        let weekly = Schedule {
            kind: ScheduleKind::Weekly,
            weekday: Some(Weekday::Sun),
            time: NaiveTime::from_hms_opt(16, 0, 0).unwrap_or_default(),
        };
        // 2026-11-23 is a Monday: the latest Sunday 16:00 is the day before.
        assert_eq!(
            weekly.latest_slot(at("2026-11-23T12:00:00Z"), &paris_winter),
            Some(at("2026-11-22T15:00:00Z"))
        );
        assert_eq!(
            weekly.next_slot(at("2026-11-23T12:00:00Z"), &paris_winter),
            Some(at("2026-11-29T15:00:00Z"))
        );
    }
}
