//! MCP prompts: `daily_digest` and `weekly_review` (the digest, written now, for the
//! client's model to go through with the person) and `capture` (file a text in kb).

use kb_core::Assistant;
use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role};

/// The prompts kb offers.
pub fn listed() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "daily_digest",
            Some("Today's digest from kb (top actions, people to contact, what to watch), to plan the day."),
            None,
        )
        .with_title("Daily digest"),
        Prompt::new(
            "weekly_review",
            Some("The weekly review from kb (what moved, open loops, focus, the inbox), to plan the week."),
            None,
        )
        .with_title("Weekly review"),
        Prompt::new(
            "capture",
            Some("File a thought, task, idea or note about a person in kb."),
            Some(vec![
                PromptArgument::new("text")
                    .with_description("What to capture, in your words.")
                    .with_required(true),
            ]),
        )
        .with_title("Capture in kb"),
    ]
}

/// `prompts/get`. An unknown prompt or a missing argument is invalid params.
pub async fn get(
    assistant: &Assistant,
    name: &str,
    arguments: Option<&JsonObject>,
) -> Result<GetPromptResult, McpError> {
    match name {
        "daily_digest" => {
            digest(
                assistant,
                "daily",
                "Here is my daily digest from kb. Go through it with me: what \
            should I do first today, and is there anyone I should get back to?",
            )
            .await
        }
        "weekly_review" => {
            digest(
                assistant,
                "weekly",
                "Here is my weekly review from kb. Help me review the week: \
            what moved, which open loops to close or drop, and what to focus on next week.",
            )
            .await
        }
        "capture" => {
            let text = arguments
                .and_then(|a| a.get("text"))
                .and_then(|t| t.as_str())
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .ok_or_else(|| {
                    McpError::invalid_params("the capture prompt needs text: what to capture", None)
                })?;
            let ask = format!(
                "Please file this in my kb with the classify_and_capture tool. Classify it yourself (person, \
                 project, idea or admin task, with your confidence) and pass that as its classification; if it is \
                 about a person or project I already have, kb adds it to that entry.\n\n{text}"
            );
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, ask)])
                .with_description("Capture a text in kb"))
        }
        other => Err(McpError::invalid_params(
            format!("Unknown prompt: {other} (kb has daily_digest, weekly_review and capture)"),
            None,
        )),
    }
}

async fn digest(assistant: &Assistant, kind: &str, ask: &str) -> Result<GetPromptResult, McpError> {
    let data = assistant
        .entries()
        .digest(kind)
        .await
        .map_err(|failure| McpError::internal_error(failure.message, None))?;
    let text = format!("{ask}\n\n{}", data.content);
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
        .with_description(format!("The {kind} digest from kb")))
}
