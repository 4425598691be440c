//! The vault's link graph, resolved at its first use. Resolving every link of a vault is
//! over half of building kb's view of it (about 1 s of 1.6 s at 100,000 notes); a command
//! that lists, counts, digests or files a note never needs it, so until something asks
//! where links lead across the vault (a move's wikilinks, a context) the notes' links are
//! only kept as written. In a one-shot command one note's links and backlinks (`kb show`)
//! are answered from the few notes around it, leaving the rest unresolved; a long-running
//! process, which answers many, resolves the whole graph at the first.
//!
//! Until a note's links are needed they stay as the saved catalogue keeps them
//! ([`NoteLinks::Saved`]): a third of loading the catalogue went on making them.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use kb_domain::links::{Link, LinkGraph};

use super::saved_catalogue;

/// A note's links as written, each with the text of its line.
#[derive(Debug, Clone)]
pub(crate) enum NoteLinks {
    /// Read from the note.
    Parsed(Vec<(Link, String)>),
    /// As the saved catalogue keeps them (see [`saved_catalogue::decode_links`]): read when
    /// first needed.
    Saved(Arc<[u8]>),
}

impl NoteLinks {
    /// The links. A saved form that cannot be read (a damaged catalogue) gives none, and
    /// says so in the log.
    pub(crate) fn parsed(&self) -> Cow<'_, [(Link, String)]> {
        match self {
            NoteLinks::Parsed(links) => Cow::Borrowed(links),
            NoteLinks::Saved(bytes) => Cow::Owned(decode(bytes)),
        }
    }

    /// Whether one of these links may have one of `keys` (lowercase) as its
    /// [`kb_domain::links::link_key`], told from saved links without decoding them: their
    /// targets are read in place, and an ASCII target is compared with the keys in any
    /// case (another may lowercase to ASCII, as the Kelvin sign does to `k`: it may match).
    fn may_lead_to(&self, keys: &[String]) -> bool {
        match self {
            NoteLinks::Parsed(links) => !links.is_empty(),
            NoteLinks::Saved(bytes) => {
                let may_match = |target: &str| {
                    let stem = kb_domain::links::target_stem(target);
                    !stem.is_ascii() || keys.iter().any(|key| stem.eq_ignore_ascii_case(key))
                };
                // Links that cannot be read are decoded, which reports them.
                saved_catalogue::any_link_target(bytes, may_match).unwrap_or(true)
            }
        }
    }

    /// [`NoteLinks::parsed`], owned.
    pub(crate) fn into_parsed(self) -> Vec<(Link, String)> {
        match self {
            NoteLinks::Parsed(links) => links,
            NoteLinks::Saved(bytes) => decode(&bytes),
        }
    }
}

/// The links in `bytes`, the saved catalogue's form; none when they cannot be read.
fn decode(bytes: &[u8]) -> Vec<(Link, String)> {
    saved_catalogue::decode_links(bytes).unwrap_or_else(|| {
        tracing::warn!("a note's links in the saved catalogue cannot be read; kept as none until it changes");
        Vec::new()
    })
}

/// A note's links as written and its aliases.
type Written = (NoteLinks, Vec<String>);

/// The link graph, or the notes it is to be made of.
#[derive(Debug, Default)]
pub(crate) struct LazyLinks {
    /// The graph, once resolved (empty while `written` holds the notes).
    graph: LinkGraph,
    /// Until resolved: each note's links and aliases, by path (the text the note's
    /// [`kb_domain::EntryPath`] holds, shared).
    written: Option<BTreeMap<Arc<str>, Written>>,
}

impl LazyLinks {
    /// The links of these notes (path, links with their lines, aliases), resolved when
    /// first needed.
    pub(crate) fn of_notes(notes: impl IntoIterator<Item = (Arc<str>, NoteLinks, Vec<String>)>) -> LazyLinks {
        let written = notes.into_iter().map(|(path, links, aliases)| (path, (links, aliases))).collect();
        LazyLinks { graph: LinkGraph::default(), written: Some(written) }
    }

    /// The resolved graph, resolving it now if it is not yet.
    pub(crate) fn graph(&mut self) -> &LinkGraph {
        if let Some(notes) = self.written.take() {
            let notes = notes
                .into_iter()
                .map(|(path, (links, aliases))| (path.to_string(), links.into_parsed(), aliases));
            self.graph = LinkGraph::of_notes(notes);
        }
        &self.graph
    }

    /// A graph that answers for the note at `path` (its links and its backlinks) as the
    /// resolved graph does: that graph once resolved, else the graph of only the notes
    /// around it (see [`LinkGraph::around`]), leaving the whole unresolved. `kb show` at
    /// 10,000 notes then costs a few milliseconds, not the 70 resolving them all takes.
    pub(crate) fn around(&self, path: &str) -> Cow<'_, LinkGraph> {
        match &self.written {
            None => Cow::Borrowed(&self.graph),
            Some(notes) => {
                // Any note's links may lead to this one, but only through its keys: the
                // links of a note that holds none of them are not read (they cannot
                // change this note's links or backlinks).
                let aliases = notes.get(path).map_or(&[][..], |(_, aliases)| aliases.as_slice());
                let keys = kb_domain::links::note_keys(path, aliases);
                let none = Cow::Borrowed(&[][..]);
                let parsed: Vec<_> = notes
                    .iter()
                    .map(|(p, (links, aliases))| {
                        let read = p.as_ref() == path || links.may_lead_to(&keys);
                        (p.as_ref(), if read { links.parsed() } else { none.clone() }, aliases.as_slice())
                    })
                    .collect();
                Cow::Owned(LinkGraph::around(
                    parsed.iter().map(|(p, links, aliases)| (*p, links.as_ref(), *aliases)),
                    path,
                ))
            }
        }
    }

    /// Records the note at `path` with these links and aliases (replacing what it had).
    pub(crate) fn upsert(&mut self, path: &str, links: NoteLinks, aliases: &[String]) {
        match &mut self.written {
            Some(notes) => {
                notes.insert(Arc::from(path), (links, aliases.to_vec()));
            }
            None => self.graph.upsert_parsed(path, links.into_parsed(), aliases),
        }
    }

    /// Forgets the note at `path`.
    pub(crate) fn remove(&mut self, path: &str) {
        match &mut self.written {
            Some(notes) => {
                notes.remove(path);
            }
            None => self.graph.remove(path),
        }
    }

    /// The links of the note at `path` as written, in order, each with its line (in the
    /// form they are kept in: a saved form is not read).
    pub(crate) fn note_links(&self, path: &str) -> NoteLinks {
        match &self.written {
            Some(notes) => notes.get(path).map_or(NoteLinks::Parsed(Vec::new()), |(links, _)| links.clone()),
            None => NoteLinks::Parsed(
                self.graph.links_of(path).iter().map(|l| (l.link.clone(), l.line_text.clone())).collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use kb_domain::links::links_in;

    use super::*;

    fn note(path: &str, body: &str, aliases: &[&str]) -> (Arc<str>, NoteLinks, Vec<String>) {
        (
            Arc::from(path),
            NoteLinks::Parsed(links_in(body)),
            aliases.iter().map(ToString::to_string).collect(),
        )
    }

    /// A note whose links are in the saved catalogue's form.
    fn saved_note(path: &str, body: &str, aliases: &[&str]) -> (Arc<str>, NoteLinks, Vec<String>) {
        let bytes = saved_catalogue::encode_links(&links_in(body));
        (Arc::from(path), NoteLinks::Saved(bytes.into()), aliases.iter().map(ToString::to_string).collect())
    }

    /// Where every note's links lead and what links to it, as a person would read them.
    fn seen(graph: &LinkGraph, paths: &[&str]) -> Vec<String> {
        let mut seen = Vec::new();
        for path in paths {
            for link in graph.links_of(path) {
                seen.push(format!("{path} -> {:?} ({})", link.to, link.line_text));
            }
            for back in graph.backlinks_of(path) {
                seen.push(format!("{path} <- {} ({})", back.from, back.line_text));
            }
        }
        seen
    }

    #[test]
    fn changes_made_before_resolving_end_as_if_made_to_the_graph() {
        // Two notes as the saved catalogue keeps them, one as read from its file.
        let start = [
            saved_note("people/anna.md", "My sister. See [[Garden]].", &["Sis"]),
            note("ideas/garden.md", "Plant [[Tomatoes]] with [[Sis]].", &[]),
            saved_note("ideas/tomatoes.md", "Red ones, ask [[Anna]].", &[]),
            saved_note("ideas/herbs.md", "Basil, by [[Tomatoes]].", &[]),
            // Links in another case, or to no note here: their keys are looked for in the
            // saved form before it is read.
            saved_note(
                "ideas/soil.md",
                "Mulch the [[GARDEN]], then [[Ideas/TOMATOES.md|the red ones]].",
                &[],
            ),
            saved_note("ideas/stray.md", "Nothing here: [[Elsewhere]], [[Zoë]].", &[]),
        ];
        let mut lazy = LazyLinks::of_notes(start.clone());
        let mut eager = LinkGraph::of_notes(
            start.into_iter().map(|(path, links, aliases)| (path.to_string(), links.into_parsed(), aliases)),
        );
        // Changed before anything asked where links lead: kept as written.
        let (path, links, aliases) = note("ideas/garden.md", "Plant [[Peppers]] with [[Anna]].", &["Plot"]);
        lazy.upsert(&path, links.clone(), &aliases);
        eager.upsert_parsed(&path, links.into_parsed(), &aliases);
        let (path, links, aliases) = note("ideas/peppers.md", "Hot. Back to [[Plot]].", &[]);
        lazy.upsert(&path, links.clone(), &aliases);
        eager.upsert_parsed(&path, links.into_parsed(), &aliases);
        lazy.remove("ideas/tomatoes.md");
        eager.remove("ideas/tomatoes.md");
        assert_eq!(lazy.note_links("ideas/peppers.md").parsed().len(), 1);
        assert!(lazy.note_links("ideas/tomatoes.md").parsed().is_empty());
        // A saved note's links come back with their lines.
        let herbs = lazy.note_links("ideas/herbs.md").into_parsed();
        assert_eq!(
            herbs.iter().map(|(_, line)| line.as_str()).collect::<Vec<_>>(),
            ["Basil, by [[Tomatoes]]."]
        );

        let paths = [
            "people/anna.md",
            "ideas/garden.md",
            "ideas/tomatoes.md",
            "ideas/peppers.md",
            "ideas/herbs.md",
            "ideas/soil.md",
            "ideas/stray.md",
        ];
        // One note's links, asked before anything is resolved, are those of the whole graph.
        for path in paths {
            assert_eq!(seen(&lazy.around(path), &[path]), seen(&eager, &[path]), "{path}");
        }
        assert!(lazy.written.is_some(), "answering for one note resolved the whole graph");
        let resolved = seen(lazy.graph(), &paths);
        assert_eq!(resolved, seen(&eager, &paths));
        assert!(
            resolved.iter().any(|l| l.contains("ideas/peppers.md -> Some(\"ideas/garden.md\")")),
            "{resolved:?}"
        );

        // Once resolved, changes go to the graph itself.
        lazy.remove("people/anna.md");
        eager.remove("people/anna.md");
        assert_eq!(seen(lazy.graph(), &paths), seen(&eager, &paths));
    }
}
