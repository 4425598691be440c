//! The summary of turns older than the context window. When the window slides, the model
//! folds the messages that just left it into the stored summary; if that fails, the prompt
//! gets a plain placeholder and a warning is logged.

use kb_domain::{ChatMessage, ChatModel, ChatRequest, Message, Role, Usage};

use crate::history;

/// What the conversation section says when older turns exist but could not be summarised.
pub const SUMMARY_UNAVAILABLE: &str =
    "(Earlier turns exist but could not be summarised; ask the person if something is unclear.)";

const INSTRUCTIONS: &str = "You summarise a conversation between a person and kb, their knowledge-base \
assistant. Write at most 120 words of plain text: what the person asked for, what was filed, changed or \
found (keep names and entry paths), and anything still open. Start from the earlier summary if there is one.";

/// Which stored messages the summary must newly cover this turn.
///
/// `stored` is the conversation before this turn; `window` the context window size. The
/// summary covers every message before the window; the messages that left the window since
/// the previous turn are the new ones (all older ones when there is no summary yet).
pub fn newly_left_window(stored: &[Message], window: usize, has_summary: bool) -> &[Message] {
    let older = stored.len() - history::window(stored, window).len();
    if older == 0 {
        return &[];
    }
    if !has_summary {
        return &stored[..older];
    }
    let previous_turn_start = stored.iter().rposition(|m| m.role == Role::User).unwrap_or(0);
    let before = &stored[..previous_turn_start];
    let previously_older = before.len() - history::window(before, window).len();
    &stored[previously_older.min(older)..older]
}

/// Asks the model for a new summary folding `left` into `previous`.
pub async fn summarise(
    model: &dyn ChatModel,
    previous: Option<&str>,
    left: &[Message],
    usage: &mut Usage,
) -> Result<String, kb_domain::LlmError> {
    let mut transcript = String::new();
    if let Some(previous) = previous {
        transcript.push_str(&format!("Earlier summary:\n{previous}\n\nThen:\n"));
    }
    for message in left {
        let text = match message.role {
            Role::Tool => format!("tool result: {}", shorten(&message.content, 400)),
            Role::Assistant if !message.tool_calls.is_empty() => {
                let names: Vec<_> = message.tool_calls.iter().map(|c| c.name.as_str()).collect();
                format!("kb called {}", names.join(", "))
            }
            role => format!("{}: {}", role.as_str(), shorten(&message.content, 800)),
        };
        transcript.push_str(&text);
        transcript.push('\n');
    }
    let request = ChatRequest {
        messages: vec![
            ChatMessage::System { content: INSTRUCTIONS.to_string() },
            ChatMessage::User { content: transcript },
        ],
        tools: Vec::new(),
    };
    let completion = model.complete(&request).await?;
    usage.add(completion.usage);
    completion
        .content
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .ok_or_else(|| kb_domain::LlmError::Malformed("empty summary".to_string()))
}

fn shorten(text: &str, max: usize) -> String {
    kb_domain::entry::one_line(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use kb_domain::ConversationId;

    fn msgs(roles: &[Role]) -> Vec<Message> {
        roles
            .iter()
            .enumerate()
            .map(|(i, role)| Message {
                id: i.to_string(),
                conversation_id: ConversationId::new("c"),
                role: *role,
                content: format!("m{i}"),
                tool_calls: Vec::new(),
                tool_call_id: None,
                filed_entry_path: None,
                filed_confidence: None,
                created_at: Utc::now(),
            })
            .collect()
    }

    #[test]
    fn only_what_left_the_window_is_new() {
        use Role::{Assistant as A, User as U};
        let stored = msgs(&[U, A, U, A, U, A]);
        assert!(newly_left_window(&stored, 10, false).is_empty());
        let left = newly_left_window(&stored, 4, true);
        assert_eq!(left.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["m0", "m1"]);
        let stored = msgs(&[U, A, U, A, U, A, U, A]);
        let left = newly_left_window(&stored, 4, true);
        assert_eq!(left.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["m2", "m3"]);
        let all = newly_left_window(&stored, 4, false);
        assert_eq!(all.len(), 4);
    }
}
