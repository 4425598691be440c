//! How a [`DigestMessage`] reads on each channel: plain text (the markdown as is, plus the
//! nudges), HTML (the markdown rendered, raw HTML escaped) and Slack's `mrkdwn`.

use kb_domain::delivery::DigestMessage;
use kb_domain::nudges::Nudge;
use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// The heading the nudges go under.
pub const NUDGES_HEADING: &str = "Nudges";

/// The markdown extensions kb's digests may use.
fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Text on one line: every run of whitespace (line breaks included) becomes one space.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The nudges as markdown: a `## Nudges` heading and one `- message` line each; empty when
/// there are none.
pub fn nudges_markdown(nudges: &[Nudge]) -> String {
    if nudges.is_empty() {
        return String::new();
    }
    let mut out = format!("## {NUDGES_HEADING}\n\n");
    for nudge in nudges {
        out.push_str("- ");
        out.push_str(&one_line(&nudge.message));
        out.push('\n');
    }
    out
}

/// The digest as plain text: its markdown as is, then the nudges (see [`nudges_markdown`])
/// when there are any. Ends with a newline unless everything is empty.
pub fn plain_text(message: &DigestMessage) -> String {
    let mut out = message.markdown.trim_end().to_owned();
    let nudges = nudges_markdown(&message.nudges);
    if !nudges.is_empty() {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&nudges);
    } else if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// Escapes `&`, `<`, `>`, `"` and `'` for HTML text and attribute values.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether a link target may stay a link: not a `javascript:`, `vbscript:`, `data:` or
/// `file:` URL.
fn safe_link(dest: &str) -> bool {
    let lowered: String = dest
        .trim()
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_control())
        .collect::<String>()
        .to_lowercase();
    !["javascript:", "vbscript:", "data:", "file:"].iter().any(|scheme| lowered.starts_with(scheme))
}

/// Markdown rendered as an HTML fragment, safely: raw HTML in the markdown (blocks and
/// inline) comes out escaped, as text, never as markup, and script-like link targets
/// (`javascript:` and the like) become `#`.
pub fn markdown_to_safe_html(markdown: &str) -> String {
    let events = Parser::new_ext(markdown, options()).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::Paragraph),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::Paragraph),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) if !safe_link(&dest_url) => {
            Event::Start(Tag::Link { link_type, dest_url: CowStr::Borrowed("#"), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) if !safe_link(&dest_url) => {
            Event::Start(Tag::Image { link_type, dest_url: CowStr::Borrowed("#"), title, id })
        }
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// The digest as a whole HTML document: the title, the markdown (see
/// [`markdown_to_safe_html`]) and the nudges as a list under a heading.
pub fn html(message: &DigestMessage) -> String {
    let mut out = String::from("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>");
    out.push_str(&escape_html(&message.title));
    out.push_str("</title>\n</head>\n<body>\n");
    out.push_str(&markdown_to_safe_html(&message.markdown));
    if !message.nudges.is_empty() {
        out.push_str(&format!("<h2>{NUDGES_HEADING}</h2>\n<ul>\n"));
        for nudge in &message.nudges {
            out.push_str("<li>");
            out.push_str(&escape_html(&one_line(&nudge.message)));
            out.push_str("</li>\n");
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// Escapes what Slack's `mrkdwn` reserves: `&`, `<` and `>`.
pub fn escape_slack(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The digest as one Slack `mrkdwn` text: the title in bold, the markdown converted (see
/// [`markdown_to_slack`]), then the nudges as a bulleted list under a bold heading.
pub fn slack_text(message: &DigestMessage) -> String {
    let mut out = format!("*{}*", escape_slack(&one_line(&message.title)));
    let body = markdown_to_slack(&message.markdown);
    if !body.is_empty() {
        out.push('\n');
        out.push_str(&body);
    }
    if !message.nudges.is_empty() {
        out.push_str(&format!("\n\n*{NUDGES_HEADING}*"));
        for nudge in &message.nudges {
            out.push_str("\n• ");
            out.push_str(&escape_slack(&one_line(&nudge.message)));
        }
    }
    out
}

/// Markdown converted to Slack's `mrkdwn`: headings and `**bold**` become `*bold*`,
/// `*emphasis*` becomes `_emphasis_`, `~~struck~~` becomes `~struck~`, list items become
/// `•` (or numbered) lines, links become `<url|text>`, code stays in backticks, quotes keep
/// `>`; `&`, `<` and `>` in the text are escaped, raw HTML included.
pub fn markdown_to_slack(markdown: &str) -> String {
    let mut writer = SlackWriter::default();
    for event in Parser::new_ext(markdown, options()) {
        writer.event(event);
    }
    writer.out.trim_end().to_owned()
}

/// Builds the `mrkdwn` text from markdown events.
#[derive(Default)]
struct SlackWriter {
    /// The text so far.
    out: String,
    /// Open lists, innermost last: the next number of a numbered one, `None` for bullets.
    lists: Vec<Option<u64>>,
    /// How many block quotes are open.
    quotes: usize,
    /// Whether each open link is written as a Slack link (an `http`, `https` or `mailto`
    /// target) or as its text alone.
    links: Vec<bool>,
    /// The next cell of a table row is not its first.
    after_cell: bool,
}

impl SlackWriter {
    /// Whether the output is at the start of a line (or empty).
    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n')
    }

    /// Writes text, starting each new line inside a quote with `> `.
    fn write(&mut self, text: &str) {
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                self.out.push('\n');
            }
            if line.is_empty() {
                continue;
            }
            if self.quotes > 0 && self.at_line_start() {
                self.out.push_str("> ");
            }
            self.out.push_str(line);
        }
    }

    /// Ends the current line, if one is started.
    fn end_line(&mut self) {
        if !self.at_line_start() {
            self.out.push('\n');
        }
    }

    /// Starts a block: a blank line after whatever came before (a plain line break inside
    /// a list, where items stay tight).
    fn start_block(&mut self) {
        if self.out.is_empty() {
            return;
        }
        self.end_line();
        if self.lists.is_empty() && !self.out.ends_with("\n\n") {
            if self.quotes > 0 {
                self.out.push_str(">\n");
            } else {
                self.out.push('\n');
            }
        }
    }

    /// Takes one markdown event.
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                let escaped = escape_slack(&text);
                self.write(&escaped);
            }
            Event::Code(code) | Event::InlineMath(code) | Event::DisplayMath(code) => {
                let escaped = format!("`{}`", escape_slack(&code));
                self.write(&escaped);
            }
            Event::FootnoteReference(name) => {
                let escaped = format!("[{}]", escape_slack(&name));
                self.write(&escaped);
            }
            Event::SoftBreak | Event::HardBreak => self.out.push('\n'),
            Event::Rule => {
                self.start_block();
                self.write("———");
            }
            Event::TaskListMarker(done) => self.write(if done { "☑ " } else { "☐ " }),
        }
    }

    /// Takes the start of a markdown element.
    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) | Tag::FootnoteDefinition(_) => {
                self.start_block()
            }
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.start_block()
            }
            Tag::Heading { .. } => {
                self.start_block();
                self.write("*");
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.quotes += 1;
            }
            Tag::CodeBlock(_) => {
                self.start_block();
                self.write("```\n");
            }
            Tag::List(first) => {
                if self.lists.is_empty() {
                    self.start_block();
                } else {
                    self.end_line();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                self.end_line();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(number)) => {
                        let marker = format!("{number}. ");
                        *number += 1;
                        marker
                    }
                    _ => "• ".to_owned(),
                };
                let line = format!("{}{marker}", "    ".repeat(depth));
                self.write(&line);
            }
            Tag::Table(_) => self.start_block(),
            Tag::TableHead | Tag::TableRow => {
                self.end_line();
                self.after_cell = false;
            }
            Tag::TableCell => {
                if self.after_cell {
                    self.write(" | ");
                }
                self.after_cell = true;
            }
            Tag::Emphasis => self.write("_"),
            Tag::Strong => self.write("*"),
            Tag::Strikethrough => self.write("~"),
            Tag::Superscript | Tag::Subscript => {}
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let lowered = dest_url.to_lowercase();
                let linkable = ["http://", "https://", "mailto:"].iter().any(|s| lowered.starts_with(s))
                    && !dest_url.contains(['|', '>', '<', ' ']);
                if linkable {
                    let open = format!("<{dest_url}|");
                    self.write(&open);
                }
                self.links.push(linkable);
            }
        }
    }

    /// Takes the end of a markdown element.
    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => self.write("*"),
            TagEnd::BlockQuote(_) => self.quotes = self.quotes.saturating_sub(1),
            TagEnd::CodeBlock => {
                self.end_line();
                self.write("```");
            }
            TagEnd::List(_) => {
                self.lists.pop();
            }
            TagEnd::TableHead | TagEnd::TableRow => self.end_line(),
            TagEnd::Emphasis => self.write("_"),
            TagEnd::Strong => self.write("*"),
            TagEnd::Strikethrough => self.write("~"),
            TagEnd::Link | TagEnd::Image => {
                if self.links.pop() == Some(true) {
                    self.write(">");
                }
            }
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::Item
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::Table
            | TagEnd::TableCell
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::MetadataBlock(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kb_domain::nudges::NudgeRule;

    fn nudge(message: &str) -> Nudge {
        Nudge {
            key: "no_capture".into(),
            rule: NudgeRule::NoCapture,
            path: None,
            name: None,
            message: message.into(),
        }
    }

    fn digest(markdown: &str, nudges: Vec<Nudge>) -> DigestMessage {
        DigestMessage {
            id: None,
            kind: "daily".into(),
            title: "Digest".into(),
            markdown: markdown.into(),
            nudges,
        }
    }

    #[test]
    fn plain_text_appends_nudges_under_a_heading() {
        let message = digest("# Today\n\nText.\n\n", vec![nudge("Capture\nsomething"), nudge("Call Ann")]);
        assert_eq!(
            plain_text(&message),
            "# Today\n\nText.\n\n## Nudges\n\n- Capture something\n- Call Ann\n"
        );
        assert_eq!(plain_text(&digest("Text.", vec![])), "Text.\n");
        assert_eq!(plain_text(&digest("", vec![nudge("x")])), "## Nudges\n\n- x\n");
    }

    #[test]
    fn html_escapes_raw_html_and_script_links() {
        let fragment = markdown_to_safe_html(
            "Hi <b onclick=\"x\">there</b>\n\n<script>alert(1)</script>\n\n[a](javascript:alert(1)) [b](https://example.org/?a=1&b=2)\n",
        );
        assert!(!fragment.contains("<script"), "{fragment}");
        assert!(!fragment.contains("<b "), "{fragment}");
        assert!(fragment.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{fragment}");
        assert!(!fragment.contains("javascript:"), "{fragment}");
        assert!(fragment.contains("href=\"#\""), "{fragment}");
        assert!(fragment.contains("href=\"https://example.org/?a=1&amp;b=2\""), "{fragment}");
    }

    #[test]
    fn html_document_has_title_body_and_nudges() {
        let mut message = digest("# Today & <now>\n", vec![nudge("Call <Ann>")]);
        message.title = "A & B".into();
        let page = html(&message);
        assert!(page.contains("<title>A &amp; B</title>"), "{page}");
        assert!(page.contains("<h1>Today &amp; &lt;now&gt;</h1>"), "{page}");
        assert!(page.contains("<h2>Nudges</h2>\n<ul>\n<li>Call &lt;Ann&gt;</li>\n</ul>"), "{page}");
    }

    #[test]
    fn slack_converts_headings_bold_lists_links_and_escapes() {
        let markdown = "# Today\n\nSome **bold**, *em* and ~~gone~~ text & <b>tag</b>.\n\n\
                        - one\n- two\n  1. sub\n  2. sub2\n\n\
                        [site](https://example.org) [note](notes/a.md) `a<b`\n\n> quoted\n> more\n\n```\nx < y\n```\n";
        assert_eq!(
            markdown_to_slack(markdown),
            "*Today*\n\n\
             Some *bold*, _em_ and ~gone~ text &amp; &lt;b&gt;tag&lt;/b&gt;.\n\n\
             • one\n• two\n    1. sub\n    2. sub2\n\n\
             <https://example.org|site> note `a&lt;b`\n\n> quoted\n> more\n\n```\nx &lt; y\n```"
        );
    }

    #[test]
    fn slack_text_has_title_body_and_nudges() {
        let message = digest("## Done\n\n**3** things", vec![nudge("Call Ann")]);
        assert_eq!(slack_text(&message), "*Digest*\n*Done*\n\n*3* things\n\n*Nudges*\n• Call Ann");
        assert_eq!(slack_text(&digest("", vec![])), "*Digest*");
    }
}
