//! The vaults one `kb serve` serves once it has accounts ([`Served`]): each opened on its
//! first request (or at start, in the background), each person's routes into each vault
//! built once, and a request sent to the vault it names (`Kb-Vault`) with the role its
//! person has there.
//!
//! The vault `kb serve` is given is the first admin's own; any other is opened with the same
//! settings and its own database in its `.kb/`. Mail is filed in the served vault only. A
//! vault's scheduled digests go to the people who may use it: its owner's webhook, and the
//! addresses of everyone with access through the configured SMTP server.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use kb_core::domain::{Actor, PersonName, VaultRole};
use kb_core::{Assistant, Config};
use kb_storage::accounts::SqliteAccounts;
use kb_storage::accounts::vaults::{Access, VaultPlace, VaultRecord};
use tokio::sync::OnceCell;

use crate::state::AppState;

/// The header a request names its vault in (without it: the person's own).
pub const VAULT_HEADER: &str = "kb-vault";

/// Why a vault could not be served.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// Its folder could not be opened as a vault.
    #[error("the vault {name} could not be opened: {message}")]
    Unopened {
        /// The vault.
        name: String,
        /// Why, in words.
        message: String,
    },
}

/// One opened vault and what runs for it.
struct Opened {
    assistant: Arc<Assistant>,
    /// Its scheduled digests (aborted when the server stops).
    schedules: Option<tokio::task::JoinHandle<()>>,
    /// Where its digests go, as they were when it opened.
    recipients: Recipients,
    /// When `recipients` were last compared with the accounts.
    checked: Mutex<std::time::Instant>,
}

/// Where a vault's digests go: the addresses of its people, and its owner's webhook.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Recipients {
    addresses: Vec<String>,
    webhook: Option<String>,
}

/// How often a vault's recipients are compared with the accounts (at a request to it).
const RECIPIENTS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a vault closed here stays usable by the requests already under way.
const CLOSE_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Every vault a `kb serve` with accounts serves (see the module).
pub struct Served {
    /// The server's data folder (`KB_DATA_DIR`): relative vault paths are under it.
    data_dir: PathBuf,
    /// The vault `kb serve` is given, canonical.
    served_dir: PathBuf,
    /// The settings the served vault was opened with, for opening the others.
    config: Config,
    /// The state every person's routes start from (the served vault's).
    template: AppState,
    /// The vaults opened (or opening), by canonical folder: the served one is there from
    /// the start.
    opened: Mutex<HashMap<PathBuf, Arc<OnceCell<Opened>>>>,
    /// Each person's routes into each vault, with their role there.
    routes: Mutex<HashMap<(String, String, VaultRole), Router>>,
    /// Every folder opened here once: a person's own vault under the data folder is made
    /// on its first use only, never again after it went away.
    seen: Mutex<std::collections::HashSet<PathBuf>>,
    /// The requests each token may make per second (`KB_RATE_LIMIT`), when limited.
    rate: Option<crate::rate::RateLimit>,
    /// Sign-in links by email, when `KB_PUBLIC_URL` and an SMTP server are set.
    sign_in: Option<crate::sign_in::SignInLinks>,
    /// The uses of sign-in links, for everyone together.
    redeeming: crate::rate::RateLimit,
}

impl std::fmt::Debug for Served {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

impl Served {
    /// The vaults of a server whose data is in `data_dir`, serving `template`'s vault (opened
    /// with `config`) as the first admin's own.
    pub fn new(
        data_dir: PathBuf,
        config: Config,
        template: AppState,
        rate: Option<crate::rate::RateLimit>,
    ) -> Served {
        let served_dir = canonical(&config.kb_dir);
        let main = OnceCell::new_with(Some(Opened {
            assistant: Arc::clone(&template.assistant),
            schedules: None,
            recipients: Recipients::default(),
            checked: Mutex::new(std::time::Instant::now()),
        }));
        let opened = HashMap::from([(served_dir.clone(), Arc::new(main))]);
        Served {
            data_dir: canonical(&data_dir),
            served_dir,
            config,
            template,
            opened: Mutex::new(opened),
            routes: Mutex::new(HashMap::new()),
            seen: Mutex::new(std::collections::HashSet::new()),
            rate,
            sign_in: None,
            redeeming: crate::rate::RateLimit::sign_in(),
        }
    }

    /// The same, mailing sign-in links with `links`.
    pub fn with_sign_in(mut self, links: Option<crate::sign_in::SignInLinks>) -> Served {
        self.sign_in = links;
        self
    }

    /// The limit on using sign-in links.
    pub fn redeeming(&self) -> &crate::rate::RateLimit {
        &self.redeeming
    }

    /// How sign-in links are mailed, when they are.
    pub fn sign_in(&self) -> Option<&crate::sign_in::SignInLinks> {
        self.sign_in.as_ref()
    }

    /// The folder of `vault`.
    pub fn folder(&self, vault: &VaultRecord) -> PathBuf {
        match &vault.place {
            VaultPlace::Served => self.served_dir.clone(),
            place => canonical(&place.resolve(&self.data_dir, &self.served_dir)),
        }
    }

    /// The routes of `person` into the vault of `access`, with `role` there (their role,
    /// or less for a read-only token): built once, opening the vault on its first use.
    pub async fn routes_for(
        &self,
        accounts: &SqliteAccounts,
        person: &PersonName,
        access: &Access,
        role: VaultRole,
    ) -> Result<Router, VaultError> {
        let key = (person.as_str().to_string(), access.vault.name.clone(), role);
        if let Some(router) = lock(&self.routes).get(&key) {
            return Ok(router.clone());
        }
        let assistant = self.open(accounts, &access.vault).await?;
        let state = AppState {
            assistant,
            actor: Actor::person(person.clone(), role),
            vault: Some(Arc::from(access.vault.name.as_str())),
            ..self.template.clone()
        };
        let router = crate::routes::router(state);
        Ok(lock(&self.routes).entry(key).or_insert(router).clone())
    }

    /// Whether `record` was opened here and its folder is gone since (moved, unmounted):
    /// nothing is served from it, and nothing written, until it is back.
    pub fn gone(&self, record: &VaultRecord) -> bool {
        let folder = self.folder(record);
        let opened = lock(&self.opened).get(&folder).is_some_and(|cell| cell.initialized());
        opened && !folder.is_dir()
    }

    /// Closes `record`'s vault, whose folder is gone, and forgets its routes: when the
    /// folder is back it is opened afresh (its index and watcher cannot follow a folder
    /// that went away). The vault `kb serve` is given stays open: only a restart renews it.
    pub async fn forget(&self, record: &VaultRecord) {
        let folder = self.folder(record);
        if folder == self.served_dir {
            return;
        }
        tracing::warn!(vault = %record.name, folder = %folder.display(), "a vault's folder is gone: it is closed until it is back");
        self.retire(record);
    }

    /// Takes `record`'s vault out of service: its routes are forgotten and its schedules
    /// stopped at once, and it is closed once the requests already under way are done.
    fn retire(&self, record: &VaultRecord) {
        let folder = self.folder(record);
        let Some(cell) = lock(&self.opened).remove(&folder) else { return };
        lock(&self.routes).retain(|(_, vault, _), _| vault != &record.name);
        if let Some(opened) = cell.get() {
            if let Some(schedules) = &opened.schedules {
                schedules.abort();
            }
            let assistant = Arc::clone(&opened.assistant);
            tokio::spawn(async move {
                tokio::time::sleep(CLOSE_AFTER).await;
                assistant.close().await;
            });
        }
    }

    /// The vault `record`, opened (once, however many ask at the same time).
    async fn open(
        &self,
        accounts: &SqliteAccounts,
        record: &VaultRecord,
    ) -> Result<Arc<Assistant>, VaultError> {
        let folder = self.folder(record);
        let cell = Arc::clone(lock(&self.opened).entry(folder.clone()).or_default());
        let opened = cell
            .get_or_try_init(|| async {
                let unopened = |message: String| VaultError::Unopened { name: record.name.clone(), message };
                // A person's own vault under the data folder is made on its first use.
                if let VaultPlace::Folder(path) = &record.place
                    && path.is_relative()
                    && !folder.exists()
                    && !lock(&self.seen).contains(&folder)
                {
                    make_private(&folder)
                        .map_err(|e| unopened(format!("cannot make {}: {e}", folder.display())))?;
                }
                if !folder.is_dir() {
                    return Err(unopened(format!("{} is not a folder", folder.display())));
                }
                let mut config = self
                    .config
                    .for_vault(&folder, record.sync_remote.as_deref())
                    .map_err(|e| unopened(e.to_string()))?;
                let recipients = self.recipients(accounts, record).await;
                self.direct(&recipients, &mut config);
                tracing::info!(vault = %record.name, folder = %folder.display(), "opening a vault");
                let assistant = Assistant::open(config).await.map_err(|e| unopened(e.to_string()))?;
                let assistant = Arc::new(assistant);
                let schedules = Some(assistant.start_schedules());
                lock(&self.seen).insert(folder.clone());
                Ok(Opened {
                    assistant,
                    schedules,
                    recipients,
                    checked: Mutex::new(std::time::Instant::now()),
                })
            })
            .await?;
        Ok(Arc::clone(&opened.assistant))
    }

    /// Where `record`'s digests go now: the addresses of everyone who may use it, and its
    /// owner's webhook.
    async fn recipients(&self, accounts: &SqliteAccounts, record: &VaultRecord) -> Recipients {
        let people = accounts.people().await.unwrap_or_default();
        let grants = accounts.grants(&record.name).await.unwrap_or_default();
        let may_use =
            |name: &str| record.owner.as_deref() == Some(name) || grants.iter().any(|(p, _)| p == name);
        let addresses =
            people.iter().filter(|p| may_use(p.name.as_str())).filter_map(|p| p.email.clone()).collect();
        let owner = people.iter().find(|p| record.owner.as_deref() == Some(p.name.as_str()));
        Recipients { addresses, webhook: owner.and_then(|p| p.webhook.clone()) }
    }

    /// Sends a vault's digests to `recipients`: by email through the configured SMTP server,
    /// and to the webhook.
    fn direct(&self, recipients: &Recipients, config: &mut Config) {
        if let Some(email) = &self.config.outreach.email
            && !recipients.addresses.is_empty()
        {
            config.outreach.email =
                Some(kb_core::outreach::EmailConfig { to: recipients.addresses.join(", "), ..email.clone() });
        }
        if let Some(url) = recipients.webhook.clone() {
            config.outreach.webhook =
                Some(kb_core::outreach::WebhookConfig { url, format: "json".to_string() });
        }
    }

    /// Compares `record`'s recipients with the accounts, at most every few seconds: when
    /// its people changed (a grant given or taken, an address), the vault is opened again
    /// with them, so a digest never goes to someone who may no longer use it.
    pub async fn recheck(&self, accounts: &SqliteAccounts, record: &VaultRecord) {
        let folder = self.folder(record);
        let cell = lock(&self.opened).get(&folder).cloned();
        let Some(opened) = cell.as_ref().and_then(|cell| cell.get()) else { return };
        if folder == self.served_dir {
            return;
        }
        {
            let mut checked = lock(&opened.checked);
            if checked.elapsed() < RECIPIENTS_EVERY {
                return;
            }
            *checked = std::time::Instant::now();
        }
        if self.recipients(accounts, record).await == opened.recipients {
            return;
        }
        tracing::info!(vault = %record.name, "who gets a vault's digests changed: it is opened again");
        self.retire(record);
        if let Err(error) = self.open(accounts, record).await {
            tracing::warn!(%error, "a vault was not opened again");
        }
    }

    /// Opens every vault in the background, so each one's scheduled digests run from the
    /// start; one that cannot be opened is logged, and tried again at its next request.
    pub fn open_all(self: &Arc<Served>, accounts: SqliteAccounts) {
        let served = Arc::clone(self);
        tokio::spawn(async move {
            let vaults = match accounts.vaults().await {
                Ok(vaults) => vaults,
                Err(error) => return tracing::warn!(%error, "the vaults could not be listed"),
            };
            for vault in vaults {
                if let Err(error) = served.open(&accounts, &vault).await {
                    tracing::warn!(%error, "a vault was not opened");
                }
            }
        });
    }

    /// Closes every vault opened here (not the served one: its owner closes it).
    pub async fn close(&self) {
        let opened: Vec<_> = lock(&self.opened).drain().map(|(_, cell)| cell).collect();
        for cell in opened {
            if let Some(opened) = cell.get()
                && let Some(schedules) = &opened.schedules
            {
                schedules.abort();
                opened.assistant.close().await;
            }
        }
        lock(&self.routes).clear();
    }
}

/// Makes `folder` (a person's own vault, with any missing parents), readable by this
/// user only: `kb users add` and a first request make it alike.
pub fn make_private(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// `path` made canonical when it can be (else as given).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The lock of `mutex`, even after a panic elsewhere (the maps stay usable).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How often an open event stream's token and grant are checked again.
const RECHECK_EVERY: std::time::Duration = std::time::Duration::from_secs(4);

/// Sends a request to a kb with accounts on: checks its person's token, finds the vault it
/// names (`Kb-Vault`, else the person's own) and their role there, and answers it with
/// that person's routes into that vault. A vault they may not use answers 404 as one
/// that does not exist.
pub async fn dispatch(
    state: &AppState,
    accounts: &SqliteAccounts,
    request: axum::extract::Request,
) -> Result<axum::response::Response, crate::error::ApiError> {
    use axum::http::StatusCode;
    use tower::ServiceExt;

    use crate::error::ApiError;

    // Two of either header (one added by a proxy on the way) leave who or where unclear.
    for name in [axum::http::header::AUTHORIZATION.as_str(), VAULT_HEADER] {
        if request.headers().get_all(name).iter().count() > 1 {
            return Err(ApiError::bad_request(format!("send one {name} header, not several")));
        }
    }
    let Some(secret) = crate::auth::bearer_of(request.headers()).map(str::to_string) else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this kb has accounts: send Authorization: Bearer <your token> (an admin issues one with `kb tokens issue NAME`)",
        ));
    };
    let internal = |error: kb_core::domain::StoreError| {
        tracing::error!(%error, "the accounts could not be read");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the accounts could not be read")
    };
    let Some(bearer) = accounts.check(&secret, chrono::Utc::now()).await.map_err(internal)? else {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this token is unknown, revoked or expired: ask an admin for a new one",
        ));
    };
    let Some(served) = &state.vaults else {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "this server serves no vaults",
        ));
    };
    if let Some(wait) =
        served.rate.as_ref().and_then(|rate| rate.take(&bearer.token, std::time::Instant::now()))
    {
        return Err(ApiError {
            retry_after: Some(wait),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "this token sent more requests than KB_RATE_LIMIT allows: wait and send again",
            )
        });
    }
    let person = PersonName::parse(&bearer.person).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the token's person has an unusable name",
        )
    })?;
    let asked = request
        .headers()
        .get(VAULT_HEADER)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_ascii_lowercase());
    let read_only = bearer.read_only;
    // The list of vaults needs none of them (a person may have no vault of their own).
    let original = request.extensions().get::<axum::extract::OriginalUri>().map(|o| o.0.path().to_string());
    if request.method() == axum::http::Method::GET && original.as_deref() == Some("/api/vaults") {
        let listed =
            crate::routes::vaults::listing(accounts, person.as_str(), asked.as_deref(), read_only).await?;
        return Ok(axum::response::IntoResponse::into_response(crate::error::ApiJson(listed)));
    }
    let no_vault = || match &asked {
        Some(name) => ApiError::new(
            StatusCode::NOT_FOUND,
            "vault_not_found",
            format!("there is no vault {:?} for you", name.chars().take(64).collect::<String>()),
        ),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            "vault_not_found",
            "you have no vault of your own: name one in Kb-Vault",
        ),
    };
    if asked.as_deref().is_some_and(|name| kb_core::domain::VaultName::parse(name).is_err()) {
        return Err(no_vault());
    }
    let Some(access) = accounts.access(person.as_str(), asked.as_deref()).await.map_err(internal)? else {
        return Err(no_vault());
    };
    let role = if read_only { access.role.min(VaultRole::Reader) } else { access.role };
    if served.gone(&access.vault) {
        served.forget(&access.vault).await;
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "vault_unavailable",
            format!("the vault {} cannot be used now: its folder is gone", access.vault.name),
        ));
    }
    // Whether its digests still go to the right people is looked at beside the request.
    let (rechecking, accounts_now, record) = (Arc::clone(served), accounts.clone(), access.vault.clone());
    tokio::spawn(async move { rechecking.recheck(&accounts_now, &record).await });
    let router = served.routes_for(accounts, &person, &access, role).await.map_err(|error| {
        tracing::error!(%error, "a vault could not be served");
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "vault_unavailable", error.to_string())
    })?;
    // The person's routes see the request afresh: its whole path (nested under `/api` it
    // lost its prefix) and none of what routing here left on it (a matched path, the
    // path's parameters).
    let (parts, body) = request.into_parts();
    let uri = parts.extensions.get::<axum::extract::OriginalUri>().map_or(parts.uri, |o| o.0.clone());
    let mut request = axum::extract::Request::new(body);
    *request.method_mut() = parts.method;
    *request.uri_mut() = uri;
    *request.version_mut() = parts.version;
    *request.headers_mut() = parts.headers;
    let response = match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let vault = asked;
    Ok(until_refused(response, accounts.clone(), secret, vault))
}

/// `response`, cut when its token stops speaking for anyone (revoked, expired, its person
/// removed) or its person may no longer use the vault, when it is an event stream (an MCP
/// client's `GET /mcp`): what is refused at the next request must not keep hearing of the
/// vault's changes on a stream opened before. Other responses are as they are.
fn until_refused(
    response: axum::response::Response,
    accounts: SqliteAccounts,
    secret: String,
    vault: Option<String>,
) -> axum::response::Response {
    use futures_util::StreamExt;
    let streaming = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !streaming {
        return response;
    }
    let refused = async move {
        loop {
            tokio::time::sleep(RECHECK_EVERY).await;
            let still = match accounts.check(&secret, chrono::Utc::now()).await {
                Ok(Some(bearer)) => {
                    !matches!(accounts.access(&bearer.person, vault.as_deref()).await, Ok(None))
                }
                Ok(None) => false,
                // The database busy for a moment is no reason to end a stream.
                Err(_) => true,
            };
            if !still {
                tracing::info!("an event stream's token or grant no longer holds: the stream ends");
                return;
            }
        }
    };
    let (parts, body) = response.into_parts();
    let body = axum::body::Body::from_stream(body.into_data_stream().take_until(refused));
    axum::response::Response::from_parts(parts, body)
}
