//! The clock kb runs on: UTC time, and "today" in the person's time zone (`KB_TIMEZONE`,
//! else the machine's local zone), so due dates and digests follow their calendar.

use chrono::{DateTime, Local, NaiveDate, Utc};
use chrono_tz::Tz;
use kb_domain::Clock;

/// The system clock, with the person's time zone for dates.
#[derive(Debug, Clone, Copy)]
pub struct ZonedClock {
    zone: Option<Tz>,
}

impl ZonedClock {
    /// A clock whose dates are in `zone`, or in the machine's local zone when `None`.
    pub fn new(zone: Option<Tz>) -> ZonedClock {
        ZonedClock { zone }
    }
}

impl Clock for ZonedClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn today(&self) -> NaiveDate {
        let now = self.now();
        match self.zone {
            Some(zone) => now.with_timezone(&zone).date_naive(),
            None => now.with_timezone(&Local).date_naive(),
        }
    }
}

/// Parses an IANA time zone name (`Europe/Paris`, `America/Los_Angeles`, `UTC`).
pub fn parse_zone(name: &str) -> Option<Tz> {
    name.trim().parse::<Tz>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zones_parse_and_shift_the_date() {
        assert!(parse_zone("Europe/Paris").is_some());
        assert!(parse_zone("Mars/Olympus").is_none());
        let la = parse_zone("America/Los_Angeles").unwrap();
        let evening = DateTime::parse_from_rfc3339("2026-11-21T02:00:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(evening.with_timezone(&la).date_naive(), NaiveDate::from_ymd_opt(2026, 11, 20).unwrap());
        let clock = ZonedClock::new(Some(la));
        let utc_today = clock.now().date_naive();
        let diff = (utc_today - clock.today()).num_days();
        assert!((0..=1).contains(&diff), "{diff}");
    }
}
