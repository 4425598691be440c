#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Properties of the tools, over a real vault (kb-storage) and a real
//! tantivy index (kb-search) in a temp dir: list filters, get round-trip, update, move and
//! search. Each property runs many generated cases against one world that keeps changing
//! (updates and moves accumulate), which is the point: the properties hold in any state.

use std::fs;
use std::sync::Arc;

use kb_domain::category::{ADMIN_STATUSES, PROJECT_STATUSES};
use kb_domain::fields::check_field;
use kb_domain::set_aside_status_key;
use kb_domain::{
    Category, Clock, Entry, EntryPath, EntryReader, EntryWriter, Frontmatter, NewEntry, Slug, SystemClock,
};
use kb_search::analysis::{analyze, query_terms, stems, within_one_edit};
use kb_search::{SearchLanguage, TantivyIndex};
use kb_storage::vault::Vault;
use kb_tools::testing::ScriptedClassifier;
use kb_tools::{ToolContext, ToolRegistry, ToolResult, ToolServices};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Value, json};

const WORDS: &[&str] = &[
    "api", "garden", "café", "passport", "sarah", "launch", "budget", "shed", "climbing", "invoice", "spec",
    "Zoë", "tax", "blog", "window",
];
const STATUSES: &[&str] = &["active", "waiting", "blocked", "someday", "done", "pending", "odd"];

struct World {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    vault: Arc<Vault>,
    services: ToolServices,
    registry: ToolRegistry,
    rt: tokio::runtime::Runtime,
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        hand_written(&root);
        let vault = Arc::new(Vault::open(&root, Arc::new(SystemClock)).unwrap());
        let index = Arc::new(TantivyIndex::open(Arc::new(vault.files()), &root.join(".kb/index")).unwrap());
        vault.add_observer(index.clone());
        seed(&vault);
        let services = ToolServices {
            repository: vault.clone(),
            search: index,
            embedder: None,
            classifier: Arc::new(ScriptedClassifier::new(vec![])),
            digest_writer: None,
            clock: Arc::new(SystemClock),
            pages: None,
        };
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        World { _dir: dir, root, vault, services, registry: kb_tools::standard_registry().unwrap(), rt }
    }

    fn call(&self, tool: &str, args: Value) -> ToolResult {
        let ctx = ToolContext::new(SystemClock.now().date_naive());
        self.rt.block_on(self.registry.execute(tool, &args.to_string(), &ctx, &self.services))
    }

    fn entries(&self) -> Vec<Entry> {
        let mut all = self.vault.all_entries().unwrap();
        all.sort_by(|a, b| a.path.cmp(&b.path));
        all
    }

    /// The entry as its file on disk says, read without kb's cache.
    fn on_disk(&self, path: &str) -> Option<Entry> {
        let text = fs::read_to_string(self.root.join(path)).ok()?;
        Some(Entry::from_document(EntryPath::parse(path).unwrap(), &text).unwrap())
    }
}

/// Files a person wrote by hand: no frontmatter, unknown keys, a wrong status.
fn hand_written(root: &std::path::Path) {
    for c in Category::ALL {
        fs::create_dir_all(root.join(c.as_str())).unwrap();
    }
    fs::write(root.join("ideas/Loose Note.md"), "Just a thought about the garden shed.\n").unwrap();
    fs::write(
        root.join("projects/hand-made.md"),
        "---\nname: Hand made\nstatus: paused\nmood: hopeful\nnext_action: fix the api spec\n---\nMy notes.\n",
    )
    .unwrap();
    fs::write(root.join("people/zoe.md"), "---\nname: Zoë Ångström\ncontext: climbing café\n---\n").unwrap();
}

fn seed(vault: &Vault) {
    let mut state = 7u64;
    let mut next = |n: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    for i in 0..45 {
        let category = Category::ALL[next(5)];
        let mut fields = Frontmatter::new();
        let w = |k: usize| WORDS[k];
        match category {
            Category::Projects => {
                fields.set("status", json!(PROJECT_STATUSES[next(PROJECT_STATUSES.len())]));
                fields.set("next_action", json!(format!("call about {}", w(next(WORDS.len())))));
            }
            Category::Admin => {
                fields.set("status", json!(ADMIN_STATUSES[next(2)]));
                fields.set("due_date", json!(format!("2026-12-{:02}", 1 + next(28))));
            }
            Category::People => {
                fields.set("context", json!(format!("met at {}", w(next(WORDS.len())))));
                fields.set("follow_ups", json!([format!("ask about {}", w(next(WORDS.len())))]));
            }
            Category::Ideas => fields.set("one_liner", json!(format!("a {} idea", w(next(WORDS.len()))))),
            Category::Inbox => {
                fields.set(
                    "original_text",
                    json!(format!("maybe {} {}", w(next(WORDS.len())), w(next(WORDS.len())))),
                );
                fields.set("suggested_category", json!("projects"));
            }
            Category::Other => unreachable!("the five folders only"),
        }
        fields.set("tags", json!([w(next(WORDS.len())).to_lowercase()]));
        fields.set("custom_note", json!(format!("kept {i}")));
        let name = format!("{} {} {i}", w(next(WORDS.len())), w(next(WORDS.len())));
        let body = format!("Notes on {} and {}.\n", w(next(WORDS.len())), w(next(WORDS.len())));
        vault.create(NewEntry { category, name, fields, body }).unwrap();
    }
}

fn runner() -> TestRunner {
    TestRunner::new(Config { cases: 96, failure_persistence: None, ..Config::default() })
}

fn category_arg() -> impl Strategy<Value = Option<Category>> {
    prop::option::of(prop::sample::select(Category::ALL.to_vec()))
}

fn limit_arg() -> impl Strategy<Value = Option<u64>> {
    prop::option::of(prop_oneof![1u64..15, 90u64..200])
}

fn with_filters(mut args: Value, category: Option<Category>, limit: Option<u64>) -> Value {
    if let Some(c) = category {
        args["category"] = json!(c.as_str());
    }
    if let Some(l) = limit {
        args["limit"] = json!(l);
    }
    args
}

fn expected_len(limit: Option<u64>) -> usize {
    limit.map_or(10, |l| l.min(100) as usize)
}

/// list_entries results match the filters, respect the limit, newest first,
/// and `total` counts every match.
#[test]
fn list_entries_respects_filters_and_limit() {
    let world = World::new();
    let strategy = (category_arg(), prop::option::of(prop::sample::select(STATUSES.to_vec())), limit_arg());
    runner()
        .run(&strategy, |(category, status, limit)| {
            let mut args = with_filters(json!({}), category, limit);
            if let Some(s) = status {
                args["status"] = json!(s);
            }
            let result = world.call("list_entries", args);
            prop_assert!(result.success, "{:?}", result);
            let data = result.data.unwrap();
            let entries = data["entries"].as_array().unwrap();
            let matching: Vec<Entry> = world
                .entries()
                .into_iter()
                .filter(|e| category.is_none_or(|c| e.category() == c))
                .filter(|e| status.is_none_or(|s| e.status() == Some(s)))
                .collect();
            prop_assert_eq!(data["total"].as_u64().unwrap() as usize, matching.len());
            prop_assert_eq!(entries.len(), matching.len().min(expected_len(limit)));
            for e in entries {
                if let Some(c) = category {
                    prop_assert_eq!(e["category"].as_str(), Some(c.as_str()));
                }
                if let Some(s) = status {
                    prop_assert_eq!(e["status"].as_str(), Some(s));
                }
            }
            let dates: Vec<&str> = entries.iter().filter_map(|e| e["updatedAt"].as_str()).collect();
            prop_assert!(dates.windows(2).all(|w| w[0] >= w[1]), "not newest first: {:?}", dates);
            Ok(())
        })
        .unwrap();
}

/// get_entry returns the requested path and what is on disk.
#[test]
fn get_entry_round_trips_what_is_on_disk() {
    let world = World::new();
    let count = world.entries().len();
    runner()
        .run(&(0..count), |i| {
            let entry = world.entries()[i].clone();
            let path = entry.path.to_string();
            let result = world.call("get_entry", json!({"path": path}));
            prop_assert!(result.success, "{:?}", result);
            let got = &result.data.unwrap()["entry"];
            let disk = world.on_disk(&path).unwrap();
            prop_assert_eq!(got["path"].as_str(), Some(path.as_str()));
            prop_assert_eq!(got["category"].as_str(), Some(disk.category().as_str()));
            let name = disk.name();
            prop_assert_eq!(got["name"].as_str(), Some(name.as_str()));
            prop_assert_eq!(&got["frontmatter"], &disk.frontmatter.to_json());
            prop_assert_eq!(got["content"].as_str(), Some(disk.body.as_str()));
            Ok(())
        })
        .unwrap();
}

fn update_strategy() -> impl Strategy<Value = (usize, Vec<(String, Value)>, Option<String>)> {
    let field = prop_oneof![
        prop::sample::select(PROJECT_STATUSES.to_vec()).prop_map(|s| ("status".to_string(), json!(s))),
        "[a-z ]{1,20}".prop_map(|s| ("next_action".to_string(), json!(s))),
        (1u32..28).prop_map(|d| ("due_date".to_string(), json!(format!("2027-01-{d:02}")))),
        prop::collection::vec("[a-z]{1,6}", 0..3).prop_map(|t| ("tags".to_string(), json!(t))),
        "[A-Za-z ]{1,12}".prop_map(|s| ("mood".to_string(), json!(s))),
        (0u32..100).prop_map(|n| ("custom_note".to_string(), json!(n))),
    ];
    (0usize..1000, prop::collection::vec(field, 1..4), prop::option::of("[a-z \n]{0,30}"))
}

/// update_entry changes what was asked and nothing else.
#[test]
fn update_entry_changes_only_the_given_fields() {
    let world = World::new();
    runner()
        .run(&update_strategy(), |(pick, fields, content)| {
            let all = world.entries();
            let before = all[pick % all.len()].clone();
            let path = before.path.to_string();
            let mut updates = serde_json::Map::new();
            for (key, value) in fields {
                // A status the entry's category does not allow is a different test.
                if key == "status" && check_field(before.category(), &key, &value).is_err() {
                    continue;
                }
                updates.insert(key, value);
            }
            if let Some(c) = &content {
                updates.insert("content".into(), json!(c));
            }
            prop_assume!(!updates.is_empty());
            let result = world.call("update_entry", json!({"path": path, "updates": updates}));
            prop_assert!(result.success, "{:?} {:?}", updates, result);
            let data = result.data.unwrap();
            prop_assert_eq!(data["path"].as_str(), Some(path.as_str()));
            let changed: Vec<&str> =
                data["updatedFields"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
            let asked: Vec<&str> = updates.keys().map(String::as_str).collect();
            prop_assert_eq!(changed, asked);
            let after = world.on_disk(&path).unwrap();
            for (key, value) in &updates {
                if key == "content" {
                    prop_assert_eq!(Some(after.body.as_str()), value.as_str());
                } else {
                    prop_assert_eq!(after.frontmatter.get(key), Some(value), "{}", key);
                }
            }
            if content.is_none() {
                prop_assert_eq!(&after.body, &before.body);
            }
            for (key, value) in before.frontmatter.iter() {
                if !updates.contains_key(key) && key != "updated_at" {
                    prop_assert_eq!(after.frontmatter.get(key), Some(value), "{} changed", key);
                }
            }
            Ok(())
        })
        .unwrap();
}

/// The frontmatter lines of a file but `updated_at`'s, and its notes, as bytes.
fn split_file(text: &str) -> Option<(String, String)> {
    let spans = kb_domain::frontmatter::document_spans(text).ok()?;
    let yaml = spans.yaml?;
    let lines: String = text[yaml].split_inclusive('\n').filter(|l| !l.starts_with("updated_at:")).collect();
    Some((lines, text[spans.body].to_string()))
}

/// A body edit through update_entry changes only the notes, as asked: append,
/// prepend and section keep every byte of the old notes, find_replace changes nothing
/// unless the count matches, and the frontmatter keeps every line but `updated_at`'s.
#[test]
fn update_entry_body_edits_keep_what_they_do_not_name() {
    let world = World::new();
    let mode = prop::sample::select(vec!["append", "prepend", "section", "find_replace"]);
    let strategy = (
        0usize..1000,
        mode,
        "[A-Za-z][A-Za-z .-]{0,20}",
        prop::sample::select(vec!["Log", "Tasks", "Notes"]),
        prop::sample::select(WORDS.to_vec()),
        1u64..3,
    );
    runner()
        .run(&strategy, |(pick, mode, content, section, find, expected)| {
            let all = world.entries();
            let path = all[pick % all.len()].path.to_string();
            let file = world.root.join(&path);
            let old = fs::read_to_string(&file).unwrap();
            let body = match mode {
                "section" => json!({"mode": mode, "content": content, "section": section}),
                "find_replace" => {
                    json!({"mode": mode, "content": content, "find": find, "expectedReplacements": expected})
                }
                _ => json!({"mode": mode, "content": content}),
            };
            let result = world.call("update_entry", json!({"path": path, "body": body}));
            let new = fs::read_to_string(&file).unwrap();
            let old_notes = kb_domain::frontmatter::parse_document(&old).unwrap().body;
            if mode == "find_replace" && old_notes.matches(find).count() as u64 != expected {
                prop_assert!(!result.success, "{:?}", result);
                prop_assert!(result.error.unwrap_or_default().contains("nothing was changed"));
                prop_assert_eq!(new, old, "a refused edit changed the file");
                return Ok(());
            }
            prop_assert!(result.success, "{:?} {}", result, body);
            let (new_lines, new_notes) = split_file(&new).unwrap();
            if let Some((old_lines, _)) = split_file(&old) {
                prop_assert_eq!(new_lines, old_lines, "the frontmatter changed beyond updated_at");
            }
            match mode {
                "append" => prop_assert!(new_notes.starts_with(&old_notes) && new_notes.contains(&content)),
                "prepend" => prop_assert!(new_notes.ends_with(&old_notes) && new_notes.starts_with(&content)),
                "section" => {
                    let kept = old_notes.bytes().zip(new_notes.bytes()).take_while(|(a, b)| a == b).count();
                    prop_assert!(
                        new_notes.ends_with(&old_notes[kept..]),
                        "{:?} -> {:?}",
                        old_notes,
                        new_notes
                    );
                    let heading = format!("## {section}");
                    prop_assert!(new_notes.contains(&heading));
                }
                _ => prop_assert_eq!(new_notes, old_notes.replace(find, &content)),
            }
            Ok(())
        })
        .unwrap();
}

/// move_entry puts the entry at `{target}/{slug}.md`, removes the old file,
/// gives it the target's schema and loses nothing the person wrote.
#[test]
fn move_entry_moves_transforms_and_keeps_everything() {
    let world = World::new();
    let strategy = (0usize..1000, prop::sample::select(Category::FILING.to_vec()));
    runner()
        .run(&strategy, |(pick, target)| {
            let all = world.entries();
            let before = all[pick % all.len()].clone();
            let old = before.path.to_string();
            let result = world.call("move_entry", json!({"path": old, "targetCategory": target.as_str()}));
            if before.category() == target {
                prop_assert!(!result.success);
                prop_assert!(world.on_disk(&old).is_some(), "a refused move touched the file");
                return Ok(());
            }
            prop_assert!(result.success, "{:?}", result);
            let data = result.data.unwrap();
            let new = data["newPath"].as_str().unwrap().to_string();
            prop_assert_eq!(data["oldPath"].as_str(), Some(old.as_str()));
            prop_assert_eq!(data["category"].as_str(), Some(target.as_str()));
            let new_path = EntryPath::parse(&new).unwrap();
            prop_assert_eq!(new_path.category(), target);
            let slug = Slug::from_name(&before.name()).to_string();
            let stem = new_path.stem();
            prop_assert!(
                stem == slug
                    || stem.strip_prefix(&format!("{slug}-")).is_some_and(|n| n.parse::<u32>().is_ok()),
                "{} is not {}/{}.md",
                new,
                target,
                slug
            );
            prop_assert!(world.on_disk(&old).is_none(), "{} still exists", old);
            let after = world.on_disk(&new).unwrap();
            for (key, value) in after.frontmatter.iter() {
                if target.field(key).is_some() && before.frontmatter.get(key) != Some(value) {
                    prop_assert!(check_field(target, key, value).is_ok(), "{}: {}", key, value);
                }
            }
            if let Some(status) = target.default_status() {
                let allowed =
                    after.status().is_some_and(|s| check_field(target, "status", &json!(s)).is_ok());
                prop_assert!(allowed || after.status() == Some(status), "status {:?}", after.status());
            }
            prop_assert_eq!(after.name(), before.name());
            prop_assert!(
                after.body.contains(before.body.trim()),
                "body lost: {:?} -> {:?}",
                before.body,
                after.body
            );
            for (key, value) in before.frontmatter.iter() {
                match key.as_str() {
                    "updated_at" | "suggested_category" => {}
                    "original_text" => {
                        let text = value.as_str().unwrap_or_default().trim();
                        prop_assert!(after.body.contains(text), "original text lost: {:?}", after.body);
                    }
                    "status" if after.frontmatter.get("status") != Some(value) => {
                        let set_aside = set_aside_status_key(before.category());
                        prop_assert_eq!(after.frontmatter.get(&set_aside), Some(value));
                    }
                    // A status set aside earlier for the target category comes back as its status.
                    k if k == set_aside_status_key(target) && after.frontmatter.get(key).is_none() => {
                        prop_assert_eq!(after.frontmatter.get("status"), Some(value));
                    }
                    _ => prop_assert_eq!(after.frontmatter.get(key), Some(value), "{} lost", key),
                }
            }
            Ok(())
        })
        .unwrap();
}

/// The indexed text of an entry, analysed the way the index analyses it.
fn indexed_words(entry: &Entry) -> Vec<String> {
    let fm = &entry.frontmatter;
    let mut text = vec![entry.name(), entry.tags().join(" "), entry.body.clone()];
    for key in ["one_liner", "next_action", "context", "original_text"] {
        text.push(fm.get_str(key).unwrap_or_default().to_string());
    }
    analyze(&text.join(" "))
}

/// Every hit holds every query term in an indexed field, as written or by its
/// stem (within one edit for a marked fuzzy retry), but the partial hits that follow,
/// which hold some; filters and limit hold; hits are ordered by score.
#[test]
fn search_hits_match_every_term_or_follow_as_partial_within_filters_by_score() {
    let world = World::new();
    let words: Vec<String> =
        WORDS.iter().map(|w| w.to_string()).chain(["ZOE".into(), "Cafe".into(), "gardn".into()]).collect();
    let strategy = (prop::collection::vec(prop::sample::select(words), 1..3), category_arg(), limit_arg());
    let with_hits = std::cell::Cell::new(0);
    runner()
        .run(&strategy, |(terms, category, limit)| {
            let query = terms.join(" ");
            let result = world.call("search_entries", with_filters(json!({"query": query}), category, limit));
            prop_assert!(result.success, "{:?}", result);
            let data = result.data.unwrap();
            let hits = data["entries"].as_array().unwrap();
            let fuzzy = data.get("fuzzy").and_then(Value::as_bool).unwrap_or(false);
            prop_assert!(hits.len() <= expected_len(limit));
            let total = data["total"].as_u64().unwrap() as usize;
            let partial_total = data["partialTotal"].as_u64().unwrap() as usize;
            // Hits holding every word first, then those holding some.
            let every = hits.iter().take_while(|h| h["matchedBy"] != "partial").count();
            prop_assert!(hits[every..].iter().all(|h| h["matchedBy"] == "partial"), "{:?}", hits);
            prop_assert!(total >= every && partial_total >= hits.len() - every, "{:?}", data);
            prop_assert!(every == hits.len() || total == every, "partial hits before the last all-words one");
            with_hits.set(with_hits.get() + usize::from(!hits.is_empty()));
            let wanted = query_terms(&query);
            for hit in &hits[..every] {
                let path = EntryPath::parse(hit["path"].as_str().unwrap()).unwrap();
                if let Some(c) = category {
                    prop_assert_eq!(path.category(), c);
                }
                let entry = world.vault.get(&path).unwrap();
                let have = indexed_words(&entry);
                let have_stems = stems(&have, SearchLanguage::default());
                let wanted_stems = stems(&wanted, SearchLanguage::default());
                for (term, stem) in wanted.iter().zip(&wanted_stems) {
                    let found = have.iter().zip(&have_stems).any(|(w, s)| {
                        w == term || (!fuzzy && s == stem) || (fuzzy && within_one_edit(w, term))
                    });
                    prop_assert!(found, "{} lacks {:?} (fuzzy {}): {:?}", path, term, fuzzy, have);
                }
            }
            for hit in &hits[every..] {
                let entry =
                    world.vault.get(&EntryPath::parse(hit["path"].as_str().unwrap()).unwrap()).unwrap();
                let have_stems = stems(&indexed_words(&entry), SearchLanguage::default());
                let wanted_stems = stems(&wanted, SearchLanguage::default());
                prop_assert!(
                    wanted_stems.iter().any(|s| have_stems.contains(s)),
                    "{} holds none of {}",
                    hit["path"],
                    query
                );
            }
            let scores: Vec<f64> = hits.iter().map(|h| h["score"].as_f64().unwrap()).collect();
            prop_assert!(scores.windows(2).all(|w| w[0] >= w[1]), "not by score: {:?}", scores);
            // The index answers the same as the tool.
            let direct = world.services.search.search(&kb_domain::SearchQuery {
                text: query.clone(),
                category,
                limit: expected_len(limit),
                offset: 0,
                prefix: false,
                partial: true,
                ..Default::default()
            });
            prop_assert_eq!(direct.unwrap().entries.len(), hits.len());
            Ok(())
        })
        .unwrap();
    assert!(with_hits.get() >= 24, "only {} of 96 searches found anything", with_hits.get());
}
