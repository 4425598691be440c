//! The JSON kept in the conversation tables' text columns: a message's tool calls
//! (`[{id, name, arguments}]`) and a conversation's pending call
//! (`{tool, arguments, proposal, choices?}`, each choice `{label, path?, arguments}`).
//! These names are the stored format: rows written by any earlier kb read back unchanged.

use kb_domain::{PendingCall, PendingChoice, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call as stored.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct ToolCallRecord {
    id: String,
    name: String,
    arguments: String,
}

impl From<&ToolCall> for ToolCallRecord {
    fn from(call: &ToolCall) -> ToolCallRecord {
        ToolCallRecord { id: call.id.clone(), name: call.name.clone(), arguments: call.arguments.clone() }
    }
}

impl From<ToolCallRecord> for ToolCall {
    fn from(record: ToolCallRecord) -> ToolCall {
        ToolCall { id: record.id, name: record.name, arguments: record.arguments }
    }
}

/// A pending call as stored.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct PendingCallRecord {
    tool: String,
    arguments: Value,
    proposal: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    choices: Vec<PendingChoiceRecord>,
}

/// One choice of a pending call as stored.
#[derive(Debug, Serialize, Deserialize)]
struct PendingChoiceRecord {
    label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    arguments: Value,
}

impl From<&PendingCall> for PendingCallRecord {
    fn from(call: &PendingCall) -> PendingCallRecord {
        PendingCallRecord {
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            proposal: call.proposal.clone(),
            choices: call
                .choices
                .iter()
                .map(|choice| PendingChoiceRecord {
                    label: choice.label.clone(),
                    path: choice.path.clone(),
                    arguments: choice.arguments.clone(),
                })
                .collect(),
        }
    }
}

impl From<PendingCallRecord> for PendingCall {
    fn from(record: PendingCallRecord) -> PendingCall {
        PendingCall {
            tool: record.tool,
            arguments: record.arguments,
            proposal: record.proposal,
            choices: record
                .choices
                .into_iter()
                .map(|choice| PendingChoice {
                    label: choice.label,
                    path: choice.path,
                    arguments: choice.arguments,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pending_choice_reads_back_from_the_stored_text_of_earlier_versions() {
        let stored = r#"{"tool":"update_entry","arguments":{"x":1},"proposal":"Which Sam?",
            "choices":[{"label":"Sam Lee","path":"people/sam-lee.md","arguments":{"path":"people/sam-lee.md"}},
                       {"label":"new","arguments":{}}]}"#;
        let record: PendingCallRecord = serde_json::from_str(stored).unwrap();
        let call = PendingCall::from(record);
        assert_eq!(call.tool, "update_entry");
        assert_eq!(call.choices.len(), 2);
        assert_eq!(call.choices[0].path.as_deref(), Some("people/sam-lee.md"));
        assert_eq!(call.choices[1].path, None);
        let again = serde_json::to_value(PendingCallRecord::from(&call)).unwrap();
        assert_eq!(again, serde_json::from_str::<Value>(stored).unwrap());
    }

    #[test]
    fn a_confirmation_is_stored_without_choices() {
        let call = PendingCall {
            tool: "delete_entry".into(),
            arguments: json!({"path": "ideas/x.md"}),
            proposal: "Delete ideas/x.md?".into(),
            choices: Vec::new(),
        };
        let stored = serde_json::to_value(PendingCallRecord::from(&call)).unwrap();
        assert_eq!(
            stored,
            json!({"tool": "delete_entry", "arguments": {"path": "ideas/x.md"}, "proposal": "Delete ideas/x.md?"})
        );
    }
}
