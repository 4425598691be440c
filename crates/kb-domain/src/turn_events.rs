//! What a chat turn reports while it runs, for clients that show it live (Server-Sent
//! Events on `POST /api/chat`, `kb chat`): the turn began, a tool started and finished,
//! a piece of the answer was written. The end (the whole answer, or an error) is reported
//! by whoever runs the turn.

use serde_json::Value;

/// One thing that happened in a turn, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEvent {
    /// The turn began in this conversation (new or existing).
    Started {
        /// The conversation.
        conversation_id: String,
    },
    /// A tool call began.
    ToolStarted {
        /// The tool.
        name: String,
        /// Its arguments, as the model gave them (JSON, or the raw text when not JSON).
        arguments: Value,
    },
    /// A tool call ended.
    ToolFinished {
        /// The tool.
        name: String,
        /// Whether it did what was asked.
        success: bool,
        /// One line about what it did or why it failed.
        summary: String,
        /// The entry it filed or changed, when there is one.
        path: Option<String>,
    },
    /// The next piece of the answer.
    MessageDelta {
        /// The text to append.
        text: String,
    },
}

/// Splits a finished answer into the pieces a client sees arrive: a word at a time, each
/// with the space before it, so that the pieces joined are the answer exactly.
pub fn deltas(answer: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    for c in answer.chars() {
        if c.is_whitespace() && !current.trim().is_empty() {
            pieces.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_join_to_the_answer() {
        for answer in ["", "one", "Filed **Priya** in people/priya.md.\n\n- a\n- b  ", "  lead  and   gaps "]
        {
            let pieces = deltas(answer);
            assert_eq!(pieces.concat(), answer);
            assert!(pieces.iter().all(|p| !p.is_empty()));
        }
        assert_eq!(deltas("a b").len(), 2);
    }
}
