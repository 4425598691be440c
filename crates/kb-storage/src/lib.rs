//! kb-storage: the storage adapters. [`vault`] is the markdown vault on disk (the
//! [`kb_domain::EntryRepository`]); [`conversations`] is the SQLite conversation store (the
//! [`kb_domain::ConversationStore`]) on sqlx; [`history`] is the revision history (the
//! [`kb_domain::RevisionLog`]) in the same database.
//!
//! Depends only on kb-domain; knows nothing of search, tools, the orchestrator or delivery.

pub mod background;
pub mod conversations;
mod database;
pub mod history;
pub mod outreach;
pub mod vault;
