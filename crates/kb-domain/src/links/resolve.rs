//! Which note a link leads to, by Obsidian's rules: a target holding no `/` names a file
//! anywhere in the vault (case aside; when several share the name, the one at the vault
//! root, else the one nearest the linking note); one holding a `/` is a path, from the vault
//! root, from the linking note's folder (Markdown links), or else the end of a path; and a
//! target that names no file may be one of a note's `aliases:`. kb's `name:` field is not a
//! link target.

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
        self.resolve_target(from, &link.target, link.form)
    }

    /// The note `target` names: read from the linking note's folder (a Markdown link not
    /// starting with `/`), then from the vault root, then (unless it starts with `/`) as the
    /// end of a path, a file name, or an alias.
    fn resolve_target(&self, from: &str, target: &str, form: LinkForm) -> Option<&str> {
        let written = target.trim();
        let rooted = written.starts_with('/');
        let wanted = without_md(written.trim_start_matches('/')).to_lowercase();
        if wanted.is_empty() {
            return None;
        }
        let found_at = |path: Option<String>| path.and_then(|p| self.by_path.get(&p)).map(String::as_str);
        if form == LinkForm::Markdown && !rooted {
            let here = found_at(normalize(&join(folder(from), &wanted)));
            if here.is_some() {
                return here;
            }
        }
        // A note at the root is named by its path as much as by its file name: Obsidian
        // writes it so when several share its name.
        let at_root = found_at(normalize(&wanted));
        if at_root.is_some() || rooted {
            return at_root;
        }
        let namesakes = self.by_stem.get(stem(&wanted));
        if wanted.contains('/') {
            let suffix = format!("/{wanted}");
            let ends = namesakes.into_iter().flatten().filter(|path| key_of(path).ends_with(&suffix));
            return nearest(from, ends);
        }
        match namesakes {
            Some(namesakes) => nearest(from, namesakes.iter()),
            None => self.by_alias.get(&wanted).and_then(|aliased| nearest(from, aliased.iter())),
        }
    }
}

/// The lowercased last component of what a link names (without `.md`): only a note with
/// that file name or alias can be where it leads.
pub fn link_key(link: &Link) -> String {
    stem(without_md(link.target.trim())).to_lowercase()
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
fn nearest<'a>(from: &str, candidates: impl Iterator<Item = &'a String>) -> Option<&'a str> {
    let from_folder = folder(from).to_lowercase();
    let key = |path: &'a String| {
        let there = folder(path).to_lowercase();
        let elsewhere = there != from_folder;
        (elsewhere, usize::MAX - shared_folders(&from_folder, &there), path.matches('/').count(), path)
    };
    candidates.min_by_key(|path| key(path)).map(String::as_str)
}

/// A note's lowercased path without `.md`.
fn key_of(path: &str) -> String {
    without_md(path).to_lowercase()
}

/// The path without a final `.md` (any case).
fn without_md(path: &str) -> &str {
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
fn stem(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder of a vault path (`""` at the root).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// `relative` under `folder`.
fn join(folder: &str, relative: &str) -> String {
    if folder.is_empty() { relative.to_string() } else { format!("{}/{relative}", folder.to_lowercase()) }
}

/// A path with its `.` and `..` components worked out; `None` when it leaves the vault.
fn normalize(path: &str) -> Option<String> {
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
