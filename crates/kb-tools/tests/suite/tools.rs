//! The other six tools over the in-memory fakes.

use std::sync::Arc;

use kb_domain::{Category, EntryPath, EntryReader, LlmError};
use kb_tools::testing::{ScriptedChatModel, ScriptedClassifier};
use kb_tools::{DigestKind, ErrorCode, LlmDigestWriter};
use serde_json::{Value, json};

use super::support::*;

#[tokio::test]
async fn get_entry_returns_what_is_stored() {
    let (services, repo) = services();
    seed(
        &repo,
        "people/sarah.md",
        "---\nname: Sarah\ncontext: met at conf\nmood: sunny\n---\nLikes climbing.\n",
    );
    let r = call(&services, &ctx(), "get_entry", json!({"path": "people/sarah.md"})).await;
    assert_eq!(
        data_of(&r),
        &json!({"entry": {"path": "people/sarah.md", "category": "people", "folder": "people", "name": "Sarah",
            "frontmatter": {"name": "Sarah", "context": "met at conf", "mood": "sunny"}, "content": "Likes climbing.\n"},
            "links": [], "backlinks": [], "related": []})
    );
    let r = call(&services, &ctx(), "get_entry", json!({"path": "projects/x.md"})).await;
    assert_eq!(error_of(&r), "Entry not found: projects/x.md");
    assert_eq!(r.error_code, Some(ErrorCode::NotFound));
}

#[tokio::test]
async fn get_entry_answers_lines_of_the_file_and_refuses_bad_ranges() {
    let (services, repo) = services();
    // The file: `---`, name, context, `---`, then the notes on lines 5 to 7.
    seed(
        &repo,
        "people/sarah.md",
        "---\nname: Sarah\ncontext: met at conf\n---\nLikes climbing.\n\nLives in Leeds.\n",
    );
    let lines = |range: &str| json!({"path": "people/sarah.md", "lines": range});
    let r = call(&services, &ctx(), "get_entry", lines("5-7")).await;
    let data = data_of(&r);
    assert_eq!(
        data["lines"],
        json!({"start": 5, "end": 7, "total": 7, "text": "Likes climbing.\n\nLives in Leeds."})
    );
    assert_eq!(
        (data["entry"]["name"].as_str(), data["entry"]["frontmatter"]["context"].as_str()),
        (Some("Sarah"), Some("met at conf"))
    );
    for left_out in ["links", "backlinks", "related"] {
        assert!(data.get(left_out).is_none(), "{left_out} in {data}");
    }
    assert!(data["entry"].get("content").is_none(), "{data}");
    let r = call(&services, &ctx(), "get_entry", lines("2")).await;
    assert_eq!(data_of(&r)["lines"], json!({"start": 2, "end": 2, "total": 7, "text": "name: Sarah"}));
    // A range running past the last line stops there.
    let r = call(&services, &ctx(), "get_entry", lines("6-99")).await;
    assert_eq!(data_of(&r)["lines"], json!({"start": 6, "end": 7, "total": 7, "text": "\nLives in Leeds."}));
    // By name, as the rest of get_entry.
    let r = call(&services, &ctx(), "get_entry", json!({"path": "Sarah", "lines": "7"})).await;
    assert_eq!(data_of(&r)["lines"]["text"], "Lives in Leeds.");
    for (bad, says) in [
        ("0-3", "counted from 1"),
        ("5-2", "ends before it starts"),
        ("a-b", "START-END"),
        ("", "START-END"),
        ("8", "the file has 7 lines"),
        ("8-9", "line 8 is past the end"),
    ] {
        let r = call(&services, &ctx(), "get_entry", lines(bad)).await;
        assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments), "{bad:?}: {r:?}");
        assert!(error_of(&r).contains(says), "{bad:?}: {}", error_of(&r));
    }
    let r = call(&services, &ctx(), "get_entry", json!({"path": "people/sarah.md", "lines": 3})).await;
    assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments), "a number is not a range: {r:?}");
    let r = call(&services, &ctx(), "get_entry", json!({"path": "people/nobody.md", "lines": "1-2"})).await;
    assert_eq!(r.error_code, Some(ErrorCode::NotFound), "{r:?}");
}

#[tokio::test]
async fn get_entry_answers_what_an_entry_links_to_and_what_links_to_it() {
    let (services, repo) = services();
    seed(
        &repo,
        "people/priya.md",
        "---\nname: Priya Raman\naliases: [Pri]\n---\nRuns the robotics meetup.\n",
    );
    seed(
        &repo,
        "projects/kiln.md",
        "---\nname: Kiln build\n---\nAsk [[priya|Priya]] about firing.\n`[[not a link]]`\nSee [[Glaze notes]].\n",
    );
    seed(&repo, "ideas/glaze.md", "---\nname: Glaze\n---\nFrom [[Pri]]: try ash glaze.\n");
    let r = call(&services, &ctx(), "get_entry", json!({"path": "projects/kiln.md"})).await;
    assert_eq!(
        data_of(&r)["links"],
        json!([
            {"path": "people/priya.md", "name": "Priya Raman", "line": "Ask [[priya|Priya]] about firing.", "kind": "note"},
            {"path": null, "name": "Glaze notes", "line": "See [[Glaze notes]].", "kind": "missing"},
        ])
    );
    let r = call(&services, &ctx(), "get_entry", json!({"path": "people/priya.md"})).await;
    assert_eq!(
        data_of(&r)["backlinks"],
        json!([
            {"path": "ideas/glaze.md", "name": "Glaze", "line": "From [[Pri]]: try ash glaze.", "kind": "note"},
            {"path": "projects/kiln.md", "name": "Kiln build", "line": "Ask [[priya|Priya]] about firing.", "kind": "note"},
        ])
    );
}

#[tokio::test]
async fn list_entries_is_newest_first_filtered_and_capped() {
    let (services, repo) = services();
    for i in 0..120 {
        let status = if i % 3 == 0 { "done" } else { "active" };
        seed(
            &repo,
            &format!("projects/p{i}.md"),
            &format!(
                "---\nname: P{i}\nstatus: {status}\nupdated_at: 2026-11-{:02}T10:00:00Z\n---\n",
                1 + i % 20
            ),
        );
    }
    seed(&repo, "ideas/i.md", "---\nname: I\n---\n");
    let r = call(&services, &ctx(), "list_entries", json!({})).await;
    assert_eq!(data_of(&r)["entries"].as_array().unwrap().len(), 10);
    assert_eq!(data_of(&r)["total"], 121);
    let r = call(
        &services,
        &ctx(),
        "list_entries",
        json!({"category": "projects", "status": "done", "limit": 1000}),
    )
    .await;
    let entries = data_of(&r)["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 40);
    assert_eq!(data_of(&r)["total"], 40);
    assert!(entries.iter().all(|e| e["status"] == "done" && e["category"] == "projects"));
    let dates: Vec<&str> = entries.iter().map(|e| e["updatedAt"].as_str().unwrap()).collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "{dates:?}");
    let r = call(&services, &ctx(), "list_entries", json!({"limit": 300})).await;
    assert_eq!(data_of(&r)["entries"].as_array().unwrap().len(), 100);
}

#[tokio::test]
async fn update_entry_changes_fields_or_nothing() {
    let (services, repo) = services();
    seed(&repo, "projects/x.md", "---\nname: X\nstatus: active\nmood: calm\n---\nnotes\n");
    let r = call(
        &services,
        &ctx(),
        "update_entry",
        json!({"path": "projects/x.md", "updates": {"status": "blocked", "due_date": "2026-12-01"}}),
    )
    .await;
    assert_eq!(data_of(&r), &json!({"path": "projects/x.md", "updatedFields": ["status", "due_date"]}));
    let after = repo.get(&EntryPath::parse("projects/x.md").unwrap()).unwrap();
    assert_eq!(after.status(), Some("blocked"));
    assert_eq!(after.frontmatter.get_str("mood"), Some("calm"));
    assert_eq!(after.body, "notes\n");

    for (updates, expected) in [
        (json!({"status": "pending"}), "expected one of active, waiting, blocked, someday, done"),
        (json!({"due_date": "soon"}), "expected a date"),
        (json!({}), "no fields to update"),
        (json!(null), "no fields to update"),
        (json!({"category": "ideas"}), "move_entry"),
        (json!({"content": 3}), "expected text"),
    ] {
        let r = call(&services, &ctx(), "update_entry", json!({"path": "projects/x.md", "updates": updates}))
            .await;
        assert!(error_of(&r).contains(expected), "{:?}", r.error);
        assert_eq!(r.error_code, Some(ErrorCode::InvalidUpdate));
    }
    assert_eq!(repo.get(&EntryPath::parse("projects/x.md").unwrap()).unwrap(), after);
    let r =
        call(&services, &ctx(), "update_entry", json!({"path": "ideas/none.md", "updates": {"a": 1}})).await;
    assert_eq!(error_of(&r), "Entry not found: ideas/none.md");
}

#[tokio::test]
async fn update_entry_edits_the_notes_in_every_mode() {
    let (services, repo) = services();
    let path = EntryPath::parse("projects/roof.md").unwrap();
    seed(&repo, "projects/roof.md", "---\nname: Roof\nstatus: active\n---\nRoof leaks on the north side.\n");
    let notes = || repo.get(&EntryPath::parse("projects/roof.md").unwrap()).unwrap().body;
    let edit = |body: serde_json::Value| {
        let services = &services;
        async move {
            call(services, &ctx(), "update_entry", json!({"path": "projects/roof.md", "body": body})).await
        }
    };

    let r = edit(json!({"mode": "append", "content": "Felt bought."})).await;
    assert_eq!(data_of(&r), &json!({"path": "projects/roof.md", "updatedFields": ["content"]}));
    assert_eq!(notes(), "Roof leaks on the north side.\n\nFelt bought.\n");
    edit(json!({"mode": "prepend", "content": "Urgent."})).await;
    assert_eq!(notes(), "Urgent.\n\nRoof leaks on the north side.\n\nFelt bought.\n");
    // Today's date comes from the tool context.
    edit(json!({"mode": "section", "section": "Log", "content": "Called the roofer"})).await;
    assert!(notes().ends_with("Felt bought.\n\n## Log\n\n- 2026-11-21: Called the roofer\n"), "{}", notes());
    edit(json!({"mode": "section", "section": "log", "content": "Roofer came"})).await;
    assert!(notes().ends_with("- 2026-11-21: Called the roofer\n- 2026-11-21: Roofer came\n"), "{}", notes());
    let r = edit(json!({"mode": "find_replace", "find": "north", "content": "south"})).await;
    assert!(r.success, "{r:?}");
    assert!(notes().contains("on the south side"), "{}", notes());

    // Refused edits name the problem and change nothing.
    let before = repo.get(&path).unwrap();
    for (body, expected) in [
        (json!({"mode": "find_replace", "find": "Roof", "content": "Wall"}), "\"Roof\" 2 times, not 1"),
        (
            json!({"mode": "find_replace", "find": "Roof", "content": "Wall", "expectedReplacements": 3}),
            "2 times, not 3",
        ),
        (json!({"mode": "append", "content": "  "}), "body.content is empty"),
        (json!({"mode": "section", "content": "x"}), "body.section is required"),
        (json!({"mode": "append", "content": "x", "find": "y"}), "body.find is only for mode find_replace"),
    ] {
        let r = edit(body).await;
        assert!(error_of(&r).contains(expected), "{:?}", r.error);
        assert_eq!(r.error_code, Some(ErrorCode::InvalidUpdate));
    }
    let r = call(
        &services,
        &ctx(),
        "update_entry",
        json!({"path": "projects/roof.md", "updates": {"status": "done", "content": "x"},
               "body": {"mode": "append", "content": "y"}}),
    )
    .await;
    assert!(error_of(&r).contains("changed twice"), "{:?}", r.error);
    for (body, expected) in [
        (
            json!({"mode": "rewrite", "content": "x"}),
            "expected one of append, prepend, replace, section, find_replace",
        ),
        (
            json!({"mode": "find_replace", "find": "x", "content": "", "expectedReplacements": 0}),
            "must be at least 1",
        ),
        (json!({"mode": "append"}), "missing required field \"body.content\""),
    ] {
        let r = edit(body).await;
        assert!(error_of(&r).contains(expected), "{:?}", r.error);
        assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments));
    }
    assert_eq!(repo.get(&path).unwrap(), before);

    // Fields and a body edit together; replace names the whole notes.
    let r = call(
        &services,
        &ctx(),
        "update_entry",
        json!({"path": "projects/roof.md", "updates": {"status": "done"},
               "body": {"mode": "replace", "content": "Fixed.\n"}}),
    )
    .await;
    assert_eq!(data_of(&r)["updatedFields"], json!(["status", "content"]));
    let after = repo.get(&path).unwrap();
    assert_eq!((after.status(), after.body.as_str()), (Some("done"), "Fixed.\n"));
}

#[tokio::test]
async fn moving_an_inbox_capture_keeps_the_persons_words() {
    let classifier = ScriptedClassifier::new(vec![Ok(classification(Category::Ideas, 0.3, "Glass shed"))]);
    let (services, repo) = services_with(Arc::new(classifier), None);
    let words = "what if the shed were made of old windows";
    let mut ctx = ctx();
    let r = call(&services, &ctx, "classify_and_capture", json!({"text": words})).await;
    for update in &r.state_updates {
        ctx.apply(update);
    }
    assert_eq!(ctx.last_filed.as_ref().map(ToString::to_string).as_deref(), Some("inbox/glass-shed.md"));

    let r = call(
        &services,
        &ctx,
        "move_entry",
        json!({"path": "inbox/glass-shed.md", "targetCategory": "projects"}),
    )
    .await;
    assert_eq!(
        data_of(&r),
        &json!({"oldPath": "inbox/glass-shed.md", "newPath": "projects/glass-shed.md", "category": "projects"})
    );
    for update in &r.state_updates {
        ctx.apply(update);
    }
    assert_eq!(ctx.last_filed.as_ref().map(ToString::to_string).as_deref(), Some("projects/glass-shed.md"));
    let moved = repo.get(&EntryPath::parse("projects/glass-shed.md").unwrap()).unwrap();
    assert!(moved.body.contains(words), "{:?}", moved.body);
    assert_eq!(moved.name(), "Glass shed");
    assert_eq!(moved.status(), Some("active"));
    assert!(
        !moved.frontmatter.contains("original_text") && !moved.frontmatter.contains("suggested_category")
    );
    assert!(repo.get(&EntryPath::parse("inbox/glass-shed.md").unwrap()).is_err());

    let r = call(
        &services,
        &ctx,
        "move_entry",
        json!({"path": "projects/glass-shed.md", "targetCategory": "projects"}),
    )
    .await;
    assert_eq!(r.error_code, Some(ErrorCode::InvalidMove));
    assert!(error_of(&r).contains("already in projects"));
}

#[tokio::test]
async fn move_entry_takes_a_note_to_a_path_or_a_category_never_both() {
    let (services, repo) = services();
    seed(&repo, "Journal/2025/Kiln.md", "Fire the kiln.\n");
    let both =
        json!({"path": "Journal/2025/Kiln.md", "targetCategory": "ideas", "targetPath": "Archive/Kiln.md"});
    for args in [both, json!({"path": "Journal/2025/Kiln.md"})] {
        let r = call(&services, &ctx(), "move_entry", args).await;
        assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments));
        assert!(error_of(&r).contains("targetCategory or targetPath"), "{:?}", r.error);
    }
    let r = call(
        &services,
        &ctx(),
        "move_entry",
        json!({"path": "Journal/2025/Kiln", "targetPath": "Archive/Kiln.md"}),
    )
    .await;
    assert_eq!(
        data_of(&r),
        &json!({"oldPath": "Journal/2025/Kiln.md", "newPath": "Archive/Kiln.md", "category": "other"})
    );
    let moved = repo.get(&EntryPath::parse("Archive/Kiln.md").unwrap()).unwrap();
    assert_eq!((moved.body.as_str(), moved.frontmatter.is_empty()), ("Fire the kiln.\n", true));
    let r =
        call(&services, &ctx(), "move_entry", json!({"path": "Archive/Kiln.md", "targetPath": "../x.md"}))
            .await;
    assert_eq!(r.error_code, Some(ErrorCode::InvalidPath));
    let r = call(
        &services,
        &ctx(),
        "move_entry",
        json!({"path": "Archive/Kiln.md", "targetPath": "projects/kiln.md"}),
    )
    .await;
    assert_eq!(data_of(&r)["category"], "projects");
    let adopted = repo.get(&EntryPath::parse("projects/kiln.md").unwrap()).unwrap();
    assert_eq!((adopted.name().as_str(), adopted.status()), ("Kiln", Some("active")));
}

#[tokio::test]
async fn taken_slugs_get_suffixes() {
    let answer = classification(Category::Ideas, 0.9, "Same name");
    let (services, repo) = services_with(Arc::new(ScriptedClassifier::always(Ok(answer))), None);
    let mut paths = Vec::new();
    for _ in 0..3 {
        let r = call(&services, &ctx(), "classify_and_capture", json!({"text": "again"})).await;
        paths.push(data_of(&r)["path"].as_str().unwrap().to_string());
    }
    assert_eq!(paths, ["ideas/same-name.md", "ideas/same-name-2.md", "ideas/same-name-3.md"]);
    seed(&repo, "projects/same-name.md", "---\nname: Same name\n---\n");
    let r = call(
        &services,
        &ctx(),
        "move_entry",
        json!({"path": "ideas/same-name.md", "targetCategory": "projects"}),
    )
    .await;
    assert_eq!(data_of(&r)["newPath"], "projects/same-name-2.md");
}

fn seed_digest_vault(repo: &kb_tools::testing::MemoryRepository) {
    seed(
        repo,
        "projects/launch.md",
        "---\nname: Launch\nstatus: active\nnext_action: Write the post\ndue_date: 2026-11-25\nupdated_at: 2026-11-20T10:00:00Z\n---\n",
    );
    seed(
        repo,
        "projects/old.md",
        "---\nname: Old thing\nstatus: active\nupdated_at: 2026-10-01T10:00:00Z\n---\n",
    );
    seed(
        repo,
        "projects/stuck.md",
        "---\nname: Stuck thing\nstatus: blocked\nupdated_at: 2026-11-20T10:00:00Z\n---\n",
    );
    seed(repo, "admin/tax.md", "---\nname: Pay tax\nstatus: pending\ndue_date: 2026-11-10\n---\n");
    seed(repo, "admin/bike.md", "---\nname: Fix bike\nstatus: done\nupdated_at: 2026-11-20T08:00:00Z\n---\n");
    seed(repo, "people/sarah.md", "---\nname: Sarah\nfollow_ups: [Send the API spec]\n---\n");
    seed(
        repo,
        "inbox/shed.md",
        "---\nname: Shed\noriginal_text: build a shed\nsuggested_category: projects\ncreated_at: 2026-11-10T10:00:00Z\n---\n",
    );
}

#[tokio::test]
async fn the_digest_without_an_llm_renders_the_facts_under_the_headings() {
    let (services, repo) = services();
    seed_digest_vault(&repo);
    let r = call(&services, &ctx(), "generate_digest", json!({"type": "daily"})).await;
    let content = data_of(&r)["content"].as_str().unwrap();
    assert_eq!(data_of(&r)["type"], "daily");
    for heading in DigestKind::Daily.headings() {
        assert!(content.contains(&format!("## {heading}")), "{content}");
    }
    let section = |name: &str| {
        content.split(&format!("## {name}\n")).nth(1).unwrap().split("\n## ").next().unwrap().to_string()
    };
    let top = section("Top 3 actions");
    assert!(top.contains("Pay tax") && top.contains("Write the post (Launch)"), "{top}");
    assert!(top.find("Pay tax") < top.find("Write the post"), "soonest due first: {top}");
    assert!(section("People to connect with").contains("Sarah: Send the API spec"));
    let watch = section("Watch out for");
    assert!(watch.contains("Pay tax was due 2026-11-10") && watch.contains("Shed has waited"), "{watch}");
    assert!(section("One small win").contains("Fix bike"));
    assert!(kb_tools::digest::render::word_count(content) < 150);

    let r = call(&services, &ctx(), "generate_digest", json!({"type": "weekly"})).await;
    let content = data_of(&r)["content"].as_str().unwrap();
    for heading in DigestKind::Weekly.headings() {
        assert!(content.contains(&format!("## {heading}")), "{content}");
    }
    assert!(
        content.contains("Stuck thing is blocked") && content.contains("Old thing untouched"),
        "{content}"
    );
    assert!(content.contains("Shed (maybe projects)"), "{content}");
    assert!(kb_tools::digest::render::word_count(content) < 250);
}

#[tokio::test]
async fn the_digest_with_an_llm_is_written_by_it_and_falls_back_when_it_fails() {
    let model = Arc::new(ScriptedChatModel::new());
    model.push_text("## Top 3 actions\n- Pay your tax today\n");
    model.push_completion(Err(LlmError::Timeout(30)));
    let writer = Arc::new(LlmDigestWriter::new(model.clone()));
    let (services, repo) = services_with(Arc::new(ScriptedClassifier::new(vec![])), Some(writer));
    seed_digest_vault(&repo);
    let r = call(&services, &ctx(), "generate_digest", json!({"type": "daily"})).await;
    assert_eq!(data_of(&r)["content"], "## Top 3 actions\n- Pay your tax today");
    let asked = format!("{:?}", model.chat_requests()[0].messages);
    assert!(
        asked.contains("Pay tax") && asked.contains("## Watch out for") && asked.contains("150 words"),
        "{asked}"
    );

    let r = call(&services, &ctx(), "generate_digest", json!({"type": "daily"})).await;
    assert!(data_of(&r)["content"].as_str().unwrap().contains("## One small win"));
}

#[tokio::test]
async fn search_entries_finds_every_term_and_ignores_an_empty_query() {
    let (services, repo) = services();
    seed(&repo, "projects/api.md", "---\nname: ClientCo API\nnext_action: send the spec\n---\n");
    seed(&repo, "ideas/api.md", "---\nname: API ideas\n---\nspec spec spec");
    seed(&repo, "people/sarah.md", "---\nname: Sarah\n---\n");
    let r = call(&services, &ctx(), "search_entries", json!({"query": "api SPEC"})).await;
    let hits = data_of(&r)["entries"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0]["path"], "ideas/api.md");
    assert!(hits[0]["score"].as_f64() >= hits[1]["score"].as_f64());
    let r = call(
        &services,
        &ctx(),
        "search_entries",
        json!({"query": "api", "category": "projects", "limit": 1}),
    )
    .await;
    assert_eq!(data_of(&r)["entries"][0]["path"], "projects/api.md");
    let r = call(&services, &ctx(), "search_entries", json!({"query": "   "})).await;
    assert_eq!(data_of(&r), &json!({"entries": [], "total": 0, "partialTotal": 0, "mode": "keyword"}));
    let r = call(&services, &ctx(), "search_entries", json!({"query": "api", "mode": "semantic"})).await;
    assert_eq!(r.error_code, Some(ErrorCode::SemanticUnavailable), "no embedding model: {r:?}");
}

#[tokio::test]
async fn build_context_answers_the_notes_around_an_entry_nearest_and_newest_first() {
    let (services, repo) = services();
    let note = |name: &str, updated: &str, body: &str| {
        format!("---\nname: {name}\nupdated_at: {updated}T09:00:00Z\n---\n{body}\n")
    };
    seed(&repo, "people/priya.md", &note("Priya", "2026-11-01", "Runs the meetup; see [[Kiln]]."));
    seed(&repo, "projects/kiln.md", &note("Kiln", "2026-11-20", "Build it with [[Glaze]]."));
    seed(&repo, "ideas/glaze.md", &note("Glaze", "2026-11-10", "Ash glaze."));
    seed(&repo, "ideas/meetup.md", &note("Meetup talk", "2026-11-25", "Ask [[Priya]]."));
    seed(&repo, "admin/tax.md", &note("Tax", "2026-11-26", "Nothing linked."));

    let r = call(&services, &ctx(), "build_context", json!({"path": "Priya"})).await;
    let data = data_of(&r);
    assert_eq!(data["entry"]["path"], "people/priya.md");
    let related = |data: &Value| -> Vec<(String, u64, String, String)> {
        data["related"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                let s = |k: &str| n[k].as_str().unwrap().to_string();
                (s("path"), n["distance"].as_u64().unwrap(), s("relation"), s("via"))
            })
            .collect()
    };
    let at = |p: &str, d: u64, r: &str, v: &str| (p.to_string(), d, r.to_string(), v.to_string());
    assert_eq!(
        related(data),
        [
            at("ideas/meetup.md", 1, "links_here", "people/priya.md"),
            at("projects/kiln.md", 1, "linked_to", "people/priya.md")
        ],
        "newest first at one link"
    );
    assert_eq!(data["total"], 2);

    let r =
        call(&services, &ctx(), "build_context", json!({"path": "people/priya.md", "depth": 2, "limit": 2}))
            .await;
    let data = data_of(&r);
    assert_eq!(data["total"], 3, "the glaze note is two links away");
    assert_eq!(related(data).len(), 2, "capped at the limit");
    let r = call(&services, &ctx(), "build_context", json!({"path": "people/priya.md", "depth": 2})).await;
    assert_eq!(related(data_of(&r))[2], at("ideas/glaze.md", 2, "linked_to", "projects/kiln.md"));

    let r = call(&services, &ctx(), "build_context", json!({"path": "people/priya.md", "depth": 4})).await;
    assert!(error_of(&r).contains("\"depth\": must be at most 3, got 4"), "{}", error_of(&r));
    assert_eq!(r.error_code, Some(ErrorCode::InvalidArguments));
}
