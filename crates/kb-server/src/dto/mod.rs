//! The JSON kb-server (and `kb … --json`) sends of domain values that have no shape of their
//! own in kb-domain, one module per concern. Each shape is made from its domain value; the
//! names a client reads are written here and nowhere else.

mod chat;
mod events;
mod health;
mod history;
mod outreach;

pub use chat::{
    AnswerMessageJson, ChatAnswer, ConversationJson, ConversationWithMessages, ConversationsJson,
    FiledEntryJson, MessageJson, ToolCallJson, UsageJson,
};
pub use events::{TurnEventData, turn_event_json, turn_event_name};
pub use health::HealthJson;
pub use history::{RestoreAnswer, RevisionAnswer, RevisionJson, RevisionsAnswer, revisions};
pub use outreach::{DeliveryJson, DigestJson, DigestsJson, NextRunJson, NudgesJson, OutreachStatusJson};
