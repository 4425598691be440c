//! A turn that captured stores `filedEntryPath` and `filedConfidence` equal to the
//! capture's, for any confidence, threshold and text; and (confidence routing through the
//! whole turn) the entry is in the inbox exactly when the confidence is below the
//! threshold.
//!
//! One runtime and one fake server serve every case; each case opens a fresh vault.

use kb_core::{Assistant, Config, ModelChoice};
use kb_domain::Role;
use kb_llm::openai::OpenAiSettings;
use kb_llm::testing::{FakeOpenAi, FakeReply};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};
use serde_json::{Value, json};

use super::{call, entry_files};

const CATEGORIES: [&str; 4] = ["people", "projects", "ideas", "admin"];

/// A number in [0, 1] with up to six decimals, as a model writes one. (Seventeen-digit
/// numbers can come back one ulp off: serde_json parses floats without `float_roundtrip`.)
fn unit() -> impl Strategy<Value = f64> {
    (0..=1_000_000_u32).prop_map(|n| f64::from(n) / 1e6)
}

fn case() -> impl Strategy<Value = (f64, f64, String, usize)> {
    let threshold = prop_oneof![Just(0.0), Just(1.0), Just(0.6), unit()];
    let text = "[^\\[\\]\\p{C}]{0,60}[\\p{L}\\p{N}][^\\[\\]\\p{C}]{0,60}";
    (threshold, unit(), any::<bool>(), text, 0..4_usize).prop_map(
        |(threshold, confidence, same, text, category)| {
            // Often exactly at the threshold, where `>=` decides.
            let confidence = if same { threshold } else { confidence };
            (threshold, confidence, text, category)
        },
    )
}

#[test]
fn a_turn_that_captured_stores_what_the_capture_filed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut runner =
        TestRunner::new(RunnerConfig { cases: 128, failure_persistence: None, ..RunnerConfig::default() });
    runner
        .run(&case(), |(threshold, confidence, text, category)| {
            // A fresh server per case, so a failing case (and its shrinking) leaves no
            // scripted replies behind for the next.
            let fake = rt.block_on(FakeOpenAi::start()).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let settings = OpenAiSettings {
                base_url: Some(fake.base_url()),
                ..OpenAiSettings::new("sk-test", "test-model")
            };
            let config =
                Config { threshold, model: ModelChoice::OpenAi(settings), ..Config::offline(dir.path()) };
            fake.push(call("call_cap", "classify_and_capture", &json!({"text": text})));
            fake.push(FakeReply::classification(CATEGORIES[category], confidence, "Captured thought"));
            fake.push(FakeReply::text("Filed."));
            let (response, stored, result) = rt.block_on(async {
                let kb = Assistant::open(config).await.unwrap();
                let response = kb.chat().send(None, &text).await.unwrap();
                let (_, stored) = kb.chat().conversation(&response.conversation_id).await.unwrap();
                kb.close().await;
                let tool = stored.iter().find(|m| m.role == Role::Tool).unwrap().content.clone();
                (response, stored, serde_json::from_str::<Value>(&tool).unwrap())
            });
            prop_assert_eq!(fake.pending(), 0);
            prop_assert_eq!(&result["success"], &json!(true), "{}", result);
            let path = result["data"]["path"].as_str().unwrap().to_string();
            let captured_confidence = result["data"]["confidence"].as_f64().unwrap();
            prop_assert_eq!(captured_confidence, confidence);

            let last = stored.last().unwrap();
            prop_assert_eq!(last.role, Role::Assistant);
            prop_assert_eq!(last.filed_entry_path.as_deref(), Some(path.as_str()));
            prop_assert_eq!(last.filed_confidence, Some(captured_confidence));
            prop_assert_eq!(
                response.message.filed_entry_path.as_ref().map(ToString::to_string),
                Some(path.clone())
            );
            prop_assert_eq!(response.message.filed_confidence, Some(captured_confidence));

            let in_inbox = path.starts_with("inbox/");
            prop_assert_eq!(
                in_inbox,
                confidence < threshold,
                "{} at {} against {}",
                path,
                confidence,
                threshold
            );
            if !in_inbox {
                prop_assert!(path.starts_with(&format!("{}/", CATEGORIES[category])), "{}", path);
            }
            prop_assert_eq!(entry_files(dir.path()), vec![path]);
            Ok(())
        })
        .unwrap();
}
