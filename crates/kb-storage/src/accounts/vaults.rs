//! The vaults of a kb server and who may use them: each person's own vault, the shared
//! ones an admin adds, and the grants (`reader`, `editor`) that open them to others.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use kb_domain::{PersonName, StoreError, VaultName, VaultRole};
use sqlx::Row;

use super::{SqliteAccounts, failed};
use crate::conversations::rows::format_time;

/// Where a vault is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VaultPlace {
    /// The vault `kb serve` is given (`--kb-dir`, `KB_DIR`).
    Served,
    /// A folder: relative ones are under the server's data folder.
    Folder(PathBuf),
}

impl VaultPlace {
    /// The folder, with relative paths taken under `data_dir` and the served vault at
    /// `served`.
    pub fn resolve(&self, data_dir: &Path, served: &Path) -> PathBuf {
        match self {
            VaultPlace::Served => served.to_path_buf(),
            VaultPlace::Folder(path) if path.is_relative() => data_dir.join(path),
            VaultPlace::Folder(path) => path.clone(),
        }
    }

    fn from_column(path: Option<String>) -> VaultPlace {
        path.map_or(VaultPlace::Served, |path| VaultPlace::Folder(PathBuf::from(path)))
    }
}

/// A vault as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultRecord {
    /// Its name.
    pub name: String,
    /// Where it is.
    pub place: VaultPlace,
    /// Whose own vault it is, when it is someone's.
    pub owner: Option<String>,
    /// The git remote it syncs with, when it does.
    pub sync_remote: Option<String>,
}

/// A vault one person may use, with their role there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The vault.
    pub vault: VaultRecord,
    /// What they may do there (an owner is an editor).
    pub role: VaultRole,
}

/// A vault to add (see [`SqliteAccounts::add_vault`]).
#[derive(Debug, Clone, Copy)]
pub struct NewVault<'a> {
    /// Its name.
    pub name: &'a VaultName,
    /// Its folder.
    pub path: &'a Path,
    /// Whose own vault it is, when it is someone's.
    pub owner: Option<&'a PersonName>,
    /// The git remote it syncs with.
    pub sync_remote: Option<&'a str>,
}

/// A grant's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Granted {
    /// The person has the role now.
    Done,
    /// No vault of that name.
    NoVault,
    /// No person of that name.
    NoPerson,
    /// The vault is the person's own: they are its editor already.
    Owner,
}

/// The columns [`record_of`] reads (a macro so queries stay `&'static str` through
/// `concat!`).
macro_rules! record_columns {
    () => {
        "v.name, v.path, v.owner, v.sync_remote"
    };
}

impl SqliteAccounts {
    /// The vault `person` asked for (`None`: their own) and their role there; `None` when
    /// there is no such vault or they may not use it (the two are one answer).
    /// An answer found lately is given from memory while the accounts stay as they were.
    pub async fn access(&self, person: &str, vault: Option<&str>) -> Result<Option<Access>, StoreError> {
        let mark = self.remembered.mark();
        if let Some(access) = self.remembered.access(&mark, person, vault) {
            return Ok(access);
        }
        let row = match vault {
            None => sqlx::query(concat!(
                "SELECT ",
                record_columns!(),
                ", 'editor' AS role FROM vaults v WHERE v.owner = ? \
                 ORDER BY v.created_at DESC, v.rowid DESC LIMIT 1"
            ))
            .bind(person)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?,
            Some(name) => sqlx::query(concat!(
                "SELECT ",
                record_columns!(),
                ", CASE WHEN v.owner = ?1 THEN 'editor' ELSE g.role END AS role \
                 FROM vaults v LEFT JOIN grants g ON g.vault = v.name AND g.person = ?1 \
                 WHERE v.name = ?2 AND (v.owner = ?1 OR g.role IS NOT NULL)"
            ))
            .bind(person)
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?,
        };
        let access = row.map(|row| access_of(&row)).transpose()?;
        self.remembered.keep_access(&mark, person, vault, access.clone());
        Ok(access)
    }

    /// Every vault `person` may use with their role: their own first (the one a request
    /// without `Kb-Vault` reaches before the others), then by name.
    pub async fn vaults_of(&self, person: &str) -> Result<Vec<Access>, StoreError> {
        let rows = sqlx::query(concat!(
            "SELECT ",
            record_columns!(),
            ", CASE WHEN v.owner = ?1 THEN 'editor' ELSE g.role END AS role \
             FROM vaults v LEFT JOIN grants g ON g.vault = v.name AND g.person = ?1 \
             WHERE v.owner = ?1 OR g.role IS NOT NULL \
             ORDER BY v.owner = ?1 DESC, CASE WHEN v.owner = ?1 THEN v.created_at END DESC, \
             CASE WHEN v.owner = ?1 THEN v.rowid END DESC, v.name"
        ))
        .bind(person)
        .fetch_all(&self.pool)
        .await
        .map_err(failed)?;
        rows.iter().map(access_of).collect()
    }

    /// Every vault, by name.
    pub async fn vaults(&self) -> Result<Vec<VaultRecord>, StoreError> {
        let rows = sqlx::query(concat!("SELECT ", record_columns!(), " FROM vaults v ORDER BY v.name"))
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter().map(record_of).collect()
    }

    /// Adds `vault`; false when its name is taken by a vault or a person (a person's own
    /// vault is named after them), or its owner has no account.
    pub async fn add_vault(&self, vault: &NewVault<'_>, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let NewVault { name, path, owner, sync_remote } = *vault;
        let path = path.to_str().ok_or_else(|| {
            StoreError::database_message(format!("{} is not valid UTF-8: kb cannot keep it", path.display()))
        })?;
        let added = sqlx::query(
            "INSERT INTO vaults (name, path, owner, sync_remote, created_at) \
             SELECT ?1, ?2, ?3, ?4, ?5 \
             WHERE NOT EXISTS (SELECT 1 FROM vaults WHERE name = ?1) \
               AND NOT EXISTS (SELECT 1 FROM people WHERE name = ?1 AND name IS NOT ?3) \
               AND (?3 IS NULL OR EXISTS (SELECT 1 FROM people WHERE name = ?3))",
        )
        .bind(name.as_str())
        .bind(path)
        .bind(owner.map(PersonName::as_str))
        .bind(sync_remote)
        .bind(format_time(now))
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        self.remembered.changed()?;
        Ok(added.rows_affected() == 1)
    }

    /// Forgets vault `name` and its grants (its files stay); false when there is none.
    pub async fn remove_vault(&self, name: &str) -> Result<bool, StoreError> {
        let removed = sqlx::query("DELETE FROM vaults WHERE name = ?")
            .bind(name)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        self.remembered.changed()?;
        Ok(removed.rows_affected() == 1)
    }

    /// Gives `person` `role` (reader or editor) in vault `vault`, replacing what they had.
    pub async fn grant(&self, vault: &str, person: &str, role: VaultRole) -> Result<Granted, StoreError> {
        let owner: Option<Option<String>> = sqlx::query_scalar("SELECT owner FROM vaults WHERE name = ?")
            .bind(vault)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?;
        let Some(owner) = owner else { return Ok(Granted::NoVault) };
        if owner.as_deref() == Some(person) {
            return Ok(Granted::Owner);
        }
        let known: Option<String> = sqlx::query_scalar("SELECT name FROM people WHERE name = ?")
            .bind(person)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?;
        if known.is_none() {
            return Ok(Granted::NoPerson);
        }
        let role = if role >= VaultRole::Editor { VaultRole::Editor } else { VaultRole::Reader };
        sqlx::query(
            "INSERT INTO grants (vault, person, role) VALUES (?, ?, ?) \
             ON CONFLICT (vault, person) DO UPDATE SET role = excluded.role",
        )
        .bind(vault)
        .bind(person)
        .bind(role.as_str())
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        self.remembered.changed()?;
        Ok(Granted::Done)
    }

    /// Takes `person`'s grant in `vault` away; false when they had none.
    pub async fn ungrant(&self, vault: &str, person: &str) -> Result<bool, StoreError> {
        let removed = sqlx::query("DELETE FROM grants WHERE vault = ? AND person = ?")
            .bind(vault)
            .bind(person)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        self.remembered.changed()?;
        Ok(removed.rows_affected() == 1)
    }

    /// Every grant of `vault`: the person and their role, by name.
    pub async fn grants(&self, vault: &str) -> Result<Vec<(String, VaultRole)>, StoreError> {
        let rows = sqlx::query("SELECT person, role FROM grants WHERE vault = ? ORDER BY person")
            .bind(vault)
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter()
            .map(|row| {
                let role: String = row.try_get("role").map_err(failed)?;
                Ok((row.try_get("person").map_err(failed)?, parse_role(&role)?))
            })
            .collect()
    }
}

/// A vault from a row of [`record_columns`].
fn record_of(row: &sqlx::sqlite::SqliteRow) -> Result<VaultRecord, StoreError> {
    Ok(VaultRecord {
        name: row.try_get("name").map_err(failed)?,
        place: VaultPlace::from_column(row.try_get("path").map_err(failed)?),
        owner: row.try_get("owner").map_err(failed)?,
        sync_remote: row.try_get("sync_remote").map_err(failed)?,
    })
}

/// An access from a row of [`record_columns`] and `role`.
fn access_of(row: &sqlx::sqlite::SqliteRow) -> Result<Access, StoreError> {
    let role: String = row.try_get("role").map_err(failed)?;
    Ok(Access { vault: record_of(row)?, role: parse_role(&role)? })
}

fn parse_role(role: &str) -> Result<VaultRole, StoreError> {
    VaultRole::parse(role).ok_or_else(|| StoreError::database_message(format!("unknown role {role:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::{Added, Person};

    fn shared<'a>(name: &'a VaultName, path: &'a str) -> NewVault<'a> {
        NewVault { name, path: Path::new(path), owner: None, sync_remote: None }
    }

    fn person(name: &str) -> Person {
        Person { name: PersonName::parse(name).unwrap(), email: None, webhook: None, admin: false }
    }

    #[tokio::test]
    async fn each_person_reaches_their_own_vault_and_only_the_ones_granted() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = SqliteAccounts::open(dir.path()).await.unwrap();
        let now = Utc::now();
        assert_eq!(
            accounts.add(&person("ana"), now).await.unwrap(),
            Added::Person { first: true, vault: None }
        );
        assert_eq!(
            accounts.add(&person("bo"), now).await.unwrap(),
            Added::Person { first: false, vault: Some("vaults/bo".into()) }
        );
        let ana = accounts.people().await.unwrap().into_iter().find(|p| p.name.as_str() == "ana").unwrap();
        assert!(ana.admin, "the first person is an admin");

        let own = accounts.access("ana", None).await.unwrap().unwrap();
        assert_eq!(
            (own.vault.name.as_str(), &own.vault.place, own.role),
            ("ana", &VaultPlace::Served, VaultRole::Editor)
        );
        let bo = accounts.access("bo", None).await.unwrap().unwrap();
        assert_eq!(
            bo.vault.place.resolve(Path::new("/data"), Path::new("/served")),
            PathBuf::from("/data/vaults/bo")
        );
        assert_eq!(accounts.access("ana", Some("bo")).await.unwrap(), None, "another's vault is not there");
        assert_eq!(accounts.access("ana", Some("nowhere")).await.unwrap(), None);

        let family = VaultName::parse("family").unwrap();
        assert!(accounts.add_vault(&shared(&family, "/srv/family"), now).await.unwrap());
        assert!(!accounts.add_vault(&shared(&family, "/x"), now).await.unwrap(), "taken");
        let bo_name = VaultName::parse("bo").unwrap();
        assert!(!accounts.add_vault(&shared(&bo_name, "/x"), now).await.unwrap(), "a person's name");
        assert_eq!(accounts.grant("family", "bo", VaultRole::Reader).await.unwrap(), Granted::Done);
        assert_eq!(accounts.grant("family", "zed", VaultRole::Reader).await.unwrap(), Granted::NoPerson);
        assert_eq!(accounts.grant("nope", "bo", VaultRole::Reader).await.unwrap(), Granted::NoVault);
        assert_eq!(accounts.grant("bo", "bo", VaultRole::Reader).await.unwrap(), Granted::Owner);
        assert_eq!(accounts.access("bo", Some("family")).await.unwrap().unwrap().role, VaultRole::Reader);
        assert_eq!(
            accounts.access("ana", Some("family")).await.unwrap(),
            None,
            "an admin is not let in ungranted"
        );
        accounts.grant("family", "bo", VaultRole::Admin).await.unwrap();
        assert_eq!(accounts.access("bo", Some("family")).await.unwrap().unwrap().role, VaultRole::Editor);
        let listed: Vec<_> =
            accounts.vaults_of("bo").await.unwrap().into_iter().map(|a| (a.vault.name, a.role)).collect();
        assert_eq!(
            listed,
            [("bo".to_string(), VaultRole::Editor), ("family".to_string(), VaultRole::Editor)]
        );

        // A removed person's vault stays, owned by no one, and their name cannot be reused
        // to reach it.
        assert!(accounts.remove(&PersonName::parse("bo").unwrap()).await.unwrap());
        assert_eq!(accounts.grants("family").await.unwrap(), []);
        assert_eq!(
            accounts.add(&person("bo"), now).await.unwrap(),
            Added::NameRetired,
            "a name is never reused"
        );
        assert!(accounts.vaults().await.unwrap().iter().any(|v| v.name == "bo" && v.owner.is_none()));
    }
}
