//! Which note a link leads to, by Obsidian's rules: a target holding no `/` names a file
//! anywhere in the vault (case aside; when several share the name, the one at the vault
//! root, else the one nearest the linking note); one holding a `/` is a path, from the vault
//! root, from the linking note's folder (Markdown links), or else the end of a path; and a
//! target that names no file may be one of a note's `aliases:`. kb's `name:` field is not a
//! link target.
//!
//! [`LinkResolver::resolve_moved`] reads the vault as it will be once a note has moved,
//! without copying it, so a move can tell how to rewrite the links it touches.

use std::collections::{BTreeSet, HashMap};

use super::{Link, LinkForm};

/// The notes of a vault, indexed for resolving links, kept up to date note by note. Paths
/// are vault-relative with `/` (`Work/Clients/acme.md`).
#[derive(Debug, Clone, Default)]
pub struct LinkResolver {
    /// Each note's path by its lowercased path without `.md`.
    by_path: HashMap<String, String>,
    /// Notes by lowercased file name without `.md`.
    by_stem: HashMap<String, BTreeSet<String>>,
    /// Notes by lowercased alias.
    by_alias: HashMap<String, BTreeSet<String>>,
    /// Each note's lowercased aliases, to forget them with the note.
    aliases: HashMap<String, Vec<String>>,
}

impl LinkResolver {
    /// The resolver of `notes`: each a path with the note's aliases.
    pub fn new<'a>(notes: impl IntoIterator<Item = (&'a str, Vec<String>)>) -> LinkResolver {
        let mut resolver = LinkResolver::default();
        for (path, aliases) in notes {
            resolver.insert(path, &aliases);
        }
        resolver
    }

    /// Adds the note at `path` (replacing what was known of it).
    pub fn insert(&mut self, path: &str, aliases: &[String]) {
        self.remove(path);
        let key = key_of(path);
        self.by_stem.entry(stem(&key).to_string()).or_default().insert(path.to_string());
        self.by_path.insert(key, path.to_string());
        let aliases: Vec<String> =
            aliases.iter().map(|a| a.trim().to_lowercase()).filter(|a| !a.is_empty()).collect();
        for alias in &aliases {
            self.by_alias.entry(alias.clone()).or_default().insert(path.to_string());
        }
        self.aliases.insert(path.to_string(), aliases);
    }

    /// Forgets the note at `path`.
    pub fn remove(&mut self, path: &str) {
        let Some(aliases) = self.aliases.remove(path) else { return };
        let key = key_of(path);
        self.by_path.remove(&key);
        forget(&mut self.by_stem, stem(&key), path);
        for alias in aliases {
            forget(&mut self.by_alias, &alias, path);
        }
    }

    /// The lowercased names and aliases of the note at `path`: a link whose
    /// [`link_key`] is one of them may lead to it.
    pub fn keys_of(&self, path: &str) -> Vec<String> {
        let mut keys = vec![stem(&key_of(path)).to_string()];
        keys.extend(self.aliases.get(path).into_iter().flatten().cloned());
        keys
    }

    /// The note `link`, written in the note at `from`, leads to.
    pub fn resolve(&self, from: &str, link: &Link) -> Option<&str> {
        self.resolve_target(from, &link.target, link.form, None)
    }

    /// The note `link`, written in the note at `source`, would lead to once the note at
    /// `from` is at `to`: moved there (`to` is no note yet: it takes `from`'s aliases) or
    /// merged into it (`to` is a note: it keeps its own aliases, `from`'s go). The note at
    /// `from` itself then reads its links from `to`. Nothing is copied: this costs what
    /// [`LinkResolver::resolve`] costs, whatever the size of the vault.
    pub fn resolve_moved<'a>(
        &'a self,
        source: &str,
        link: &Link,
        from: &str,
        to: &'a str,
    ) -> Option<&'a str> {
        self.resolve_written(source, &link.target, link.form, (from, to))
    }

    /// The note a link of `form` whose target is written `target`, in the note at `source`,
    /// would lead to once the note at `from` is at `to` (see [`LinkResolver::resolve_moved`]).
    pub(super) fn resolve_written<'a>(
        &'a self,
        source: &str,
        target: &str,
        form: LinkForm,
        moved: (&str, &'a str),
    ) -> Option<&'a str> {
        self.route_written(source, target, form, moved).map(|(path, _)| path)
    }

    /// [`LinkResolver::resolve_written`], with how the note was found.
    pub(super) fn route_written<'a>(
        &'a self,
        source: &str,
        target: &str,
        form: LinkForm,
        (from, to): (&str, &'a str),
    ) -> Option<(&'a str, Route)> {
        if from == to {
            return self.route_target(source, target, form, None);
        }
        let moved = Moved { from, to, to_is_new: !self.aliases.contains_key(to) };
        let source = if source == from { to } else { source };
        self.route_target(source, target, form, Some(moved))
    }

    /// The aliases of the note at `path`, lowercased.
    pub(super) fn aliases_of(&self, path: &str) -> &[String] {
        self.aliases.get(path).map_or(&[], Vec::as_slice)
    }

    /// The note `target` names: see [`LinkResolver::route_target`].
    fn resolve_target<'a>(
        &'a self,
        from: &str,
        target: &str,
        form: LinkForm,
        moved: Option<Moved<'_, 'a>>,
    ) -> Option<&'a str> {
        self.route_target(from, target, form, moved).map(|(path, _)| path)
    }

    /// The note `target` names and how it was found: a path starting with `./` or `../`
    /// from the linking note's folder only; a Markdown link not starting with `/` from that
    /// folder first; then from the vault root; then (unless it starts with `/`) as the end
    /// of a path, a file name, or an alias. With `moved`, as if that note had moved.
    fn route_target<'a>(
        &'a self,
        from: &str,
        target: &str,
        form: LinkForm,
        moved: Option<Moved<'_, 'a>>,
    ) -> Option<(&'a str, Route)> {
        let written = target.trim();
        let rooted = written.starts_with('/');
        let relative = is_relative(written);
        let wanted = without_md(written.trim_start_matches('/')).to_lowercase();
        if wanted.is_empty() {
            return None;
        }
        let found_at = |key: Option<String>| key.and_then(|key| self.note_at(&key, moved));
        if relative || (form == LinkForm::Markdown && !rooted) {
            let here = found_at(normalize(&join(folder(from), &wanted)));
            // A wikilink written from its folder is read from there only.
            if here.is_some() || (relative && form != LinkForm::Markdown) {
                // From a note at the root, a path through folders (`Work/w.md`) is written
                // from the root as much as from its folder: it stays one if the note moves.
                let from_root = folder(from).is_empty() && !relative && wanted.contains('/');
                let route = if from_root { Route::Root } else { Route::Folder };
                return here.map(|path| (path, route));
            }
        }
        // A note at the root is named by its path as much as by its file name: Obsidian
        // writes it so when several share its name.
        let at_root = found_at(normalize(&wanted));
        if at_root.is_some() || rooted {
            return at_root.map(|path| (path, Route::Root));
        }
        let mut namesakes = self.namesakes(stem(&wanted), moved).peekable();
        let elsewhere = if wanted.contains('/') {
            let suffix = format!("/{wanted}");
            nearest(from, namesakes.filter(|path| key_of(path).ends_with(&suffix)))
        } else if namesakes.peek().is_some() {
            nearest(from, namesakes)
        } else {
            nearest(from, self.aliased(&wanted, moved))
        };
        elsewhere.map(|path| (path, Route::Elsewhere))
    }

    /// The note `link`, in the note at `source`, leads to and how it was found.
    pub(super) fn route(&self, source: &str, link: &Link) -> Option<(&str, Route)> {
        self.route_target(source, &link.target, link.form, None)
    }

    /// Whether the wikilink target `target` (a vault path or the end of one, without a
    /// leading `./` or `../`) names `wanted` and no other note once `from` is at `to`: it is
    /// `wanted`'s whole path, or `wanted` is the one note whose path ends with it. A bare
    /// name that several notes share is not unique, whichever of them a tie-break picks.
    pub(super) fn names_only(&self, target: &str, wanted: &str, (from, to): (&str, &str)) -> bool {
        let key = without_md(target.trim_start_matches('/')).to_lowercase();
        if key == key_of(wanted) {
            return true;
        }
        let moved = (from != to).then(|| Moved { from, to, to_is_new: !self.aliases.contains_key(to) });
        let suffix = format!("/{key}");
        let mut named = self.namesakes(stem(&key), moved).filter(|path| {
            let path_key = key_of(path);
            path_key == key || path_key.ends_with(&suffix)
        });
        named.next() == Some(wanted) && named.next().is_none()
    }

    /// The note whose lowercased path without `.md` is `key`.
    fn note_at<'a>(&'a self, key: &str, moved: Option<Moved<'_, 'a>>) -> Option<&'a str> {
        if let Some(moved) = moved
            && key_of(moved.to) == key
        {
            return Some(moved.to);
        }
        let found = self.by_path.get(key).map(String::as_str);
        found.filter(|path| moved.is_none_or(|moved| *path != moved.from))
    }

    /// The notes whose lowercased file name without `.md` is `name`.
    fn namesakes<'a>(&'a self, name: &str, moved: Option<Moved<'_, 'a>>) -> impl Iterator<Item = &'a str> {
        let arriving = moved.filter(|moved| stem(&key_of(moved.to)) == name).map(|moved| moved.to);
        self.known(self.by_stem.get(name), moved).chain(arriving)
    }

    /// The notes with the lowercased alias `alias`.
    fn aliased<'a>(&'a self, alias: &str, moved: Option<Moved<'_, 'a>>) -> impl Iterator<Item = &'a str> {
        let arriving = moved
            .filter(|moved| {
                // A moved note takes its aliases along; a note merged into keeps its own.
                let carrier = if moved.to_is_new { moved.from } else { moved.to };
                self.aliases_of(carrier).iter().any(|known| known == alias)
            })
            .map(|moved| moved.to);
        self.known(self.by_alias.get(alias), moved).chain(arriving)
    }

    /// The notes of `set` but the two a move changes (those the caller adds back as they
    /// will be).
    fn known<'a>(
        &'a self,
        set: Option<&'a BTreeSet<String>>,
        moved: Option<Moved<'_, 'a>>,
    ) -> impl Iterator<Item = &'a str> {
        set.into_iter()
            .flatten()
            .map(String::as_str)
            .filter(move |path| moved.is_none_or(|moved| *path != moved.from && *path != moved.to))
    }
}

/// How a link found its note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// From the linking note's folder.
    Folder,
    /// From the vault root.
    Root,
    /// As the end of a path, a file name or an alias.
    Elsewhere,
}

/// A note moving, as [`LinkResolver::resolve_moved`] reads the vault.
#[derive(Debug, Clone, Copy)]
struct Moved<'f, 'a> {
    /// Where it was.
    from: &'f str,
    /// Where it goes.
    to: &'a str,
    /// Whether no note is at `to` yet (a move, not a merge).
    to_is_new: bool,
}

/// The lowercased last component of what a link names (without `.md`): only a note with
/// that file name or alias can be where it leads.
pub fn link_key(link: &Link) -> String {
    target_stem(&link.target).to_lowercase()
}

/// The part of a link's target its [`link_key`] is made of (the file name, without a
/// folder or `.md`), as written.
pub fn target_stem(target: &str) -> &str {
    stem(without_md(target.trim()))
}

/// The keys under which a link may lead to the note at `path` with `aliases`: its file
/// name without `.md`, and each alias, lowercased (a link's [`link_key`] must be one).
pub fn note_keys(path: &str, aliases: &[String]) -> Vec<String> {
    let aliases = aliases.iter().map(|a| a.trim().to_lowercase()).filter(|a| !a.is_empty());
    std::iter::once(stem(without_md(path)).to_lowercase()).chain(aliases).collect()
}

/// Removes `path` from the set under `key`, and the set once empty.
fn forget(map: &mut HashMap<String, BTreeSet<String>>, key: &str, path: &str) {
    if let Some(set) = map.get_mut(key) {
        set.remove(path);
        if set.is_empty() {
            map.remove(key);
        }
    }
}

/// Of several notes, the one nearest `from`: in its folder, then the one sharing the most
/// folders with it, then the one nearest the vault root, then the first by path.
fn nearest<'a>(from: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let from_folder = folder(from).to_lowercase();
    let key = |path: &'a str| {
        let there = folder(path).to_lowercase();
        let elsewhere = there != from_folder;
        (elsewhere, usize::MAX - shared_folders(&from_folder, &there), path.matches('/').count(), path)
    };
    candidates.min_by_key(|path| key(path))
}

/// A note's lowercased path without `.md`.
fn key_of(path: &str) -> String {
    without_md(path).to_lowercase()
}

/// The path without a final `.md` (any case).
pub(super) fn without_md(path: &str) -> &str {
    if path.len() >= 3
        && path.is_char_boundary(path.len() - 3)
        && path[path.len() - 3..].eq_ignore_ascii_case(".md")
    {
        &path[..path.len() - 3]
    } else {
        path
    }
}

/// The last component of a path.
pub(super) fn stem(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder of a vault path (`""` at the root).
pub(super) fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// `relative` under `folder`.
fn join(folder: &str, relative: &str) -> String {
    if folder.is_empty() { relative.to_string() } else { format!("{}/{relative}", folder.to_lowercase()) }
}

/// Whether a target is written from the linking note's folder: `./x` or `../x`.
pub(super) fn is_relative(target: &str) -> bool {
    target.starts_with("./") || target.starts_with("../")
}

/// The path leading from inside `folder` to `path` (both vault paths): `path` without
/// `folder`'s components when it lies below it (`sub/b.md`), else climbing with `..`
/// (`../projects/b.md`).
pub(crate) fn relative_path(folder: &str, path: &str) -> String {
    let from: Vec<&str> = folder.split('/').filter(|s| !s.is_empty()).collect();
    let target: Vec<&str> = path.split('/').collect();
    let target_folders = &target[..target.len() - 1];
    let common = from.iter().zip(target_folders).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&target[common..]);
    parts.join("/")
}

/// A path with its `.` and `..` components worked out; `None` when it leaves the vault.
pub(crate) fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// How many leading folders two folder paths share.
fn shared_folders(a: &str, b: &str) -> usize {
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    a.split('/').zip(b.split('/')).take_while(|(x, y)| x == y).count()
}
