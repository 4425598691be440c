//! In-memory fakes of the ports and scripted language models, for fast tests here and in
//! downstream crates (feature `test-util`). The real adapters are tested against real
//! files elsewhere; these only need to honour the ports' contracts.

mod memory;
mod scripted;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use kb_domain::FixedClock;

pub use memory::{MemoryRepository, MemorySearch};
pub use scripted::{ScriptedChatModel, ScriptedClassifier};

use crate::context::ToolServices;
use crate::ports::{Classifier, DigestWriter};

/// Services over a fresh in-memory vault and index, a fixed clock at `now`, the given
/// classifier and digest writer; also returns the vault to seed and inspect.
pub fn memory_services(
    classifier: Arc<dyn Classifier>,
    digest_writer: Option<Arc<dyn DigestWriter>>,
    now: DateTime<Utc>,
) -> (ToolServices, Arc<MemoryRepository>) {
    let clock = Arc::new(FixedClock(now));
    let repository = Arc::new(MemoryRepository::new(clock.clone()));
    let search = Arc::new(MemorySearch::over(repository.clone()));
    let services = ToolServices {
        repository: repository.clone(),
        search,
        embedder: None,
        classifier,
        digest_writer,
        clock,
        pages: None,
    };
    (services, repository)
}
