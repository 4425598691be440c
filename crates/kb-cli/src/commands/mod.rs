//! The commands: each opens kb as it needs it, calls the facade and prints the answer.

mod changes;
mod conversations;
mod entries;
mod forward;
pub(crate) mod history;
mod mcp;
mod outreach;
mod people;
mod progress;
mod reindex;
mod serve;
mod status;
mod sync;
mod tidy;
mod vaults;

use std::path::PathBuf;

use kb_core::{Assistant, Config, LaterChanges};

use crate::cli::{Cli, Command};
use crate::commands::entries::Filter;
use crate::failure::CliError;
use crate::output::Format;

/// Runs the command of `cli`.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let config = config(cli.kb_dir.clone())?;
    let format = Format::of(cli.json);
    if !makes_a_vault(&cli.command) && !config.kb_dir.is_dir() {
        let what =
            if config.kb_dir.exists() { "that is a file, not a folder" } else { "there is no folder there" };
        return Err(CliError::runtime(format!(
            "no vault at {}: {what} (a capture or `kb serve` makes one in a folder that does \
             not exist yet; --kb-dir or KB_DIR names another)",
            config.kb_dir.display()
        )));
    }
    let command = match cli.command {
        // These two open what they need themselves.
        Command::Serve { addr, tls_cert, tls_key } => {
            return serve::run(config, addr, tls_cert, tls_key).await;
        }
        Command::Reindex => return reindex::run(&config, format).await,
        Command::Mcp => return mcp::run(config, cli.no_server).await,
        Command::Users { action } => return people::users(action, format).await,
        Command::Tokens { action } => return people::tokens(action, format).await,
        Command::Vaults { action } => return vaults::run(action, format).await,
        command => command,
    };
    // Beside a running `kb serve`, it answers at once what it can.
    if !cli.no_server
        && let Some(answered) = forward::run(&config, &command, format).await
    {
        return answered;
    }
    // The REPL follows edits made outside kb while it runs.
    let watch = matches!(command, Command::Chat(_));
    // A search reads no entries; the other commands mostly do: their saved catalogue loads
    // while the index opens.
    let entries_needed = !matches!(command, Command::Search { .. } | Command::Sync { .. });
    // Commands that only read entries open the search index only if they search after
    // all (a name that resolves no other way), and so does a capture, which searches
    // nothing: the next command that searches takes its file in by its stamp, as with an
    // edit made while no kb ran. The other changes keep the index in step.
    let search_needed = !matches!(
        command,
        Command::List { .. }
            | Command::Show { .. }
            | Command::Digest { send: false, .. }
            | Command::History { .. }
            | Command::Capture { .. }
            | Command::Sync { .. }
    );
    let kb = open(Config { watch, entries_needed, search_needed, ..config }).await?;
    let result = match command {
        Command::Chat(args) => crate::repl::run(&kb, &args, format).await,
        Command::Capture { file: Some(file), hints, .. } => {
            entries::capture_file(&kb, &file, entries::Sent::File, hints, format).await
        }
        Command::Capture { audio: Some(audio), hints, .. } => {
            entries::capture_file(&kb, &audio, entries::Sent::Voice, hints, format).await
        }
        Command::Capture { text, hints, into, new, .. } => {
            let options = kb_core::CaptureOptions { hints, merge_into: into, create_new: new };
            entries::capture(&kb, &text.join(" "), &options, format).await
        }
        Command::List { category, status, folder, limit, offset } => {
            let filter = Filter {
                category: category.as_deref(),
                status: status.as_deref(),
                folder: folder.as_deref(),
                limit,
                offset,
            };
            entries::list(&kb, filter, format).await
        }
        Command::Show { path, lines } => entries::show_entry(&kb, &path, lines.as_deref(), format).await,
        Command::Update(args) => changes::update(&kb, &args, format).await,
        Command::Move { path, category } => changes::move_entry(&kb, &path, &category, format).await,
        Command::Search { query, category, limit, mode } => {
            let search = kb_core::SearchRequest {
                category,
                limit,
                mode: mode.map(|m| m.as_str().to_string()),
                ..kb_core::SearchRequest::new(query.join(" "))
            };
            entries::search(&kb, &search, format).await
        }
        Command::Status => status::run(&kb, format).await,
        Command::Sync { action } => sync::run(&kb, action, format).await,
        Command::Digest { kind, send: false } => entries::digest(&kb, kind, format).await,
        Command::Digest { kind, send: true } => outreach::send(&kb, kind, format).await,
        Command::Nudges { action } => outreach::nudges(&kb, action, format).await,
        Command::Digests { limit } => outreach::digests(&kb, limit, format).await,
        Command::Conversations { action } => conversations::run(&kb, action, format).await,
        Command::History { path } => history::history(&kb, &path, format).await,
        Command::Restore { path, revision } => history::restore(&kb, &path, revision, format).await,
        Command::Undo { force, conversation } => {
            let later = if force { LaterChanges::Replace } else { LaterChanges::Refuse };
            history::undo(&kb, later, conversation, format).await
        }
        Command::Delete { path } => history::delete(&kb, &path, format).await,
        Command::Duplicates { name } => tidy::duplicates(&kb, name.as_deref(), format).await,
        Command::Merge { target, sources } => tidy::merge(&kb, &target, &sources, format).await,
        Command::Serve { .. }
        | Command::Reindex
        | Command::Mcp
        | Command::Users { .. }
        | Command::Tokens { .. }
        | Command::Vaults { .. } => Ok(()),
    };
    // The process exits next: the memory is left to the system.
    kb.close_before_exit().await;
    result
}

/// Whether `command` makes the vault's folder when there is none: serving, a capture, a
/// chat, `kb mcp` (an assistant's first capture) and `kb sync` (a first clone), and the
/// commands that manage the server's people and vaults, which open none. The others read
/// or change entries already there: on a folder that does not exist (a mistyped path) they
/// fail, leaving nothing behind.
fn makes_a_vault(command: &Command) -> bool {
    matches!(
        command,
        Command::Serve { .. }
            | Command::Mcp
            | Command::Chat(_)
            | Command::Capture { .. }
            | Command::Sync { action: None }
            | Command::Users { .. }
            | Command::Tokens { .. }
            | Command::Vaults { .. }
    )
}

/// The configuration from the environment, with `--kb-dir` winning over `KB_DIR`.
fn config(kb_dir: Option<PathBuf>) -> Result<Config, CliError> {
    let kb_dir = kb_dir.filter(|dir| !dir.as_os_str().is_empty());
    Ok(Config::from_env(kb_dir)?)
}

/// Opens kb, its changes recorded as the command line's; while the search index is built
/// or caught up (a first start on a big vault), a progress bar shows on a terminal.
async fn open(config: Config) -> Result<Assistant, CliError> {
    let bar = progress::bar();
    let options =
        kb_search::OpenOptions { progress: Some(progress::report_to(bar.clone())), ..Default::default() };
    let opened = Assistant::open_with_progress(config, options).await;
    bar.finish_and_clear();
    // What the command line changes is recorded as coming from it.
    Ok(opened?.with_source(kb_core::CaptureSource::Cli))
}
