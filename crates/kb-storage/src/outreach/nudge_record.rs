//! How a kept digest's nudges are stored: a JSON list in the `digests.nudges` column,
//! `{key, rule, path?, name?, message}` each, read back when a delivery resumes (and
//! served as they are by the digests list). The record is kb-storage's own; the domain's
//! [`Nudge`] carries no serde.

use kb_domain::nudges::{Nudge, NudgeRule};
use serde::{Deserialize, Serialize};

/// One nudge as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NudgeRecord {
    /// `{rule}:{path}`, or the rule alone.
    key: String,
    /// The rule's name (`admin_due`, …).
    rule: String,
    /// The entry it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// That entry's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    /// What to tell the person.
    message: String,
}

impl From<&Nudge> for NudgeRecord {
    fn from(nudge: &Nudge) -> NudgeRecord {
        NudgeRecord {
            key: nudge.key.clone(),
            rule: nudge.rule.as_str().to_string(),
            path: nudge.path.clone(),
            name: nudge.name.clone(),
            message: nudge.message.clone(),
        }
    }
}

impl NudgeRecord {
    /// The nudge, when its rule is one kb knows.
    fn into_nudge(self) -> Option<Nudge> {
        let rule = NudgeRule::parse(&self.rule)?;
        Some(Nudge { key: self.key, rule, path: self.path, name: self.name, message: self.message })
    }
}

/// Why stored nudges cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NudgesUnreadable {
    /// The text is not a list of nudge records.
    #[error("not a list of nudges: {0}")]
    Json(#[from] serde_json::Error),
    /// A record names a rule kb does not know.
    #[error("unknown nudge rule {0:?}")]
    UnknownRule(String),
}

/// The JSON text stored for `nudges`.
pub(crate) fn encode(nudges: &[Nudge]) -> Result<String, serde_json::Error> {
    serde_json::to_string(&nudges.iter().map(NudgeRecord::from).collect::<Vec<_>>())
}

/// The nudges stored as `text`.
pub(crate) fn decode(text: &str) -> Result<Vec<Nudge>, NudgesUnreadable> {
    let records: Vec<NudgeRecord> = serde_json::from_str(text)?;
    records
        .into_iter()
        .map(|record| {
            let rule = record.rule.clone();
            record.into_nudge().ok_or(NudgesUnreadable::UnknownRule(rule))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nudges_round_trip_in_the_stored_shape() -> Result<(), Box<dyn std::error::Error>> {
        let nudge = Nudge {
            key: "admin_due:admin/tax.md".into(),
            rule: NudgeRule::AdminDue,
            path: Some("admin/tax.md".into()),
            name: Some("tax".into()),
            message: "Tax return is due tomorrow".into(),
        };
        let quiet = Nudge {
            key: "no_capture".into(),
            rule: NudgeRule::NoCapture,
            path: None,
            name: None,
            message: "Nothing captured for 3 days".into(),
        };
        let text = encode(&[nudge.clone(), quiet.clone()])?;
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text)?,
            serde_json::json!([
                {"key": "admin_due:admin/tax.md", "rule": "admin_due", "path": "admin/tax.md", "name": "tax",
                 "message": "Tax return is due tomorrow"},
                {"key": "no_capture", "rule": "no_capture", "message": "Nothing captured for 3 days"}
            ])
        );
        assert_eq!(decode(&text)?, [nudge, quiet]);
        assert!(decode(r#"[{"key": "x", "rule": "nonsense", "message": "m"}]"#).is_err());
        Ok(())
    }
}
