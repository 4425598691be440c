//! EmailChannel against a real SMTP server on loopback (the sink in `support::smtp`).

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

use std::time::{Duration, Instant};

use kb_delivery::{EmailChannel, EmailSettings, EmailSetupError};
use kb_domain::delivery::DeliveryChannel;
use kb_domain::nudges::NudgeRule;
use support::mime::{Entity, decode_words};
use support::smtp::{Behaviour, SmtpSink};
use support::{closed_port, digest, nudge};

fn settings(url: &str) -> EmailSettings {
    EmailSettings {
        smtp_url: url.to_owned(),
        from: "kb <kb@example.org>".to_owned(),
        to: vec!["me@example.org".to_owned(), "Other One <other@example.net>".to_owned()],
    }
}

fn channel(url: &str) -> EmailChannel {
    EmailChannel::new(&settings(url)).expect("channel")
}

const MARKDOWN: &str = "# Today\n\nSome **bold** text & more.\n\n- [Project A](projects/a.md)\n- Note B\n";

/// Sends one digest through a fresh sink and answers the mail as received.
async fn send_and_receive(title: &str, markdown: &str) -> (support::smtp::Received, Entity) {
    let sink = SmtpSink::start(Behaviour::default()).await;
    let message = digest(
        title,
        markdown,
        vec![
            nudge(NudgeRule::AdminDue, Some("admin/tax.md"), "Tax return is due tomorrow"),
            nudge(NudgeRule::NoCapture, None, "Nothing captured for 3 days"),
        ],
    );
    channel(&sink.url()).deliver(&message).await.expect("delivered");
    let mut received = sink.received();
    assert_eq!(received.len(), 1, "one mail");
    let mail = received.remove(0);
    let entity = Entity::parse(&mail.data);
    (mail, entity)
}

#[tokio::test]
async fn a_digest_with_nudges_arrives_as_multipart_alternative() {
    let (mail, entity) = send_and_receive("kb daily digest 2026-11-23", MARKDOWN).await;

    assert_eq!(mail.mail_from, "kb@example.org");
    assert_eq!(mail.rcpt_to, vec!["me@example.org", "other@example.net"]);
    assert_eq!(entity.header("Subject"), Some("kb daily digest 2026-11-23"));
    assert_eq!(entity.header("From"), Some("kb <kb@example.org>"));
    let to = entity.header("To").expect("To");
    assert!(to.contains("me@example.org") && to.contains("\"Other One\" <other@example.net>"), "{to}");
    assert!(entity.header("Date").is_some());
    let message_id = entity.header("Message-ID").expect("Message-ID");
    assert!(message_id.starts_with("<kb.") && message_id.ends_with("@example.org>"), "{message_id}");
    assert_eq!(entity.header("MIME-Version"), Some("1.0"));
    assert_eq!(entity.mime_type(), "multipart/alternative");

    let parts = entity.parts();
    assert_eq!(parts.len(), 2, "{parts:?}");
    let (plain, html) = (&parts[0], &parts[1]);
    assert_eq!(plain.mime_type(), "text/plain");
    assert_eq!(plain.content_type_param("charset").map(|c| c.to_ascii_lowercase()).as_deref(), Some("utf-8"));
    assert_eq!(
        plain.text().replace("\r\n", "\n"),
        format!("{MARKDOWN}\n## Nudges\n\n- Tax return is due tomorrow\n- Nothing captured for 3 days\n")
    );

    assert_eq!(html.mime_type(), "text/html");
    let html = html.text();
    assert!(html.contains("<title>kb daily digest 2026-11-23</title>"), "{html}");
    assert!(html.contains("<h1>Today</h1>"), "{html}");
    assert!(html.contains("<strong>bold</strong> text &amp; more."), "{html}");
    assert!(html.contains("<a href=\"projects/a.md\">Project A</a>"), "{html}");
    assert!(html.contains("<h2>Nudges</h2>"), "{html}");
    assert!(html.contains("<li>Tax return is due tomorrow</li>"), "{html}");
    assert!(html.contains("<li>Nothing captured for 3 days</li>"), "{html}");
}

#[tokio::test]
async fn a_non_ascii_subject_is_rfc2047_encoded() {
    let title = "kb daily digest — 2026-11-23 · café";
    let (_, entity) = send_and_receive(title, "Plain *day* — done.\n").await;
    let subject = entity.header("Subject").expect("Subject");
    assert!(subject.is_ascii(), "{subject}");
    assert!(subject.to_ascii_lowercase().contains("=?utf-8?"), "{subject}");
    assert_eq!(decode_words(subject), title);
    // The non-ASCII body survives its transfer encoding, in both parts.
    let parts = entity.parts();
    assert!(parts[0].text().contains("Plain *day* — done."), "{:?}", parts[0]);
    assert!(parts[1].text().contains("<p>Plain <em>day</em> — done.</p>"), "{:?}", parts[1]);
}

#[tokio::test]
async fn raw_html_in_the_markdown_is_escaped_in_the_html_part() {
    let markdown = "Hello <script>alert('x')</script> there.\n\n<div onclick=\"steal()\">block</div>\n\n\
                    [click](javascript:alert(1))\n";
    let (_, entity) = send_and_receive("Digest", markdown).await;
    let parts = entity.parts();
    let html = parts[1].text();
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<div"), "{html}");
    assert!(!html.contains("javascript:"), "{html}");
    assert!(html.contains("<p>Hello &lt;script&gt;alert('x')&lt;/script&gt; there.</p>"), "{html}");
    assert!(html.contains("<p>&lt;div onclick=\"steal()\"&gt;block&lt;/div&gt;"), "{html}");
    assert!(html.contains("<a href=\"#\">click</a>"), "{html}");
    // The plain-text part is the markdown as is.
    assert!(parts[0].text().contains("<script>alert('x')</script>"));
}

#[tokio::test]
async fn a_server_that_is_down_is_worth_a_retry() {
    let port = closed_port().await;
    let error =
        channel(&format!("smtp://127.0.0.1:{port}")).deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(error.retryable, "{error:?}");
    assert!(error.message.contains("127.0.0.1"), "{error:?}");
}

#[tokio::test]
async fn a_4xx_reply_is_worth_a_retry() {
    let sink = SmtpSink::start(Behaviour {
        mail_reply: Some("451 4.3.0 Try again later".into()),
        ..Default::default()
    })
    .await;
    let error = channel(&sink.url()).deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(error.retryable, "{error:?}");
    assert!(error.message.contains("451"), "{error:?}");
    assert!(sink.received().is_empty());
}

#[tokio::test]
async fn a_delivery_id_is_the_message_id_of_every_attempt() {
    let sink = SmtpSink::start(Behaviour { defer_first: 1, ..Default::default() }).await;
    let mut message = digest("t", "m", vec![]);
    message.id = Some("kb.01jd0000000000000000000000.email".to_owned());
    let channel = channel(&sink.url());
    let first = channel.deliver(&message).await.unwrap_err();
    assert!(first.retryable && first.message.contains("451"), "{first:?}");
    channel.deliver(&message).await.expect("the second attempt goes through");

    let seen = sink.seen();
    assert_eq!(seen.len(), 2, "both attempts reached the server");
    let ids: Vec<String> = seen
        .iter()
        .map(|mail| Entity::parse(&mail.data).header("Message-ID").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(ids, ["<kb.01jd0000000000000000000000.email@example.org>"; 2]);
    assert_eq!(sink.received().len(), 1);

    // A message without an id gets a fresh Message-ID each time.
    channel.deliver(&digest("t", "m", vec![])).await.unwrap();
    channel.deliver(&digest("t", "m", vec![])).await.unwrap();
    let fresh: Vec<String> = sink.received()[1..]
        .iter()
        .map(|mail| Entity::parse(&mail.data).header("Message-ID").unwrap_or_default().to_owned())
        .collect();
    assert_ne!(fresh[0], fresh[1]);
}

#[tokio::test]
async fn a_5xx_reply_is_permanent() {
    let sink = SmtpSink::start(Behaviour {
        mail_reply: Some("550 5.7.1 Sender refused".into()),
        ..Default::default()
    })
    .await;
    let error = channel(&sink.url()).deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(!error.retryable, "{error:?}");
    assert!(error.message.contains("550") && error.message.contains("Sender refused"), "{error:?}");
}

#[tokio::test]
async fn replies_after_data_are_classified_too() {
    let sink = SmtpSink::start(Behaviour {
        data_reply: Some("452 4.3.1 Out of space".into()),
        ..Default::default()
    })
    .await;
    let error = channel(&sink.url()).deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(error.retryable, "{error:?}");

    let sink = SmtpSink::start(Behaviour {
        data_reply: Some("554 5.6.0 Message rejected".into()),
        ..Default::default()
    })
    .await;
    let error = channel(&sink.url()).deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(!error.retryable, "{error:?}");
    assert!(error.message.contains("554"), "{error:?}");
}

#[tokio::test]
async fn a_hung_server_times_out_and_is_worth_a_retry() {
    let sink = SmtpSink::start(Behaviour { silent: true, ..Default::default() }).await;
    let channel = channel(&sink.url()).with_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let error = channel.deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(error.retryable, "{error:?}");
}

#[tokio::test]
async fn errors_never_show_the_password() {
    // The sink offers no AUTH: lettre refuses to go on, a settings problem.
    let sink = SmtpSink::start(Behaviour::default()).await;
    let url = format!("smtp://me%40example.org:s3cr%2Ft@127.0.0.1:{}", sink.addr.port());
    let channel = channel(&url);
    assert!(!format!("{channel:?}").contains("s3cr"));
    let error = channel.deliver(&digest("t", "m", vec![])).await.unwrap_err();
    assert!(!error.retryable, "{error:?}");
    assert!(!error.message.contains("s3cr"), "{error:?}");
    assert!(sink.received().is_empty());

    let error = EmailChannel::new(&settings("smtps://me:s3cret@:465")).unwrap_err();
    assert!(!error.to_string().contains("s3cret"), "{error}");
}

#[test]
fn bad_settings_fail_at_construction() {
    for url in [
        "not a url",
        "http://mail.example.org",
        "smtp://mail.example.org?tls=sometimes",
        "smtp:///nohost",
        "",
    ] {
        let error = EmailChannel::new(&settings(url)).unwrap_err();
        assert!(matches!(error, EmailSetupError::SmtpUrl { .. }), "{url}: {error:?}");
        assert!(error.to_string().starts_with("invalid SMTP URL: "), "{error}");
    }
    for url in [
        "smtps://user:pass@mail.example.org:465",
        "smtp://user:pass@mail.example.org:587?tls=required",
        "smtp://mail.example.org:25",
        "smtp://localhost",
    ] {
        assert!(EmailChannel::new(&settings(url)).is_ok(), "{url}");
    }

    let bad_from = EmailSettings { from: "kb at example".into(), ..settings("smtp://localhost") };
    let error = EmailChannel::new(&bad_from).unwrap_err();
    assert!(
        matches!(&error, EmailSetupError::From { address, .. } if address == "kb at example"),
        "{error:?}"
    );
    assert!(error.to_string().starts_with("invalid sender address \"kb at example\""), "{error}");

    let bad_to = EmailSettings {
        to: vec!["me@example.org".into(), "@nowhere".into()],
        ..settings("smtp://localhost")
    };
    let error = EmailChannel::new(&bad_to).unwrap_err();
    assert!(
        matches!(&error, EmailSetupError::Recipient { address, .. } if address == "@nowhere"),
        "{error:?}"
    );

    let nobody = EmailSettings { to: vec![], ..settings("smtp://localhost") };
    assert_eq!(EmailChannel::new(&nobody).unwrap_err(), EmailSetupError::NoRecipients);
}

#[test]
fn recipients_parse_from_a_comma_separated_list() {
    assert_eq!(
        EmailSettings::parse_recipients("me@example.org, Other One <other@example.net>").unwrap(),
        vec!["me@example.org", "Other One <other@example.net>"]
    );
    assert_eq!(EmailSettings::parse_recipients("").unwrap_err(), EmailSetupError::NoRecipients);
    assert!(matches!(
        EmailSettings::parse_recipients("me@example.org,not-an-address").unwrap_err(),
        EmailSetupError::Recipient { address, .. } if address == "not-an-address"
    ));
}

#[test]
fn the_channel_is_called_email() {
    assert_eq!(channel("smtp://localhost").name(), "email");
    assert_eq!(channel("smtp://localhost").host(), "localhost");
}
