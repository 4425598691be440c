//! The vault's files that are not notes (images, PDFs, drawings), known by name so that a
//! link to one (`![[photo.png]]`, `[doc](file.pdf)`) is told from a broken link. Only the
//! folder listings are read, never the files; the vault's scope applies (hidden folders,
//! `.gitignore`, `.kbignore`, `KB_EXCLUDE`).
//!
//! The list is made when a link first needs it (an entry with a link that leads to no
//! note), not at every start; it is listed again only when a link names no file it knows
//! and the list is older than [`RELIST_AFTER`], so a file added since is found, and the
//! folders are listed at most once in that time however many links are asked about.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kb_domain::{Attachments, EntryLinks, EntryPath};

use super::{Vault, scan};

/// How old the list may be before a link naming no file it knows has the folders listed
/// again.
pub(crate) const RELIST_AFTER: Duration = Duration::from_secs(5);

/// The files of the vault that are not notes, as last listed, and when.
#[derive(Debug, Default)]
pub(crate) struct KnownAttachments {
    listed: Mutex<Option<(Arc<Attachments>, Instant)>>,
}

impl KnownAttachments {
    /// The list as it is, making it when there is none; with `relist`, made again when
    /// older than [`RELIST_AFTER`].
    fn get(&self, vault: &Vault, relist: bool) -> Arc<Attachments> {
        let mut listed = kb_domain::sync::lock(&self.listed);
        match &*listed {
            Some((files, at)) if !(relist && at.elapsed() >= RELIST_AFTER) => files.clone(),
            _ => {
                let files = Arc::new(Attachments::new(scan::other_files(&vault.root)));
                *listed = Some((files.clone(), Instant::now()));
                files
            }
        }
    }
}

impl Vault {
    /// `links` (those of the entry at `source`) with each link that leads to no note but
    /// to a file of the vault marked as a link to that file.
    pub(super) fn with_files(&self, source: &EntryPath, mut links: EntryLinks) -> EntryLinks {
        if links.links.iter().all(|link| link.path.is_some()) {
            return links;
        }
        let mut files = self.attachments.get(self, false);
        let mut relisted = false;
        for link in &mut links.links {
            if link.path.is_some() {
                continue;
            }
            let mut found = files.find(source.as_str(), &link.name).map(str::to_string);
            if found.is_none() && !relisted {
                files = self.attachments.get(self, true);
                relisted = true;
                found = files.find(source.as_str(), &link.name).map(str::to_string);
            }
            if let Some(file) = found {
                *link = link.clone().to_file(file);
            }
        }
        links
    }
}
