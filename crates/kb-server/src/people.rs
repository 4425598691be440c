//! The people a `kb serve` answers once it has accounts: kept in `KB_DATA_DIR/server.sqlite`
//! (`KB_DATA_DIR` defaults to `.kb-server/` in the folder kb is started in) and made with
//! `kb users` and `kb tokens`. Without that file, or with no one in it, kb serves as before.

use std::path::PathBuf;

use kb_storage::accounts::SqliteAccounts;
use tokio::sync::OnceCell;

/// The accounts a running `kb serve` answers with: those it found at start, or the first
/// ones made while it runs (`kb users add` in its `KB_DATA_DIR`), which from then on
/// protect every request without a restart.
#[derive(Debug)]
pub struct Accounts {
    /// Where the server's data is.
    dir: PathBuf,
    /// The accounts, once there are any.
    found: OnceCell<SqliteAccounts>,
}

impl Accounts {
    /// Accounts of `dir`, `found` at start or not yet.
    pub fn new(dir: PathBuf, found: Option<SqliteAccounts>) -> Accounts {
        Accounts {
            dir,
            found: found.map_or_else(OnceCell::new, |accounts| OnceCell::new_with(Some(accounts))),
        }
    }

    /// The accounts, when anyone has one: found at start, else looked for now (a file
    /// check while there is none).
    pub async fn current(&self) -> Option<&SqliteAccounts> {
        if let Some(accounts) = self.found.get() {
            return Some(accounts);
        }
        if !self.dir.join("server.sqlite").is_file() {
            return None;
        }
        let accounts = SqliteAccounts::open(&self.dir).await.ok()?;
        if !accounts.any().await.unwrap_or(false) {
            return None;
        }
        tracing::info!(data = %self.dir.display(), "kb has accounts now: every request needs a person's token");
        let _ = self.found.set(accounts);
        self.found.get()
    }
}

/// Where the server's own data lives: `KB_DATA_DIR`, else `.kb-server/` here.
pub fn data_dir() -> std::io::Result<PathBuf> {
    match std::env::var_os("KB_DATA_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(std::env::current_dir()?.join(".kb-server")),
    }
}

/// The accounts kb serve answers with, when anyone has one (the file is never made here).
/// When kb cannot tell whether there are any (the folder or file cannot be read), it
/// refuses: serving without tokens then could open a kb its people meant closed.
pub async fn accounts_in_use() -> anyhow::Result<Option<SqliteAccounts>> {
    let dir = data_dir()?;
    let file = dir.join("server.sqlite");
    match std::fs::metadata(&file) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !dir.is_file() => {
            // A folder that cannot be searched says NotFound for what it holds too.
            if dir.exists() && std::fs::read_dir(&dir).is_err() {
                anyhow::bail!(
                    "cannot read {} (KB_DATA_DIR): kb cannot tell whether it has accounts",
                    dir.display()
                );
            }
            return Ok(None);
        }
        Err(error) => {
            anyhow::bail!(
                "cannot read {} (KB_DATA_DIR): {error}; kb cannot tell whether it has accounts",
                file.display()
            )
        }
        Ok(meta) if !meta.is_file() => {
            anyhow::bail!(
                "{} (KB_DATA_DIR) is not a file: kb cannot tell whether it has accounts",
                file.display()
            )
        }
        Ok(_) => {}
    }
    let accounts = SqliteAccounts::open(&dir)
        .await
        .map_err(|error| anyhow::anyhow!("cannot open the accounts in {}: {error}", file.display()))?;
    let any = accounts.any().await?;
    if any {
        tracing::info!(data = %dir.display(), "kb has accounts: every request needs a person's token");
    }
    Ok(any.then_some(accounts))
}
