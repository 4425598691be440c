//! A small real SMTP server for tests: it speaks enough SMTP for lettre (greeting, EHLO,
//! MAIL, RCPT, DATA, RSET, NOOP, QUIT), keeps what it receives, and can be told to refuse.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How the sink answers.
#[derive(Debug, Clone, Default)]
pub struct Behaviour {
    /// The reply to `MAIL FROM` instead of `250` (e.g. `451 4.3.0 Try again later`).
    pub mail_reply: Option<String>,
    /// The reply at the end of `DATA` instead of `250` (e.g. `550 5.7.1 Rejected`).
    pub data_reply: Option<String>,
    /// Accept connections but never say anything (a hung server).
    pub silent: bool,
    /// The first this many mails are answered `451 4.3.0 Try again later` at the end of
    /// `DATA` (a server busy for a moment); they show in [`SmtpSink::seen`] only.
    pub defer_first: usize,
}

/// One mail as the sink received it.
#[derive(Debug, Clone, Default)]
pub struct Received {
    /// The `EHLO`/`HELO` argument.
    pub helo: String,
    /// The `MAIL FROM` address, without angle brackets or parameters.
    pub mail_from: String,
    /// The `RCPT TO` addresses.
    pub rcpt_to: Vec<String>,
    /// The message as sent after `DATA`, dot-unstuffed, lines joined with CRLF.
    pub data: String,
}

/// A running sink.
pub struct SmtpSink {
    /// Where it listens.
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    seen: Arc<Mutex<Vec<Received>>>,
    task: JoinHandle<()>,
}

impl SmtpSink {
    /// Starts a sink on `127.0.0.1:0`.
    pub async fn start(behaviour: Behaviour) -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let store = Arc::clone(&received);
        let all = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let behaviour = behaviour.clone();
                let store = Arc::clone(&store);
                let all = Arc::clone(&all);
                tokio::spawn(async move {
                    if behaviour.silent {
                        // Hold the connection open without a word.
                        let _stream = stream;
                        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                        return;
                    }
                    let _ = session(stream, &behaviour, &store, &all).await;
                });
            }
        });
        SmtpSink { addr, received, seen, task }
    }

    /// The URL lettre reaches it at (no TLS).
    pub fn url(&self) -> String {
        format!("smtp://{}:{}", self.addr.ip(), self.addr.port())
    }

    /// The mails received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    /// Every mail sent to the sink to the end of its `DATA`, accepted or not.
    pub fn seen(&self) -> Vec<Received> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The address in `MAIL FROM:<a@b> BODY=8BITMIME` or `RCPT TO:<a@b>`.
fn address_of(argument: &str) -> String {
    let start = argument.find('<').map_or(0, |i| i + 1);
    let end = argument[start..].find('>').map_or(argument.len(), |i| start + i);
    argument[start..end].to_owned()
}

/// One SMTP session.
async fn session(
    stream: TcpStream,
    behaviour: &Behaviour,
    store: &Mutex<Vec<Received>>,
    seen: &Mutex<Vec<Received>>,
) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink.test ESMTP ready\r\n").await?;
    let mut current = Received::default();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end_matches(['\r', '\n']);
        let verb = command.split([' ', ':']).next().unwrap_or_default().to_ascii_uppercase();
        let argument = command.get(verb.len()..).unwrap_or_default().trim_start_matches([' ', ':']).trim();
        match verb.as_str() {
            "EHLO" => {
                current.helo = argument.to_owned();
                write.write_all(b"250-sink.test greets you\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n").await?;
            }
            "HELO" => {
                current.helo = argument.to_owned();
                write.write_all(b"250 sink.test\r\n").await?;
            }
            "MAIL" => {
                if let Some(reply) = &behaviour.mail_reply {
                    write.write_all(format!("{reply}\r\n").as_bytes()).await?;
                    continue;
                }
                let argument =
                    argument.strip_prefix("FROM").unwrap_or(argument).trim_start_matches([':', ' ']);
                current.mail_from = address_of(argument);
                current.rcpt_to.clear();
                write.write_all(b"250 2.1.0 Ok\r\n").await?;
            }
            "RCPT" => {
                let argument = argument.strip_prefix("TO").unwrap_or(argument).trim_start_matches([':', ' ']);
                current.rcpt_to.push(address_of(argument));
                write.write_all(b"250 2.1.5 Ok\r\n").await?;
            }
            "DATA" => {
                write.write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n").await?;
                let mut data = Vec::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await? == 0 {
                        return Ok(());
                    }
                    let content = line.trim_end_matches(['\r', '\n']);
                    if content == "." {
                        break;
                    }
                    data.push(content.strip_prefix('.').map_or(content.to_owned(), |rest| {
                        if content.starts_with("..") { rest.to_owned() } else { content.to_owned() }
                    }));
                }
                current.data = data.join("\r\n");
                let count = {
                    let mut seen = seen.lock().expect("lock");
                    seen.push(current.clone());
                    seen.len()
                };
                if count <= behaviour.defer_first {
                    write.write_all(b"451 4.3.0 Try again later\r\n").await?;
                } else if let Some(reply) = &behaviour.data_reply {
                    write.write_all(format!("{reply}\r\n").as_bytes()).await?;
                } else {
                    store.lock().expect("lock").push(std::mem::take(&mut current));
                    write.write_all(b"250 2.0.0 Ok: queued\r\n").await?;
                }
            }
            "RSET" | "NOOP" => write.write_all(b"250 2.0.0 Ok\r\n").await?,
            "QUIT" => {
                write.write_all(b"221 2.0.0 Bye\r\n").await?;
                return Ok(());
            }
            _ => write.write_all(b"502 5.5.2 Command not recognized\r\n").await?,
        }
    }
}
