//! The terminal a person reads: whether kb may style what it prints (stdout is a terminal
//! and `NO_COLOR` is not set), and markdown rendered for it with termimad: headings, bold,
//! lists, tables, code and links. Anything else (a pipe, a file, `NO_COLOR`) gets the
//! markdown as it is written.

use std::io::IsTerminal;

use termimad::{Alignment, MadSkin};

/// Whether stdout is a terminal that takes colour: it is a terminal and `NO_COLOR` is unset
/// or empty (<https://no-color.org>).
pub fn styled() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// `text` (markdown) rendered for a terminal of the current width, ending with a newline.
pub fn markdown(text: &str) -> String {
    let mut rendered = skin().term_text(&links(text)).to_string();
    if !rendered.ends_with('\n') {
        rendered.push('\n');
    }
    rendered
}

/// A tool line's mark: ✓ in green when the tool did what was asked, else ✗ in red (bare
/// when the output is not styled).
pub fn mark(success: bool, styled: bool) -> &'static str {
    match (success, styled) {
        (true, true) => "\x1b[32m✓\x1b[0m",
        (false, true) => "\x1b[31m✗\x1b[0m",
        (true, false) => "✓",
        (false, false) => "✗",
    }
}

/// termimad's default colours, with headings on the left as the markdown has them.
fn skin() -> MadSkin {
    let mut skin = MadSkin::default();
    for header in &mut skin.headers {
        header.align = Alignment::Left;
    }
    skin
}

/// `[text](url)` links written as `text <url>` (termimad shows links as written); wikilinks
/// (`[[Name]]`) and anything else are kept.
fn links(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let label = &after[..close];
            let target = &after[close + 2..];
            let end = target.find(')')?;
            let url = &target[..end];
            let plain = !label.contains(['[', ']', '\n']) && !url.contains(char::is_whitespace);
            plain.then(|| (label, url, open + 1 + close + 2 + end + 1))
        });
        match link {
            Some((label, url, used)) => {
                out.push_str(&rest[..open]);
                out.push_str(&format!("{label} <{url}>"));
                rest = &rest[used..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_show_their_address_and_wikilinks_stay() {
        assert_eq!(
            links("See [the site](https://a.b/c) and [[Priya]]."),
            "See the site <https://a.b/c> and [[Priya]]."
        );
        assert_eq!(links("a [b] (c) [d](e f)"), "a [b] (c) [d](e f)");
        assert_eq!(links("[x](y)[z](w)"), "x <y>z <w>");
    }

    #[test]
    fn markdown_loses_its_marks() {
        let shown = markdown("# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n");
        assert!(!shown.contains("**") && !shown.contains("# Title"), "{shown}");
        assert!(shown.contains("Title") && shown.contains("bold") && shown.contains("one"), "{shown}");
    }
}
