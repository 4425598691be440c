//! Who may call `/api`: with `KB_API_TOKEN` set, requests carrying `Authorization: Bearer
//! TOKEN`; without one (loopback only), requests addressed to a loopback host name, so a
//! web page elsewhere cannot reach kb through DNS rebinding.

use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// Lets a request through when it carries the configured token, or, with no token
/// configured, when it is addressed to a loopback host.
pub async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(expected) = state.token.as_deref() else {
        let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
        if host.is_none_or(is_loopback_host) {
            return next.run(request).await;
        }
        return ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "without KB_API_TOKEN kb only answers requests addressed to localhost or a loopback address",
        )
        .into_response();
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => next.run(request).await,
        _ => ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this kb needs Authorization: Bearer <KB_API_TOKEN>",
        )
        .into_response(),
    }
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

/// Compares without returning early on the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::{constant_time_eq, is_loopback_host};

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
}
