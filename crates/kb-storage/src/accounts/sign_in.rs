//! Sign-in links: a code sent by email that, used once within 15 minutes, gives its person
//! a token labelled `sign-in`. The code is kept only as its SHA-256, like a token.

use chrono::{DateTime, Duration, Utc};
use kb_domain::{PersonName, StoreError};
use rand::RngCore;

use super::{IssuedToken, SqliteAccounts, TokenRequest, failed, hash_of, hex};
use crate::conversations::rows::format_time;

/// How long a sign-in link works.
pub const LINK_LIFETIME: Duration = Duration::minutes(15);

/// The most links one person is sent within [`LINK_LIFETIME`]: more asks are dropped
/// silently (the answer to asking is the same whatever happens).
pub const LINKS_PER_PERSON: i64 = 3;

/// A link to send: its code and where it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInLink {
    /// The code the link carries.
    pub code: String,
    /// The person's address.
    pub email: String,
}

/// A token a link was used for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// Whose it is.
    pub person: String,
    /// The token.
    pub token: IssuedToken,
}

impl SqliteAccounts {
    /// A new sign-in link for `name`, when they have an account with an address and have
    /// not been sent [`LINKS_PER_PERSON`] links in the last 15 minutes; `None` otherwise.
    pub async fn sign_in_link(
        &self,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<SignInLink>, StoreError> {
        let email: Option<Option<String>> = sqlx::query_scalar("SELECT email FROM people WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?;
        let Some(Some(email)) = email else { return Ok(None) };
        let recent: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sign_in_links WHERE person = ? AND created_at > ?")
                .bind(name)
                .bind(format_time(now - LINK_LIFETIME))
                .fetch_one(&self.pool)
                .await
                .map_err(failed)?;
        if recent >= LINKS_PER_PERSON {
            tracing::info!(person = name, "a sign-in link was asked for too often: none is sent");
            return Ok(None);
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let code = hex(&bytes);
        sqlx::query("INSERT INTO sign_in_links (hash, person, created_at, expires_at) VALUES (?, ?, ?, ?)")
            .bind(hash_of(&code))
            .bind(name)
            .bind(format_time(now))
            .bind(format_time(now + LINK_LIFETIME))
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(Some(SignInLink { code, email }))
    }

    /// Uses the link of `code` at `now`: a new `sign-in` token for its person, when the link
    /// exists, is unused and has not expired. A link is used once, however many ask at once.
    pub async fn use_sign_in_link(
        &self,
        code: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<SignedIn>, StoreError> {
        let person: Option<String> = sqlx::query_scalar(
            "UPDATE sign_in_links SET used_at = ?1 WHERE hash = ?2 AND used_at IS NULL AND expires_at > ?1 \
             RETURNING person",
        )
        .bind(format_time(now))
        .bind(hash_of(code.trim()))
        .fetch_optional(&self.pool)
        .await
        .map_err(failed)?;
        let Some(person) = person else { return Ok(None) };
        let name = PersonName::parse(&person).map_err(|e| StoreError::database_message(e.to_string()))?;
        let request = TokenRequest { label: Some("sign-in".to_string()), read_only: false, expires_at: None };
        Ok(self.issue(&name, &request, now).await?.map(|token| SignedIn { person, token }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accounts::Person;

    #[tokio::test]
    async fn a_link_is_used_once_within_its_quarter_hour_and_never_for_strangers() {
        let dir = tempfile::tempdir().unwrap();
        let accounts = SqliteAccounts::open(dir.path()).await.unwrap();
        let now = Utc::now();
        let ana = Person {
            name: PersonName::parse("ana").unwrap(),
            email: Some("ana@example.org".into()),
            webhook: None,
            admin: false,
        };
        accounts.add(&ana, now).await.unwrap();
        let bo = Person { name: PersonName::parse("bo").unwrap(), email: None, ..ana.clone() };
        accounts.add(&bo, now).await.unwrap();
        assert_eq!(accounts.sign_in_link("nobody", now).await.unwrap(), None);
        assert_eq!(accounts.sign_in_link("bo", now).await.unwrap(), None, "no address, no link");

        let link = accounts.sign_in_link("ana", now).await.unwrap().unwrap();
        assert_eq!(link.email, "ana@example.org");
        let signed = accounts.use_sign_in_link(&link.code, now).await.unwrap().unwrap();
        assert_eq!(signed.person, "ana");
        let bearer = accounts.check(&signed.token.secret, now).await.unwrap().unwrap();
        assert_eq!(bearer.person, "ana");
        assert_eq!(accounts.use_sign_in_link(&link.code, now).await.unwrap(), None, "used once");

        let late = accounts.sign_in_link("ana", now).await.unwrap().unwrap();
        assert_eq!(accounts.use_sign_in_link(&late.code, now + Duration::minutes(16)).await.unwrap(), None);
        assert_eq!(accounts.use_sign_in_link("guess", now).await.unwrap(), None);
        assert!(
            accounts.sign_in_link("ana", now).await.unwrap().is_some(),
            "a third within the quarter hour"
        );
        assert_eq!(accounts.sign_in_link("ana", now).await.unwrap(), None, "a fourth is not sent");
        assert!(accounts.tokens().await.unwrap().iter().any(|t| t.label.as_deref() == Some("sign-in")));
    }
}
