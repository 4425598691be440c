//! kb's domain: what an entry, a category, a slug, a vault path and a conversation are;
//! the pure rules over them (exact edits, references kept true on a move, merges, names as
//! people say them, nudges, digest schedules, revisions); the value types spoken with a
//! language model; and the ports (traits) that adapters implement.
//!
//! This crate does no I/O and depends on no other kb crate: every other crate points
//! inward to it. Raw input becomes domain data only through validated constructors
//! ([`EntryPath::parse`], [`Slug::from_name`], [`Confidence::new`]); after that the type is
//! the proof.
//!
//! ```
//! use kb_domain::{Category, Entry, EntryPath, Slug};
//!
//! // A path from outside becomes a vault path only if it is `{category}/{file}.md`.
//! let path = EntryPath::parse("projects/garden-shed.md")?;
//! assert_eq!(path.category(), Category::Projects);
//! assert!(EntryPath::parse("../secrets.md").is_err());
//!
//! // The file name kb gives an entry it creates, from the entry's name.
//! let slug = Slug::from_name("Garden shed: the roof!");
//! let new_path = EntryPath::for_slug(Category::Projects, &slug);
//! assert_eq!(new_path.to_string(), "projects/garden-shed-the-roof.md");
//!
//! // An entry file: YAML frontmatter (kept in file order, unknown keys too), then the notes.
//! let text = "---\nname: Garden shed\nstatus: active\nnext_action: Buy roofing felt\n---\n\
//!             Sketch in the drawer.\n";
//! let entry = Entry::from_document(path, text)?;
//! assert_eq!(entry.name(), "Garden shed");
//! assert_eq!(entry.status(), Some("active"));
//! assert_eq!(entry.summary_line(), "Next: Buy roofing felt");
//! assert_eq!(entry.body, "Sketch in the drawer.\n");
//! assert_eq!(entry.to_document(), text);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attachments;
pub mod catalogue;
pub mod category;
pub mod cause;
pub mod change;
pub mod citations;
pub mod conflicts;
pub mod conversation;
pub mod delivery;
pub mod digest_orders;
pub mod edit;
pub mod entry;
pub mod fields;
pub mod frontmatter;
pub mod history;
pub mod lines;
pub mod links;
pub mod llm;
pub mod merge;
pub mod names;
pub mod nudges;
pub mod outreach;
pub mod paging;
pub mod path;
pub mod people;
pub mod ports;
pub mod references;
pub mod schedule;
pub mod slug;
pub mod sync;
pub mod three_way;
pub mod transform;
pub mod turn_events;
pub mod vault_files;

pub use attachments::{ATTACHMENTS_FOLDER, Attachments, attachment_path};
pub use catalogue::CatalogueEntry;
pub use category::{Category, FieldKind, FieldSpec, UnknownCategory};
pub use cause::{Cause, Chain, SharedCause};
pub use change::{ChangeContext, ChangeSource};
pub use conversation::{
    Conversation, ConversationId, Message, NewMessage, PendingCall, PendingChoice, Role, ToolCall,
};
pub use digest_orders::{DigestCandidates, DigestOrders};
pub use edit::{BodyEdit, BodyEditError, BodyEditMode, BodyEditRequest};
pub use entry::{Entry, EntryId, EntrySummary, EntryUpdate, NewEntry, UpdateError, UpdatedDocument};
pub use fields::{Confidence, FieldProblem};
pub use frontmatter::{Document, Frontmatter, FrontmatterError};
pub use history::{
    ContentHash, FileChange, HistoryError, ObservedFile, Recording, Revision, RevisionLog, UndoScope,
};
pub use lines::{EntryLines, LineRange, LineRangeError, PickedLines, pick_lines};
pub use llm::{
    ChatCompletion, ChatMessage, ChatRequest, LlmError, StructuredCompletion, StructuredRequest,
    ToolDefinition, Usage,
};
pub use names::NameRelation;
pub use path::{EntryPath, InvalidPath};
pub use people::{Actor, LOCAL_PERSON, PersonName, VaultName, VaultRole};
pub use ports::{
    Audio, ChangeObserver, ChatModel, Clock, ConversationStore, Embedder, EmbeddingCoverage, EmbeddingError,
    EntryCatalogue, EntryChange, EntryContext, EntryLinks, EntryReader, EntryRepository, EntryWriter,
    FixedClock, FolderCount, LaterChanges, LinkKind, LinkedNote, ListFilter, ListPage, MalformedFile,
    MatchedBy, MergeOutcome, MoveOutcome, NameMatch, NearbyNote, PageError, PageReader, Passage, QueryVector,
    RelatedEntry, Relation, RepositoryError, RestoreOutcome, RevisionHistory, RevisionText, SearchError,
    SearchHit, SearchIndex, SearchMode, SearchQuery, SearchResults, StoreError, SystemClock, TextRole,
    Transcriber, TranscriptionError, UndoOutcome, UpdateOutcome, WebPage,
};
pub use slug::Slug;
pub use transform::{MoveError, set_aside_status_key, transform_for_move};
pub use vault_files::{FileRead, Stamp, VaultFiles};
