//! [`LinkGraph`]: every note's links, where each leads, and each note's backlinks, kept up
//! to date as notes come, change and go. A note's arrival or departure re-resolves only
//! the links that could lead to it (those naming its file name or one of its aliases), so
//! keeping the graph costs the size of the change, not of the vault.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::resolve::{link_key, note_keys, stem, without_md};
use super::{Link, LinkResolver, parse_body_links};

/// The most characters of a line kept beside a link: a long paragraph is one line, and
/// the graph keeps a line for every link of the vault.
pub const LINE_CHARS: usize = 160;

/// The line of `text` holding `span`, trimmed, or the part of it around the span when it
/// is longer than [`LINE_CHARS`] (an `…` where it was cut).
fn line_around(text: &str, span: &std::ops::Range<usize>) -> String {
    let start = text[..span.start].rfind('\n').map_or(0, |n| n + 1);
    let end = text[span.start..].find('\n').map_or(text.len(), |n| span.start + n);
    let line = text[start..end].trim();
    if line.chars().count() <= LINE_CHARS {
        return line.to_string();
    }
    // Up to a third of the room before the link, the rest from it on.
    let line_start = start + (text[start..end].len() - text[start..end].trim_start().len());
    let before: Vec<(usize, char)> = text[line_start..span.start].char_indices().collect();
    let keep_before = before.len().min(LINE_CHARS / 3);
    let from = before.get(before.len() - keep_before).map_or(span.start, |(i, _)| line_start + i);
    let rest = &text[from..line_start + line.len()];
    let cut: String = rest.chars().take(LINE_CHARS).collect();
    let mut snippet = String::new();
    if from > line_start {
        snippet.push('…');
    }
    snippet.push_str(cut.trim());
    if cut.len() < rest.len() {
        snippet.push('…');
    }
    snippet
}

/// The links of a note's body (the text after its frontmatter), each with the text of its
/// line as the graph keeps it.
pub fn links_in(body: &str) -> Vec<(Link, String)> {
    parse_body_links(body)
        .into_iter()
        .map(|link| {
            let line = line_around(body, &link.target_span);
            (link, line)
        })
        .collect()
}

/// One link of a note, with the line it is on and where it leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingLink {
    /// The link as written.
    pub link: Link,
    /// The text of its line, trimmed (around the link when the line is long, see
    /// [`LINE_CHARS`]).
    pub line_text: String,
    /// The note it leads to (`None`: no note, an unresolved link).
    pub to: Option<String>,
}

/// A link to a note from another one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backlink {
    /// The note that links.
    pub from: String,
    /// The link as written.
    pub link: Link,
    /// The text of its line, trimmed.
    pub line_text: String,
}

/// The links between the notes of a vault.
#[derive(Debug, Clone, Default)]
pub struct LinkGraph {
    /// Which note each link leads to.
    resolver: LinkResolver,
    /// Each note's links, in the order written.
    outgoing: HashMap<String, Vec<OutgoingLink>>,
    /// The notes with a link under each [`link_key`].
    by_key: HashMap<String, BTreeSet<String>>,
    /// The notes linking to each note.
    linked_from: HashMap<String, BTreeSet<String>>,
}

impl LinkGraph {
    /// Adds the note at `path`, or takes its new body (the text after its frontmatter) and
    /// aliases.
    pub fn upsert(&mut self, path: &str, body: &str, aliases: &[String]) {
        self.upsert_parsed(path, links_in(body), aliases);
    }

    /// [`LinkGraph::upsert`] with the note's links already parsed (see [`links_in`]): each
    /// link with the text of its line.
    pub fn upsert_parsed(&mut self, path: &str, links: Vec<(Link, String)>, aliases: &[String]) {
        // The names it had: links that led to it by an alias it no longer has go elsewhere.
        let known = self.resolver.keys_of(path);
        self.forget_links_of(path);
        self.resolver.insert(path, aliases);
        let links =
            links.into_iter().map(|(link, line_text)| OutgoingLink { link, line_text, to: None }).collect();
        self.outgoing.insert(path.to_string(), links);
        for outgoing in &self.outgoing[path] {
            self.by_key.entry(link_key(&outgoing.link)).or_default().insert(path.to_string());
        }
        let mut affected = self.resolver.keys_of(path);
        affected.extend(known);
        self.reresolve(&affected, Some(path));
    }

    /// The graph of a whole vault at once: every note (path, links with their lines as
    /// [`links_in`] gives them, aliases) is known before any link is resolved, so each link
    /// is resolved once, however many notes share a name.
    pub fn of_notes(
        notes: impl IntoIterator<Item = (String, Vec<(Link, String)>, Vec<String>)>,
    ) -> LinkGraph {
        let mut graph = LinkGraph::default();
        for (path, links, aliases) in notes {
            graph.resolver.insert(&path, &aliases);
            for (link, _) in &links {
                graph.by_key.entry(link_key(link)).or_default().insert(path.clone());
            }
            let links = links.into_iter().map(|(link, line_text)| OutgoingLink { link, line_text, to: None });
            graph.outgoing.insert(path, links.collect());
        }
        let LinkGraph { resolver, outgoing, linked_from, .. } = &mut graph;
        for (source, links) in outgoing.iter_mut() {
            for outgoing in links.iter_mut() {
                outgoing.to = resolver.resolve(source, &outgoing.link).map(str::to_string);
                if let Some(to) = &outgoing.to {
                    linked_from.entry(to.clone()).or_default().insert(source.clone());
                }
            }
        }
        graph
    }

    /// The part of a vault's graph that answers [`LinkGraph::links_of`] and
    /// [`LinkGraph::backlinks_of`] for the note at `path` exactly as the graph of the whole
    /// vault does: that note, the notes its links may lead to, and the notes with a link
    /// that may lead to it (a link leads only to a note whose file name or alias is its
    /// [`link_key`]). `notes` (path, links with their lines, aliases) is every note of the
    /// vault, looked at twice; only the notes kept are resolved, so one note's links cost a
    /// look at every name and link rather than resolving them all.
    pub fn around<'a, N>(notes: N, path: &str) -> LinkGraph
    where
        N: IntoIterator<Item = (&'a str, &'a [(Link, String)], &'a [String])>,
        N::IntoIter: Clone,
    {
        let notes = notes.into_iter();
        let lowered =
            |aliases: &'a [String]| aliases.iter().map(|a| a.trim().to_lowercase()).filter(|a| !a.is_empty());
        let name_key = |path: &str| stem(without_md(path)).to_lowercase();
        // The keys under which a link may lead to the note, and those its own links name.
        let mut its_keys: HashSet<String> = std::iter::once(name_key(path)).collect();
        let mut named: HashSet<String> = HashSet::new();
        if let Some((_, links, aliases)) = notes.clone().find(|(p, _, _)| *p == path) {
            its_keys = note_keys(path, aliases).into_iter().collect();
            named.extend(links.iter().map(|(link, _)| link_key(link)));
        }
        named.extend(its_keys.iter().cloned());
        let kept = notes.filter(|(p, links, aliases)| {
            *p == path
                || named.contains(&name_key(p))
                || lowered(aliases).any(|alias| named.contains(&alias))
                || links.iter().any(|(link, _)| its_keys.contains(&link_key(link)))
        });
        LinkGraph::of_notes(kept.map(|(p, links, aliases)| (p.to_string(), links.to_vec(), aliases.to_vec())))
    }

    /// Forgets the note at `path`: its links, and where others' links led to it.
    pub fn remove(&mut self, path: &str) {
        if !self.outgoing.contains_key(path) {
            return;
        }
        let keys = self.resolver.keys_of(path);
        self.forget_links_of(path);
        self.outgoing.remove(path);
        self.resolver.remove(path);
        self.reresolve(&keys, None);
    }

    /// The links of the note at `path`, in the order written.
    pub fn links_of(&self, path: &str) -> &[OutgoingLink] {
        self.outgoing.get(path).map_or(&[], Vec::as_slice)
    }

    /// The links to the note at `path` from other notes (and from itself), by linking
    /// note and then in the order written.
    pub fn backlinks_of(&self, path: &str) -> Vec<Backlink> {
        let Some(sources) = self.linked_from.get(path) else { return Vec::new() };
        sources
            .iter()
            .flat_map(|from| {
                self.links_of(from).iter().filter(|l| l.to.as_deref() == Some(path)).map(|l| Backlink {
                    from: from.clone(),
                    link: l.link.clone(),
                    line_text: l.line_text.clone(),
                })
            })
            .collect()
    }

    /// The notes the note at `path` links to, each once, by path.
    pub fn targets_of(&self, path: &str) -> BTreeSet<&str> {
        self.links_of(path).iter().filter_map(|l| l.to.as_deref()).collect()
    }

    /// The notes with a link whose [`link_key`] is `key` (a file name without `.md`,
    /// lowercased), whatever it leads to.
    pub fn notes_with_link_key(&self, key: &str) -> impl Iterator<Item = &str> {
        self.by_key.get(key).into_iter().flatten().map(String::as_str)
    }

    /// The notes that link to the note at `path`, by path.
    pub fn sources_of(&self, path: &str) -> impl Iterator<Item = &str> {
        self.linked_from.get(path).into_iter().flatten().map(String::as_str)
    }

    /// What resolves the vault's links: the state a move starts from, for
    /// [`retarget_wikilinks`](super::retarget_wikilinks).
    pub fn resolver(&self) -> &LinkResolver {
        &self.resolver
    }

    /// The notes whose wikilinks moving the note at `from` to `to` may change, by path: those
    /// linking to it; those with a link naming `to`'s file name or one of `from`'s aliases
    /// (the note may arrive nearer to them than the one they lead to); and the note itself
    /// (it reads its links from a new folder). The others need not be read.
    pub fn notes_touched_by_move(&self, from: &str, to: &str) -> BTreeSet<&str> {
        let arriving = stem(without_md(to)).to_lowercase();
        let keys = self.resolver.aliases_of(from).iter().chain(std::iter::once(&arriving));
        let mut notes: BTreeSet<&str> =
            keys.filter_map(|key| self.by_key.get(key)).flatten().map(String::as_str).collect();
        notes.extend(self.sources_of(from));
        if let Some((path, _)) = self.outgoing.get_key_value(from) {
            notes.insert(path);
        }
        notes
    }

    /// Takes the links of `path` out of the key index and the backlinks they made.
    fn forget_links_of(&mut self, path: &str) {
        let Some(links) = self.outgoing.get_mut(path) else { return };
        for outgoing in links.iter_mut() {
            let key = link_key(&outgoing.link);
            if let Some(set) = self.by_key.get_mut(&key) {
                set.remove(path);
                if set.is_empty() {
                    self.by_key.remove(&key);
                }
            }
            if let Some(to) = outgoing.to.take() {
                unlink(&mut self.linked_from, path, &to);
            }
        }
    }

    /// Resolves again every link under `keys` (the names of a note that came or went),
    /// and every link of `also` (a note whose text is new).
    fn reresolve(&mut self, keys: &[String], also: Option<&str>) {
        let mut sources: BTreeSet<String> =
            keys.iter().filter_map(|key| self.by_key.get(key)).flatten().cloned().collect();
        sources.extend(also.map(str::to_string));
        for source in sources {
            let Some(mut links) = self.outgoing.remove(&source) else { continue };
            for target in links.iter().filter_map(|l| l.to.as_ref()) {
                unlink(&mut self.linked_from, &source, target);
            }
            for outgoing in &mut links {
                outgoing.to = self.resolver.resolve(&source, &outgoing.link).map(str::to_string);
                if let Some(to) = &outgoing.to {
                    self.linked_from.entry(to.clone()).or_default().insert(source.clone());
                }
            }
            self.outgoing.insert(source, links);
        }
    }
}

/// `source` no longer links to `target`.
fn unlink(linked_from: &mut HashMap<String, BTreeSet<String>>, source: &str, target: &str) {
    if let Some(set) = linked_from.get_mut(target) {
        set.remove(source);
        if set.is_empty() {
            linked_from.remove(target);
        }
    }
}
