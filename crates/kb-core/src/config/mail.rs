//! The settings of mail taken in (`KB_MAIL_*`): the mailbox kb watches, who may file into
//! kb by mail and how that is checked, whether kb replies, and how often it looks when the
//! server cannot say.

use std::time::Duration;

use kb_intake::mail::SenderRules;
use kb_intake::mailbox::MailboxAddress;

use super::{ConfigError, count};

/// How often kb looks at the mailbox, when its server does not offer IDLE.
pub const DEFAULT_POLL: Duration = Duration::from_secs(60);

/// The mailbox kb files mail from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailConfig {
    /// Where it is (`KB_MAIL_IMAP_URL`).
    pub mailbox: MailboxAddress,
    /// Who may file, and how a sender is believed (`KB_MAIL_ALLOWED_SENDERS`,
    /// `KB_MAIL_TRUST_FROM`, `KB_MAIL_AUTHSERV_ID`).
    pub senders: SenderRules,
    /// Whether a verified sender gets a reply saying what was filed where (`KB_MAIL_REPLY`;
    /// sent through `KB_SMTP_URL`).
    pub reply: bool,
    /// How often kb looks without IDLE (`KB_MAIL_POLL_SECS`, 60).
    pub poll: Duration,
}

impl MailConfig {
    /// Reads the settings through `lookup`: none unless `KB_MAIL_IMAP_URL` is set.
    pub(super) fn from_lookup(
        lookup: &impl Fn(&str) -> Option<String>,
    ) -> Result<Option<MailConfig>, ConfigError> {
        let Some(url) = lookup("KB_MAIL_IMAP_URL") else {
            // A mail setting without a mailbox is a mistake worth saying, not a silence.
            for name in [
                "KB_MAIL_ALLOWED_SENDERS",
                "KB_MAIL_TRUST_FROM",
                "KB_MAIL_REPLY",
                "KB_MAIL_AUTHSERV_ID",
                "KB_MAIL_POLL_SECS",
            ] {
                if let Some(value) = lookup(name) {
                    return Err(ConfigError::Invalid {
                        name,
                        value,
                        expected: "set only with KB_MAIL_IMAP_URL",
                    });
                }
            }
            return Ok(None);
        };
        let mailbox = MailboxAddress::parse(&url)
            .map_err(|e| ConfigError::Setting { name: "KB_MAIL_IMAP_URL", problem: e.to_string() })?;
        let allowed: Vec<String> = lookup("KB_MAIL_ALLOWED_SENDERS")
            .unwrap_or_default()
            .split(',')
            .map(|a| {
                // `Ana <ana@example.org>`: the address between the brackets.
                let a = a.trim();
                let inner = a.rsplit_once('<').and_then(|(_, rest)| rest.strip_suffix('>'));
                inner.unwrap_or(a).trim().to_string()
            })
            .filter(|a| !a.is_empty())
            .collect();
        if allowed.is_empty() {
            return Err(ConfigError::Invalid {
                name: "KB_MAIL_ALLOWED_SENDERS",
                value: String::new(),
                expected: "the addresses that may file into kb by mail, separated by commas (needed with KB_MAIL_IMAP_URL)",
            });
        }
        let address = |a: &str| {
            a.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty() && domain.contains('.') && !domain.contains('@') && !domain.starts_with('.')
            }) && !a.contains(char::is_whitespace)
        };
        if let Some(bad) = allowed.iter().find(|a| !address(a)) {
            return Err(ConfigError::Invalid {
                name: "KB_MAIL_ALLOWED_SENDERS",
                value: bad.clone(),
                expected: "mail addresses (ana@example.org) separated by commas",
            });
        }
        let authserv_id = lookup("KB_MAIL_AUTHSERV_ID").unwrap_or_else(|| mailbox.host().to_string());
        let senders =
            SenderRules::new(&allowed, super::intake::flag(lookup, "KB_MAIL_TRUST_FROM")?, &authserv_id);
        let poll = count(lookup, "KB_MAIL_POLL_SECS", DEFAULT_POLL.as_secs() as usize)?;
        if !(1..=3_600).contains(&poll) {
            return Err(ConfigError::Invalid {
                name: "KB_MAIL_POLL_SECS",
                value: poll.to_string(),
                expected: "a whole number of seconds from 1 to 3600",
            });
        }
        Ok(Some(MailConfig {
            mailbox,
            senders,
            reply: super::intake::flag(lookup, "KB_MAIL_REPLY")?,
            poll: Duration::from_secs(poll as u64),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<MailConfig>, ConfigError> {
        MailConfig::from_lookup(&|name: &str| {
            pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn a_mailbox_needs_its_allowed_senders() {
        assert_eq!(read(&[]).unwrap(), None);
        let url = ("KB_MAIL_IMAP_URL", "imap://kb:pw@127.0.0.1:1143/INBOX");
        assert!(read(&[url]).is_err());
        for bad in ["not an address", "@", "@example.com", "ana@", "ana@@x.org"] {
            assert!(read(&[url, ("KB_MAIL_ALLOWED_SENDERS", bad)]).is_err(), "{bad}");
        }
        assert!(read(&[("KB_MAIL_REPLY", "1")]).is_err(), "a mail setting without a mailbox");
        let named = read(&[url, ("KB_MAIL_ALLOWED_SENDERS", "Ana <ana@x.org>")]).unwrap().unwrap();
        assert_eq!(named.senders, SenderRules::new(&["ana@x.org".into()], false, "127.0.0.1"));
        assert!(read(&[url, ("KB_MAIL_ALLOWED_SENDERS", "a@x.org"), ("KB_MAIL_POLL_SECS", "0")]).is_err());
        let mail = read(&[url, ("KB_MAIL_ALLOWED_SENDERS", " A@x.org, <b@y.org> ")]).unwrap().unwrap();
        assert_eq!(mail.senders, SenderRules::new(&["a@x.org".into(), "b@y.org".into()], false, "127.0.0.1"));
        assert_eq!((mail.reply, mail.poll), (false, DEFAULT_POLL));
        assert!(read(&[("KB_MAIL_IMAP_URL", "imap://kb:pw@mail.example.org/INBOX")]).is_err());
    }
}
