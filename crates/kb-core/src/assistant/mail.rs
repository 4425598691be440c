//! Mail taken in: `kb serve` watches the mailbox `KB_MAIL_IMAP_URL` names and files each
//! new message from an allowed, verified sender as a capture (its subject and text, with
//! `source: email`, `from`, `message_id` and `sent_at`; its attachments kept beside it).
//!
//! Each message is claimed before it is filed ([`SqliteMailClaims`]) and the claim is
//! marked filed in the transaction that records the capture, so several kb processes
//! watching one mailbox, or one stopped half-way, file it once; a Message-ID already filed
//! is never filed again. Then the message is marked `$KbFiled` in the mailbox (or
//! `$KbRefused`: not from an allowed sender, not verified, unreadable or too large), and,
//! with `KB_MAIL_REPLY=1`, its sender gets a reply saying what was filed where.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use kb_domain::Frontmatter;
use kb_domain::fields::keys;
use kb_intake::mail::{Mail, Verdict, read_mail};
use kb_intake::mailbox::{FILED, Fetched, Mailbox, MailboxError, REFUSED};
use kb_storage::mail_claims::{MailClaim, SqliteMailClaims};
use kb_storage::vault::{KeptFile, Upload};
use kb_tools::tools::capture::{CaptureArgs, CaptureData, ClassifyAndCapture, Document};
use kb_tools::{CaptureSource, ErrorCode, ToolContext};
use serde_json::Value;
use tracing::Instrument;

use super::Assistant;
use crate::config::MailConfig;
use crate::error::ToolFailure;

/// How long a claim may stay unfinished before another process takes the message over
/// (its process stopped while filing it).
const ABANDONED_AFTER: chrono::TimeDelta = chrono::TimeDelta::minutes(10);

/// The first wait before connecting again after the mailbox failed; it doubles up to
/// [`LONGEST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_secs(5);
/// The longest wait before connecting again.
const LONGEST_RETRY: Duration = Duration::from_secs(300);

/// The replies sent at once; the others wait their turn.
static REPLYING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(4);

/// How many of the newest notes are read for a mail's `message_id` when its claim is taken
/// over (its note may have been written, unrecorded, by the process that stopped).
const NOTES_LOOKED_AT: usize = 500;

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Filed now.
    Filed,
    /// Filed before (by this process or another): only marked now.
    AlreadyFiled,
    /// Another process is filing it.
    Busy,
    /// Not filed, and never will be: why.
    Refused(String),
    /// Gone from the mailbox.
    Gone,
}

impl Assistant {
    /// Starts watching the mailbox, when one is set (`KB_MAIL_IMAP_URL`); the task ends
    /// when the assistant is dropped, or is aborted. `kb serve` runs it.
    pub fn start_mail_watch(self: &Arc<Self>) -> Option<tokio::task::JoinHandle<()>> {
        let config = self.intake.mail.clone()?;
        let claims = SqliteMailClaims::beside(&self.store);
        let kb = Arc::downgrade(self);
        Some(tokio::spawn(watch(kb, config, claims)))
    }
}

/// Watches the mailbox until the assistant goes: files what is there, waits for more,
/// and connects again (waiting longer each time) when the connection fails.
async fn watch(kb: Weak<Assistant>, config: MailConfig, claims: SqliteMailClaims) {
    let mut retry = FIRST_RETRY;
    loop {
        match Mailbox::open(&config.mailbox).await {
            Err(error) => tracing::warn!(%error, retry_in = retry.as_secs(), "the mailbox cannot be opened"),
            Ok(mut mailbox) => {
                tracing::info!(mailbox = %config.mailbox.name(), "watching the mailbox for mail to file");
                if !mailbox.keeps_keywords() {
                    tracing::warn!(
                        "the mailbox does not keep the keywords kb marks mail with ($KbFiled, $KbRefused): \
                         each mail is still filed once, but kb reads every one again after a restart"
                    );
                }
                retry = FIRST_RETRY;
                // The messages this connection dealt with: not read again, marked or not.
                let mut done = HashSet::new();
                let error = loop {
                    let Some(assistant) = kb.upgrade() else {
                        mailbox.close().await;
                        return;
                    };
                    if let Err(error) = assistant.take_mail(&mut mailbox, &config, &claims, &mut done).await {
                        break error;
                    }
                    drop(assistant);
                    if let Err(error) = mailbox.wait(config.poll).await {
                        break error;
                    }
                };
                tracing::warn!(%error, retry_in = retry.as_secs(), "the mailbox failed");
            }
        }
        if kb.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(LONGEST_RETRY);
    }
}

impl Assistant {
    /// Files every message of `mailbox` kb has not marked yet (nor dealt with, in `done`).
    async fn take_mail(
        &self,
        mailbox: &mut Mailbox,
        config: &MailConfig,
        claims: &SqliteMailClaims,
        done: &mut HashSet<(u32, u32)>,
    ) -> Result<(), MailboxError> {
        for uid in mailbox.unmarked().await? {
            let key = (mailbox.uid_validity(), uid);
            if done.contains(&key) {
                continue;
            }
            let message = format!("{} {}:{uid}", config.mailbox.name(), mailbox.uid_validity());
            let span = tracing::info_span!("mail", %message);
            let outcome = async {
                let outcome = match mailbox.fetch(uid, self.intake.upload_max_bytes).await? {
                    Fetched::Gone => Outcome::Gone,
                    Fetched::TooLarge(size) => Outcome::Refused(format!(
                        "it is {size} bytes, more than KB_UPLOAD_MAX_BYTES ({})",
                        self.intake.upload_max_bytes
                    )),
                    Fetched::Message(raw) => self.take_one(&raw, &message, config, claims).await,
                };
                let kept = match &outcome {
                    Outcome::Filed | Outcome::AlreadyFiled => mailbox.mark(uid, FILED).await?,
                    Outcome::Refused(why) => {
                        tracing::warn!(why, "a mail was not filed");
                        mailbox.mark(uid, REFUSED).await?
                    }
                    Outcome::Busy | Outcome::Gone => true,
                };
                if !kept && done.is_empty() {
                    tracing::warn!(
                        "the mail server did not keep kb's keyword on a mail: each mail is still filed \
                         once, but kb reads every one again after each reconnection"
                    );
                }
                Ok::<Outcome, MailboxError>(outcome)
            }
            .instrument(span)
            .await?;
            if outcome != Outcome::Busy {
                done.insert(key);
            }
        }
        Ok(())
    }

    /// Reads, checks, claims and files one message.
    async fn take_one(
        &self,
        raw: &[u8],
        message: &str,
        config: &MailConfig,
        claims: &SqliteMailClaims,
    ) -> Outcome {
        let mail = match read_mail(raw) {
            Ok(mail) => mail,
            Err(error) => return Outcome::Refused(error.to_string()),
        };
        match config.senders.check(&mail) {
            Verdict::Allowed => {}
            Verdict::NotAllowed => {
                return Outcome::Refused(format!("{} is not in KB_MAIL_ALLOWED_SENDERS", mail.from));
            }
            Verdict::Unverified(why) => {
                return Outcome::Refused(format!("{} may have been forged: {why}", mail.from));
            }
        }
        if mail.automatic {
            return Outcome::Refused(format!("{} sent it automatically (an autoreply)", mail.from));
        }
        // A mail without a Message-ID is known by its bytes (and its note says so).
        let mut mail = mail;
        let known_as = mail
            .message_id
            .get_or_insert_with(|| format!("sha256:{}", kb_storage::history::content_hash(raw)))
            .clone();
        let now = self.services.clock.now();
        match claims.claim(message, Some(&known_as), now, ABANDONED_AFTER).await {
            Err(error) => {
                tracing::warn!(%error, "a mail could not be claimed; it is tried again later");
                return Outcome::Busy;
            }
            Ok(MailClaim::Busy) => return Outcome::Busy,
            Ok(MailClaim::Filed) => {
                tracing::info!(message_id = %known_as, "a mail filed before is only marked");
                return Outcome::AlreadyFiled;
            }
            Ok(MailClaim::TakenOver) => {
                if let Some(path) = self.note_of_mail(&known_as) {
                    tracing::info!(%path, "a mail's note was written before kb stopped: it is not filed again");
                    if let Err(error) = claims.found_filed(message).await {
                        tracing::warn!(%error, "a mail's claim could not be marked filed");
                    }
                    return Outcome::AlreadyFiled;
                }
            }
            Ok(MailClaim::Granted) => {}
        }
        match self.file_mail(&mail, message).await {
            Ok(filed) => {
                tracing::info!(path = %filed.path, from = %mail.from, "a mail was filed");
                if config.reply {
                    self.reply_to(&mail, &filed);
                }
                Outcome::Filed
            }
            Err(failure) => {
                if let Err(error) = claims.release(message).await {
                    tracing::warn!(%error, "a mail's claim could not be given up");
                }
                if matches!(failure.code, ErrorCode::InvalidArguments | ErrorCode::UnreadableFile) {
                    Outcome::Refused(failure.message)
                } else {
                    tracing::warn!(error = %failure.message, "a mail could not be filed; it is tried again later");
                    Outcome::Busy
                }
            }
        }
    }

    /// The note among the newest that holds the mail `message_id`, when there is one.
    fn note_of_mail(&self, message_id: &str) -> Option<String> {
        let filter = kb_domain::ListFilter { limit: NOTES_LOOKED_AT, ..Default::default() };
        let page = self.services.repository.list(&filter).ok()?;
        let said = [
            format!("{}: {message_id}", keys::MESSAGE_ID),
            format!("{}: '{message_id}'", keys::MESSAGE_ID),
            format!("{}: \"{message_id}\"", keys::MESSAGE_ID),
        ];
        page.entries.iter().map(|entry| entry.path.to_string()).find(|path| {
            std::fs::read_to_string(self.vault.root().join(path))
                .is_ok_and(|text| text.lines().any(|line| said.iter().any(|s| line.trim_end() == s)))
        })
    }

    /// Files `mail` as a capture claimed as `message`: its attachments kept, linked from it.
    async fn file_mail(&self, mail: &Mail, message: &str) -> Result<CaptureData, ToolFailure> {
        let mut kept = Vec::new();
        for file in &mail.attachments {
            match self.keep_attachment(&file.name, &file.bytes).await {
                Ok(file) => kept.push(file),
                Err(failure) => {
                    self.forget_kept(&kept);
                    return Err(failure);
                }
            }
        }
        let mut fields = Frontmatter::new();
        fields.set(keys::FROM, Value::String(mail.from.clone()));
        if let Some(id) = &mail.message_id {
            fields.set(keys::MESSAGE_ID, Value::String(id.clone()));
        }
        if let Some(date) = &mail.date {
            fields.set(keys::SENT_AT, Value::String(date.clone()));
        }
        match kept.as_slice() {
            [] => {}
            [one] => fields.set(keys::ATTACHMENT, Value::String(one.path.clone())),
            many => fields.set(
                keys::ATTACHMENT,
                Value::Array(many.iter().map(|file| Value::String(file.path.clone())).collect()),
            ),
        }
        let link = (!kept.is_empty())
            .then(|| kept.iter().map(|file| format!("![[{}]]", file.path)).collect::<Vec<_>>().join("\n"));
        let title = mail.subject.clone().unwrap_or_else(|| format!("Mail from {}", mail.from));
        let document = Document {
            title: Some(title.clone()),
            text: mail.text.clone(),
            link,
            fields,
            source: CaptureSource::Email,
        };
        let args = CaptureArgs {
            text: if mail.text.trim().is_empty() { title } else { mail.text.clone() },
            hints: None,
            merge_into: None,
            create_new: None,
            classification: None,
            document: Some(document),
        };
        let ctx = ToolContext {
            claim: Some(message.to_string()),
            ..self.direct_context(CaptureSource::Email, &kb_domain::Actor::local())
        };
        let filed = self.run_in::<ClassifyAndCapture>(args, &ctx).await;
        match &filed {
            Ok(_) => kept.iter().for_each(|file| self.vault.keep_linked(&file.path)),
            Err(_) => self.forget_kept(&kept),
        }
        filed
    }

    /// Keeps one attached file in `attachments/`.
    async fn keep_attachment(&self, name: &str, bytes: &[u8]) -> Result<KeptFile, ToolFailure> {
        let root = self.vault.root().to_path_buf();
        let limit = self.intake.upload_max_bytes;
        let (name, bytes) = (name.to_string(), bytes.to_vec());
        let keeping = tokio::task::spawn_blocking(move || {
            let mut upload = Upload::start(&root, limit)?;
            upload.write(&bytes)?;
            upload.keep(&name)
        });
        match keeping.await {
            Ok(Ok(kept)) => Ok(kept),
            Ok(Err(error)) => Err(ToolFailure::new(ErrorCode::InvalidArguments, error.to_string())),
            Err(_) => Err(ToolFailure::new(ErrorCode::Internal, "keeping an attachment failed")),
        }
    }

    /// Removes the files just kept for a mail that was not filed (those kb made now).
    fn forget_kept(&self, kept: &[KeptFile]) {
        for file in kept.iter().filter(|file| file.created) {
            let _ = std::fs::remove_file(self.vault.root().join(&file.path));
        }
    }

    /// Tells the sender of `mail` what was filed where, in a task of its own (a slow mail
    /// server never holds up the next mail; a failure is only logged).
    fn reply_to(&self, mail: &Mail, filed: &CaptureData) {
        let Some(email) = self.outbox.config().email.as_ref() else { return };
        let settings = kb_delivery::email::EmailSettings {
            smtp_url: email.smtp_url.clone(),
            from: email.from.clone(),
            to: vec![mail.from.clone()],
        };
        let channel = match kb_delivery::email::EmailChannel::new(&settings) {
            Ok(channel) => channel,
            Err(error) => {
                tracing::warn!(%error, "the reply to a filed mail cannot be sent");
                return;
            }
        };
        let said: String = mail.subject.as_deref().unwrap_or("your mail").chars().take(200).collect();
        let subject = if said.get(..3).is_some_and(|re| re.eq_ignore_ascii_case("re:")) {
            said
        } else {
            format!("Re: {said}")
        };
        let mut text = format!("Filed \"{}\" in {} ({}).\n", filed.name, filed.category, filed.path);
        if filed.clarification_needed {
            text.push_str("kb was not sure where it belongs: it waits in the inbox for you to say.\n");
        }
        // A mail without a Message-ID of its own has nothing to answer to.
        let answering = mail.message_id.clone().filter(|id| !id.starts_with("sha256:"));
        tokio::spawn(
            async move {
                // A few at a time: a hung mail server must not take a connection per mail.
                let Ok(_turn) = REPLYING.acquire().await else { return };
                if let Err(error) = channel.reply(&subject, &text, answering.as_deref()).await {
                    tracing::warn!(%error, "the reply to a filed mail was not sent");
                }
            }
            .in_current_span(),
        );
    }
}
