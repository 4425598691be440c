//! Which note a link leads to, by Obsidian's rules: a target holding no `/` names a file
//! anywhere in the vault (case aside; when several share the name, the one at the vault
//! root, else the one nearest the linking note); one holding a `/` is a path, from the vault root, from the linking note's
//! folder (Markdown links), or else the end of a path; and a target that names no file may
//! be one of a note's `aliases:`. kb's `name:` field is not a link target.

use std::collections::HashMap;

use super::{Link, LinkForm};

/// The notes of a vault, indexed for resolving links. Paths are vault-relative with `/`
/// (`Work/Clients/acme.md`).
#[derive(Debug, Clone, Default)]
pub struct LinkResolver {
    /// Every note's path.
    paths: Vec<String>,
    /// Note indexes by lowercased path without `.md`.
    by_path: HashMap<String, usize>,
    /// Note indexes by lowercased file name without `.md`.
    by_stem: HashMap<String, Vec<usize>>,
    /// Note indexes by lowercased alias.
    by_alias: HashMap<String, Vec<usize>>,
}

impl LinkResolver {
    /// The resolver of `notes`: each a path with the note's aliases.
    pub fn new<'a>(notes: impl IntoIterator<Item = (&'a str, Vec<String>)>) -> LinkResolver {
        let mut resolver = LinkResolver::default();
        for (path, aliases) in notes {
            let index = resolver.paths.len();
            let key = without_md(path).to_lowercase();
            resolver.by_stem.entry(stem(&key).to_string()).or_default().push(index);
            resolver.by_path.insert(key, index);
            for alias in aliases {
                let alias = alias.trim().to_lowercase();
                if !alias.is_empty() {
                    resolver.by_alias.entry(alias).or_default().push(index);
                }
            }
            resolver.paths.push(path.to_string());
        }
        resolver
    }

    /// The note `link`, written in the note at `from`, leads to.
    pub fn resolve(&self, from: &str, link: &Link) -> Option<&str> {
        self.resolve_target(from, &link.target, link.form).map(|index| self.paths[index].as_str())
    }

    /// The index of the note `target` names: read from the linking note's folder (a
    /// Markdown link not starting with `/`), then from the vault root, then (unless it
    /// starts with `/`) as the end of a path, a file name, or an alias.
    fn resolve_target(&self, from: &str, target: &str, form: LinkForm) -> Option<usize> {
        let written = target.trim();
        let rooted = written.starts_with('/');
        let wanted = without_md(written.trim_start_matches('/')).to_lowercase();
        if wanted.is_empty() {
            return None;
        }
        let found_at = |path: Option<String>| path.and_then(|p| self.by_path.get(&p).copied());
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
        if wanted.contains('/') {
            let suffix = format!("/{wanted}");
            let ends: Vec<usize> = (0..self.paths.len())
                .filter(|index| without_md(&self.paths[*index]).to_lowercase().ends_with(&suffix))
                .collect();
            return self.nearest(from, &ends);
        }
        match self.by_stem.get(&wanted) {
            Some(namesakes) => self.nearest(from, namesakes),
            None => self.by_alias.get(&wanted).and_then(|aliased| self.nearest(from, aliased)),
        }
    }

    /// Of several notes, the one nearest `from`: in its folder, then the one sharing the
    /// most folders with it, then the one nearest the vault root, then the first by path.
    fn nearest(&self, from: &str, candidates: &[usize]) -> Option<usize> {
        let from_folder = folder(from).to_lowercase();
        let key = |index: usize| {
            let path = &self.paths[index];
            let there = folder(path).to_lowercase();
            let elsewhere = there != from_folder;
            (elsewhere, usize::MAX - shared_folders(&from_folder, &there), path.matches('/').count(), path)
        };
        candidates.iter().copied().min_by(|a, b| key(*a).cmp(&key(*b)))
    }
}

/// The path without a final `.md` (any case).
fn without_md(path: &str) -> &str {
    if path.len() >= 3 && path[path.len() - 3..].eq_ignore_ascii_case(".md") {
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
