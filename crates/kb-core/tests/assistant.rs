#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The assembled assistant follows edits made outside kb while it runs: new entries become
//! listable and searchable, unreadable files are counted in its health.

use std::time::{Duration, Instant};

use kb_core::{Assistant, Config, ListQuery, SearchRequest};

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
