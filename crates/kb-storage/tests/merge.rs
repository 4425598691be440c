//! Merging entries through the vault, on a real SQLite history: one file is left with the
//! sources' notes, aliases and tags; references to a source point at the target; one undo
//! puts every file back to its very bytes; bad input changes nothing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;

use chrono::{NaiveDate, TimeZone, Utc};
use kb_domain::merge::MergeError;
use kb_domain::{
    Category, ChangeContext, ChangeSource, Clock, ConversationId, EntryCatalogue, EntryPath, EntryReader,
    EntryWriter, FixedClock, LaterChanges, RepositoryError, RevisionHistory, UndoScope,
};
use kb_storage::history::HistoryLog;
use kb_storage::vault::Vault;

fn clock() -> Arc<dyn Clock> {
    Arc::new(FixedClock(Utc.with_ymd_and_hms(2026, 11, 21, 9, 14, 3).unwrap()))
}

/// A vault at `dir` keeping history in `dir/.kb/kb.sqlite`.
fn open(dir: &Path) -> Vault {
    let log = HistoryLog::open_in(dir).unwrap();
    Vault::open_with_history(dir, clock(), Arc::new(log)).unwrap()
}

fn chat() -> ChangeContext {
    ChangeContext {
        source: ChangeSource::Chat,
        tool: Some("merge_entries".into()),
        conversation_id: Some(ConversationId::new("c1")),
        session: None,
        device: None,
        claim: None,
        person: None,
    }
}

fn on() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 21).unwrap()
}

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

/// Every entry file's bytes, by vault path.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for category in Category::ALL {
        let Ok(listing) = fs::read_dir(root.join(category.as_str())) else { continue };
        for item in listing {
            let item = item.unwrap();
            let name = item.file_name().to_string_lossy().into_owned();
            if name.ends_with(".md") && !name.starts_with('.') {
                files.insert(format!("{category}/{name}"), fs::read(item.path()).unwrap());
            }
        }
    }
    files
}

/// A vault with two entries for one person, a third about her, and a project linking to
/// the short one, written by hand (odd formatting included).
fn two_priyas(dir: &Path) -> Vault {
    let vault = open(dir);
    let files = [
        (
            "people/priya-raman.md",
            "---\nid: T1\nname: Priya Raman\ncontext: Robotics lead\ntags: [work]\n---\nMet at the meetup.\n",
        ),
        (
            "people/priya.md",
            "---\nid: S1\nname: Priya\ntags: [Work, robots]\nfollow_ups: [send the deck]\n---\nLikes tea.\n",
        ),
        ("people/pri.md", "---\nid: S2\nname: Pri\nphone: 555 0100\n---\n"),
        (
            "projects/robot.md",
            "---\nid: P1\nname: Robot   # the arm\nrelated_people: [people/priya.md, people/sam.md]\n---\n\
             Ask [Priya](../people/priya.md) and [Pri](/people/pri.md).\r\n",
        ),
        ("ideas/tea.md", "---\nname: Tea\n---\nNothing about anyone.\n"),
    ];
    for (at, text) in files {
        let file = dir.join(at);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
        vault.refresh(&path(at)).unwrap();
    }
    vault
}

#[test]
fn two_people_become_one_and_one_undo_puts_every_file_back() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    let before = snapshot(dir.path());
    let outcome = vault
        .merge_as(
            &path("people/priya-raman.md"),
            &[path("people/priya.md"), path("people/pri.md")],
            on(),
            &chat(),
        )
        .unwrap();
    assert_eq!(outcome.removed, [path("people/priya.md"), path("people/pri.md")]);
    assert_eq!(outcome.references_updated, [path("projects/robot.md")]);

    let after = snapshot(dir.path());
    let people: Vec<&String> = after.keys().filter(|k| k.starts_with("people/")).collect();
    assert_eq!(people, ["people/priya-raman.md"]);
    let merged = vault.get(&path("people/priya-raman.md")).unwrap();
    assert_eq!(merged, outcome.entry);
    assert_eq!(merged.id(), Some("T1"));
    assert_eq!(merged.frontmatter.get_str("context"), Some("Robotics lead"));
    assert_eq!(merged.tags(), ["work", "robots"]);
    assert_eq!(merged.frontmatter.get_str_list("aliases"), ["Priya", "Pri"]);
    assert_eq!(merged.frontmatter.get_str("phone"), Some("555 0100"));
    assert!(merged.body.contains("## Merged from Priya (2026-11-21)\n\nLikes tea.\n"), "{}", merged.body);
    assert!(merged.body.contains("## Merged from Pri (2026-11-21)\n"), "{}", merged.body);
    // The project's references now lead to the target, in the style they were written.
    let robot = String::from_utf8(after["projects/robot.md"].clone()).unwrap();
    assert_eq!(
        robot,
        "---\nid: P1\nname: Robot   # the arm\nrelated_people: [people/priya-raman.md, people/sam.md]\n---\n\
         Ask [Priya](../people/priya-raman.md) and [Pri](/people/priya-raman.md).\r\n"
    );
    // The catalogue follows: the old names find the target, the project refers to it.
    let found = vault.find_by_name("Priya").unwrap();
    assert!(found.iter().any(|m| m.entry.path == path("people/priya-raman.md")), "{found:?}");
    assert!(vault.get(&path("people/priya.md")).is_err());
    assert_eq!(after["ideas/tea.md"], before["ideas/tea.md"]);

    // One operation in history: one undo reverts the whole merge, to the very bytes.
    let undone = vault
        .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &chat())
        .unwrap();
    assert!(
        undone.description.starts_with("Merged people/priya.md, people/pri.md into people/priya-raman.md")
    );
    assert_eq!(undone.undone.len(), 4, "{:?}", undone.undone);
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(vault.get(&path("people/priya.md")).unwrap().name(), "Priya");
    assert!(vault.get(&path("people/priya-raman.md")).unwrap().frontmatter.get("aliases").is_none());
    // The merge itself was the only change kb made in the conversation.
    let err = vault
        .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &chat())
        .unwrap_err();
    assert!(matches!(err, RepositoryError::NothingToUndo(_)), "{err}");
}

#[test]
fn bad_input_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    fs::write(dir.path().join("people/broken.md"), "---\nname: [unclosed\n---\nBody\n").unwrap();
    let before = snapshot(dir.path());
    let target = path("people/priya-raman.md");
    let merge = |sources: &[&str]| {
        let sources: Vec<EntryPath> = sources.iter().map(|s| path(s)).collect();
        vault.merge_as(&target, &sources, on(), &chat()).unwrap_err()
    };

    let missing = merge(&["people/priya.md", "people/nobody.md"]);
    assert!(
        matches!(missing, RepositoryError::NotFound(ref p) if p == &path("people/nobody.md")),
        "{missing}"
    );
    let itself = merge(&["people/priya-raman.md"]);
    assert!(matches!(itself, RepositoryError::Merge(MergeError::IntoItself(_))), "{itself}");
    let twice = merge(&["people/priya.md", "people/priya.md"]);
    assert!(matches!(twice, RepositoryError::Merge(MergeError::Repeated(_))), "{twice}");
    let none = merge(&[]);
    assert!(matches!(none, RepositoryError::Merge(MergeError::NoSources(_))), "{none}");
    let malformed = merge(&["people/priya.md", "people/broken.md"]);
    assert!(matches!(malformed, RepositoryError::Malformed { .. }), "{malformed}");
    let missing_target =
        vault.merge_as(&path("people/nobody.md"), &[path("people/priya.md")], on(), &chat()).unwrap_err();
    assert!(matches!(missing_target, RepositoryError::NotFound(_)), "{missing_target}");

    assert_eq!(snapshot(dir.path()), before);
    let err = vault
        .undo_as(&UndoScope::Conversation(ConversationId::new("c1")), LaterChanges::Refuse, &chat())
        .unwrap_err();
    assert!(matches!(err, RepositoryError::NothingToUndo(_)), "nothing was recorded: {err}");
}

#[test]
fn a_merge_across_categories_keeps_the_sources_links_leading_where_they_did() {
    let dir = tempfile::tempdir().unwrap();
    let vault = two_priyas(dir.path());
    fs::create_dir_all(dir.path().join("inbox")).unwrap();
    fs::write(
        dir.path().join("inbox/call-priya.md"),
        "---\nname: Call Priya\n---\nSee [tea](../ideas/tea.md), [p](priya.md).\n",
    )
    .unwrap();
    vault.refresh(&path("inbox/call-priya.md")).unwrap();
    let outcome = vault
        .merge_as(&path("people/priya-raman.md"), &[path("inbox/call-priya.md")], on(), &chat())
        .unwrap();
    assert!(
        outcome.entry.body.contains("See [tea](../ideas/tea.md), [p](../inbox/priya.md).\n"),
        "{}",
        outcome.entry.body
    );
    assert!(!dir.path().join("inbox/call-priya.md").exists());
}

/// Property: a merge keeps every byte of every source body inside the target, and one undo
/// puts every file back exactly.
///
/// Each case writes, by hand as a person would, a target, one to four sources and up to
/// three other entries (in any categories), with frontmatter in several styles (flow and
/// block lists, a lone tag, CRLF lines, a byte-order mark, `...` closing the block) and
/// bodies of arbitrary text: unicode, blank lines, headings like `## Log`, lines that look
/// like frontmatter, trailing white space, CRLF, no final newline, and Markdown links and
/// link definitions to any entry (or to files that do not exist, or to the web), written
/// from the entry's own folder (`x.md`, `./x.md`), through `../`, or from the vault root
/// (`/people/x.md`, `people/x.md`), with an anchor, angle brackets or a title.
///
/// What the merge may change in a source's notes, and the oracle below models exactly:
/// - the section frames the notes: the blank lines before them (`\n`, `\r`) and the white
///   space after them are not part of the section (`## Merged from {name} ({date})`,
///   a blank line, the notes, a newline);
/// - a link target written from the source's own folder is rebased when the target is in
///   another folder (`x.md` → `../people/x.md`), so it still leads where it did;
/// - a link target naming one of the sources is pointed at the target, in its style.
///
/// Every other byte of every source body is in the target's body, as one run.
mod property {
    use std::collections::{BTreeMap, BTreeSet};
    use std::fs;
    use std::path::Path;

    use kb_domain::names::fold_name;
    use kb_domain::{
        Category, ConversationId, Entry, EntryPath, EntryReader, EntryWriter, RepositoryError,
        RevisionHistory, UndoScope,
    };
    use proptest::prelude::*;
    use proptest::sample::Index;
    use proptest::test_runner::FileFailurePersistence;
    use serde_json::Value;

    use super::{chat, on, open, snapshot};

    /// The list fields the entries are written with.
    const LISTS: [&str; 4] = ["tags", "aliases", "follow_ups", "see_also"];

    /// How a link target is written.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Form {
        /// `x.md`, from the entry's own folder (only for an entry in that folder).
        Own,
        /// `./x.md`, likewise.
        Dot,
        /// `../people/x.md`.
        Up,
        /// `/people/x.md`.
        RootSlash,
        /// `people/x.md`.
        RootBare,
        /// `https://example.org/people/x.md`: not a reference.
        External,
    }

    #[derive(Debug, Clone)]
    struct Link {
        form: Form,
        /// Which entry (or file that does not exist) it names.
        dest: Index,
        anchor: Option<String>,
        angle: bool,
        title: bool,
    }

    #[derive(Debug, Clone)]
    enum Line {
        Text(String),
        Link {
            prefix: &'static str,
            text: String,
            link: Link,
            suffix: String,
        },
        /// `[label]: target`, after a blank line (a definition cannot interrupt a paragraph).
        Definition(Link),
        /// Any text at all (code fences, HTML, brackets…) naming no entry: only in a case
        /// whose notes have no links of their own, since such text may turn later lines
        /// into code.
        Wild(String),
    }

    #[derive(Debug, Clone)]
    struct Body {
        lead: &'static str,
        /// Each line and whether it ends with CRLF.
        lines: Vec<(Line, bool)>,
        last_newline: bool,
    }

    #[derive(Debug, Clone, Copy)]
    enum ListStyle {
        Flow,
        Block,
        /// `tags: work`: one item written as a scalar (only for tags and aliases).
        Scalar,
    }

    #[derive(Debug, Clone, Copy)]
    enum NameKind {
        Fresh,
        /// The target's name in lower case: the same name as names are compared.
        LikeTarget,
        Absent,
    }

    type List<T> = Option<(ListStyle, Vec<T>)>;

    #[derive(Debug, Clone)]
    struct Spec {
        category: Category,
        stem: String,
        frontmatter: bool,
        id: Option<u16>,
        name: String,
        name_kind: NameKind,
        tags: List<&'static str>,
        aliases: List<String>,
        follow_ups: List<&'static str>,
        see_also: List<Index>,
        scalars: Vec<(&'static str, String)>,
        bom: bool,
        crlf_frontmatter: bool,
        dots: bool,
        body: Body,
    }

    #[derive(Debug, Clone)]
    struct Case {
        /// The target, then the sources, then the other entries.
        specs: Vec<Spec>,
        /// Whether the notes are any text (and have no links of their own).
        wild: bool,
        sources: usize,
        /// Files links may name that do not exist.
        ghosts: Vec<(Category, String)>,
    }

    fn category() -> impl Strategy<Value = Category> {
        prop::sample::select(Category::ALL.to_vec())
    }

    fn text_line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => r#"[a-zA-Z0-9 ,.!?:;'"()*_=+#/&-]{0,30}"#,
            3 => r"[^\[`~<\x00-\x08\x0a-\x1f\x7f]{0,16}",
            2 => "[\u{4e00}-\u{4e2f}\u{1f300}-\u{1f320}éüñ ]{1,12}",
            1 => "[a-zé]{1,10}[ \t]{1,3}",
            1 => "[ \t]{0,4}",
            1 => "#{1,6} [A-Za-zé ]{0,15}",
            1 => r"(- |> |    |\t|1\. )[a-zé ]{0,15}",
            1 => "- 2026-11-[12][0-9]: [a-z ]{0,20}",
            1 => prop::sample::select(vec![
                "---", "...", "## Log", "name: Not the name", "---\r", "--- ", "tags: [x]", "***", "===",
            ])
            .prop_map(str::to_string),
        ]
    }

    /// Any text, Markdown of every kind included, that names no entry: no `md`, and no
    /// `%` or `&` that could spell it.
    fn wild_text() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => r"[^\x00-\x08\x0a-\x1f\x7f]{0,24}",
            1 => r"(```|~~~|<div>|</div>|<!--|-->|<pre>|`|\[\^?|\]|\]\(|\]: |    |> |\* )[a-z /.#()\[\]`<>*_-]{0,12}",
        ]
        .prop_filter("names no entry", |t| !t.contains("md") && !t.contains(['%', '&']))
    }

    fn link() -> impl Strategy<Value = Link> {
        (
            prop::sample::select(vec![
                Form::Own,
                Form::Dot,
                Form::Up,
                Form::RootSlash,
                Form::RootBare,
                Form::External,
            ]),
            any::<Index>(),
            prop::option::of("[a-z]{1,6}"),
            prop::bool::weighted(0.2),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(form, dest, anchor, angle, title)| Link { form, dest, anchor, angle, title })
    }

    fn line() -> impl Strategy<Value = Line> {
        prop_oneof![
            5 => text_line().prop_map(Line::Text),
            3 => (
                prop::sample::select(vec!["", "See ", "- ", "## ", "> ", "1. ", "Ask é "]),
                "[A-Za-zé ]{0,10}",
                link(),
                "[a-z .,!?()]{0,8}",
            )
                .prop_map(|(prefix, text, link, suffix)| Line::Link { prefix, text, link, suffix }),
            1 => link().prop_map(Line::Definition),
            2 => wild_text().prop_map(Line::Wild),
        ]
    }

    fn body() -> impl Strategy<Value = Body> {
        (
            prop::sample::select(vec!["", "", "", "\n", "\r\n", "\n\n"]),
            prop::collection::vec((line(), prop::bool::weighted(0.25)), 0..8),
            prop::bool::weighted(0.7),
        )
            .prop_map(|(lead, lines, last_newline)| Body { lead, lines, last_newline })
    }

    fn name() -> impl Strategy<Value = String> {
        let word = prop_oneof![3 => "[A-ZÉÖÅ][a-zéöåüñ]{1,7}", 1 => "[\u{4e00}-\u{4e40}]{2,3}"];
        (prop::collection::vec(word, 1..=3), prop::bool::weighted(0.2))
            .prop_map(|(words, wide)| words.join(if wide { "  " } else { " " }))
            .prop_filter("YAML would read it as something else", |n| {
                !matches!(n.to_lowercase().as_str(), "true" | "false" | "null")
            })
    }

    fn list<T: std::fmt::Debug + Clone>(
        item: impl Strategy<Value = T>,
        most: usize,
    ) -> impl Strategy<Value = List<T>> {
        prop::option::of((
            prop::sample::select(vec![ListStyle::Flow, ListStyle::Block, ListStyle::Scalar]),
            prop::collection::vec(item, 0..=most),
        ))
    }

    fn scalar() -> impl Strategy<Value = String> {
        "[a-z]{2,8}( [a-z]{2,8}){0,2}"
    }

    fn spec() -> impl Strategy<Value = Spec> {
        let tag = prop::sample::select(vec!["work", "Work", "robots", "é", "Ünï", "x y", "family", "tea"]);
        let follow_up =
            prop::sample::select(vec!["send the deck", "ask about the grant", "call back", "čaj s mlékem"]);
        (
            (category(), "[a-zë]{1,6}", prop::bool::weighted(0.85), prop::option::of(0u16..1000), name()),
            prop::sample::select(vec![
                NameKind::Fresh,
                NameKind::Fresh,
                NameKind::Fresh,
                NameKind::Fresh,
                NameKind::LikeTarget,
                NameKind::Absent,
            ]),
            (list(tag, 4), list(name(), 2), list(follow_up, 3), list(any::<Index>(), 3)),
            (prop::option::of(scalar()), prop::option::of(scalar()), prop::option::of(scalar())),
            (prop::bool::weighted(0.1), prop::bool::weighted(0.2), prop::bool::weighted(0.1)),
            body(),
        )
            .prop_map(
                |(
                    (category, stem, frontmatter, id, name),
                    name_kind,
                    (tags, aliases, follow_ups, see_also),
                    (context, mood, phone),
                    (bom, crlf_frontmatter, dots),
                    body,
                )| {
                    let scalars = [("context", context), ("mood", mood), ("phone", phone)]
                        .into_iter()
                        .filter_map(|(key, value)| value.map(|v| (key, v)))
                        .collect();
                    Spec {
                        category,
                        stem,
                        frontmatter,
                        id,
                        name,
                        name_kind,
                        tags,
                        aliases,
                        follow_ups,
                        see_also,
                        scalars,
                        bom,
                        crlf_frontmatter,
                        dots,
                        body,
                    }
                },
            )
    }

    fn case() -> impl Strategy<Value = Case> {
        (1usize..=4, 0usize..=3, prop::collection::vec((category(), "[a-z]{1,6}"), 0..=2))
            .prop_flat_map(|(sources, others, ghosts)| {
                (
                    prop::collection::vec(spec(), 1 + sources + others),
                    prop::bool::weighted(0.3),
                    Just(sources),
                    Just(ghosts),
                )
            })
            .prop_map(|(mut specs, wild, sources, ghosts)| {
                for spec in &mut specs {
                    // Wild text could make a link of the next line (`[a](` then `b.md)`):
                    // then no line names a Markdown file.
                    let names_none = |t: &str| !t.contains("md") && !t.contains(['%', '&']);
                    spec.body.lines.retain(|(line, _)| match line {
                        Line::Text(text) => !wild || names_none(text),
                        Line::Wild(_) => wild,
                        Line::Link { .. } | Line::Definition(_) => !wild,
                    });
                }
                // The target and the sources have frontmatter; the target has a name.
                for spec in &mut specs[..=sources] {
                    spec.frontmatter = true;
                }
                specs[0].name_kind = NameKind::Fresh;
                Case { specs, wild, sources, ghosts }
            })
    }

    /// Where a text is read: whose notes, in which file, and whether the merge happened.
    struct Placement<'a> {
        /// Every path a link may name: the entries, then files that do not exist.
        paths: &'a [EntryPath],
        /// Whose notes these are.
        writer: &'a EntryPath,
        /// The file they are in.
        home: &'a EntryPath,
        /// The target and the sources, once merged.
        merged: Option<(&'a EntryPath, &'a [EntryPath])>,
    }

    impl Placement<'_> {
        /// The link's destination as it reads in `home`.
        fn destination(&self, link: &Link) -> String {
            let mut dest = self.paths[link.dest.index(self.paths.len())].clone();
            // Written from a folder: a link to another folder's entry goes through `../`.
            let from = |form: Form, dest: &EntryPath, folder: Category| match form {
                Form::Own | Form::Dot if dest.category() != folder => Form::Up,
                form => form,
            };
            let mut form = from(link.form, &dest, self.writer.category());
            // Notes moved into another folder: links from their own folder are rebased.
            form = from(form, &dest, self.home.category());
            if let Some((target, sources)) = self.merged
                && form != Form::External
                && sources.contains(&dest)
            {
                dest = target.clone();
                form = from(form, &dest, self.home.category());
            }
            let (folder, file) = (dest.category().as_str(), dest.file_name());
            let mut raw = match form {
                Form::Own => file.to_string(),
                Form::Dot => format!("./{file}"),
                Form::Up => format!("../{folder}/{file}"),
                Form::RootSlash => format!("/{folder}/{file}"),
                Form::RootBare => format!("{folder}/{file}"),
                Form::External => format!("https://example.org/{folder}/{file}"),
            };
            if let Some(anchor) = &link.anchor {
                raw = format!("{raw}#{anchor}");
            }
            if link.angle {
                raw = format!("<{raw}>");
            }
            if link.title {
                raw = format!("{raw} \"a title\"");
            }
            raw
        }
    }

    fn render_body(body: &Body, owner: usize, at: &Placement) -> String {
        let mut out = String::from(body.lead);
        for (n, (line, crlf)) in body.lines.iter().enumerate() {
            let end = if *crlf { "\r\n" } else { "\n" };
            match line {
                Line::Text(text) | Line::Wild(text) => out.push_str(text),
                Line::Link { prefix, text, link, suffix } => {
                    out.push_str(&format!("{prefix}[{text}]({}){suffix}", at.destination(link)));
                }
                Line::Definition(link) => {
                    out.push_str(end);
                    out.push_str(&format!("[ref {owner} {n}]: {}", at.destination(link)));
                }
            }
            if n + 1 < body.lines.len() || body.last_newline {
                out.push_str(end);
            }
        }
        out
    }

    fn push_list(text: &mut String, key: &str, style: ListStyle, items: &[String], nl: &str) {
        match style {
            _ if items.is_empty() => text.push_str(&format!("{key}: []{nl}")),
            ListStyle::Scalar if items.len() == 1 && matches!(key, "tags" | "aliases") => {
                text.push_str(&format!("{key}: {}{nl}", items[0]));
            }
            ListStyle::Block => {
                text.push_str(&format!("{key}:{nl}"));
                for item in items {
                    text.push_str(&format!("  - {item}{nl}"));
                }
            }
            _ => text.push_str(&format!("{key}: [{}]{nl}", items.join(", "))),
        }
    }

    /// The name each entry is written with.
    fn names(case: &Case) -> Vec<Option<String>> {
        let target = case.specs[0].name.clone();
        case.specs
            .iter()
            .map(|spec| match spec.name_kind {
                NameKind::Fresh => Some(spec.name.clone()),
                NameKind::LikeTarget => Some(target.to_lowercase()),
                NameKind::Absent => None,
            })
            .collect()
    }

    /// The file of entry `i`, as written, or (`merged`) as it should read after the merge
    /// when it is one of the other entries.
    fn render_file(
        case: &Case,
        i: usize,
        paths: &[EntryPath],
        merged: Option<(&EntryPath, &[EntryPath])>,
    ) -> String {
        let spec = &case.specs[i];
        let nl = if spec.crlf_frontmatter { "\r\n" } else { "\n" };
        let mut text = String::new();
        if spec.bom {
            text.push('\u{feff}');
        }
        if spec.frontmatter {
            text.push_str(&format!("---{nl}"));
            if let Some(id) = spec.id {
                text.push_str(&format!("id: K{id}{nl}"));
            }
            if let Some(name) = &names(case)[i] {
                text.push_str(&format!("name: {name}{nl}"));
            }
            let texts = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
            if let Some((style, items)) = &spec.tags {
                push_list(&mut text, "tags", *style, &texts(items), nl);
            }
            if let Some((style, items)) = &spec.aliases {
                push_list(&mut text, "aliases", *style, items, nl);
            }
            if let Some((style, items)) = &spec.follow_ups {
                push_list(&mut text, "follow_ups", *style, &texts(items), nl);
            }
            if let Some((style, items)) = &spec.see_also {
                let items: Vec<String> = items
                    .iter()
                    .map(|n| {
                        let path = &paths[n.index(paths.len())];
                        match merged {
                            Some((target, sources)) if sources.contains(path) => target.to_string(),
                            _ => path.to_string(),
                        }
                    })
                    .collect();
                push_list(&mut text, "see_also", *style, &items, nl);
            }
            for (key, value) in &spec.scalars {
                text.push_str(&format!("{key}: {value}{nl}"));
            }
            text.push_str(if spec.dots { "..." } else { "---" });
            text.push_str(nl);
        } else {
            // A note without frontmatter: its first line must not open a block.
            text.push_str(&format!("# {}\n", spec.stem));
        }
        let home = &paths[i];
        text.push_str(&render_body(&spec.body, i, &Placement { paths, writer: home, home, merged }));
        text
    }

    /// Every file in the category folders (any name), so nothing extra goes unseen.
    fn listing(root: &Path) -> BTreeSet<String> {
        let mut names = BTreeSet::new();
        for category in Category::ALL {
            let Ok(listing) = fs::read_dir(root.join(category.as_str())) else { continue };
            for item in listing {
                names.insert(format!("{category}/{}", item.unwrap().file_name().to_string_lossy()));
            }
        }
        names
    }

    /// A list field's items: a list's, or a non-blank scalar as one.
    fn items(value: Option<&Value>) -> Vec<Value> {
        match value {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::String(s)) if !s.trim().is_empty() => vec![Value::String(s.clone())],
            Some(Value::Null) | None => Vec::new(),
            Some(other) => vec![other.clone()],
        }
    }

    /// Whether two items of the list `key` are one (docs/TOOLS.md: tags case aside,
    /// aliases as names are compared).
    fn same(key: &str, a: &Value, b: &Value) -> bool {
        match (a.as_str(), b.as_str()) {
            (Some(a), Some(b)) => match key {
                "tags" => a.trim().to_lowercase() == b.trim().to_lowercase(),
                "aliases" => {
                    fold_name(a) == fold_name(b) && (!fold_name(a).is_empty() || a.trim() == b.trim())
                }
                _ => a.trim() == b.trim(),
            },
            _ => a == b,
        }
    }

    /// The union of list `key`: the target's items, then each source's (a source's name an
    /// alias), each once; paths to a source name the target; the target itself dropped.
    fn united(key: &str, entries: &[Entry], target: &EntryPath, sources: &[EntryPath]) -> Vec<String> {
        let target_name = fold_name(&entries[0].name());
        let is_path = |item: &Value| item.as_str().and_then(|s| EntryPath::parse(s.trim()).ok());
        let mut out: Vec<Value> = Vec::new();
        for (n, entry) in entries.iter().enumerate() {
            let mut candidates = items(entry.frontmatter.get(key));
            if key == "aliases" && n > 0 && !entry.name().trim().is_empty() {
                candidates.push(Value::String(entry.name().trim().to_string()));
            }
            for item in candidates {
                let item = match is_path(&item) {
                    Some(path) if sources.contains(&path) => Value::String(target.to_string()),
                    _ => item,
                };
                if is_path(&item).is_some_and(|p| &p == target)
                    || (n > 0
                        && key == "aliases"
                        && item.as_str().is_some_and(|a| fold_name(a) == target_name))
                {
                    continue;
                }
                if !out.iter().any(|seen| same(key, seen, &item)) {
                    out.push(item);
                }
            }
        }
        out.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
    }

    fn check(case: &Case) -> Result<(), TestCaseError> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let entries = case.specs.len();
        let mut paths: Vec<EntryPath> = case
            .specs
            .iter()
            .enumerate()
            .map(|(i, s)| EntryPath::in_category(s.category, &format!("{}-{i}.md", s.stem)).unwrap())
            .collect();
        for (j, (category, stem)) in case.ghosts.iter().enumerate() {
            paths.push(EntryPath::in_category(*category, &format!("{stem}-ghost-{j}.md")).unwrap());
        }
        let target = paths[0].clone();
        let sources: Vec<EntryPath> = paths[1..=case.sources].to_vec();
        let merged = Some((&target, sources.as_slice()));

        for category in Category::ALL {
            fs::create_dir_all(root.join(category.as_str())).unwrap();
        }
        let mut written = BTreeMap::new();
        for (i, path) in paths[..entries].iter().enumerate() {
            let text = render_file(case, i, &paths, None);
            fs::write(root.join(path.to_string()), &text).unwrap();
            written.insert(path.to_string(), text.into_bytes());
        }
        let vault = open(root);
        let before = snapshot(root);
        prop_assert_eq!(&before, &written, "opening the vault changed a file");
        let files_before = listing(root);
        let originals: Vec<Entry> = paths[..=case.sources].iter().map(|p| vault.get(p).unwrap()).collect();
        for (i, original) in originals.iter().enumerate() {
            let as_written = Placement { paths: &paths, writer: &paths[i], home: &paths[i], merged: None };
            prop_assert_eq!(&original.body, &render_body(&case.specs[i].body, i, &as_written));
        }

        let outcome = vault.merge_as(&target, &sources, on(), &chat()).unwrap();

        // The sources are gone; the other entries changed only where they named a source.
        let after = snapshot(root);
        prop_assert_eq!(&outcome.removed, &sources);
        let mut referrers = Vec::new();
        for (i, path) in paths[..entries].iter().enumerate().skip(1 + case.sources) {
            let expected = render_file(case, i, &paths, merged);
            if expected.as_bytes() != before[&path.to_string()].as_slice() {
                referrers.push(path.clone());
            }
            prop_assert_eq!(
                String::from_utf8_lossy(&after[&path.to_string()]),
                expected.as_str(),
                "{} after the merge",
                path
            );
        }
        referrers.sort();
        prop_assert_eq!(&outcome.references_updated, &referrers);
        for source in &sources {
            prop_assert!(!root.join(source.to_string()).exists(), "{} is still there", source);
            prop_assert!(vault.get(source).is_err());
        }
        let expected_files: BTreeSet<String> =
            files_before.iter().filter(|f| !sources.iter().any(|s| s.to_string() == **f)).cloned().collect();
        prop_assert_eq!(listing(root), expected_files);

        // The target: read back as the merge said, its own notes first, then each source's.
        let entry = vault.get(&target).unwrap();
        prop_assert_eq!(&entry, &outcome.entry);
        let text = String::from_utf8(after[&target.to_string()].clone()).unwrap();
        prop_assert_eq!(&Entry::from_document(target.clone(), &text).unwrap(), &entry);
        let in_target = |i: usize| Placement { paths: &paths, writer: &paths[i], home: &target, merged };
        let body = &entry.body;
        let own = render_body(&case.specs[0].body, 0, &in_target(0));
        let mut at = 0;
        if own.trim().is_empty() {
            prop_assert!(body.starts_with("## Merged from "), "{:?}", body);
        } else {
            let kept = own.trim_end_matches('\n');
            prop_assert!(body.starts_with(kept), "the target's own notes {:?} do not open {:?}", kept, body);
            at = kept.len();
        }
        for (i, original) in originals.iter().enumerate().skip(1) {
            let notes = render_body(&case.specs[i].body, i, &in_target(i));
            let notes = notes.trim_matches(['\n', '\r']).trim_end();
            let name = original.name().split_whitespace().collect::<Vec<_>>().join(" ");
            let section = if notes.is_empty() {
                format!("## Merged from {name} (2026-11-21)\n")
            } else {
                format!("## Merged from {name} (2026-11-21)\n\n{notes}\n")
            };
            let found = body[at..].find(&section);
            prop_assert!(
                found.is_some(),
                "the notes of {} ({:?}) are not in the target, in order: {:?}",
                paths[i],
                original.body,
                body
            );
            at += found.unwrap_or_default() + section.len();
            if case.wild {
                // No links: the notes are the body as written, edges aside.
                prop_assert_eq!(notes, original.body.trim_matches(['\n', '\r']).trim_end());
            }
        }

        // The target keeps its own fields; its lists are the union.
        let fm = &entry.frontmatter;
        for (key, value) in originals[0].frontmatter.iter() {
            // A blank field is a gap a source may fill (docs/TOOLS.md); any other is kept.
            let blank = value.is_null() || value.as_str().is_some_and(|s| s.trim().is_empty());
            if !LISTS.contains(&key.as_str()) && !blank {
                prop_assert_eq!(fm.get(key), Some(value), "the target's {} changed", key);
            }
        }
        prop_assert_eq!(fm.get_str("updated_at"), Some("2026-11-21T09:14:03Z"));
        for key in LISTS {
            prop_assert_eq!(fm.get_str_list(key), united(key, &originals, &target, &sources), "{}", key);
        }

        // One undo puts every file back, byte for byte, and leaves nothing else.
        let undone = vault
            .undo_as(
                &UndoScope::Conversation(ConversationId::new("c1")),
                kb_domain::LaterChanges::Refuse,
                &chat(),
            )
            .unwrap();
        prop_assert_eq!(undone.undone.len(), 1 + sources.len() + referrers.len());
        prop_assert_eq!(snapshot(root), before);
        prop_assert_eq!(listing(root), files_before);
        for (path, original) in paths.iter().zip(&originals) {
            prop_assert_eq!(&vault.get(path).unwrap(), original);
        }
        let again = vault
            .undo_as(
                &UndoScope::Conversation(ConversationId::new("c1")),
                kb_domain::LaterChanges::Refuse,
                &chat(),
            )
            .unwrap_err();
        prop_assert!(matches!(again, RepositoryError::NothingToUndo(_)), "{}", again);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 128,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "tests/proptest-regressions/merge.txt",
            ))),
            ..ProptestConfig::default()
        })]
        #[test]
        fn a_merge_keeps_every_source_body_in_the_target_and_one_undo_restores_every_file(case in case()) {
            check(&case)?;
        }
    }
}
