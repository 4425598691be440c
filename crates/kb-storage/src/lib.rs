//! kb-storage: the storage adapters. [`vault`] is the markdown vault on disk (the
//! [`kb_domain::EntryRepository`], and the [`kb_domain::VaultFiles`] the search index reads
//! it through); [`conversations`] is the SQLite conversation store (the
//! [`kb_domain::ConversationStore`]) on sqlx; [`history`] is the revision history (the
//! [`kb_domain::RevisionLog`]) in the same database, also committed to git with
//! `KB_GIT=commit`; [`outreach`] keeps digest schedules, digests and their deliveries there
//! (the [`kb_domain::outreach::OutreachStore`]); [`idempotency`] keeps there the answers
//! to requests sent with an `Idempotency-Key` (the [`kb_domain::ports::IdempotencyStore`]),
//! and [`mail_claims`] the mail kb files from a mailbox, each claimed once.
//! [`accounts`] keeps a kb server's people and tokens in its own database (`server.sqlite`).
//! [`background`] runs the work behind a request (the entry list file, folder sweeps) at a
//! low CPU priority.
//!
//! Depends only on kb-domain; knows nothing of search, tools, the orchestrator or delivery.

pub mod accounts;
pub mod background;
pub mod conversations;
mod database;
pub mod history;
pub mod idempotency;
pub mod mail_claims;
pub mod outreach;
pub mod sync;
pub mod vault;
