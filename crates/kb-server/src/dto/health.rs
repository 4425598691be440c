//! What `/healthz` answers of kb itself (kb reaching out is added beside it, see
//! [`super::OutreachStatusJson`]).

use kb_core::Health;
use serde::Serialize;

/// `{version, model, entries, indexReady, indexProblem?, indexFile, malformedFiles,
/// vaultReady, notices}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthJson<'a> {
    /// kb's version.
    pub version: &'static str,
    /// `offline`, or the model's name.
    pub model: &'a str,
    /// Entries in the vault.
    pub entries: usize,
    /// Whether search answers for the vault as it is.
    pub index_ready: bool,
    /// Why search is not ready, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_problem: Option<&'a str>,
    /// The entry list file (vault-relative), `null` when kb writes none.
    pub index_file: Option<&'a str>,
    /// Files that look like entries but cannot be read (0 until `vault_ready`).
    pub malformed_files: usize,
    /// Whether the view of the vault is built (lists, names and digests answer at once).
    pub vault_ready: bool,
    /// Things the person should know about the vault.
    pub notices: &'a [String],
    /// How far embedding got, with an embedding model: `{model, embedded, total, queued}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingsJson<'a>>,
    /// Where sync stands, with sync on: `{state, lastSync, conflicts}` (no remote).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncJson>,
}

/// Where sync stands, as health says it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncJson {
    /// `idle`, `syncing` or `failing`.
    pub state: &'static str,
    /// When a round last finished (RFC 3339), `null` before the first.
    pub last_sync: Option<String>,
    /// How many conflict copies wait for a person.
    pub conflicts: usize,
}

/// How far embedding got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmbeddingsJson<'a> {
    /// The embedding model.
    pub model: &'a str,
    /// Entries with vectors for their text as it is.
    pub embedded: usize,
    /// Entries in the search index.
    pub total: usize,
    /// Entries waiting to be embedded.
    pub queued: usize,
    /// Whether the cut of matches by meaning is measured on the vault.
    pub calibrated: bool,
}

impl<'a> From<&'a Health> for HealthJson<'a> {
    fn from(health: &'a Health) -> HealthJson<'a> {
        HealthJson {
            version: health.version,
            model: &health.model,
            entries: health.entries,
            index_ready: health.index_ready,
            index_problem: health.index_problem.as_deref(),
            index_file: health.entry_list_file.as_deref(),
            malformed_files: health.malformed_files,
            vault_ready: health.vault_ready,
            notices: &health.notices,
            embeddings: health.embeddings.as_ref().map(|coverage| EmbeddingsJson {
                model: &coverage.model,
                embedded: coverage.embedded,
                total: coverage.total,
                queued: coverage.queued,
                calibrated: coverage.calibrated,
            }),
            sync: health.sync.as_ref().map(|sync| SyncJson {
                state: sync.state,
                last_sync: sync.last_sync.map(|at| at.to_rfc3339()),
                conflicts: sync.conflicts,
            }),
        }
    }
}
