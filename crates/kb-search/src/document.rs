//! How an entry becomes an index document, and how a stored document gives back the texts
//! a snippet is cut from.

use kb_domain::fields::keys;
use kb_domain::{Entry, Stamp};
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

/// The document indexed for `entry`, read from a file with `stamp`.
pub(crate) fn to_document(fields: &IndexFields, entry: &Entry, stamp: Stamp) -> TantivyDocument {
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
}

impl StoredHit {
    /// Reads the stored fields back.
    pub fn from_document(fields: &IndexFields, doc: &TantivyDocument) -> StoredHit {
        let text_of = |field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        StoredHit {
            path: text_of(fields.path),
            texts: fields.texts().map(|(kind, field)| (kind, text_of(field))).collect(),
        }
    }

    /// The entry's name as indexed.
    pub fn name(&self) -> &str {
        self.texts.iter().find(|(k, _)| *k == TextField::Name).map_or("", |(_, t)| t.as_str())
    }
}
