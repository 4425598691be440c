//! The one rule on where a browser says a request comes from: a request that may change
//! something (`POST`, `PUT`, `PATCH`, `DELETE`) whose `Sec-Fetch-Site` header is present
//! and not `same-origin` or `none` is refused with 403 `forbidden_site`, on every route.
//!
//! Browsers add `Sec-Fetch-Site` to every request and a page cannot set or remove it:
//! `same-origin` is kb's own page, `none` something the person did themselves (an address
//! typed, a bookmark), `same-site` a page of the same host on another port (another
//! server on this machine, a dev server, a page on `localhost:3000`), `cross-site` a page
//! of any other site. Clients that are not browsers (curl, the SDKs, MCP clients, kb's own
//! commands) send no such header and are not concerned. This stands beside the `Origin`
//! rule of [`crate::auth`], which guards `/api` and `/mcp` for every method.

use axum::extract::Request;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The request header where a browser says which site made the request.
const SEC_FETCH_SITE: &str = "sec-fetch-site";

/// Refuses a request that may change something when a browser says another site, or
/// another port of this one, made it; passes every other request.
pub async fn refuse_other_sites(request: Request, next: Next) -> Response {
    if !changes_something(request.method()) || from_this_page_or_the_person(request.headers()) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::FORBIDDEN,
        "forbidden_site",
        "kb refuses changes sent by a page of another site or port: the browser's Sec-Fetch-Site \
         header is not same-origin",
    )
    .into_response()
}

/// Whether a request with `method` may change something.
fn changes_something(method: &Method) -> bool {
    [Method::POST, Method::PUT, Method::PATCH, Method::DELETE].contains(method)
}

/// Whether every `Sec-Fetch-Site` header is `same-origin` or `none` (in any case), or there
/// is none.
fn from_this_page_or_the_person(headers: &HeaderMap) -> bool {
    headers.get_all(SEC_FETCH_SITE).iter().all(|value| {
        value.to_str().is_ok_and(|site| {
            site.trim().eq_ignore_ascii_case("same-origin") || site.trim().eq_ignore_ascii_case("none")
        })
    })
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, Method};

    use super::{SEC_FETCH_SITE, changes_something, from_this_page_or_the_person};

    /// Headers with one `Sec-Fetch-Site` header per value.
    fn sites(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(SEC_FETCH_SITE, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn this_page_the_person_and_clients_without_the_header_pass() {
        for values in [&[][..], &["same-origin"], &["none"], &["Same-Origin"], &[" none "]] {
            assert!(from_this_page_or_the_person(&sites(values)), "{values:?}");
        }
    }

    #[test]
    fn other_sites_and_other_ports_are_refused() {
        for values in [
            &["cross-site"][..],
            &["same-site"],
            &[""],
            &["same-origin, cross-site"],
            &["same-origin", "cross-site"],
            &["something-new"],
        ] {
            assert!(!from_this_page_or_the_person(&sites(values)), "{values:?}");
        }
    }

    #[test]
    fn only_methods_that_may_change_something_are_checked() {
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(changes_something(&method), "{method}");
        }
        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!changes_something(&method), "{method}");
        }
    }
}
