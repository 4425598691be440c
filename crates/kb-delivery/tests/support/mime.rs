//! Just enough MIME reading for the tests: headers (unfolded), a multipart body's parts,
//! the transfer encodings lettre uses (7bit, quoted-printable, base64) and RFC 2047 words.

use base64::Engine as _;

/// A message or a part: its headers, in order, and its body as sent.
#[derive(Debug, Clone)]
pub struct Entity {
    /// Name and value, folding undone.
    pub headers: Vec<(String, String)>,
    /// The body, still transfer-encoded.
    pub body: String,
}

impl Entity {
    /// Reads headers and body (split at the first empty line).
    pub fn parse(raw: &str) -> Entity {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
        let mut headers: Vec<(String, String)> = Vec::new();
        for line in head.split("\r\n") {
            if line.starts_with([' ', '\t']) {
                if let Some((_, value)) = headers.last_mut() {
                    value.push_str(line);
                }
            } else if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
        }
        Entity { headers, body: body.to_owned() }
    }

    /// A header's value (the first of that name), case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The `Content-Type` without parameters, lowercased.
    pub fn mime_type(&self) -> String {
        self.header("Content-Type")
            .unwrap_or("text/plain")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    }

    /// A `Content-Type` parameter (`boundary`, `charset`), unquoted.
    pub fn content_type_param(&self, name: &str) -> Option<String> {
        let content_type = self.header("Content-Type")?;
        content_type.split(';').skip(1).find_map(|param| {
            let (key, value) = param.split_once('=')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim().trim_matches('"').to_owned())
        })
    }

    /// The parts of a multipart body.
    pub fn parts(&self) -> Vec<Entity> {
        let Some(boundary) = self.content_type_param("boundary") else { return Vec::new() };
        let delimiter = format!("--{boundary}");
        let mut parts = Vec::new();
        for chunk in self.body.split(&delimiter).skip(1) {
            if chunk.starts_with("--") {
                break;
            }
            let chunk = chunk.strip_prefix("\r\n").unwrap_or(chunk);
            let chunk = chunk.strip_suffix("\r\n").unwrap_or(chunk);
            parts.push(Entity::parse(chunk));
        }
        parts
    }

    /// The body, transfer encoding undone, as UTF-8.
    pub fn text(&self) -> String {
        let encoding = self.header("Content-Transfer-Encoding").unwrap_or("7bit").to_ascii_lowercase();
        let bytes = match encoding.as_str() {
            "base64" => {
                let compact: String = self.body.chars().filter(|c| !c.is_whitespace()).collect();
                base64::engine::general_purpose::STANDARD.decode(compact).expect("base64 body")
            }
            "quoted-printable" => quoted_printable(&self.body),
            _ => self.body.clone().into_bytes(),
        };
        String::from_utf8(bytes).expect("UTF-8 body")
    }
}

/// Undoes quoted-printable.
pub fn quoted_printable(text: &str) -> Vec<u8> {
    unescape(text, Underscore::AsWritten)
}

/// Undoes an RFC 2047 `Q` word: quoted-printable in which `_` stands for a space.
pub fn q_word(text: &str) -> Vec<u8> {
    unescape(text, Underscore::Space)
}

/// What `_` stands for in quoted-printable text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Underscore {
    /// Itself (a body).
    AsWritten,
    /// A space (an RFC 2047 `Q` word).
    Space,
}

/// Undoes `=XX` escapes and soft line breaks, and `_` as `underscore` says.
fn unescape(text: &str, underscore: Underscore) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'=' if bytes[i + 1..].starts_with(b"\r\n") => i += 3,
            b'=' if bytes[i + 1..].starts_with(b"\n") => i += 2,
            b'=' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("hex");
                out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
                i += 3;
            }
            b'_' if underscore == Underscore::Space => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// Decodes RFC 2047 encoded words (`=?utf-8?b?…?=`, `=?utf-8?q?…?=`) in a header value;
/// whitespace between two encoded words goes, as the RFC says.
pub fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut last_was_word = false;
    while let Some(start) = rest.find("=?") {
        let Some(word) = parse_word(&rest[start..]) else {
            out.push_str(&rest[..start + 2]);
            rest = &rest[start + 2..];
            last_was_word = false;
            continue;
        };
        let between = &rest[..start];
        if !(last_was_word && between.trim().is_empty()) {
            out.push_str(between);
        }
        out.push_str(&word.0);
        rest = &rest[start + word.1..];
        last_was_word = true;
    }
    out.push_str(rest);
    out
}

/// One encoded word at the start of `text`: its decoded text and its length.
fn parse_word(text: &str) -> Option<(String, usize)> {
    let inner = text.strip_prefix("=?")?;
    let (charset, inner) = inner.split_once('?')?;
    let (encoding, inner) = inner.split_once('?')?;
    let (payload, _) = inner.split_once("?=")?;
    assert!(charset.eq_ignore_ascii_case("utf-8"), "charset {charset}");
    let bytes = match encoding.to_ascii_lowercase().as_str() {
        "b" => base64::engine::general_purpose::STANDARD.decode(payload).ok()?,
        "q" => q_word(payload),
        _ => return None,
    };
    let length = 2 + charset.len() + 1 + encoding.len() + 1 + payload.len() + 2;
    Some((String::from_utf8(bytes).ok()?, length))
}
