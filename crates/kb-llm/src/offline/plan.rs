//! Turns what the person asked for into the model's answer: one tool call whose arguments
//! follow the tool's input schema (only tools the request offers), or a plain sentence.

use kb_domain::{ChatCompletion, ToolCall, ToolDefinition, Usage};
use serde_json::{Map, Value, json};

use super::intent::{Intent, Subject};

/// What one offline call costs: one call, no tokens.
pub const USAGE: Usage = Usage { llm_calls: 1, prompt_tokens: 0, completion_tokens: 0 };

/// What kb can do offline, for help and for questions it cannot route.
pub const CAPABILITIES: &str = "kb is running without a language model, so I follow simple rules. I can:\n\
- file anything you tell me (\"met Priya at the robotics meetup\", \"renew passport by Dec 15\", \"idea: …\")\n\
- list entries (\"list my projects\", \"what's in the inbox\")\n\
- show one (\"show projects/clientco.md\")\n\
- tell you about one (\"what do I know about Priya?\", \"how's the cello project going?\")\n\
- search (\"find Priya\", \"search for passport\")\n\
- write a digest (\"what's on my plate today?\", \"anything due this week?\", \"how did this week go?\")\n\
- update or move entries by name or what I just filed (\"the cello project is blocked\", \"Priya's birthday is March 3\", \"actually that's a project\")\n\
- delete an entry (\"delete the old site\"; I ask first) and undo the last change (\"undo that\")\n\
- find duplicates (\"any duplicates of Priya?\") and merge entries (\"merge Priya into Priya Raman\"; I ask first).";

/// A plain-text answer.
pub fn say(text: impl Into<String>) -> ChatCompletion {
    ChatCompletion { content: Some(text.into()), tool_calls: Vec::new(), usage: USAGE }
}

/// The longest text handed back for a writing task.
const HAND_BACK_CHARS: usize = 4000;

/// The answer to a writing task (a request without tools: write up a digest, summarise older
/// turns). The offline model cannot write, so it hands the material back as given, without
/// a label line such as "The facts:", cut to a bounded length.
pub fn hand_back(material: &str) -> ChatCompletion {
    let text = material.trim();
    let text = match text.split_once("\n\n") {
        Some((label, rest)) if label.ends_with(':') && !label.contains('\n') => rest.trim(),
        _ => text,
    };
    let mut cut: String = text.chars().take(HAND_BACK_CHARS).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    say(cut)
}

/// What the conversation tells the planner about entries: the one "that" means. An entry
/// named in words is handed to the tool as it was said; the tools resolve names.
#[derive(Debug, Clone, Copy, Default)]
pub struct Known<'a> {
    /// The entry handled most recently.
    pub recent_path: Option<&'a str>,
}

/// The answer to an intent. `known` resolves "that" and names; `calls_so_far` numbers the call.
pub fn plan(
    intent: Intent,
    known: Known<'_>,
    tools: &[ToolDefinition],
    calls_so_far: usize,
) -> ChatCompletion {
    let resolve = |subject: &Subject| -> Result<String, ChatCompletion> {
        match subject {
            Subject::Path(path) => Ok(path.clone()),
            Subject::Recent => known.recent_path.map(str::to_string).ok_or_else(|| {
                say("Which entry do you mean? Nothing has been filed or opened in this conversation yet, \
                     so give me its path, like projects/clientco.md.")
            }),
            Subject::Named(name) => Ok(name.clone()),
        }
    };
    let (tool, arguments) = match intent {
        Intent::Greeting => {
            return say("Hello! Tell me anything to file (a person, a project, an idea or an errand), \
                        or ask for your projects, a search or today's digest.");
        }
        Intent::Thanks => return say("You're welcome."),
        Intent::Farewell => return say("Bye. Everything you told me is saved in your vault."),
        Intent::Acknowledge => {
            return say(
                "Okay. Tell me something to file, or ask me to list, find, show, update or move entries.",
            );
        }
        Intent::Help => return say(CAPABILITIES),
        Intent::Unroutable => return say(format!("I can't answer that offline. {CAPABILITIES}")),
        Intent::Say(text) => return say(text),
        Intent::Capture { text, hints } => {
            let mut args = json!({ "text": text });
            if let Some(hints) = hints {
                args["hints"] = json!(hints);
            }
            ("classify_and_capture", args)
        }
        Intent::List { category, status, limit } => {
            let mut args = Map::new();
            if let Some(category) = category {
                args.insert("category".into(), json!(category.as_str()));
            }
            if let Some(status) = status {
                args.insert("status".into(), json!(status));
            }
            if let Some(limit) = limit {
                args.insert("limit".into(), json!(limit));
            }
            ("list_entries", Value::Object(args))
        }
        Intent::Get(subject) => match resolve(&subject) {
            Ok(path) => ("get_entry", json!({ "path": path })),
            Err(answer) => return answer,
        },
        Intent::Search { query, category } => {
            let mut args = json!({ "query": query });
            if let Some(category) = category {
                args["category"] = json!(category.as_str());
            }
            ("search_entries", args)
        }
        Intent::Digest { weekly } => {
            ("generate_digest", json!({ "type": if weekly { "weekly" } else { "daily" } }))
        }
        Intent::Update { subject, updates } => match resolve(&subject) {
            Ok(path) => ("update_entry", json!({ "path": path, "updates": updates })),
            Err(answer) => return answer,
        },
        Intent::Tell { name, .. } => ("get_entry", json!({ "path": name })),
        Intent::Move { subject, target } => {
            if target == kb_domain::Category::Inbox {
                return say("I can only move entries into people, projects, ideas or admin.");
            }
            match resolve(&subject) {
                Ok(path) if path.starts_with(&format!("{target}/")) => {
                    return say(format!("{path} is already in {target}."));
                }
                Ok(path) => ("move_entry", json!({ "path": path, "targetCategory": target.as_str() })),
                Err(answer) => return answer,
            }
        }
        Intent::Delete(subject) => match resolve(&subject) {
            Ok(path) => ("delete_entry", json!({ "path": path })),
            Err(answer) => return answer,
        },
        Intent::FindDuplicates { name } => {
            ("find_duplicates", name.map_or_else(|| json!({}), |name| json!({ "name": name })))
        }
        Intent::Merge { target, sources } => {
            let target = match resolve(&target) {
                Ok(path) => path,
                Err(answer) => return answer,
            };
            let mut source_paths = Vec::new();
            for source in &sources {
                match resolve(source) {
                    Ok(path) => source_paths.push(path),
                    Err(answer) => return answer,
                }
            }
            ("merge_entries", json!({ "targetPath": target, "sourcePaths": source_paths }))
        }
        Intent::Undo { force } => {
            ("undo_last_change", if force { json!({ "force": true }) } else { json!({}) })
        }
    };
    if !tools.iter().any(|t| t.name == tool) {
        return say(format!("I can't do that here: the {tool} tool is not available."));
    }
    let call = ToolCall {
        id: format!("offline-{}", calls_so_far + 1),
        name: tool.to_string(),
        arguments: arguments.to_string(),
    };
    ChatCompletion { content: None, tool_calls: vec![call], usage: USAGE }
}
