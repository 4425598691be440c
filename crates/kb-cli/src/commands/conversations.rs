//! `kb conversations list|rename|delete`: the stored conversations of `kb chat` and the API.

use kb_core::{Assistant, Conversation, ConversationId};
use kb_server::dto::{ConversationJson, ConversationsJson};
use serde_json::json;

use crate::cli::ConversationsAction;
use crate::failure::CliError;
use crate::output::{self, Format};

/// The longest title a person may give.
const MAX_TITLE_CHARS: usize = 200;

/// Runs one `kb conversations` action.
pub async fn run(kb: &Assistant, action: ConversationsAction, format: Format) -> Result<(), CliError> {
    match action {
        ConversationsAction::List => {
            let conversations = kb.chat().conversations().await?;
            if format.is_json() {
                output::print_json(&serde_json::to_value(ConversationsJson::from(conversations.as_slice()))?)
            } else {
                output::print_text(&table(&conversations))
            }
        }
        ConversationsAction::Rename { id, title } => {
            let title = title.join(" ");
            let title = title.trim();
            if title.is_empty() {
                return Err(CliError::usage("the title must not be empty"));
            }
            if title.chars().count() > MAX_TITLE_CHARS {
                return Err(CliError::usage(format!(
                    "the title must be at most {MAX_TITLE_CHARS} characters"
                )));
            }
            let id = ConversationId::new(id);
            kb.chat().rename(&id, title).await?;
            let (conversation, _) = kb.chat().conversation(&id).await?;
            if format.is_json() {
                output::print_json(&serde_json::to_value(ConversationJson::from(&conversation))?)
            } else {
                output::print_text(&format!("renamed {}: {}", conversation.id, conversation.title))
            }
        }
        ConversationsAction::Delete { id } => {
            let id = ConversationId::new(id);
            kb.chat().delete(&id).await?;
            if format.is_json() {
                output::print_json(&json!({ "deleted": id.as_str() }))
            } else {
                output::print_text(&format!("deleted conversation {id}"))
            }
        }
    }
}

/// One line per conversation: id, last change (UTC) and title.
pub fn table(conversations: &[Conversation]) -> String {
    if conversations.is_empty() {
        return "no conversations yet: start one with `kb chat`\n".to_string();
    }
    conversations
        .iter()
        .map(|c| format!("{}  {}  {}\n", c.id, c.updated_at.format("%Y-%m-%d %H:%M"), c.title))
        .collect()
}
