//! The citations of a turn's answer checked against what the tools returned in its
//! conversation: a `[path:line]` whose path no tool result of this turn or of an earlier
//! one named is taken out of the answer (the syntax and the clean removal are
//! [`kb_domain::citations`]'s). The answer stored and answered is the checked one.

use std::collections::HashSet;

use kb_domain::citations::{self, Checked};
use kb_domain::{ConversationId, ConversationStore, EntryPath, Message, Role};
use serde_json::Value;

/// The entry paths the tool results of a conversation named.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SeenPaths(HashSet<String>);

impl SeenPaths {
    /// The paths the tool results among `messages` name.
    pub fn from_messages(messages: &[Message]) -> SeenPaths {
        let mut seen = SeenPaths::default();
        seen.add_messages(messages);
        seen
    }

    /// Adds the paths the tool results among `messages` name.
    pub fn add_messages(&mut self, messages: &[Message]) {
        for message in messages.iter().filter(|m| m.role == Role::Tool) {
            self.add_result(&message.content);
        }
    }

    /// Adds every vault path a tool result (its JSON text, as the model read it) names: each
    /// string in it, value or key, that is an [`EntryPath`].
    pub fn add_result(&mut self, content: &str) {
        match serde_json::from_str::<Value>(content) {
            Ok(value) => self.add_value(&value),
            Err(_) => self.add_string(content),
        }
    }

    /// Whether a tool result named `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.0.contains(path)
    }

    fn add_value(&mut self, value: &Value) {
        match value {
            Value::String(text) => self.add_string(text),
            Value::Array(items) => items.iter().for_each(|item| self.add_value(item)),
            Value::Object(map) => {
                for (key, item) in map {
                    self.add_string(key);
                    self.add_value(item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    fn add_string(&mut self, text: &str) {
        if text.ends_with(".md") && !self.0.contains(text) && EntryPath::parse(text).is_ok() {
            self.0.insert(text.to_string());
        }
    }
}

/// `answer` with the citations no tool result of the conversation named taken out. `seen`
/// holds what this turn's results and the messages it loaded named; the conversation's
/// older messages are read (once) only when a citation's path is not among them. Each
/// citation taken out is logged by its path.
pub async fn check(
    answer: &str,
    seen: &mut SeenPaths,
    store: &dyn ConversationStore,
    conversation: &ConversationId,
) -> Checked {
    let unseen = |seen: &SeenPaths| {
        citations::find(answer).iter().any(|c| !seen.contains(c.written_path) && !seen.contains(&c.path()))
    };
    if unseen(seen) {
        match store.messages(conversation).await {
            Ok(messages) => seen.add_messages(&messages),
            Err(error) => {
                tracing::warn!(%error, "the conversation could not be read to check the answer's citations");
            }
        }
    }
    let checked = citations::check(answer, |path| seen.contains(path));
    for path in &checked.dropped {
        tracing::warn!(%path, "a citation of a path no tool returned in this conversation was taken out of the answer");
    }
    checked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_path_in_a_result_is_seen_and_nothing_else() {
        let mut seen = SeenPaths::default();
        let result = serde_json::json!({
            "success": true,
            "data": {
                "entries": [{"path": "people/priya.md", "name": "Priya"}],
                "links": [{"path": "Journal/Day one.md", "line": "see [[Priya]]"}],
                "byPath": {"ideas/kiln.md": 1},
                "body": "people/sam.md is mentioned in this text",
                "other": "../secrets.md",
            }
        });
        seen.add_result(&result.to_string());
        assert!(seen.contains("people/priya.md"));
        assert!(seen.contains("Journal/Day one.md"));
        assert!(seen.contains("ideas/kiln.md"));
        assert!(!seen.contains("people/sam.md"), "only whole strings are paths");
        assert!(!seen.contains("../secrets.md"));
        assert!(!seen.contains("Priya"));
    }
}
