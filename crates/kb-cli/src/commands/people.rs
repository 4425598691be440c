//! `kb users` and `kb tokens`: the people `kb serve` answers and their tokens, kept in
//! `KB_DATA_DIR/server.sqlite`. Whoever can write that folder manages them.

use chrono::Utc;
use kb_domain::PersonName;
use kb_storage::accounts::{Added, Person, SqliteAccounts, TokenRequest};
use serde_json::json;

use crate::cli::{TokensAction, UsersAction};
use crate::failure::CliError;
use crate::output::{Format, print_json, print_text};

/// Opens the accounts of `KB_DATA_DIR`; only `kb users add` (`create`) makes them.
pub(super) async fn open(create: bool) -> Result<SqliteAccounts, CliError> {
    let dir = kb_server::people::data_dir()?;
    if !create && !dir.join("server.sqlite").is_file() {
        return Err(CliError::usage(format!(
            "there are no accounts in {} (KB_DATA_DIR): `kb users add NAME` makes the first",
            dir.display()
        )));
    }
    Ok(SqliteAccounts::open(&dir).await?)
}

/// `text` on one line without control characters (a label typed with a newline or an
/// escape code cannot forge a row or drive the terminal).
pub(super) fn shown(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

pub(super) fn person_name(name: &str) -> Result<PersonName, CliError> {
    PersonName::parse(name).map_err(|e| CliError::usage(e.to_string()))
}

/// `kb users add|list|remove`.
pub async fn users(action: UsersAction, format: Format) -> Result<(), CliError> {
    let accounts = open(matches!(action, UsersAction::Add { .. })).await?;
    match action {
        UsersAction::Add { name, email, webhook, admin } => {
            if email.as_deref().is_some_and(|e| !e.contains('@') || e.contains(char::is_whitespace)) {
                return Err(CliError::usage("--email takes one address, like ana@example.org"));
            }
            if webhook.as_deref().is_some_and(|w| !w.starts_with("https://") && !w.starts_with("http://")) {
                return Err(CliError::usage("--webhook takes an http(s) URL"));
            }
            let person = Person { name: person_name(&name)?, email, webhook, admin };
            let dir = kb_server::people::data_dir()?;
            // A folder left there with files is someone's: it is never handed to a newcomer.
            let folder = dir.join("vaults").join(person.name.as_str());
            let retired = accounts.was_removed(&person.name).await?;
            if !retired
                && accounts.any().await?
                && std::fs::read_dir(&folder).is_ok_and(|mut d| d.next().is_some())
            {
                return Err(CliError::usage(format!(
                    "{} already holds files: choose another name, or move that folder away first",
                    folder.display()
                )));
            }
            let (first, vault) = match accounts.add(&person, Utc::now()).await? {
                Added::Person { first, vault } => (first, vault),
                Added::NameTaken => {
                    return Err(CliError::usage(format!("{} has an account already", person.name)));
                }
                Added::NameRetired => {
                    return Err(CliError::usage(format!(
                        "{} was the name of someone removed, and what the vaults keep of them still names them: \
                         choose another name",
                        person.name
                    )));
                }
                Added::VaultTaken => {
                    return Err(CliError::usage(format!(
                        "a vault is named {} already (a shared one, or one a removed person left): \
                         choose another name, or forget that vault with `kb vaults remove {}`",
                        person.name, person.name
                    )));
                }
            };
            if let Some(vault) = &vault {
                let folder = dir.join(vault);
                kb_server::vaults::make_private(&folder)
                    .map_err(|e| CliError::usage(format!("cannot make {}: {e}", folder.display())))?;
            }
            let admin = admin || first;
            let folder = vault.as_ref().map(|v| dir.join(v).display().to_string());
            if format.is_json() {
                return print_json(
                    &json!({"name": person.name.as_str(), "admin": admin, "first": first, "vault": folder}),
                );
            }
            let role = if admin { " (admin)" } else { "" };
            let mut text = format!("{} has an account{role} in {}.\n", person.name, dir.display());
            match &folder {
                Some(folder) => text.push_str(&format!("Their own vault is {folder}.\n")),
                None => text.push_str("Their own vault is the one kb serve is given (--kb-dir, KB_DIR).\n"),
            }
            if first {
                text.push_str(
                    "This is kb's first account, so it is an admin: from now on a kb serve with this \
                     KB_DATA_DIR answers only requests that carry a person's token, loopback included \
                     (one started with KB_API_TOKEN must be restarted without it). Issue one with \
                     `kb tokens issue NAME`. The CLI and kb mcp still act as the local owner of the \
                     vault they open. To make an existing vault someone's own: \
                     `kb vaults add NAME PATH --owner USER`; to share one: `kb vaults add NAME PATH` \
                     and `kb vaults grant NAME USER reader|editor`.\n",
                );
            }
            print_text(&text)
        }
        UsersAction::List => {
            let people = accounts.people().await?;
            if format.is_json() {
                let list: Vec<_> = people
                    .iter()
                    .map(|p| json!({"name": p.name.as_str(), "email": p.email, "webhook": p.webhook, "admin": p.admin}))
                    .collect();
                return print_json(&json!({"people": list}));
            }
            if people.is_empty() {
                return print_text("No accounts: kb serve answers as it always has.\n");
            }
            let lines: String = people
                .iter()
                .map(|p| {
                    let role = if p.admin { " (admin)" } else { "" };
                    let email = p.email.as_deref().map(|e| format!(" <{e}>")).unwrap_or_default();
                    format!("{}{role}{email}\n", p.name)
                })
                .collect();
            print_text(&lines)
        }
        UsersAction::Remove { name } => {
            let name = person_name(&name)?;
            if !accounts.remove(&name).await? {
                return Err(CliError::usage(format!("there is no account named {name}")));
            }
            if format.is_json() {
                return print_json(&json!({"removed": name.as_str()}));
            }
            print_text(&format!("{name} has no account any more; their tokens no longer work.\n"))
        }
    }
}

/// `kb tokens issue|list|revoke`.
pub async fn tokens(action: TokensAction, format: Format) -> Result<(), CliError> {
    let accounts = open(false).await?;
    let now = Utc::now();
    match action {
        TokensAction::Issue { name, label, expires, read_only } => {
            let name = person_name(&name)?;
            let expires_at = expires.map(|days| now + chrono::Duration::days(i64::from(days)));
            let request = TokenRequest { label, read_only, expires_at };
            let Some(token) = accounts.issue(&name, &request, now).await? else {
                return Err(CliError::usage(format!(
                    "there is no account named {name}: `kb users add {name}` first"
                )));
            };
            if format.is_json() {
                return print_json(&json!({"id": token.id, "token": token.secret, "person": name.as_str()}));
            }
            // The token alone on stdout (`T=$(kb tokens issue bo)`); the words on stderr.
            eprintln!(
                "The token for {name} (id {}). It is shown this once: kb keeps only its hash.",
                token.id
            );
            print_text(&format!("{}\n", token.secret))
        }
        TokensAction::List => {
            let tokens = accounts.tokens().await?;
            let state = |t: &kb_storage::accounts::TokenInfo| {
                if t.revoked_at.is_some() {
                    "revoked"
                } else if t.expires_at.is_some_and(|at| at <= now) {
                    "expired"
                } else {
                    "valid"
                }
            };
            if format.is_json() {
                let list: Vec<_> = tokens
                    .iter()
                    .map(|t| {
                        json!({"id": t.id, "person": t.person, "label": t.label, "state": state(t),
                               "createdAt": t.created_at, "expiresAt": t.expires_at, "lastUsedAt": t.last_used_at})
                    })
                    .collect();
                return print_json(&json!({"tokens": list}));
            }
            if tokens.is_empty() {
                return print_text("No tokens.\n");
            }
            let lines: String = tokens
                .iter()
                .map(|t| {
                    let used = t.last_used_at.map_or("never used".to_string(), |at| {
                        format!("last used {} UTC", at.format("%Y-%m-%d %H:%M"))
                    });
                    let expires = t
                        .expires_at
                        .map(|at| format!("  expires {} UTC", at.format("%Y-%m-%d %H:%M")))
                        .unwrap_or_default();
                    let label = shown(t.label.as_deref().unwrap_or("-"));
                    format!("{}  {}  {label}  {}  {used}{expires}\n", t.id, t.person, state(t))
                })
                .collect();
            print_text(&lines)
        }
        TokensAction::Revoke { id } => {
            if !accounts.revoke(&id, now).await? {
                return Err(CliError::usage(format!("there is no valid token with id {id}")));
            }
            if format.is_json() {
                return print_json(&json!({"revoked": id}));
            }
            print_text(&format!("Token {id} is revoked: refused from its next request on.\n"))
        }
    }
}
