//! Tests of links in properties: read as links, counted as backlinks, rewritten in place.

use super::super::{LinkGraph, retarget_wikilinks};
use super::*;

fn frontmatter(yaml: &str) -> Frontmatter {
    parse_frontmatter_yaml(yaml).unwrap()
}

/// A small vault: two notes named `Plan`, a note in a folder, a target to move.
fn vault() -> LinkResolver {
    LinkResolver::new([
        ("Home.md", vec![]),
        ("Target.md", vec![]),
        ("Work/Plan.md", vec![]),
        ("Reading/Plan.md", vec![]),
        ("Reading/Book.md", vec![]),
    ])
}

#[test]
fn wikilinks_in_text_values_and_lists_are_links() {
    let fm = frontmatter(
        "up: \"[[Target]]\"\nrelated: [\"[[Reading/Book#Ch 2|the book]]\", '![[Home]]', plain]\n\
         note: see [x](Target.md) and [[ ]]\nn: 3\n",
    );
    type Found = (LinkForm, String, Option<String>, Option<String>, String);
    let found: Vec<Found> = property_links(&fm)
        .into_iter()
        .map(|(l, line)| (l.form, l.target, l.heading, l.alias, line))
        .collect();
    assert_eq!(
        found,
        [
            (LinkForm::Wiki, "Target".into(), None, None, "up: [[Target]]".into()),
            (
                LinkForm::Wiki,
                "Reading/Book".into(),
                Some("Ch 2".into()),
                Some("the book".into()),
                "related: [[Reading/Book#Ch 2|the book]]".into()
            ),
            (LinkForm::Embed, "Home".into(), None, None, "related: ![[Home]]".into()),
        ]
    );
}

#[test]
fn property_links_are_backlinks() {
    let home = frontmatter("up: \"[[Target]]\"\nrelated: [\"[[Reading/Book]]\"]\n");
    let graph = LinkGraph::of_notes([
        ("Home.md".to_string(), note_links(&home, "Body [[Work/Plan]]\n"), vec![]),
        ("Target.md".to_string(), Vec::new(), vec![]),
        ("Reading/Book.md".to_string(), Vec::new(), vec![]),
        ("Work/Plan.md".to_string(), Vec::new(), vec![]),
    ]);
    let back: Vec<(String, String)> =
        graph.backlinks_of("Target.md").into_iter().map(|b| (b.from, b.line_text)).collect();
    assert_eq!(back, [("Home.md".to_string(), "up: [[Target]]".to_string())]);
    let targets: Vec<&str> = graph.targets_of("Home.md").into_iter().collect();
    assert_eq!(targets, ["Reading/Book.md", "Target.md", "Work/Plan.md"]);
}

#[test]
fn a_move_rewrites_only_the_target_bytes_in_the_value() {
    let text = "---\r\n# mine\r\nup: \"[[Target]]\"   # c\r\nrelated: ['[[Target|it''s]]', \"[[Home]]\"]\r\n\
                list:\r\n  - \"[[Target#H]]\"\r\nversion: 1.10\r\n---\r\nBody [[Target]]\r\n";
    let out = retarget_wikilinks("Home.md", text, "Target.md", "N/Re: it's \"new\".md", &vault()).unwrap();
    assert_eq!(
        out,
        "---\r\n# mine\r\nup: \"[[Re: it's \\\"new\\\"]]\"   # c\r\nrelated: ['[[Re: it''s \"new\"|it''s]]', \"[[Home]]\"]\r\n\
         list:\r\n  - \"[[Re: it's \\\"new\\\"#H]]\"\r\nversion: 1.10\r\n---\r\nBody [[Re: it's \"new\"]]\r\n"
    );
    // Written as a path, a property link keeps its form, like a body link.
    let text = "---\nup: '[[Reading/Book]]'\n---\n";
    assert_eq!(
        retarget_wikilinks("Home.md", text, "Reading/Book.md", "Archive/Book.md", &vault()).as_deref(),
        Some("---\nup: '[[Archive/Book]]'\n---\n")
    );
    // A plain value that would no longer read as text is quoted; nothing else changes.
    let text = "---\nsee: go to [[Target]] now\n---\n";
    assert_eq!(
        retarget_property_links("Home.md", text, "Target.md", "N/Re: T.md", &vault()).as_deref(),
        Some("---\nsee: 'go to [[Re: T]] now'\n---\n")
    );
    // Links that lead elsewhere, and a frontmatter with none, are left alone.
    assert_eq!(
        retarget_property_links("Home.md", "---\nup: \"[[Home]]\"\n---\n", "Target.md", "X.md", &vault()),
        None
    );
    assert_eq!(
        retarget_property_links("Home.md", "no frontmatter [[Target]]", "Target.md", "X.md", &vault()),
        None
    );
}
