//! The people a `kb serve` answers once it has accounts: kept in `KB_DATA_DIR/server.sqlite`
//! (`KB_DATA_DIR` defaults to `.kb-server/` in the folder kb is started in) and made with
//! `kb users` and `kb tokens`. Without that file, or with no one in it, kb serves as before.

use std::path::PathBuf;

use kb_storage::accounts::SqliteAccounts;

/// Where the server's own data lives: `KB_DATA_DIR`, else `.kb-server/` here.
pub fn data_dir() -> std::io::Result<PathBuf> {
    match std::env::var_os("KB_DATA_DIR").filter(|dir| !dir.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(std::env::current_dir()?.join(".kb-server")),
    }
}

/// The accounts kb serve answers with, when anyone has one (the file is never made here).
pub async fn accounts_in_use() -> anyhow::Result<Option<SqliteAccounts>> {
    let dir = data_dir()?;
    if !dir.join("server.sqlite").is_file() {
        return Ok(None);
    }
    let accounts = SqliteAccounts::open(&dir).await?;
    Ok(if accounts.any().await? { Some(accounts) } else { None })
}
