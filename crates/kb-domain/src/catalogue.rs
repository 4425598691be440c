//! [`CatalogueEntry`]: what kb keeps in memory of each entry — its summary and the few
//! fields digests read — so that lists, digests and the system prompt are answered
//! without reading any file.

use chrono::{DateTime, NaiveDate, Utc};

use crate::category::Category;
use crate::entry::{Entry, EntrySummary};
use crate::fields::{keys, parse_date, parse_timestamp, statuses};

/// One entry as the catalogue knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogueEntry {
    /// What lists show of it (path, category, name, status, `updated_at`, one line).
    pub summary: EntrySummary,
    /// Its `created_at`, when it is a valid timestamp.
    pub created_at: Option<DateTime<Utc>>,
    /// Its `due_date`, when it is a valid date.
    pub due_date: Option<NaiveDate>,
    /// Its `next_action`, when it is non-blank text (trimmed).
    pub next_action: Option<String>,
    /// Its `follow_ups`, the non-blank ones, trimmed.
    pub follow_ups: Vec<String>,
    /// Its `last_touched`, when it is a valid date.
    pub last_touched: Option<NaiveDate>,
    /// Its tags.
    pub tags: Vec<String>,
    /// Its `suggested_category` (inbox entries), when there is one.
    pub suggested_category: Option<String>,
    /// Its `aliases`: other names it goes by (non-blank, trimmed).
    pub aliases: Vec<String>,
}

impl CatalogueEntry {
    /// The catalogue's record of `entry`.
    pub fn of(entry: &Entry) -> CatalogueEntry {
        let fm = &entry.frontmatter;
        let text = |key: &str| fm.get_str(key).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        CatalogueEntry {
            summary: entry.summary(),
            created_at: fm.get_str(keys::CREATED_AT).and_then(parse_timestamp),
            due_date: fm.get_str(keys::DUE_DATE).and_then(parse_date),
            next_action: text(keys::NEXT_ACTION),
            follow_ups: fm
                .get_str_list(keys::FOLLOW_UPS)
                .into_iter()
                .map(|f| f.trim().to_string())
                .filter(|f| !f.is_empty())
                .collect(),
            last_touched: fm.get_str(keys::LAST_TOUCHED).and_then(parse_date),
            tags: entry.tags(),
            suggested_category: text(keys::SUGGESTED_CATEGORY),
            aliases: fm
                .get_str_list(keys::ALIASES)
                .into_iter()
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect(),
        }
    }

    /// Its category.
    pub fn category(&self) -> Category {
        self.summary.category
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.summary.name
    }

    /// Its status, when it has one.
    pub fn status(&self) -> Option<&str> {
        self.summary.status.as_deref()
    }

    /// When it last changed, when known.
    pub fn updated_at(&self) -> Option<DateTime<Utc>> {
        self.summary.updated_at
    }

    /// Whether its status is `done`.
    pub fn is_done(&self) -> bool {
        self.status() == Some(statuses::DONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::EntryPath;

    #[test]
    fn reads_the_fields_digests_need() {
        let text = "---\nname: Shed roof\nstatus: active\nnext_action: '  buy felt '\ndue_date: 2026-12-01\n\
                    created_at: 2026-11-01T10:00:00Z\nupdated_at: 2026-11-02T10:00:00Z\nfollow_ups: ['', ' call ']\n\
                    tags: [home]\n---\nbody\n";
        let entry = Entry::from_document(EntryPath::parse("projects/shed-roof.md").unwrap(), text).unwrap();
        let got = CatalogueEntry::of(&entry);
        assert_eq!(got.name(), "Shed roof");
        assert_eq!(got.status(), Some("active"));
        assert_eq!(got.next_action.as_deref(), Some("buy felt"));
        assert_eq!(got.due_date, NaiveDate::from_ymd_opt(2026, 12, 1));
        assert_eq!(got.follow_ups, ["call"]);
        assert_eq!(got.tags, ["home"]);
        assert!(got.created_at.is_some() && got.updated_at().is_some());
        assert!(got.last_touched.is_none() && got.suggested_category.is_none());
        assert!(!got.is_done());
    }

    #[test]
    fn malformed_values_are_absent_not_errors() {
        let text = "---\ndue_date: soon\ncreated_at: 12\nnext_action: '   '\n---\n";
        let entry = Entry::from_document(EntryPath::parse("admin/x.md").unwrap(), text).unwrap();
        let got = CatalogueEntry::of(&entry);
        assert!(got.due_date.is_none() && got.created_at.is_none() && got.next_action.is_none());
        assert_eq!(got.name(), "x");
    }
}
