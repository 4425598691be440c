//! The vault's link graph, resolved at its first use. Resolving every link of a vault is
//! over half of building kb's view of it (about 1 s of 1.6 s at 100,000 notes); a command
//! that lists, counts, digests or files a note never needs it, so until something asks
//! where links lead across the vault (a move's wikilinks, a context) the notes' links are
//! only kept as written. In a one-shot command one note's links and backlinks (`kb show`)
//! are answered from the few notes around it, leaving the rest unresolved; a long-running
//! process, which answers many, resolves the whole graph at the first.

use std::borrow::Cow;
use std::collections::BTreeMap;

use kb_domain::links::{Link, LinkGraph};

/// A note's links as written (each with its line) and its aliases.
type Written = (Vec<(Link, String)>, Vec<String>);

/// The link graph, or the notes it is to be made of.
#[derive(Debug, Default)]
pub(crate) struct LazyLinks {
    /// The graph, once resolved (empty while `written` holds the notes).
    graph: LinkGraph,
    /// Until resolved: each note's links and aliases, by path.
    written: Option<BTreeMap<String, Written>>,
}

impl LazyLinks {
    /// The links of these notes (path, links with their lines, aliases), resolved when
    /// first needed.
    pub(crate) fn of_notes(
        notes: impl IntoIterator<Item = (String, Vec<(Link, String)>, Vec<String>)>,
    ) -> LazyLinks {
        let written = notes.into_iter().map(|(path, links, aliases)| (path, (links, aliases))).collect();
        LazyLinks { graph: LinkGraph::default(), written: Some(written) }
    }

    /// The resolved graph, resolving it now if it is not yet.
    pub(crate) fn graph(&mut self) -> &LinkGraph {
        if let Some(notes) = self.written.take() {
            let notes = notes.into_iter().map(|(path, (links, aliases))| (path, links, aliases));
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
            Some(notes) => Cow::Owned(LinkGraph::around(
                notes.iter().map(|(p, (links, aliases))| (p.as_str(), links.as_slice(), aliases.as_slice())),
                path,
            )),
        }
    }

    /// Records the note at `path` with these links and aliases (replacing what it had).
    pub(crate) fn upsert_parsed(&mut self, path: &str, links: Vec<(Link, String)>, aliases: &[String]) {
        match &mut self.written {
            Some(notes) => {
                notes.insert(path.to_string(), (links, aliases.to_vec()));
            }
            None => self.graph.upsert_parsed(path, links, aliases),
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

    /// The links of the note at `path` as written, in order, each with its line.
    pub(crate) fn written_links_of(&self, path: &str) -> Vec<(&Link, &str)> {
        match &self.written {
            Some(notes) => notes
                .get(path)
                .map(|(links, _)| links.iter().map(|(link, line)| (link, line.as_str())).collect())
                .unwrap_or_default(),
            None => self.graph.links_of(path).iter().map(|l| (&l.link, l.line_text.as_str())).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use kb_domain::links::links_in;

    use super::*;

    fn note(path: &str, body: &str, aliases: &[&str]) -> (String, Vec<(Link, String)>, Vec<String>) {
        (path.to_string(), links_in(body), aliases.iter().map(ToString::to_string).collect())
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
        let start = [
            note("people/anna.md", "My sister. See [[Garden]].", &["Sis"]),
            note("ideas/garden.md", "Plant [[Tomatoes]] with [[Sis]].", &[]),
            note("ideas/tomatoes.md", "Red ones, ask [[Anna]].", &[]),
        ];
        let mut lazy = LazyLinks::of_notes(start.clone());
        let mut eager = LinkGraph::of_notes(start);
        // Changed before anything asked where links lead: kept as written.
        let (path, links, aliases) = note("ideas/garden.md", "Plant [[Peppers]] with [[Anna]].", &["Plot"]);
        lazy.upsert_parsed(&path, links.clone(), &aliases);
        eager.upsert_parsed(&path, links, &aliases);
        let (path, links, aliases) = note("ideas/peppers.md", "Hot. Back to [[Plot]].", &[]);
        lazy.upsert_parsed(&path, links.clone(), &aliases);
        eager.upsert_parsed(&path, links, &aliases);
        lazy.remove("ideas/tomatoes.md");
        eager.remove("ideas/tomatoes.md");
        assert_eq!(lazy.written_links_of("ideas/peppers.md").len(), 1);
        assert!(lazy.written_links_of("ideas/tomatoes.md").is_empty());

        let paths = ["people/anna.md", "ideas/garden.md", "ideas/tomatoes.md", "ideas/peppers.md"];
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
