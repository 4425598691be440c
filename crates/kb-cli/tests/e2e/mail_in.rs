//! Mail taken in: `kb serve` watching a mailbox on a real IMAP server (Debian's
//! dovecot-imapd, a throwaway one: `.ci/dovecot`, started by `.ci/run` or here), filing
//! mail from allowed, verified senders once each, with two kb processes and across a
//! restart, and replying through a loopback SMTP server.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use tokio::net::TcpStream;

use crate::common::KbServer;

use crate::outreach::smtp;

/// The password every user of the throwaway server has.
const PASSWORD: &str = "secret";
/// The name the receiving server signs its `Authentication-Results` with, in these mails.
const AUTHSERV: &str = "mx.kb.test";
/// How long kb may take to file or mark what is in the mailbox.
const WITHIN: Duration = Duration::from_secs(30);

/// The throwaway IMAP server's `host:port`: `KB_TEST_IMAP` (`.ci/run` starts one), else
/// one started now, stopped when this test binary ends.
fn imap_server() -> &'static str {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER.get_or_init(|| {
        if let Ok(address) = std::env::var("KB_TEST_IMAP") {
            return address;
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/dovecot");
        let dir = std::env::temp_dir().join(format!("kb-test-dovecot-{}", std::process::id()));
        let output = std::process::Command::new(script)
            .arg(&dir)
            .arg(std::process::id().to_string())
            .output()
            .expect("run .ci/dovecot");
        assert!(
            output.status.success(),
            "the throwaway IMAP server did not start (is dovecot-imapd installed?): {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    })
}

/// A mailbox of its own on the throwaway server.
struct TestMailbox {
    user: String,
}

impl TestMailbox {
    fn new(name: &str) -> TestMailbox {
        TestMailbox { user: format!("{name}-{}", std::process::id()) }
    }

    /// `KB_MAIL_IMAP_URL` for it.
    fn url(&self) -> String {
        format!("imap://{}:{PASSWORD}@{}/INBOX", self.user, imap_server())
    }

    async fn session(&self) -> async_imap::Session<TcpStream> {
        let stream = TcpStream::connect(imap_server()).await.unwrap();
        let mut client = async_imap::Client::new(stream);
        client.read_response().await.unwrap().unwrap();
        let mut session = client.login(&self.user, PASSWORD).await.map_err(|(e, _)| e).unwrap();
        session.select("INBOX").await.unwrap();
        session
    }

    /// Puts `raw` in the mailbox, as a delivery would.
    async fn deliver(&self, raw: &str) {
        let mut session = self.session().await;
        session.append("INBOX", None, None, raw.replace('\n', "\r\n")).await.unwrap();
        session.logout().await.unwrap();
    }

    /// The UIDs of the messages marked with `keyword`.
    async fn marked(&self, keyword: &str) -> Vec<u32> {
        let mut session = self.session().await;
        let mut uids: Vec<u32> =
            session.uid_search(format!("KEYWORD {keyword}")).await.unwrap().into_iter().collect();
        session.logout().await.unwrap();
        uids.sort_unstable();
        uids
    }

    /// Takes `keyword` off every message.
    async fn unmark(&self, keyword: &str) {
        let mut session = self.session().await;
        let answers = session.uid_store("1:*", format!("-FLAGS ({keyword})")).await.unwrap();
        answers.try_collect::<Vec<_>>().await.unwrap();
        session.logout().await.unwrap();
    }

    /// Waits until `filed` messages are marked filed and `refused` refused.
    async fn wait_marked(&self, filed: usize, refused: usize, kb: &KbServer) {
        let started = Instant::now();
        loop {
            let now = (self.marked("$KbFiled").await.len(), self.marked("$KbRefused").await.len());
            if now == (filed, refused) {
                return;
            }
            assert!(
                started.elapsed() < WITHIN,
                "marked (filed, refused) {now:?}, not ({filed}, {refused}); kb's log:\n{}",
                kb.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The environment of a kb serve watching `mailbox`, taking mail from ana@example.com.
fn watching(mailbox: &TestMailbox) -> Vec<(&'static str, String)> {
    vec![
        ("KB_MAIL_IMAP_URL", mailbox.url()),
        ("KB_MAIL_ALLOWED_SENDERS", "ana@example.com".to_string()),
        ("KB_MAIL_AUTHSERV_ID", AUTHSERV.to_string()),
        ("KB_MAIL_POLL_SECS", "1".to_string()),
    ]
}

async fn start(env: &[(&'static str, String)], vault: Option<&Path>) -> KbServer {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match vault {
        Some(vault) => KbServer::start_on(vault, &env).await,
        None => KbServer::start(&env).await,
    }
}

/// A mail from `from`, vouched for by `results` (an `Authentication-Results` value).
fn mail(from: &str, results: Option<&str>, id: &str, subject: &str, body: &str) -> String {
    let results = results.map(|r| format!("Authentication-Results: {r}\n")).unwrap_or_default();
    format!(
        "{results}From: {from}\nTo: kb@kb.test\nSubject: {subject}\nMessage-ID: <{id}>\nDate: Sun, 29 Nov 2026 09:00:00 +0000\n\n{body}\n"
    )
}

fn passed() -> String {
    format!(
        "{AUTHSERV}; spf=pass smtp.mailfrom=example.com; dkim=pass header.d=example.com; dmarc=pass header.from=example.com"
    )
}

/// The notes kb made from mail, with their text.
fn mail_notes(vault: &Path) -> Vec<(String, String)> {
    crate::common::entry_files(vault)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(vault.join(&path)).unwrap();
            (path, text)
        })
        .filter(|(_, text)| text.contains("source: email"))
        .collect()
}

fn pdf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pdfs/002-trivial-libre-office-writer.pdf")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_mail_is_filed_and_forged_or_unknown_mail_is_not() {
    let mailbox = TestMailbox::new("senders");
    let sink = smtp::SmtpSink::start(smtp::Behaviour::default()).await;
    // Mail waiting before kb starts.
    mailbox
        .deliver(&mail(
            "Ana <ana@example.com>",
            Some(&passed()),
            "seeds@example.com",
            "Seeds to order",
            "Tomatoes, basil and sweet peas for the allotment.",
        ))
        .await;
    let forged = "evil.test; dmarc=pass header.from=example.com".to_string();
    mailbox
        .deliver(&mail(
            "Ana <ana@example.com>",
            Some(&forged),
            "forged@evil.test",
            "Wire money",
            "Send it now.",
        ))
        .await;
    let failed = format!("{AUTHSERV}; dmarc=fail header.from=example.com");
    mailbox.deliver(&mail("ana@example.com", Some(&failed), "failed@evil.test", "Also forged", "No.")).await;
    let stranger = passed().replace("example.com", "elsewhere.org");
    mailbox
        .deliver(&mail("bob@elsewhere.org", Some(&stranger), "bob@elsewhere.org", "Hello", "Let me in."))
        .await;
    let autoreply =
        mail("ana@example.com", Some(&passed()), "away@example.com", "Out of office", "Back Monday.")
            .replacen("Subject:", "Auto-Submitted: auto-replied\nSubject:", 1);
    mailbox.deliver(&autoreply).await;
    let mut env = watching(&mailbox);
    env.extend([
        ("KB_MAIL_REPLY", "1".to_string()),
        ("KB_SMTP_URL", sink.url()),
        ("KB_EMAIL_FROM", "kb <kb@kb.test>".to_string()),
        ("KB_EMAIL_TO", "digests@kb.test".to_string()),
    ]);
    let kb = start(&env, None).await;
    mailbox.wait_marked(1, 4, &kb).await;

    // An HTML mail with a PDF, coming while kb watches.
    let pdf_bytes = std::fs::read(pdf()).unwrap();
    let pdf_base64 = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &pdf_bytes);
    let html = format!(
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"b1\"\n\n--b1\nContent-Type: text/html; charset=utf-8\n\n<html><body><h1>Kitchen plan</h1><p>Order the <b>oak worktop</b> by Friday.</p><script>evil()</script></body></html>\n--b1\nContent-Type: application/pdf\nContent-Disposition: attachment; filename=\"plan.pdf\"\nContent-Transfer-Encoding: base64\n\n{pdf_base64}\n--b1--"
    );
    let dkim_only = format!("{AUTHSERV}; dkim=pass header.i=@example.com");
    let raw = mail("ana@example.com", Some(&dkim_only), "kitchen@example.com", "Kitchen", "").replacen(
        "\n\n",
        &format!("\n{html}"),
        1,
    );
    mailbox.deliver(&raw).await;
    mailbox.wait_marked(2, 4, &kb).await;

    let vault = kb.vault();
    let notes = mail_notes(&vault);
    assert_eq!(notes.len(), 2, "{notes:?}");
    let seeds = notes.iter().find(|(_, text)| text.contains("sweet peas")).expect("the seeds mail is filed");
    for field in ["from: ana@example.com", "message_id: seeds@example.com", "sent_at: 2026-11-29T09:00:00"] {
        assert!(seeds.1.contains(field), "{field} in {}", seeds.1);
    }
    let kitchen =
        notes.iter().find(|(_, text)| text.contains("oak worktop")).expect("the kitchen mail is filed");
    assert!(kitchen.1.contains("# Kitchen plan") && kitchen.1.contains("**oak worktop**"), "{}", kitchen.1);
    assert!(!kitchen.1.contains("evil()"), "{}", kitchen.1);
    let kept =
        kitchen.1.lines().find_map(|line| line.strip_prefix("attachment: ")).expect("the PDF is named");
    assert!(kept.starts_with("attachments/") && kept.ends_with("-plan.pdf"), "{kept}");
    assert_eq!(std::fs::read(vault.join(kept)).unwrap(), pdf_bytes, "the PDF is kept as it came");
    assert!(kitchen.1.contains(&format!("![[{kept}]]")), "{}", kitchen.1);
    for (_, text) in &notes {
        assert!(
            !text.contains("Wire money") && !text.contains("Let me in") && !text.contains("Back Monday"),
            "{text}"
        );
    }
    let history = kb.get(&format!("/api/entries/{}/history", crate::common::url_path(&seeds.0))).await.json();
    assert_eq!(history["revisions"][0]["source"], "email", "{history}");

    // Each verified sender got a reply saying where; nobody else got anything. Replies are
    // sent beside the filing: wait for them (a busy machine delays the second).
    let deadline = Instant::now() + Duration::from_secs(15);
    while sink.received().len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let replies = sink.received();
    assert_eq!(replies.len(), 2, "{replies:?}");
    for reply in &replies {
        assert_eq!(reply.rcpt_to, ["ana@example.com"]);
        let text = &reply.data;
        assert!(
            text.contains("In-Reply-To: <seeds@example.com>")
                || text.contains("In-Reply-To: <kitchen@example.com>"),
            "{text}"
        );
        assert!(text.contains("Auto-Submitted: auto-replied"), "{text}");
        assert!(text.contains("charset=utf-8"), "{text}");
    }
    assert!(replies.iter().any(|r| r.data.contains(&seeds.0)), "a reply names where the seeds note is");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_before_the_mark_and_a_second_delivery_file_nothing_twice() {
    let mailbox = TestMailbox::new("restart");
    let env = watching(&mailbox);
    let seeds = mail("ana@example.com", Some(&passed()), "once@example.com", "Seeds", "Order rye seeds.");
    mailbox.deliver(&seeds).await;
    let mut kb = start(&env, None).await;
    mailbox.wait_marked(1, 0, &kb).await;
    let vault = kb.vault();
    kb.kill();
    // As if kb had stopped after filing and before marking: the mark is gone. And the same
    // mail comes again under another UID.
    mailbox.unmark("$KbFiled").await;
    mailbox.deliver(&seeds).await;
    let kb = start(&env, Some(&vault)).await;
    mailbox.wait_marked(2, 0, &kb).await;
    assert_eq!(mail_notes(&vault).len(), 1, "{:?}", mail_notes(&vault));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kb_processes_on_one_vault_file_each_message_once() {
    let mailbox = TestMailbox::new("two");
    let env = watching(&mailbox);
    let first = start(&env, None).await;
    let vault = first.vault();
    let second = start(&env, Some(&vault)).await;
    let topics = ["rye bread", "oak worktop", "sweet peas", "bike tyres", "tax return", "piano tuner"];
    for (n, topic) in topics.iter().enumerate() {
        let body = format!("Remember the {topic}.");
        mailbox
            .deliver(&mail("ana@example.com", Some(&passed()), &format!("m{n}@example.com"), topic, &body))
            .await;
    }
    mailbox.wait_marked(topics.len(), 0, &second).await;
    let notes = mail_notes(&vault);
    assert_eq!(notes.len(), topics.len(), "{notes:?}\n{}", first.log());
    for topic in topics {
        assert_eq!(notes.iter().filter(|(_, text)| text.contains(topic)).count(), 1, "{topic}: {notes:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_note_written_before_a_crash_is_found_not_filed_again() {
    let mailbox = TestMailbox::new("crash");
    let env = watching(&mailbox);
    // A kb that stopped after writing a mail's note and before recording it: the note is in
    // the vault, and the mail's claim was left unfinished long ago.
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    std::fs::create_dir_all(&vault).unwrap();
    drop(start(&[], Some(&vault)).await);
    std::fs::create_dir_all(vault.join("ideas")).unwrap();
    std::fs::write(
        vault.join("ideas/seeds.md"),
        "---\nname: Seeds\nsource: email\nfrom: ana@example.com\nmessage_id: crash@example.com\n---\nOrder rye seeds.\n",
    )
    .unwrap();
    let claim = format!("{}@{} 1:1", mailbox.user, imap_server());
    let script = "import sqlite3, sys\n\
                  db = sqlite3.connect(sys.argv[1])\n\
                  db.execute(\"INSERT INTO mail_claims (message, message_id, claimed_at) \
                  VALUES (?, ?, '2026-01-01T00:00:00.000000Z')\", (sys.argv[2], 'crash@example.com'))\n\
                  db.commit()\n";
    let stale = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(vault.join(".kb/kb.sqlite"))
        .arg(claim)
        .status()
        .unwrap();
    assert!(stale.success());
    mailbox
        .deliver(&mail("ana@example.com", Some(&passed()), "crash@example.com", "Seeds", "Order rye seeds."))
        .await;
    let kb = start(&env, Some(&vault)).await;
    mailbox.wait_marked(1, 0, &kb).await;
    assert_eq!(mail_notes(&vault).len(), 1, "{:?}\n{}", mail_notes(&vault), kb.log());
    assert!(kb.log().contains("written before kb stopped"), "{}", kb.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_with_a_name_beyond_ascii_is_watched() {
    let mailbox = TestMailbox::new("folder");
    let mut session = mailbox.session().await;
    session.create("Entw&APw-rfe").await.unwrap();
    let raw = mail("ana@example.com", Some(&passed()), "draft@example.com", "Kitchen draft", "Oak or beech?");
    session.append("Entw&APw-rfe", None, None, raw.replace('\n', "\r\n")).await.unwrap();
    session.logout().await.unwrap();
    let mut env = watching(&mailbox);
    env[0].1 = format!("imap://{}:{PASSWORD}@{}/Entw%C3%BCrfe", mailbox.user, imap_server());
    let kb = start(&env, None).await;
    let started = Instant::now();
    while mail_notes(&kb.vault()).is_empty() {
        assert!(started.elapsed() < WITHIN, "nothing filed from the folder; kb's log:\n{}", kb.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(mail_notes(&kb.vault())[0].1.contains("Oak or beech"));
}
