//! A deterministic generator of realistic vaults for tests and benchmarks (feature
//! `testgen`): entries of every category with the frontmatter kb writes and bodies of a
//! few hundred words drawn from a Zipf-like vocabulary, so some words are in most entries
//! and others in a handful. The same seed always gives the same vault.

use std::fs;
use std::io;
use std::path::Path;

use kb_domain::{Category, EntryPath};

/// Common words, most frequent first; the vocabulary continues with made-up words.
const COMMON: &[&str] = &[
    "project",
    "meeting",
    "plan",
    "team",
    "budget",
    "client",
    "review",
    "design",
    "idea",
    "note",
    "call",
    "email",
    "report",
    "launch",
    "draft",
    "research",
    "customer",
    "product",
    "data",
    "test",
    "release",
    "feedback",
    "schedule",
    "roadmap",
    "goal",
    "contract",
    "invoice",
    "travel",
    "garden",
    "kitchen",
    "coffee",
    "café",
    "résumé",
    "naïve",
    "Zürich",
    "München",
    "book",
    "music",
    "health",
    "running",
    "school",
    "family",
    "friend",
    "weekend",
    "morning",
    "evening",
    "market",
    "strategy",
    "hiring",
    "interview",
    "server",
    "database",
    "search",
    "index",
    "network",
    "security",
    "deploy",
    "website",
    "mobile",
    "writing",
    "reading",
    "language",
    "learning",
    "teaching",
    "workshop",
    "conference",
    "podcast",
    "article",
    "newsletter",
    "finance",
    "taxes",
    "insurance",
    "doctor",
    "dentist",
    "birthday",
    "holiday",
    "flight",
    "hotel",
    "train",
    "bicycle",
    "repair",
    "house",
    "rent",
    "moving",
    "furniture",
    "painting",
    "photo",
    "camera",
    "recipe",
    "dinner",
    "lunch",
];
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ren", "to", "var", "sel", "qui", "dor", "fan", "bel", "zu", "pra", "nek", "sti",
    "mon", "gar", "tel", "vin", "ox", "lu", "hab", "cer", "dri",
];
const FILLER: &[&str] = &[
    "the", "a", "and", "to", "of", "in", "for", "with", "on", "about", "next", "week", "after", "before",
    "maybe", "should", "could", "we", "I", "they",
];

/// Size of the vocabulary words are drawn from.
pub const VOCABULARY: usize = 5000;

/// The word of the vocabulary at `rank` (0 is the most frequent).
pub fn word(rank: usize) -> String {
    if let Some(w) = COMMON.get(rank) {
        return (*w).to_string();
    }
    let mut n = rank;
    let mut out = String::new();
    for _ in 0..3 {
        out.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
    }
    out.push_str(&format!("{}", rank % 7));
    out
}

/// A small, fast deterministic random number generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A number in `0..1`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A vocabulary rank, Zipf-like: rank r is drawn about 1/(r+1) as often as rank 0.
    pub fn zipf(&mut self) -> usize {
        let r = (VOCABULARY as f64 + 1.0).powf(self.unit()) as usize;
        r.saturating_sub(1).min(VOCABULARY - 1)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

fn sentence(rng: &mut Rng, words: usize) -> String {
    let mut out: Vec<String> = Vec::with_capacity(words);
    for i in 0..words {
        let w = if rng.below(3) == 0 { rng.pick(FILLER).to_string() } else { word(rng.zipf()) };
        out.push(if i == 0 { capitalised(&w) } else { w });
    }
    format!("{}.", out.join(" "))
}

fn capitalised(w: &str) -> String {
    let mut c = w.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().collect::<String>() + c.as_str())
}

fn words(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| word(rng.zipf())).collect::<Vec<_>>().join(" ")
}

fn yaml_text(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The path and file text of generated entry number `i`.
pub fn entry(i: usize, seed: u64) -> (EntryPath, String) {
    let mut rng = Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
    let category = match rng.below(20) {
        0..=3 => Category::People,
        4..=9 => Category::Projects,
        10..=14 => Category::Ideas,
        15..=17 => Category::Admin,
        _ => Category::Inbox,
    };
    let name_words = 2 + rng.below(3);
    let name = capitalised(&words(&mut rng, name_words));
    let slug: String = name
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .split('-')
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    let path = EntryPath::parse(&format!("{category}/{slug}-{i}.md")).unwrap_or_else(|_| {
        EntryPath::parse(&format!("{category}/entry-{i}.md")).unwrap_or_else(|_| unreachable!("plain path"))
    });
    let day = 1 + rng.below(28);
    let month = 1 + rng.below(12);
    let stamp = format!("2026-{month:02}-{day:02}T{:02}:{:02}:00Z", rng.below(24), rng.below(60));
    let mut fm = vec![format!("id: 01JD{:022}", i), format!("name: {}", yaml_text(&name))];
    match category {
        Category::People => {
            fm.push(format!("context: {}", yaml_text(&sentence(&mut rng, 8))));
            fm.push(format!("follow_ups: [{}]", yaml_text(&sentence(&mut rng, 5))));
        }
        Category::Projects => {
            let status = ["active", "waiting", "blocked", "someday", "done"][rng.below(5)];
            fm.push(format!("status: {status}"));
            fm.push(format!("next_action: {}", yaml_text(&sentence(&mut rng, 6))));
        }
        Category::Ideas => fm.push(format!("one_liner: {}", yaml_text(&sentence(&mut rng, 9)))),
        Category::Admin => {
            fm.push(format!("status: {}", ["pending", "done"][rng.below(2)]));
            fm.push(format!("due_date: 2026-{month:02}-{day:02}"));
        }
        Category::Inbox => {
            fm.push(format!("original_text: {}", yaml_text(&sentence(&mut rng, 12))));
            fm.push(format!(
                "suggested_category: {}",
                ["people", "projects", "ideas", "admin"][rng.below(4)]
            ));
        }
        // Generated vaults fill the category folders only.
        Category::Other => {}
    }
    let tags: Vec<String> = (0..1 + rng.below(3)).map(|_| word(rng.zipf().min(200))).collect();
    fm.push(format!("tags: [{}]", tags.iter().map(|t| yaml_text(t)).collect::<Vec<_>>().join(", ")));
    fm.push(format!("created_at: {stamp}"));
    fm.push(format!("updated_at: {stamp}"));
    fm.push(format!("confidence: 0.{}", 50 + rng.below(50)));
    fm.push("source: chat".to_string());
    let mut body = String::new();
    let target = 150 + rng.below(250);
    let mut written = 0;
    while written < target {
        if rng.below(4) == 0 {
            body.push_str(&format!("## {}\n\n", capitalised(&words(&mut rng, 2))));
        }
        let n = 8 + rng.below(8);
        for _ in 0..3 {
            body.push_str(&sentence(&mut rng, n));
            body.push(' ');
            written += n;
        }
        if rng.below(5) == 0 {
            body.push_str(&format!("See [[{}]].", words(&mut rng, 2)));
        }
        body.push_str("\n\n");
    }
    (path, format!("---\n{}\n---\n{}", fm.join("\n"), body))
}

/// Writes a vault of `entries` generated entries under `root` (category folders created).
pub fn write_vault(root: &Path, entries: usize, seed: u64) -> io::Result<()> {
    for category in Category::ALL {
        fs::create_dir_all(root.join(category.as_str()))?;
    }
    for i in 0..entries {
        let (path, text) = entry(i, seed);
        fs::write(path.under(root), text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_deterministic_and_readable() {
        let (p1, t1) = entry(7, 42);
        let (p2, t2) = entry(7, 42);
        assert_eq!((p1.clone(), t1.clone()), (p2, t2));
        let e = kb_domain::Entry::from_document(p1, &t1).unwrap();
        assert!(!e.name().is_empty());
        assert!(e.body.split_whitespace().count() >= 150);
        assert!(e.problems().is_empty(), "{:?}", e.problems());
    }
}
