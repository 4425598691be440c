//! The index schema: which fields an entry becomes, how each is indexed, and the version
//! number that tells an index built by an older kb apart (it is then rebuilt).
//!
//! Every searchable text goes into one `all` field, tokenised by [`crate::analysis`] (case-
//! and accent-insensitive, with positions for quoted phrases): a query is a conjunction of
//! a few posting lists per word, so matching and the exact count stay fast at 100,000
//! entries. A name is put in `all` three times and tags twice, so BM25 weighs a match there
//! above one in the body. `stemmed` holds the same texts, each word reduced to its stem in
//! the vault's language; `names` holds the name and tags alone (and `names_stemmed` their
//! stems), for the bonus a match there earns and for completing a name as it is typed. Every text field
//! is stored (not indexed), so snippets are cut from the text that was indexed. `path`, `category` and
//! `status` are single raw terms (the unique key and the filters); `mtime` and `size` are
//! the content stamp of the file, kept as fast fields so a warm start reads them without
//! touching the stored documents. `lines` stores where the texts lie in the entry's file
//! (`document::StoredLines`), so a hit names the lines of its passage without
//! the file being read.

use kb_domain::fields::keys;
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};

use crate::analysis::{ANALYZER_NAME, STEMMED_ANALYZER_NAME};

/// The version of the schema, analysis and file format. An index whose meta file names
/// another version is rebuilt from the vault. Bump it whenever the schema, the analyzer,
/// what goes into a field or how tantivy writes it changes (5: string dictionaries are no
/// longer compressed with zstd, which this build cannot read; 6: `lines`, where each text
/// lies in the file; 7: an accent written as a character of its own stays in its word, and
/// accents after Latin, Greek, Cyrillic, Hebrew and Arabic letters are left out however they
/// were written).
pub const SCHEMA_VERSION: u32 = 7;

/// A searchable text field of an entry, in the order used to break ties when choosing the
/// field that matched best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextField {
    /// `name` (or the file name when the frontmatter has none).
    Name,
    /// `tags`, joined by `, `.
    Tags,
    /// An idea's `one_liner`.
    OneLiner,
    /// A project's `next_action`.
    NextAction,
    /// A person's `context`.
    Context,
    /// An inbox entry's `original_text`.
    OriginalText,
    /// The markdown body (called `content` in tool results, as `get_entry` names it).
    Body,
}

impl TextField {
    /// Every searchable field, best first.
    pub const ALL: [TextField; 7] = [
        TextField::Name,
        TextField::Tags,
        TextField::OneLiner,
        TextField::NextAction,
        TextField::Context,
        TextField::OriginalText,
        TextField::Body,
    ];

    /// The name shown as a hit's `matchedField` (the frontmatter key, `content` for the body).
    pub fn label(self) -> &'static str {
        match self {
            TextField::Name => keys::NAME,
            TextField::Tags => keys::TAGS,
            TextField::OneLiner => keys::ONE_LINER,
            TextField::NextAction => keys::NEXT_ACTION,
            TextField::Context => keys::CONTEXT,
            TextField::OriginalText => keys::ORIGINAL_TEXT,
            TextField::Body => "content",
        }
    }

    /// The tantivy field name.
    fn schema_name(self) -> &'static str {
        match self {
            TextField::Body => "body",
            other => other.label(),
        }
    }

    /// Whether the text is a name or tags: a match there earns the name bonus.
    pub(crate) fn is_name(self) -> bool {
        matches!(self, TextField::Name | TextField::Tags)
    }

    /// How many times the text goes into `all`: its weight in BM25's term frequency.
    pub(crate) fn weight(self) -> usize {
        match self {
            TextField::Name => 3,
            TextField::Tags => 2,
            _ => 1,
        }
    }
}

/// Handles of the fields of the schema.
#[derive(Debug, Clone)]
pub(crate) struct IndexFields {
    /// The vault-relative path: stored, a raw term (the unique key), fast (warm start).
    pub path: Field,
    /// The category folder: a raw term (filter), stored.
    pub category: Field,
    /// The status, when the entry has one: a raw term (filter), stored.
    pub status: Field,
    /// `updated_at`, when valid: stored, fast.
    pub updated_at: Field,
    /// Modification time of the file, nanoseconds since the epoch: fast.
    pub mtime: Field,
    /// Size of the file in bytes: fast.
    pub size: Field,
    /// Every searchable text of the entry: indexed with positions, not stored.
    pub all: Field,
    /// Every searchable text, stemmed: indexed, not stored.
    pub stemmed: Field,
    /// The name and the tags: indexed, not stored.
    pub names: Field,
    /// The name and the tags, stemmed: indexed, not stored.
    pub names_stemmed: Field,
    /// Where the texts lie among the file's lines: stored numbers, not indexed.
    pub lines: Field,
    text: [Field; 7],
}

impl IndexFields {
    /// Every searchable field with its tantivy handle.
    pub fn texts(&self) -> impl Iterator<Item = (TextField, Field)> + '_ {
        TextField::ALL.into_iter().zip(self.text)
    }

    /// Looks the fields up in a schema (one built by [`build_schema`]).
    pub fn from_schema(schema: &Schema) -> tantivy::Result<IndexFields> {
        let get = |name: &str| schema.get_field(name);
        let mut text = [Field::from_field_id(0); 7];
        for (slot, field) in text.iter_mut().zip(TextField::ALL) {
            *slot = get(field.schema_name())?;
        }
        Ok(IndexFields {
            path: get("path")?,
            category: get("category")?,
            status: get("status")?,
            updated_at: get(UPDATED_AT_FIELD)?,
            mtime: get("mtime")?,
            size: get("size")?,
            all: get(ALL_FIELD)?,
            stemmed: get(STEMMED_FIELD)?,
            names: get(NAMES_FIELD)?,
            names_stemmed: get(NAMES_STEMMED_FIELD)?,
            lines: get(LINES_FIELD)?,
            text,
        })
    }
}

/// The field names of the content stamp and the key, as fast-field readers name them.
pub(crate) const PATH_FIELD: &str = "path";
/// See [`PATH_FIELD`].
pub(crate) const MTIME_FIELD: &str = "mtime";
/// See [`PATH_FIELD`].
pub(crate) const SIZE_FIELD: &str = "size";
/// See [`PATH_FIELD`]: `updated_at`, for ranking the newer of equal hits first.
pub(crate) const UPDATED_AT_FIELD: &str = "updated_at";
/// The field holding every searchable text.
const ALL_FIELD: &str = "all";
/// The field holding the stemmed texts.
const STEMMED_FIELD: &str = "stemmed";
/// The field holding names and tags.
const NAMES_FIELD: &str = "names";
/// The field holding the stems of names and tags.
const NAMES_STEMMED_FIELD: &str = "names_stemmed";
/// The field holding where the texts lie among the file's lines.
const LINES_FIELD: &str = "lines";

/// The schema of kb's index.
pub(crate) fn build_schema() -> Schema {
    let mut builder = Schema::builder();
    builder.add_text_field(PATH_FIELD, STRING | STORED | FAST);
    builder.add_text_field("category", STRING | STORED);
    builder.add_text_field("status", STRING | STORED);
    builder.add_date_field(UPDATED_AT_FIELD, STORED | FAST);
    builder.add_i64_field(MTIME_FIELD, FAST);
    builder.add_u64_field(SIZE_FIELD, FAST);
    let indexed = |tokenizer: &str, record: IndexRecordOption| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record),
        )
    };
    builder.add_text_field(ALL_FIELD, indexed(ANALYZER_NAME, IndexRecordOption::WithFreqsAndPositions));
    builder.add_text_field(STEMMED_FIELD, indexed(STEMMED_ANALYZER_NAME, IndexRecordOption::WithFreqs));
    builder.add_text_field(NAMES_FIELD, indexed(ANALYZER_NAME, IndexRecordOption::WithFreqs));
    builder.add_text_field(NAMES_STEMMED_FIELD, indexed(STEMMED_ANALYZER_NAME, IndexRecordOption::WithFreqs));
    for field in TextField::ALL {
        builder.add_text_field(field.schema_name(), TextOptions::default().set_stored());
    }
    builder.add_u64_field(LINES_FIELD, STORED);
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_through_the_schema() {
        let schema = build_schema();
        let fields = IndexFields::from_schema(&schema).unwrap();
        for (kind, field) in fields.texts() {
            assert_eq!(schema.get_field_name(field), kind.schema_name());
        }
        assert_eq!(TextField::Body.label(), "content");
    }
}
