#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The SQLite conversation store against real database files in temp folders.

use std::path::Path;

use kb_domain::conversation::SummaryCoverage;
use kb_domain::{
    ConversationId, ConversationStore, Message, NewMessage, PendingCall, Role, StoreError, ToolCall,
};
use kb_storage::conversations::SqliteConversationStore;
use proptest::prelude::*;
use sqlx::SqlitePool;
use tempfile::TempDir;

fn url_in(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("db").join("kb.sqlite").display())
}

async fn store_in(dir: &Path) -> SqliteConversationStore {
    SqliteConversationStore::connect(&url_in(dir)).await.unwrap()
}

/// A second, independent pool on the same file, to look at what is really stored.
async fn raw_pool(dir: &Path) -> SqlitePool {
    SqlitePool::connect(&url_in(dir)).await.unwrap()
}

async fn count(pool: &SqlitePool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn capture_turn() -> Vec<NewMessage> {
    vec![
        NewMessage::user("Met Priya at the Rust meetup — she works on 数据库 engines 🚀"),
        NewMessage::assistant_tool_calls(
            "",
            vec![
                call("call_1", "search_entries", r#"{"query":"Priya"}"#),
                call("call_2", "capture", r#"{"text":"Met Priya — 数据库 🚀","hints":null}"#),
            ],
        ),
        NewMessage::tool_result("call_1", r#"{"entries":[],"total":0}"#),
        NewMessage::tool_result("call_2", r#"{"path":"people/priya.md","confidence":0.92}"#),
        NewMessage {
            filed_entry_path: Some("people/priya.md".into()),
            filed_confidence: Some(0.92),
            ..NewMessage::assistant("Filed under people: **Priya** ✓")
        },
    ]
}

fn same_content(stored: &Message, new: &NewMessage) {
    assert_eq!(stored.role, new.role());
    assert_eq!(stored.content, new.content);
    assert_eq!(stored.tool_calls, new.tool_calls);
    assert_eq!(stored.tool_call_id, new.tool_call_id);
    assert_eq!(stored.filed_entry_path, new.filed_entry_path);
    assert_eq!(stored.filed_confidence, new.filed_confidence);
}

#[tokio::test]
async fn a_turn_with_tool_calls_round_trips_in_order() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let conversation = store.create("Met Priya").await.unwrap();
    let turn = capture_turn();

    let stored = store.append_turn(&conversation.id, turn.clone()).await.unwrap();
    assert_eq!(stored.len(), turn.len());
    for (message, new) in stored.iter().zip(&turn) {
        same_content(message, new);
        assert_eq!(message.conversation_id, conversation.id);
        assert!(!message.id.is_empty());
    }
    assert_eq!(stored[1].tool_calls.len(), 2);

    // Read back through a fresh connection: exactly what append_turn returned.
    store.close().await;
    let store = store_in(dir.path()).await;
    assert_eq!(store.messages(&conversation.id).await.unwrap(), stored);
    let again = store.get(&conversation.id).await.unwrap().unwrap();
    assert_eq!(again.title, "Met Priya");
    assert!(again.updated_at >= conversation.updated_at);
}

#[tokio::test]
async fn closing_empties_the_log_a_command_would_leave_behind() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    // Another connection stays open, as the history's does in a command that exits
    // without closing it: SQLite then never copies the log into the database by itself.
    let other = raw_pool(dir.path()).await;
    let mut open = other.acquire().await.unwrap();
    sqlx::query("SELECT count(*) FROM messages").execute(&mut *open).await.unwrap();
    let conversation = store.create("Met Priya").await.unwrap();
    store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    let wal = dir.path().join("db").join("kb.sqlite-wal");
    let size = || std::fs::metadata(&wal).map_or(0, |meta| meta.len());
    assert!(size() > 0, "the turn is in the log");
    // A small log is left for the next process to read.
    let small = size();
    store.close().await;
    assert_eq!(size(), small);
    // A log of more than a megabyte (many commands' changes) is emptied.
    let store = store_in(dir.path()).await;
    for _ in 0..200 {
        store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    }
    assert!(size() > 1024 * 1024, "{} bytes", size());
    store.close().await;
    assert_eq!(size(), 0, "the next process has no log to read");
    let turns = 201 * capture_turn().len() as i64;
    assert_eq!(count(&other, "SELECT count(*) FROM messages").await, turns);

    // While another process reads, the log is left for later, and closing does not wait.
    let store = store_in(dir.path()).await;
    let mut reading = other.begin().await.unwrap();
    assert_eq!(count_in(&mut reading).await, 1);
    for _ in 0..200 {
        store.append_turn(&conversation.id, vec![NewMessage::user("hello")]).await.unwrap();
    }
    assert!(size() > 1024 * 1024, "{} bytes", size());
    store.close().await;
    assert!(size() > 1024 * 1024, "{} bytes", size());
    assert_eq!(count_in(&mut reading).await, 1, "the reader's snapshot stands");
    reading.commit().await.unwrap();
    assert_eq!(count(&other, "SELECT count(*) FROM conversations").await, 1);
    assert_eq!(count(&other, "SELECT count(*) FROM messages").await, turns + 200);
}

/// How many conversations a transaction sees.
async fn count_in(transaction: &mut sqlx::Transaction<'_, sqlx::Sqlite>) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM conversations").fetch_one(&mut **transaction).await.unwrap()
}

#[tokio::test]
async fn tool_calls_are_stored_as_a_json_array_and_null_when_none() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let conversation = store.create("json").await.unwrap();
    store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    let raw = raw_pool(dir.path()).await;
    let json: Vec<Option<String>> =
        sqlx::query_scalar("SELECT tool_calls FROM messages ORDER BY seq").fetch_all(&raw).await.unwrap();
    assert_eq!(json[0], None);
    let calls: serde_json::Value = serde_json::from_str(json[1].as_deref().unwrap()).unwrap();
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[1]["name"], "capture");
    assert_eq!(calls[1]["arguments"], r#"{"text":"Met Priya — 数据库 🚀","hints":null}"#);
}

#[tokio::test]
async fn unreadable_rows_are_errors_not_panics() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let conversation = store.create("broken").await.unwrap();
    store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    let raw = raw_pool(dir.path()).await;
    sqlx::query("UPDATE messages SET tool_calls = '{not json' WHERE seq = 2").execute(&raw).await.unwrap();
    let err = store.messages(&conversation.id).await.unwrap_err();
    assert!(matches!(&err, StoreError::Database { message, .. } if message.contains("tool calls")), "{err}");

    sqlx::query("UPDATE messages SET tool_calls = NULL, role = 'system'").execute(&raw).await.unwrap();
    assert!(matches!(store.messages(&conversation.id).await, Err(StoreError::Database { .. })));
    sqlx::query("UPDATE conversations SET updated_at = 'last tuesday'").execute(&raw).await.unwrap();
    assert!(matches!(store.list().await, Err(StoreError::Database { .. })));
}

#[tokio::test]
async fn deleting_a_conversation_deletes_its_messages() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let gone = store.create("to delete").await.unwrap();
    let kept = store.create("to keep").await.unwrap();
    store.append_turn(&gone.id, capture_turn()).await.unwrap();
    store.append_turn(&kept.id, vec![NewMessage::user("hello")]).await.unwrap();

    store.delete(&gone.id).await.unwrap();
    assert_eq!(store.get(&gone.id).await.unwrap(), None);
    assert!(matches!(store.messages(&gone.id).await, Err(StoreError::NotFound(_))));
    assert_eq!(store.messages(&kept.id).await.unwrap().len(), 1);
    store.close().await;

    let raw = raw_pool(dir.path()).await;
    assert_eq!(count(&raw, "SELECT COUNT(*) FROM messages").await, 1);
    assert_eq!(
        count(
            &raw,
            "SELECT COUNT(*) FROM messages WHERE conversation_id NOT IN (SELECT id FROM conversations)"
        )
        .await,
        0
    );
}

#[tokio::test]
async fn migrations_apply_twice_and_data_is_kept() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let conversation = store.create("persisted").await.unwrap();
    store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    store.close().await;
    drop(store);

    let store = store_in(dir.path()).await;
    assert_eq!(store.list().await.unwrap(), vec![store.get(&conversation.id).await.unwrap().unwrap()]);
    assert_eq!(store.messages(&conversation.id).await.unwrap().len(), 5);
    // A third time with the first store's connections still open is fine too.
    let third = store_in(dir.path()).await;
    assert_eq!(third.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn missing_folders_are_created_and_memory_databases_work() {
    let dir = TempDir::new().unwrap();
    let nested = dir.path().join("a").join("b");
    let store = SqliteConversationStore::connect(&url_in(&nested)).await.unwrap();
    store.create("x").await.unwrap();
    assert!(nested.join("db").join("kb.sqlite").is_file());

    let kb = SqliteConversationStore::open_in(dir.path()).await.unwrap();
    kb.create("y").await.unwrap();
    assert!(dir.path().join(".kb").join("kb.sqlite").is_file());

    let memory = SqliteConversationStore::connect("sqlite::memory:").await.unwrap();
    let c = memory.create("in memory").await.unwrap();
    memory.append_turn(&c.id, vec![NewMessage::user("hi")]).await.unwrap();
    assert_eq!(memory.list().await.unwrap().len(), 1);
    assert_eq!(memory.messages(&c.id).await.unwrap()[0].content, "hi");

    assert!(matches!(
        SqliteConversationStore::connect("postgres://nope").await,
        Err(StoreError::Database { .. })
    ));
}

#[tokio::test]
async fn list_is_newest_update_first_and_rename_counts_as_an_update() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let first = store.create("first").await.unwrap();
    let second = store.create("second").await.unwrap();
    let titles = |list: Vec<kb_domain::Conversation>| list.into_iter().map(|c| c.title).collect::<Vec<_>>();
    assert_eq!(titles(store.list().await.unwrap()), ["second", "first"]);

    store.append_turn(&first.id, vec![NewMessage::user("more")]).await.unwrap();
    assert_eq!(titles(store.list().await.unwrap()), ["first", "second"]);
    let updated = store.get(&first.id).await.unwrap().unwrap();
    assert!(updated.updated_at > first.updated_at);
    assert_eq!(updated.created_at, first.created_at);

    store.rename(&second.id, "Second, renamed ✎").await.unwrap();
    assert_eq!(titles(store.list().await.unwrap()), ["Second, renamed ✎", "first"]);
}

#[tokio::test]
async fn recent_messages_is_the_last_window_oldest_first() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("window").await.unwrap();
    for turn in 0..3 {
        let messages = (0..3).map(|i| NewMessage::user(format!("m{}", turn * 3 + i))).collect();
        store.append_turn(&c.id, messages).await.unwrap();
    }
    let contents = |m: Vec<Message>| m.into_iter().map(|m| m.content).collect::<Vec<_>>();
    assert_eq!(contents(store.recent_messages(&c.id, 4).await.unwrap()), ["m5", "m6", "m7", "m8"]);
    assert_eq!(contents(store.recent_messages(&c.id, 0).await.unwrap()), Vec::<String>::new());
    assert_eq!(store.recent_messages(&c.id, 100).await.unwrap(), store.messages(&c.id).await.unwrap());
    assert_eq!(store.recent_messages(&c.id, usize::MAX).await.unwrap().len(), 9);
    let empty = store.create("empty").await.unwrap();
    assert_eq!(store.recent_messages(&empty.id, 5).await.unwrap(), vec![]);
    assert_eq!(store.messages(&empty.id).await.unwrap(), vec![]);
}

#[tokio::test]
async fn messages_after_skips_the_oldest_across_turns() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("tail").await.unwrap();
    let other = store.create("other").await.unwrap();
    for turn in 0..3 {
        let messages = (0..3).map(|i| NewMessage::user(format!("m{}", turn * 3 + i))).collect();
        store.append_turn(&c.id, messages).await.unwrap();
        store.append_turn(&other.id, vec![NewMessage::user("elsewhere")]).await.unwrap();
    }
    let contents = |m: Vec<Message>| m.into_iter().map(|m| m.content).collect::<Vec<_>>();
    assert_eq!(contents(store.messages_after(&c.id, 5).await.unwrap()), ["m5", "m6", "m7", "m8"]);
    assert_eq!(store.messages_after(&c.id, 0).await.unwrap(), store.messages(&c.id).await.unwrap());
    assert_eq!(store.messages_after(&c.id, 9).await.unwrap(), vec![]);
    assert_eq!(store.messages_after(&c.id, u64::MAX).await.unwrap(), vec![]);
    let ghost = ConversationId::new("01NOSUCHCONVERSATION00000");
    assert!(matches!(store.messages_after(&ghost, 0).await, Err(StoreError::NotFound(_))));
}

#[tokio::test]
async fn summary_is_stored_without_moving_the_conversation() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("long talk").await.unwrap();
    assert_eq!(c.summary, None);
    assert_eq!(c.summary_covers, None);
    let first = SummaryCoverage { messages: 10, last_filed: Some("people/priya.md".into()) };
    store.set_summary(&c.id, "They talked about Priya and 数据库.", &first).await.unwrap();
    let read = store.get(&c.id).await.unwrap().unwrap();
    assert_eq!(read.summary_covers, Some(first));
    let newer = SummaryCoverage { messages: 22, last_filed: None };
    store.set_summary(&c.id, "Newer summary.", &newer).await.unwrap();
    let read = store.get(&c.id).await.unwrap().unwrap();
    assert_eq!(read.summary.as_deref(), Some("Newer summary."));
    assert_eq!(read.summary_covers, Some(newer));
    assert_eq!(read.updated_at, c.updated_at);
    assert_eq!(store.list().await.unwrap()[0], read);
}

#[tokio::test]
async fn a_summary_stored_before_coverage_was_recorded_reads_as_unknown_coverage() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("old talk").await.unwrap();
    // What a database written before migration 0002 holds once migrated.
    let raw = raw_pool(dir.path()).await;
    sqlx::query("UPDATE conversations SET summary = 'Old summary.' WHERE id = ?")
        .bind(c.id.as_str())
        .execute(&raw)
        .await
        .unwrap();
    let read = store.get(&c.id).await.unwrap().unwrap();
    assert_eq!(read.summary.as_deref(), Some("Old summary."));
    assert_eq!(read.summary_covers, None);
}

#[tokio::test]
async fn unknown_conversations_are_not_found() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let ghost = ConversationId::new("01NOSUCHCONVERSATION00000");
    let not_found = |r: Result<(), StoreError>| matches!(r, Err(StoreError::NotFound(id)) if id == ghost);
    assert_eq!(store.get(&ghost).await.unwrap(), None);
    assert!(not_found(store.rename(&ghost, "x").await));
    assert!(not_found(store.delete(&ghost).await));
    assert!(not_found(store.set_summary(&ghost, "x", &SummaryCoverage::default()).await));
    assert!(not_found(store.messages(&ghost).await.map(drop)));
    assert!(not_found(store.recent_messages(&ghost, 3).await.map(drop)));
    assert!(not_found(store.append_turn(&ghost, capture_turn()).await.map(drop)));
    let c = store.create("real").await.unwrap();
    store.delete(&c.id).await.unwrap();
    assert!(matches!(store.delete(&c.id).await, Err(StoreError::NotFound(_))));

    // Nothing was stored for the unknown conversation.
    let raw = raw_pool(dir.path()).await;
    assert_eq!(count(&raw, "SELECT COUNT(*) FROM messages").await, 0);
    assert_eq!(count(&raw, "SELECT COUNT(*) FROM conversations").await, 0);
}

#[tokio::test]
async fn a_turn_that_fails_half_way_stores_nothing() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("atomic").await.unwrap();
    store.append_turn(&c.id, vec![NewMessage::user("before")]).await.unwrap();
    let before = store.get(&c.id).await.unwrap().unwrap();

    // Make the database refuse the third message of the next turn.
    let raw = raw_pool(dir.path()).await;
    sqlx::query(
        "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.content = 'boom' \
         BEGIN SELECT RAISE(ABORT, 'refused by test'); END",
    )
    .execute(&raw)
    .await
    .unwrap();
    let turn = vec![NewMessage::user("one"), NewMessage::assistant("two"), NewMessage::assistant("boom")];
    let err = store.append_turn(&c.id, turn).await.unwrap_err();
    assert!(matches!(&err, StoreError::Database { .. }), "{err}");
    let chain = kb_domain::Chain(&err).to_string();
    assert!(chain.contains("refused by test"), "the database's own error is kept: {chain}");

    let contents: Vec<String> = store.messages(&c.id).await.unwrap().into_iter().map(|m| m.content).collect();
    assert_eq!(contents, ["before"]);
    assert_eq!(store.get(&c.id).await.unwrap().unwrap().updated_at, before.updated_at);

    // And the store is still usable afterwards (no lock or transaction left behind).
    store.append_turn(&c.id, vec![NewMessage::assistant("after")]).await.unwrap();
    assert_eq!(store.messages(&c.id).await.unwrap().len(), 2);
}

fn delete_proposal(path: &str) -> PendingCall {
    PendingCall {
        tool: "delete_entry".into(),
        arguments: serde_json::json!({ "path": path }),
        proposal: format!("Delete {path}?"),
        choices: Vec::new(),
    }
}

#[tokio::test]
async fn a_pending_call_is_stored_with_its_turn_survives_a_restart_and_is_taken_once() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let c = store.create("delete").await.unwrap();
    assert_eq!(c.pending, None);
    let proposal = delete_proposal("projects/old-site.md");
    let turn = vec![NewMessage::user("delete projects/old-site.md"), NewMessage::assistant("Delete it?")];
    store.append_turn_with_pending(&c.id, turn, Some(&proposal)).await.unwrap();

    // The column holds the call as JSON; a fresh connection (a restart) reads it back.
    let raw = raw_pool(dir.path()).await;
    let column: Option<String> =
        sqlx::query_scalar("SELECT pending_call FROM conversations").fetch_one(&raw).await.unwrap();
    let json: serde_json::Value = serde_json::from_str(column.as_deref().unwrap()).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"tool": "delete_entry", "arguments": {"path": "projects/old-site.md"},
                           "proposal": "Delete projects/old-site.md?"})
    );
    store.close().await;
    let store = store_in(dir.path()).await;
    assert_eq!(store.get(&c.id).await.unwrap().unwrap().pending.as_ref(), Some(&proposal));
    assert_eq!(store.list().await.unwrap()[0].pending.as_ref(), Some(&proposal));

    // A plain append leaves it; taking it answers it once and clears the column.
    store.append_turn(&c.id, vec![NewMessage::user("still there")]).await.unwrap();
    assert_eq!(store.take_pending(&c.id).await.unwrap(), Some(proposal.clone()));
    assert_eq!(store.take_pending(&c.id).await.unwrap(), None);
    assert_eq!(store.get(&c.id).await.unwrap().unwrap().pending, None);
    assert_eq!(count(&raw, "SELECT COUNT(*) FROM conversations WHERE pending_call IS NULL").await, 1);

    // A turn stored with no pending call clears one left from before.
    store.append_turn_with_pending(&c.id, vec![NewMessage::user("a")], Some(&proposal)).await.unwrap();
    store.append_turn_with_pending(&c.id, vec![NewMessage::user("b")], None).await.unwrap();
    assert_eq!(store.get(&c.id).await.unwrap().unwrap().pending, None);
    assert_eq!(store.messages(&c.id).await.unwrap().len(), 5);

    let ghost = ConversationId::new("01NOSUCHCONVERSATION00000");
    assert!(matches!(store.take_pending(&ghost).await, Err(StoreError::NotFound(_))));
    assert!(matches!(
        store.append_turn_with_pending(&ghost, vec![NewMessage::user("x")], Some(&proposal)).await,
        Err(StoreError::NotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_several_stores_taking_one_pending_call_only_one_gets_it() {
    let dir = TempDir::new().unwrap();
    let stores = [store_in(dir.path()).await, store_in(dir.path()).await, store_in(dir.path()).await];
    for round in 0..20 {
        let c = stores[0].create("race").await.unwrap();
        let proposal = delete_proposal(&format!("ideas/x-{round}.md"));
        stores[0]
            .append_turn_with_pending(&c.id, vec![NewMessage::user("x")], Some(&proposal))
            .await
            .unwrap();
        let (a, b, d) = tokio::join!(
            stores[0].take_pending(&c.id),
            stores[1].take_pending(&c.id),
            stores[2].take_pending(&c.id)
        );
        let got: Vec<PendingCall> = [a, b, d].into_iter().filter_map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![proposal], "round {round}");
    }
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![Just(String::new()), "\\PC{1,40}", "[a-z ]{0,10}", "\\PC{200,600}"]
}

fn new_message() -> impl Strategy<Value = NewMessage> {
    let role = prop::option::of(prop_oneof![Just(Role::User), Just(Role::Assistant), Just(Role::Tool)]);
    let tool_call =
        (text(), text(), text()).prop_map(|(id, name, arguments)| ToolCall { id, name, arguments });
    let confidence = prop_oneof![
        Just(0.0),
        Just(1.0),
        0.0f64..=1.0,
        any::<f64>().prop_filter("finite", |f| f.is_finite())
    ];
    (
        role,
        text(),
        prop::collection::vec(tool_call, 0..4),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(confidence),
    )
        .prop_map(|(role, content, tool_calls, tool_call_id, filed_entry_path, filed_confidence)| {
            NewMessage { role, content, tool_calls, tool_call_id, filed_entry_path, filed_confidence }
        })
}

#[test]
fn arbitrary_messages_round_trip_exactly() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = TempDir::new().unwrap();
    let store = runtime.block_on(store_in(dir.path()));
    let config = ProptestConfig { cases: 256, ..ProptestConfig::default() };
    proptest!(config, |(turns in prop::collection::vec(prop::collection::vec(new_message(), 0..6), 1..4), title in text())| {
        runtime.block_on(async {
            let c = store.create(&title).await.unwrap();
            let mut returned = Vec::new();
            for turn in &turns {
                let stored = store.append_turn(&c.id, turn.clone()).await.unwrap();
                prop_assert_eq!(stored.len(), turn.len());
                for (message, new) in stored.iter().zip(turn) {
                    same_content(message, new);
                }
                returned.extend(stored);
            }
            prop_assert_eq!(&store.messages(&c.id).await.unwrap(), &returned);
            let last_two = returned[returned.len().saturating_sub(2)..].to_vec();
            prop_assert_eq!(store.recent_messages(&c.id, 2).await.unwrap(), last_two);
            prop_assert_eq!(store.get(&c.id).await.unwrap().map(|c| c.title), Some(title.clone()));
            Ok(())
        })?;
    });
}

/// What kb writes reaches the database file itself while kb runs (the write-ahead log is
/// checkpointed in the background, not only when the last connection closes), and no
/// write pays for a checkpoint: the log is copied by then without any write filling it.
#[tokio::test]
async fn writes_reach_the_database_file_while_the_store_stays_open() {
    let dir = TempDir::new().unwrap();
    let store = store_in(dir.path()).await;
    let file = dir.path().join("db").join("kb.sqlite");
    let size_before = std::fs::metadata(&file).unwrap().len();
    for n in 0..40 {
        let conversation = store.create(&format!("conversation {n}")).await.unwrap();
        store.append_turn(&conversation.id, capture_turn()).await.unwrap();
    }
    let grown = || std::fs::metadata(&file).is_ok_and(|m| m.len() > size_before);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !grown() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(grown(), "the database file never grew while the store was open ({size_before} bytes)");
    let pool = raw_pool(dir.path()).await;
    assert_eq!(count(&pool, "SELECT COUNT(*) FROM conversations").await, 40);
}
