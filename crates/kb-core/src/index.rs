//! Wiring the search index to the vault: the index reads the vault only through the
//! vault's entry files ([`kb_storage::vault::EntryFiles`], the [`kb_domain::VaultFiles`]
//! port), kept in `{vault}/.kb/index`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kb_search::{OpenOptions, TantivyIndex};
use kb_storage::vault::EntryFiles;

use crate::error::CoreError;

/// Opens (rebuilding or catching up as needed) the search index of the existing vault
/// folder `vault_dir` without opening the vault itself: nothing in the vault is created
/// or written but the index (`kb reindex`). The vault leaves out what `exclude` names
/// (`.gitignore` patterns, [`crate::Config::exclude`]).
pub fn open_index(
    vault_dir: &Path,
    exclude: &[String],
    options: OpenOptions,
) -> Result<TantivyIndex, CoreError> {
    open_index_of(EntryFiles::excluding(vault_dir, exclude)?, vault_dir, options)
}

/// Opens the index of the vault at `vault_dir` whose entry files are `files`.
pub(crate) fn open_index_of(
    files: EntryFiles,
    vault_dir: &Path,
    options: OpenOptions,
) -> Result<TantivyIndex, CoreError> {
    Ok(TantivyIndex::open_with(Arc::new(files), &index_dir(vault_dir), options)?)
}

/// Where the index of the vault at `vault_dir` is kept.
fn index_dir(vault_dir: &Path) -> PathBuf {
    vault_dir.join(".kb").join("index")
}
