//! Capture, search, digest, the entry list, health and the web page.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use kb_core::CaptureOptions;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ApiError, ApiJson, ApiQuery};
use crate::state::AppState;

/// A file of the web page, embedded in the binary and served at `path`.
struct PageFile {
    path: &'static str,
    content_type: &'static str,
    body: &'static str,
}

/// The web page: its HTML, styles and script, and the libraries it renders markdown with
/// (`src/page/vendor/README.md` names their versions and origin).
static PAGE_FILES: [PageFile; 5] = [
    PageFile {
        path: "/",
        content_type: "text/html; charset=utf-8",
        body: include_str!("../page/index.html"),
    },
    PageFile {
        path: "/page.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../page/page.css"),
    },
    PageFile {
        path: "/page.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../page/page.js"),
    },
    PageFile {
        path: "/vendor/marked.umd.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../page/vendor/marked.umd.js"),
    },
    PageFile {
        path: "/vendor/purify.min.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../page/vendor/purify.min.js"),
    },
];

/// What the page may load and run: only its own files (no inline script or style, no
/// other origin), fetches to kb itself, and it is never framed.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                           connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Body of `POST /api/capture`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct CaptureBody {
    text: String,
    hints: Option<String>,
    /// Add the capture to this entry (path or name) instead of filing a new one.
    merge_into: Option<String>,
    /// File a new entry even when a person or project of a like name exists.
    #[serde(default)]
    create_new: bool,
}

/// Query of `GET /api/search`.
#[derive(Debug, Deserialize)]
pub struct SearchQuery {
    q: Option<String>,
    category: Option<String>,
    limit: Option<u64>,
    /// Search as you type: the last word may be unfinished.
    prefix: Option<bool>,
}

/// Body of `POST /api/digest`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestBody {
    r#type: String,
}

/// `POST /api/capture {text, hints?, mergeInto?, createNew?}` → `{path, category, name,
/// confidence, clarificationNeeded, merged?}`.
pub async fn capture(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<CaptureBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    if body.text.len() > kb_core::MAX_MESSAGE_BYTES {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "text is longer than 32 KiB",
        ));
    }
    let options =
        CaptureOptions { hints: body.hints, merge_into: body.merge_into, create_new: body.create_new };
    Ok(ApiJson(state.assistant.entries().capture(&body.text, &options).await?))
}

/// `GET /api/search?q&category&limit` → `{entries, total}`.
pub async fn search(
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    let search = kb_core::SearchRequest {
        text: query.q.unwrap_or_default(),
        category: query.category,
        limit: query.limit,
        as_typed: query.prefix.unwrap_or(false),
    };
    Ok(ApiJson(state.assistant.entries().search(&search).await?))
}

/// `POST /api/digest {type}` → `{type, content}`.
pub async fn digest(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<DigestBody>,
) -> Result<ApiJson<impl Serialize>, ApiError> {
    Ok(ApiJson(state.assistant.entries().digest(&body.r#type).await?))
}

/// `GET /api/index`: the entry list (`index.md`) as `text/markdown`.
pub async fn entry_list(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
        state.assistant.entries().entry_list_markdown(),
    )
}

/// `GET /healthz`.
pub async fn healthz(State(state): State<AppState>) -> ApiJson<Value> {
    let health = state.assistant.health();
    let mut health = serde_json::to_value(crate::dto::HealthJson::from(&health)).unwrap_or_default();
    if let Value::Object(fields) = &mut health {
        let status = state.assistant.outreach().status().await;
        let outreach =
            serde_json::to_value(crate::dto::OutreachStatusJson::from(&status)).unwrap_or_default();
        fields.insert("outreach".into(), outreach);
    }
    ApiJson(health)
}

/// The routes of the web page: `/`, `/page.css`, `/page.js` and `/vendor/…`, open to anyone
/// (the API behind them asks for the token).
pub fn page_routes() -> Router<AppState> {
    PAGE_FILES.iter().fold(Router::new(), |router, file| {
        router.route(file.path, get(move |request: HeaderMap| page_file(file, request)))
    })
}

/// One file of the page. Browsers check back each time (`no-cache`, as a new kb binary may
/// bring new files at the same paths) and get 304 while the file's tag still matches.
async fn page_file(file: &'static PageFile, request: HeaderMap) -> Response {
    let etag = format!("\"{:016x}\"", fnv1a(file.body.as_bytes()));
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    let mut headers = HeaderMap::new();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    if file.content_type.starts_with("text/html") {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
    }
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(file.content_type));
    (headers, file.body).into_response()
}

/// The 64-bit FNV-1a hash of `bytes`: a file's version tag.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Any path kb does not serve.
pub async fn api_not_found() -> ApiError {
    ApiError::not_found("no such endpoint")
}

/// A known path asked with a method it does not answer.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "this endpoint does not answer that method",
    )
}
