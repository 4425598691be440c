//! The three-way merge of text by lines (diff3): the stretches of the base both sides kept
//! anchor the merge; between anchors, a stretch only one side changed takes that side's
//! lines, one both changed alike is taken once, and two additions at the same place are
//! both kept. Any other stretch changed on both sides is a conflict.

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// `base` changed into `remote` and into `local`, merged by lines; `None` on a conflict.
pub(super) fn merge_lines(base: &str, remote: &str, local: &str) -> Option<String> {
    // A missing last line end would make the last line differ from the same line with
    // one: every text is merged with one, and the answer ends as the sides agree.
    let ends = |text: &str| text.is_empty() || text.ends_with('\n');
    let (base_ends, remote_ends, local_ends) = (ends(base), ends(remote), ends(local));
    let ended = |text: &str, has: bool| if has { text.to_string() } else { format!("{text}\n") };
    let (b, r, l) = (ended(base, base_ends), ended(remote, remote_ends), ended(local, local_ends));
    let (b, r, l) = (split(&b), split(&r), split(&l));
    let in_remote = matches(&b, &r);
    let in_local = matches(&b, &l);
    let mut out = String::new();
    let (mut i, mut ri, mut li) = (0, 0, 0);
    loop {
        // Lines kept on both sides, one after the other.
        while i < b.len() && in_remote[i] == Some(ri) && in_local[i] == Some(li) {
            out.push_str(b[i]);
            (i, ri, li) = (i + 1, ri + 1, li + 1);
        }
        if i >= b.len() && ri >= r.len() && li >= l.len() {
            break;
        }
        // The next base line both sides kept, wherever they moved it.
        let next = (i..b.len()).find(|&j| in_remote[j].is_some() && in_local[j].is_some());
        let (j, rj, lj) = match next {
            Some(j) => (j, in_remote[j]?, in_local[j]?),
            None => (b.len(), r.len(), l.len()),
        };
        let (base_part, remote_part, local_part) = (&b[i..j], &r[ri..rj], &l[li..lj]);
        if remote_part == base_part || remote_part == local_part {
            local_part.iter().for_each(|line| out.push_str(line));
        } else if local_part == base_part {
            remote_part.iter().for_each(|line| out.push_str(line));
        } else if base_part.is_empty() {
            out.push_str(&both_added(remote_part, local_part));
        } else {
            return None;
        }
        (i, ri, li) = (j, rj, lj);
    }
    // The last line end: as the side that changed it has it.
    let keep_end = if remote_ends == base_ends { local_ends } else { remote_ends };
    if !keep_end && out.ends_with('\n') {
        out.pop();
        if out.ends_with('\r') {
            out.pop();
        }
    }
    Some(out)
}

/// `text`'s lines, each with its line end.
fn split(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// For each line of `base`, the line of `other` it is kept as, when it is.
fn matches(base: &[&str], other: &[&str]) -> Vec<Option<usize>> {
    let mut kept = vec![None; base.len()];
    for op in capture_diff_slices(Algorithm::Myers, base, other) {
        if let DiffOp::Equal { old_index, new_index, len } = op {
            for k in 0..len {
                kept[old_index + k] = Some(new_index + k);
            }
        }
    }
    kept
}

/// Two runs of lines added at the same place: both, the remote's first — or, when every
/// item of both is a dated line (`- 2026-11-28: …`, with the lines under it), all their
/// items in date order (the remote's first on one date).
fn both_added(remote: &[&str], local: &[&str]) -> String {
    match (dated_items(remote), dated_items(local)) {
        (Some(mut items), Some(more)) => {
            items.extend(more);
            // A stable sort: on one date the remote's items stay first.
            items.sort_by(|a, b| a.0.cmp(b.0));
            items.into_iter().flat_map(|(_, lines)| lines).collect()
        }
        _ => remote.iter().chain(local).copied().collect(),
    }
}

/// `lines` as dated items (a line starting with a date, and the lines indented under it),
/// each with its date; `None` when some line is neither.
fn dated_items<'a>(lines: &[&'a str]) -> Option<Vec<(&'a str, Vec<&'a str>)>> {
    let mut items: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in lines {
        match date_of(line) {
            Some(date) => items.push((date, vec![line])),
            None if line.starts_with([' ', '\t']) && !items.is_empty() => items.last_mut()?.1.push(line),
            None => return None,
        }
    }
    Some(items)
}

/// The date a line starts with (after a list marker): `YYYY-MM-DD`.
fn date_of(line: &str) -> Option<&str> {
    let text = line.trim_start();
    let text = text.strip_prefix(['-', '*', '+']).map_or(text, str::trim_start);
    let date = text.get(..10)?;
    let shape = date.bytes().enumerate().all(|(at, byte)| match at {
        4 | 7 => byte == b'-',
        _ => byte.is_ascii_digit(),
    });
    shape.then_some(date)
}
