//! Who made a change and why: [`ChangeSource`] and [`ChangeContext`], handed to every
//! change of the vault so its revision says where it came from.

use serde::{Deserialize, Serialize};

use crate::conversation::ConversationId;

/// Where a change (or a capture) came from; a capture's `source` field says the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeSource {
    /// A chat turn.
    #[default]
    Chat,
    /// The REST API.
    Api,
    /// The command line.
    Cli,
    /// An MCP client.
    Mcp,
    /// Not kb: an editor, a sync tool or a `git pull` changed the file, and kb noticed.
    Outside,
    /// kb's own sync brought the change from another device.
    Sync,
    /// A mail sent to the mailbox kb watches.
    Email,
    /// A web page a link led to, read by kb.
    Web,
    /// A voice note, transcribed.
    Voice,
    /// A file handed to kb (an upload, `kb capture --file`).
    File,
}

impl ChangeSource {
    /// Every source, in a fixed order.
    pub const ALL: [ChangeSource; 10] = [
        ChangeSource::Chat,
        ChangeSource::Api,
        ChangeSource::Cli,
        ChangeSource::Mcp,
        ChangeSource::Outside,
        ChangeSource::Sync,
        ChangeSource::Email,
        ChangeSource::Web,
        ChangeSource::Voice,
        ChangeSource::File,
    ];

    /// The value written to `source` and to history.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSource::Chat => "chat",
            ChangeSource::Api => "api",
            ChangeSource::Cli => "cli",
            ChangeSource::Mcp => "mcp",
            ChangeSource::Outside => "outside",
            ChangeSource::Sync => "sync",
            ChangeSource::Email => "email",
            ChangeSource::Web => "web",
            ChangeSource::Voice => "voice",
            ChangeSource::File => "file",
        }
    }

    /// The source named `text` (as [`ChangeSource::as_str`] writes it).
    pub fn parse(text: &str) -> Option<ChangeSource> {
        ChangeSource::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for ChangeSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who asks for a change: the source, and the tool, conversation and MCP session when
/// there are some.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChangeContext {
    /// Where it came from.
    pub source: ChangeSource,
    /// The tool that made it, when a tool did.
    pub tool: Option<String>,
    /// The conversation it was made in, when there is one.
    pub conversation_id: Option<ConversationId>,
    /// The MCP session it was made in, when an MCP client made it (stdio: the `kb mcp`
    /// process; HTTP: its `Mcp-Session-Id`), so that session's undo reaches only its own
    /// changes.
    pub session: Option<String>,
    /// The device it was made on, when the vault is synced (`KB_DEVICE`): this device for
    /// a change made here, another for one a sync brought.
    pub device: Option<String>,
    /// The mail this change files, claimed before it was filed (`MAILBOX UIDVALIDITY:UID`):
    /// history marks the claim filed in the same transaction that records the change, so a
    /// mail is filed once whatever stops when.
    pub claim: Option<String>,
    /// The person who asked for it, when kb serves several people (see [`crate::people`]);
    /// `None` for the local ways in (the CLI, `kb mcp`, the owner socket) and for a kb
    /// without accounts, whose revisions name [`crate::people::LOCAL_PERSON`].
    pub person: Option<String>,
}

impl ChangeContext {
    /// A new, unique name for an MCP session (see [`ChangeContext::session`]).
    pub fn new_session() -> String {
        format!("mcp-{}", ulid::Ulid::new())
    }

    /// A change from `source`, with no tool or conversation.
    pub fn from_source(source: ChangeSource) -> ChangeContext {
        ChangeContext {
            source,
            tool: None,
            conversation_id: None,
            session: None,
            device: None,
            claim: None,
            person: None,
        }
    }

    /// A change kb noticed rather than made.
    pub fn outside() -> ChangeContext {
        ChangeContext::from_source(ChangeSource::Outside)
    }

    /// The same context, naming the tool.
    pub fn with_tool(mut self, tool: impl Into<String>) -> ChangeContext {
        self.tool = Some(tool.into());
        self
    }

    /// A change a sync brought from `device`.
    pub fn synced_from(device: impl Into<String>) -> ChangeContext {
        ChangeContext { device: Some(device.into()), ..ChangeContext::from_source(ChangeSource::Sync) }
    }

    /// The same context, asked for by `person` (`None`: the local owner).
    pub fn by_person(mut self, person: Option<String>) -> ChangeContext {
        self.person = person;
        self
    }

    /// The same context, made in MCP session `session`.
    pub fn with_session(mut self, session: impl Into<String>) -> ChangeContext {
        self.session = Some(session.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_round_trip_through_their_names() {
        for source in ChangeSource::ALL {
            assert_eq!(ChangeSource::parse(source.as_str()), Some(source));
            assert_eq!(serde_json::to_value(source).unwrap(), serde_json::json!(source.as_str()));
        }
        assert_eq!(ChangeSource::parse("Chat"), None);
    }
}
