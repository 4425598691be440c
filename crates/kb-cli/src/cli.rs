//! The command line as clap reads it: global flags, the commands and their arguments
//! (`docs/CLI.md`). Nothing here runs anything.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

/// The categories a person may filter by.
const CATEGORIES: [&str; 6] = ["people", "projects", "ideas", "admin", "inbox", "other"];

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

    /// Open the vault in this process even when a `kb serve` on it could answer (by
    /// default capture, list, show, search and digest are asked of it, which is faster).
    /// `KB_NO_SERVER` takes `1`/`0`, `true`/`false`, `yes`/`no` or `on`/`off`.
    #[arg(
        long,
        global = true,
        env = "KB_NO_SERVER",
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_server: bool,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// How `kb search` matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SearchModeName {
    /// Words only.
    Keyword,
    /// Words and meaning.
    Hybrid,
    /// Meaning only.
    Semantic,
}

impl SearchModeName {
    /// The mode's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchModeName::Keyword => "keyword",
            SearchModeName::Hybrid => "hybrid",
            SearchModeName::Semantic => "semantic",
        }
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the HTTP API and the web page.
    Serve {
        /// The address to listen on (loopback unless KB_API_TOKEN is set).
        #[arg(long, env = "KB_ADDR", default_value = "127.0.0.1:8080")]
        addr: SocketAddr,
        /// Serve HTTPS with this certificate chain (PEM; needs --tls-key; or KB_TLS_CERT). A
        /// phone's browser runs the page's offline copy and capture queue only over HTTPS.
        #[arg(long, value_name = "FILE")]
        tls_cert: Option<std::path::PathBuf>,
        /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1; or KB_TLS_KEY).
        #[arg(long, value_name = "FILE")]
        tls_key: Option<std::path::PathBuf>,
    },
    /// Serve kb to an MCP client (Claude Desktop, VS Code, Cursor…) over stdin and stdout: its
    /// tools, its entries as resources, and its digests as prompts.
    Mcp,
    /// Talk to kb: a conversation in the terminal (`quit`, `exit` or Ctrl-D end it).
    Chat(ChatArgs),
    /// File a thought, task, fact or idea without chatting.
    Capture {
        /// What to file (several words are joined with spaces); a link alone files its page.
        #[arg(required_unless_present_any = ["file", "audio"], value_name = "TEXT")]
        text: Vec<String>,
        /// File this file instead: kept in attachments/, its text (a PDF's, a text file's) in the note.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["text", "into", "new", "audio"])]
        file: Option<PathBuf>,
        /// File this voice note instead: kept in attachments/, its transcript in the note (KB_TRANSCRIBE_MODEL).
        #[arg(long, value_name = "FILE", conflicts_with_all = ["text", "into", "new"])]
        audio: Option<PathBuf>,
        /// A hint fixing the category, such as `[project]` or `[person:Sarah]`.
        #[arg(long, value_name = "H")]
        hints: Option<String>,
        /// Add it to this entry (a path or a name) as a dated Log line instead of filing it anew.
        #[arg(long, value_name = "ENTRY", conflicts_with = "new")]
        into: Option<String>,
        /// File a new entry even when a person or project of a like name exists.
        #[arg(long)]
        new: bool,
    },
    /// List entries, newest change first.
    List {
        /// Only this category.
        #[arg(long, value_name = "C", value_parser = CATEGORIES)]
        category: Option<String>,
        /// Only entries with this status (active, waiting, blocked, someday, done, pending).
        #[arg(long, value_name = "S")]
        status: Option<String>,
        /// Only notes in this folder of the vault or below it, like `Journal/2025`.
        #[arg(long, value_name = "F")]
        folder: Option<String>,
        /// At most this many (default 10, at most 100).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
        limit: Option<u64>,
        /// Skip this many first (for paging).
        #[arg(long, value_name = "N")]
        offset: Option<u64>,
    },
    /// Show one entry: its fields and its notes, or some lines of its file.
    Show {
        /// The entry's path in the vault, like `projects/clientco.md`.
        path: String,
        /// Only these lines of the file, numbered: `3-7`, or `12` for one line (counted
        /// from 1 with the frontmatter, as `kb search` names a hit's lines).
        #[arg(long, value_name = "START-END", value_parser = line_range)]
        lines: Option<String>,
    },
    /// Change fields or the notes of an entry.
    Update(UpdateArgs),
    /// Move an entry to another category (people, projects, ideas or admin), or any note to
    /// another path of the vault.
    Move {
        /// The entry's path in the vault, like `inbox/garden-shed.md`.
        path: String,
        /// The category to move it into, or the vault path to move it to (holding a `/` or
        /// ending in `.md`, like `Archive/garden-shed.md`).
        #[arg(value_name = "CATEGORY|PATH")]
        category: String,
    },
    /// Search the vault: entries holding every word first, then those holding some.
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
        /// By words (keyword), by meaning (semantic) or both (hybrid, the default with an
        /// embedding model, KB_EMBEDDINGS_MODEL).
        #[arg(long, value_enum)]
        mode: Option<SearchModeName>,
    },
    /// A daily or weekly digest of what needs attention.
    Digest {
        /// Which digest.
        #[arg(value_enum)]
        kind: DigestKind,
        /// Also keep it and send it now to every configured channel (email, webhook),
        /// waiting for the deliveries (with their retries).
        #[arg(long)]
        send: bool,
    },
    /// What kb points out on its own: stale projects, admin due soon, follow-ups, the
    /// inbox, quiet days (`snooze` or `done` act on one).
    Nudges {
        /// What to do with one nudge; without, list them.
        #[command(subcommand)]
        action: Option<NudgeAction>,
    },
    /// The digests kb kept (scheduled and sent), newest first, with their deliveries.
    Digests {
        /// At most this many (default 10).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100))]
        limit: Option<u64>,
    },
    /// Bring the search index in line with the vault (delete `.kb/index` first to rebuild it
    /// all), and embed the entries that have no vectors yet (with an embedding model).
    Reindex,
    /// One screen of what kb knows: entries per category, the search index, the embedding
    /// model and how many entries it has embedded.
    Status,
    /// Sync the vault with its git remote now (KB_SYNC_REMOTE) and say what came and went;
    /// `kb sync status` says where sync stands.
    Sync {
        /// Without one, sync now.
        #[command(subcommand)]
        action: Option<SyncAction>,
    },
    /// Show the revisions of an entry, newest first (also of a deleted one, by its last path).
    History {
        /// The entry's path in the vault, like `projects/clientco.md`.
        path: String,
    },
    /// Bring an entry back to a revision's exact bytes (a deleted one comes back too).
    Restore {
        /// The entry's path in the vault (for a deleted entry, its last path).
        path: String,
        /// The revision's id, as `kb history` shows it.
        #[arg(value_name = "REV")]
        revision: i64,
    },
    /// Undo the most recent change kb made (again: the one before).
    Undo {
        /// Undo even when a file changed since (that version is kept in history).
        #[arg(long)]
        force: bool,
        /// Only changes made in this conversation.
        #[arg(long, value_name = "ID")]
        conversation: Option<String>,
    },
    /// Delete one entry (history keeps it: `kb restore` or `kb undo` brings it back).
    Delete {
        /// The entry: its path in the vault, like `projects/old-site.md`, or its name.
        path: String,
    },
    /// Find entries that are likely duplicates (the same name or alias, a first and a full name).
    Duplicates {
        /// Only entries named like this ("Priya").
        name: Option<String>,
    },
    /// Merge entries into one: the target keeps its fields and gains the sources' notes; the
    /// sources are removed (`kb undo` takes it back).
    Merge {
        /// The entry to keep: its path or its name.
        target: String,
        /// The entries to merge into it: paths or names.
        #[arg(required = true)]
        sources: Vec<String>,
    },
    /// List, rename or delete conversations.
    Conversations {
        /// What to do with them.
        #[command(subcommand)]
        action: ConversationsAction,
    },
    /// The people `kb serve` answers (in KB_DATA_DIR, default .kb-server/ here): once anyone
    /// has an account, every request needs a person's token.
    Users {
        /// What to do.
        #[command(subcommand)]
        action: UsersAction,
    },
    /// The people's tokens: issue one (shown once), list them, revoke one.
    Tokens {
        /// What to do.
        #[command(subcommand)]
        action: TokensAction,
    },
    /// The vaults `kb serve` serves once it has accounts: each person's own, and shared
    /// ones granted to others as reader or editor.
    Vaults {
        /// What to do.
        #[command(subcommand)]
        action: VaultsAction,
    },
}

/// `kb vaults …`.
#[derive(Debug, Subcommand)]
pub enum VaultsAction {
    /// Add a vault: a shared one, or (with --owner) an existing vault made a person's own.
    Add {
        /// Its name, as the `Kb-Vault` header names it.
        name: String,
        /// Its folder (made when missing).
        path: std::path::PathBuf,
        /// The person whose own vault it becomes (their default, an editor there).
        #[arg(long, value_name = "USER")]
        owner: Option<String>,
        /// The git remote it syncs with.
        #[arg(long, value_name = "URL")]
        sync_remote: Option<String>,
    },
    /// Every vault, with its folder, owner and grants.
    List,
    /// Let a person use a vault, as `reader` or `editor`.
    Grant {
        /// The vault.
        name: String,
        /// The person.
        user: String,
        /// `reader` (searches, reads, chats) or `editor` (also changes).
        role: String,
    },
    /// Take a person's grant in a vault away.
    Ungrant {
        /// The vault.
        name: String,
        /// The person.
        user: String,
    },
    /// Forget a vault and its grants (its files stay as they are).
    Remove {
        /// The vault.
        name: String,
    },
}

/// `kb users …`.
#[derive(Debug, Subcommand)]
pub enum UsersAction {
    /// Give a person an account.
    Add {
        /// Their name: letters, digits, '-' and '_', starting with a letter.
        name: String,
        /// Where their digests and sign-in links go.
        #[arg(long)]
        email: Option<String>,
        /// Where their digests are posted.
        #[arg(long)]
        webhook: Option<String>,
        /// They manage people and vaults.
        #[arg(long)]
        admin: bool,
    },
    /// Every person.
    List,
    /// Remove a person and their tokens.
    Remove {
        /// Their name.
        name: String,
    },
}

/// `kb tokens …`.
#[derive(Debug, Subcommand)]
pub enum TokensAction {
    /// Issue a token for a person; it is shown this once.
    Issue {
        /// The person's name.
        name: String,
        /// What it is for ("phone").
        #[arg(long)]
        label: Option<String>,
        /// It stops working after this many days.
        #[arg(long, value_name = "DAYS", value_parser = clap::value_parser!(u32).range(1..=36_500))]
        expires: Option<u32>,
        /// It may only read, whatever the person's role.
        #[arg(long)]
        read_only: bool,
    },
    /// Every token (never its secret), newest first.
    List,
    /// Revoke a token: refused from its next request on.
    Revoke {
        /// The token's id (from `kb tokens list`).
        id: String,
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

/// The arguments of `kb update`.
#[derive(Debug, Clone, Args)]
#[command(group = clap::ArgGroup::new("notes").multiple(false).args(["body", "append", "prepend", "section", "find"]))]
pub struct UpdateArgs {
    /// The entry's path in the vault, like `projects/clientco.md`.
    pub path: String,
    /// Set a field (repeatable); VALUE is read as JSON when it is JSON (`3`, `true`,
    /// `["a","b"]`, `null` to remove the field), as text otherwise.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Setting::parse)]
    pub set: Vec<Setting>,
    /// Replace the notes with TEXT.
    #[arg(long, value_name = "TEXT")]
    pub body: Option<String>,
    /// Add TEXT to the end of the notes, as a paragraph of its own.
    #[arg(long, value_name = "TEXT")]
    pub append: Option<String>,
    /// Add TEXT to the start of the notes, as a paragraph of its own.
    #[arg(long, value_name = "TEXT")]
    pub prepend: Option<String>,
    /// Add the --add TEXT under the heading `## NAME` (made at the end when missing; a
    /// `Log` section gets the line `- TODAY: TEXT`).
    #[arg(long, value_name = "NAME", requires = "add")]
    pub section: Option<String>,
    /// The text to add under --section.
    #[arg(long, value_name = "TEXT", requires = "section")]
    pub add: Option<String>,
    /// Replace this exact text of the notes with --replace (it must occur --count times).
    #[arg(long, value_name = "TEXT", requires = "replace")]
    pub find: Option<String>,
    /// What each --find becomes (may be empty to remove it).
    #[arg(long, value_name = "TEXT", requires = "find")]
    pub replace: Option<String>,
    /// How many times --find must occur (default 1); otherwise nothing changes.
    #[arg(long, value_name = "N", requires = "find", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

/// One `--set KEY=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// The field.
    pub key: String,
    /// VALUE as written.
    pub text: String,
    /// VALUE as JSON when it parses as JSON, else as text.
    pub value: Value,
}

impl Setting {
    /// Reads `KEY=VALUE` (the first `=` splits; KEY must not be blank).
    pub fn parse(arg: &str) -> Result<Setting, String> {
        let Some((key, text)) = arg.split_once('=') else {
            return Err(format!("expected KEY=VALUE, got {arg:?}"));
        };
        if key.trim().is_empty() {
            return Err(format!("the field name is empty in {arg:?}"));
        }
        let value = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()));
        Ok(Setting { key: key.to_string(), text: text.to_string(), value })
    }
}

/// What to do with one nudge.
/// What `kb sync` does besides syncing now.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SyncAction {
    /// Where sync stands: the remote, this device, commits ahead and behind, the last
    /// sync, and the conflict copies waiting for a person.
    Status,
    /// Resolve a conflict sync met: keep this device's version (`mine`, the copy's), the
    /// note's (`theirs`), or both as two notes. `kb undo` takes it back.
    Resolve {
        /// The conflict copy, or the note when it has one copy.
        path: String,
        /// Which version to keep.
        #[arg(long, value_parser = ["mine", "theirs", "both"])]
        keep: String,
    },
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum NudgeAction {
    /// Keep it out of sight for a while.
    Snooze {
        /// The nudge's key, as `kb nudges` shows it.
        key: String,
        /// For this many days (default 7).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=365))]
        days: Option<u32>,
    },
    /// Do what it asks: mark the admin item or project done, or clear the person's
    /// follow-ups.
    Done {
        /// The nudge's key, as `kb nudges` shows it.
        key: String,
    },
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

/// Checks a `--lines` value (`3-7` or `12`), keeping it as written.
fn line_range(text: &str) -> Result<String, String> {
    kb_core::domain::LineRange::parse(text).map(|_| text.trim().to_string()).map_err(|e| e.to_string())
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
            Command::Capture { text, hints, .. } => {
                assert_eq!(text.join(" "), "renew passport");
                assert_eq!(hints, None);
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn settings_read_json_when_they_are_json_and_text_otherwise() {
        let value = |arg: &str| Setting::parse(arg).map(|s| s.value).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(value("confidence=0.5"), serde_json::json!(0.5));
        assert_eq!(value("pinned=true"), serde_json::json!(true));
        assert_eq!(value(r#"tags=["a","b"]"#), serde_json::json!(["a", "b"]));
        assert_eq!(value("due_date=null"), Value::Null);
        assert_eq!(value("next_action=Call Sarah"), serde_json::json!("Call Sarah"));
        assert_eq!(value("due_date=2026-12-15"), serde_json::json!("2026-12-15"));
        assert_eq!(value("status="), serde_json::json!(""));
        assert_eq!(value("formula=a=b"), serde_json::json!("a=b"));
        assert_eq!(value(r#"code="42""#), serde_json::json!("42"));
        assert!(Setting::parse("status").is_err());
        assert!(Setting::parse(" =x").is_err());
    }

    #[test]
    fn body_and_append_exclude_each_other() {
        let parsed = Cli::try_parse_from(["kb", "update", "ideas/a.md", "--body", "x", "--append", "y"]);
        assert!(parsed.is_err());
    }
}
