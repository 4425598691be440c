//! The picker `kb chat` opens without `--conversation` or `--new`: it lists the recent
//! conversations and reads what the person answers — a number takes one up again, Enter,
//! `n` or `new` starts a new one, `quit` or `exit` leaves, and anything else is the first
//! message of a new conversation.

use kb_core::{Assistant, ConversationId};

use super::{Input, note, say};
use crate::failure::CliError;
use crate::output::Format;

/// How many recent conversations the picker offers.
const PICK_FROM: usize = 10;

/// What the person chose in the picker.
pub(super) enum Pick {
    /// A new conversation, started by the next line typed.
    New,
    /// A new conversation whose first message is this text (typed at the picker).
    Ask(String),
    /// Going on with this conversation.
    Existing(ConversationId),
    /// Leaving.
    Quit,
}

/// Lists recent conversations and reads the person's choice.
pub(super) async fn pick(
    kb: &Assistant,
    input: &mut Input,
    echo: bool,
    format: Format,
    banner: &str,
) -> Result<Pick, CliError> {
    let recent: Vec<_> = kb.chat().conversations().await?.into_iter().take(PICK_FROM).collect();
    if !format.is_json() {
        say(banner)?;
    }
    if recent.is_empty() {
        return Ok(Pick::New);
    }
    let out = |text: &str| if format.is_json() { note(text) } else { say(text) };
    out("Recent conversations:")?;
    for (n, conversation) in recent.iter().enumerate() {
        let when = conversation.updated_at.format("%Y-%m-%d %H:%M");
        out(&format!("  {:>2}. {}  ({when})", n + 1, conversation.title))?;
    }
    loop {
        let question = "Pick a number, press Enter for a new conversation, or type a message: ";
        let Some(line) = input.read(question, format.is_json(), false)? else { return Ok(Pick::Quit) };
        let choice = line.trim();
        if echo {
            out(choice)?;
        }
        if choice.is_empty() || choice.eq_ignore_ascii_case("n") || choice.eq_ignore_ascii_case("new") {
            return Ok(Pick::New);
        }
        if choice.eq_ignore_ascii_case("quit") || choice.eq_ignore_ascii_case("exit") {
            return Ok(Pick::Quit);
        }
        if !is_number(choice) {
            // A question or a note typed at once: it opens a new conversation, and is kept
            // in the history like any message typed.
            input.remember(choice);
            return Ok(Pick::Ask(choice.to_string()));
        }
        match choice.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| recent.get(i)) {
            Some(conversation) => return Ok(Pick::Existing(conversation.id.clone())),
            None => out(&format!("'{choice}' is not one of 1-{}", recent.len()))?,
        }
    }
}

/// Whether `text` is a whole number (with a sign, or too large for any choice, it is one
/// still, just not one of the choices).
fn is_number(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::is_number;

    #[test]
    fn numbers_are_told_from_messages() {
        for number in ["1", "03", "99", "-1", "+2", "0", "123456789012345678901234567890"] {
            assert!(is_number(number), "{number}");
        }
        for message in ["what do I know about Priya?", "3 things to do", "1.5", "-", "n1", "#2"] {
            assert!(!is_number(message), "{message}");
        }
    }
}
