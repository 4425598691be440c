//! Links in a note's properties, as Obsidian reads them: a frontmatter text value holding
//! a wikilink (`up: "[[Target]]"`, `source: "from [[Book#Ch. 2|the book]]"`), or a list of
//! them (`related: ["[[A]]", "[[B]]"]`), links like one in the body. [`property_links`]
//! gives them to the [`LinkGraph`](super::LinkGraph), so they are resolved and counted as
//! backlinks; [`retarget_property_links`] rewrites them when a note moves, by the same rules
//! as the body's wikilinks, changing only the bytes of the target inside the value (quoted
//! as YAML needs, so the value stays valid YAML and reads as before but for the target).
//!
//! A property link is on no line of the body: its `line` is 0 and its `target_span` empty;
//! the line shown beside it is `key: value`.

use std::ops::Range;

use serde_json::Value;

use super::graph::links_in;
use super::retarget::{new_target, splice};
use super::{Link, LinkForm, LinkResolver};
use crate::frontmatter::{
    Frontmatter, WrittenValue, document_spans, parse_frontmatter_yaml, rewrite_value, written_values,
};

/// The links of a note: those of its properties (in the frontmatter's order), then those of
/// its body, each with the text of its line as the graph keeps it (see [`links_in`]).
pub fn note_links(frontmatter: &Frontmatter, body: &str) -> Vec<(Link, String)> {
    let mut links = property_links(frontmatter);
    links.extend(links_in(body));
    links
}

/// The wikilinks and embeds written in the frontmatter's text values and lists of texts,
/// each with `key: value` as its line.
pub fn property_links(frontmatter: &Frontmatter) -> Vec<(Link, String)> {
    let mut links = Vec::new();
    for (key, value) in frontmatter.iter() {
        let texts: Vec<&str> = match value {
            Value::String(text) => vec![text],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for text in texts {
            let line: String = format!("{key}: {text}").chars().take(super::LINE_CHARS).collect();
            for found in wikilinks_in(text) {
                links.push((found.link(text), line.clone()));
            }
        }
    }
    links
}

/// A wikilink found in a text value.
struct ValueLink {
    /// How it is written: a link or an embed.
    form: LinkForm,
    /// Where its target is in the value.
    target: Range<usize>,
    /// Its `#heading`, without the `#`.
    heading: Option<String>,
    /// Its `|alias`.
    alias: Option<String>,
}

impl ValueLink {
    /// The link, as the graph and the resolver take it.
    fn link(&self, text: &str) -> Link {
        Link {
            form: self.form,
            target: text[self.target.clone()].to_string(),
            heading: self.heading.clone(),
            alias: self.alias.clone(),
            line: 0,
            target_span: 0..0,
        }
    }
}

/// The `[[wikilinks]]` and `![[embeds]]` of a text value, in order. A link's target ends at
/// its `#heading` or `|alias`; an empty target (`[[#Heading]]`) or one holding `[` is none.
fn wikilinks_in(text: &str) -> Vec<ValueLink> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("[[").map(|n| at + n) {
        let inner_start = open + 2;
        let Some(close) = text[inner_start..].find("]]").map(|n| inner_start + n) else { break };
        let inner = &text[inner_start..close];
        if inner.contains('[') {
            at = open + 1;
            continue;
        }
        at = close + 2;
        let (reference, alias) = match inner.split_once('|') {
            Some((reference, alias)) => (reference, Some(alias.trim().to_string())),
            None => (inner, None),
        };
        let (target, heading) = match reference.split_once('#') {
            Some((target, heading)) => (target, Some(heading.trim().to_string())),
            None => (reference, None),
        };
        let start = inner_start + (target.len() - target.trim_start().len());
        let trimmed = target.trim();
        if trimmed.is_empty() {
            continue;
        }
        let form = if text[..open].ends_with('!') { LinkForm::Embed } else { LinkForm::Wiki };
        found.push(ValueLink { form, target: start..start + trimmed.len(), heading, alias });
    }
    found
}

/// The text of the note at `source` (its whole file, `text`) with every link in its
/// properties that led to `from` leading to `to`, and every other one still leading where
/// it led, by the rules of [`retarget_wikilinks`](super::retarget_wikilinks); `None` when
/// none changes, or when the frontmatter cannot be changed in place (it then stays as
/// written).
pub fn retarget_property_links(
    source: &str,
    text: &str,
    from: &str,
    to: &str,
    resolver: &LinkResolver,
) -> Option<String> {
    if from == to || !text.contains("[[") {
        return None;
    }
    let yaml_range = document_spans(text).ok()?.yaml?;
    let yaml = &text[yaml_range.clone()];
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut changed: Vec<(&WrittenValue, String)> = Vec::new();
    let values = written_values(yaml)?;
    for written in &values {
        let value = written.value.as_str();
        let mut value_edits = Vec::new();
        for found in wikilinks_in(value) {
            let link = found.link(value);
            let Some(led_to) = resolver.resolve(source, &link) else { continue };
            let wanted = if led_to == from { to } else { led_to };
            if resolver.resolve_moved(source, &link, from, to) == Some(wanted) {
                continue;
            }
            if let Some(target) = new_target(source, &link, wanted, (from, to), resolver) {
                value_edits.push((found.target, target));
            }
        }
        if !value_edits.is_empty() {
            let new_value = splice(value, &value_edits);
            edits.push((written.range.clone(), rewrite_value(yaml, written, &new_value)));
            changed.push((written, new_value));
        }
    }
    if edits.is_empty() {
        return None;
    }
    // The block must read as before but for the changed values.
    let mut expected = parse_frontmatter_yaml(yaml).ok()?;
    for (written, new_value) in changed {
        set_value(&mut expected, written, new_value)?;
    }
    let new_yaml = splice(yaml, &edits);
    if parse_frontmatter_yaml(&new_yaml).ok()? != expected {
        return None;
    }
    Some(format!("{}{new_yaml}{}", &text[..yaml_range.start], &text[yaml_range.end..]))
}

/// Sets the value `written` is (a key's text, or an item of its list) to `new`; `None` when
/// it is not a text there.
fn set_value(frontmatter: &mut Frontmatter, written: &WrittenValue, new: String) -> Option<()> {
    let mut value = frontmatter.get(&written.key)?.clone();
    let place = match written.item {
        None => &mut value,
        Some(n) => value.as_array_mut()?.get_mut(n)?,
    };
    if place.as_str() != Some(written.value.as_str()) {
        return None;
    }
    *place = Value::String(new);
    frontmatter.set(written.key.clone(), value);
    Some(())
}

#[cfg(test)]
mod tests;
