//! How an entry becomes an index document, and how a stored document gives back the texts
//! a snippet is cut from and where they lie in the entry's file.

use kb_domain::fields::keys;
use kb_domain::{Entry, EntryLines, LineRange, Stamp};
use serde_json::Value as JsonValue;
use tantivy::schema::{OwnedValue, Schema, Value};
use tantivy::{DateTime, TantivyDocument};

use crate::schema::{IndexFields, TextField};

/// The text of one searchable field of an entry (empty when the entry has none).
pub fn field_text(entry: &Entry, field: TextField) -> String {
    let fm = &entry.frontmatter;
    let text = |key: &str| fm.get_str(key).unwrap_or_default().to_string();
    match field {
        TextField::Name => entry.name(),
        TextField::Tags => entry.tags().join(", "),
        TextField::OneLiner => text(keys::ONE_LINER),
        TextField::NextAction => text(keys::NEXT_ACTION),
        TextField::Context => text(keys::CONTEXT),
        TextField::OriginalText => text(keys::ORIGINAL_TEXT),
        TextField::Body => entry.body.clone(),
    }
}

/// The document indexed for `entry`, read from a file with `stamp` whose lines are laid
/// out as `lines` says.
pub(crate) fn to_document(
    fields: &IndexFields,
    entry: &Entry,
    stamp: Stamp,
    lines: &EntryLines,
) -> TantivyDocument {
    let mut doc = TantivyDocument::new();
    doc.add_text(fields.path, entry.path.to_string());
    doc.add_text(fields.category, entry.category().as_str());
    if let Some(status) = entry.status() {
        doc.add_text(fields.status, status);
    }
    if let Some(at) = entry.updated_at() {
        doc.add_date(fields.updated_at, DateTime::from_timestamp_secs(at.timestamp()));
    }
    doc.add_i64(fields.mtime, stamp.mtime_ns);
    doc.add_u64(fields.size, stamp.size);
    for (kind, field) in fields.texts() {
        let text = field_text(entry, kind);
        if !text.is_empty() {
            for _ in 0..kind.weight() {
                doc.add_text(fields.all, &text);
                doc.add_text(fields.stemmed, &text);
            }
            if kind.is_name() {
                doc.add_text(fields.names, &text);
                doc.add_text(fields.names_stemmed, &text);
            }
            doc.add_text(field, text);
        }
    }
    for value in StoredLines::of(entry, lines).to_values() {
        doc.add_u64(fields.lines, value);
    }
    doc
}

/// Whether `stored`, a document read back from the index, stores the same values as
/// `fresh`, one made by [`to_document`]: then the index holds what `fresh` would index, as
/// every indexed text is also stored.
pub(crate) fn same_stored(schema: &Schema, stored: &TantivyDocument, fresh: &TantivyDocument) -> bool {
    let values = |doc: &TantivyDocument, field| doc.get_all(field).map(OwnedValue::from).collect::<Vec<_>>();
    schema
        .fields()
        .filter(|(_, entry)| entry.is_stored())
        .all(|(field, _)| values(stored, field) == values(fresh, field))
}

/// What a search hit needs from a stored document.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredHit {
    /// The vault-relative path.
    pub path: String,
    /// The searchable texts, in [`TextField::ALL`] order.
    pub texts: Vec<(TextField, String)>,
    /// Where they lie among the file's lines.
    pub lines: StoredLines,
}

impl StoredHit {
    /// Reads the stored fields back.
    pub fn from_document(fields: &IndexFields, doc: &TantivyDocument) -> StoredHit {
        let text_of = |field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        StoredHit {
            path: text_of(fields.path),
            texts: fields.texts().map(|(kind, field)| (kind, text_of(field))).collect(),
            lines: StoredLines::from_values(
                &doc.get_all(fields.lines).filter_map(|v| v.as_u64()).collect::<Vec<_>>(),
            ),
        }
    }

    /// The entry's name as indexed.
    pub fn name(&self) -> &str {
        self.texts.iter().find(|(k, _)| *k == TextField::Name).map_or("", |(_, t)| t.as_str())
    }
}

/// The frontmatter texts whose lines are stored, in [`TextField::ALL`] order.
const FIELDS_WITH_LINES: [TextField; 6] = [
    TextField::Name,
    TextField::Tags,
    TextField::OneLiner,
    TextField::NextAction,
    TextField::Context,
    TextField::OriginalText,
];

/// Where an entry's searchable texts lie among its file's lines, as the index stores them:
/// the line the notes begin on, and for each frontmatter text its key's lines (see
/// [`EntryLines`]). Stored as 13 numbers: the notes' first line, then the first and last
/// line of each of [`FIELDS_WITH_LINES`]; 0 where a line is not known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct StoredLines {
    /// The line the notes begin on.
    body_start: Option<u32>,
    /// The lines of each of [`FIELDS_WITH_LINES`].
    fields: [Option<LineRange>; 6],
}

impl StoredLines {
    /// The lines of `entry`'s texts in a file laid out as `lines` says. A text not written
    /// in the file (a name taken from the file name) has none; a key that is not on a line
    /// of its own (a frontmatter written as one flow map) has the frontmatter's lines.
    pub fn of(entry: &Entry, lines: &EntryLines) -> StoredLines {
        let fm = &entry.frontmatter;
        let written = |field: TextField| match field {
            TextField::Name => match fm.get(keys::NAME) {
                Some(JsonValue::String(name)) => !name.trim().is_empty(),
                Some(JsonValue::Number(_)) => true,
                _ => false,
            },
            other => !field_text(entry, other).is_empty(),
        };
        let fields = FIELDS_WITH_LINES.map(|field| {
            if !written(field) {
                return None;
            }
            lines.key(field.label()).or_else(|| lines.frontmatter())
        });
        StoredLines { body_start: lines.body_start(), fields }
    }

    /// The numbers stored.
    fn to_values(&self) -> [u64; 13] {
        let mut values = [0; 13];
        values[0] = self.body_start.map_or(0, u64::from);
        for (i, range) in self.fields.iter().enumerate() {
            if let Some(range) = range {
                values[1 + 2 * i] = u64::from(range.start());
                values[2 + 2 * i] = u64::from(range.end());
            }
        }
        values
    }

    /// Reads the numbers stored back; none known when they are not 13.
    fn from_values(values: &[u64]) -> StoredLines {
        if values.len() != 13 {
            return StoredLines::default();
        }
        let line = |value: u64| u32::try_from(value).ok().filter(|line| *line > 0);
        let mut fields = [None; 6];
        for (i, slot) in fields.iter_mut().enumerate() {
            *slot = match (line(values[1 + 2 * i]), line(values[2 + 2 * i])) {
                (Some(start), Some(end)) => LineRange::new(start, end),
                _ => None,
            };
        }
        StoredLines { body_start: line(values[0]), fields }
    }

    /// The lines of the frontmatter text `field` (never of the notes: see
    /// [`StoredLines::body_line`]).
    pub fn field(&self, field: TextField) -> Option<LineRange> {
        let i = FIELDS_WITH_LINES.iter().position(|f| *f == field)?;
        self.fields[i]
    }

    /// The file line of the notes' line `index` (from 0).
    pub fn body_line(&self, index: usize) -> Option<u32> {
        self.body_start?.checked_add(u32::try_from(index).ok()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::EntryPath;

    #[test]
    fn stored_lines_round_trip_and_a_name_from_the_file_has_none() {
        let text = "---\nname: Anna\ntags:\n  - family\n---\nNotes\n";
        let entry = Entry::from_document(EntryPath::parse("people/anna.md").unwrap(), text).unwrap();
        let lines = StoredLines::of(&entry, &EntryLines::of(text));
        assert_eq!(lines.field(TextField::Name), LineRange::line(2));
        assert_eq!(lines.field(TextField::Tags), LineRange::new(3, 4));
        assert_eq!(lines.field(TextField::Context), None);
        assert_eq!(lines.body_line(0), Some(6));
        assert_eq!(StoredLines::from_values(&lines.to_values()), lines);
        assert_eq!(StoredLines::from_values(&[1, 2]), StoredLines::default());
        let plain = Entry::from_document(EntryPath::parse("Journal/day.md").unwrap(), "Day\n").unwrap();
        let lines = StoredLines::of(&plain, &EntryLines::of("Day\n"));
        assert_eq!((lines.field(TextField::Name), lines.body_line(0)), (None, Some(1)));
    }
}
