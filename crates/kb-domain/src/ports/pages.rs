//! The web page port: [`PageReader`] reads the page a link leads to, for a capture that is
//! only a link, and [`PageError`], why it could not: each failure files nothing.

use async_trait::async_trait;

use crate::cause::SharedCause;

/// A page read for a link: where it ended up, its title and its readable text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebPage {
    /// The URL the page was found at, after any redirects.
    pub url: String,
    /// The page's title, when it has one.
    pub title: Option<String>,
    /// The page's readable text as Markdown (its article, without menus and footers);
    /// `None` when the page had none kb could read (an image, a script-only page).
    pub markdown: Option<String>,
}

/// Reads web pages (kb-intake's reader: safe addresses only, bounded in time and size).
#[async_trait]
pub trait PageReader: Send + Sync {
    /// The page at `url` (`http` or `https`).
    async fn read(&self, url: &str) -> Result<WebPage, PageError>;
}

/// Why a page was not read. Where the failure came from an error underneath (the HTTP
/// client's), that error is kept as the `source()`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// kb will not fetch it: not `http`/`https`, or an address on a private network
    /// (loopback, private, link-local, …) unless `KB_FETCH_ALLOW_PRIVATE=1`.
    #[error("kb does not fetch {url}: {reason}")]
    Refused {
        /// The URL refused (the first, or the redirect that led there).
        url: String,
        /// Why, in a few words.
        reason: String,
    },
    /// The page could not be fetched: no such host, no connection, a failed answer.
    #[error("{url} could not be fetched: {detail}")]
    Unreachable {
        /// The URL.
        url: String,
        /// What went wrong, in a few words.
        detail: String,
        /// The error underneath, when there is one.
        #[source]
        cause: Option<SharedCause>,
    },
    /// The server answered with a status that is not a page (404, 500, …).
    #[error("{url} answered {status}")]
    Status {
        /// The URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The page is larger than `KB_FETCH_MAX_BYTES`.
    #[error("{url} is larger than {limit} bytes (KB_FETCH_MAX_BYTES)")]
    TooLarge {
        /// The URL.
        url: String,
        /// The limit, in bytes.
        limit: u64,
    },
    /// More redirects than kb follows (a loop, or a chain too long).
    #[error("{url} redirects more than {limit} times")]
    TooManyRedirects {
        /// The first URL.
        url: String,
        /// How many redirects kb follows.
        limit: usize,
    },
    /// No answer in `KB_FETCH_TIMEOUT_SECS`.
    #[error("{url} did not answer within {secs} s (KB_FETCH_TIMEOUT_SECS)")]
    TimedOut {
        /// The URL.
        url: String,
        /// The limit, in seconds.
        secs: u64,
    },
}

impl PageError {
    /// Whether kb refused to fetch the page (the link is not one it may read), rather than
    /// failed to.
    pub fn is_refusal(&self) -> bool {
        matches!(self, PageError::Refused { .. })
    }
}
