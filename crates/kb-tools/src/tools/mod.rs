//! kb's tools, one module each, and the one place they are registered.

pub mod capture;
pub mod context;
pub mod delete;
pub mod digest;
pub mod duplicates;
pub mod get;
pub mod list;
pub mod merge;
pub mod move_entry;
pub mod resolve_conflict;
pub mod search;
pub mod undo;
pub mod update;

pub use capture::ClassifyAndCapture;
pub use context::BuildContext;
pub use delete::DeleteEntry;
pub use digest::GenerateDigest;
pub use duplicates::FindDuplicates;
pub use get::GetEntry;
pub use list::ListEntries;
pub use merge::MergeEntries;
pub use move_entry::MoveEntry;
pub use resolve_conflict::ResolveConflict;
pub use search::SearchEntries;
pub use undo::UndoLastChange;
pub use update::UpdateEntry;

use crate::registry::{RegistryError, ToolRegistry};

/// The registry of kb's tools, registered explicitly, in the order the LLM sees them.
pub fn standard_registry() -> Result<ToolRegistry, RegistryError> {
    ToolRegistry::builder()
        .register(ClassifyAndCapture)
        .register(ListEntries)
        .register(GetEntry)
        .register(GenerateDigest)
        .register(UpdateEntry)
        .register(MoveEntry)
        .register(SearchEntries)
        .register(DeleteEntry)
        .register(UndoLastChange)
        .register(FindDuplicates)
        .register(MergeEntries)
        .register(BuildContext)
        .register(ResolveConflict)
        .build()
}
