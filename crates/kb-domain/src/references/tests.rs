use proptest::prelude::*;

use super::*;

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

fn retarget(referrer: &str, document: &str, from: &str, to: &str) -> Option<String> {
    retarget_references(&path(referrer), document, &path(from), &path(to))
}

#[test]
fn frontmatter_lists_change_only_the_path_bytes() {
    let doc = "---\nname: Priya\nrelated_projects: [projects/robot.md, projects/other.md]  # mine\n\
               follow_ups:\n  - ask about projects/robot.md\n---\nBody.\n";
    let out = retarget("people/priya.md", doc, "projects/robot.md", "ideas/robot.md").unwrap();
    assert_eq!(
        out,
        "---\nname: Priya\nrelated_projects: [ideas/robot.md, projects/other.md]  # mine\n\
         follow_ups:\n  - ask about projects/robot.md\n---\nBody.\n"
    );
}

#[test]
fn block_lists_and_quoted_values() {
    let doc =
        "---\nrelated_people:\n  - \"people/sam.md\"\n  - 'people/ana.md'\nsource: people/sam.md\n---\n";
    let out = retarget("projects/p.md", doc, "people/sam.md", "people/sam-2.md").unwrap();
    assert_eq!(
        out,
        "---\nrelated_people:\n  - \"people/sam-2.md\"\n  - 'people/ana.md'\nsource: people/sam-2.md\n---\n"
    );
}

#[test]
fn body_links_keep_their_style() {
    let doc = "---\nname: x\n---\nSee [robot](projects/robot.md), [again](/projects/robot.md#plan), \
               [rel](../projects/robot.md) and [same](./robot.md).\n\n[def]: projects/robot.md \"t\"\n\
               `[code](projects/robot.md)` stays.\n";
    let out = retarget("projects/other.md", doc, "projects/robot.md", "ideas/robot.md").unwrap();
    assert_eq!(
        out,
        "---\nname: x\n---\nSee [robot](ideas/robot.md), [again](/ideas/robot.md#plan), \
         [rel](../ideas/robot.md) and [same](../ideas/robot.md).\n\n[def]: ideas/robot.md \"t\"\n\
         `[code](projects/robot.md)` stays.\n"
    );
}

#[test]
fn same_folder_links_stay_short_and_names_are_encoded() {
    let doc = "[a](../inbox/My%20note.md) [b](<../inbox/My note.md>) [c](My%20note.md)";
    let out = retarget("inbox/x.md", doc, "inbox/My note.md", "inbox/My (new) note.md").unwrap();
    assert_eq!(
        out,
        "[a](../inbox/My%20%28new%29%20note.md) [b](<../inbox/My%20%28new%29%20note.md>) \
         [c](My%20%28new%29%20note.md)"
    );
}

#[test]
fn a_title_holding_link_syntax_is_left_alone() {
    let doc = "[a](projects/robot.md \"x](y\") and [b](robot.md \"see [y](c.md)\")\n";
    let out = retarget("projects/p.md", doc, "projects/robot.md", "ideas/robot.md").unwrap();
    assert_eq!(out, "[a](ideas/robot.md \"x](y\") and [b](../ideas/robot.md \"see [y](c.md)\")\n");
}

#[test]
fn unrelated_documents_are_left_alone() {
    let doc =
        "---\nrelated_projects: [projects/robotics.md]\n---\n[x](projects/robot.mdx) projects/robot.md\n";
    assert_eq!(retarget("people/p.md", doc, "projects/robot.md", "ideas/robot.md"), None);
    assert_eq!(retarget("people/p.md", "---\n: [\n---\n", "projects/robot.md", "ideas/robot.md"), None);
}

#[test]
fn a_moving_entrys_own_folder_links_still_lead_where_they_did() {
    let doc = "---\nname: x\n---\n[b](b.md) [c](./c%20d.md#top) [up](../people/p.md) [root](ideas/i.md)\n";
    let out = rebase_own_links(doc, &path("projects/x.md"), "ideas").unwrap();
    assert_eq!(
        out,
        "---\nname: x\n---\n[b](../projects/b.md) [c](../projects/c%20d.md#top) [up](../people/p.md) [root](ideas/i.md)\n"
    );
    assert_eq!(rebase_own_links(doc, &path("projects/x.md"), "projects"), None);
    assert_eq!(rebase_own_links("[up](../people/p.md)", &path("projects/x.md"), "ideas"), None);
    // Between folders of any depth: each relative link is written anew from the new folder.
    let deep = "[a](a.md) [up](../Work/w.md) [root](ideas/i.md)\n";
    let out = rebase_own_links(deep, &path("Journal/2025/x.md"), "projects").unwrap();
    assert_eq!(out, "[a](../Journal/2025/a.md) [up](../Journal/Work/w.md) [root](ideas/i.md)\n");
    let back = rebase_own_links(&out, &path("projects/x.md"), "Journal/2025").unwrap();
    assert_eq!(back, "[a](a.md) [up](../Work/w.md) [root](ideas/i.md)\n");
}

#[test]
fn links_from_notes_in_any_folder_follow_a_move() {
    let doc = "See [w](../Work/w.md), [same](w2.md) and [root](/Work/w.md).\n";
    assert_eq!(
        retarget("Journal/j.md", doc, "Work/w.md", "projects/w.md").as_deref(),
        Some("See [w](../projects/w.md), [same](w2.md) and [root](/projects/w.md).\n")
    );
    assert_eq!(
        retarget("Journal/j.md", doc, "Journal/w2.md", "Journal/2025/w2.md").as_deref(),
        Some("See [w](../Work/w.md), [same](./2025/w2.md) and [root](/Work/w.md).\n")
    );
}

#[test]
fn referenced_paths_finds_fields_and_links() {
    let text = "---\nrelated_projects: [projects/a.md, not a path]\nnote: people/b.md\n---\n\
                [c](../ideas/c.md) [d](d.md) [web](https://example.com/x.md) [self](people/me.md)\n";
    let entry = Entry::from_document(path("people/me.md"), text).unwrap();
    let mut found: Vec<String> = referenced_paths(&entry).iter().map(ToString::to_string).collect();
    found.sort();
    assert_eq!(found, ["ideas/c.md", "people/b.md", "people/d.md", "projects/a.md"]);
}

const SAME_FOLDER_LINK: &str = "[r](target.md)";

/// A piece of a generated document: prose, or a reference to the moved entry.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z ,.]{0,20}",
        Just("[r](projects/target.md)".to_string()),
        Just("[r](../projects/target.md#h)".to_string()),
        Just(SAME_FOLDER_LINK.to_string()),
        Just("`[c](projects/target.md)`".to_string()),
        Just("\n\n[d]: projects/target.md\n\n".to_string()),
        Just("projects/target.md".to_string()),
        Just("[o](projects/other.md)".to_string()),
    ]
}

/// Frontmatter lines, at most one per key.
fn frontmatter_lines() -> impl Strategy<Value = Vec<String>> {
    let related = prop_oneof![
        Just(None),
        Just(Some("related_projects: [projects/target.md, projects/other.md]")),
        Just(Some("related_projects:\n  - projects/target.md\n  - \"projects/other.md\"")),
    ];
    let context = prop_oneof![Just(None), Just(Some("context: met about projects/target.md"))];
    let link =
        prop_oneof![Just(None), Just(Some("link: 'projects/target.md'")), Just(Some("status: active"))];
    (related, context, link)
        .prop_map(|(a, b, c)| [a, b, c].into_iter().flatten().map(str::to_string).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// After a move nothing refers to the old path and the new one is referred to; moving
    /// back restores the same references, and the same bytes unless a same-folder link had
    /// to become `../…` on the way.
    #[test]
    fn retargeting_moves_every_reference_and_round_trips(
        yaml in frontmatter_lines(),
        pieces in proptest::collection::vec(piece(), 0..12),
    ) {
        let doc = format!("---\n{}\n---\n{}\n", yaml.join("\n"), pieces.concat());
        let referrer = path("projects/me.md");
        let (from, to) = (path("projects/target.md"), path("ideas/target-2.md"));
        let before = Entry::from_document(referrer.clone(), &doc).unwrap();
        let refers = referenced_paths(&before).contains(&from);
        match retarget_references(&referrer, &doc, &from, &to) {
            None => prop_assert!(!refers),
            Some(moved) => {
                let after = Entry::from_document(referrer.clone(), &moved).unwrap();
                let refs = referenced_paths(&after);
                prop_assert!(!refs.contains(&from));
                prop_assert!(refs.contains(&to));
                let back = retarget_references(&referrer, &moved, &to, &from);
                let back = back.unwrap_or_default();
                let restored = Entry::from_document(referrer.clone(), &back).unwrap();
                prop_assert_eq!(referenced_paths(&restored), referenced_paths(&before));
                prop_assert_eq!(&restored.frontmatter, &before.frontmatter);
                if !pieces.iter().any(|p| p == SAME_FOLDER_LINK) {
                    prop_assert_eq!(back, doc);
                }
            }
        }
    }
}

/// `document` of the note at `referrer` once `from` is at `to`, in a vault of `notes`.
fn retarget_in(notes: &[&str], referrer: &str, document: &str, from: &str, to: &str) -> Option<String> {
    let resolver = LinkResolver::new(notes.iter().map(|n| (*n, Vec::new())));
    retarget_references_in(&path(referrer), document, &path(from), &path(to), &resolver)
}

#[test]
fn a_markdown_link_is_rewritten_by_the_rule_that_reads_it() {
    let notes = ["Journal/a.md", "Journal/sub/b.md", "sub/b.md"];
    let doc = "See [b](sub/b.md#top).\n";
    // `sub/b.md` from Journal/ is Journal/sub/b.md: moving the other one changes nothing.
    assert_eq!(retarget_in(&notes, "Journal/a.md", doc, "sub/b.md", "Old/b.md"), None);
    // Moving the one it leads to rewrites it, relative to the note's folder as it was.
    assert_eq!(
        retarget_in(&notes, "Journal/a.md", doc, "Journal/sub/b.md", "Journal/Old/b.md").as_deref(),
        Some("See [b](Old/b.md#top).\n")
    );
    assert_eq!(
        retarget_in(&notes, "Journal/a.md", doc, "Journal/sub/b.md", "Archive/b.md").as_deref(),
        Some("See [b](../Archive/b.md#top).\n")
    );
    // Rooted stays rooted; one from the vault root stays from the root.
    let rooted = "[r](/sub/b.md) [p](sub/b.md)\n";
    assert_eq!(
        retarget_in(&["Home.md", "sub/b.md"], "Home.md", rooted, "sub/b.md", "Old/b.md").as_deref(),
        Some("[r](/Old/b.md) [p](Old/b.md)\n")
    );
    // The moving note reads its own links from its new folder.
    let own = "[b](sub/b.md) [c](../sub/b.md)\n";
    assert_eq!(
        retarget_in(&notes, "Journal/a.md", own, "Journal/a.md", "Work/a.md").as_deref(),
        Some("[b](../Journal/sub/b.md) [c](../sub/b.md)\n")
    );
}
