//! The fake server's embeddings: `/v1/embeddings` answered with word vectors that need no
//! model. Each word of a text (lowercased, split on what is not a letter or a digit, a
//! final `s` dropped) adds ±1 to a dimension its hash picks; the sum is normalised. Texts
//! sharing words are near, others far: enough for tests of what kb does with vectors (how
//! many texts it sends, when, what it keeps), never of how well a model understands.
//! Another `model` seed hashes words elsewhere: the vectors of another model of the same
//! size.

use serde_json::{Value, json};

use super::reply::FakeReply;

/// The answer to an embeddings request `body` with vectors of `dimension` numbers of the
/// model `seed`; a 400 when it holds no texts.
pub(super) fn answer(body: &Value, dimension: usize, seed: u64) -> FakeReply {
    let texts: Vec<&str> = match &body["input"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if texts.is_empty() {
        return FakeReply::error(400, "invalid_request_error", "'input' must not be empty");
    }
    let data: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": word_vector(text, dimension, seed)}))
        .collect();
    FakeReply::json(&json!({
        "object": "list",
        "data": data,
        "model": body["model"],
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }))
}

/// The word vector of `text` by the model `seed` (see the module documentation).
pub fn word_vector(text: &str, dimension: usize, seed: u64) -> Vec<f32> {
    let mut vector = vec![0.0_f32; dimension.max(1)];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let word = word.to_lowercase();
        let word = word.strip_suffix('s').filter(|w| w.len() > 2).unwrap_or(&word);
        // FNV-1a: stable across runs and platforms.
        let hash = word
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325_u64 ^ seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        let slot = usize::try_from(hash % vector.len() as u64).unwrap_or(0);
        vector[slot] += if hash >> 63 == 0 { 1.0 } else { -1.0 };
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    } else {
        vector[0] = 1.0;
    }
    vector
}
