//! [`SqliteAccounts`]: the people a kb server serves and their tokens, in the server's own
//! database (`KB_DATA_DIR/server.sqlite`, `migrations_server/`).
//!
//! A token is `kb_` and 64 hex digits: 256 random bits, shown once when issued and kept
//! only as its SHA-256. A fast hash is enough because the secret is random and long (no
//! dictionary to try, nothing to salt against), and it keeps a request's check to a hash
//! and an indexed lookup; the stored hash is then compared in constant time.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use kb_domain::{PersonName, StoreError};
use rand::RngCore;
use sqlx::{Row, SqlitePool};

use crate::conversations::rows::format_time;
use crate::database;

mod remembered;
pub mod sign_in;
pub mod vaults;

use remembered::{KnownToken, Remembered};

/// A person the server serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// Their name.
    pub name: PersonName,
    /// Where their digests and sign-in links go.
    pub email: Option<String>,
    /// Where their digests are posted.
    pub webhook: Option<String>,
    /// Whether they manage people and vaults.
    pub admin: bool,
}

/// What [`SqliteAccounts::add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// The person was added, with their own vault.
    Person {
        /// Whether they are the first person (an admin, owning the served vault).
        first: bool,
        /// Their vault's folder under the data folder (`vaults/NAME`); `None`: the served
        /// vault.
        vault: Option<String>,
    },
    /// Someone has that name already; nothing changed.
    NameTaken,
    /// Someone removed had that name: conversations, revisions and keys in the vaults still
    /// name them, so it is never given again; nothing changed.
    NameRetired,
    /// A vault has that name already (a shared one, or one a removed person left);
    /// nothing changed.
    VaultTaken,
}

/// A token as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    /// Its id, to revoke it by.
    pub id: String,
    /// Whose it is.
    pub person: String,
    /// What it is for ("phone", "sign-in").
    pub label: Option<String>,
    /// Whether it may only read.
    pub read_only: bool,
    /// When it was issued.
    pub created_at: DateTime<Utc>,
    /// When it stops working, when it does.
    pub expires_at: Option<DateTime<Utc>>,
    /// The last request it carried.
    pub last_used_at: Option<DateTime<Utc>>,
    /// When it was revoked.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// What a token is to be: its label, whether it may only read, when it stops working.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// What it is for ("phone", "sign-in").
    pub label: Option<String>,
    /// Whether it may only read.
    pub read_only: bool,
    /// When it stops working (`None`: never).
    pub expires_at: Option<DateTime<Utc>>,
}

/// A token just issued: its secret is shown this once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedToken {
    /// Its id.
    pub id: String,
    /// The secret a request carries (`Authorization: Bearer …`).
    pub secret: String,
}

/// Who a valid token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bearer {
    /// The token's id.
    pub token: String,
    /// The person.
    pub person: String,
    /// Whether the person is an admin.
    pub admin: bool,
    /// Whether the token may only read.
    pub read_only: bool,
}

/// The people and tokens of one kb server.
#[derive(Debug, Clone)]
pub struct SqliteAccounts {
    pub(crate) pool: SqlitePool,
    /// The tokens and vaults looked up lately, while the accounts stay as they were.
    remembered: Arc<Remembered>,
    /// Checkpoints the database while this is open.
    _checkpoints: Option<database::Checkpoints>,
}

impl SqliteAccounts {
    /// Opens (or creates) the server database in `data_dir`, whose files only this user
    /// may read (they name people, their addresses and their tokens' hashes).
    pub async fn open(data_dir: &Path) -> Result<SqliteAccounts, StoreError> {
        let database = database::open_server(data_dir).await?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(data_dir, std::fs::Permissions::from_mode(0o700));
        }
        let remembered = Arc::new(Remembered::new(data_dir));
        if remembered.mark().is_missing()
            && let Err(error) = remembered.changed()
        {
            tracing::warn!(%error, "nothing about the accounts is remembered");
        }
        Ok(SqliteAccounts { pool: database.pool, remembered, _checkpoints: database.checkpoints })
    }

    /// Whether any person has an account (then every request needs a person's token).
    pub async fn any(&self) -> Result<bool, StoreError> {
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM people").fetch_one(&self.pool).await.map_err(failed)?;
        Ok(count > 0)
    }

    /// Adds `person` with their own vault, named after them: the first person kb has is
    /// an admin whatever `person` says, and their vault is the one `kb serve` is given;
    /// anyone else's is `vaults/NAME` under the data folder (made by the caller).
    pub async fn add(&self, person: &Person, now: DateTime<Utc>) -> Result<Added, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
        let taken: Option<String> = sqlx::query_scalar("SELECT name FROM people WHERE name = ?")
            .bind(person.name.as_str())
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed)?;
        if taken.is_some() {
            return Ok(Added::NameTaken);
        }
        let former: Option<String> = sqlx::query_scalar("SELECT name FROM former_people WHERE name = ?")
            .bind(person.name.as_str())
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed)?;
        if former.is_some() {
            return Ok(Added::NameRetired);
        }
        let vault_taken: Option<String> = sqlx::query_scalar("SELECT name FROM vaults WHERE name = ?")
            .bind(person.name.as_str())
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed)?;
        if vault_taken.is_some() {
            return Ok(Added::VaultTaken);
        }
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM people").fetch_one(&mut *tx).await.map_err(failed)?;
        let first = count == 0;
        let stamp = format_time(now);
        sqlx::query("INSERT INTO people (name, email, webhook, admin, created_at) VALUES (?, ?, ?, ?, ?)")
            .bind(person.name.as_str())
            .bind(person.email.as_deref())
            .bind(person.webhook.as_deref())
            .bind(person.admin || first)
            .bind(&stamp)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        let vault = (!first).then(|| format!("vaults/{}", person.name));
        sqlx::query("INSERT INTO vaults (name, path, owner, created_at) VALUES (?, ?, ?, ?)")
            .bind(person.name.as_str())
            .bind(vault.as_deref())
            .bind(person.name.as_str())
            .bind(&stamp)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        self.remembered.changed()?;
        Ok(Added::Person { first, vault })
    }

    /// Whether `name` was someone's who was removed (never given again).
    pub async fn was_removed(&self, name: &PersonName) -> Result<bool, StoreError> {
        let former: Option<String> = sqlx::query_scalar("SELECT name FROM former_people WHERE name = ?")
            .bind(name.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?;
        Ok(former.is_some())
    }

    /// Every person, by name.
    pub async fn people(&self) -> Result<Vec<Person>, StoreError> {
        let rows = sqlx::query("SELECT name, email, webhook, admin FROM people ORDER BY name")
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter()
            .map(|row| {
                let name: String = row.try_get("name").map_err(failed)?;
                Ok(Person {
                    name: PersonName::parse(&name)
                        .map_err(|e| StoreError::database_message(e.to_string()))?,
                    email: row.try_get("email").map_err(failed)?,
                    webhook: row.try_get("webhook").map_err(failed)?,
                    admin: row.try_get("admin").map_err(failed)?,
                })
            })
            .collect()
    }

    /// Removes `name`, their tokens and grants; false when there is no such person. Their
    /// name is never given again (what the vaults keep of them still names them).
    pub async fn remove(&self, name: &PersonName) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
        let removed = sqlx::query("DELETE FROM people WHERE name = ?")
            .bind(name.as_str())
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        if removed.rows_affected() == 1 {
            sqlx::query(
                "INSERT INTO former_people (name, removed_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            )
            .bind(name.as_str())
            .bind(format_time(Utc::now()))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        }
        tx.commit().await.map_err(failed)?;
        self.remembered.changed()?;
        Ok(removed.rows_affected() == 1)
    }

    /// Issues a token for `person`; `None` when there is no such person.
    pub async fn issue(
        &self,
        person: &PersonName,
        request: &TokenRequest,
        now: DateTime<Utc>,
    ) -> Result<Option<IssuedToken>, StoreError> {
        let mut secret_bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut secret_bytes);
        let secret = format!("kb_{}", hex(&secret_bytes));
        let id = ulid::Ulid::new().to_string().to_lowercase();
        let issued = sqlx::query(
            "INSERT INTO tokens (id, person, hash, label, read_only, created_at, expires_at) \
             SELECT ?, name, ?, ?, ?, ?, ? FROM people WHERE name = ?",
        )
        .bind(&id)
        .bind(hash_of(&secret))
        .bind(request.label.as_deref())
        .bind(request.read_only)
        .bind(format_time(now))
        .bind(request.expires_at.map(format_time))
        .bind(person.as_str())
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok((issued.rows_affected() == 1).then_some(IssuedToken { id, secret }))
    }

    /// Every token (never a secret), newest first.
    pub async fn tokens(&self) -> Result<Vec<TokenInfo>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, person, label, read_only, created_at, expires_at, last_used_at, revoked_at \
             FROM tokens ORDER BY created_at DESC, id DESC",
        )
        .fetch_all(&self.pool)
        .await
        .map_err(failed)?;
        rows.iter()
            .map(|row| {
                let time = |name: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
                    let value: Option<String> = row.try_get(name).map_err(failed)?;
                    Ok(value
                        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
                        .map(|t| t.with_timezone(&Utc)))
                };
                Ok(TokenInfo {
                    id: row.try_get("id").map_err(failed)?,
                    person: row.try_get("person").map_err(failed)?,
                    label: row.try_get("label").map_err(failed)?,
                    read_only: row.try_get("read_only").map_err(failed)?,
                    created_at: time("created_at")?.unwrap_or_default(),
                    expires_at: time("expires_at")?,
                    last_used_at: time("last_used_at")?,
                    revoked_at: time("revoked_at")?,
                })
            })
            .collect()
    }

    /// Revokes token `id` at `now`; false when there is no such token still valid.
    pub async fn revoke(&self, id: &str, now: DateTime<Utc>) -> Result<bool, StoreError> {
        let revoked = sqlx::query("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
            .bind(format_time(now))
            .bind(id.trim().to_lowercase())
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        self.remembered.changed()?;
        Ok(revoked.rows_affected() == 1)
    }

    /// Who `secret` speaks for at `now`, when it is a token neither revoked nor expired;
    /// its last use is kept (to the minute). A token found valid lately is answered from
    /// memory while the accounts stay as they were (see `remembered`).
    pub async fn check(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<Bearer>, StoreError> {
        let hash = hash_of(secret.trim());
        let minute = now.format("%Y-%m-%dT%H:%M").to_string();
        let mark = self.remembered.mark();
        if let Some(known) = self.remembered.token(&mark, &hash) {
            if has_expired(known.expires_at.as_deref(), now) {
                return Ok(None);
            }
            if known.noted != minute {
                self.note_use(&known.bearer.token, now).await;
                self.remembered.noted(&hash, &minute);
            }
            return Ok(Some(known.bearer));
        }
        let row = sqlx::query(
            "SELECT tokens.id, tokens.hash, tokens.person, tokens.read_only, tokens.expires_at, \
             tokens.revoked_at, tokens.last_used_at, people.admin FROM tokens \
             JOIN people ON people.name = tokens.person WHERE tokens.hash = ?",
        )
        .bind(&hash)
        .fetch_optional(&self.pool)
        .await
        .map_err(failed)?;
        let Some(row) = row else { return Ok(None) };
        let stored: String = row.try_get("hash").map_err(failed)?;
        if !constant_time_eq(stored.as_bytes(), hash.as_bytes()) {
            return Ok(None);
        }
        let revoked: Option<String> = row.try_get("revoked_at").map_err(failed)?;
        let expires_at: Option<String> = row.try_get("expires_at").map_err(failed)?;
        if revoked.is_some() || has_expired(expires_at.as_deref(), now) {
            return Ok(None);
        }
        let id: String = row.try_get("id").map_err(failed)?;
        let last: Option<String> = row.try_get("last_used_at").map_err(failed)?;
        if last.as_deref().is_none_or(|last| !last.starts_with(&minute)) {
            self.note_use(&id, now).await;
        }
        let bearer = Bearer {
            token: id,
            person: row.try_get("person").map_err(failed)?,
            admin: row.try_get("admin").map_err(failed)?,
            read_only: row.try_get("read_only").map_err(failed)?,
        };
        let known = KnownToken { bearer: bearer.clone(), expires_at, noted: minute };
        self.remembered.keep_token(&mark, hash, known);
        Ok(Some(bearer))
    }

    /// Keeps `now` as token `id`'s last use. Bookkeeping: a database busy with another
    /// writer must not refuse a valid token, so a failure is only logged.
    async fn note_use(&self, id: &str, now: DateTime<Utc>) {
        let noted = sqlx::query("UPDATE tokens SET last_used_at = ? WHERE id = ?")
            .bind(format_time(now))
            .bind(id)
            .execute(&self.pool)
            .await;
        if let Err(error) = noted {
            tracing::warn!(%error, "a token's last use could not be noted");
        }
    }
}

/// Whether a token that stops working at `expires_at` (as stored) has stopped at `now`.
/// An expiry that does not read as a time (edited by hand) has passed.
fn has_expired(expires_at: Option<&str>, now: DateTime<Utc>) -> bool {
    expires_at.is_some_and(|at| DateTime::parse_from_rfc3339(at).is_err() || at <= format_time(now).as_str())
}

/// A token's stored form: the SHA-256 of its secret, lowercase hex (as history names bytes).
pub(crate) fn hash_of(secret: &str) -> String {
    crate::history::content_hash(secret.as_bytes()).0
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares without returning early on the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub(crate) fn failed(error: sqlx::Error) -> StoreError {
    StoreError::database("the server's accounts", error)
}

#[cfg(test)]
mod tests {
    use kb_domain::VaultName;

    use super::*;

    fn ana() -> Person {
        Person { name: PersonName::parse("ana").unwrap(), email: None, webhook: None, admin: true }
    }

    #[tokio::test]
    async fn a_token_speaks_for_its_person_until_revoked_or_expired() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = SqliteAccounts::open(dir.path()).await.unwrap();
        let now = Utc::now();
        assert!(!accounts.any().await.unwrap());
        assert_eq!(accounts.add(&ana(), now).await.unwrap(), Added::Person { first: true, vault: None });
        assert_eq!(accounts.add(&ana(), now).await.unwrap(), Added::NameTaken, "a name is one person");
        let name = ana().name;
        let token = accounts
            .issue(&name, &TokenRequest { label: Some("phone".into()), ..Default::default() }, now)
            .await
            .unwrap()
            .unwrap();
        assert!(token.secret.starts_with("kb_") && token.secret.len() == 67, "{}", token.secret);
        let bearer = accounts.check(&token.secret, now).await.unwrap().unwrap();
        assert_eq!((bearer.person.as_str(), bearer.admin, bearer.read_only), ("ana", true, false));
        // Only the hash is kept: the secret is nowhere in the database file.
        let stored = std::fs::read(dir.path().join("server.sqlite")).unwrap();
        let wal = std::fs::read(dir.path().join("server.sqlite-wal")).unwrap_or_default();
        for bytes in [stored, wal] {
            assert!(!bytes.windows(token.secret.len()).any(|w| w == token.secret.as_bytes()));
        }
        assert_eq!(accounts.check("kb_nonsense", now).await.unwrap(), None);
        let listed = accounts.tokens().await.unwrap();
        assert_eq!((listed.len(), listed[0].label.as_deref()), (1, Some("phone")));
        assert!(listed[0].last_used_at.is_some(), "its last use is kept");
        assert!(accounts.revoke(&token.id, now).await.unwrap());
        assert_eq!(accounts.check(&token.secret, now).await.unwrap(), None, "revoked");
        let brief = accounts
            .issue(
                &name,
                &TokenRequest {
                    read_only: true,
                    label: None,
                    expires_at: Some(now + chrono::Duration::days(1)),
                },
                now,
            )
            .await
            .unwrap()
            .unwrap();
        assert!(accounts.check(&brief.secret, now).await.unwrap().is_some_and(|b| b.read_only));
        assert_eq!(
            accounts.check(&brief.secret, now + chrono::Duration::days(2)).await.unwrap(),
            None,
            "expired"
        );
        let nobody = PersonName::parse("nobody").unwrap();
        assert_eq!(accounts.issue(&nobody, &TokenRequest::default(), now).await.unwrap(), None);
        // A person removed takes their tokens along.
        assert!(accounts.remove(&name).await.unwrap());
        assert_eq!(accounts.check(&brief.secret, now).await.unwrap(), None);
        assert!(accounts.tokens().await.unwrap().is_empty());
    }

    /// Another kb process on the same data: what one remembers must not outlive a change
    /// the other makes.
    #[tokio::test]
    async fn what_a_process_remembers_gives_way_to_another_processes_change() {
        let dir = tempfile::tempdir().unwrap();
        let serving = SqliteAccounts::open(dir.path()).await.unwrap();
        let command = SqliteAccounts::open(dir.path()).await.unwrap();
        let now = Utc::now();
        command.add(&ana(), now).await.unwrap();
        let bo = Person { name: PersonName::parse("bo").unwrap(), admin: false, ..ana() };
        command.add(&bo, now).await.unwrap();
        let shared = VaultName::parse("house").unwrap();
        let folder = dir.path().join("house");
        let vault = vaults::NewVault { name: &shared, path: &folder, owner: None, sync_remote: None };
        assert!(command.add_vault(&vault, now).await.unwrap());
        command.grant("house", "bo", kb_domain::VaultRole::Reader).await.unwrap();
        let token = command.issue(&bo.name, &TokenRequest::default(), now).await.unwrap().unwrap();
        let expiring =
            TokenRequest { expires_at: Some(now + chrono::Duration::hours(1)), ..Default::default() };
        let brief = command.issue(&bo.name, &expiring, now).await.unwrap().unwrap();

        // Asked twice, so the second answer comes from memory.
        for _ in 0..2 {
            assert_eq!(serving.check(&token.secret, now).await.unwrap().unwrap().person, "bo");
            assert!(serving.check(&brief.secret, now).await.unwrap().is_some());
            let access = serving.access("bo", Some("house")).await.unwrap().unwrap();
            assert_eq!(access.role, kb_domain::VaultRole::Reader);
            assert_eq!(serving.access("bo", Some("elsewhere")).await.unwrap(), None);
        }
        let later = now + chrono::Duration::hours(2);
        assert_eq!(serving.check(&brief.secret, later).await.unwrap(), None, "expired, though remembered");
        // Its last use is still noted as minutes pass.
        assert!(serving.check(&token.secret, later).await.unwrap().is_some());
        let listed = command.tokens().await.unwrap();
        let used = listed.iter().find(|t| t.id == token.id).and_then(|t| t.last_used_at).unwrap();
        assert_eq!(used.timestamp(), later.timestamp());

        command.grant("house", "bo", kb_domain::VaultRole::Editor).await.unwrap();
        assert_eq!(
            serving.access("bo", Some("house")).await.unwrap().unwrap().role,
            kb_domain::VaultRole::Editor
        );
        assert!(command.ungrant("house", "bo").await.unwrap());
        assert_eq!(serving.access("bo", Some("house")).await.unwrap(), None, "ungranted elsewhere");
        assert!(command.revoke(&token.id, now).await.unwrap());
        assert_eq!(serving.check(&token.secret, now).await.unwrap(), None, "revoked elsewhere");

        // Without a mark to read, nothing is remembered: every check asks the database.
        let again = command.issue(&bo.name, &TokenRequest::default(), now).await.unwrap().unwrap();
        assert!(serving.check(&again.secret, now).await.unwrap().is_some());
        std::fs::remove_file(dir.path().join(remembered::MARK_FILE)).unwrap();
        sqlx::query("UPDATE tokens SET revoked_at = ? WHERE id = ?")
            .bind(format_time(now))
            .bind(&again.id)
            .execute(&command.pool)
            .await
            .unwrap();
        assert_eq!(serving.check(&again.secret, now).await.unwrap(), None, "read from the database");
    }

    /// The mark file is in a folder people may edit: whatever is put there (a pipe, a
    /// device, a huge file, a folder) leaves every check prompt and correct.
    #[cfg(unix)]
    #[tokio::test]
    async fn whatever_is_put_in_place_of_the_mark_checks_stay_prompt_and_correct() {
        let dir = tempfile::tempdir().unwrap();
        let serving = SqliteAccounts::open(dir.path()).await.unwrap();
        let command = SqliteAccounts::open(dir.path()).await.unwrap();
        let now = Utc::now();
        command.add(&ana(), now).await.unwrap();
        let mark = dir.path().join(remembered::MARK_FILE);
        let fifo = |path: &Path| {
            let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
            assert!(made.success());
        };
        type Put<'a> = &'a dyn Fn(&Path);
        let replacements: [(&str, Put); 4] = [
            ("a pipe", &fifo),
            ("a device", &|path| std::os::unix::fs::symlink("/dev/zero", path).unwrap()),
            ("a huge file", &|path| std::fs::File::create(path).unwrap().set_len(1 << 40).unwrap()),
            ("a folder", &|path| std::fs::create_dir_all(path.join("inside")).unwrap()),
        ];
        for (what, put) in replacements {
            let token = command.issue(&ana().name, &TokenRequest::default(), now).await.unwrap().unwrap();
            if mark.is_dir() {
                std::fs::remove_dir_all(&mark).unwrap();
            } else {
                std::fs::remove_file(&mark).unwrap();
            }
            put(&mark);
            let started = std::time::Instant::now();
            for _ in 0..3 {
                assert!(serving.check(&token.secret, now).await.unwrap().is_some(), "{what}");
            }
            assert!(started.elapsed() < std::time::Duration::from_secs(5), "{what}: {:?}", started.elapsed());
            command.revoke(&token.id, now).await.unwrap();
            assert_eq!(serving.check(&token.secret, now).await.unwrap(), None, "{what}: revoked");
        }
    }
}
