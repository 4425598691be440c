//! Shaping an answer to the JSON schema a structured request asks for, so the offline
//! classifier follows the same schema an LLM would: unknown keys dropped (or nested under
//! `fields` when the schema groups the category's fields there), nested objects shaped too,
//! and every required key present (an empty list for arrays, `null` otherwise).

use serde_json::{Map, Value, json};

/// `answer`, shaped to `schema`. A schema without `properties` leaves it unchanged.
pub fn fit_to_schema(answer: Value, schema: &Value) -> Value {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return answer };
    let Value::Object(mut map) = answer else { return answer };
    if props.contains_key("fields") && !map.contains_key("fields") {
        let extra: Vec<String> = map.keys().filter(|k| !props.contains_key(*k)).cloned().collect();
        let fields: Map<String, Value> =
            extra.iter().filter_map(|k| map.remove(k).map(|v| (k.clone(), v))).collect();
        map.insert("fields".into(), Value::Object(fields));
    }
    map.retain(|k, _| props.contains_key(k));
    for (key, value) in map.iter_mut() {
        if let Some(sub) = props.get(key) {
            *value = fit_to_schema(value.take(), sub);
        }
    }
    for key in
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str)
    {
        if !map.contains_key(key) {
            map.insert(key.to_string(), empty(props.get(key)));
        }
    }
    Value::Object(map)
}

/// The value standing for "nothing" in a property of this schema.
fn empty(schema: Option<&Value>) -> Value {
    let kind = schema.and_then(|s| s.get("type"));
    let is = |name: &str| match kind {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(types)) => types.iter().any(|t| t == name) && !types.iter().any(|t| t == "null"),
        _ => false,
    };
    if is("array") {
        json!([])
    } else if is("object") {
        fit_to_schema(json!({}), schema.unwrap_or(&Value::Null))
    } else {
        Value::Null
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_fields_are_nested_and_required_keys_filled() {
        let answer = json!({"category": "admin", "confidence": 0.9, "name": "Pay rent", "status": "pending",
            "due_date": "2026-12-01", "tags": ["rent"]});
        let text_or_null = json!({"type": ["string", "null"]});
        let schema = json!({"type": "object", "required": ["category", "confidence", "name", "tags", "fields"],
            "properties": {"category": {}, "confidence": {}, "name": {}, "tags": {"type": "array"},
                "fields": {"type": "object", "required": ["context", "follow_ups", "status", "due_date"],
                    "properties": {"context": text_or_null, "follow_ups": {"type": "array"},
                        "status": text_or_null, "due_date": text_or_null}}}});
        assert_eq!(
            fit_to_schema(answer.clone(), &schema),
            json!({"category": "admin", "confidence": 0.9, "name": "Pay rent", "tags": ["rent"],
                "fields": {"status": "pending", "due_date": "2026-12-01", "context": null, "follow_ups": []}})
        );
        assert_eq!(fit_to_schema(answer.clone(), &json!({"type": "object"})), answer);
    }

    #[test]
    fn flat_schemas_keep_flat_answers() {
        let schema =
            json!({"properties": {"category": {}, "status": {}}, "required": ["category", "reason"]});
        assert_eq!(
            fit_to_schema(json!({"category": "admin", "status": "pending", "extra": 1}), &schema),
            json!({"category": "admin", "status": "pending", "reason": null})
        );
    }
}
