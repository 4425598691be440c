//! Helpers for kb-delivery's tests: a real SMTP sink on loopback and a MIME reader.

#![allow(dead_code)]

pub mod mime;
pub mod smtp;

use kb_domain::delivery::DigestMessage;
use kb_domain::nudges::{Nudge, NudgeRule};

/// A nudge with this message.
pub fn nudge(rule: NudgeRule, path: Option<&str>, message: &str) -> Nudge {
    Nudge {
        key: match path {
            Some(path) => format!("{}:{path}", rule.as_str()),
            None => rule.as_str().to_owned(),
        },
        rule,
        path: path.map(str::to_owned),
        name: path.map(|path| path.trim_end_matches(".md").rsplit('/').next().unwrap_or(path).to_owned()),
        message: message.to_owned(),
    }
}

/// A daily digest.
pub fn digest(title: &str, markdown: &str, nudges: Vec<Nudge>) -> DigestMessage {
    DigestMessage {
        id: None,
        kind: "daily".to_owned(),
        title: title.to_owned(),
        markdown: markdown.to_owned(),
        nudges,
    }
}

/// A port on loopback that nothing listens on.
pub async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("local addr").port();
    drop(listener);
    port
}
