//! The time port: [`Clock`], with the system clock and a fixed one.

use chrono::{DateTime, Utc};

/// The time.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;

    /// Today's date where the person is (UTC unless the clock knows their time zone).
    fn today(&self) -> chrono::NaiveDate {
        self.now().date_naive()
    }
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that always says the same time (tests, reproducible runs).
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub DateTime<Utc>);

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}
