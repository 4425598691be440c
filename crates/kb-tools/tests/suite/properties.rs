//! Tool definitions and confidence routing, as proptest suites.

use std::sync::Arc;

use kb_domain::{Category, Confidence, EntryReader};
use kb_tools::ToolRegistry;
use kb_tools::testing::ScriptedClassifier;
use proptest::prelude::*;
use proptest::sample::subsequence;
use serde_json::{Value, json};

use super::support::*;

fn registry_of(picks: &[usize]) -> ToolRegistry {
    use kb_tools::tools::*;
    let mut builder = ToolRegistry::builder();
    for pick in picks {
        builder = match pick {
            0 => builder.register(ClassifyAndCapture),
            1 => builder.register(ListEntries),
            2 => builder.register(GetEntry),
            3 => builder.register(GenerateDigest),
            4 => builder.register(UpdateEntry),
            5 => builder.register(MoveEntry),
            _ => builder.register(SearchEntries),
        };
    }
    builder.build().unwrap()
}

fn no_refs(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.keys().all(|k| !matches!(k.as_str(), "$ref" | "$schema" | "definitions" | "$defs"))
                && map.values().all(no_refs)
        }
        Value::Array(items) => items.iter().all(no_refs),
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every definition, in any registry built from the tools, is well formed.
    #[test]
    fn every_tool_definition_is_well_formed(picks in subsequence((0..7).collect::<Vec<usize>>(), 1..=7).prop_shuffle()) {
        let registry = registry_of(&picks);
        prop_assert_eq!(registry.definitions().len(), picks.len());
        for def in registry.definitions() {
            prop_assert!(!def.name.is_empty());
            prop_assert!(def.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'));
            prop_assert!(def.description.len() >= 20 && def.description.contains("Use when"), "{}", def.description);
            let params = &def.parameters;
            prop_assert_eq!(&params["type"], "object");
            let properties = params["properties"].as_object().expect("properties");
            prop_assert!(!properties.is_empty());
            let required = params["required"].as_array().expect("required");
            for name in required {
                prop_assert!(properties.contains_key(name.as_str().unwrap()), "{} requires {}", def.name, name);
            }
            for (name, property) in properties {
                prop_assert!(property["type"].is_string(), "{}.{} has no plain type", def.name, name);
                prop_assert!(property["description"].as_str().is_some_and(|d| d.len() >= 10), "{}.{}", def.name, name);
                if let Some(values) = property.get("enum") {
                    prop_assert_eq!(&property["type"], "string");
                    prop_assert!(values.as_array().unwrap().iter().all(Value::is_string));
                }
            }
            prop_assert!(no_refs(params), "{}", params);
            prop_assert_eq!(registry.get(&def.name), Some(&def));
        }
    }

    /// Confidence C against threshold T: C >= T files into the category,
    /// C < T into the inbox (the boundary C == T included).
    #[test]
    fn confidence_routes_the_capture(
        t in 0.0..=1.0f64,
        c in prop_oneof![0.0..=1.0f64, Just(-1.0)],
        category in prop::sample::select(Category::FILING.to_vec()),
        name in "[A-Za-z][a-z]{0,10}( [a-z]{1,8}){0,3}",
    ) {
        let c = if c < 0.0 { t } else { c };
        let text = format!("about {name}");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let answer = classification(category, c, &name);
        let (services, repo) = services_with(Arc::new(ScriptedClassifier::new(vec![Ok(answer)])), None);
        let ctx = ctx().with_threshold(Confidence::new(t).unwrap());
        let result = rt.block_on(call(&services, &ctx, "classify_and_capture", json!({"text": text})));
        let data = data_of(&result).clone();
        let path = data["path"].as_str().unwrap().to_string();
        let expected = if c >= t { category } else { Category::Inbox };
        prop_assert!(path.starts_with(&format!("{}/", expected.as_str())), "C={} T={} -> {}", c, t, path);
        prop_assert_eq!(&data["category"], expected.as_str());
        prop_assert_eq!(&data["clarificationNeeded"], &json!(c < t));
        prop_assert_eq!(data["confidence"].as_f64(), Some(c));
        let (filed, confidence) = result.filed().unwrap();
        prop_assert_eq!(filed.to_string(), path);
        prop_assert_eq!(confidence.value(), c);
        let entries = repo.all_entries().unwrap();
        prop_assert_eq!(entries.len(), 1);
        prop_assert_eq!(entries[0].category(), expected);
        if c < t {
            prop_assert_eq!(entries[0].frontmatter.get_str("suggested_category"), Some(category.as_str()));
            prop_assert_eq!(entries[0].frontmatter.get_str("original_text"), Some(text.as_str()));
        }
    }
}
