//! kb-search: the [`kb_domain::SearchIndex`] adapter over tantivy, kept in step with the
//! vault. The index is derived data under `.kb/index`; the vault on disk is the truth.
//!
//! Depends only on kb-domain; knows nothing of tools, the orchestrator or delivery.
//! (The tantivy adapter lands with issue 3.)
