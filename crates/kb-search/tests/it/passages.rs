//! Each hit names its passage: the text that matched and the lines of the file holding it,
//! so that `sed -n START,ENDp FILE` prints it — for a paragraph deep in the notes, a
//! frontmatter value, a CRLF file, a file without frontmatter, an entry kb just wrote, and
//! a hit found by meaning.

use kb_domain::{Passage, QueryVector, SearchHit, SearchIndex, SearchMode, SearchQuery};
use kb_search::{OpenOptions, TantivyIndex, VectorModel};

use crate::support::{TestVault, open_index, search};

/// The lines `passage` names of the file at `rel`, as `sed -n START,ENDp` prints them
/// (line ends dropped).
fn sed(v: &TestVault, rel: &str, passage: &Passage) -> String {
    let text = std::fs::read_to_string(v.root().join(rel)).unwrap();
    let (start, end) = (passage.lines.start() as usize, passage.lines.end() as usize);
    text.split('\n')
        .skip(start - 1)
        .take(end - start + 1)
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The words of `text`, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// Whether every word of `passage` is in `lines`, in order (a frontmatter value as YAML
/// writes it: folded, quoted, a list).
fn holds_in_order(lines: &str, passage: &str) -> bool {
    let mut lines = words(lines).into_iter();
    words(passage).iter().all(|word| lines.any(|w| w == *word))
}

/// The one hit of `query`, with its passage.
fn only_hit(index: &TantivyIndex, query: &str) -> (SearchHit, Passage) {
    let found = search(index, query);
    assert_eq!(found.entries.len(), 1, "{query}: {:?}", found.entries);
    let hit = found.entries[0].clone();
    let passage = hit.passage.clone().unwrap_or_else(|| panic!("{query}: no passage in {hit:?}"));
    (hit, passage)
}

const DEEP: &str = "---\n\
    name: Garden shed\n\
    status: active\n\
    next_action: >\n  Buy roofing felt\n  at the builders' yard\n\
    tags:\n  - garden\n  - diy\n\
    ---\n\
    # Shed\n\n\
    Measured the base: two by three metres.\n\n\
    Old boards go to the tip on Saturday.\n\n\
    ## Rafters\n\n\
    The felt needs battens every forty centimetres,\n\
    nailed with galvanised clouts.\n\n\
    Paint it green after.\n";

#[test]
fn a_paragraph_deep_in_the_notes_names_its_own_lines() {
    let v = TestVault::new();
    v.write("projects/shed.md", DEEP);
    let index = v.open();
    let (hit, passage) = only_hit(&index, "galvanised battens");
    assert_eq!(hit.matched_field, "content");
    assert_eq!(
        passage.text,
        "The felt needs battens every forty centimetres,\nnailed with galvanised clouts."
    );
    assert_eq!((passage.lines.start(), passage.lines.end()), (19, 20));
    assert_eq!(sed(&v, "projects/shed.md", &passage), passage.text);
    assert!(!passage.text.contains("**"), "{}", passage.text);
    // The snippet is as it was: marked.
    assert!(hit.snippet.contains("**galvanised**"), "{}", hit.snippet);
    let (_, heading) = only_hit(&index, "rafters");
    assert_eq!((heading.text.as_str(), heading.lines.start()), ("## Rafters", 17));
}

#[test]
fn a_frontmatter_value_names_its_key_s_lines() {
    let v = TestVault::new();
    v.write("projects/shed.md", DEEP);
    let index = v.open();
    let (hit, passage) = only_hit(&index, "builders yard");
    assert_eq!(hit.matched_field, "next_action");
    assert_eq!(passage.text, "Buy roofing felt at the builders' yard");
    assert_eq!((passage.lines.start(), passage.lines.end()), (4, 6));
    let lines = sed(&v, "projects/shed.md", &passage);
    assert!(lines.starts_with("next_action:") && holds_in_order(&lines, &passage.text), "{lines}");
    let (_, tags) = only_hit(&index, "diy");
    assert_eq!((tags.lines.start(), tags.lines.end()), (7, 9));
    assert!(holds_in_order(&sed(&v, "projects/shed.md", &tags), &tags.text), "{tags:?}");
    let (_, name) = only_hit(&index, "\"garden shed\"");
    assert_eq!((name.text.as_str(), name.lines.start(), name.lines.end()), ("Garden shed", 2, 2));
}

#[test]
fn a_crlf_file_counts_its_lines_as_an_editor_does() {
    let v = TestVault::new();
    let text = "---\r\nname: Lease\r\ncontext: Flat on\r\n  Rue Victor Hugo\r\n---\r\nRent is due on the first.\r\n\r\nThe landlord keeps the deposit\r\nuntil the inspection.\r\n";
    v.write("admin/lease.md", text);
    let index = v.open();
    let (_, passage) = only_hit(&index, "deposit inspection");
    assert_eq!(passage.text, "The landlord keeps the deposit\nuntil the inspection.");
    assert_eq!((passage.lines.start(), passage.lines.end()), (8, 9));
    assert_eq!(sed(&v, "admin/lease.md", &passage), passage.text);
    let (_, context) = only_hit(&index, "victor hugo");
    assert_eq!((context.lines.start(), context.lines.end()), (3, 4));
    assert!(holds_in_order(&sed(&v, "admin/lease.md", &context), &context.text), "{context:?}");
}

#[test]
fn a_file_without_frontmatter_counts_from_its_first_line() {
    let v = TestVault::new();
    std::fs::create_dir_all(v.root().join("Journal")).unwrap();
    let text = "# Sunday\n\nWalked along the canal.\n\nSaw a heron near the lock gates.\n";
    std::fs::write(v.root().join("Journal/Sunday.md"), text).unwrap();
    let index = v.open();
    let (_, passage) = only_hit(&index, "heron");
    assert_eq!(
        (passage.text.as_str(), passage.lines.start(), passage.lines.end()),
        ("Saw a heron near the lock gates.", 5, 5)
    );
    assert_eq!(sed(&v, "Journal/Sunday.md", &passage), passage.text);
    // The name comes from the file name: the notes' heading holding it is the passage.
    let (hit, heading) = only_hit(&index, "sunday");
    assert_eq!(hit.matched_field, "name");
    assert_eq!((heading.text.as_str(), heading.lines.start()), ("# Sunday", 1));
}

#[test]
fn an_entry_kb_just_wrote_is_found_at_its_lines() {
    let v = TestVault::new();
    let index = v.open();
    let text =
        "---\nname: Kiln\none_liner: Firing schedule\n---\nBisque at 950.\n\nGlaze at 1240 for stoneware.\n";
    let entry = v.write("ideas/kiln.md", text).unwrap();
    index.upsert(&entry).unwrap();
    let (_, passage) = only_hit(&index, "stoneware");
    assert_eq!((passage.lines.start(), passage.lines.end()), (7, 7));
    assert_eq!(sed(&v, "ideas/kiln.md", &passage), passage.text);
}

/// The dimension of the test's word vectors.
const DIMENSION: usize = 64;

/// A vector of `text`'s words, each word hashed to one dimension, normalised: texts sharing
/// words are near.
fn word_vector(text: &str) -> Vec<f32> {
    let mut vector = vec![0.0f32; DIMENSION];
    for word in words(text) {
        let hash = word
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        vector[(hash % DIMENSION as u64) as usize] += 1.0;
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::MIN_POSITIVE);
    vector.iter().map(|x| x / norm).collect()
}

#[test]
fn a_hit_found_by_meaning_names_the_lines_of_its_part() {
    let v = TestVault::new();
    let anna = "---\nname: Anna\none_liner: My sister\n---\nLives in Lyon with two cats.\n\nCalls on Sundays.\n\n# Work\n\nShe works nights at the hospital,\nas a nurse in the children's ward.\n";
    v.write("people/anna.md", anna);
    for (i, topic) in
        ["bread recipe", "bike repair", "tax forms", "garden plan", "piano lessons"].iter().enumerate()
    {
        v.write_entry(
            &format!("ideas/other-{i}.md"),
            &format!("Other {i}"),
            &format!("Notes about {topic}.\n"),
        );
    }
    let model = VectorModel { model: "words".into(), identity: "words-v1".into() };
    let index = open_index(v.root(), OpenOptions { embeddings: Some(model), ..Default::default() }).unwrap();
    while let Some(work) = index.embedding_work(64).unwrap().filter(|work| !work.is_empty()) {
        let vectors = work.texts().iter().map(|text| word_vector(text)).collect();
        index.save_embeddings(work, vectors).unwrap();
    }
    let query = SearchQuery {
        text: "night nurse hospital ward".into(),
        limit: 5,
        mode: SearchMode::Semantic,
        vector: Some(QueryVector::new("words", word_vector("nights nurse hospital ward"))),
        ..Default::default()
    };
    let found = index.search(&query).unwrap();
    assert_eq!(found.mode, SearchMode::Semantic);
    let hit = found.entries.first().unwrap_or_else(|| panic!("nothing found by meaning: {found:?}"));
    assert_eq!(hit.path.as_str(), "people/anna.md");
    let passage = hit.passage.clone().unwrap();
    assert_eq!(
        passage.text,
        "# Work\n\nShe works nights at the hospital,\nas a nurse in the children's ward."
    );
    assert_eq!((passage.lines.start(), passage.lines.end()), (9, 12));
    assert_eq!(sed(&v, "people/anna.md", &passage), passage.text);
}
