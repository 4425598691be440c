//! Sign-in links by email, for a kb with accounts, `KB_PUBLIC_URL` and an SMTP server:
//! `POST /api/sign-in {name}` mails the person a link to `KB_PUBLIC_URL/#sign-in=CODE`
//! (never to the address the request came to), and the page, opened there, uses it up
//! with `POST /api/sign-in/redeem {code}` for a token labelled `sign-in`.
//!
//! The link's code is in the fragment, which browsers never send: a mail scanner that
//! opens the link fetches the page and uses nothing up. Asking answers the same whether the
//! name has an account or not, sends at most three links per person a quarter hour, and
//! both routes are rate-limited for everyone together.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kb_core::outreach::EmailConfig;
use serde::Deserialize;
use serde_json::json;

use crate::error::{ApiError, ApiJson};
use crate::rate::RateLimit;
use crate::state::AppState;

/// Why `KB_PUBLIC_URL` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("KB_PUBLIC_URL takes the page's address as people reach it, like https://kb.example.org, not {0:?}")]
pub struct BadPublicUrl(pub String);

/// How sign-in links are made and sent.
#[derive(Debug)]
pub struct SignInLinks {
    /// The page's address, without a trailing `/`.
    public_url: String,
    /// The SMTP server and sender.
    email: EmailConfig,
    /// Asks and uses, for everyone together.
    limit: RateLimit,
}

impl SignInLinks {
    /// The links `KB_PUBLIC_URL` (`public_url`) and the SMTP settings (`email`) allow:
    /// `None` without either (a warning says what is missing when only one is set).
    pub fn from_settings(
        public_url: Option<&str>,
        email: Option<&EmailConfig>,
    ) -> Result<Option<SignInLinks>, BadPublicUrl> {
        let Some(public_url) = public_url.map(str::trim).filter(|u| !u.is_empty()) else { return Ok(None) };
        let bad = || BadPublicUrl(public_url.to_string());
        let parsed = public_url.parse::<axum::http::Uri>().map_err(|_| bad())?;
        let authority = parsed.authority().ok_or_else(bad)?;
        if !matches!(parsed.scheme_str(), Some("http" | "https"))
            || authority.as_str().contains('@')
            || parsed.query().is_some()
        {
            return Err(bad());
        }
        let Some(email) = email else {
            tracing::warn!("KB_PUBLIC_URL is set without KB_SMTP_URL: no sign-in link can be mailed");
            return Ok(None);
        };
        let limit =
            RateLimit::from_setting(Some("2")).ok().flatten().ok_or_else(|| BadPublicUrl(String::new()))?;
        Ok(Some(SignInLinks {
            public_url: public_url.trim_end_matches('/').to_string(),
            email: email.clone(),
            limit,
        }))
    }
}

/// `POST /api/sign-in` asks for a link for `name`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    name: String,
}

/// `POST /api/sign-in/redeem` uses the link of `code`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedeemBody {
    code: String,
}

/// The accounts and the link settings, when this kb has both.
async fn set_up(state: &AppState) -> Result<(kb_storage::accounts::SqliteAccounts, &SignInLinks), ApiError> {
    let off = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "sign_in_off",
            "this kb sends no sign-in links: it needs accounts, KB_PUBLIC_URL and KB_SMTP_URL; paste a token instead",
        )
    };
    let links = state.vaults.as_ref().and_then(|served| served.sign_in()).ok_or_else(off)?;
    let accounts = state.accounts_now().await.cloned();
    Ok((accounts.ok_or_else(off)?, links))
}

/// Uses of sign-in links when no server state keeps its own count (never in `kb serve`).
static REDEEMING: std::sync::LazyLock<RateLimit> = std::sync::LazyLock::new(RateLimit::sign_in);

/// 429 for a route asked too often.
fn too_often(wait: u64) -> ApiError {
    ApiError {
        retry_after: Some(wait),
        ..ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "sign-in is asked for too often: wait and try again",
        )
    }
}

/// `POST /api/sign-in {name}` → 202, the same answer whoever `name` is: the link is made and
/// mailed afterwards, to the person's own address.
pub async fn ask(State(state): State<AppState>, ApiJson(body): ApiJson<AskBody>) -> Response {
    let (accounts, links) = match set_up(&state).await {
        Ok(set) => set,
        Err(error) => return error.into_response(),
    };
    if let Some(wait) = links.limit.take("ask", std::time::Instant::now()) {
        return too_often(wait).into_response();
    }
    let name = body.name.trim().to_ascii_lowercase();
    let (public_url, email) = (links.public_url.clone(), links.email.clone());
    // Made and sent apart from the answer, so its time says nothing about the name.
    tokio::spawn(async move {
        let link = match accounts.sign_in_link(&name, chrono::Utc::now()).await {
            Ok(Some(link)) => link,
            Ok(None) => return,
            Err(error) => return tracing::error!(%error, "a sign-in link could not be made"),
        };
        let text = format!(
            "Open this link to sign in to kb:\n\n{public_url}/#sign-in={code}\n\nIt works once, for 15 minutes. \
             If you did not ask for it, ignore this mail: nothing happens without the link.\n",
            code = link.code
        );
        match kb_core::outreach::send_plain(&email, &link.email, "Sign in to kb", &text).await {
            Ok(()) => tracing::info!(person = %name, "a sign-in link was mailed"),
            Err(error) => tracing::warn!(%error, person = %name, "a sign-in link could not be mailed"),
        }
    });
    (
        StatusCode::ACCEPTED,
        ApiJson(json!({
            "asked": true,
            "message": "If this name has an account with an email address, a sign-in link is on its way. It works once, for 15 minutes.",
        })),
    )
        .into_response()
}

/// `POST /api/sign-in/redeem {code}` → `{person, token}`: a new token labelled `sign-in`;
/// 410 `sign_in_link_spent` for a link used already, expired, or never made.
pub async fn redeem(State(state): State<AppState>, ApiJson(body): ApiJson<RedeemBody>) -> Response {
    // A link made while links were mailed still works after they stop being.
    let accounts = state.accounts_now().await.cloned();
    let Some(accounts) = accounts else {
        return ApiError::new(StatusCode::NOT_FOUND, "sign_in_off", "this kb has no accounts to sign in to")
            .into_response();
    };
    let limit: &RateLimit = state.vaults.as_ref().map_or(&*REDEEMING, |served| served.redeeming());
    if let Some(wait) = limit.take("redeem", std::time::Instant::now()) {
        return too_often(wait).into_response();
    }
    match accounts.use_sign_in_link(&body.code, chrono::Utc::now()).await {
        Ok(Some(signed)) => {
            ApiJson(json!({"person": signed.person, "token": signed.token.secret, "id": signed.token.id}))
                .into_response()
        }
        Ok(None) => ApiError::new(
            StatusCode::GONE,
            "sign_in_link_spent",
            "this sign-in link was used already, has expired, or is not one: ask for a new one",
        )
        .into_response(),
        Err(error) => {
            tracing::error!(%error, "a sign-in link could not be used");
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "the accounts could not be read")
                .into_response()
        }
    }
}
