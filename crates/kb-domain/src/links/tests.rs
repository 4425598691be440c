use proptest::prelude::*;

use super::*;

/// A link as (form, target, heading, alias).
type Written = (LinkForm, String, Option<String>, Option<String>);

/// A note as a graph is made of: its path, its links with their lines, its aliases.
type Note = (String, Vec<(Link, String)>, Vec<String>);

/// The links of `text` as (form, target, heading, alias).
fn parsed(text: &str) -> Vec<Written> {
    parse_links(text).into_iter().map(|l| (l.form, l.target, l.heading, l.alias)).collect()
}

fn wiki(
    target: &str,
    heading: Option<&str>,
    alias: Option<&str>,
) -> (LinkForm, String, Option<String>, Option<String>) {
    (LinkForm::Wiki, target.into(), heading.map(Into::into), alias.map(Into::into))
}

#[test]
fn every_form_obsidian_writes_is_a_link() {
    let text = "See [[Note]], [[Note|the note]], [[Note#Plans|plans]] and ![[Diagram]].\n\
                Also [[Work/Clients/Acme]] and [the list](Reading/to%20read.md#Now) and [x](<My Note.md>).\n";
    assert_eq!(
        parsed(text),
        [
            wiki("Note", None, None),
            wiki("Note", None, Some("the note")),
            wiki("Note", Some("Plans"), Some("plans")),
            (LinkForm::Embed, "Diagram".into(), None, None),
            wiki("Work/Clients/Acme", None, None),
            (LinkForm::Markdown, "Reading/to read.md".into(), Some("Now".into()), Some("the list".into())),
            (LinkForm::Markdown, "My Note.md".into(), None, Some("x".into())),
        ]
    );
    let links = parse_links(text);
    assert_eq!(links.iter().map(|l| l.line).collect::<Vec<_>>(), [1, 1, 1, 1, 2, 2, 2]);
    for link in &links {
        let written = &text[link.target_span.clone()];
        assert!(
            written == link.target || written.replace("%20", " ") == link.target,
            "{written:?} is not where {link:?} is written"
        );
    }
}

#[test]
fn code_frontmatter_and_web_addresses_hold_no_links() {
    let text = "---\nrelated: \"[[In Frontmatter]]\"\n---\n\
                `[[inline]]` and ``a `[[double]]` b`` but [[Real]]\n\
                ```md\n[[fenced]]\n```\n\
                ~~~~\n[[tilde]]\n~~~\n[[still fenced]]\n~~~~\n\
                [site](https://example.com/page.md) [anchor](#top) [mail](mailto:a@b.c) \\[[escaped]]\n\
                [[After]]\n";
    assert_eq!(parsed(text), [wiki("Real", None, None), wiki("After", None, None)]);
}

#[test]
fn an_unclosed_fence_or_frontmatter_hides_nothing_before_it() {
    assert_eq!(parsed("---\n[[A]]\n"), [wiki("A", None, None)]);
    assert_eq!(parsed("[[A]]\n```\n[[B]]\n"), [wiki("A", None, None)]);
    assert_eq!(parsed("[[A]] `unclosed [[B]]"), [wiki("A", None, None), wiki("B", None, None)]);
    assert!(parsed("[[]] [[ ]] [[#Only a heading]] [[a[b]]").is_empty());
}

fn resolver() -> LinkResolver {
    LinkResolver::new([
        ("Home.md", vec![]),
        ("Journal/2025/June.md", vec![]),
        ("Work/Clients/Acme.md", vec!["Acme Corp".to_string()]),
        ("Work/Notes.md", vec![]),
        ("Reading/Notes.md", vec![]),
        ("Notes.md", vec![]),
        ("people/priya-raman.md", vec![]),
        ("Work/Plan.md", vec![]),
        ("Reading/Plan.md", vec![]),
    ])
}

fn resolve<'a>(resolver: &'a LinkResolver, from: &str, text: &str) -> Option<&'a str> {
    let link = parse_links(text).into_iter().next()?;
    resolver.resolve(from, &link)
}

#[test]
fn links_resolve_as_obsidian_resolves_them() {
    let r = resolver();
    // By file name anywhere, case aside.
    assert_eq!(resolve(&r, "Home.md", "[[june]]"), Some("Journal/2025/June.md"));
    assert_eq!(resolve(&r, "Home.md", "[[Acme.md|them]]"), Some("Work/Clients/Acme.md"));
    // Several share the name: the one at the root (that is its path), else the one in the
    // linking note's folder, else the nearest.
    assert_eq!(resolve(&r, "Work/Clients/Acme.md", "[[Notes]]"), Some("Notes.md"));
    assert_eq!(resolve(&r, "Reading/Book.md", "[[Plan]]"), Some("Reading/Plan.md"));
    assert_eq!(resolve(&r, "Work/Clients/Acme.md", "[[plan]]"), Some("Work/Plan.md"));
    assert_eq!(resolve(&r, "Home.md", "[[Plan]]"), Some("Reading/Plan.md"), "the first by path");
    // A path, from the root or as the end of a path.
    assert_eq!(resolve(&r, "Home.md", "[[Work/Notes]]"), Some("Work/Notes.md"));
    assert_eq!(resolve(&r, "Home.md", "[[Clients/Acme]]"), Some("Work/Clients/Acme.md"));
    // Markdown links from the note's own folder, or from the root.
    assert_eq!(resolve(&r, "Work/Clients/Acme.md", "[n](../Notes.md)"), Some("Work/Notes.md"));
    assert_eq!(resolve(&r, "Work/Notes.md", "[n](Notes.md)"), Some("Work/Notes.md"));
    assert_eq!(resolve(&r, "Home.md", "[n](Journal/2025/June.md)"), Some("Journal/2025/June.md"));
    // Aliases, after file names; kb's names are not targets; nothing is a guess.
    assert_eq!(resolve(&r, "Home.md", "[[acme corp]]"), Some("Work/Clients/Acme.md"));
    assert_eq!(resolve(&r, "Home.md", "[[Priya Raman]]"), None);
    assert_eq!(resolve(&r, "Home.md", "[[Nowhere]]"), None);
    assert_eq!(resolve(&r, "Home.md", "[n](../../outside.md)"), None);
}

/// A piece of a generated note.
#[derive(Debug, Clone)]
enum Piece {
    Words(String),
    /// A link to note `to`, written by path (else by name), with a heading and an alias.
    Link {
        form: LinkForm,
        to: usize,
        by_path: bool,
        heading: bool,
        alias: bool,
    },
    /// A link inside inline code or a fenced block: no link.
    InCode {
        fenced: bool,
        to: usize,
    },
}

const FOLDERS: [&str; 5] = ["", "Journal", "Journal/2025", "Work/Clients", "Reading"];
const NAMES: [&str; 6] = ["Acme", "Notes", "June plan", "Priya", "Todo", "Café ideas"];

fn piece(notes: usize) -> impl Strategy<Value = Piece> {
    let form = prop_oneof![Just(LinkForm::Wiki), Just(LinkForm::Embed), Just(LinkForm::Markdown)];
    prop_oneof![
        "[a-z]{1,4}( [a-z]{1,4}){0,2} ?".prop_map(Piece::Words),
        (form, 0..notes, any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
            |(form, to, by_path, heading, alias)| Piece::Link { form, to, by_path, heading, alias }
        ),
        (any::<bool>(), 0..notes).prop_map(|(fenced, to)| Piece::InCode { fenced, to }),
    ]
}

/// Notes as (path, pieces): distinct paths in a few folders, names that repeat across them.
fn vault() -> impl Strategy<Value = Vec<(String, Vec<Piece>)>> {
    prop::collection::btree_set((0..FOLDERS.len(), 0..NAMES.len()), 2..12).prop_flat_map(|places| {
        let paths: Vec<String> = places
            .into_iter()
            .map(|(f, n)| {
                let folder = FOLDERS[f];
                if folder.is_empty() {
                    format!("{}.md", NAMES[n])
                } else {
                    format!("{folder}/{}.md", NAMES[n])
                }
            })
            .collect();
        let count = paths.len();
        prop::collection::vec(prop::collection::vec(piece(count), 0..10), count)
            .prop_map(move |bodies| paths.iter().cloned().zip(bodies).collect())
    })
}

/// The text of a piece, with the link it makes (form, target, heading, alias) if any.
fn render(piece: &Piece, paths: &[String]) -> (String, Option<Written>) {
    match piece {
        Piece::Words(words) => (words.replace(['[', ']', '`'], ""), None),
        Piece::Link { form, to, by_path, heading, alias } => {
            let path = &paths[*to];
            let stem = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md");
            let heading = heading.then(|| "Next steps".to_string());
            match form {
                LinkForm::Markdown => {
                    // A Markdown link is read from its note's folder: one from the root says so.
                    let target = if *by_path { format!("/{path}") } else { format!("{stem}.md") };
                    let hash =
                        heading.as_ref().map(|h| format!("#{}", h.replace(' ', "%20"))).unwrap_or_default();
                    let text = format!("[see]({}{hash})", target.replace(' ', "%20"));
                    (text, Some((LinkForm::Markdown, target, heading, Some("see".into()))))
                }
                _ => {
                    let target =
                        if *by_path { path.trim_end_matches(".md").to_string() } else { stem.to_string() };
                    let alias = alias.then(|| "that one".to_string());
                    let text = format!(
                        "{}[[{target}{}{}]]",
                        if *form == LinkForm::Embed { "!" } else { "" },
                        heading.as_ref().map(|h| format!("#{h}")).unwrap_or_default(),
                        alias.as_ref().map(|a| format!("|{a}")).unwrap_or_default()
                    );
                    (text, Some((*form, target, heading, alias)))
                }
            }
        }
        Piece::InCode { fenced, to } => {
            let stem = paths[*to].trim_end_matches(".md");
            if *fenced {
                (format!("\n```\n[[{stem}]]\n```\n"), None)
            } else {
                (format!("`[[{stem}]]`"), None)
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every link written outside code is found, as written, in order, and nothing else; and
    /// each leads to the note it was written for whenever that is unambiguous.
    #[test]
    fn links_found_and_resolved_equal_the_links_written(notes in vault()) {
        let paths: Vec<String> = notes.iter().map(|(path, _)| path.clone()).collect();
        let resolver = LinkResolver::new(paths.iter().map(|p| (p.as_str(), Vec::new())));
        for (from, pieces) in &notes {
            let mut text = String::from("---\nname: x\n---\n");
            let mut written = Vec::new();
            let mut meant = Vec::new();
            for piece in pieces {
                let (piece_text, link) = render(piece, &paths);
                text.push_str(&piece_text);
                text.push(' ');
                if let (Some(link), Piece::Link { to, by_path, .. }) = (link, piece) {
                    written.push(link);
                    meant.push((*to, *by_path));
                }
            }
            prop_assert_eq!(parsed(&text), written.clone(), "{}", text);
            for (link, (to, by_path)) in parse_links(&text).iter().zip(meant) {
                let stem = |p: &str| p.rsplit('/').next().unwrap_or(p).to_lowercase();
                let namesakes: Vec<&String> = paths.iter().filter(|p| stem(p) == stem(&paths[to])).collect();
                let same_folder = |p: &str| p.rsplit_once('/').map(|(f, _)| f) == from.rsplit_once('/').map(|(f, _)| f);
                let found = resolver.resolve(from, link);
                if by_path || namesakes.len() == 1 {
                    prop_assert_eq!(found, Some(paths[to].as_str()), "{:?} from {}", link, from);
                } else {
                    let found = found.unwrap_or_default();
                    prop_assert!(namesakes.iter().any(|p| p.as_str() == found), "{:?} led to {}", link, found);
                    let relative = link.form == LinkForm::Markdown;
                    if relative && let Some(here) = namesakes.iter().find(|p| same_folder(p)) {
                        // A Markdown link's bare file name is first read from its own folder.
                        prop_assert_eq!(found, here.as_str(), "{:?} from {}", link, from);
                    } else if let Some(root) = namesakes.iter().find(|p| !p.contains('/')) {
                        prop_assert_eq!(found, root.as_str(), "{:?} from {}", link, from);
                    } else if namesakes.iter().any(|p| same_folder(p)) {
                        prop_assert!(same_folder(found), "{:?} from {} led to {}", link, from, found);
                    }
                }
            }
        }
    }
}

/// A change to a vault: a note written (its path, links to other paths by name or path, and
/// aliases), or removed.
#[derive(Debug, Clone)]
enum Change {
    Write { at: usize, links: Vec<(usize, u8)>, aliases: Vec<usize> },
    Remove { at: usize },
}

const ALIASES: [&str; 3] = ["Acme Corp", "the boss", "Notes"];

fn place(index: usize) -> String {
    let (folder, name) = (FOLDERS[index % FOLDERS.len()], NAMES[index / FOLDERS.len() % NAMES.len()]);
    if folder.is_empty() { format!("{name}.md") } else { format!("{folder}/{name}.md") }
}

fn change() -> impl Strategy<Value = Change> {
    let places = FOLDERS.len() * NAMES.len();
    prop_oneof![
        3 => (
            0..places,
            prop::collection::vec((0..places + ALIASES.len(), 0u8..4), 0..5),
            prop::collection::vec(0..ALIASES.len(), 0..2),
        )
            .prop_map(|(at, links, aliases)| Change::Write { at, links, aliases }),
        1 => (0..places).prop_map(|at| Change::Remove { at }),
    ]
}

/// A note's text linking to each of `links`: a place (written by name, by path, as a
/// Markdown link from the root, or inside code) or an alias.
fn note_text(links: &[(usize, u8)]) -> String {
    let places = FOLDERS.len() * NAMES.len();
    let mut text = String::from("# Note\n---\n");
    for (to, how) in links {
        if *to >= places {
            text.push_str(&format!("about [[{}]]\n", ALIASES[to - places]));
            continue;
        }
        let path = place(*to);
        let stem = path.rsplit('/').next().unwrap_or(&path).trim_end_matches(".md").to_string();
        text.push_str(&match how {
            0 => format!("see [[{stem}]] today\n"),
            1 => format!("see [[{}|it]]\n", path.trim_end_matches(".md")),
            2 => format!("see [it](/{})\n", path.replace(' ', "%20")),
            _ => format!("not `[[{stem}]]`\n"),
        });
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// After any sequence of notes written and removed, the graph's links and backlinks are
    /// those of the whole vault parsed and resolved from scratch.
    #[test]
    fn the_graph_equals_a_vault_parsed_from_scratch(changes in prop::collection::vec(change(), 1..25)) {
        let mut graph = LinkGraph::default();
        let mut vault: std::collections::BTreeMap<String, (String, Vec<String>)> = Default::default();
        for change in changes {
            match change {
                Change::Write { at, links, aliases } => {
                    let text = note_text(&links);
                    let aliases: Vec<String> = aliases.into_iter().map(|a| ALIASES[a].to_string()).collect();
                    graph.upsert(&place(at), &text, &aliases);
                    vault.insert(place(at), (text, aliases));
                }
                Change::Remove { at } => {
                    graph.remove(&place(at));
                    vault.remove(&place(at));
                }
            }
            let resolver = LinkResolver::new(vault.iter().map(|(p, (_, a))| (p.as_str(), a.clone())));
            let mut backlinks: std::collections::BTreeMap<String, Vec<(String, usize)>> = Default::default();
            for (path, (text, _)) in &vault {
                let expected: Vec<(Link, Option<&str>)> =
                    parse_body_links(text).into_iter().map(|l| { let to = resolver.resolve(path, &l); (l, to) }).collect();
                let got: Vec<(Link, Option<&str>)> =
                    graph.links_of(path).iter().map(|o| (o.link.clone(), o.to.as_deref())).collect();
                prop_assert_eq!(&got, &expected, "links of {}", path);
                for (link, to) in expected {
                    if let Some(to) = to {
                        backlinks.entry(to.to_string()).or_default().push((path.clone(), link.line));
                    }
                }
            }
            // The graph of the whole vault made at once (as a start from the saved
            // catalogue makes it) is the same graph.
            let at_once = LinkGraph::of_notes(
                vault.iter().map(|(p, (text, aliases))| (p.clone(), links_in(text), aliases.clone())),
            );
            for path in vault.keys() {
                let got: Vec<(String, usize)> =
                    graph.backlinks_of(path).into_iter().map(|b| (b.from, b.link.line)).collect();
                let expected = backlinks.get(path).cloned().unwrap_or_default();
                prop_assert_eq!(&got, &expected, "backlinks of {}", path);
                prop_assert_eq!(at_once.links_of(path), graph.links_of(path), "links of {} at once", path);
                prop_assert_eq!(at_once.backlinks_of(path), graph.backlinks_of(path), "backlinks of {} at once", path);
                // The graph of only the notes around one note answers for it the same.
                let written: Vec<Note> =
                    vault.iter().map(|(p, (text, aliases))| (p.clone(), links_in(text), aliases.clone())).collect();
                let around = LinkGraph::around(
                    written.iter().map(|(p, links, aliases)| (p.as_str(), links.as_slice(), aliases.as_slice())),
                    path,
                );
                prop_assert_eq!(around.links_of(path), at_once.links_of(path), "links of {} around it", path);
                prop_assert_eq!(around.backlinks_of(path), at_once.backlinks_of(path), "backlinks of {} around it", path);
            }
        }
    }
}

#[test]
fn a_backlink_carries_the_line_that_links() {
    let mut graph = LinkGraph::default();
    graph.upsert("Home.md", "# Home\n\n  Call [[Priya]] about the kiln.  \n", &[]);
    assert_eq!(graph.links_of("Home.md")[0].to, None, "no Priya yet: unresolved");
    graph.upsert("people/Priya.md", "Met at the meetup.\n", &[]);
    let backlinks = graph.backlinks_of("people/Priya.md");
    assert_eq!(backlinks.len(), 1);
    assert_eq!(
        (backlinks[0].from.as_str(), backlinks[0].line_text.as_str()),
        ("Home.md", "Call [[Priya]] about the kiln.")
    );
    graph.remove("people/Priya.md");
    assert_eq!(graph.links_of("Home.md")[0].to, None);
    assert!(graph.backlinks_of("people/Priya.md").is_empty());
}

#[test]
fn a_long_line_is_kept_around_its_link() {
    let long = format!("{} see [[Priya]] about {}", "word ".repeat(100), "more ".repeat(100));
    let mut graph = LinkGraph::default();
    graph.upsert("a.md", &format!("intro\n{long}\nlast\n"), &[]);
    let line = &graph.links_of("a.md")[0].line_text;
    assert!(line.starts_with('…') && line.ends_with('…'), "{line}");
    assert!(line.contains("see [[Priya]] about"), "{line}");
    assert!(line.chars().count() <= LINE_CHARS + 2, "{line}");
    graph.upsert("b.md", "  short [[Priya]] line  \n", &[]);
    assert_eq!(graph.links_of("b.md")[0].line_text, "short [[Priya]] line");
}

#[test]
fn links_in_code_inside_quotes_callouts_and_indented_lines_are_text() {
    let text = concat!(
        "> [!note]\n> ```\n> [[In callout code]]\n> ```\n\n",
        ">     [[Indented in a quote]]\n\n",
        "    [[Indented code]] [x](Indented.md)\n\n",
        "- item\n\n      [[Indented under a list item]]\n\n",
        "> [[Quoted]] and `[[inline]]`\n",
    );
    assert_eq!(parsed(text), [wiki("Quoted", None, None)]);
}

#[test]
fn a_table_writes_the_alias_pipe_escaped() {
    let text = "| Link | Note |\n|---|---|\n| [[Note\\|the alias]] | [[Folder/Other#Part\\|x]] |\n";
    assert_eq!(
        parsed(text),
        [wiki("Note", None, Some("the alias")), wiki("Folder/Other", Some("Part"), Some("x"))]
    );
    let links = parse_links(text);
    assert_eq!(&text[links[0].target_span.clone()], "Note");
    let resolver = LinkResolver::new([("Note.md", vec![])]);
    assert_eq!(resolver.resolve("Home.md", &links[0]), Some("Note.md"));
}

#[test]
fn relative_wikilinks_are_read_from_the_note_folder_only() {
    let resolver = LinkResolver::new([
        ("A/Here.md", vec![]),
        ("A/Sib.md", vec![]),
        ("B/Note.md", vec![]),
        ("Note.md", vec![]),
        ("C/Sib.md", vec![]),
    ]);
    let first = |text: &str| parse_links(text).remove(0);
    assert_eq!(resolver.resolve("A/Here.md", &first("[[../B/Note]]")), Some("B/Note.md"));
    assert_eq!(resolver.resolve("A/Here.md", &first("[[./Sib|s]]")), Some("A/Sib.md"));
    assert_eq!(resolver.resolve("C/x.md", &first("[[./Sib]]")), Some("C/Sib.md"));
    // No fallback to a note of that name elsewhere.
    assert_eq!(resolver.resolve("B/Note.md", &first("[[./Sib]]")), None);
    assert_eq!(resolver.resolve("Note.md", &first("[[../Note]]")), None);
}

/// One piece of a note for the span property: prose, code, or a link of some form.
fn span_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,5}( [a-z]{1,4}){0,2} ".prop_map(|s| s),
        Just("[[Old]] ".to_string()),
        Just("![[Old#Part|cap]] ".to_string()),
        Just("[[ Old | spaced ]] ".to_string()),
        Just("[t](Old.md#h) ".to_string()),
        Just("[t](<Old.md> \"title [x](y.md)\") ".to_string()),
        Just("\n\n[def]: Old.md\n\n".to_string()),
        Just("\n\n| a | b |\n|---|---|\n| [[Old\\|x]] | `[[Old]]` |\n\n".to_string()),
        Just("\n\n> ```\n> [[Old]]\n> ```\n\n".to_string()),
        Just("\n\n    [[Old]] [t](Old.md)\n\n".to_string()),
        Just("`[[Old]]` ".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A target's span is exact: writing another target there and parsing again finds the
    /// same links, the new target at the same place, and every other byte as it was.
    #[test]
    fn a_target_rewritten_in_its_span_reads_back_in_place(
        pieces in prop::collection::vec(span_piece(), 0..12),
        pick in any::<prop::sample::Index>(),
    ) {
        let text = format!("---\nname: x\n---\n{}", pieces.concat());
        let links = parse_links(&text);
        prop_assume!(!links.is_empty());
        let chosen = pick.index(links.len());
        let link = &links[chosen];
        let new = if link.form == LinkForm::Markdown { "New/Place.md" } else { "New/Place" };
        let edited = format!("{}{new}{}", &text[..link.target_span.start], &text[link.target_span.end..]);
        let again = parse_links(&edited);
        prop_assert_eq!(again.len(), links.len(), "{}", edited);
        let shift = new.len() as isize - link.target_span.len() as isize;
        for (n, (before, after)) in links.iter().zip(&again).enumerate() {
            prop_assert_eq!((before.form, &before.heading, &before.alias, before.line), (after.form, &after.heading, &after.alias, after.line));
            if n == chosen {
                prop_assert_eq!(&after.target, new);
                prop_assert_eq!(after.target_span.start, before.target_span.start);
            } else {
                prop_assert_eq!(&after.target, &before.target);
                let moved = if n > chosen { shift } else { 0 };
                prop_assert_eq!(after.target_span.start as isize, before.target_span.start as isize + moved);
            }
        }
        prop_assert_eq!(&edited[..link.target_span.start], &text[..link.target_span.start]);
        prop_assert_eq!(&edited[link.target_span.start + new.len()..], &text[link.target_span.end..]);
    }
}

#[test]
fn markdown_links_to_files_that_are_not_notes_are_links() {
    let text =
        "[pic](image.png) [doc](../docs/Some%20file.pdf#page=2) [dir](folder) [web](https://x.org/a.pdf)\n";
    let found: Vec<(LinkForm, String)> = parse_links(text).into_iter().map(|l| (l.form, l.target)).collect();
    assert_eq!(
        found,
        [
            (LinkForm::Markdown, "image.png".to_string()),
            (LinkForm::Markdown, "../docs/Some file.pdf".to_string())
        ]
    );
}
