#![allow(clippy::unwrap_used, clippy::expect_used)]
//! References follow a moved entry: an idea referred to from 50 other entries (frontmatter
//! lists in flow and block style, Markdown links from the root and from the entry's folder,
//! link definitions) moves to projects through the `move_entry` tool; afterwards every
//! reference leads to it through `get_entry`, every link's target file exists, each
//! referring file changed only in its references' bytes, and search sees the move whole.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use kb_domain::{Category, Clock, EntryPath, EntryWriter, Frontmatter, NewEntry, SystemClock};
use kb_search::TantivyIndex;
use kb_storage::vault::Vault;
use kb_tools::testing::ScriptedClassifier;
use kb_tools::{ToolContext, ToolServices};
use serde_json::{Value, json};

const OLD: &str = "ideas/garden-robot.md";
const NEW: &str = "projects/garden-robot.md";

/// The ways a referring entry may be written, and how each reads after the move.
fn referrer(i: usize) -> (Category, Frontmatter, String, Vec<(&'static str, &'static str)>) {
    let mut fields = Frontmatter::new();
    match i % 5 {
        0 => {
            fields.set("related_projects", json!([OLD, "projects/other.md"]));
            let body = format!("Person {i}. Helps with the [robot](../{OLD}).\n");
            (
                Category::People,
                fields,
                body,
                vec![
                    ("- ideas/garden-robot.md", "- projects/garden-robot.md"),
                    ("(../ideas/", "(../projects/"),
                ],
            )
        }
        1 => {
            let body =
                format!("Idea {i}: see [the robot](garden-robot.md) and [again](garden-robot.md#plan).\n");
            (Category::Ideas, fields, body, vec![("(garden-robot.md", "(../projects/garden-robot.md")])
        }
        2 => {
            let body = format!("Admin {i}: budget for [it]({OLD}) `[not this]({OLD})`.\n");
            (Category::Admin, fields, body, vec![("[it](ideas/", "[it](projects/")])
        }
        3 => {
            let body = format!("Project {i} depends on [the robot][r].\n\n[r]: /{OLD} \"Garden robot\"\n");
            (Category::Projects, fields, body, vec![("[r]: /ideas/", "[r]: /projects/")])
        }
        _ => {
            fields.set("related_projects", json!([OLD]));
            (
                Category::Ideas,
                fields,
                format!("Idea {i}.\n"),
                vec![("- ideas/garden-robot.md", "- projects/garden-robot.md")],
            )
        }
    }
}

/// The link targets of a body outside code spans: inline `](target)` and definitions
/// `]: target`.
fn link_targets(body: &str) -> Vec<String> {
    let body: String = body.split('`').step_by(2).collect();
    let body = body.as_str();
    let mut out = Vec::new();
    for (i, _) in body.match_indices("](") {
        let rest = &body[i + 2..];
        let end = rest.find([')', ' ']).unwrap_or(rest.len());
        out.push(rest[..end].to_string());
    }
    for line in body.lines() {
        if let Some((_, rest)) = line.split_once("]: ") {
            out.push(rest.split(' ').next().unwrap_or_default().to_string());
        }
    }
    out
}

/// The vault path a link target written in `folder` leads to.
fn resolve(folder: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or_default();
    if let Some(rooted) = target.strip_prefix('/') {
        return rooted.to_string();
    }
    if let Some(up) = target.strip_prefix("../") {
        return up.to_string();
    }
    if target.contains('/') { target.to_string() } else { format!("{folder}/{target}") }
}

#[test]
fn moving_an_entry_referred_to_from_50_others_keeps_every_reference_working() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let vault = Arc::new(Vault::open(root, Arc::new(SystemClock)).unwrap());
    let index = Arc::new(TantivyIndex::open(Arc::new(vault.files()), &root.join(".kb/index")).unwrap());
    vault.add_observer(index.clone());
    let target = vault
        .create(NewEntry {
            category: Category::Ideas,
            name: "Garden robot".into(),
            fields: Frontmatter::new(),
            body: "Waters the tomatoes.\n".into(),
        })
        .unwrap();
    assert_eq!(target.path.to_string(), OLD);
    let mut referrers = Vec::new();
    for i in 0..50 {
        let (category, fields, body, edits) = referrer(i);
        let entry = vault.create(NewEntry { category, name: format!("Referrer {i}"), fields, body }).unwrap();
        let before = fs::read_to_string(entry.path.under(root)).unwrap();
        referrers.push((entry.path, before, edits));
    }

    let services = ToolServices {
        repository: vault.clone(),
        search: index.clone(),
        embedder: None,
        classifier: Arc::new(ScriptedClassifier::new(vec![])),
        digest_writer: None,
        clock: Arc::new(SystemClock),
        pages: None,
    };
    let registry = kb_tools::standard_registry().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let call = |tool: &str, args: Value| {
        let ctx = ToolContext::new(SystemClock.now().date_naive());
        let result = rt.block_on(registry.execute(tool, &args.to_string(), &ctx, &services));
        assert!(result.success, "{tool} {args}: {:?}", result.error);
        result.data.unwrap()
    };
    let moved = call("move_entry", json!({"path": OLD, "targetCategory": "projects"}));
    assert_eq!(moved["newPath"], NEW, "{moved}");

    for (path, before, edits) in &referrers {
        let after = fs::read_to_string(path.under(root)).unwrap();
        let expected = edits.iter().fold(before.clone(), |text, (from, to)| text.replace(from, to));
        assert_ne!(&expected, before, "{path}: the test's edits must change something");
        assert_eq!(after, expected, "{path}: only the references' bytes may change");

        let got = &call("get_entry", json!({"path": path.to_string()}))["entry"];
        let mut leads_to: Vec<String> = got["frontmatter"]["related_projects"]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        let body = got["content"].as_str().unwrap();
        let folder = path.category().as_str();
        leads_to.extend(link_targets(body).iter().map(|t| resolve(folder, t)));
        assert!(!leads_to.iter().any(|p| p == OLD), "{path} still refers to the old path: {leads_to:?}");
        for reference in leads_to.iter().filter(|p| p.as_str() != "projects/other.md") {
            assert!(root.join(reference).is_file(), "{path}: the link to {reference} leads nowhere");
            let entry = call("get_entry", json!({"path": reference}));
            assert_eq!(entry["entry"]["frontmatter"]["id"], json!(target.id()), "{path} → {reference}");
        }
    }
    assert!(!Path::new(&root.join(OLD)).exists());
    let hits = call("search_entries", json!({"query": "tomatoes"}));
    let paths: Vec<&str> =
        hits["entries"].as_array().unwrap().iter().filter_map(|h| h["path"].as_str()).collect();
    assert_eq!(paths, [NEW]);
    let referred = call("search_entries", json!({"query": "referrer", "limit": 100}));
    assert_eq!(referred["total"], 50);
    assert!(EntryPath::parse(NEW).unwrap().under(root).is_file());
}
