//! Changing kb's entry list file line by line (see [`patch`]): what a change to a few
//! entries costs, where rendering the whole list would cost as much as the vault is large.

use kb_domain::Category;
use kb_domain::references::encode_link_target;

use super::cache::EntryListPatch;
use super::entry_list::{NO_ENTRIES_LINE, entry_of, heading_start, line_target};

/// `text` (kb's entry list as written) with the changes of `patch` made line by line:
/// the changed entries' lines replaced where they stand when the list's order keeps them
/// there (see [`staying_lines`]), else taken out and put after the entry before them (a
/// first entry before the section's first entry line), and the touched sections' counts
/// set; the person's lines stay where they are. `None` when the text does not hold what the patch
/// expects (a section or a line missing, or a section whose lines do not number its
/// entries once patched): the whole list is then rendered instead.
///
/// Only the lines it changes are looked at, found by searching the text for their links,
/// and the lines of the sections whose count it sets: a vault of 100,000 entries has a
/// list of several megabytes, and most changes touch a line or two of it.
pub(crate) fn patch(text: &str, patch: &EntryListPatch) -> Option<String> {
    let headings = Headings::of(text);
    let mut edits = Edits::default();
    let removed: std::collections::HashSet<String> =
        patch.changed.iter().map(|path| encode_link_target(path.as_str())).collect();
    // Every line looked for below, the changed entries' and those the new lines follow,
    // found at once.
    let mut wanted = removed.clone();
    wanted.extend(
        patch
            .lines
            .iter()
            .filter_map(|(_, _, after)| after.as_ref())
            .map(|after| encode_link_target(after.as_str())),
    );
    let linking = LinkingLines::find(text, &wanted);
    for target in &removed {
        edits.dropped.extend(linking.to(target).iter().cloned());
    }
    // Where each new line went, by its link: a line may follow one put in just before it.
    let mut placed: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut added: std::collections::HashMap<Category, usize> = std::collections::HashMap::new();
    // The changed entries' lines replaced where they stand (by their place in the patch).
    let staying = staying_lines(text, &headings, &linking, &removed, patch);
    for (i, (category, line, after)) in patch.lines.iter().enumerate() {
        let section = headings.section(text, *category)?;
        if let Some((own, old)) = staying.get(&i) {
            placed.insert(own.clone(), old.end);
            edits.inserted.push((old.start, std::borrow::Cow::Owned(line.clone())));
            *added.entry(*category).or_default() += 1;
            continue;
        }
        let at = match after {
            Some(after) => {
                let target = encode_link_target(after.as_str());
                match placed.get(&target) {
                    Some(&at) => at,
                    None => {
                        let before =
                            linking.to(&target).iter().find(|line| section.contains(&line.start))?.clone();
                        if edits.dropped.contains(&before) {
                            return None;
                        }
                        before.end
                    }
                }
            }
            // First: before the section's first entry line (or the line saying it has
            // none), else after the heading and its blank line; a note of the person's
            // under the heading stays there.
            None => first_entry_line(text, section.clone())
                .unwrap_or_else(|| line_end(text, line_end(text, section.start)).min(section.end)),
        };
        if let Some(target) = line_target(line) {
            placed.insert(target.to_string(), at);
        }
        edits.inserted.push((at, std::borrow::Cow::Owned(line.clone())));
        *added.entry(*category).or_default() += 1;
    }
    let taken_out: std::collections::HashSet<usize> = edits.dropped.iter().map(|line| line.start).collect();
    for (category, count) in &patch.counts {
        let section = headings.section(text, *category)?;
        let heading = section.start..line_end(text, section.start);
        let mut items = added.get(category).copied().unwrap_or(0);
        let mut none_yet = None;
        let mut at = heading.end;
        while at < section.end {
            let line = at..line_end(text, at);
            let kept = !taken_out.contains(&line.start);
            // Only entries' lines are counted: a link the person put in the list is theirs.
            if kept && line_target(&text[line.clone()]).is_some_and(|target| entry_of(target).is_some()) {
                items += 1;
            } else if kept && &text[line.clone()] == NO_ENTRIES_LINE {
                none_yet = Some(line.clone());
            }
            at = line.end;
        }
        if items != *count {
            return None;
        }
        edits.dropped.push(heading.clone());
        edits.inserted.push((
            heading.start,
            std::borrow::Cow::Owned(format!("{}{count})\n", heading_start(*category))),
        ));
        match (count, none_yet) {
            (0, None) => {
                // After the heading's blank line, past any note of the person's above it.
                let mut at = heading.end;
                while at < section.end && &text[at..line_end(text, at)] != "\n" {
                    at = line_end(text, at);
                }
                let after_blank = line_end(text, at).min(section.end);
                edits.inserted.push((after_blank, std::borrow::Cow::Borrowed(NO_ENTRIES_LINE)));
            }
            (1.., Some(line)) => edits.dropped.push(line),
            _ => {}
        }
    }
    Some(edits.apply(text))
}

/// The link of the entry line nearest before offset `at` (the start of a line of an
/// entry that is `gone`) in the section beginning at `section_start`, leaving out the
/// lines whose entries are `gone`; `None` when there is none. `memo` keeps the answer for
/// each gone line passed, so a run of many changed lines is read once, not once for each.
fn entry_before<'t>(
    text: &'t str,
    section_start: usize,
    at: usize,
    gone: impl Fn(&str) -> bool,
    memo: &mut std::collections::HashMap<usize, Option<&'t str>>,
) -> Option<&'t str> {
    let first = line_end(text, section_start);
    let mut passed = vec![at];
    let mut end = at;
    let found = loop {
        if let Some(known) = memo.get(&end) {
            break *known;
        }
        if end <= first {
            break None;
        }
        let start = memchr::memrchr(b'\n', &text.as_bytes()[..end - 1]).map_or(0, |n| n + 1).max(first);
        if let Some(target) = line_target(&text[start..end]).filter(|t| entry_of(t).is_some()) {
            if !gone(target) {
                break Some(target);
            }
            passed.push(start);
        }
        end = start;
    };
    for start in passed {
        memo.insert(start, found);
    }
    found
}

/// The stretch of a section after the line of one entry that did not change (`None`: from
/// the heading), where the list puts some changed lines.
type GapAfter = (Category, Option<String>);

/// Which of the changed entries' lines (by their place in `patch.lines`, with their link
/// and the line they replace) stay where they stand, so that the person's lines around
/// them stay beside them. The lines of the entries that did not change stand in the list's
/// order; between two of them, the changed lines the list puts there and found there
/// stay, as many as keep the list's order (the longest run of them whose places in the
/// text rise); the others move.
fn staying_lines(
    text: &str,
    headings: &Headings,
    linking: &LinkingLines<'_>,
    removed: &std::collections::HashSet<String>,
    patch: &EntryListPatch,
) -> std::collections::HashMap<usize, (String, std::ops::Range<usize>)> {
    // The unchanged entry each changed line follows in the list (through the changed ones
    // before it), by link; `None`: first in its section.
    let mut follows: std::collections::HashMap<&str, Option<String>> = std::collections::HashMap::new();
    let mut gaps: std::collections::HashMap<GapAfter, Vec<(usize, usize)>> = std::collections::HashMap::new();
    let mut found = std::collections::HashMap::new();
    let mut memo = std::collections::HashMap::new();
    for (i, (category, line, after)) in patch.lines.iter().enumerate() {
        let Some(own) = line_target(line) else { continue };
        let unchanged_before = match after {
            None => Some(None),
            Some(after) => {
                let after = encode_link_target(after.as_str());
                if removed.contains(&after) {
                    follows.get(after.as_str()).cloned()
                } else {
                    Some(Some(after))
                }
            }
        };
        let Some(unchanged_before) = unchanged_before else { continue };
        follows.insert(own, unchanged_before.clone());
        let Some(section) = headings.section(text, *category) else { continue };
        let Some(old) = linking.to(own).iter().find(|l| section.contains(&l.start)) else { continue };
        if entry_before(text, section.start, old.start, |t| removed.contains(t), &mut memo)
            == unchanged_before.as_deref()
        {
            gaps.entry((*category, unchanged_before)).or_default().push((i, old.start));
            found.insert(i, (own.to_string(), old.clone()));
        }
    }
    let mut staying = std::collections::HashMap::new();
    for lines in gaps.values() {
        for i in longest_rising(lines) {
            if let Some(line) = found.remove(&i) {
                staying.insert(i, line);
            }
        }
    }
    staying
}

/// The first of each pair in `items` (a place and an offset, in order) that make the
/// longest run whose offsets rise.
fn longest_rising(items: &[(usize, usize)]) -> Vec<usize> {
    // `tails[n]`: the item ending the best run of n + 1 found so far, the lowest offset.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; items.len()];
    for (k, &(_, offset)) in items.iter().enumerate() {
        let at = tails.partition_point(|&t| items[t].1 < offset);
        previous[k] = at.checked_sub(1).map(|p| tails[p]);
        if at == tails.len() {
            tails.push(k);
        } else {
            tails[at] = k;
        }
    }
    let mut run = Vec::new();
    let mut next = tails.last().copied();
    while let Some(k) = next {
        run.push(items[k].0);
        next = previous[k];
    }
    run
}

/// Where the first entry line of `section` begins, or the line saying it holds none.
fn first_entry_line(text: &str, section: std::ops::Range<usize>) -> Option<usize> {
    let mut at = line_end(text, section.start);
    while at < section.end {
        let line = &text[at..line_end(text, at)];
        if line == NO_ENTRIES_LINE || line_target(line).is_some_and(|target| entry_of(target).is_some()) {
            return Some(at);
        }
        at = line_end(text, at);
    }
    None
}

/// Changes to a text: ranges of it left out, and lines put in at offsets of it (those at
/// one offset in the order given, before what is left out there).
#[derive(Default)]
struct Edits<'a> {
    dropped: Vec<std::ops::Range<usize>>,
    inserted: Vec<(usize, std::borrow::Cow<'a, str>)>,
}

impl Edits<'_> {
    fn apply(mut self, text: &str) -> String {
        self.dropped.sort_by_key(|range| range.start);
        self.dropped.dedup();
        // A stable sort: lines put in at one offset keep their order.
        self.inserted.sort_by_key(|(at, _)| *at);
        let mut out =
            String::with_capacity(text.len() + self.inserted.iter().map(|(_, l)| l.len()).sum::<usize>());
        let mut inserted = self.inserted.into_iter().peekable();
        let mut copied = 0;
        for range in self.dropped {
            // Each line is left out once.
            if range.start < copied {
                continue;
            }
            while let Some((at, line)) = inserted.next_if(|(at, _)| *at <= range.start) {
                // Offsets are line starts, never inside a line left out; kept in order all
                // the same.
                let at = at.max(copied);
                out.push_str(&text[copied..at]);
                out.push_str(&line);
                copied = at;
            }
            out.push_str(&text[copied..range.start]);
            copied = range.end;
        }
        for (at, line) in inserted {
            out.push_str(&text[copied..at.max(copied)]);
            out.push_str(&line);
            copied = at.max(copied);
        }
        out.push_str(&text[copied..]);
        out
    }
}

/// The offset just past the line of `text` that begins at `at` (its newline included).
fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |n| at + n + 1)
}

/// The lines of `text` whose entry line links to `target` (see [`line_target`]), found by
/// searching for the link rather than reading every line.
fn lines_linking_to(text: &str, target: &str) -> Vec<std::ops::Range<usize>> {
    let needle = format!("]({target})");
    let mut lines = Vec::new();
    for at in memchr::memmem::find_iter(text.as_bytes(), needle.as_bytes()) {
        push_line_linking(text, at, target, &mut lines);
    }
    lines
}

/// Adds the line of `text` holding the byte at `at` to `lines` when its entry line links to
/// `target`, and it is not the last one there already (a name may hold the link's text too).
fn push_line_linking(text: &str, at: usize, target: &str, lines: &mut Vec<std::ops::Range<usize>>) {
    let start = memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |n| n + 1);
    let line = start..line_end(text, at);
    if lines.last() != Some(&line) && line_target(&text[line.clone()]) == Some(target) {
        lines.push(line);
    }
}

/// Up to this many links are each looked for with a search of the whole text; more are
/// found in one pass over every link of the text.
const SEARCHED_ONE_BY_ONE: usize = 4;

/// The lines of a text linking to some targets, each target's in the text's order.
struct LinkingLines<'w>(std::collections::HashMap<&'w str, Vec<std::ops::Range<usize>>>);

impl<'w> LinkingLines<'w> {
    /// The lines of `text` linking to each of `targets`. A one-shot command's vault reads
    /// again the entries written since the catalogue was saved, dozens: a search of a
    /// list of many megabytes for each was most of the patch's work.
    fn find(text: &str, targets: &'w std::collections::HashSet<String>) -> LinkingLines<'w> {
        let mut found: std::collections::HashMap<&'w str, Vec<std::ops::Range<usize>>> =
            std::collections::HashMap::new();
        if targets.len() <= SEARCHED_ONE_BY_ONE {
            for target in targets {
                found.insert(target, lines_linking_to(text, target));
            }
            return LinkingLines(found);
        }
        for at in memchr::memmem::find_iter(text.as_bytes(), b"](") {
            // `](` and `)` are ASCII: the slices below fall on character boundaries.
            let rest = &text[at + 2..];
            let Some(close) = memchr::memchr(b')', rest.as_bytes()) else { continue };
            let Some(target) = targets.get(&rest[..close]) else { continue };
            push_line_linking(text, at, target, found.entry(target.as_str()).or_default());
        }
        LinkingLines(found)
    }

    /// The lines linking to `target` (one of those looked for), in the text's order.
    fn to(&self, target: &str) -> &[std::ops::Range<usize>] {
        self.0.get(target).map_or(&[], Vec::as_slice)
    }
}

/// Where the lines of a text that begin with `## ` begin: the sections' headings.
struct Headings(Vec<usize>);

impl Headings {
    fn of(text: &str) -> Headings {
        let first = text.starts_with("## ").then_some(0);
        let rest = memchr::memmem::find_iter(text.as_bytes(), b"\n## ").map(|at| at + 1);
        Headings(first.into_iter().chain(rest).collect())
    }

    /// The range of `category`'s section in `text`: from its heading line to the next
    /// heading (the first such heading, if there are several).
    fn section(&self, text: &str, category: Category) -> Option<std::ops::Range<usize>> {
        let start = heading_start(category);
        let at = self.0.iter().position(|&at| text[at..].starts_with(&start))?;
        Some(self.0[at]..self.0.get(at + 1).copied().unwrap_or(text.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::longest_rising;

    #[test]
    fn the_longest_rising_run_is_found() {
        let offsets = |offsets: &[usize]| offsets.iter().copied().enumerate().collect::<Vec<_>>();
        let mut run = longest_rising(&offsets(&[30, 10, 20, 5, 40]));
        run.sort_unstable();
        assert_eq!(run, [1, 2, 4]);
        assert_eq!(longest_rising(&offsets(&[3, 2, 1])).len(), 1);
        assert!(longest_rising(&[]).is_empty());
        let mut all = longest_rising(&offsets(&[1, 2, 3]));
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2]);
    }
}
