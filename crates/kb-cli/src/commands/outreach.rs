//! `kb nudges`, `kb digests` and `kb digest --send`: what kb points out, the digests it
//! kept, and sending one now.

use kb_core::Assistant;
use kb_core::domain::outreach::DigestTrigger;
use serde_json::{Value, json};

use crate::cli::{DigestKind, NudgeAction};
use crate::failure::CliError;
use crate::output::{self, Format, show};

/// Digests listed unless `--limit` says otherwise.
const DIGESTS_LISTED: u64 = 10;

/// Lists the nudges, or snoozes one, or does what one asks.
pub async fn nudges(kb: &Assistant, action: Option<NudgeAction>, format: Format) -> Result<(), CliError> {
    match action {
        None => {
            let listed = kb.outreach().nudges().await?;
            let nudges = serde_json::to_value(kb_server::dto::NudgesJson::from(listed.as_slice()).nudges)
                .unwrap_or_default();
            show(format, &json!({ "nudges": nudges }), |data| {
                let listed: Vec<String> = data["nudges"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|n| {
                        // A nudge may name a file another device sent: no control character reaches the terminal.
                        let (message, key) = (output::text(n, "message"), output::text(n, "key"));
                        format!("- {}\n  [{}]", output::printable(message), output::printable(key))
                    })
                    .collect();
                if listed.is_empty() { "Nothing to point out.".to_string() } else { listed.join("\n") }
            })
        }
        Some(NudgeAction::Snooze { key, days }) => {
            let snoozed = kb.outreach().snooze(&key, days.unwrap_or(7)).await?;
            show(format, &json!({ "key": snoozed.key, "until": snoozed.until }), |data| {
                format!("Snoozed until {}", output::text(data, "until"))
            })
        }
        Some(NudgeAction::Done { key }) => {
            let updated = kb.outreach().done(&key).await?;
            show(format, &updated, output::updated)
        }
    }
}

/// The digests kept, newest first, with how their deliveries went.
pub async fn digests(kb: &Assistant, limit: Option<u64>, format: Format) -> Result<(), CliError> {
    let limit = usize::try_from(limit.unwrap_or(DIGESTS_LISTED)).unwrap_or(usize::MAX);
    let kept = kb.outreach().digests(limit).await?;
    let digests =
        serde_json::to_value(kb_server::dto::DigestsJson::from(kept.as_slice()).digests).unwrap_or_default();
    show(format, &json!({ "digests": digests }), |data| {
        let listed: Vec<String> = data["digests"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                let deliveries: Vec<String> = d["deliveries"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let outcome = if r["delivered"] == true {
                            "delivered".to_string()
                        } else {
                            format!("failed: {}", output::text(r, "error"))
                        };
                        format!("    {} attempt {}: {outcome}", output::text(r, "channel"), r["attempt"])
                    })
                    .collect();
                let mut line = format!(
                    "#{} {} ({}, {})",
                    d["id"],
                    output::text(d, "title"),
                    output::text(d, "trigger"),
                    output::text(d, "createdAt")
                );
                for delivery in deliveries {
                    line.push('\n');
                    line.push_str(&delivery);
                }
                line
            })
            .collect();
        if listed.is_empty() { "No digest kept yet.".to_string() } else { listed.join("\n") }
    })
}

/// Writes the digest, keeps it, sends it to every channel and waits for the deliveries.
pub async fn send(kb: &Assistant, kind: DigestKind, format: Format) -> Result<(), CliError> {
    let digest = kb.outreach().write_digest(kind.as_str(), DigestTrigger::Manual).await?;
    let channels = kb.outreach().delivery_channels();
    kb.outreach().deliver(&digest).await;
    let kept = kb.outreach().digests(20).await?;
    let deliveries = kept
        .iter()
        .find(|d| d.id == digest.id)
        .map(|d| serde_json::to_value(kb_server::dto::DigestJson::from(d).deliveries).unwrap_or_default())
        .unwrap_or(Value::Array(Vec::new()));
    let data = json!({
        "id": digest.id,
        "type": digest.message.kind,
        "title": digest.message.title,
        "content": digest.message.markdown,
        "channels": channels,
        "deliveries": deliveries,
    });
    show(format, &data, |data| {
        let mut text = output::text(data, "content").to_string();
        let sent: Vec<String> = data["deliveries"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["willRetry"] != true)
            .map(|r| {
                if r["delivered"] == true {
                    format!("Sent by {}.", output::text(r, "channel"))
                } else {
                    format!("Not sent by {}: {}", output::text(r, "channel"), output::text(r, "error"))
                }
            })
            .collect();
        text.push_str("\n\n");
        if sent.is_empty() {
            text.push_str("Kept, but no channel is configured (KB_SMTP_URL, KB_WEBHOOK_URL).");
        } else {
            text.push_str(&sent.join("\n"));
        }
        text
    })
}
