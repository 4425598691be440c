//! One message from the person, read into words: lowercase, contractions opened, punctuation
//! stripped, vault paths recognised, and each word tied back to the original text so values
//! ("rename that to Garden Plan") keep the person's spelling.

use kb_domain::Category;

use super::keywords::{FILLER_PHRASES, FILLERS};

/// A word of the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The normalised word.
    pub text: String,
    /// Byte offset in the original message where the token holding it starts.
    pub start: usize,
    /// Byte offset in the original message where that token ends.
    pub end: usize,
}

/// A message read into words.
#[derive(Debug, Clone)]
pub struct Utterance {
    /// The message as written, trimmed.
    pub original: String,
    /// Its words.
    pub words: Vec<Word>,
}

const CONTRACTIONS: &[(&str, &[&str])] = &[
    ("that's", &["that", "is"]),
    ("thats", &["that", "is"]),
    ("it's", &["it", "is"]),
    ("this's", &["this", "is"]),
    ("what's", &["what", "is"]),
    ("whats", &["what", "is"]),
    ("who's", &["who", "is"]),
    ("where's", &["where", "is"]),
    ("there's", &["there", "is"]),
    ("i'm", &["i", "am"]),
    ("i've", &["i", "have"]),
    ("i'd", &["i", "would"]),
    ("don't", &["do", "not"]),
    ("isn't", &["is", "not"]),
    ("shouldn't", &["should", "not"]),
    ("let's", &["let's"]),
    ("how's", &["how", "is"]),
    ("hows", &["how", "is"]),
    ("whos", &["who", "is"]),
    ("where're", &["where", "are"]),
    ("what're", &["what", "are"]),
    ("we're", &["we", "are"]),
    ("they're", &["they", "are"]),
    ("you're", &["you", "are"]),
    ("he's", &["he", "is"]),
    ("she's", &["she", "is"]),
    // Short forms and slips people type often.
    ("wat", &["what"]),
    ("wht", &["what"]),
    ("waht", &["what"]),
    ("abt", &["about"]),
    ("shud", &["should"]),
    ("shld", &["should"]),
    ("anythign", &["anything"]),
    ("anyting", &["anything"]),
    ("anythin", &["anything"]),
    ("somethign", &["something"]),
    ("tommorow", &["tomorrow"]),
    ("tomorow", &["tomorrow"]),
    ("thnx", &["thanks"]),
    ("bout", &["about"]),
    ("bday", &["birthday"]),
    ("b-day", &["birthday"]),
    ("birthdate", &["birthday"]),
    ("tmrw", &["tomorrow"]),
    ("tmr", &["tomorrow"]),
    ("2day", &["today"]),
    ("tdy", &["today"]),
    ("pls", &["please"]),
    ("plz", &["please"]),
    ("u", &["you"]),
];

impl Utterance {
    /// Reads a message.
    pub fn new(message: &str) -> Utterance {
        let original = message.trim().to_string();
        let mut words = Vec::new();
        let mut offset = 0;
        for token in original.split_whitespace() {
            let start = original[offset..].find(token).map_or(offset, |at| offset + at);
            offset = start + token.len();
            let normal = normalise(token);
            if normal.is_empty() {
                continue;
            }
            match CONTRACTIONS.iter().find(|(c, _)| *c == normal) {
                Some((_, parts)) => {
                    words.extend(parts.iter().map(|p| Word { text: (*p).to_string(), start, end: offset }))
                }
                None => {
                    for part in split_possessive(&normal) {
                        words.push(Word { text: part, start, end: offset });
                    }
                }
            }
        }
        Utterance { original, words }
    }

    /// The normalised words.
    pub fn texts(&self) -> Vec<String> {
        self.words.iter().map(|w| w.text.clone()).collect()
    }

    /// The vault paths the message names (`projects/x.md`, `ideas/x` gets `.md`).
    pub fn paths(&self) -> Vec<String> {
        self.words.iter().filter_map(|w| as_path(&w.text)).collect()
    }

    /// The original text from word `index` to the end, trimmed of surrounding punctuation.
    pub fn rest_from(&self, index: usize) -> String {
        self.span(index, self.words.len())
    }

    /// The original text of words `from..to`, trimmed of surrounding punctuation.
    pub fn span(&self, from: usize, to: usize) -> String {
        let to = to.min(self.words.len());
        if from >= to {
            return String::new();
        }
        let text = &self.original[self.words[from].start..self.words[to - 1].end];
        text.trim_matches(|c: char| c.is_whitespace() || ".,;:!?\"'“”‘’`()[]".contains(c)).to_string()
    }

    /// The index of the first word after any lead-in that carries no meaning ("please",
    /// "actually", "can you").
    pub fn core_start(&self) -> usize {
        let texts = self.texts();
        let mut i = 0;
        loop {
            if texts.get(i).is_some_and(|w| FILLERS.contains(&w.as_str())) {
                i += 1;
                continue;
            }
            let phrase = FILLER_PHRASES.iter().find(|p| starts_with(&texts[i.min(texts.len())..], p));
            match phrase {
                Some(p) => i += p.split(' ').count(),
                None => return i,
            }
        }
    }

    /// The words after the lead-in, without a closing "please" or "thanks".
    pub fn core(&self) -> Vec<String> {
        let mut core = self.texts()[self.core_start().min(self.words.len())..].to_vec();
        while core.last().is_some_and(|w| matches!(w.as_str(), "please" | "thanks" | "pls" | "now")) {
            core.pop();
        }
        core
    }
}

/// Whether `words` begins with the words of `phrase`.
pub fn starts_with(words: &[String], phrase: &str) -> bool {
    let parts: Vec<&str> = phrase.split(' ').collect();
    words.len() >= parts.len() && words.iter().zip(&parts).all(|(w, p)| w == p)
}

/// Where the words of `phrase` occur in order in `words`.
pub fn find_phrase(words: &[String], phrase: &str) -> Option<usize> {
    let n = phrase.split(' ').count();
    (0..words.len()).find(|&i| i + n <= words.len() && starts_with(&words[i..], phrase))
}

/// A token as a vault path, if it is one.
pub fn as_path(word: &str) -> Option<String> {
    let (folder, file) = word.split_once('/')?;
    let category: Category = folder.parse().ok()?;
    let file = file.trim_end_matches('/');
    if file.is_empty() || file.contains('/') || file.starts_with('.') {
        return None;
    }
    let file = if file.ends_with(".md") { file.to_string() } else { format!("{file}.md") };
    Some(format!("{category}/{file}"))
}

fn normalise(token: &str) -> String {
    let lower = token.to_lowercase().replace(['’', '‘'], "'");
    let trimmed =
        lower.trim_matches(|c: char| !(c.is_alphanumeric() || c == '/' || c == '-' || c == '_' || c == '\''));
    trimmed.trim_matches('\'').to_string()
}

/// "priya's" -> ["priya", "'s"] so names and fields stay apart.
fn split_possessive(word: &str) -> Vec<String> {
    match word.strip_suffix("'s") {
        Some(stem) if !stem.is_empty() => vec![stem.to_string(), "'s".to_string()],
        _ => vec![word.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_normalised_and_tied_to_the_original() {
        let u = Utterance::new("  Actually, that’s a PROJECT! ");
        assert_eq!(u.texts(), ["actually", "that", "is", "a", "project"]);
        assert_eq!(u.core(), ["that", "is", "a", "project"]);
        let u = Utterance::new("Please rename projects/x.md to Garden Plan.");
        assert_eq!(u.paths(), ["projects/x.md"]);
        assert_eq!(u.rest_from(4), "Garden Plan");
    }

    #[test]
    fn paths_are_recognised_only_inside_categories() {
        assert_eq!(as_path("ideas/drone"), Some("ideas/drone.md".into()));
        assert_eq!(as_path("inbox/x.md"), Some("inbox/x.md".into()));
        assert_eq!(as_path("and/or"), None);
        assert_eq!(as_path("projects/"), None);
        assert_eq!(Utterance::new("show `projects/clientco.md`.").paths(), ["projects/clientco.md"]);
    }

    #[test]
    fn lead_ins_are_skipped() {
        assert_eq!(Utterance::new("ok can you please list my projects").core(), ["list", "my", "projects"]);
        assert!(Utterance::new("").core().is_empty());
    }
}
