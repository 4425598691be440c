//! Tests of [`retarget_wikilinks`]: examples of each rule, and a property test moving a
//! note of a random vault and reading every link of the moved vault from scratch.

use proptest::prelude::*;

use super::super::{LinkGraph, LinkResolver, frontmatter_end, parse_links};
use super::*;

/// A small vault: a note in a deep folder, two notes named alike, an alias.
fn vault() -> LinkResolver {
    LinkResolver::new([
        ("Home.md", vec![]),
        ("Notes.md", vec![]),
        ("Journal/2025/Day one.md", vec![]),
        ("Work/Clients/Acme.md", vec!["Acme Corp".to_string()]),
        ("Work/Plan.md", vec![]),
        ("Reading/Plan.md", vec![]),
        ("Reading/Book.md", vec![]),
    ])
}

/// `text`, in the note at `source`, once `from` has moved to `to` in [`vault`] (`None`:
/// unchanged).
fn moved(source: &str, text: &str, from: &str, to: &str) -> Option<String> {
    retarget_wikilinks(source, text, from, to, &vault())
}

const DAY_ONE: &str = "Journal/2025/Day one.md";

#[test]
fn a_renamed_note_is_linked_by_its_new_name() {
    let text = "See [[Day one]] today.\n";
    assert_eq!(
        moved("Home.md", text, DAY_ONE, "Journal/2025/First day.md").as_deref(),
        Some("See [[First day]] today.\n")
    );
    // Moved to another folder under the same name: the link still finds it.
    assert_eq!(moved("Home.md", text, DAY_ONE, "Archive/Day one.md"), None);
    // The link's case was its own; the new name is written as the file is named.
    assert_eq!(
        moved("Home.md", "[[day ONE]]", DAY_ONE, "Archive/First day.md").as_deref(),
        Some("[[First day]]")
    );
}

#[test]
fn heading_alias_embed_and_spaces_stay_as_written() {
    let to = "Journal/2025/First day.md";
    assert_eq!(
        moved("Home.md", "[[Day one#Morning|the start]]", DAY_ONE, to).as_deref(),
        Some("[[First day#Morning|the start]]")
    );
    assert_eq!(
        moved("Home.md", "x [[ Day one # Morning | the start ]] y", DAY_ONE, to).as_deref(),
        Some("x [[ First day # Morning | the start ]] y")
    );
    assert_eq!(moved("Home.md", "![[Day one]]\n", DAY_ONE, to).as_deref(), Some("![[First day]]\n"));
    assert_eq!(
        moved("Home.md", "![[Day one#^block|caption]]", DAY_ONE, to).as_deref(),
        Some("![[First day#^block|caption]]")
    );
}

#[test]
fn a_link_by_path_gets_the_whole_new_path() {
    let to = "Archive/Day one.md";
    assert_eq!(
        moved("Home.md", "[[Journal/2025/Day one]]", DAY_ONE, to).as_deref(),
        Some("[[Archive/Day one]]")
    );
    assert_eq!(moved("Home.md", "[[2025/Day one|d]]", DAY_ONE, to).as_deref(), Some("[[Archive/Day one|d]]"));
    assert_eq!(
        moved("Home.md", "[[/Journal/2025/Day one]]", DAY_ONE, to).as_deref(),
        Some("[[/Archive/Day one]]"),
        "from the vault root, as it was"
    );
    // A bare name that still finds the note stays bare.
    assert_eq!(moved("Home.md", "[[Day one]]", DAY_ONE, to), None);
}

#[test]
fn a_written_md_suffix_is_kept() {
    let to = "Archive/First day.md";
    assert_eq!(moved("Home.md", "[[Day one.md]]", DAY_ONE, to).as_deref(), Some("[[First day.md]]"));
    assert_eq!(
        moved("Home.md", "[[Journal/2025/Day one.MD|x]]", DAY_ONE, to).as_deref(),
        Some("[[Archive/First day.MD|x]]")
    );
}

#[test]
fn a_namesake_nearer_the_linking_note_makes_the_link_longer() {
    let resolver = LinkResolver::new([
        ("Home.md", vec![]),
        ("Journal/2025/Day one.md", vec![]),
        ("Notes/First day.md", vec![]),
        ("First.md", vec![]),
    ]);
    // `[[First day]]` from the root would find Notes/First day.md, less deep.
    let to = "Journal/2025/First day.md";
    assert_eq!(
        retarget_wikilinks("Home.md", "[[Day one|d]]", DAY_ONE, to, &resolver).as_deref(),
        Some("[[2025/First day|d]]")
    );
    // A namesake at the vault root is found by the bare name from everywhere.
    assert_eq!(
        retarget_wikilinks("Notes/x.md", "[[Day one]]", DAY_ONE, "Archive/First.md", &resolver).as_deref(),
        Some("[[Archive/First]]")
    );
}

#[test]
fn a_link_to_another_note_of_the_same_name_is_left_alone() {
    let to = "Work/Plan 2025.md";
    // From Reading/, `[[Plan]]` leads to Reading/Plan.md: not the note that moves.
    assert_eq!(moved("Reading/Book.md", "[[Plan]]", "Work/Plan.md", to), None);
    assert_eq!(
        moved("Work/Clients/Acme.md", "[[Plan]] and [[Reading/Plan]]", "Work/Plan.md", to).as_deref(),
        Some("[[Plan 2025]] and [[Reading/Plan]]")
    );
}

#[test]
fn links_in_code_and_markdown_links_are_not_touched_but_links_in_properties_are() {
    let text = "---\nrelated: \"[[Day one]]\"\n---\n`[[Day one]]` and\n```\n[[Day one]]\n```\n\
                [day](Journal/2025/Day%20one.md) [[Day one]]\n";
    let expected = "---\nrelated: \"[[First day]]\"\n---\n`[[Day one]]` and\n```\n[[Day one]]\n```\n\
                    [day](Journal/2025/Day%20one.md) [[First day]]\n";
    assert_eq!(moved("Home.md", text, DAY_ONE, "Archive/First day.md").as_deref(), Some(expected));
    assert_eq!(moved("Home.md", "[day](Journal/2025/Day%20one.md)", DAY_ONE, "Archive/First day.md"), None);
}

#[test]
fn a_merge_leads_the_links_to_the_note_merged_into() {
    // Notes.md is a note already: Day one disappears into it.
    assert_eq!(moved("Home.md", "[[Day one|x]]", DAY_ONE, "Notes.md").as_deref(), Some("[[Notes|x]]"));
    // The merged note's aliases go with it: a link by one is written with a name that
    // leads to the note merged into (from the root, `[[Plan]]` finds Reading/Plan.md).
    assert_eq!(
        moved("Home.md", "[[Acme Corp|them]]", "Work/Clients/Acme.md", "Work/Plan.md").as_deref(),
        Some("[[Work/Plan|them]]")
    );
    // The note merged into may link to the merged one: it then links to itself.
    assert_eq!(
        moved("Notes.md", "[[Day one]] [[Notes]]", DAY_ONE, "Notes.md").as_deref(),
        Some("[[Notes]] [[Notes]]")
    );
}

#[test]
fn crlf_line_ends_stay() {
    let text = "a\r\n[[Day one|x]]\r\n\r\n![[Day one]]\r\nb";
    assert_eq!(
        moved("Home.md", text, DAY_ONE, "Archive/First day.md").as_deref(),
        Some("a\r\n[[First day|x]]\r\n\r\n![[First day]]\r\nb")
    );
}

#[test]
fn aliases_go_with_the_moved_note() {
    assert_eq!(moved("Home.md", "[[Acme Corp]]", "Work/Clients/Acme.md", "Archive/Acme Inc.md"), None);
    assert_eq!(
        moved("Home.md", "[[Acme]] [[acme corp]]", "Work/Clients/Acme.md", "Archive/Acme Inc.md").as_deref(),
        Some("[[Acme Inc]] [[acme corp]]")
    );
}

#[test]
fn a_link_the_moved_note_would_take_away_keeps_its_note() {
    // From the root, `[[Plan]]` leads to Reading/Plan.md (first by path); a note moving to
    // Plan.md at the root would take it: it is written as the path of the note it led to.
    assert_eq!(
        moved("Home.md", "[[Plan|p]] [[Notes]]", "Notes.md", "Plan.md").as_deref(),
        Some("[[Reading/Plan|p]] [[Plan]]")
    );
    // The moved note reads its own links from its new folder.
    let text = "[[Acme]] [[Plan]]";
    assert_eq!(
        moved("Work/Clients/Acme.md", text, "Work/Clients/Acme.md", "Reading/Acme.md").as_deref(),
        Some("[[Acme]] [[Work/Plan]]")
    );
}

#[test]
fn a_name_that_cannot_be_written_leaves_the_link_as_it_was() {
    for to in ["Journal/2025/Day #1.md", "Day [1].md", "Day|one.md", "Day `one`.md", "Day one .md"] {
        assert_eq!(moved("Home.md", "[[Day one]]", DAY_ONE, to), None, "{to}");
    }
    // The file name can be written though its folder cannot: the name is enough.
    assert_eq!(moved("Home.md", "[[Day one]]", DAY_ONE, "C#/First day.md").as_deref(), Some("[[First day]]"));
    // A link by path needs the folder.
    assert_eq!(moved("Home.md", "[[2025/Day one]]", DAY_ONE, "C#/First day.md"), None);
}

#[test]
fn a_link_to_no_note_is_left_as_it_was() {
    // `[[First day]]` led nowhere; the move makes it find the note, as it would in Obsidian.
    assert_eq!(moved("Home.md", "[[First day]]", DAY_ONE, "Archive/First day.md"), None);
    assert_eq!(moved("Home.md", "no links", DAY_ONE, "Archive/First day.md"), None);
    assert_eq!(moved("Home.md", "[[Day one]]", DAY_ONE, DAY_ONE), None);
}

#[test]
fn resolve_moved_reads_the_vault_as_after_the_move() {
    let r = vault();
    let link = |text: &str| parse_links(text).remove(0);
    assert_eq!(
        r.resolve_moved("Home.md", &link("[[First day]]"), DAY_ONE, "A/First day.md"),
        Some("A/First day.md")
    );
    assert_eq!(r.resolve_moved("Home.md", &link("[[Day one]]"), DAY_ONE, "A/First day.md"), None);
    assert_eq!(
        r.resolve_moved("Home.md", &link("[[Acme Corp]]"), "Work/Clients/Acme.md", "A/B.md"),
        Some("A/B.md"),
        "the alias moves with the note"
    );
    assert_eq!(r.resolve_moved("Home.md", &link("[[Acme Corp]]"), "Work/Clients/Acme.md", "Notes.md"), None);
    // A rename in case only.
    assert_eq!(
        r.resolve_moved("Home.md", &link("[[notes]]"), "Notes.md", "notes.md"),
        Some("notes.md"),
        "the note is at its new path"
    );
}

#[test]
fn the_graph_names_the_notes_a_move_may_change() {
    let mut graph = LinkGraph::default();
    graph.upsert("Home.md", "[[Day one]]", &[]);
    graph.upsert("Reading/Book.md", "[[First day]] [[the diary]]", &[]);
    graph.upsert("Work/Other.md", "[[Plan]]", &[]);
    graph.upsert(DAY_ONE, "[[Plan]]", &["the diary".to_string()]);
    let touched: Vec<&str> =
        graph.notes_touched_by_move(DAY_ONE, "Archive/First day.md").into_iter().collect();
    assert_eq!(touched, ["Home.md", DAY_ONE, "Reading/Book.md"]);
}

// --- The property test ---------------------------------------------------------------

const FOLDERS: [&str; 5] = ["", "Journal", "Journal/2025", "Work/Clients", "Reading"];
const NAMES: [&str; 6] = ["Acme", "Notes", "June plan", "Priya", "Todo", "Café ideas"];
/// Where a note may move, besides [`FOLDERS`] and [`NAMES`].
const NEW_FOLDERS: [&str; 2] = ["Archive", "Work"];
const NEW_NAMES: [&str; 2] = ["Renamed", "First day"];
const ALIASES: [&str; 3] = ["Acme Corp", "the boss", "Notes"];

/// A piece of a generated note's text.
#[derive(Debug, Clone)]
enum Piece {
    Words(String),
    /// A line end.
    Break,
    /// A link to note `to`, written in one of several ways ([`write_target`]).
    Link {
        form: LinkForm,
        to: usize,
        how: u8,
        heading: bool,
        alias: bool,
    },
    /// A wikilink by alias, or by a name that may be no note's.
    ByName {
        embed: bool,
        name: String,
    },
    /// A link inside inline code or a fenced block: no link.
    InCode {
        fenced: bool,
        to: usize,
    },
}

/// A generated note.
#[derive(Debug, Clone)]
struct Note {
    path: String,
    aliases: Vec<String>,
    text: String,
}

fn piece(notes: usize) -> impl Strategy<Value = Piece> {
    let form =
        prop_oneof![3 => Just(LinkForm::Wiki), 1 => Just(LinkForm::Embed), 1 => Just(LinkForm::Markdown)];
    let name = prop_oneof![
        prop::sample::select(ALIASES.to_vec()),
        prop::sample::select(NEW_NAMES.to_vec()),
        prop::sample::select(NAMES.to_vec()),
    ];
    prop_oneof![
        2 => "[a-z]{1,4}( [a-z]{1,4}){0,2} ?".prop_map(Piece::Words),
        1 => Just(Piece::Break),
        5 => (form, 0..notes, 0u8..5, any::<bool>(), any::<bool>())
            .prop_map(|(form, to, how, heading, alias)| Piece::Link { form, to, how, heading, alias }),
        1 => (any::<bool>(), name).prop_map(|(embed, name)| Piece::ByName { embed, name: name.to_string() }),
        1 => (any::<bool>(), 0..notes).prop_map(|(fenced, to)| Piece::InCode { fenced, to }),
    ]
}

/// The target of a link to the note at `path`: by name, by its whole path, by the end of
/// its path, by name with `.md`, or from the vault root.
fn write_target(path: &str, how: u8) -> String {
    let bare = path.trim_end_matches(".md");
    let name = bare.rsplit('/').next().unwrap_or(bare);
    let end =
        bare.rsplitn(3, '/').take(2).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("/");
    match how {
        0 => name.to_string(),
        1 => bare.to_string(),
        2 => end,
        3 => format!("{name}.md"),
        _ => format!("/{bare}"),
    }
}

/// The text of a piece in a note whose line end is `eol`.
fn render(piece: &Piece, paths: &[String], eol: &str) -> String {
    match piece {
        Piece::Words(words) => words.clone(),
        Piece::Break => eol.to_string(),
        Piece::Link { form: LinkForm::Markdown, to, how, heading, .. } => {
            let target = match how {
                0 => paths[*to].clone(),
                _ => format!("/{}", paths[*to]),
            };
            let hash = if *heading { "#Next%20steps" } else { "" };
            format!("[see]({}{hash})", target.replace(' ', "%20"))
        }
        Piece::Link { form, to, how, heading, alias } => format!(
            "{}[[{}{}{}]]",
            if *form == LinkForm::Embed { "!" } else { "" },
            write_target(&paths[*to], *how),
            if *heading { "#Next steps" } else { "" },
            if *alias { "|that one" } else { "" },
        ),
        Piece::ByName { embed, name } => format!("{}[[{name}]]", if *embed { "!" } else { "" }),
        Piece::InCode { fenced: true, to } => {
            format!("{eol}```{eol}[[{}]]{eol}```{eol}", write_target(&paths[*to], 0))
        }
        Piece::InCode { fenced: false, to } => format!("`[[{}]]`", write_target(&paths[*to], 0)),
    }
}

/// A vault of 2 to 12 notes in a few folders (names repeating across them), each with
/// aliases, `\n` or `\r\n` line ends, maybe a frontmatter naming a note, and
/// links of every form.
fn random_vault() -> impl Strategy<Value = Vec<Note>> {
    prop::collection::btree_set((0..FOLDERS.len(), 0..NAMES.len()), 2..12).prop_flat_map(|places| {
        let paths: Vec<String> = places.into_iter().map(|(f, n)| place(FOLDERS[f], NAMES[n])).collect();
        let count = paths.len();
        let note = (
            prop::collection::vec(prop::sample::select(ALIASES.to_vec()), 0..2),
            prop::collection::vec(piece(count), 0..12),
            any::<bool>(),
            any::<bool>(),
        );
        prop::collection::vec(note, count).prop_map(move |notes| {
            paths
                .iter()
                .zip(notes)
                .map(|(path, (aliases, pieces, crlf, frontmatter))| {
                    let eol = if crlf { "\r\n" } else { "\n" };
                    let mut text = String::new();
                    if frontmatter {
                        // A property naming a note without a wikilink: text, not a link
                        // (links in properties have tests of their own).
                        text.push_str(&format!(
                            "---{eol}related: \"{}\"{eol}---{eol}",
                            write_target(path, 0)
                        ));
                    }
                    for piece in &pieces {
                        text.push_str(&render(piece, &paths, eol));
                        text.push(' ');
                    }
                    let aliases = aliases.into_iter().map(str::to_string).collect();
                    Note { path: path.clone(), aliases, text }
                })
                .collect()
        })
    })
}

/// The vault path of the note named `name` in `folder`.
fn place(folder: &str, name: &str) -> String {
    if folder.is_empty() { format!("{name}.md") } else { format!("{folder}/{name}.md") }
}

/// A move: which note, and to which folder and name (each maybe kept).
fn random_move() -> impl Strategy<Value = (prop::sample::Index, Option<&'static str>, Option<&'static str>)> {
    let folders: Vec<&str> = FOLDERS.iter().chain(&NEW_FOLDERS).copied().collect();
    let names: Vec<&str> = NAMES.iter().chain(&NEW_NAMES).copied().collect();
    (
        any::<prop::sample::Index>(),
        prop::option::weighted(0.8, prop::sample::select(folders)),
        prop::option::weighted(0.7, prop::sample::select(names)),
    )
}

/// What a link is after the move, for the property test.
struct Moved<'a> {
    /// The note, before the move.
    note: &'a Note,
    /// Its path after.
    path: &'a str,
    /// What [`retarget_wikilinks`] answered for it.
    retargeted: Option<String>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// After a random note of a random vault moves (or merges into a note at its new path),
    /// and every other note's text is rewritten: each wikilink that led to the moved note
    /// leads to its new path, every other one leads where it led, only link targets changed,
    /// only links that had to change did, and the notes left alone are those with no link
    /// to change. The moved vault is read from scratch.
    #[test]
    fn after_a_move_every_wikilink_leads_where_it_led(
        notes in random_vault(),
        (which, folder, name) in random_move(),
    ) {
        let from_note = which.get(&notes);
        let from = from_note.path.as_str();
        let (old_folder, old_name) = from.trim_end_matches(".md").rsplit_once('/').unwrap_or(("", from.trim_end_matches(".md")));
        let to = place(folder.unwrap_or(old_folder), name.unwrap_or(old_name));
        let merge = to != from && notes.iter().any(|n| n.path == to);
        let before = LinkResolver::new(notes.iter().map(|n| (n.path.as_str(), n.aliases.clone())));
        let mut graph = LinkGraph::default();
        for note in &notes {
            graph.upsert(&note.path, &note.text[frontmatter_end(&note.text)..], &note.aliases);
        }
        let touched = graph.notes_touched_by_move(from, &to);

        let moved: Vec<Moved> = notes
            .iter()
            .filter(|n| !(merge && n.path == from))
            .map(|note| Moved {
                note,
                path: if note.path == from { to.as_str() } else { note.path.as_str() },
                retargeted: retarget_wikilinks(&note.path, &note.text, from, &to, &before),
            })
            .collect();
        let after = LinkResolver::new(moved.iter().map(|m| {
            // A moved note takes its aliases; one merged into keeps its own.
            let aliases = if m.note.path == from { from_note.aliases.clone() } else { m.note.aliases.clone() };
            (m.path, aliases)
        }));

        for m in &moved {
            let (old, source) = (&m.note.text, m.note.path.as_str());
            let new = m.retargeted.as_deref().unwrap_or(old);
            let (old_links, new_links) = (parse_links(old), parse_links(new));
            prop_assert_eq!(old_links.len(), new_links.len(), "{} became {}", old, new);
            // (c) Nothing but link targets changed: the old text with each target replaced
            // by the new one is the new text.
            let mut rebuilt = String::new();
            let mut at = 0;
            for (o, n) in old_links.iter().zip(&new_links) {
                rebuilt.push_str(&old[at..o.target_span.start]);
                rebuilt.push_str(&new[n.target_span.clone()]);
                at = o.target_span.end;
            }
            rebuilt.push_str(&old[at..]);
            prop_assert_eq!(&rebuilt, new);
            let mut needs_change = false;
            for (o, n) in old_links.iter().zip(&new_links) {
                prop_assert_eq!((o.form, &o.heading, &o.alias, o.line), (n.form, &n.heading, &n.alias, n.line));
                // Resolving as if moved is resolving the moved vault.
                prop_assert_eq!(before.resolve_moved(source, o, from, &to), after.resolve(m.path, o), "{:?} in {}", o, source);
                if o.form == LinkForm::Markdown {
                    prop_assert_eq!(&o.target, &n.target, "a Markdown link is not touched");
                    continue;
                }
                let Some(led_to) = before.resolve(source, o) else {
                    prop_assert_eq!(&o.target, &n.target, "a link to no note is not touched");
                    continue;
                };
                // (a) and (b): to the moved note's new path, or where it led.
                let expected = if led_to == from { to.as_str() } else { led_to };
                prop_assert_eq!(after.resolve(m.path, n), Some(expected), "{:?} in {} became {:?}", o, source, n);
                let still = after.resolve(m.path, o) == Some(expected);
                needs_change |= !still;
                if still {
                    prop_assert_eq!(&o.target, &n.target, "a link still leading there is not touched");
                } else if o.target != n.target {
                    // Written as before: `.md` and a leading `/` kept, a path by its whole path.
                    let md = |t: &str| t.to_lowercase().ends_with(".md");
                    prop_assert_eq!(md(&o.target), md(&n.target), "{:?} became {:?}", o, n);
                    prop_assert_eq!(o.target.starts_with('/'), n.target.starts_with('/'), "{:?} became {:?}", o, n);
                    if o.target.contains('/') {
                        let whole = without_md(n.target.trim_start_matches('/'));
                        prop_assert_eq!(whole, without_md(expected), "{:?} became {:?}", o, n);
                    }
                }
                if !still && !o.target.contains('/') {
                    // The shortest end of the path that names the note alone.
                    let written = n.target.trim_end_matches(".md");
                    let alone = |end: &str| after.names_only(end, expected, (expected, expected));
                    prop_assert!(alone(written), "{} names more than {}", written, expected);
                    for shorter in path_ends(written).into_iter().filter(|e| e.len() < written.len()) {
                        let link = parse_links(&format!("[[{shorter}]]")).remove(0);
                        let leads = after.resolve(m.path, &link) == Some(expected);
                        prop_assert!(!(leads && alone(shorter)), "{} is shorter than {}", shorter, written);
                    }
                }
            }
            // (d) A note is rewritten exactly when one of its links had to change.
            prop_assert_eq!(m.retargeted.is_some(), needs_change, "{} in {}", old, source);
            if m.retargeted.is_some() {
                prop_assert!(touched.contains(source), "{} was not named by the graph", source);
            }
        }
    }
}

#[test]
fn a_rewritten_name_is_one_no_other_note_shares() {
    let resolver = LinkResolver::new([("Home.md", vec![]), ("Old/Note.md", vec![]), ("Y/Dup.md", vec![])]);
    // Moving Old/Note.md to X/Dup.md: `[[Dup]]` would lead there from Home.md only by a
    // tie-break (X/Dup.md and Y/Dup.md are equally near); `[[X/Dup]]` names it alone.
    assert_eq!(
        retarget_wikilinks("Home.md", "[[Note|n]] ![[Note]]", "Old/Note.md", "X/Dup.md", &resolver)
            .as_deref(),
        Some("[[X/Dup|n]] ![[X/Dup]]")
    );
    // From X/, Dup is nearest, still not alone: the same path.
    assert_eq!(
        retarget_wikilinks("X/Other.md", "[[Note]]", "Old/Note.md", "X/Dup.md", &resolver).as_deref(),
        Some("[[X/Dup]]")
    );
    // A name no other note has stays the short name.
    assert_eq!(
        retarget_wikilinks("Home.md", "[[Note]]", "Old/Note.md", "X/Alone.md", &resolver).as_deref(),
        Some("[[Alone]]")
    );
}

#[test]
fn relative_wikilinks_stay_relative() {
    let resolver = LinkResolver::new([("A/Here.md", vec![]), ("A/Sib.md", vec![]), ("B/Note.md", vec![])]);
    // The linked note moves: the link is written from the linking note's folder again.
    assert_eq!(
        retarget_wikilinks("A/Here.md", "[[../B/Note|n]] [[./Sib]]", "B/Note.md", "C/D/Note.md", &resolver)
            .as_deref(),
        Some("[[../C/D/Note|n]] [[./Sib]]")
    );
    assert_eq!(
        retarget_wikilinks("A/Here.md", "[[./Sib#H]]", "A/Sib.md", "A/Sub/Sib2.md", &resolver).as_deref(),
        Some("[[./Sub/Sib2#H]]")
    );
    // The linking note moves: its relative links still lead where they led.
    assert_eq!(
        retarget_wikilinks("A/Here.md", "[[../B/Note]] [[./Sib]]", "A/Here.md", "B/Here.md", &resolver)
            .as_deref(),
        Some("[[../B/Note]] [[../A/Sib]]")
    );
}
