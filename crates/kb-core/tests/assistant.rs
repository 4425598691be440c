#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The assembled assistant: it follows edits made outside kb while it runs (new entries
//! become listable and searchable, unreadable files are counted in its health), and its
//! typed calls answer typed data and failures.

use std::time::{Duration, Instant};

use kb_core::tools::get::{GetEntry, GetEntryArgs};
use kb_core::{Assistant, CaptureSource, Category, Config, ErrorCode, ListQuery, SearchRequest};

async fn eventually(mut check: impl AsyncFnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outside_edits_reach_list_search_and_health() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config { watch: true, ..Config::offline(dir.path()) };
    let kb = Assistant::open(config).await.unwrap();
    assert_eq!(kb.health().entries, 0);
    // A category folder made after kb opened the vault is followed too.
    std::fs::create_dir(dir.path().join("ideas")).unwrap();

    std::fs::write(
        dir.path().join("ideas/zeppelin.md"),
        "---\nname: Zeppelin garden\n---\nA floating garden.\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("ideas/broken.md"), "---\nname: [unclosed\n---\n").unwrap();

    let found = eventually(async || {
        kb.entries().search(&SearchRequest::new("zeppelin")).await.is_ok_and(|hits| hits.total == 1)
            && kb.health().entries == 1
            && kb.health().malformed_files == 1
    })
    .await;
    assert!(found, "health: {:?}", kb.health());
    let ideas = ListQuery { category: Some("ideas".to_string()), ..ListQuery::default() };
    let list = kb.entries().list(&ideas).await.unwrap();
    assert_eq!(list.entries[0].path.to_string(), "ideas/zeppelin.md");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ideas/broken.md")).unwrap(),
        "---\nname: [unclosed\n---\n"
    );
    kb.close().await;
}

/// A program linking kb-core gets typed answers and typed failures: a name two entries
/// share is `AMBIGUOUS` with both to choose from, through the handle and through
/// `Assistant::run` alike; bad arguments change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_calls_answer_data_and_failures_with_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let kb = Assistant::open(Config::offline(dir.path())).await.unwrap();
    for (name, file) in [("Sam Ortiz", "sam-ortiz"), ("Sam Lee", "sam-lee")] {
        let text = format!("---\nname: {name}\n---\nA friend.\n");
        std::fs::create_dir_all(dir.path().join("people")).unwrap();
        std::fs::write(dir.path().join(format!("people/{file}.md")), text).unwrap();
    }
    kb.reindex().unwrap();

    let one = kb.entries().get("people/sam-lee.md").await.unwrap();
    assert_eq!((one.entry.name.as_str(), one.entry.category), ("Sam Lee", Category::People));

    let args = GetEntryArgs { path: "Sam".to_string(), lines: None };
    for failure in [
        kb.entries().get("Sam").await.unwrap_err(),
        kb.run::<GetEntry>(args, CaptureSource::Api).await.unwrap_err(),
    ] {
        assert_eq!(failure.code, ErrorCode::Ambiguous, "{failure:?}");
        let candidates = failure.candidates.as_deref().and_then(|c| c.as_array()).map_or(0, Vec::len);
        assert_eq!(candidates, 2, "{failure:?}");
    }

    let refused = kb.entries().move_to("people/sam-lee.md", "nowhere").await.unwrap_err();
    assert_eq!(refused.code, ErrorCode::InvalidArguments, "{refused:?}");
    assert!(dir.path().join("people/sam-lee.md").is_file());
    kb.close().await;
}

/// The shared corpora beside the repository (CI has them; elsewhere the test is skipped).
fn corpora_root() -> Option<std::path::PathBuf> {
    let beside = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora");
    let found = beside.is_dir().then_some(beside);
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the shared corpora are missing: CI must have shared/ beside the repo"
        );
        eprintln!("corpora not found; skipped");
    }
    found
}

/// Every file under `root` but kb's own `.kb/`, with its bytes.
fn files_outside_kb(root: &std::path::Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|item| item.unwrap())
        .filter(|item| !item.path().starts_with(root.join(".kb")))
        .map(|item| {
            let bytes =
                if item.file_type().is_file() { std::fs::read(item.path()).unwrap() } else { Vec::new() };
            (item.path().strip_prefix(root).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vault_someone_already_keeps_is_left_as_it_was_by_a_start_a_search_and_a_digest() {
    let Some(corpora) = corpora_root() else { return };
    let source = corpora.join("dataview-test-vault");
    let dir = tempfile::tempdir().unwrap();
    for item in walkdir::WalkDir::new(&source) {
        let item = item.unwrap();
        let target = dir.path().join(item.path().strip_prefix(&source).unwrap());
        if item.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if item.file_type().is_file() {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
    let before = files_outside_kb(dir.path());
    assert!(before.len() > 30, "the corpus is there: {} files and folders", before.len());

    let kb = Assistant::open(Config { watch: true, ..Config::offline(dir.path()) }).await.unwrap();
    let found = kb.entries().search(&SearchRequest::new("books")).await.unwrap();
    assert!(found.total > 0, "the person's notes are searched");
    // Every visible markdown file is a note kb knows, in its own folder.
    let visible = |p: &std::path::Path| p.iter().all(|part| !part.to_string_lossy().starts_with('.'));
    let notes = before.keys().filter(|p| p.extension().is_some_and(|e| e == "md") && visible(p)).count();
    let listed = kb.entries().list(&ListQuery { limit: Some(1), ..ListQuery::default() }).await.unwrap();
    assert_eq!(listed.total + kb.health().malformed_files, notes);
    // Links resolve as Obsidian resolves them: Home's [[example tasks]] leads into tasks/.
    let home = kb.entries().get("Home.md").await.unwrap();
    let targets: Vec<String> = home.links().iter().filter_map(|l| l.path.clone()).collect();
    assert!(targets.contains(&"tasks/example tasks.md".to_string()), "{targets:?}");
    let tasks = kb.entries().get("tasks/example tasks.md").await.unwrap();
    assert!(tasks.backlinks().iter().any(|l| l.path.as_deref() == Some("Home.md")), "{:?}", tasks.backlinks);
    kb.entries().digest("daily").await.unwrap();
    kb.entries().digest("weekly").await.unwrap();
    // Long enough for the background work a start sets off (sweeps, the entry list writer).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    kb.close().await;

    let after = files_outside_kb(dir.path());
    let added: Vec<_> = after.keys().filter(|path| !before.contains_key(*path)).collect();
    assert!(added.is_empty(), "kb added {added:?}");
    let changed: Vec<_> =
        before.iter().filter(|(path, bytes)| after.get(*path) != Some(bytes)).map(|(p, _)| p).collect();
    assert!(changed.is_empty(), "kb changed or removed {changed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_before_the_view_of_the_vault_is_built() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("ideas")).unwrap();
    for n in 0..5 {
        std::fs::write(
            dir.path().join(format!("ideas/idea-{n}.md")),
            format!("---\nname: Idea {n}\n---\nA thought.\n"),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("ideas/broken.md"), "---\nname: [unclosed\n---\n").unwrap();
    // A one-shot process builds its view of the vault only when something needs it.
    let kb = Assistant::open(Config::offline(dir.path())).await.unwrap();
    let early = kb.health();
    assert!(!early.vault_ready, "health built the view: {early:?}");
    assert!(early.index_ready);
    assert_eq!(early.entries, 5, "the index counts the same notes");
    assert!(!kb.health().vault_ready, "asking again does not build it either");

    kb.entries().list(&ListQuery::default()).await.unwrap();
    let built = kb.health();
    assert!(built.vault_ready);
    assert_eq!((built.entries, built.malformed_files), (5, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_listed_before_kb_opens_are_the_tools_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let kb = Assistant::open(Config::offline(dir.path())).await.unwrap();
    let before = kb_core::assistant::standard_specs().expect("the standard registry");
    assert_eq!(before, kb.tools().specs());
    assert!(before.iter().any(|spec| spec.definition.name == "search_entries"));
}

/// A process that said it needs no search (a one-shot list, as `kb list` is) does not open
/// the search index for a list or an entry; when it searches after all, the index opens
/// then and finds what was filed meanwhile, though it was closed when the entry was filed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_index_opens_when_first_needed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("ideas")).unwrap();
    std::fs::write(dir.path().join("ideas/kiln.md"), "---\nname: Kiln\n---\nA wood-fired kiln.\n").unwrap();
    let config = Config { search_needed: false, entries_needed: true, ..Config::offline(dir.path()) };
    let kb = Assistant::open(config).await.unwrap();
    let index_dir = dir.path().join(".kb/index");
    assert_eq!(kb.entries().list(&ListQuery::default()).await.unwrap().total, 1);
    assert_eq!(kb.entries().get("ideas/kiln.md").await.unwrap().entry.name, "Kiln");
    assert!(!index_dir.exists(), "a list and an entry opened the search index");

    let filed =
        kb.entries().capture("idea: a glaze made from garden ash", &Default::default()).await.unwrap();
    assert!(!index_dir.exists(), "a capture with no search opened the index");
    let found = kb.entries().search(&SearchRequest::new("glaze")).await.unwrap();
    assert_eq!(found.entries.iter().map(|hit| hit.path.as_str()).collect::<Vec<_>>(), [filed.path.as_str()]);
    assert!(index_dir.join("meta.json").exists(), "the search did not open the index");
    assert!(kb.health().index_ready);
}
