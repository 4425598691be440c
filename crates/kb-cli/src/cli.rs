//! The command line as clap reads it: global flags, the commands and their arguments
//! (SPEC §4). Nothing here runs anything.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// The categories a person may filter by.
const CATEGORIES: [&str; 5] = ["people", "projects", "ideas", "admin", "inbox"];

/// `kb`: a local-first knowledge base you talk to.
#[derive(Debug, Parser)]
#[command(
    name = "kb",
    version,
    about = "kb: a local-first knowledge base you talk to",
    propagate_version = true
)]
pub struct Cli {
    /// The vault folder (default `kb`).
    #[arg(long, global = true, env = "KB_DIR", value_name = "DIR")]
    pub kb_dir: Option<PathBuf>,

    /// Machine output: the JSON data kb answers with.
    #[arg(long, global = true)]
    pub json: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API and the web page.
    Serve {
        /// The address to listen on (loopback unless KB_API_TOKEN is set).
        #[arg(long, env = "KB_ADDR", default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
    },
    /// Talk to kb: a conversation in the terminal (`quit`, `exit` or Ctrl-D end it).
    Chat(ChatArgs),
    /// File a thought, task, fact or idea without chatting.
    Capture {
        /// What to file (several words are joined with spaces).
        #[arg(required = true, value_name = "TEXT")]
        text: Vec<String>,
        /// A hint fixing the category, such as `[project]` or `[person:Sarah]`.
        #[arg(long, value_name = "H")]
        hints: Option<String>,
    },
    /// List entries, newest change first.
    List {
        /// Only this category.
        #[arg(long, value_name = "C", value_parser = CATEGORIES)]
        category: Option<String>,
        /// Only entries with this status (active, waiting, blocked, someday, done, pending).
        #[arg(long, value_name = "S")]
        status: Option<String>,
        /// At most this many (default 10, at most 100).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
        limit: Option<u64>,
        /// Skip this many first (for paging).
        #[arg(long, value_name = "N")]
        offset: Option<u64>,
    },
    /// Show one entry: its fields and its notes.
    Show {
        /// The entry's path in the vault, like `projects/clientco.md`.
        path: String,
    },
    /// Search the vault (every word must match).
    Search {
        /// The words to look for.
        #[arg(required = true, value_name = "QUERY")]
        query: Vec<String>,
        /// Only this category.
        #[arg(long, value_name = "C", value_parser = CATEGORIES)]
        category: Option<String>,
        /// At most this many hits (default 10, at most 100).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        limit: Option<u64>,
    },
    /// A daily or weekly digest of what needs attention.
    Digest {
        /// Which digest.
        #[arg(value_enum)]
        kind: DigestKind,
    },
    /// Bring the search index in line with the vault (delete `.kb/index` first to rebuild it all).
    Reindex,
    /// List, rename or delete conversations.
    Conversations {
        /// What to do with them.
        #[command(subcommand)]
        action: ConversationsAction,
    },
}

/// The flags of `kb chat`.
#[derive(Debug, Clone, Args)]
pub struct ChatArgs {
    /// Go on with this conversation.
    #[arg(long, value_name = "ID", conflicts_with = "new")]
    pub conversation: Option<String>,
    /// Start a new conversation without asking.
    #[arg(long)]
    pub new: bool,
    /// Print each tool call kb makes and its result.
    #[arg(long)]
    pub verbose: bool,
}

/// The kinds of digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DigestKind {
    /// Today's actions, people, warnings and a small win (under 150 words).
    Daily,
    /// The week's stats, progress, open loops and focus (under 250 words).
    Weekly,
}

impl DigestKind {
    /// The name the digest tool takes.
    pub fn as_str(self) -> &'static str {
        match self {
            DigestKind::Daily => "daily",
            DigestKind::Weekly => "weekly",
        }
    }
}

/// `kb conversations …`.
#[derive(Debug, Subcommand)]
pub enum ConversationsAction {
    /// Every conversation, most recent first.
    List,
    /// Give a conversation a new title.
    Rename {
        /// The conversation's id.
        id: String,
        /// The new title (several words are joined with spaces).
        #[arg(required = true, value_name = "TITLE")]
        title: Vec<String>,
    },
    /// Delete a conversation and its messages.
    Delete {
        /// The conversation's id.
        id: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn conversation_and_new_exclude_each_other() {
        let parsed = Cli::try_parse_from(["kb", "chat", "--conversation", "X", "--new"]);
        assert!(parsed.is_err());
    }

    #[test]
    fn capture_joins_words_and_global_flags_go_anywhere() {
        let cli = Cli::try_parse_from(["kb", "capture", "renew", "passport", "--json", "--kb-dir", "/tmp/v"])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cli.json);
        assert_eq!(cli.kb_dir, Some(PathBuf::from("/tmp/v")));
        match cli.command {
            Command::Capture { text, hints } => {
                assert_eq!(text.join(" "), "renew passport");
                assert_eq!(hints, None);
            }
            other => panic!("parsed as {other:?}"),
        }
    }
}
