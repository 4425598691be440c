//! Who may call `/api` and `/mcp`, and what a browser may send there.
//!
//! - A request whose `Origin` header names another site than the server it is addressed
//!   to (`Origin` host and port ≠ `Host`) is refused, token or not: a page elsewhere can
//!   make a browser send requests to kb, and this stops them before they change anything.
//! - With `KB_API_TOKEN` set, requests must carry `Authorization: Bearer TOKEN`; without
//!   one (loopback only), they must be addressed to a loopback host name, so a web page
//!   elsewhere cannot reach kb through DNS rebinding. `/healthz` follows the same Host rule
//!   without a token and is open with one.
//! - Once kb has accounts (`KB_DATA_DIR/server.sqlite`), every request to `/api` and `/mcp`
//!   must carry a person's own token, loopback included; a revoked or expired one is
//!   refused at its next request. The request then goes to the vault it names with its
//!   person's role there ([`crate::vaults::dispatch`]), which the route's rule checks
//!   ([`crate::roles`]).
//! - A `POST` to `/api` must say `Content-Type: application/json`, body or not: the forms
//!   another site's page can send without asking first (`text/plain`, form data) are
//!   refused.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// Guards `/api` and `/mcp`: refuses a request from another site's page, then lets it
/// through when it carries the configured token or, with no token configured, when it is
/// addressed to a loopback host.
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    // A refusal leaves the request's body unread, so the connection cannot carry another
    // request: the answer says so, or a client sending its next request down it finds
    // it dropped.
    let closing = leaves_body_unread(&request);
    let refused = |refusal: ApiError| {
        let mut response = refusal.into_response();
        if closing {
            response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    };
    if !origin_allowed(request.headers(), request.uri()) {
        return refused(foreign_origin());
    }
    // Inside a person's routes into a vault (the request was let in below): the role.
    if state.vault.is_some() {
        return match role_refusal(&state, &request) {
            Some(refusal) => refused(refusal),
            None => next.run(request).await,
        };
    }
    let accounts = state.accounts_now().await;
    if let Some(accounts) = accounts {
        return match crate::vaults::dispatch(&state, accounts, request).await {
            Ok(response) => response,
            Err(refusal) => refused(refusal),
        };
    }
    let Some(expected) = state.token.as_deref() else {
        if addressed_to_loopback(request.headers()) {
            return next.run(request).await;
        }
        return refused(foreign_host());
    };
    if carries_token(request.headers(), expected) {
        return next.run(request).await;
    }
    refused(ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this kb needs Authorization: Bearer <KB_API_TOKEN>",
    ))
}

/// Whether answering `request` before reading its body leaves the connection unusable:
/// an HTTP/1 request with a body (HTTP/2 streams end on their own).
fn leaves_body_unread(request: &Request) -> bool {
    let headers = request.headers();
    let length =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    request.version() <= axum::http::Version::HTTP_11
        && (length.is_some_and(|n| n > 0) || headers.contains_key(header::TRANSFER_ENCODING))
}

/// The refusal of a request whose person's role in the vault is below what its route
/// needs (see [`crate::roles`]); a route without a rule is refused to everyone.
fn role_refusal(state: &AppState, request: &Request) -> Option<ApiError> {
    let route = request.extensions().get::<axum::extract::MatchedPath>().map(|p| p.as_str().to_string());
    let needed = route.as_deref().and_then(|route| crate::roles::needed(request.method(), route));
    let role = state.actor.role();
    match needed {
        Some(needed) if role.allows(needed) => None,
        Some(needed) => Some(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_role",
            format!(
                "this needs the {needed} role in this vault, and this token acts here as a {role} (the person's role, \
                 or a read-only token): nothing was changed"
            ),
        )),
        None => {
            tracing::error!(route = ?route, method = %request.method(), "a route without a role rule was refused");
            Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_role",
                format!("this route has no role rule: it is refused ({route:?})"),
            ))
        }
    }
}

/// Guards `/healthz`: without a token it answers only requests addressed to a loopback
/// host, as `/api` does (it shows the model and the vault's counts); with a token it is
/// open to anyone.
pub async fn guard_health(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let accounts = state.accounts_now().await.is_some();
    if state.token.is_some() || accounts || addressed_to_loopback(request.headers()) {
        return next.run(request).await;
    }
    foreign_host().into_response()
}

/// Refuses a `POST` whose `Content-Type` is not `application/json` (parameters such as
/// `; charset=utf-8` allowed), with or without a body. Other methods pass.
pub async fn require_json_post(request: Request, next: Next) -> Response {
    // A file is sent with its own type (`POST /api/files` refuses the form types itself).
    let file = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .is_some_and(|p| p.as_str().ends_with("/files") || p.as_str().ends_with("/voice"));
    if request.method() != Method::POST || file || declares_json(request.headers()) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "a POST to /api must be sent with Content-Type: application/json, with or without a body",
    )
    .into_response()
}

/// 403 `forbidden_origin`.
fn foreign_origin() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden_origin",
        "kb refuses requests sent by a page of another site: the Origin header does not name this server",
    )
}

/// 403 `forbidden_host`.
fn foreign_host() -> ApiError {
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden_host",
        "without KB_API_TOKEN kb only answers requests addressed to localhost or a loopback address",
    )
}

/// Whether the request has `Authorization: Bearer <expected>`.
fn carries_token(headers: &HeaderMap, expected: &str) -> bool {
    bearer_secret(headers).is_some_and(|token| constant_time_eq(token.as_bytes(), expected.as_bytes()))
}

/// The token of `Authorization: Bearer <token>`, when the request carries one.
fn bearer_secret(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
}

/// The token of `Authorization: Bearer <token>`, when the request carries one.
pub(crate) fn bearer_of(headers: &HeaderMap) -> Option<&str> {
    bearer_secret(headers)
}

/// Whether the `Host` header names this machine (a request without one passes).
fn addressed_to_loopback(headers: &HeaderMap) -> bool {
    match headers.get(header::HOST) {
        None => true,
        Some(value) => value.to_str().is_ok_and(is_loopback_host),
    }
}

/// Whether every `Origin` header names the server the request is addressed to (the
/// `Host` header, or the request target's authority when there is none). A request
/// without `Origin` passes: browsers send one with every request a page of another site
/// makes that could change something.
fn origin_allowed(headers: &HeaderMap, uri: &Uri) -> bool {
    let mut origins = headers.get_all(header::ORIGIN).iter().peekable();
    if origins.peek().is_none() {
        return true;
    }
    let host = match headers.get(header::HOST) {
        Some(value) => value.to_str().ok(),
        None => uri.authority().map(|authority| authority.as_str()),
    };
    let Some(host) = host else { return false };
    origins.all(|origin| origin.to_str().is_ok_and(|origin| same_origin(origin, host)))
}

/// Whether `origin` (`scheme://host[:port]`) names the same host and port as `host` (a
/// `Host` header, `host[:port]`). A port left out is the scheme's default (80 for `http`,
/// 443 for `https`) on both sides. `null` (a sandboxed frame, a local file) and schemes
/// other than `http` and `https` never match.
fn same_origin(origin: &str, host: &str) -> bool {
    let Some((scheme, authority)) = origin.trim().split_once("://") else { return false };
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    let (Some(from), Some(to)) = (split_authority(authority), split_authority(host.trim())) else {
        return false;
    };
    from.0.eq_ignore_ascii_case(to.0) && from.1.unwrap_or(default_port) == to.1.unwrap_or(default_port)
}

/// Splits `host[:port]` (`[v6]:port` for IPv6) into the host name and the port, if any.
/// `None` for what is not a bare authority: user info, a path, an empty host, a port that
/// is not a number.
fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    if authority.contains(['/', '?', '#', '@', ' ']) {
        return None;
    }
    let (name, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        (name, after.strip_prefix(':').or(after.is_empty().then_some(""))?)
    } else {
        authority.split_once(':').unwrap_or((authority, ""))
    };
    if name.is_empty() {
        return None;
    }
    let port = if port.is_empty() { None } else { Some(port.parse::<u16>().ok()?) };
    Some((name, port))
}

/// Whether a `Host` header names this machine: `localhost`, `127.x.x.x` or `[::1]`, with
/// any port.
fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        host.rsplit_once(':').map_or(host, |(name, _port)| name)
    };
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a `Content-Type` header says `application/json`, with any parameters.
fn declares_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media_type| media_type.trim().eq_ignore_ascii_case("application/json"))
}

/// Compares without returning early on the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, Uri, header};

    use super::{
        constant_time_eq, declares_json, is_loopback_host, origin_allowed, same_origin, split_authority,
    };

    #[test]
    fn loopback_hosts() {
        for host in
            ["localhost", "localhost:8080", "127.0.0.1:8080", "127.1.2.3", "[::1]:8080", "[::1]", "LOCALHOST"]
        {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8080",
            "10.0.0.1:8080",
            "[2001:db8::1]:80",
            "localhost.evil.example",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn compares_tokens() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
    }

    #[test]
    fn an_origin_matches_the_host_it_names() {
        for (origin, host) in [
            ("http://127.0.0.1:8080", "127.0.0.1:8080"),
            ("http://localhost:8080", "LOCALHOST:8080"),
            ("http://192.168.1.20:8080", "192.168.1.20:8080"),
            ("http://[::1]:8080", "[::1]:8080"),
            ("http://kb.example", "kb.example"),
            ("http://kb.example", "kb.example:80"),
            ("http://kb.example:80", "kb.example"),
            ("https://kb.example", "kb.example"),
            ("https://kb.example", "kb.example:443"),
            ("HTTPS://KB.example:443", "kb.EXAMPLE"),
            (" http://kb.example:8080 ", "kb.example:8080"),
        ] {
            assert!(same_origin(origin, host), "{origin} for {host}");
        }
    }

    #[test]
    fn an_origin_of_another_site_or_port_does_not_match() {
        for (origin, host) in [
            ("http://evil.example", "127.0.0.1:8080"),
            ("http://evil.example:8080", "127.0.0.1:8080"),
            ("http://localhost:8080", "127.0.0.1:8080"),
            ("http://127.0.0.1:9090", "127.0.0.1:8080"),
            ("http://127.0.0.1", "127.0.0.1:8080"),
            ("http://kb.example", "kb.example:443"),
            ("https://kb.example", "kb.example:80"),
            ("https://kb.example:8443", "kb.example"),
            ("http://[::1]:8080", "127.0.0.1:8080"),
            ("null", "127.0.0.1:8080"),
            ("", "127.0.0.1:8080"),
            ("file://", "127.0.0.1:8080"),
            ("chrome-extension://abc", "abc"),
            ("ftp://127.0.0.1:8080", "127.0.0.1:8080"),
            ("http://127.0.0.1:8080/", "127.0.0.1:8080"),
            ("http://user@127.0.0.1:8080", "127.0.0.1:8080"),
            ("http://127.0.0.1:8080", "user@127.0.0.1:8080"),
            ("http://127.0.0.1:99999", "127.0.0.1:99999"),
            ("http://127.0.0.1:x", "127.0.0.1:x"),
            ("http://:8080", ":8080"),
        ] {
            assert!(!same_origin(origin, host), "{origin} for {host}");
        }
    }

    #[test]
    fn authorities_split_into_host_and_port() {
        assert_eq!(split_authority("kb.example"), Some(("kb.example", None)));
        assert_eq!(split_authority("kb.example:8080"), Some(("kb.example", Some(8080))));
        assert_eq!(split_authority("kb.example:"), Some(("kb.example", None)));
        assert_eq!(split_authority("[::1]:8080"), Some(("::1", Some(8080))));
        assert_eq!(split_authority("[::1]"), Some(("::1", None)));
        assert_eq!(split_authority("[::1]8080"), None);
        assert_eq!(split_authority("[::1"), None);
        assert_eq!(split_authority(""), None);
    }

    /// Headers from `(name, value)` pairs (a name may repeat).
    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn requests_are_allowed_by_their_origin_headers() {
        let uri = Uri::from_static("/api/undo");
        assert!(origin_allowed(&headers(&[(header::HOST, "127.0.0.1:8080")]), &uri));
        assert!(origin_allowed(&headers(&[]), &uri));
        let same = [(header::HOST, "127.0.0.1:8080"), (header::ORIGIN, "http://127.0.0.1:8080")];
        assert!(origin_allowed(&headers(&same), &uri));
        let evil = [(header::HOST, "127.0.0.1:8080"), (header::ORIGIN, "http://evil.example")];
        assert!(!origin_allowed(&headers(&evil), &uri));
        // Two Origin headers: each must match.
        let both = [
            (header::HOST, "127.0.0.1:8080"),
            (header::ORIGIN, "http://127.0.0.1:8080"),
            (header::ORIGIN, "http://evil.example"),
        ];
        assert!(!origin_allowed(&headers(&both), &uri));
        // Without Host, the request target's authority is the server (HTTP/2).
        let absolute = Uri::from_static("http://127.0.0.1:8080/api/undo");
        assert!(origin_allowed(&headers(&[(header::ORIGIN, "http://127.0.0.1:8080")]), &absolute));
        assert!(!origin_allowed(&headers(&[(header::ORIGIN, "http://evil.example")]), &absolute));
        // An Origin with nothing to compare it to is refused.
        assert!(!origin_allowed(&headers(&[(header::ORIGIN, "http://127.0.0.1:8080")]), &uri));
    }

    #[test]
    fn json_is_recognized_by_the_media_type() {
        for value in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON",
            " application/json ;x=y",
        ] {
            assert!(declares_json(&headers(&[(header::CONTENT_TYPE, value)])), "{value}");
        }
        assert!(!declares_json(&headers(&[])));
        for value in [
            "application/x-www-form-urlencoded",
            "text/plain",
            "multipart/form-data; boundary=x",
            "text/plain; application/json",
            "application/jsonp",
            "application/json-patch+json",
            "",
        ] {
            assert!(!declares_json(&headers(&[(header::CONTENT_TYPE, value)])), "{value}");
        }
    }
}
