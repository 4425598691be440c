//! Translation between kb's LLM value types ([`kb_domain::ChatRequest`] and friends) and
//! async-openai's chat-completions types, both ways. Pure functions, no I/O.

use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestAssistantMessageContent, ChatCompletionRequestMessage,
    ChatCompletionRequestSystemMessage, ChatCompletionRequestSystemMessageContent,
    ChatCompletionRequestToolMessage, ChatCompletionRequestToolMessageContent,
    ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent, ChatCompletionResponseMessage,
    ChatCompletionTool, ChatCompletionToolChoiceOption, ChatCompletionTools, CompletionUsage,
    CreateChatCompletionRequest, CreateChatCompletionResponse, FunctionCall, FunctionObject, ResponseFormat,
    ResponseFormatJsonSchema, ToolChoiceOptions,
};
use kb_domain::{
    ChatCompletion, ChatMessage, ChatRequest, LlmError, SharedCause, StructuredCompletion, StructuredRequest,
    ToolCall, ToolDefinition, Usage,
};

/// The request of one step of a conversation with tools (`tool_choice: auto` when there
/// are tools; no tool fields at all when there are none, as OpenAI requires).
pub fn chat_request(model: &str, request: &ChatRequest) -> CreateChatCompletionRequest {
    let has_tools = !request.tools.is_empty();
    CreateChatCompletionRequest {
        model: model.to_string(),
        messages: request.messages.iter().map(message).collect(),
        tools: has_tools.then(|| request.tools.iter().map(tool).collect()),
        tool_choice: has_tools.then_some(ChatCompletionToolChoiceOption::Mode(ToolChoiceOptions::Auto)),
        ..CreateChatCompletionRequest::default()
    }
}

/// The request of an answer following a JSON schema (`response_format: json_schema`, strict).
pub fn structured_request(model: &str, request: &StructuredRequest) -> CreateChatCompletionRequest {
    CreateChatCompletionRequest {
        model: model.to_string(),
        messages: request.messages.iter().map(message).collect(),
        response_format: Some(ResponseFormat::JsonSchema {
            json_schema: ResponseFormatJsonSchema {
                description: None,
                name: request.schema_name.clone(),
                schema: request.schema.clone(),
                strict: Some(true),
            },
        }),
        ..CreateChatCompletionRequest::default()
    }
}

fn message(message: &ChatMessage) -> ChatCompletionRequestMessage {
    match message {
        ChatMessage::System { content } => {
            ChatCompletionRequestMessage::System(ChatCompletionRequestSystemMessage {
                content: ChatCompletionRequestSystemMessageContent::Text(content.clone()),
                name: None,
            })
        }
        ChatMessage::User { content } => {
            ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
                content: ChatCompletionRequestUserMessageContent::Text(content.clone()),
                name: None,
            })
        }
        ChatMessage::Assistant { content, tool_calls } => {
            let text = content.as_deref().filter(|text| !text.is_empty());
            // OpenAI wants content unless there are tool calls: an empty answer is sent as "".
            let content = match (text, tool_calls.is_empty()) {
                (Some(text), _) => Some(text.to_string()),
                (None, true) => Some(String::new()),
                (None, false) => None,
            };
            ChatCompletionRequestMessage::Assistant(ChatCompletionRequestAssistantMessage {
                content: content.map(ChatCompletionRequestAssistantMessageContent::Text),
                tool_calls: (!tool_calls.is_empty()).then(|| tool_calls.iter().map(outgoing_call).collect()),
                ..ChatCompletionRequestAssistantMessage::default()
            })
        }
        ChatMessage::Tool { tool_call_id, content } => {
            ChatCompletionRequestMessage::Tool(ChatCompletionRequestToolMessage {
                content: ChatCompletionRequestToolMessageContent::Text(content.clone()),
                tool_call_id: tool_call_id.clone(),
            })
        }
    }
}

fn outgoing_call(call: &ToolCall) -> ChatCompletionMessageToolCalls {
    ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
        id: call.id.clone(),
        function: FunctionCall { name: call.name.clone(), arguments: call.arguments.clone() },
    })
}

fn tool(definition: &ToolDefinition) -> ChatCompletionTools {
    ChatCompletionTools::Function(ChatCompletionTool {
        function: FunctionObject {
            name: definition.name.clone(),
            description: Some(definition.description.clone()),
            parameters: Some(definition.parameters.clone()),
            strict: None,
        },
    })
}

/// The answer of a step with tools: the first choice's text and tool calls, and the usage.
pub fn chat_completion(response: CreateChatCompletionResponse) -> Result<ChatCompletion, LlmError> {
    let usage = usage(response.usage.as_ref());
    let message = first_message(response)?;
    let tool_calls = message.tool_calls.unwrap_or_default().into_iter().map(incoming_call).collect();
    // A refusal is the model's answer to the person, in words.
    let content = message.content.or(message.refusal);
    Ok(ChatCompletion { content, tool_calls, usage })
}

/// The answer following a schema: the first choice's text parsed as JSON.
pub fn structured_completion(
    response: CreateChatCompletionResponse,
) -> Result<StructuredCompletion, LlmError> {
    let usage = usage(response.usage.as_ref());
    let message = first_message(response)?;
    if let Some(refusal) = message.refusal.filter(|r| !r.trim().is_empty()) {
        return Err(LlmError::refused(format!("the model declined to answer: {refusal}")));
    }
    let Some(content) = message.content else {
        return Err(LlmError::malformed("the structured answer has no content"));
    };
    let value = serde_json::from_str(&content).map_err(|err| {
        LlmError::malformed("the structured answer is not JSON").caused_by(SharedCause::new(err))
    })?;
    Ok(StructuredCompletion { value, usage })
}

fn first_message(response: CreateChatCompletionResponse) -> Result<ChatCompletionResponseMessage, LlmError> {
    response
        .choices
        .into_iter()
        .next()
        .map(|choice| choice.message)
        .ok_or_else(|| LlmError::malformed("the answer has no choices"))
}

fn incoming_call(call: ChatCompletionMessageToolCalls) -> ToolCall {
    match call {
        ChatCompletionMessageToolCalls::Function(call) => {
            ToolCall { id: call.id, name: call.function.name, arguments: call.function.arguments }
        }
        // kb offers function tools only; a custom call goes to the registry, which answers
        // the model with an unknown-tool error it can correct.
        ChatCompletionMessageToolCalls::Custom(call) => {
            ToolCall { id: call.id, name: call.custom_tool.name, arguments: call.custom_tool.input }
        }
    }
}

fn usage(usage: Option<&CompletionUsage>) -> Usage {
    Usage {
        llm_calls: 1,
        prompt_tokens: usage.map_or(0, |u| u64::from(u.prompt_tokens)),
        completion_tokens: usage.map_or(0, |u| u64::from(u.completion_tokens)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(request: &CreateChatCompletionRequest) -> serde_json::Value {
        serde_json::to_value(request).unwrap()
    }

    #[test]
    fn conversation_with_tool_results_goes_out_in_openai_form() {
        let call =
            ToolCall { id: "call_1".into(), name: "search".into(), arguments: r#"{"query":"priya"}"#.into() };
        let request = ChatRequest {
            messages: vec![
                ChatMessage::System { content: "be brief".into() },
                ChatMessage::User { content: "who is priya?".into() },
                ChatMessage::Assistant { content: None, tool_calls: vec![call] },
                ChatMessage::Tool { tool_call_id: "call_1".into(), content: r#"{"entries":[]}"#.into() },
            ],
            tools: vec![ToolDefinition {
                name: "search".into(),
                description: "search the vault".into(),
                parameters: json!({"type": "object", "properties": {"query": {"type": "string"}}}),
            }],
            ..ChatRequest::default()
        };
        let body = wire(&chat_request("m", &request));
        assert_eq!(body["model"], "m");
        assert_eq!(body["tool_choice"], "auto");
        assert_eq!(body["tools"][0]["type"], "function");
        assert_eq!(body["tools"][0]["function"]["name"], "search");
        assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<_> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool"]);
        assert_eq!(messages[0]["content"], "be brief");
        assert!(messages[2].get("content").is_none());
        assert_eq!(messages[2]["tool_calls"][0]["type"], "function");
        assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
        assert_eq!(messages[2]["tool_calls"][0]["function"]["arguments"], r#"{"query":"priya"}"#);
        assert_eq!(messages[3]["tool_call_id"], "call_1");
    }

    #[test]
    fn no_tools_means_no_tool_fields() {
        let request = ChatRequest {
            messages: vec![ChatMessage::User { content: "hi".into() }],
            ..ChatRequest::default()
        };
        let body = wire(&chat_request("m", &request));
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
    }

    #[test]
    fn empty_assistant_text_is_sent_as_empty_string() {
        let request = ChatRequest {
            messages: vec![ChatMessage::Assistant { content: None, tool_calls: vec![] }],
            ..ChatRequest::default()
        };
        assert_eq!(wire(&chat_request("m", &request))["messages"][0]["content"], "");
    }

    #[test]
    fn structured_requests_ask_for_a_strict_schema() {
        let request = StructuredRequest {
            messages: vec![ChatMessage::User { content: "classify".into() }],
            schema_name: "classification".into(),
            schema: json!({"type": "object"}),
            ..StructuredRequest::default()
        };
        let body = wire(&structured_request("m", &request));
        assert_eq!(body["response_format"]["type"], "json_schema");
        assert_eq!(body["response_format"]["json_schema"]["name"], "classification");
        assert_eq!(body["response_format"]["json_schema"]["strict"], true);
        assert_eq!(body["response_format"]["json_schema"]["schema"], json!({"type": "object"}));
    }

    #[test]
    fn the_date_and_the_hint_stay_out_of_the_wire_the_prompt_tells_the_model() {
        let messages = vec![ChatMessage::User { content: "renew passport by Dec 15".into() }];
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 21);
        let plain = ChatRequest { messages: messages.clone(), ..ChatRequest::default() };
        let dated = ChatRequest { today, ..plain.clone() };
        assert_eq!(wire(&chat_request("m", &plain)), wire(&chat_request("m", &dated)));
        let plain = StructuredRequest {
            messages,
            schema_name: "classification".into(),
            schema: json!({"type": "object"}),
            ..StructuredRequest::default()
        };
        let hinted =
            StructuredRequest { today, forced_category: Some(kb_domain::Category::Admin), ..plain.clone() };
        assert_eq!(wire(&structured_request("m", &plain)), wire(&structured_request("m", &hinted)));
    }
}
