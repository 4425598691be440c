//! Commands beside a running `kb serve`: `capture`, `list`, `show`, `search` and `digest`
//! are asked of it on the vault's local socket ([`kb_server::local`]), which answers at
//! once, instead of this process opening the vault. The answer is the one the command
//! would give alone: the server follows every edit made before the request first, and
//! records changes as the command line's. When no server answers, or it declines (another
//! database, edits it could not follow in time), the command opens the vault itself.

use kb_core::Config;
use kb_server::local::{Answer, LocalClient, LocalError, Method, StatusCode};
use serde_json::{Value, json};

use crate::cli::Command;
use crate::commands::entries::check_text;
use crate::failure::CliError;
use crate::output::{self, Format, show};

/// What a command asks of the server, and how its answer is shown to a person.
struct Ask {
    method: Method,
    path: String,
    body: Option<Value>,
    human: fn(&Value) -> String,
}

/// Runs `command` on the `kb serve` of the vault, when one answers: `None` when the
/// command is not one it answers, no server answers, or the server declines (then the
/// command runs here).
pub async fn run(config: &Config, command: &Command, format: Format) -> Option<Result<(), CliError>> {
    let ask = match ask(command) {
        Ok(Some(ask)) => ask,
        Ok(None) => return None,
        Err(usage) => return Some(Err(usage)),
    };
    let client = LocalClient::new(&config.kb_dir, &config.database_identity())?;
    let answer = match client.send(ask.method.clone(), &ask.path, ask.body.as_ref()).await {
        Ok(answer) if answer.declined() => {
            tracing::debug!(answer = %answer.body, "kb serve declined: the command opens the vault");
            return None;
        }
        Ok(answer) => answer,
        Err(LocalError::NoServer | LocalError::Request(_)) => return None,
        // Reading again is harmless; a change may have been made, so it is not made twice.
        Err(broken) if ask.method == Method::GET => {
            tracing::debug!(error = %broken, "kb serve stopped: the command opens the vault");
            return None;
        }
        Err(broken) => {
            return Some(Err(CliError::runtime(format!(
                "{broken}: whether it was done is unknown (see `kb history` or `kb list`)"
            ))));
        }
    };
    tracing::debug!(path = %ask.path, "answered by kb serve");
    Some(shown(&answer, format, ask.human))
}

/// Prints a successful answer as the command would; a failure as its error.
fn shown(answer: &Answer, format: Format, human: fn(&Value) -> String) -> Result<(), CliError> {
    if answer.status.is_success() {
        return show(format, &answer.body, human);
    }
    let message = answer
        .body
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map_or_else(|| format!("kb serve answered {}", answer.status), str::to_string);
    match answer.status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY | StatusCode::PAYLOAD_TOO_LARGE => {
            Err(CliError::usage(message))
        }
        _ => Err(CliError::runtime(message)),
    }
}

/// The request `command` makes, when it is one the server answers; a usage error the
/// command finds before asking anything.
fn ask(command: &Command) -> Result<Option<Ask>, CliError> {
    let ask = match command {
        // A file is read by this process, which keeps it beside the server.
        Command::Capture { file: Some(_), .. } | Command::Capture { audio: Some(_), .. } => return Ok(None),
        Command::Capture { text, hints, into, new, .. } => {
            let text = text.join(" ");
            check_text(&text, "nothing to capture: TEXT is empty")?;
            let hints = hints.as_deref().filter(|h| !h.trim().is_empty());
            let body = json!({ "text": text, "hints": hints, "mergeInto": into, "createNew": new });
            Ask {
                method: Method::POST,
                path: "/api/capture".into(),
                body: Some(body),
                human: output::captured,
            }
        }
        Command::List { category, status, folder, limit, offset } => {
            let query = query(&[
                ("category", category.clone()),
                ("status", status.clone()),
                ("folder", folder.clone()),
                ("limit", limit.map(|n| n.to_string())),
                ("offset", offset.map(|n| n.to_string())),
            ]);
            Ask {
                method: Method::GET,
                path: format!("/api/entries{query}"),
                body: None,
                human: output::entry_list,
            }
        }
        Command::Show { path, lines } => {
            // On a terminal that takes colour the body's markdown is rendered, as alone.
            let human = if crate::terminal::styled() { output::styled_entry } else { output::entry };
            // These endings name other answers of the same route: such a note is shown here.
            let trimmed = path.trim().trim_end_matches('/');
            if ["/history", "/links", "/context", "/related"].iter().any(|end| trimmed.ends_with(end))
                || trimmed.is_empty()
            {
                return Ok(None);
            }
            let encoded = percent_encoding::utf8_percent_encode(trimmed, PATH_ESCAPES);
            let query = query(&[("lines", lines.clone())]);
            Ask { method: Method::GET, path: format!("/api/entries/{encoded}{query}"), body: None, human }
        }
        Command::Search { query: words, category, limit, mode } => {
            let text = words.join(" ");
            check_text(&text, "nothing to search for: QUERY is empty")?;
            let query = query(&[
                ("q", Some(text)),
                ("category", category.clone()),
                ("limit", limit.map(|n| n.to_string())),
                ("mode", mode.map(|m| m.as_str().to_string())),
            ]);
            Ask {
                method: Method::GET,
                path: format!("/api/search{query}"),
                body: None,
                human: output::search_hits,
            }
        }
        Command::Digest { kind, send: false } => Ask {
            method: Method::POST,
            path: "/api/digest".into(),
            body: Some(json!({ "type": kind.as_str() })),
            human: |data| output::text(data, "content").to_string(),
        },
        _ => return Ok(None),
    };
    Ok(Some(ask))
}

/// Bytes escaped in a path segment: all but letters, digits, `-._~` and `/` (the
/// separators stay: the route takes the rest of the path).
const PATH_ESCAPES: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~').remove(b'/');

/// `?name=value&…` of the pairs that have a value, or "".
fn query(pairs: &[(&str, Option<String>)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in pairs {
        if let Some(value) = value {
            query.append_pair(name, value);
        }
    }
    let query = query.finish();
    if query.is_empty() { query } else { format!("?{query}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_encode_what_a_url_cannot_hold() {
        assert_eq!(query(&[("q", None)]), "");
        assert_eq!(
            query(&[("q", Some("café & tea=1+1".into())), ("limit", Some("5".into())), ("category", None)]),
            "?q=caf%C3%A9+%26+tea%3D1%2B1&limit=5"
        );
    }

    #[test]
    fn paths_keep_their_folders_and_escape_the_rest() {
        let path =
            percent_encoding::utf8_percent_encode("Journal/2025/Day one #1?.md", PATH_ESCAPES).to_string();
        assert_eq!(path, "Journal/2025/Day%20one%20%231%3F.md");
    }
}
