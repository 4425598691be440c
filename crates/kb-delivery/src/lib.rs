//! kb's delivery adapters: the [`DeliveryChannel`](kb_domain::delivery::DeliveryChannel)s
//! that send a [`DigestMessage`](kb_domain::delivery::DigestMessage) out of kb.
//!
//! - [`EmailChannel`] sends it by SMTP (lettre): a `multipart/alternative` mail with the
//!   markdown as `text/plain` and rendered as `text/html`.
//! - [`WebhookChannel`] POSTs it to a URL (reqwest), as kb's JSON, as an ntfy notification
//!   or as a Slack incoming-webhook message ([`WebhookFormat`]).
//!
//! Both are built from settings and check them when built (a bad URL or address is an error
//! then, not at the first send); both send once per call, with a timeout, and answer a
//! [`DeliveryError`](kb_domain::delivery::DeliveryError) that says whether trying again may
//! help. Neither logs nor returns a secret: no SMTP password, no webhook URL beyond its host.

pub mod email;
pub mod render;
pub mod webhook;

pub use email::{EmailChannel, EmailSettings, EmailSetupError};
pub use webhook::{WebhookChannel, WebhookFormat, WebhookSettings, WebhookSetupError};

/// A bounded, single-line excerpt of `text` for an error message: whitespace runs become one
/// space and at most `max` characters are kept.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, word) in text.split_whitespace().enumerate() {
        if count > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.chars().count() > max {
            let cut: String = out.chars().take(max).collect();
            return format!("{cut}…");
        }
    }
    out
}

/// Replaces every occurrence of each non-empty secret in `text` with `***`.
pub(crate) fn scrub(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|secret| !secret.is_empty()) {
        out = out.replace(secret.as_str(), "***");
    }
    out
}

/// Decodes `%XX` escapes (as in a URL's user info); anything malformed is kept as is.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = text.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            index += 3;
            continue;
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_is_one_bounded_line() {
        assert_eq!(excerpt("a\n b\t\tc", 10), "a b c");
        assert_eq!(excerpt("abcdef ghij", 4), "abcd…");
    }

    #[test]
    fn scrub_hides_secrets() {
        let secrets = vec!["s3cret".to_owned(), String::new()];
        assert_eq!(scrub("pass s3cret!", &secrets), "pass ***!");
    }

    #[test]
    fn percent_decode_decodes_escapes() {
        assert_eq!(percent_decode("p%40ss%2Fw%zz"), "p@ss/w%zz");
        assert_eq!(percent_decode("%"), "%");
    }
}
