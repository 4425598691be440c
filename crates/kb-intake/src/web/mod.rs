//! [`WebReader`]: the [`PageReader`] that fetches a link's page and makes it readable.
//!
//! Safe by construction: only `http` and `https`; proxy variables ignored; the host is
//! resolved here (through a [`HostResolver`]) and every address checked
//! ([`address::refusal`]) before the connection, which goes only to the addresses checked;
//! each redirect is checked the same way, at most [`MAX_REDIRECTS`] of them. The whole fetch
//! has one deadline and the body a size limit, checked against `Content-Length` before
//! reading and while reading. Nothing is decompressed (kb asks for no encoding).

pub mod address;
mod readable;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use kb_domain::cause::SharedCause;
use kb_domain::{PageError, PageReader, WebPage};
use tokio::time::Instant;
use url::Url;

pub use readable::{Readable, readable_page};

/// How many redirects a fetch follows.
pub const MAX_REDIRECTS: usize = 5;

/// The limits of a fetch (`KB_FETCH_TIMEOUT_SECS`, `KB_FETCH_MAX_BYTES`,
/// `KB_FETCH_ALLOW_PRIVATE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchSettings {
    /// The time the whole fetch may take, redirects and body included.
    pub timeout: Duration,
    /// The largest body read.
    pub max_bytes: u64,
    /// Whether addresses off the public internet may be fetched.
    pub allow_private: bool,
}

impl Default for FetchSettings {
    fn default() -> FetchSettings {
        FetchSettings { timeout: Duration::from_secs(10), max_bytes: 5 * 1024 * 1024, allow_private: false }
    }
}

/// Turns a host name into addresses: the system's resolver in kb, one that answers what a
/// test says in tests.
#[async_trait]
pub trait HostResolver: Send + Sync {
    /// The addresses of `host`, with `port`.
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The system's resolver (`getaddrinfo`, through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl HostResolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// Reads web pages safely; see the module's documentation.
#[derive(Clone)]
pub struct WebReader {
    settings: FetchSettings,
    resolver: Arc<dyn HostResolver>,
    /// Addresses taken as public although they are not (tests serving "public" pages on
    /// loopback).
    taken_as_public: Vec<IpAddr>,
}

impl std::fmt::Debug for WebReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebReader").field("settings", &self.settings).finish_non_exhaustive()
    }
}

/// A fetched body and what the server said it is.
struct Fetched {
    url: Url,
    content_type: Option<String>,
    body: Vec<u8>,
}

impl WebReader {
    /// A reader with these limits, resolving names with the system's resolver.
    pub fn new(settings: FetchSettings) -> WebReader {
        WebReader::with_resolver(settings, Arc::new(SystemResolver))
    }

    /// A reader resolving names with `resolver`.
    pub fn with_resolver(settings: FetchSettings, resolver: Arc<dyn HostResolver>) -> WebReader {
        WebReader { settings, resolver, taken_as_public: Vec::new() }
    }

    /// The same reader, taking `ip` as a public address: for tests that serve a page meant
    /// to be on the internet from loopback, while every other address keeps its rule.
    pub fn taking_as_public(mut self, ip: IpAddr) -> WebReader {
        self.taken_as_public.push(ip);
        self
    }

    /// Fetches `first`, following redirects, within the deadline.
    async fn fetch(&self, first: &str) -> Result<Fetched, PageError> {
        let deadline = Instant::now() + self.settings.timeout;
        let timed_out =
            || PageError::TimedOut { url: first.to_string(), secs: self.settings.timeout.as_secs() };
        match tokio::time::timeout_at(deadline, self.follow(first, deadline)).await {
            Ok(result) => result,
            Err(_) => Err(timed_out()),
        }
    }

    async fn follow(&self, first: &str, deadline: Instant) -> Result<Fetched, PageError> {
        let mut url = Url::parse(first.trim()).map_err(|e| refused(first, &format!("not a URL ({e})")))?;
        for _ in 0..=MAX_REDIRECTS {
            let response = self.request(&url, deadline).await?;
            let status = response.status();
            if status.is_redirection()
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                let location =
                    location.to_str().map_err(|_| refused(url.as_str(), "its redirect is not a URL"))?;
                url = url
                    .join(location)
                    .map_err(|e| refused(url.as_str(), &format!("its redirect is not a URL ({e})")))?;
                continue;
            }
            if !status.is_success() {
                return Err(PageError::Status { url: url.to_string(), status: status.as_u16() });
            }
            return self.body(url, response).await;
        }
        Err(PageError::TooManyRedirects { url: first.to_string(), limit: MAX_REDIRECTS })
    }

    /// One request, to an address checked first.
    async fn request(&self, url: &Url, deadline: Instant) -> Result<reqwest::Response, PageError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refused(url.as_str(), "only http and https links are read"));
        }
        // A password in a link would be sent, and kept in the note: such a link is not read.
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refused(
                &without_credentials(url),
                "it carries a user name or password, which kb would keep in the note",
            ));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        let mut client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(NoResolver)
            .user_agent(concat!("kb/", env!("CARGO_PKG_VERSION"), " (link capture)"))
            .timeout(deadline.saturating_duration_since(Instant::now()));
        match url.host() {
            Some(url::Host::Ipv4(ip)) => self.check(url, IpAddr::V4(ip))?,
            Some(url::Host::Ipv6(ip)) => self.check(url, IpAddr::V6(ip))?,
            Some(url::Host::Domain(host)) => {
                let addresses =
                    self.resolver.resolve(host, port).await.map_err(|e| PageError::Unreachable {
                        url: url.to_string(),
                        detail: format!("its host {host} was not found"),
                        cause: Some(SharedCause::new(e)),
                    })?;
                if addresses.is_empty() {
                    return Err(unreachable(url, &format!("its host {host} has no address")));
                }
                for address in &addresses {
                    self.check(url, address.ip())?;
                }
                client = client.resolve_to_addrs(host, &addresses);
            }
            None => return Err(refused(url.as_str(), "it names no host")),
        }
        let client = client.build().map_err(|e| PageError::Unreachable {
            url: url.to_string(),
            detail: "the HTTP client could not start".to_string(),
            cause: Some(SharedCause::new(e)),
        })?;
        client
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
            .send()
            .await
            .map_err(|e| transport(url, e, self.settings.timeout))
    }

    /// Refuses an address off the public internet, unless they are allowed.
    fn check(&self, url: &Url, ip: IpAddr) -> Result<(), PageError> {
        match address::refusal(ip) {
            Some(reason) if !self.settings.allow_private && !self.taken_as_public.contains(&ip) => {
                Err(refused(url.as_str(), &format!("{ip} is {reason} (KB_FETCH_ALLOW_PRIVATE=1 allows it)")))
            }
            _ => Ok(()),
        }
    }

    /// Reads the body, refusing one over the size limit (by its `Content-Length` first).
    async fn body(&self, url: Url, mut response: reqwest::Response) -> Result<Fetched, PageError> {
        let limit = self.settings.max_bytes;
        let too_large = || PageError::TooLarge { url: url.to_string(), limit };
        if response.content_length().is_some_and(|length| length > limit) {
            return Err(too_large());
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        // kb asks for no compression; a body compressed all the same is not read as text.
        let encoded = response
            .headers()
            .get(reqwest::header::CONTENT_ENCODING)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| !value.trim().eq_ignore_ascii_case("identity"));
        let content_type = if encoded { Some("application/octet-stream".to_string()) } else { content_type };
        let mut body = Vec::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|e| transport(&url, e, self.settings.timeout))?
        {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched { url, content_type, body })
    }
}

#[async_trait]
impl PageReader for WebReader {
    async fn read(&self, url: &str) -> Result<WebPage, PageError> {
        let fetched = self.fetch(url).await?;
        let page_url = fetched.url.to_string();
        let readable = tokio::task::spawn_blocking(move || {
            readable_page(&fetched.body, fetched.content_type.as_deref(), &fetched.url)
        })
        .await
        .unwrap_or_else(|_| Readable::default());
        Ok(WebPage { url: page_url, title: readable.title, markdown: readable.markdown })
    }
}

/// A resolver that resolves nothing: the client connects only to the addresses a request
/// was given ([`reqwest::ClientBuilder::resolve_to_addrs`]), never to a name looked up
/// behind the check.
struct NoResolver;

impl reqwest::dns::Resolve for NoResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(
            async move { Err(Box::new(std::io::Error::other(format!("{host} was not checked"))) as Box<_>) },
        )
    }
}

/// `url` without its user name and password, to be shown.
fn without_credentials(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

fn refused(url: &str, reason: &str) -> PageError {
    PageError::Refused { url: url.to_string(), reason: reason.to_string() }
}

fn unreachable(url: &Url, detail: &str) -> PageError {
    PageError::Unreachable { url: url.to_string(), detail: detail.to_string(), cause: None }
}

/// The HTTP client's failure, in a few words.
fn transport(url: &Url, error: reqwest::Error, timeout: Duration) -> PageError {
    if error.is_timeout() {
        return PageError::TimedOut { url: url.to_string(), secs: timeout.as_secs() };
    }
    let detail = if error.is_connect() { "no connection could be made" } else { "the answer broke off" };
    PageError::Unreachable {
        url: url.to_string(),
        detail: detail.to_string(),
        cause: Some(SharedCause::new(error)),
    }
}
