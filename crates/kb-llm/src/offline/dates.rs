//! Dates in plain English ("Dec 15", "2026-12-15", "tomorrow", "by Friday"), resolved
//! against today's date.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

const MONTHS: &[(&str, u32)] = &[
    ("jan", 1),
    ("january", 1),
    ("feb", 2),
    ("february", 2),
    ("mar", 3),
    ("march", 3),
    ("apr", 4),
    ("april", 4),
    ("may", 5),
    ("jun", 6),
    ("june", 6),
    ("jul", 7),
    ("july", 7),
    ("aug", 8),
    ("august", 8),
    ("sep", 9),
    ("sept", 9),
    ("september", 9),
    ("oct", 10),
    ("october", 10),
    ("nov", 11),
    ("november", 11),
    ("dec", 12),
    ("december", 12),
];

const WEEKDAYS: &[(&str, Weekday)] = &[
    ("monday", Weekday::Mon),
    ("mon", Weekday::Mon),
    ("tuesday", Weekday::Tue),
    ("tue", Weekday::Tue),
    ("wednesday", Weekday::Wed),
    ("wed", Weekday::Wed),
    ("thursday", Weekday::Thu),
    ("thu", Weekday::Thu),
    ("friday", Weekday::Fri),
    ("fri", Weekday::Fri),
    ("saturday", Weekday::Sat),
    ("sat", Weekday::Sat),
    ("sunday", Weekday::Sun),
    ("sun", Weekday::Sun),
];

fn iso_date(word: &str) -> Option<NaiveDate> {
    if word.len() != 10 {
        return None;
    }
    NaiveDate::parse_from_str(word, "%Y-%m-%d").ok()
}

fn month(word: &str) -> Option<u32> {
    MONTHS.iter().find(|(w, _)| *w == word).map(|(_, m)| *m)
}

fn weekday(word: &str) -> Option<Weekday> {
    WEEKDAYS.iter().find(|(w, _)| *w == word).map(|(_, d)| *d)
}

fn day_of_month(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn year(word: Option<&String>) -> Option<i32> {
    let word = word?;
    if word.len() == 4 { word.parse().ok().filter(|y| (1900..=2200).contains(y)) } else { None }
}

fn small_number(word: &str) -> Option<i64> {
    match word {
        "a" | "an" | "one" => Some(1),
        "two" => Some(2),
        "three" => Some(3),
        "four" => Some(4),
        "five" => Some(5),
        _ => word.parse().ok().filter(|n| (1..=365).contains(n)),
    }
}

/// A month and day without a year: this year's, or next year's once it has passed.
fn upcoming(today: NaiveDate, month: u32, day: u32, year: Option<i32>) -> Option<NaiveDate> {
    if let Some(year) = year {
        return NaiveDate::from_ymd_opt(year, month, day);
    }
    let this_year = NaiveDate::from_ymd_opt(today.year(), month, day)?;
    if this_year >= today { Some(this_year) } else { NaiveDate::from_ymd_opt(today.year() + 1, month, day) }
}

fn next_weekday(today: NaiveDate, day: Weekday) -> NaiveDate {
    let ahead = (7 + day.num_days_from_monday() as i64 - today.weekday().num_days_from_monday() as i64) % 7;
    today + Duration::days(if ahead == 0 { 7 } else { ahead })
}

/// The first date named in `words` (lowercase, punctuation stripped), with the index of
/// the word where it starts.
pub fn find_date(words: &[String], today: NaiveDate) -> Option<(NaiveDate, usize)> {
    (0..words.len()).find_map(|i| date_at(words, i, today).map(|d| (d, i)))
}

fn date_at(words: &[String], i: usize, today: NaiveDate) -> Option<NaiveDate> {
    let word = words[i].as_str();
    let next = words.get(i + 1).map(String::as_str);
    if let Some(date) = iso_date(word) {
        return Some(date);
    }
    match word {
        "today" | "tonight" => return Some(today),
        "tomorrow" => return Some(today + Duration::days(1)),
        "next" if next == Some("week") => return Some(today + Duration::days(7)),
        "in" => {
            let n = next.and_then(small_number)?;
            return match words.get(i + 2).map(String::as_str) {
                Some("day" | "days") => Some(today + Duration::days(n)),
                Some("week" | "weeks") => Some(today + Duration::days(7 * n)),
                _ => None,
            };
        }
        _ => {}
    }
    if let Some(m) = month(word) {
        let day = next.and_then(day_of_month)?;
        return upcoming(today, m, day, year(words.get(i + 2)));
    }
    if let Some(day) = day_of_month(word) {
        let m = next.and_then(month)?;
        return upcoming(today, m, day, year(words.get(i + 2)));
    }
    weekday(word).map(|d| next_weekday(today, d))
}

/// Whether `word` is part of how dates are written (used to cut dates out of titles).
pub fn is_date_word(word: &str) -> bool {
    iso_date(word).is_some()
        || month(word).is_some_and(|_| word != "may" && word != "mar")
        || weekday(word).is_some_and(|_| word.len() > 3)
        || matches!(word, "today" | "tonight" | "tomorrow")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn reads_the_usual_ways_of_writing_a_date() {
        let today = day(2026, 11, 21); // a Saturday
        let cases = [
            ("renew passport by dec 15", day(2026, 12, 15)),
            ("due 2027-01-03", day(2027, 1, 3)),
            ("pay rent tomorrow", day(2026, 11, 22)),
            ("taxes by 15th april", day(2027, 4, 15)),
            ("call the bank on friday", day(2026, 11, 27)),
            ("dentist in 3 days", day(2026, 11, 24)),
            ("visa by march 1 2028", day(2028, 3, 1)),
            ("review next week", day(2026, 11, 28)),
        ];
        for (text, expected) in cases {
            assert_eq!(find_date(&words(text), today).map(|(d, _)| d), Some(expected), "{text}");
        }
        assert_eq!(find_date(&words("i may go"), today), None);
        assert_eq!(find_date(&words("met priya"), today), None);
    }
}
