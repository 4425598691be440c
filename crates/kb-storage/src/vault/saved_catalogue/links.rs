//! A note's links as the saved catalogue keeps them: one postcard byte string per note,
//! decoded only when the note's links are needed, and its targets readable in place.

use kb_domain::links::{Link, LinkForm};
use serde::{Deserialize, Serialize};

/// A note's links as the saved catalogue keeps them: nothing for none, else the
/// [`SavedLink`]s in postcard.
pub(crate) fn encode_links(links: &[(Link, String)]) -> Vec<u8> {
    if links.is_empty() {
        return Vec::new();
    }
    let saved: Vec<SavedLink> =
        links.iter().map(|(link, line_text)| SavedLink::of(link, line_text)).collect();
    // Plain data into a growing buffer: there is nothing postcard could refuse.
    postcard::to_stdvec(&saved).unwrap_or_default()
}

/// The links [`encode_links`] gave `bytes`; `None` when they cannot be read.
pub(crate) fn decode_links(bytes: &[u8]) -> Option<Vec<(Link, String)>> {
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    let saved: Vec<SavedLink> = postcard::from_bytes(bytes).ok()?;
    saved.into_iter().map(SavedLink::link).collect()
}

/// Whether `wanted` holds for a target of the links in `bytes` (the form [`encode_links`]
/// gives), read in place without decoding the links; `None` when `bytes` cannot be read.
/// Each [`SavedLink`] is, in postcard: its form (one byte), its target, its heading and
/// alias (each a 0/1 byte, then the text), its line, start and end (varints), its line.
pub(crate) fn any_link_target(bytes: &[u8], mut wanted: impl FnMut(&str) -> bool) -> Option<bool> {
    if bytes.is_empty() {
        return Some(false);
    }
    let mut reader = Varints(bytes);
    for _ in 0..reader.varint()? {
        reader.take(1)?;
        let target = std::str::from_utf8(reader.text()?).ok()?;
        if wanted(target) {
            return Some(true);
        }
        for _ in 0..2 {
            if reader.take(1)? == [1] {
                reader.text()?;
            }
        }
        for _ in 0..3 {
            reader.varint()?;
        }
        reader.text()?;
    }
    Some(false)
}

/// postcard's bytes, read from the front.
struct Varints<'a>(&'a [u8]);

impl<'a> Varints<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (taken, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(taken)
    }

    /// A LEB128 varint (at most ten bytes).
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let byte = *self.take(1)?.first()?;
            value |= u64::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// A length-prefixed byte string.
    fn text(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.varint()?).ok()?;
        self.take(len)
    }
}

/// One link as written.
#[derive(Serialize, Deserialize)]
struct SavedLink {
    /// 0 wiki, 1 embed, 2 Markdown.
    form: u8,
    target: String,
    heading: Option<String>,
    alias: Option<String>,
    line: u32,
    start: u32,
    end: u32,
    line_text: String,
}

impl SavedLink {
    fn of(link: &Link, line_text: &str) -> SavedLink {
        let number = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        SavedLink {
            form: match link.form {
                LinkForm::Wiki => 0,
                LinkForm::Embed => 1,
                LinkForm::Markdown => 2,
            },
            target: link.target.clone(),
            heading: link.heading.clone(),
            alias: link.alias.clone(),
            line: number(link.line),
            start: number(link.target_span.start),
            end: number(link.target_span.end),
            line_text: line_text.to_string(),
        }
    }

    fn link(self) -> Option<(Link, String)> {
        let form = match self.form {
            0 => LinkForm::Wiki,
            1 => LinkForm::Embed,
            2 => LinkForm::Markdown,
            _ => return None,
        };
        let link = Link {
            form,
            target: self.target,
            heading: self.heading,
            alias: self.alias,
            line: self.line as usize,
            target_span: self.start as usize..self.end as usize,
        };
        Some((link, self.line_text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The targets read in place are those decoding gives, in order, and a cut or damaged
    /// form is refused or read short, never past its end.
    #[test]
    fn link_targets_are_read_in_place_as_decoding_reads_them() {
        let body = "See [[Priya Raman#Work|her]], ![[kiln.png]], [a](ideas/Zoë%20plan.md) and [[people/Ada]].\n\
                    Then [[x]] — on a line of its own with ümlauts.";
        let links = kb_domain::links::links_in(body);
        let bytes = encode_links(&links);
        let mut read = Vec::new();
        assert_eq!(
            any_link_target(&bytes, |target| {
                read.push(target.to_string());
                false
            }),
            Some(false)
        );
        let decoded: Vec<String> =
            decode_links(&bytes).unwrap().into_iter().map(|(link, _)| link.target).collect();
        assert_eq!(read, decoded);
        assert_eq!(read.len(), 5, "{read:?}");
        assert_eq!(any_link_target(&bytes, |target| target == "x"), Some(true));
        for cut in 0..bytes.len() {
            let _ = any_link_target(&bytes[..cut], |_| false);
        }
        assert_eq!(any_link_target(&bytes[..bytes.len() - 1], |_| false), None);
        assert_eq!(any_link_target(&[], |_| true), Some(false));
    }
}
