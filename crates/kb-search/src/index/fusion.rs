//! Hybrid ranking: the keyword ranking and the ranking by meaning fused by weighted
//! reciprocal rank. A hit at rank `r` (from 1) of a ranking adds `weight / (RRF_K + r)`.
//!
//! The weights come from the relevance benchmark (BENCHMARKS.md): with both rankings
//! weighted alike, entries that merely share a word with the query and sit near it by
//! meaning pushed the entry the words were about off the first page (`taxes` among many
//! generated entries named so). Counting meaning half keeps the keyword ranking's best
//! hits in front and lifts a keyword hit that is also near in meaning; an entry found only
//! by meaning comes after the first dozen word matches (on the first page when words find
//! fewer than the page holds).

use std::collections::HashMap;
use std::hash::Hash;

/// The constant of reciprocal rank fusion. Smaller than the usual 60, so that a first
/// place weighs clearly more than a tenth: the benchmark's words queries lost least to
/// keyword search with 10.
const RRF_K: f32 = 10.0;
/// The weight of the ranking by meaning; the keyword ranking weighs 1.
const MEANING_WEIGHT: f32 = 0.5;

/// An entry's place in the fused ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fused {
    /// The sum of each ranking's `weight / (RRF_K + rank)`.
    pub score: f32,
    /// Its index in the keyword ranking, when found by words.
    pub by_words: Option<usize>,
    /// Its index in the ranking by meaning, when found by it.
    pub by_meaning: Option<usize>,
}

/// The entries of both rankings (each best first), best fused score first; on a tie the
/// better keyword rank, then the key.
pub(super) fn fuse<K: Clone + Eq + Hash + Ord>(by_words: &[K], by_meaning: &[K]) -> Vec<(K, Fused)> {
    let mut fused: HashMap<K, Fused> = HashMap::with_capacity(by_words.len() + by_meaning.len());
    let empty = Fused { score: 0.0, by_words: None, by_meaning: None };
    for (index, key) in by_words.iter().enumerate() {
        let slot = fused.entry(key.clone()).or_insert(empty);
        slot.score += contribution(1.0, index);
        slot.by_words = Some(index);
    }
    for (index, key) in by_meaning.iter().enumerate() {
        let slot = fused.entry(key.clone()).or_insert(empty);
        slot.score += contribution(MEANING_WEIGHT, index);
        slot.by_meaning = Some(index);
    }
    let mut order: Vec<(K, Fused)> = fused.into_iter().collect();
    order.sort_by(|(ka, a), (kb, b)| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.by_words.unwrap_or(usize::MAX).cmp(&b.by_words.unwrap_or(usize::MAX)))
            .then_with(|| ka.cmp(kb))
    });
    order
}

/// What the entry at `index` (from 0) of a ranking of `weight` adds.
fn contribution(weight: f32, index: usize) -> f32 {
    weight / (RRF_K + index as f32 + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(by_words: &[&'static str], by_meaning: &[&'static str]) -> Vec<&'static str> {
        fuse(by_words, by_meaning).into_iter().map(|(key, _)| key).collect()
    }

    #[test]
    fn a_word_match_that_is_also_near_in_meaning_moves_up() {
        let found = order(&["a", "b", "c"], &["c"]);
        assert_eq!(found, ["c", "a", "b"]);
    }

    #[test]
    fn entries_found_only_by_meaning_do_not_push_word_matches_off_the_page() {
        // The shape of `taxes` in the benchmark: the entry the words are about is first
        // both ways, the accountant's entry is second by words only, and many entries
        // that merely share the word, or nothing, sit near the query by meaning.
        let words = ["tax-return", "accountant", "g1", "d", "g2", "g3", "g4", "g5", "g6", "g7"];
        let meaning = ["tax-return", "n1", "g3", "n2", "n3", "n4", "n5", "n6", "g7", "n7", "g1"];
        let found = order(&words, &meaning);
        assert_eq!(found[0], "tax-return");
        assert!(found[..5].contains(&"accountant"), "{found:?}");
        assert!(found[..10].iter().all(|key| words.contains(key)), "{found:?}");
    }

    #[test]
    fn an_entry_found_only_by_meaning_follows_a_few_word_matches() {
        let found = order(&["a", "b", "c"], &["x", "y"]);
        assert_eq!(found, ["a", "b", "c", "x", "y"]);
    }

    #[test]
    fn the_nearest_entry_by_meaning_comes_after_a_dozen_word_matches() {
        // Its score equals the twelfth word match's; the tie goes to the word match, though
        // "a" sorts before every "w…".
        let words: Vec<String> = (0..30).map(|i| format!("w{i:02}")).collect();
        let fused = fuse(&words, &["a".to_string()]);
        let place = fused.iter().position(|(key, _)| key == "a").unwrap();
        assert_eq!(place, 12);
    }

    #[test]
    fn without_word_matches_the_order_is_by_meaning() {
        assert_eq!(order(&[], &["x", "y", "z"]), ["x", "y", "z"]);
    }

    #[test]
    fn each_entry_says_where_it_was_found() {
        let fused = fuse(&["a", "b"], &["b", "x"]);
        let find = |key| fused.iter().find(|(k, _)| *k == key).map(|(_, f)| *f).unwrap();
        assert_eq!((find("a").by_words, find("a").by_meaning), (Some(0), None));
        assert_eq!((find("b").by_words, find("b").by_meaning), (Some(1), Some(0)));
        assert_eq!((find("x").by_words, find("x").by_meaning), (None, Some(1)));
        assert!(find("b").score > find("a").score);
    }

    #[test]
    fn a_place_by_words_outweighs_the_same_place_by_meaning() {
        assert_eq!(order(&["b"], &["a"]), ["b", "a"]);
        assert_eq!(order(&["b", "a"], &[]), ["b", "a"]);
    }
}
