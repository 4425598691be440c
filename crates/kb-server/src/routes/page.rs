//! The web page's files, embedded in the binary: the page itself (at `/`, and at `/share`
//! where a phone's share sheet sends what is shared), its styles and script, the libraries
//! it renders markdown with, and what makes it an installable app — the web app manifest,
//! the icons and the service worker that keeps the page for when kb cannot be reached.

use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

/// A file of the web page, served at `path`.
struct PageFile {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

/// The page's HTML, served at `/` and `/share`.
const INDEX_HTML: &[u8] = include_bytes!("../page/index.html");

/// The web page's files (`src/page/vendor/README.md` names the libraries' versions and
/// origin; `src/page/icons/make-icons.py` draws the icons).
static PAGE_FILES: [PageFile; 11] = [
    PageFile { path: "/", content_type: "text/html; charset=utf-8", body: INDEX_HTML },
    PageFile { path: "/share", content_type: "text/html; charset=utf-8", body: INDEX_HTML },
    PageFile {
        path: "/page.css",
        content_type: "text/css; charset=utf-8",
        body: include_bytes!("../page/page.css"),
    },
    PageFile {
        path: "/page.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../page/page.js"),
    },
    PageFile {
        path: "/vendor/marked.umd.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../page/vendor/marked.umd.js"),
    },
    PageFile {
        path: "/vendor/purify.min.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../page/vendor/purify.min.js"),
    },
    PageFile {
        path: "/manifest.webmanifest",
        content_type: "application/manifest+json",
        body: include_bytes!("../page/manifest.webmanifest"),
    },
    PageFile {
        path: "/sw.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_bytes!("../page/sw.js"),
    },
    PageFile {
        path: "/icons/kb-192.png",
        content_type: "image/png",
        body: include_bytes!("../page/icons/kb-192.png"),
    },
    PageFile {
        path: "/icons/kb-512.png",
        content_type: "image/png",
        body: include_bytes!("../page/icons/kb-512.png"),
    },
    PageFile {
        path: "/icons/kb.svg",
        content_type: "image/svg+xml",
        body: include_bytes!("../page/icons/kb.svg"),
    },
];

/// What the page may load and run: only its own files (no inline script or style, no
/// other origin), fetches to kb itself, its manifest and its service worker from kb, and
/// it is never framed.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                           connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; \
                           form-action 'self'; frame-ancestors 'none'";

/// What the service worker may do: fetch kb's own files, nothing else.
const WORKER_POLICY: &str = "default-src 'none'; connect-src 'self'";

/// The routes of the page's files, open to anyone (the API behind them asks for the token).
pub fn page_routes() -> Router<AppState> {
    PAGE_FILES.iter().fold(Router::new(), |router, file| {
        router.route(file.path, get(move |request: HeaderMap| page_file(file, request)))
    })
}

/// One file of the page. Browsers check back each time (`no-cache`, as a new kb binary may
/// bring new files at the same paths) and get 304 while the file's tag still matches.
async fn page_file(file: &'static PageFile, request: HeaderMap) -> Response {
    let etag = format!("\"{:016x}\"", super::fnv1a(file.body));
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
    if file.path == "/sw.js" {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(WORKER_POLICY));
    }
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(file.content_type));
    (headers, file.body).into_response()
}
