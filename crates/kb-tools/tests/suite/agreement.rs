//! The schema each tool shows the LLM and the parser of its arguments agree: arguments
//! generated from each schema's properties (valid and not) pass the schema checker
//! exactly when the typed parser accepts them.

use kb_tools::tools::capture::CaptureArgs;
use kb_tools::tools::digest::GenerateDigestArgs;
use kb_tools::tools::get::GetEntryArgs;
use kb_tools::tools::list::ListEntriesArgs;
use kb_tools::tools::move_entry::MoveEntryArgs;
use kb_tools::tools::search::SearchEntriesArgs;
use kb_tools::tools::update::UpdateEntryArgs;
use kb_tools::validate::check_arguments;
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

fn parses<T: DeserializeOwned>(value: &Value) -> bool {
    serde_json::from_value::<T>(value.clone()).is_ok()
}

/// Whether a tool's typed parser accepts some arguments.
type Parser = fn(&Value) -> bool;

/// Each tool's name with the parser of its argument struct.
fn parsers() -> Vec<(&'static str, Parser)> {
    vec![
        ("classify_and_capture", parses::<CaptureArgs>),
        ("list_entries", parses::<ListEntriesArgs>),
        ("get_entry", parses::<GetEntryArgs>),
        ("generate_digest", parses::<GenerateDigestArgs>),
        ("update_entry", parses::<UpdateEntryArgs>),
        ("move_entry", parses::<MoveEntryArgs>),
        ("search_entries", parses::<SearchEntriesArgs>),
    ]
}

/// Values that fit `schema`.
fn fitting(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(values) = schema["enum"].as_array() {
        return prop::sample::select(values.clone()).boxed();
    }
    match schema["type"].as_str() {
        Some("string") => "[a-z/. ]{0,12}".prop_map(Value::from).boxed(),
        Some("integer") => {
            let min = schema["minimum"].as_i64().unwrap_or(-1000);
            (min..min + 500).prop_map(Value::from).boxed()
        }
        Some("object") => prop::collection::btree_map("[a-z_]{1,8}", junk(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect()))
            .boxed(),
        _ => junk(),
    }
}

/// Any JSON value, biased towards near misses (zero, negatives, floats, numbers as text,
/// enum-like words in the wrong case).
fn junk() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-10.0f64..10.0).prop_map(Value::from),
        Just(json!(1e30)),
        prop::sample::select(vec!["", "5", "daily", "Daily", "inbox", "projects", "people", "weekly", "x"])
            .prop_map(Value::from),
        Just(json!([])),
        Just(json!(["projects"])),
        Just(json!({})),
        Just(json!({"status": "done"})),
    ]
    .boxed()
}

/// Arguments for a schema: each property absent, fitting, or junk, plus stray keys.
fn arguments(schema: Value) -> BoxedStrategy<Value> {
    let properties: Vec<(String, Value)> =
        schema["properties"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let per_property: Vec<BoxedStrategy<Option<Value>>> = properties
        .iter()
        .map(|(_, s)| {
            prop_oneof![2 => Just(None), 5 => fitting(s).prop_map(Some), 3 => junk().prop_map(Some)].boxed()
        })
        .collect();
    let names: Vec<String> = properties.into_iter().map(|(k, _)| k).collect();
    (per_property, prop::option::of(("[a-z]{1,6}", junk())))
        .prop_map(move |(values, stray)| {
            let mut object = Map::new();
            for (name, value) in names.iter().zip(values) {
                if let Some(value) = value {
                    object.insert(name.clone(), value);
                }
            }
            if let Some((key, value)) = stray {
                object.entry(key).or_insert(value);
            }
            Value::Object(object)
        })
        .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn schema_and_parser_accept_the_same_arguments(
        (tool, args) in prop::sample::select((0..7usize).collect::<Vec<_>>()).prop_flat_map(|i| {
            let registry = kb_tools::standard_registry().unwrap();
            let (name, _) = parsers()[i];
            let schema = registry.get(name).unwrap().parameters.clone();
            (Just(i), arguments(schema))
        })
    ) {
        let registry = kb_tools::standard_registry().unwrap();
        let (name, parse) = parsers()[tool];
        let schema = &registry.get(name).unwrap().parameters;
        let problems = check_arguments(schema, &args);
        prop_assert_eq!(problems.is_empty(), parse(&args), "{}: {} -> {:?}", name, args, problems);
    }
}

#[test]
fn near_misses_agree_too() {
    let registry = kb_tools::standard_registry().unwrap();
    let cases = [
        ("list_entries", json!({"limit": 0})),
        ("list_entries", json!({"limit": 1})),
        ("list_entries", json!({"limit": 1.0})),
        ("list_entries", json!({"limit": u64::MAX})),
        ("list_entries", json!({"category": null, "status": null, "limit": null})),
        ("get_entry", json!({"path": null})),
        ("generate_digest", json!({"type": "Daily"})),
        ("move_entry", json!({"path": "x", "targetCategory": "inbox"})),
        ("update_entry", json!({"path": "x", "updates": null})),
        ("update_entry", json!({"path": "x", "updates": {}})),
        ("update_entry", json!({"path": "x", "body": {"mode": "append", "content": "y"}})),
        (
            "update_entry",
            json!({"path": "x", "body": {"mode": "find_replace", "content": "", "expectedReplacements": 0}}),
        ),
        (
            "update_entry",
            json!({"path": "x", "body": {"mode": "find_replace", "content": "", "expectedReplacements": 2}}),
        ),
        ("update_entry", json!({"path": "x", "body": {"mode": "Append", "content": "y"}})),
        ("update_entry", json!({"path": "x", "body": {"mode": "section", "content": "y", "section": null}})),
        ("update_entry", json!({"path": "x", "body": {"content": "y"}})),
        ("update_entry", json!({"path": "x", "body": "append y"})),
    ];
    for (name, args) in cases {
        let parse = parsers().into_iter().find(|(n, _)| *n == name).unwrap().1;
        let problems = check_arguments(&registry.get(name).unwrap().parameters, &args);
        assert_eq!(problems.is_empty(), parse(&args), "{name}: {args} -> {problems:?}");
    }
}
