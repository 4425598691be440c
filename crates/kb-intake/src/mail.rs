//! A mail made into what kb files ([`read_mail`]): its sender, subject, `Message-ID`, date,
//! its text as Markdown (an HTML-only mail's HTML turned into Markdown) and its attachments;
//! and whether its sender may file into kb ([`SenderRules::check`]). A `From:` can be forged,
//! so it counts only when the receiving server's `Authentication-Results` says DMARC (or
//! DKIM for the sender's domain) passed, unless the mailbox is trusted to take mail only
//! from its owner.

use mail_parser::{MessageParser, MimeHeaders};

/// The largest part of a mail kb reads as text (a larger text is cut, with a note).
const MAX_TEXT_BYTES: usize = 1024 * 1024;

/// A mail as kb files it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// The sender's address, lowercased (`From:`).
    pub from: String,
    /// The subject, when there is one.
    pub subject: Option<String>,
    /// The `Message-ID`, without its angle brackets.
    pub message_id: Option<String>,
    /// When it was sent (RFC 3339), as its `Date:` says.
    pub date: Option<String>,
    /// Its text as Markdown.
    pub text: String,
    /// Its attached files.
    pub attachments: Vec<MailFile>,
    /// Whether a program sent it on its own (`Auto-Submitted`, an autoreply's headers):
    /// kb files and answers none, so two programs never answer each other forever.
    pub automatic: bool,
    /// Each `Authentication-Results` header, in order (the receiving server's first), unfolded.
    authentication_results: Vec<String>,
}

/// A file attached to a mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailFile {
    /// The name it was sent with.
    pub name: String,
    /// Its content type (`application/pdf`).
    pub content_type: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Why a mail could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// Not a mail kb can parse.
    #[error("the mail cannot be read: {0}")]
    Unreadable(String),
}

/// Reads the raw mail `raw` (RFC 5322, as an IMAP `BODY[]` answers it).
pub fn read_mail(raw: &[u8]) -> Result<Mail, MailError> {
    let message = MessageParser::default()
        .parse(raw)
        .ok_or_else(|| MailError::Unreadable("it does not parse".into()))?;
    let senders: Vec<_> = message.from().map(|from| from.iter().collect()).unwrap_or_default();
    let from_headers: Vec<&[u8]> = message
        .headers()
        .iter()
        .filter(|header| header.name.as_str().eq_ignore_ascii_case("From"))
        .filter_map(|header| raw.get(header.offset_start as usize..header.offset_end as usize))
        .collect();
    if senders.len() > 1 || from_headers.len() > 1 {
        return Err(MailError::Unreadable("it names several senders".into()));
    }
    let from = senders
        .first()
        .and_then(|address| address.address())
        .map(|address| address.trim().to_lowercase())
        .filter(|address| plain_address(address))
        .ok_or_else(|| MailError::Unreadable("it names no sender kb can read".into()))?;
    // The address must be written as it is read: pieces stitched together (`<ana@> <x.org>`)
    // are not a sender.
    let written = from_headers.first().map(|value| String::from_utf8_lossy(value).to_lowercase());
    if !written.is_some_and(|value| value.contains(&from)) {
        return Err(MailError::Unreadable("its sender's address is malformed".into()));
    }
    let text = match (message.body_text(0), message.body_html(0)) {
        // A text part that is only the HTML part's stand-in is not preferred over it.
        (Some(text), _)
            if message.text_body.first() != message.html_body.first() || message.html_body.is_empty() =>
        {
            text.into_owned()
        }
        (_, Some(html)) => html_markdown(&html),
        (Some(text), None) => text.into_owned(),
        (None, None) => String::new(),
    };
    let mut text = text;
    // A mail forwarded as an attachment is kept as an `.eml` file, and its text follows.
    let mut forwarded = String::new();
    for inner in message.attachments().filter_map(|part| part.message()) {
        let from = inner.from().and_then(|f| f.first()).and_then(|a| a.address()).unwrap_or("someone");
        let subject = inner.subject().unwrap_or("(no subject)");
        let text = match (inner.body_text(0), inner.body_html(0)) {
            (Some(text), _)
                if inner.html_body.is_empty() || inner.text_body.first() != inner.html_body.first() =>
            {
                text.into_owned()
            }
            (_, Some(html)) => html_markdown(&html),
            (Some(text), None) => text.into_owned(),
            (None, None) => String::new(),
        };
        forwarded.push_str(&format!("\n\n---\n\nForwarded mail from {from}: {subject}\n\n{}", text.trim()));
    }
    let mut attachments: Vec<MailFile> = message
        .attachments()
        .map(|part| MailFile {
            name: match part.attachment_name() {
                Some(name) => name.to_string(),
                None if part.is_message() => "forwarded.eml".to_string(),
                None => String::new(),
            },
            content_type: part
                .content_type()
                .map(|t| match t.subtype() {
                    Some(sub) => format!("{}/{sub}", t.ctype()),
                    None => t.ctype().to_string(),
                })
                .unwrap_or_else(|| "application/octet-stream".to_string()),
            bytes: part.contents().to_vec(),
        })
        .collect();
    // A mail whose parts never close leaves its text as an unnamed part: it is the text.
    if text.trim().is_empty()
        && let Some(at) =
            attachments.iter().position(|f| f.name.is_empty() && f.content_type.starts_with("text/"))
    {
        text = String::from_utf8_lossy(&attachments.remove(at).bytes).into_owned();
    }
    text.push_str(&forwarded);
    for file in attachments.iter_mut().filter(|f| f.name.is_empty()) {
        // An unnamed part is named by its type, so it keeps an extension (`attachment.png`).
        let extension = match file.content_type.as_str() {
            "image/png" => ".png",
            "image/jpeg" => ".jpg",
            "image/gif" => ".gif",
            "application/pdf" => ".pdf",
            t if t.starts_with("text/") => ".txt",
            _ => "",
        };
        file.name = format!("attachment{extension}");
    }
    let authentication_results = message
        .headers()
        .iter()
        .filter(|header| header.name.as_str().eq_ignore_ascii_case("Authentication-Results"))
        .filter_map(|header| raw.get(header.offset_start as usize..header.offset_end as usize))
        .map(|value| String::from_utf8_lossy(value).split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    Ok(Mail {
        from,
        subject: message.subject().map(one_line).filter(|s| !s.is_empty()),
        message_id: message.message_id().map(|id| id.trim().trim_matches(['<', '>']).to_string()),
        date: message.date().map(|date| date.to_rfc3339()),
        text: cut(text.trim()),
        attachments,
        authentication_results,
        automatic: is_automatic(&message),
    })
}

/// Whether `address` is one plain address: one `@`, something before it, a dotted domain
/// after it, no spaces, quotes or comments.
fn plain_address(address: &str) -> bool {
    address.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty()
            && domain.contains('.')
            && !domain.starts_with('.')
            && !domain.ends_with('.')
            && !domain.contains('@')
            && !address
                .contains(|c: char| c.is_whitespace() || matches!(c, '"' | '(' | ')' | '<' | '>' | ',' | ';'))
    })
}

/// Whether `message` says a program sent it on its own.
fn is_automatic(message: &mail_parser::Message<'_>) -> bool {
    let value = |name: &str| {
        message
            .headers()
            .iter()
            .find(|header| header.name.as_str().eq_ignore_ascii_case(name))
            .and_then(|header| header.value.as_text())
            // The first word: `bulk (x)` is `bulk`.
            .map(|text| {
                text.split(|c: char| c.is_whitespace() || c == '(' || c == ';')
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase()
            })
    };
    let said = |name: &str| value(name).is_some_and(|v| !v.is_empty() && v != "no");
    said("Auto-Submitted")
        || said("X-Autoreply")
        || said("X-Autorespond")
        || value("Precedence").is_some_and(|v| matches!(v.as_str(), "auto_reply" | "bulk" | "junk"))
}

/// A subject as a name: on one line, without controls or the invisible characters that
/// reorder or hide text (bidi overrides, zero-width spaces).
fn one_line(subject: &str) -> String {
    let visible: String = subject
        .chars()
        .filter(|c| {
            !matches!(c,
                '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}')
        })
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    visible.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An HTML mail's body as Markdown (scripts, styles and the head left out).
fn html_markdown(html: &str) -> String {
    dom_query::Document::from(html).md(None).to_string()
}

/// `text`, cut to [`MAX_TEXT_BYTES`] at a character boundary.
fn cut(text: &str) -> String {
    if text.len() <= MAX_TEXT_BYTES {
        return text.to_string();
    }
    let mut end = MAX_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n\n(The mail goes on; kb kept its first megabyte.)", &text[..end])
}

/// Who may file into kb by mail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderRules {
    /// The addresses allowed (`KB_MAIL_ALLOWED_SENDERS`), lowercased.
    allowed: Vec<String>,
    /// Whether the mailbox takes mail only from its owner, so `From:` is believed
    /// (`KB_MAIL_TRUST_FROM=1`).
    trust_from: bool,
    /// The receiving server's name in its `Authentication-Results` (`KB_MAIL_AUTHSERV_ID`;
    /// default the IMAP host): results another server wrote are not believed.
    authserv_id: String,
}

/// Whether a mail may be filed, and why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// From an allowed sender, verified (or believed).
    Allowed,
    /// Not from an allowed sender.
    NotAllowed,
    /// From an allowed address, but nothing shows it was not forged.
    Unverified(String),
}

impl SenderRules {
    /// The rules: `allowed` addresses, `trust_from`, the receiving server `authserv_id`.
    pub fn new(allowed: &[String], trust_from: bool, authserv_id: &str) -> SenderRules {
        SenderRules {
            allowed: allowed.iter().map(|a| a.trim().to_lowercase()).filter(|a| !a.is_empty()).collect(),
            trust_from,
            authserv_id: authserv_id.trim().to_lowercase(),
        }
    }

    /// Whether `mail` may be filed. Only the topmost `Authentication-Results` counts: the
    /// receiving server adds it above whatever the mail came with, so any header below it
    /// may be the sender's own words, whatever server it names.
    pub fn check(&self, mail: &Mail) -> Verdict {
        if !self.allowed.contains(&mail.from) {
            return Verdict::NotAllowed;
        }
        if self.trust_from {
            return Verdict::Allowed;
        }
        let domain = mail.from.rsplit('@').next().unwrap_or_default();
        let unverified = |why: String| Verdict::Unverified(why);
        let Some(header) = mail.authentication_results.first() else {
            return unverified("it has no Authentication-Results".to_string());
        };
        let header = plain(header);
        let mut parts = header.split(';');
        let id = parts.next().and_then(|id| id.split_whitespace().next()).unwrap_or_default().to_lowercase();
        if id != self.authserv_id {
            return unverified(format!(
                "its topmost Authentication-Results is not {}'s (KB_MAIL_AUTHSERV_ID) but {id:?}'s",
                self.authserv_id
            ));
        }
        let (mut dmarc, mut dkim) = (None, false);
        for result in parts {
            let mut words = result.split_whitespace();
            let Some((method, outcome)) = words.next().and_then(|w| w.split_once('=')) else { continue };
            let props: Vec<(String, String)> = words
                .filter_map(|w| w.split_once('='))
                .map(|(k, v)| (k.to_lowercase(), v.trim_start_matches('@').to_lowercase()))
                .collect();
            let says = |key: &str| {
                props.iter().any(|(k, v)| k == key && (v == domain || v.ends_with(&format!("@{domain}"))))
            };
            let outcome = outcome.to_lowercase();
            match method.to_lowercase().as_str() {
                // DMARC checked another sender than the mail names: something is off.
                "dmarc" if props.iter().any(|(k, v)| k == "header.from" && v != domain) => {
                    return unverified(format!(
                        "{} checked DMARC for another sender than {domain}",
                        self.authserv_id
                    ));
                }
                // The first DMARC verdict stands: a later one cannot outvote it. `none` (the
                // domain publishes no policy) and the errors are no verdict: DKIM decides.
                "dmarc"
                    if says("header.from")
                        && dmarc.is_none()
                        && matches!(outcome.as_str(), "pass" | "fail") =>
                {
                    dmarc = Some(outcome == "pass");
                }
                "dkim" if outcome == "pass" && (says("header.d") || says("header.i")) => dkim = true,
                _ => {}
            }
        }
        match dmarc {
            Some(true) => Verdict::Allowed,
            Some(false) => unverified(format!("{} says DMARC failed for {domain}", self.authserv_id)),
            None if dkim => Verdict::Allowed,
            None => unverified(format!(
                "{} says DMARC did not pass for {domain}, and DKIM did not either",
                self.authserv_id
            )),
        }
    }
}

/// An `Authentication-Results` value with its `(comments)` left out and its quoted strings
/// unquoted, their `;`, `=` and spaces made `_`: what a sender put in quotes (a quoted
/// `smtp.mailfrom`) can never read as a result of its own.
fn plain(header: &str) -> String {
    let mut out = String::with_capacity(header.len());
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for c in header.chars() {
        if escaped {
            escaped = false;
            if depth == 0 {
                out.push(if quoted && matches!(c, ';' | '=' | ' ' | '\t') { '_' } else { c });
            }
            continue;
        }
        match c {
            '\\' if quoted || depth > 0 => escaped = true,
            '"' if depth == 0 => quoted = !quoted,
            ';' | '=' | ' ' | '\t' if quoted => out.push('_'),
            _ if quoted => out.push(c),
            '(' => depth += 1,
            ')' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    // `dmarc = pass`: RFC 8601 allows spaces around `=`.
    let mut tight = String::with_capacity(out.len());
    for piece in out.split('=') {
        if !tight.is_empty() {
            tight.truncate(tight.trim_end().len());
            tight.push('=');
            tight.push_str(piece.trim_start());
        } else {
            tight.push_str(piece);
        }
    }
    tight
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(headers: &str, body: &str) -> Vec<u8> {
        format!("{headers}\r\n\r\n{body}").replace('\n', "\r\n").replace("\r\r\n", "\r\n").into_bytes()
    }

    fn rules() -> SenderRules {
        SenderRules::new(&["Ana@Example.com".to_string()], false, "mx.kb.test")
    }

    const BASE: &str = "From: Ana <ana@example.com>\nTo: kb@kb.test\nSubject: Seeds to order\nMessage-ID: <a1@example.com>\nDate: Sun, 29 Nov 2026 09:00:00 +0000";

    #[test]
    fn a_plain_mail_is_read() {
        let read = read_mail(&mail(BASE, "Tomatoes, basil and\nsweet peas.\n")).unwrap();
        assert_eq!(read.from, "ana@example.com");
        assert_eq!(read.subject.as_deref(), Some("Seeds to order"));
        assert_eq!(read.message_id.as_deref(), Some("a1@example.com"));
        assert_eq!(read.date.as_deref(), Some("2026-11-29T09:00:00Z"));
        assert!(read.text.contains("sweet peas"), "{}", read.text);
    }

    #[test]
    fn an_html_mail_becomes_markdown() {
        let headers = format!("{BASE}\nMIME-Version: 1.0\nContent-Type: text/html; charset=utf-8");
        let html = "<html><head><style>p{}</style></head><body><h1>Order</h1><p>Buy <b>rye</b> flour.</p><ul><li>one</li></ul><script>x()</script></body></html>";
        let read = read_mail(&mail(&headers, html)).unwrap();
        assert!(read.text.contains("# Order") && read.text.contains("**rye**"), "{}", read.text);
        assert!(!read.text.contains("x()") && !read.text.contains("p{}"), "{}", read.text);
    }

    #[test]
    fn only_the_receiving_servers_results_vouch_for_the_sender() {
        let passed = format!(
            "Authentication-Results: mx.kb.test; dkim=pass header.d=example.com; spf=pass; dmarc=pass (p=reject) header.from=example.com\n{BASE}"
        );
        assert_eq!(rules().check(&read_mail(&mail(&passed, "hi")).unwrap()), Verdict::Allowed);
        let dkim_only =
            format!("Authentication-Results: mx.kb.test;\n  dkim=pass (good) header.i=@example.com\n{BASE}");
        assert_eq!(rules().check(&read_mail(&mail(&dkim_only, "hi")).unwrap()), Verdict::Allowed);
        // Forged: results written by someone else, a failed DMARC, another domain's DKIM.
        for forged in [
            format!("Authentication-Results: evil.test; dmarc=pass header.from=example.com\n{BASE}"),
            format!("Authentication-Results: mx.kb.test; dmarc=fail header.from=example.com\n{BASE}"),
            format!("Authentication-Results: mx.kb.test; dkim=pass header.d=evil.test\n{BASE}"),
            BASE.to_string(),
            // A pass the sender wrote below the server's fail.
            format!(
                "Authentication-Results: mx.kb.test; dmarc=fail header.from=example.com\nAuthentication-Results: mx.kb.test; dmarc=pass header.from=example.com\n{BASE}"
            ),
            // A pass the sender hid in a quoted envelope address the server repeats.
            format!(
                "Authentication-Results: mx.kb.test; spf=fail smtp.mailfrom=\"x;dmarc=pass header.from=example.com;\"@evil.test; dkim=none; dmarc=fail header.from=example.com\n{BASE}"
            ),
            format!(
                "Authentication-Results: mx.kb.test; spf=fail smtp.mailfrom=\"x;dkim=pass header.d=example.com;\"@evil.test\n{BASE}"
            ),
            // A pass after the server's fail, in the same header.
            format!(
                "Authentication-Results: mx.kb.test; dmarc=fail header.from=example.com; dmarc=pass header.from=example.com\n{BASE}"
            ),
            // The server's results (another name on top) above a forged pass.
            format!(
                "Authentication-Results: relay.kb.test; none\nAuthentication-Results: mx.kb.test; dmarc=pass header.from=example.com\n{BASE}"
            ),
        ] {
            let verdict = rules().check(&read_mail(&mail(&forged, "hi")).unwrap());
            assert!(matches!(verdict, Verdict::Unverified(_)), "{forged}: {verdict:?}");
        }
        // The server's pass on top stands, whatever the sender wrote below it.
        let above = format!(
            "Authentication-Results: mx.kb.test; dmarc=pass header.from=\"example.com\"\nAuthentication-Results: mx.kb.test; dmarc=fail header.from=example.com\n{BASE}"
        );
        assert_eq!(rules().check(&read_mail(&mail(&above, "hi")).unwrap()), Verdict::Allowed);
        let several = BASE.replace("From: Ana <ana@example.com>", "From: ana@example.com, evil@evil.test");
        assert!(read_mail(&mail(&several, "hi")).is_err(), "a mail naming several senders is refused");
        let two = BASE.replace("From: Ana <ana@example.com>", "From: evil@evil.test\nFrom: ana@example.com");
        assert!(read_mail(&mail(&two, "hi")).is_err(), "two From headers are refused");
        let stitched = BASE.replace("From: Ana <ana@example.com>", "From: <ana@> <example.com>");
        assert!(read_mail(&mail(&stitched, "hi")).is_err(), "a stitched address is refused");
        // No DMARC policy: DKIM for the domain decides. DMARC of another sender: refused.
        let spaced =
            format!("Authentication-Results: mx.kb.test; dmarc = pass header.from = example.com\n{BASE}");
        assert_eq!(rules().check(&read_mail(&mail(&spaced, "hi")).unwrap()), Verdict::Allowed);
        let no_policy = format!(
            "Authentication-Results: mx.kb.test; dkim=pass header.d=example.com; dmarc=none (p=none) header.from=example.com\n{BASE}"
        );
        assert_eq!(rules().check(&read_mail(&mail(&no_policy, "hi")).unwrap()), Verdict::Allowed);
        let other = format!(
            "Authentication-Results: mx.kb.test; dmarc=fail header.from=evil.test; dkim=pass header.d=example.com\n{BASE}"
        );
        assert!(matches!(rules().check(&read_mail(&mail(&other, "hi")).unwrap()), Verdict::Unverified(_)));
        let stranger = BASE.replace("ana@example.com", "bob@example.com");
        assert_eq!(rules().check(&read_mail(&mail(&stranger, "hi")).unwrap()), Verdict::NotAllowed);
        let trusting = SenderRules::new(&["ana@example.com".into()], true, "mx.kb.test");
        assert_eq!(trusting.check(&read_mail(&mail(BASE, "hi")).unwrap()), Verdict::Allowed);
    }

    #[test]
    fn attachments_are_kept_and_broken_mail_is_refused() {
        let headers = format!("{BASE}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b1\"");
        let body = "--b1\nContent-Type: text/plain\n\nSee the plan.\n--b1\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=\"plan.pdf\"\nContent-Transfer-Encoding: base64\n\nJVBERi0xLjQK\n--b1--\n";
        let read = read_mail(&mail(&headers, body)).unwrap();
        assert!(read.text.contains("See the plan"));
        assert_eq!(read.attachments.len(), 1);
        assert_eq!(read.attachments[0].name, "plan.pdf");
        assert_eq!(read.attachments[0].bytes, b"%PDF-1.4\n");
        // Boundaries that never close still give what could be read.
        let broken = read_mail(&mail(&headers, "--b1\nContent-Type: text/plain\n\nhalf a mail"));
        assert!(broken.as_ref().is_ok_and(|m| m.text.contains("half a mail")), "{broken:?}");
        assert!(read_mail(b"no headers, no sender").is_err());
    }

    #[test]
    fn a_forwarded_mail_is_kept_and_its_text_follows_and_cjk_is_decoded() {
        let headers = format!("{BASE}\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b1\"");
        let inner = "From: Bo <bo@example.org>\nSubject: Boiler service\n\nThe engineer comes Tuesday.\n";
        let body = format!(
            "--b1\nContent-Type: text/plain\n\nFYI, see below.\n--b1\nContent-Type: message/rfc822\n\n{inner}\n--b1--\n"
        );
        let read = read_mail(&mail(&headers, &body)).unwrap();
        assert!(
            read.text.contains("FYI")
                && read.text.contains("Forwarded mail from bo@example.org: Boiler service")
        );
        assert!(read.text.contains("engineer comes Tuesday"), "{}", read.text);
        assert_eq!(read.attachments.len(), 1);
        assert_eq!(read.attachments[0].name, "forwarded.eml");
        let japanese = format!(
            "{}\nMIME-Version: 1.0\nContent-Type: text/plain; charset=ISO-2022-JP",
            BASE.replace(
                "Subject: Seeds to order",
                "Subject: =?ISO-2022-JP?B?GyRCRnxLXDhsGyhC?=\n\t=?UTF-8?Q?_=E2=80=AEevil?="
            )
        );
        let mut raw = mail(&japanese, "");
        raw.extend_from_slice(b"\x1b$BF|K\\8l\x1b(B\r\n");
        let read = read_mail(&raw).unwrap();
        assert_eq!(read.subject.as_deref(), Some("日本語 evil"), "one line, no bidi override");
        assert_eq!(read.text, "日本語");
    }
}
