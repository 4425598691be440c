//! The mailbox kb watches ([`Mailbox`]): an IMAP folder, opened from its address
//! ([`MailboxAddress`], `imaps://user:pass@host:993/INBOX`), its new messages listed and read
//! without marking them seen, each marked once kb has filed (`$KbFiled`) or refused
//! (`$KbRefused`) it, and waited on with IDLE where the server offers it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_imap::Session;
use async_imap::extensions::idle::IdleResponse;
use futures_util::TryStreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::Url;

/// The keyword a message kb filed is marked with.
pub const FILED: &str = "$KbFiled";
/// The keyword a message kb would not file is marked with (not from an allowed sender, or
/// too large); removing it has kb look at the message again.
pub const REFUSED: &str = "$KbRefused";

/// The longest one IMAP exchange (connecting, logging in, one command) may take.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the mailbox is: `KB_MAIL_IMAP_URL`.
#[derive(Clone, PartialEq, Eq)]
pub struct MailboxAddress {
    /// Whether the connection is TLS from the start (`imaps://`).
    tls: bool,
    /// The server's host.
    host: String,
    /// Its port.
    port: u16,
    /// The user logged in as.
    user: String,
    /// The password (never shown).
    password: String,
    /// The folder watched (`INBOX` by default).
    folder: String,
}

impl fmt::Debug for MailboxAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Why the mailbox could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    /// `KB_MAIL_IMAP_URL` is not an address kb can use.
    #[error("{0}")]
    Address(String),
    /// The server could not be reached, or the connection broke.
    #[error("the mail server {server} cannot be reached: {message}")]
    Connection {
        /// The server.
        server: String,
        /// What happened.
        message: String,
    },
    /// The server refused the login.
    #[error("the mail server {server} refused the login of {user}")]
    Login {
        /// The server.
        server: String,
        /// The user.
        user: String,
    },
    /// The server answered a command with an error.
    #[error("the mail server {server} refused {command}: {message}")]
    Command {
        /// The server.
        server: String,
        /// The command, in words.
        command: &'static str,
        /// What it said.
        message: String,
    },
}

impl MailboxAddress {
    /// Reads `url`: `imaps://user:pass@host[:993]/FOLDER`, or `imap://` to a server on
    /// loopback only (a password is never sent in the clear across a network). User and
    /// password are percent-encoded; the folder defaults to `INBOX`.
    pub fn parse(url: &str) -> Result<MailboxAddress, MailboxError> {
        let bad = |why: &str| MailboxError::Address(why.to_string());
        let url = Url::parse(url.trim()).map_err(|_| bad("it is not a URL"))?;
        let tls = match url.scheme() {
            "imaps" => true,
            "imap" => false,
            _ => return Err(bad("it must start with imaps:// (or imap:// to a server on this machine)")),
        };
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("it names no host"))?;
        let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
        let loopback =
            host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if !tls && !loopback {
            return Err(bad(
                "imap:// sends the password in the clear: use imaps:// for a server on another machine",
            ));
        }
        let user = decode(url.username());
        let password = url.password().map(decode).unwrap_or_default();
        if user.is_empty() || password.is_empty() {
            return Err(bad("it names no user and password (imaps://user:pass@host/INBOX)"));
        }
        let folder = decode(url.path().trim_start_matches('/'));
        // `INBOX` is one folder however it is written (RFC 3501); other names are the server's.
        let folder = if folder.is_empty() || folder.eq_ignore_ascii_case("inbox") {
            "INBOX".to_string()
        } else {
            folder
        };
        if folder.contains(['"', '\\', '\r', '\n']) {
            return Err(bad("the folder's name holds a quote, a backslash or a line break"));
        }
        let port = url.port().unwrap_or(if tls { 993 } else { 143 });
        Ok(MailboxAddress { tls, host, port, user, password, folder })
    }

    /// The server's host (the default name of its `Authentication-Results`).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The mailbox's name without its password (`user@host:port/INBOX`), for logs and for
    /// telling its messages from another mailbox's.
    pub fn name(&self) -> String {
        format!("{}@{}:{}/{}", self.user, self.host, self.port, self.folder)
    }
}

/// `text`, percent-decoded (as written when it does not decode).
fn decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_else(|| text.to_string())
}

/// The connection under an IMAP session: TCP, or TLS over it.
trait Connection: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + fmt::Debug> Connection for T {}

/// An open mailbox: logged in, its folder selected.
pub struct Mailbox {
    /// The session (`None` only while it idles).
    session: Option<Session<Box<dyn Connection>>>,
    /// The folder's UIDVALIDITY: a message is `UIDVALIDITY:UID`.
    uid_validity: u32,
    /// Whether the server offers IDLE.
    idle: bool,
    /// Whether the folder keeps keywords kb adds (`PERMANENTFLAGS` has `\*`).
    keeps_keywords: bool,
    /// Where it is, for messages.
    server: String,
}

impl fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mailbox")
            .field("server", &self.server)
            .field("uid_validity", &self.uid_validity)
            .finish()
    }
}

/// A message's size and, when it is not too large, its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// Its raw bytes (RFC 5322).
    Message(Vec<u8>),
    /// It is larger than the limit: its size, in bytes.
    TooLarge(u64),
    /// It is gone (expunged meanwhile).
    Gone,
}

impl Mailbox {
    /// Connects to `address`, logs in and selects its folder.
    pub async fn open(address: &MailboxAddress) -> Result<Mailbox, MailboxError> {
        let server = format!("{}:{}", address.host, address.port);
        let broken = |message: String| MailboxError::Connection { server: server.clone(), message };
        let tcp = within(&server, TcpStream::connect((address.host.as_str(), address.port))).await?;
        let tcp = tcp.map_err(|e| broken(e.to_string()))?;
        let stream: Box<dyn Connection> = if address.tls {
            let connector = tls_connector().map_err(broken)?;
            let name = tokio_rustls::rustls::pki_types::ServerName::try_from(address.host.clone())
                .map_err(|e| broken(format!("the host is not a name TLS can check: {e}")))?;
            let tls = within(&server, connector.connect(name, tcp)).await?;
            Box::new(tls.map_err(|e| broken(format!("TLS failed: {e}")))?)
        } else {
            Box::new(tcp)
        };
        let mut client = async_imap::Client::new(stream);
        let greeting = within(&server, client.read_response()).await?;
        if greeting.map_err(|e| broken(e.to_string()))?.is_none() {
            return Err(broken("it closed the connection at once".to_string()));
        }
        let login = within(&server, client.login(&address.user, &address.password)).await?;
        let mut session = login.map_err(|(error, _)| match error {
            async_imap::error::Error::No(_) | async_imap::error::Error::Bad(_) => {
                MailboxError::Login { server: server.clone(), user: address.user.clone() }
            }
            other => broken(other.to_string()),
        })?;
        let capabilities = within(&server, session.capabilities()).await?;
        let idle = capabilities.map_err(|e| command(&server, "CAPABILITY", e))?.has_str("IDLE");
        let selected = within(&server, session.select(modified_utf7(&address.folder))).await?;
        let selected = selected.map_err(|e| command(&server, "SELECT", e))?;
        let uid_validity = selected.uid_validity.ok_or_else(|| MailboxError::Command {
            server: server.clone(),
            command: "SELECT",
            message: "it gave the folder no UIDVALIDITY".to_string(),
        })?;
        let keeps_keywords = selected.permanent_flags.iter().any(|flag| {
            matches!(flag, async_imap::types::Flag::MayCreate)
                || matches!(flag, async_imap::types::Flag::Custom(name) if name == FILED)
        });
        Ok(Mailbox { session: Some(session), uid_validity, idle, keeps_keywords, server })
    }

    /// Whether the folder keeps the keywords kb marks messages with: without them kb still
    /// files each message once, but looks at every one again after each restart.
    pub fn keeps_keywords(&self) -> bool {
        self.keeps_keywords
    }

    /// The folder's UIDVALIDITY.
    pub fn uid_validity(&self) -> u32 {
        self.uid_validity
    }

    /// The session, or the error of one lost while idling.
    fn session(&mut self) -> Result<&mut Session<Box<dyn Connection>>, MailboxError> {
        self.session.as_mut().ok_or_else(|| MailboxError::Connection {
            server: self.server.clone(),
            message: "the connection was lost".to_string(),
        })
    }

    /// The UIDs of the messages kb has not marked yet, oldest first.
    pub async fn unmarked(&mut self) -> Result<Vec<u32>, MailboxError> {
        let server = self.server.clone();
        let query = format!("UNKEYWORD {FILED} UNKEYWORD {REFUSED} UNDELETED");
        let found = within(&server, self.session()?.uid_search(query)).await?;
        let mut uids: Vec<u32> = found.map_err(|e| command(&server, "UID SEARCH", e))?.into_iter().collect();
        uids.sort_unstable();
        Ok(uids)
    }

    /// The message `uid`, read without marking it seen, unless it is larger than `limit`.
    pub async fn fetch(&mut self, uid: u32, limit: u64) -> Result<Fetched, MailboxError> {
        let server = self.server.clone();
        let size = self.fetch_one(uid, "RFC822.SIZE").await?.and_then(|fetch| fetch.size);
        let Some(size) = size else { return Ok(Fetched::Gone) };
        if u64::from(size) > limit {
            return Ok(Fetched::TooLarge(size.into()));
        }
        let fetched = self.fetch_one(uid, "BODY.PEEK[]").await?;
        match fetched.as_ref().and_then(|fetch| fetch.body()) {
            Some(bytes) => Ok(Fetched::Message(bytes.to_vec())),
            None if fetched.is_none() => Ok(Fetched::Gone),
            None => Err(MailboxError::Command {
                server,
                command: "UID FETCH",
                message: "it sent no body".to_string(),
            }),
        }
    }

    /// The answer to `UID FETCH uid (what)`, when the message is still there.
    async fn fetch_one(
        &mut self,
        uid: u32,
        what: &str,
    ) -> Result<Option<async_imap::types::Fetch>, MailboxError> {
        let server = self.server.clone();
        let session = self.session()?;
        let reading = async {
            let answers = session.uid_fetch(uid.to_string(), what).await?;
            answers.try_collect::<Vec<_>>().await
        };
        let answers = within(&server, reading).await?.map_err(|e| command(&server, "UID FETCH", e))?;
        Ok(answers.into_iter().find(|fetch| fetch.uid == Some(uid)))
    }

    /// Marks message `uid` with `keyword` ([`FILED`] or [`REFUSED`]); whether the server
    /// kept it (its answer shows the message's flags).
    pub async fn mark(&mut self, uid: u32, keyword: &str) -> Result<bool, MailboxError> {
        let server = self.server.clone();
        let session = self.session()?;
        let storing = async {
            let answers = session.uid_store(uid.to_string(), format!("+FLAGS ({keyword})")).await?;
            answers.try_collect::<Vec<_>>().await
        };
        let answers = within(&server, storing).await?.map_err(|e| command(&server, "UID STORE", e))?;
        Ok(answers.iter().any(|fetch| {
            fetch
                .flags()
                .any(|flag| matches!(flag, async_imap::types::Flag::Custom(ref name) if name == keyword))
        }))
    }

    /// Waits until the folder changes or `at_most` passes: with IDLE where the server
    /// offers it, else by waiting `at_most` (the caller then looks again).
    pub async fn wait(&mut self, at_most: Duration) -> Result<(), MailboxError> {
        if !self.idle {
            tokio::time::sleep(at_most).await;
            // A NOOP keeps the connection alive and shows whether it still is.
            let server = self.server.clone();
            return within(&server, self.session()?.noop()).await?.map_err(|e| command(&server, "NOOP", e));
        }
        let server = self.server.clone();
        let session = self.session.take().ok_or_else(|| MailboxError::Connection {
            server: server.clone(),
            message: "the connection was lost".to_string(),
        })?;
        let mut idle = session.idle();
        within(&server, idle.init()).await?.map_err(|e| command(&server, "IDLE", e))?;
        let (waiting, _stop) = idle.wait_with_timeout(at_most);
        match waiting.await {
            Ok(IdleResponse::NewData(_) | IdleResponse::Timeout | IdleResponse::ManualInterrupt) => {}
            Err(error) => return Err(command(&server, "IDLE", error)),
        }
        let session = within(&server, idle.done()).await?.map_err(|e| command(&server, "IDLE", e))?;
        self.session = Some(session);
        Ok(())
    }

    /// Logs out (a failure is of no matter: the connection closes anyway).
    pub async fn close(mut self) {
        if let Some(session) = self.session.as_mut() {
            let _ = tokio::time::timeout(Duration::from_secs(5), session.logout()).await;
        }
    }
}

/// A folder's name as IMAP writes it (RFC 3501, 5.1.3): ASCII as it is but `&` as `&-`,
/// and each run of other characters as `&`, its UTF-16 in base64 (`,` for `/`, no
/// padding), `-`: `Entwürfe` is `Entw&APw-rfe`.
fn modified_utf7(name: &str) -> String {
    use base64::Engine;
    let alphabet =
        base64::alphabet::Alphabet::new("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,");
    let Ok(alphabet) = alphabet else { return name.to_string() };
    let engine = base64::engine::GeneralPurpose::new(&alphabet, base64::engine::general_purpose::NO_PAD);
    let mut out = String::with_capacity(name.len());
    let mut run: Vec<u16> = Vec::new();
    let flush = |run: &mut Vec<u16>, out: &mut String| {
        if !run.is_empty() {
            let bytes: Vec<u8> = run.iter().flat_map(|unit| unit.to_be_bytes()).collect();
            out.push('&');
            out.push_str(&engine.encode(bytes));
            out.push('-');
            run.clear();
        }
    };
    for c in name.chars() {
        if (' '..='~').contains(&c) {
            flush(&mut run, &mut out);
            if c == '&' {
                out.push_str("&-");
            } else {
                out.push(c);
            }
        } else {
            run.extend(c.encode_utf16(&mut [0; 2]).iter());
        }
    }
    flush(&mut run, &mut out);
    out
}

/// `future`, given at most [`EXCHANGE_TIMEOUT`].
async fn within<T>(server: &str, future: impl Future<Output = T>) -> Result<T, MailboxError> {
    tokio::time::timeout(EXCHANGE_TIMEOUT, future).await.map_err(|_| MailboxError::Connection {
        server: server.to_string(),
        message: format!("it did not answer within {} s", EXCHANGE_TIMEOUT.as_secs()),
    })
}

/// An IMAP error from `name`, said as the server's refusal.
fn command(server: &str, name: &'static str, error: async_imap::error::Error) -> MailboxError {
    let message = match error {
        // async-imap words a refusal as its parsed answer: the server's own words are kept.
        async_imap::error::Error::No(answer) | async_imap::error::Error::Bad(answer) => answer
            .split_once("information: Some(\"")
            .and_then(|(_, rest)| rest.rsplit_once("\")"))
            .map_or(answer.clone(), |(words, _)| words.replace("\\\"", "\"")),
        other => other.to_string(),
    };
    MailboxError::Command { server: server.to_string(), command: name, message }
}

/// A TLS connector checking certificates as this platform does.
fn tls_connector() -> Result<tokio_rustls::TlsConnector, String> {
    use rustls_platform_verifier::BuilderVerifierExt;
    let config = tokio_rustls::rustls::ClientConfig::builder()
        .with_platform_verifier()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?
        .with_no_client_auth();
    Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_are_written_as_imap_does() {
        assert_eq!(modified_utf7("INBOX"), "INBOX");
        assert_eq!(modified_utf7("Entwürfe"), "Entw&APw-rfe");
        assert_eq!(modified_utf7("Tom & Jerry"), "Tom &- Jerry");
        // RFC 3501's own example.
        assert_eq!(modified_utf7("~peter/mail/台北/日本語"), "~peter/mail/&U,BTFw-/&ZeVnLIqe-");
    }

    #[test]
    fn addresses_are_read_and_clear_passwords_stay_on_this_machine() {
        let address =
            MailboxAddress::parse("imaps://kb%40example.org:p%40ss@mail.example.org/Inbox%2Fkb").unwrap();
        assert_eq!(address.name(), "kb@example.org@mail.example.org:993/Inbox/kb");
        assert_eq!(address.password, "p@ss");
        assert!(!format!("{address:?}").contains("p@ss"));
        let local = MailboxAddress::parse("imap://kb:secret@127.0.0.1:1143").unwrap();
        assert_eq!((local.port, local.folder.as_str(), local.tls), (1143, "INBOX", false));
        for bad in [
            "imap://kb:secret@mail.example.org/INBOX",
            "pop3://kb:secret@127.0.0.1",
            "imaps://mail.example.org/INBOX",
            "imaps://kb:secret@mail.example.org/In%22box",
            "not a url",
        ] {
            assert!(MailboxAddress::parse(bad).is_err(), "{bad}");
        }
    }
}
