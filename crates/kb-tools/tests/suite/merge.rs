//! merge_entries over the in-memory vault: asks first in a chat, merges once confirmed,
//! takes names as references, refuses bad input changing nothing.

use kb_domain::{Entry, EntryPath, EntryReader};
use kb_tools::testing::MemoryRepository;
use kb_tools::{Confirmation, ErrorCode, StateUpdate, ToolContext};
use serde_json::json;

use super::support::*;

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

fn with(confirmation: Confirmation) -> ToolContext {
    let mut ctx = ctx();
    ctx.confirmation = confirmation;
    ctx
}

fn seed_priyas(repo: &MemoryRepository) {
    seed(
        repo,
        "people/priya-raman.md",
        "---\nid: T1\nname: Priya Raman\ncontext: Robotics lead\ntags: [work]\n---\nMet at the meetup.\n",
    );
    seed(repo, "people/dr-raman.md", "---\nid: S1\nname: Dr Raman\ntags: [Work, robots]\n---\nLikes tea.\n");
    seed(
        repo,
        "projects/robot.md",
        "---\nname: Robot\nrelated_people: [people/dr-raman.md]\n---\nAsk [her](../people/dr-raman.md).\n",
    );
}

fn all(repo: &MemoryRepository) -> Vec<Entry> {
    repo.all_entries().unwrap()
}

#[tokio::test]
async fn in_a_chat_it_asks_first_and_changes_nothing() {
    let (services, repo) = services();
    seed_priyas(&repo);
    let before = all(&repo);
    let args = json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["people/dr-raman.md"]});
    let r = call(&services, &with(Confirmation::Ask), "merge_entries", args.clone()).await;
    let proposal = "Merge Dr Raman (people/dr-raman.md) into Priya Raman (people/priya-raman.md)?";
    assert_eq!(
        data_of(&r),
        &json!({"path": "people/priya-raman.md", "merged": [], "confirmationRequired": true, "proposal": proposal})
    );
    assert_eq!(
        r.state_updates,
        [StateUpdate::ConfirmationRequested {
            tool: "merge_entries".into(),
            arguments: args,
            proposal: proposal.into()
        }]
    );
    assert_eq!(all(&repo), before);

    // A missing entry is reported before the person is asked anything.
    let r = call(
        &services,
        &with(Confirmation::Ask),
        "merge_entries",
        json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["people/nobody.md"]}),
    )
    .await;
    assert_eq!(r.error_code, Some(ErrorCode::NotFound), "{r:?}");
    assert!(r.state_updates.is_empty());
}

#[tokio::test]
async fn once_confirmed_it_merges_and_retargets_references() {
    for confirmation in [Confirmation::Given, Confirmation::NotNeeded] {
        let (services, repo) = services();
        seed_priyas(&repo);
        let args = json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["people/dr-raman.md"]});
        let r = call(&services, &with(confirmation), "merge_entries", args).await;
        assert_eq!(
            data_of(&r),
            &json!({"path": "people/priya-raman.md", "merged": ["people/dr-raman.md"],
                "referencesUpdated": ["projects/robot.md"]})
        );
        assert!(r.state_updates.is_empty());
        assert_eq!(repo.len(), 2);
        assert!(repo.get(&path("people/dr-raman.md")).is_err());
        let merged = repo.get(&path("people/priya-raman.md")).unwrap();
        assert_eq!(merged.tags(), ["work", "robots"]);
        assert_eq!(merged.frontmatter.get_str_list("aliases"), ["Dr Raman"]);
        assert_eq!(merged.body, "Met at the meetup.\n\n## Merged from Dr Raman (2026-11-21)\n\nLikes tea.\n");
        let robot = repo.get(&path("projects/robot.md")).unwrap();
        assert_eq!(robot.frontmatter.get_str_list("related_people"), ["people/priya-raman.md"]);
        assert_eq!(robot.body, "Ask [her](../people/priya-raman.md).\n");
    }
}

#[tokio::test]
async fn names_are_references_too() {
    let (services, repo) = services();
    seed_priyas(&repo);
    let r = call(
        &services,
        &with(Confirmation::Ask),
        "merge_entries",
        json!({"targetPath": "Priya", "sourcePaths": ["Dr Raman"]}),
    )
    .await;
    let data = data_of(&r);
    assert_eq!(
        data["proposal"],
        "Merge Dr Raman (people/dr-raman.md) into Priya Raman (people/priya-raman.md)?"
    );
    assert_eq!(
        data["resolved"],
        json!([
            {"reference": "Priya", "path": "people/priya-raman.md", "by": "partial name"},
            {"reference": "Dr Raman", "path": "people/dr-raman.md", "by": "name"},
        ])
    );
    // What the person confirms is the call with the paths the names resolved to.
    let [StateUpdate::ConfirmationRequested { arguments, .. }] = r.state_updates.as_slice() else {
        panic!("{:?}", r.state_updates)
    };
    assert_eq!(
        arguments,
        &json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["people/dr-raman.md"]})
    );

    let r = call(
        &services,
        &with(Confirmation::Given),
        "merge_entries",
        json!({"targetPath": "Priya", "sourcePaths": ["Dr Raman"]}),
    )
    .await;
    assert_eq!(data_of(&r)["merged"], json!(["people/dr-raman.md"]));
    assert_eq!(data_of(&r)["resolved"].as_array().unwrap().len(), 2);
    assert_eq!(repo.len(), 2);
}

#[tokio::test]
async fn bad_input_changes_nothing() {
    let (services, repo) = services();
    seed_priyas(&repo);
    seed(&repo, "people/sam-lee.md", "---\nname: Sam Lee\n---\n");
    seed(&repo, "people/sam-ortiz.md", "---\nname: Sam Ortiz\n---\n");
    let before = all(&repo);
    let cases = [
        (json!({"targetPath": "people/priya-raman.md", "sourcePaths": []}), ErrorCode::InvalidArguments),
        (
            json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["Priya Raman"]}),
            ErrorCode::InvalidArguments,
        ),
        (
            json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["Dr Raman", "people/dr-raman.md"]}),
            ErrorCode::InvalidArguments,
        ),
        (
            json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["people/nobody.md"]}),
            ErrorCode::NotFound,
        ),
        (json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["Sam"]}), ErrorCode::Ambiguous),
        (json!({"targetPath": "people/priya-raman.md"}), ErrorCode::InvalidArguments),
    ];
    for (args, code) in cases {
        for confirmation in [Confirmation::Ask, Confirmation::Given] {
            let r = call(&services, &with(confirmation), "merge_entries", args.clone()).await;
            assert_eq!(r.error_code, Some(code), "{args}: {r:?}");
            assert_eq!(all(&repo), before, "{args}");
        }
    }
    // An ambiguous source lists who it could be, but a pick cannot fill the list by itself.
    let r = call(
        &services,
        &with(Confirmation::Ask),
        "merge_entries",
        json!({"targetPath": "people/priya-raman.md", "sourcePaths": ["Sam"]}),
    )
    .await;
    assert_eq!(r.candidates.as_ref().and_then(|c| c.as_array()).map(Vec::len), Some(2), "{r:?}");
    assert!(!r.state_updates.iter().any(|u| matches!(u, StateUpdate::ChoiceRequested(_))), "{r:?}");
}
