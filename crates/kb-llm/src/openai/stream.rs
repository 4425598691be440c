//! A streamed chat completion put back together: the `chat.completion.chunk`s of
//! async-openai's `create_stream`, folded into the [`ChatCompletion`] the same answer
//! would have been unstreamed. Pure, no I/O.
//!
//! - Text arrives in `delta.content` pieces; each non-empty piece is passed on as it comes.
//! - Tool calls arrive by `index`: the id and the name in the first piece of a call (a later
//!   one repeating them changes nothing), the arguments in pieces to be joined in order.
//!   Several calls of one message are kept in their index order.
//! - The usage comes in a last chunk without choices when `stream_options.include_usage` is
//!   honoured; a server that never sends it costs zero tokens.
//! - async-openai ends its stream alike at `data: [DONE]` and when the connection closes, so
//!   the end of an answer is known by its `finish_reason`: a stream without one was cut off
//!   and is [`LlmError::Malformed`].

use std::collections::BTreeMap;

use async_openai::types::chat::{CompletionUsage, CreateChatCompletionStreamResponse};
use kb_domain::{ChatCompletion, LlmError, ToolCall, Usage};

/// The pieces of one tool call received so far.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// A streamed answer being assembled.
#[derive(Debug, Default)]
pub struct Assembly {
    content: Option<String>,
    refusal: Option<String>,
    calls: BTreeMap<u32, PartialCall>,
    finished: bool,
    usage: Option<CompletionUsage>,
}

impl Assembly {
    /// Takes one chunk in, passing `on_delta` the text it adds to the answer.
    pub fn push(
        &mut self,
        chunk: CreateChatCompletionStreamResponse,
        on_delta: &(dyn Fn(&str) + Send + Sync),
    ) {
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage);
        }
        // kb asks for one choice; any other is ignored, as the unstreamed answer reads the first.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            let delta = choice.delta;
            if let Some(text) = delta.content {
                if !text.is_empty() {
                    on_delta(&text);
                }
                self.content.get_or_insert_with(String::new).push_str(&text);
            }
            if let Some(text) = delta.refusal {
                // A refusal is the answer, in words, when there is no other text.
                if self.content.is_none() && !text.is_empty() {
                    on_delta(&text);
                }
                self.refusal.get_or_insert_with(String::new).push_str(&text);
            }
            for piece in delta.tool_calls.unwrap_or_default() {
                let call = self.calls.entry(piece.index).or_default();
                if let Some(id) = piece.id.filter(|id| !id.is_empty())
                    && call.id.is_empty()
                {
                    call.id = id;
                }
                if let Some(function) = piece.function {
                    if let Some(name) = function.name.filter(|n| !n.is_empty())
                        && call.name.is_empty()
                    {
                        call.name = name;
                    }
                    if let Some(arguments) = function.arguments {
                        call.arguments.push_str(&arguments);
                    }
                }
            }
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
        }
    }

    /// The whole answer, once the stream has ended.
    pub fn finish(self) -> Result<ChatCompletion, LlmError> {
        if !self.finished {
            return Err(LlmError::malformed(
                "the streamed answer was cut off before it was finished (no finish_reason)",
            ));
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for (index, call) in self.calls {
            if call.id.is_empty() || call.name.is_empty() {
                return Err(LlmError::malformed(format!(
                    "streamed tool call {index} came without {}",
                    if call.id.is_empty() { "an id" } else { "a name" }
                )));
            }
            tool_calls.push(ToolCall { id: call.id, name: call.name, arguments: call.arguments });
        }
        let usage = Usage {
            llm_calls: 1,
            prompt_tokens: self.usage.as_ref().map_or(0, |u| u64::from(u.prompt_tokens)),
            completion_tokens: self.usage.as_ref().map_or(0, |u| u64::from(u.completion_tokens)),
        };
        Ok(ChatCompletion { content: self.content.or(self.refusal), tool_calls, usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use std::sync::Mutex;

    fn chunk(choices: Value, usage: Value) -> CreateChatCompletionStreamResponse {
        serde_json::from_value(json!({
            "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": choices, "usage": usage
        }))
        .unwrap()
    }

    fn delta(delta: Value, finish: Value) -> CreateChatCompletionStreamResponse {
        chunk(json!([{"index": 0, "delta": delta, "finish_reason": finish}]), Value::Null)
    }

    fn assemble(
        chunks: Vec<CreateChatCompletionStreamResponse>,
    ) -> (Result<ChatCompletion, LlmError>, Vec<String>) {
        let deltas = Mutex::new(Vec::new());
        let on_delta = |text: &str| deltas.lock().unwrap().push(text.to_string());
        let mut assembly = Assembly::default();
        for c in chunks {
            assembly.push(c, &on_delta);
        }
        (assembly.finish(), deltas.into_inner().unwrap())
    }

    #[test]
    fn text_pieces_join_and_are_passed_on_in_order() {
        let (done, deltas) = assemble(vec![
            delta(json!({"role": "assistant", "content": ""}), Value::Null),
            delta(json!({"content": "Pri"}), Value::Null),
            delta(json!({"content": "ya is"}), Value::Null),
            delta(json!({}), json!("stop")),
            chunk(json!([]), json!({"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10})),
        ]);
        let done = done.unwrap();
        assert_eq!(done.content.as_deref(), Some("Priya is"));
        assert_eq!(deltas, ["Pri", "ya is"]);
        assert_eq!(done.usage, Usage { llm_calls: 1, prompt_tokens: 7, completion_tokens: 3 });
    }

    #[test]
    fn tool_calls_assemble_by_index() {
        let (done, deltas) = assemble(vec![
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "x", "arguments": "{\"q"}}]}),
                Value::Null,
            ),
            delta(
                json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "y", "arguments": ""}}]}),
                Value::Null,
            ),
            delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\":1}"}}]}), Value::Null),
            delta(
                json!({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
                json!("tool_calls"),
            ),
        ]);
        let done = done.unwrap();
        assert!(deltas.is_empty());
        assert_eq!(done.content, None);
        let calls: Vec<_> = done.tool_calls.iter().map(|c| (&*c.id, &*c.name, &*c.arguments)).collect();
        assert_eq!(calls, [("a", "x", "{\"q\":1}"), ("b", "y", "{}")]);
        assert_eq!(done.usage.prompt_tokens, 0);
    }

    #[test]
    fn no_finish_reason_means_cut_off() {
        let (done, _) = assemble(vec![delta(json!({"content": "half"}), Value::Null)]);
        assert!(matches!(done, Err(LlmError::Malformed { .. })));
        let (done, _) = assemble(vec![delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
            json!("tool_calls"),
        )]);
        assert!(matches!(done, Err(LlmError::Malformed { detail, .. }) if detail.contains("id")));
    }
}
