//! A fetched page made readable: its text decoded from the charset it declares, its article
//! found by dom_smoothie (a port of Mozilla's Readability, the reader view's article
//! finder) and written as Markdown by the same crate, so one HTML parse serves both.

use dom_smoothie::{Config, Readability, TextMode};
use encoding_rs::Encoding;
use url::Url;

/// The most elements a page may have for its article to be looked for: a bigger one is
/// kept as a link with its title (the search is quadratic in places).
const MAX_ELEMENTS: usize = 200_000;

/// What was read of a page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readable {
    /// Its title, when it has one.
    pub title: Option<String>,
    /// Its readable text as Markdown, when there is any.
    pub markdown: Option<String>,
}

/// Reads `body`, served as `content_type` from `url`: an HTML page's article, a text
/// file's text, nothing of anything else.
pub fn readable_page(body: &[u8], content_type: Option<&str>, url: &Url) -> Readable {
    let essence = content_type
        .and_then(|value| value.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let looks_like_html = || body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<');
    // Bytes that are not text, whatever they are labelled, are not read.
    if body[..body.len().min(8192)].contains(&0) {
        return Readable::default();
    }
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => article(&decode(body, content_type), url),
        "" if looks_like_html() => article(&decode(body, content_type), url),
        "text/plain" | "text/markdown" | "text/x-markdown" => {
            let text = decode(body, content_type);
            Readable { title: None, markdown: non_empty(text.trim().to_string()) }
        }
        _ => Readable::default(),
    }
}

/// The article of an HTML page, and its title even when no article is found.
fn article(html: &str, url: &Url) -> Readable {
    let config =
        Config { text_mode: TextMode::Markdown, max_elements_to_parse: MAX_ELEMENTS, ..Config::default() };
    let Ok(mut reader) = Readability::new(html, Some(url.as_str()), Some(config)) else {
        return Readable::default();
    };
    let title = non_empty(one_line(&reader.get_article_title()));
    match reader.parse() {
        Ok(article) => Readable {
            title: non_empty(one_line(&article.title)).or(title),
            markdown: non_empty(article.text_content.trim().to_string()),
        },
        Err(error) => {
            tracing::debug!(%url, %error, "no article found; the page is kept as a link");
            Readable { title, markdown: None }
        }
    }
}

/// `body` decoded from the charset its `Content-Type`, its byte order mark or its
/// `<meta>` declares, UTF-8 otherwise; bytes that do not decode become U+FFFD.
fn decode(body: &[u8], content_type: Option<&str>) -> String {
    let declared = content_type
        .and_then(charset_parameter)
        .or_else(|| meta_charset(body))
        .and_then(|label| Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = declared.decode(body);
    text.into_owned()
}

/// The `charset` parameter of a `Content-Type`.
fn charset_parameter(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_string())
    })
}

/// The charset a page's first kilobytes declare in a `<meta charset>` or
/// `<meta http-equiv="Content-Type" content="…; charset=…">`.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(4096)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        .collect();
    non_empty(value)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("https://example.org/posts/tea.html").unwrap()
    }

    #[test]
    fn an_article_is_kept_as_markdown_without_its_menus() {
        let html = r#"<!doctype html><html><head><title>Brewing green tea | Tea blog</title></head><body>
            <nav><a href="/">Home</a> <a href="/about">About</a> <a href="/shop">Shop</a></nav>
            <article><h1>Brewing green tea</h1>
            <p>Green tea wants water well below boiling: about eighty degrees, poured over the leaves
            and left for two minutes, no more, or the cup turns bitter and the sweetness is lost.</p>
            <p>Use <strong>three grams</strong> of leaves for a cup, and brew the same leaves twice or three
            times; each brew is a little longer than the one before. See <a href="/posts/oolong.html">oolong</a>.</p>
            <p>Keep the leaves in a tin, away from light, and drink them within a few months of opening.</p>
            </article><footer>Copyright 2026 · Privacy · Cookies</footer></body></html>"#;
        let page = readable_page(html.as_bytes(), Some("text/html; charset=utf-8"), &url());
        let markdown = page.markdown.unwrap();
        assert!(markdown.contains("eighty degrees"), "{markdown}");
        assert!(markdown.contains("**three grams**"), "{markdown}");
        assert!(
            markdown.contains("https://example.org/posts/oolong.html"),
            "links are made absolute: {markdown}"
        );
        assert!(!markdown.contains("Cookies"), "{markdown}");
        assert!(page.title.unwrap().contains("Brewing green tea"));
    }

    #[test]
    fn a_page_in_a_declared_charset_is_decoded() {
        let mut html =
            b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9 cr\xe8me</title></head><body><p>"
                .to_vec();
        html.extend_from_slice(&b"Le caf\xe9 est bon. ".repeat(60));
        html.extend_from_slice(b"</p></body></html>");
        let page = readable_page(&html, Some("text/html"), &url());
        assert_eq!(page.title.as_deref(), Some("Café crème"));
        assert!(page.markdown.unwrap().contains("Le café est bon."));
    }

    #[test]
    fn a_page_without_an_article_keeps_its_title() {
        let page = readable_page(
            b"<html><head><title>Only a title</title></head><body></body></html>",
            None,
            &url(),
        );
        assert_eq!(page.title.as_deref(), Some("Only a title"));
        assert_eq!(page.markdown, None);
    }

    #[test]
    fn text_is_kept_and_images_are_not_read() {
        let text = readable_page(b"plain words\n", Some("text/plain"), &url());
        assert_eq!(text.markdown.as_deref(), Some("plain words"));
        assert_eq!(readable_page(&[0x89, b'P', b'N', b'G'], Some("image/png"), &url()), Readable::default());
    }
}
