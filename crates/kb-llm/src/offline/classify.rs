//! The offline classifier: a category from keyword evidence, an honest confidence, a short
//! name, the category's fields and a few tags. Same text and date, same answer.

use chrono::NaiveDate;
use kb_domain::Category;
use kb_domain::entry::one_line;
use kb_domain::fields::{keys, statuses};
use serde_json::{Map, Value, json};

use super::dates::{find_date, is_date_word};
use super::keywords::{STOPWORDS, table};
use super::utterance::{Utterance, find_phrase};

/// The order categories are tried in; on equal evidence the first wins.
const ORDER: [Category; 4] = [Category::Admin, Category::Projects, Category::People, Category::Ideas];

/// Words that start a sentence without being anyone's name.
const STARTERS: &[&str] = &[
    "met", "meet", "meeting", "had", "call", "email", "coffee", "lunch", "dinner", "finish", "renew", "pay",
    "book", "buy", "build", "write", "ask", "send", "need", "remember", "note", "idea", "project", "maybe",
    "what", "talk", "talked", "spoke", "i", "we", "the", "a", "an", "my", "our", "new", "get", "make",
    "start", "plan", "try", "check", "read", "look", "follow", "catch", "launch", "ship", "fix", "update",
    "review", "schedule", "cancel", "file",
];

/// Lead-ins cut from the front of a title.
const LEAD_INS: &[&str] = &[
    "idea:",
    "idea",
    "remember to",
    "remember that",
    "remind me to",
    "remind me",
    "i need to",
    "need to",
    "i have to",
    "have to",
    "i should",
    "i must",
    "don't forget to",
    "todo:",
    "todo",
    "note:",
    "note",
    "task:",
];

/// Words a follow-up starts with ("…, send her the paper").
const FOLLOW_UP_VERBS: &[&str] = &[
    "send",
    "email",
    "call",
    "ask",
    "follow",
    "introduce",
    "invite",
    "share",
    "text",
    "remind",
    "intro",
    "check",
    "thank",
    "meet",
    "get",
];

/// Classifies `text`. Dates like "tomorrow" resolve against `today`. A category the person
/// fixed with a hint is taken as it is, with full confidence.
pub fn classify(text: &str, today: NaiveDate, forced: Option<Category>) -> Value {
    let u = Utterance::new(text);
    let words = u.texts();
    let names = proper_names(&u.original);
    let date = find_date(&words, today).map(|(d, _)| d);
    let score = |category: Category| -> u32 {
        let mut total: u32 =
            table(category).iter().filter(|(k, _)| mentions(&words, k)).map(|(_, w)| w).sum();
        if category == Category::People && !names.is_empty() {
            total += 1;
        }
        if category == Category::Admin && date.is_some() {
            total += 1;
        }
        total
    };
    let mut scored: Vec<(Category, u32)> = ORDER.iter().map(|c| (*c, score(*c))).collect();
    scored.sort_by_key(|(_, score)| std::cmp::Reverse(*score)); // stable: ORDER breaks ties
    let (category, best) = scored[0];
    let runner_up = scored[1].1;
    let (category, confidence) = match forced {
        Some(forced) => (forced, 1.0),
        None if best == 0 => (Category::Ideas, confidence(0, 0)),
        None => (category, confidence(best, runner_up)),
    };

    let title = title(&u);
    let name = match (category, names.first()) {
        (Category::People, Some(person)) => person.clone(),
        _ => title.clone(),
    };
    let mut answer = Map::new();
    answer.insert("category".into(), json!(category.as_str()));
    answer.insert(keys::CONFIDENCE.into(), json!(confidence));
    answer.insert(keys::NAME.into(), json!(name));
    let sentence = one_line(&strip_lead_in(&u.original), 160);
    match category {
        Category::Projects => {
            answer.insert(keys::STATUS.into(), json!(statuses::ACTIVE));
            answer.insert(keys::NEXT_ACTION.into(), json!(next_action(&sentence, &title)));
            if let Some(date) = date {
                answer.insert(keys::DUE_DATE.into(), json!(date.format("%Y-%m-%d").to_string()));
            }
        }
        Category::Admin | Category::Inbox => {
            answer.insert(keys::STATUS.into(), json!(statuses::PENDING));
            if let Some(date) = date {
                answer.insert(keys::DUE_DATE.into(), json!(date.format("%Y-%m-%d").to_string()));
            }
        }
        Category::People => {
            answer.insert(keys::CONTEXT.into(), json!(sentence));
            answer.insert(keys::FOLLOW_UPS.into(), json!(follow_ups(&u.original)));
        }
        Category::Ideas => {
            answer.insert(keys::ONE_LINER.into(), json!(capitalise(&sentence)));
        }
        // Never chosen: nothing is captured outside the category folders.
        Category::Other => {}
    }
    answer.insert(keys::TAGS.into(), json!(tags(&words, &names)));
    Value::Object(answer)
}

/// Whether `words` mention `keyword` (a single word also matches its plural).
fn mentions(words: &[String], keyword: &str) -> bool {
    if keyword.contains(' ') {
        return find_phrase(words, keyword).is_some();
    }
    words.iter().any(|w| w == keyword || w.strip_suffix('s') == Some(keyword))
}

/// Strong evidence (two points clear of any other category) earns 0.75–0.9; weak evidence
/// 0.45–0.55; a tie 0.4; none 0.3, so the capture waits in the inbox.
fn confidence(best: u32, runner_up: u32) -> f64 {
    let margin = best.saturating_sub(runner_up);
    let raw = if best == 0 {
        0.3
    } else if margin == 0 {
        0.4
    } else if best >= 2 && margin >= 2 {
        (0.75 + 0.05 * f64::from(best - 2)).min(0.9)
    } else {
        (0.45 + 0.05 * f64::from(best - 1)).min(0.55)
    };
    (raw * 100.0).round() / 100.0
}

/// Runs of capitalised words that look like names ("Priya", "Sarah Chen").
fn proper_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let mut sentence_start = true;
    for token in text.split_whitespace() {
        let clean: String = token.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
        let clean =
            clean.strip_suffix("'s").or_else(|| clean.strip_suffix("’s")).unwrap_or(&clean).to_string();
        let lower = clean.to_lowercase();
        let capitalised = clean.chars().next().is_some_and(char::is_uppercase)
            && clean.chars().any(char::is_lowercase)
            && !is_date_word(&lower);
        let ordinary_start = sentence_start
            && (STARTERS.contains(&lower.as_str())
                || STOPWORDS.contains(&lower.as_str())
                || ORDER.iter().any(|c| table(*c).iter().any(|(k, _)| *k == lower)));
        if capitalised && !ordinary_start && run.len() < 3 {
            run.push(clean);
        } else if !run.is_empty() {
            names.push(run.join(" "));
            run.clear();
        }
        let breaks = token.ends_with(|c: char| ".!?,;:".contains(c));
        if breaks && !run.is_empty() {
            names.push(run.join(" "));
            run.clear();
        }
        sentence_start = token.ends_with(['.', '!', '?']);
    }
    if !run.is_empty() {
        names.push(run.join(" "));
    }
    names
}

fn strip_lead_in(text: &str) -> String {
    let trimmed = text.trim();
    let lower = trimmed.to_lowercase();
    for lead in LEAD_INS {
        let rest = lower.strip_prefix(lead).filter(|r| r.starts_with([' ', ':']));
        if let (Some(_), Some(tail)) = (rest, trimmed.get(lead.len()..)) {
            return tail.trim_start_matches([' ', ':']).trim().to_string();
        }
    }
    trimmed.to_string()
}

fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A short title: the first clause, without lead-ins and dates, at most eight words.
fn title(u: &Utterance) -> String {
    let sentence = strip_lead_in(&u.original);
    let clause = sentence.split(['.', ',', ';', '—', '–', '(', '!', '?']).next().unwrap_or("");
    let clause = clause.split(" - ").next().unwrap_or("");
    let mut kept: Vec<&str> = Vec::new();
    let tokens: Vec<&str> = clause.split_whitespace().collect();
    for (i, token) in tokens.iter().enumerate() {
        let lower = token.to_lowercase();
        let next_is_date = tokens.get(i + 1).is_some_and(|n| is_date_word(&n.to_lowercase()));
        let cuts = is_date_word(&lower)
            || matches!(lower.as_str(), "by" | "before" | "until" | "due")
            || (lower == "on" && next_is_date);
        if cuts || kept.len() == 8 {
            break;
        }
        kept.push(token);
    }
    while kept.len() > 1 && kept.last().is_some_and(|w| STOPWORDS.contains(&w.to_lowercase().as_str())) {
        kept.pop();
    }
    let title = capitalise(&one_line(&kept.join(" "), 60));
    if title.is_empty() { "Note".to_string() } else { title }
}

/// A project's next step: what follows a dash or colon ("ClientCo — email Sarah"), else the
/// sentence itself.
fn next_action(sentence: &str, title: &str) -> String {
    let after = sentence.split_once(['—', ':', ';']).map(|(_, rest)| rest.trim()).filter(|r| !r.is_empty());
    let action = after.map(str::to_string).unwrap_or_else(|| sentence.to_string());
    let action = capitalise(&one_line(&action, 120));
    if action.is_empty() { title.to_string() } else { action }
}

fn follow_ups(text: &str) -> Vec<String> {
    text.split([',', ';', '.', '—'])
        .flat_map(|clause| clause.split(" and "))
        .skip(1)
        .map(str::trim)
        .filter(|clause| {
            let first = clause.split_whitespace().next().unwrap_or("").to_lowercase();
            FOLLOW_UP_VERBS.contains(&first.as_str())
        })
        .map(|clause| capitalise(&one_line(clause, 120)))
        .collect()
}

fn tags(words: &[String], names: &[String]) -> Vec<String> {
    let name_words: Vec<String> = names.iter().flat_map(|n| n.split(' ')).map(str::to_lowercase).collect();
    let mut tags: Vec<String> = Vec::new();
    for word in words {
        let useful = word.len() >= 3
            && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !word.chars().all(|c| c.is_ascii_digit())
            && !STOPWORDS.contains(&word.as_str())
            && !STARTERS.contains(&word.as_str())
            && !is_date_word(word)
            && !name_words.contains(word);
        if useful && !tags.contains(word) {
            tags.push(word.clone());
        }
        if tags.len() == 3 {
            break;
        }
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confidence_follows_the_evidence() {
        assert_eq!(confidence(0, 0), 0.3);
        assert_eq!(confidence(2, 2), 0.4);
        assert_eq!(confidence(1, 0), 0.45);
        assert_eq!(confidence(2, 1), 0.5);
        assert_eq!(confidence(2, 0), 0.75);
        assert_eq!(confidence(9, 0), 0.9);
    }

    #[test]
    fn names_titles_and_tags_are_short() {
        assert_eq!(proper_names("Coffee with Sarah Chen from ClientCo."), ["Sarah Chen", "ClientCo"]);
        assert_eq!(proper_names("Dentist on Monday"), Vec::<String>::new());
        assert_eq!(
            title(&Utterance::new("remind me to renew the passport by Dec 15, urgent")),
            "Renew the passport"
        );
        assert_eq!(title(&Utterance::new("")), "Note");
        let words = Utterance::new("met Priya at the robotics meetup about robotics").texts();
        assert_eq!(tags(&words, &["Priya".to_string()]), ["robotics", "meetup"]);
    }
}
