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

/// The issue a person met: a CRLF frontmatter with a comment and a number written `1.10`,
/// whose path value must become one that needs quotes.
#[test]
fn a_move_changes_only_the_bytes_of_the_value() {
    let doc = "---\r\n# keep\r\nref: N/T.md\r\nversion: 1.10\r\n---\r\nBody\r\n";
    let out = retarget("N/other.md", doc, "N/T.md", "N/Re: T.md").unwrap();
    assert_eq!(out, "---\r\n# keep\r\nref: 'N/Re: T.md'\r\nversion: 1.10\r\n---\r\nBody\r\n");
    let lists = "---\nup: [N/T.md, \"N/T.md\"]  # both\nall:\n  # first\n  - 'N/T.md'\n  - N/T.md # x\n---\n";
    let out = retarget("N/other.md", lists, "N/T.md", "N/it's: new.md").unwrap();
    assert_eq!(
        out,
        "---\nup: ['N/it''s: new.md', \"N/it's: new.md\"]  # both\nall:\n  # first\n  - 'N/it''s: new.md'\n  - 'N/it''s: new.md' # x\n---\n"
    );
}

/// A path written behind an anchor is not changed in place: the frontmatter stays as
/// written rather than being written anew.
#[test]
fn a_value_that_cannot_change_in_place_leaves_the_block_as_written() {
    let doc = "---\nref: &a N/T.md\nagain: *a\n# keep\n---\n[x](N/T.md)\n";
    let out = retarget("N/other.md", doc, "N/T.md", "N/U.md").unwrap();
    assert_eq!(out, "---\nref: &a N/T.md\nagain: *a\n# keep\n---\n[x](N/U.md)\n");
}

/// One value as it may be written in a frontmatter, moved path or not.
fn scalar(in_flow: bool) -> impl Strategy<Value = String> {
    let plain = prop_oneof![
        Just("N/T.md".to_string()),
        Just("1.10".to_string()),
        Just("N/T.mdx".to_string()),
        Just("true".to_string()),
        "[a-z]{1,6}( [a-z]{1,6})?",
    ];
    let quoted = prop_oneof![
        Just("'N/T.md'".to_string()),
        Just("\"N/T.md\"".to_string()),
        Just("\"caf\\u00e9 \\\"q\\\"\"".to_string()),
        Just("'it''s'".to_string()),
        Just("\"N/T.md\\t\"".to_string()),
        Just("' N/T.md '".to_string()),
    ];
    let plain = if in_flow { plain.boxed() } else { prop_oneof![plain, Just("a, b".to_string())].boxed() };
    prop_oneof![plain, quoted]
}

/// One top-level entry (or comment) of a frontmatter, its lines without their ends.
fn entry(n: usize) -> impl Strategy<Value = Vec<String>> {
    let comment = "[ ]{0,2}# [a-z :]{0,10}";
    let trailing = prop_oneof![Just(String::new()), Just("  # c".to_string()), Just(" ".to_string())];
    prop_oneof![
        comment.prop_map(|c| vec![c]),
        (scalar(false), trailing.clone()).prop_map(move |(v, t)| vec![format!("k{n}: {v}{t}")]),
        (proptest::collection::vec(scalar(true), 0..4), trailing.clone())
            .prop_map(move |(items, t)| vec![format!("k{n}: [{}]{t}", items.join(", "))]),
        (proptest::collection::vec((scalar(false), any::<bool>()), 1..4)).prop_map(move |items| {
            let mut lines = vec![format!("k{n}:")];
            for (item, commented) in items {
                if commented {
                    lines.push("  # between".to_string());
                }
                lines.push(format!("  - {item}"));
            }
            lines
        }),
    ]
}

/// The text between the written values of `yaml`, in order.
fn between_values(yaml: &str) -> Vec<String> {
    let mut gaps = Vec::new();
    let mut at = 0;
    for written in written_values(yaml).unwrap() {
        gaps.push(yaml[at..written.range.start].to_string());
        at = written.range.end;
    }
    gaps.push(yaml[at..].to_string());
    gaps
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Whatever the frontmatter holds and however it is written, a move changes the
    /// values that were the moved path to the new path and not one other byte: comments,
    /// other values, quoting of the others and line ends stay.
    #[test]
    fn a_move_keeps_every_byte_outside_the_moved_values(
        entries in proptest::collection::vec(0usize..1, 1..8)
            .prop_flat_map(|slots| slots.into_iter().enumerate().map(|(n, _)| entry(n)).collect::<Vec<_>>()),
        crlf in any::<bool>(),
        to in prop_oneof![
            Just("N/U.md"), Just("N/Re: T.md"), Just("N/it's.md"), Just("N/a \"q\".md"),
            Just("N/#x.md"), Just("M/[x], y.md"), Just("N/- x.md"), Just("N/1.5.md"),
        ],
    ) {
        let end = if crlf { "\r\n" } else { "\n" };
        let lines: Vec<String> = entries.concat();
        let yaml = format!("{}{end}", lines.join(end));
        let doc = format!("---{end}{yaml}---{end}Body{end}");
        let from = path("N/T.md");
        let to = path(to);
        let Ok(original) = parse_frontmatter_yaml(&yaml) else { return Ok(()) };
        let out = retarget_references(&path("N/other.md"), &doc, &from, &to);
        let expected = retargeted(&original, &from, &to);
        let Some(out) = out else {
            prop_assert_eq!(expected, original);
            return Ok(());
        };
        let spans = document_spans(&out).unwrap();
        prop_assert_eq!(&out[..spans.yaml.clone().unwrap().start], &doc[..3 + end.len()]);
        prop_assert_eq!(&out[spans.body.clone()], &format!("Body{end}"));
        let new_yaml = &out[spans.yaml.unwrap()];
        prop_assert_eq!(parse_frontmatter_yaml(new_yaml).unwrap(), expected);
        prop_assert_eq!(between_values(new_yaml), between_values(&yaml));
        let (old_values, new_values) = (written_values(&yaml).unwrap(), written_values(new_yaml).unwrap());
        prop_assert_eq!(old_values.len(), new_values.len());
        for (old, new) in old_values.iter().zip(&new_values) {
            if EntryPath::parse(old.value.trim()).is_ok_and(|p| p == from) {
                prop_assert_eq!(&new.value, to.as_str());
            } else {
                prop_assert_eq!(&yaml[old.range.clone()], &new_yaml[new.range.clone()]);
            }
        }
    }
}
