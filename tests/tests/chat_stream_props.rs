#![allow(clippy::unwrap_used, clippy::expect_used)]
//! For any scripted reply of the model — its text split at any points, none to two tool
//! calls with their arguments split at any points, the usage sent or not — a turn streamed
//! live (the model streamed, through async-openai's `create_stream`, real HTTP to
//! the fake server) and the same turn unstreamed store the same messages and answer the same
//! body, ids and times aside. The deltas sent end with the answer.
//!
//! One assistant and one fake server serve every case; each turn starts a conversation.

use std::time::Duration;

use kb_core::{Assistant, Config, ModelChoice};
use kb_domain::turn_events::TurnEvent;
use kb_llm::openai::OpenAiSettings;
use kb_llm::testing::{FakeOpenAi, FakeReply, StreamedCall};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};
use serde_json::{Value, json};

/// One scripted model call: text pieces, tool calls `(name, argument pieces)`, usage.
#[derive(Debug, Clone)]
struct Round {
    content: Vec<String>,
    calls: Vec<(String, Vec<String>)>,
    usage: Option<(u32, u32)>,
}

/// `text` cut at these char positions.
fn split(text: &str, cuts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    cuts.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for cut in cuts.into_iter().chain([chars.len()]) {
        pieces.push(chars[from..cut].iter().collect());
        from = cut;
    }
    pieces
}

fn text_pieces() -> impl Strategy<Value = Vec<String>> {
    prop_oneof![
        1 => Just(Vec::new()),
        4 => ("[a-zA-Zé0-9 ,.!?*\n-]{0,60}", prop::collection::vec(any::<usize>(), 0..6))
            .prop_map(|(text, cuts)| split(&text, &cuts)),
    ]
}

fn tool_call() -> impl Strategy<Value = (String, Vec<String>)> {
    let call = prop_oneof![
        "[a-z]{1,12}".prop_map(|w| ("search_entries".to_string(), json!({"query": w}))),
        Just(("list_entries".to_string(), json!({}))),
        "[a-z]{1,12}".prop_map(|w| ("get_entry".to_string(), json!({"path": format!("people/{w}.md")}))),
    ];
    (call, prop::collection::vec(any::<usize>(), 0..5))
        .prop_map(|((name, arguments), cuts)| (name, split(&arguments.to_string(), &cuts)))
}

fn usage() -> impl Strategy<Value = Option<(u32, u32)>> {
    prop::option::of((0..5000_u32, 0..500_u32))
}

fn script() -> impl Strategy<Value = Vec<Round>> {
    let first = (text_pieces(), prop::collection::vec(tool_call(), 0..=2), usage())
        .prop_map(|(content, calls, usage)| Round { content, calls, usage });
    let last =
        (text_pieces(), usage()).prop_map(|(content, usage)| Round { content, calls: Vec::new(), usage });
    (first, last)
        .prop_map(|(first, last)| if first.calls.is_empty() { vec![first] } else { vec![first, last] })
}

fn reply(round: &Round, streamed: bool) -> FakeReply {
    let content: Vec<&str> = round.content.iter().map(String::as_str).collect();
    let ids: Vec<String> = (0..round.calls.len()).map(|i| format!("call_{i}")).collect();
    let pieces: Vec<Vec<&str>> =
        round.calls.iter().map(|(_, args)| args.iter().map(String::as_str).collect()).collect();
    let calls: Vec<StreamedCall<'_>> = round
        .calls
        .iter()
        .zip(&ids)
        .zip(&pieces)
        .map(|(((name, _), id), arguments)| StreamedCall { id, name, arguments })
        .collect();
    if streamed {
        FakeReply::streamed(&content, &calls, round.usage)
    } else {
        FakeReply::unstreamed(&content, &calls, round.usage)
    }
}

/// `value` without the keys that name one conversation, message or moment.
fn without_ids(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for key in ["id", "conversationId", "conversation_id", "createdAt", "created_at"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

#[test]
fn a_streamed_turn_stores_and_answers_what_the_unstreamed_turn_does() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (fake, kb) = rt.block_on(async {
        let fake = FakeOpenAi::start().await.unwrap();
        let settings = OpenAiSettings {
            base_url: Some(fake.base_url()),
            timeout: Duration::from_secs(10),
            ..OpenAiSettings::new("sk-test", "test-model")
        };
        let config = Config { model: ModelChoice::OpenAi(settings), ..Config::offline(dir.path()) };
        (fake, Assistant::open(config).await.unwrap())
    });
    let mut runner =
        TestRunner::new(RunnerConfig { cases: 256, failure_persistence: None, ..RunnerConfig::default() });
    runner
        .run(&script(), |rounds| {
            fake.clear();
            let message = "what do I have on file?";
            let (streamed, deltas, plain) = rt.block_on(async {
                for round in &rounds {
                    fake.push(reply(round, true));
                }
                let (events, mut receiver) = tokio::sync::mpsc::unbounded_channel();
                let streamed = kb.chat().send_with_events(None, message, events).await.unwrap();
                let mut deltas = String::new();
                while let Ok(event) = receiver.try_recv() {
                    if let TurnEvent::MessageDelta { text } = event {
                        deltas.push_str(&text);
                    }
                }
                let streamed_stored = kb.chat().conversation(&streamed.conversation_id).await.unwrap().1;
                for round in &rounds {
                    fake.push(reply(round, false));
                }
                let plain = kb.chat().send(None, message).await.unwrap();
                let plain_stored = kb.chat().conversation(&plain.conversation_id).await.unwrap().1;
                ((streamed, streamed_stored), deltas, (plain, plain_stored))
            });
            prop_assert_eq!(fake.pending(), 0);
            let requests = fake.requests();
            let last = &requests[requests.len() - 2 * rounds.len()..];
            prop_assert!(last[..rounds.len()].iter().all(|r| r.json()["stream"] == true));
            prop_assert!(last[rounds.len()..].iter().all(|r| r.json().get("stream").is_none()));

            let body = |r: &kb_core::ChatResponse| {
                without_ids(serde_json::to_value(kb_server::dto::ChatAnswer::from(r)).unwrap())
            };
            prop_assert_eq!(body(&streamed.0), body(&plain.0));
            let stored = |m: &Vec<kb_domain::Message>| {
                without_ids(
                    serde_json::to_value(m.iter().map(kb_server::dto::MessageJson::from).collect::<Vec<_>>())
                        .unwrap(),
                )
            };
            prop_assert_eq!(stored(&streamed.1), stored(&plain.1));
            prop_assert!(
                deltas.ends_with(&streamed.0.message.content),
                "sent {:?}, answered {:?}",
                deltas,
                streamed.0.message.content
            );
            Ok(())
        })
        .unwrap();
    rt.block_on(kb.close());
}
