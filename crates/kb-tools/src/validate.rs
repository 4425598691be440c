//! A checker of tool arguments against the subset of JSON schema that
//! [`crate::schema::parameters_schema`] produces (`type`, `properties`, `required`,
//! `enum`, `minimum`, `maximum`, `items`, `additionalProperties`).
//!
//! It lists every problem at once, in words an LLM can fix, before the typed parser runs.
//! One leniency mirrors serde and OpenAI habit: `null` for an optional field counts as
//! absent. A test checks that this checker and the parsers accept exactly the same
//! arguments.

use serde_json::{Map, Value};

/// Every way `value` does not fit `schema`; empty when it fits.
pub fn check_arguments(schema: &Value, value: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !value.is_object() {
        problems.push(format!("arguments must be a JSON object, got {}", describe(value)));
        return problems;
    }
    check(schema, value, "", &mut problems);
    problems
}

fn check(schema: &Value, value: &Value, at: &str, problems: &mut Vec<String>) {
    let Value::Object(schema) = schema else { return };
    if let Some(expected) = schema.get("type").and_then(Value::as_str)
        && !has_type(value, expected)
    {
        problems.push(format!(
            "{}expected {}, got {}",
            field_prefix(at),
            type_words(expected),
            describe(value)
        ));
        return;
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        let words: Vec<String> =
            allowed.iter().map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string)).collect();
        problems.push(format!(
            "{}expected one of {}, got {}",
            field_prefix(at),
            words.join(", "),
            describe(value)
        ));
        return;
    }
    if let (Some(min), Some(n)) = (schema.get("minimum").and_then(Value::as_f64), value.as_f64())
        && n < min
    {
        problems.push(format!("{}must be at least {}, got {}", field_prefix(at), number(min), value));
    }
    if let (Some(max), Some(n)) = (schema.get("maximum").and_then(Value::as_f64), value.as_f64())
        && n > max
    {
        problems.push(format!("{}must be at most {}, got {}", field_prefix(at), number(max), value));
    }
    match value {
        Value::Object(object) => check_object(schema, object, at, problems),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &format!("{at}[{i}]"), problems);
                }
            }
        }
        _ => {}
    }
}

fn check_object(
    schema: &Map<String, Value>,
    object: &Map<String, Value>,
    at: &str,
    problems: &mut Vec<String>,
) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for name in &required {
        if !object.contains_key(*name) {
            problems.push(format!("missing required field \"{}\"", join(at, name)));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, item) in object {
        let path = join(at, name);
        match properties.and_then(|p| p.get(name)) {
            Some(_) if item.is_null() && !required.contains(&name.as_str()) => {}
            Some(property) => check(property, item, &path, problems),
            None => match schema.get("additionalProperties") {
                Some(Value::Bool(false)) => problems.push(format!("unexpected field \"{path}\"")),
                Some(extra @ Value::Object(_)) => check(extra, item, &path, problems),
                _ => {}
            },
        }
    }
}

fn has_type(value: &Value, expected: &str) -> bool {
    match expected {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn type_words(expected: &str) -> String {
    match expected {
        "object" => "an object".into(),
        "array" => "a list".into(),
        "string" => "text".into(),
        "boolean" => "true or false".into(),
        "integer" => "a whole number".into(),
        "number" => "a number".into(),
        other => other.to_string(),
    }
}

fn field_prefix(at: &str) -> String {
    if at.is_empty() { String::new() } else { format!("field \"{at}\": ") }
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() { name.to_string() } else { format!("{at}.{name}") }
}

fn number(n: f64) -> String {
    if n.fract() == 0.0 { format!("{}", n as i64) } else { n.to_string() }
}

/// A short description of a JSON value for error messages.
pub fn describe(value: &Value) -> String {
    let text = match value {
        Value::Null => return "null".to_string(),
        Value::Object(_) => return "an object".to_string(),
        Value::Array(_) => return "a list".to_string(),
        other => other.to_string(),
    };
    if text.chars().count() > 60 { format!("{}…", text.chars().take(59).collect::<String>()) } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "kind": {"type": "string", "enum": ["daily", "weekly"]},
                "limit": {"type": "integer", "minimum": 1},
                "updates": {"type": "object", "additionalProperties": true}
            },
            "required": ["path", "kind"]
        })
    }

    #[test]
    fn lists_every_problem() {
        let problems = check_arguments(&schema(), &json!({"kind": "monthly", "limit": 0, "updates": 3}));
        assert_eq!(
            problems,
            [
                "missing required field \"path\"",
                "field \"kind\": expected one of daily, weekly, got \"monthly\"",
                "field \"limit\": must be at least 1, got 0",
                "field \"updates\": expected an object, got 3",
            ]
        );
    }

    #[test]
    fn accepts_fitting_arguments_and_null_optionals() {
        let ok =
            json!({"path": "ideas/x.md", "kind": "daily", "limit": null, "updates": {"a": [1]}, "extra": 1});
        assert!(check_arguments(&schema(), &ok).is_empty());
        assert_eq!(check_arguments(&schema(), &json!([1])), ["arguments must be a JSON object, got a list"]);
        assert_eq!(
            check_arguments(&schema(), &json!({"path": null, "kind": "daily"})),
            ["field \"path\": expected text, got null"]
        );
        assert_eq!(
            check_arguments(&schema(), &json!({"path": "x", "kind": "daily", "limit": 2.5})),
            ["field \"limit\": expected a whole number, got 2.5"]
        );
    }
}
