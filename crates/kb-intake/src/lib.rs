//! kb's intake adapters: what people send kb besides typed text, made into text kb can file.
//!
//! - [`web`]: [`WebReader`], the [`PageReader`](kb_domain::PageReader) that fetches a
//!   link's page from public addresses only, within a deadline and a size limit, and keeps
//!   its article as Markdown.
//! - [`files`]: what text a file handed to kb holds (a PDF's, a text file's).
//! - [`mail`]: a mail read (text, attachments) and its sender checked.
//! - [`mailbox`]: the IMAP folder kb watches for mail to file.

pub mod files;
pub mod mail;
pub mod mailbox;
pub mod web;

pub use files::{FileKind, FileTextError, file_kind, file_text};
pub use web::{FetchSettings, HostResolver, SystemResolver, WebReader};
