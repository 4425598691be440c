//! The `kb` binary (every command in `docs/CLI.md`): `serve`, `mcp`, `chat`, the entry
//! commands (`capture`, `list`, `show`, `update`, `move`, `delete`, `search`,
//! `duplicates`, `merge`), revision history (`history`, `restore`, `undo`), outreach
//! (`digest`, `nudges`, `digests`), `reindex` and `conversations`, over kb-core's
//! [`kb_core::Assistant`].
//!
//! Exit codes: 0 success, 1 a runtime failure (not found, the model down, …), 2 bad usage
//! (clap's own errors, a refused path, an invalid argument, update or move). Errors go to
//! stderr as `error: message`; logs go to stderr too (`RUST_LOG`, default `warn`, `info`
//! for serve).

mod cli;
mod commands;
mod failure;
mod output;
mod repl;
mod terminal;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;

use crate::cli::{Cli, Command};
use crate::failure::{CliError, FailureKind};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(match cli.command {
        Command::Serve { .. } => "info",
        // `kb chat` says itself which citations it took out of an answer: the warning would
        // break into the answer on the screen.
        Command::Chat(_) => "warn,kb_orchestrator::turn::cited=error",
        // A PDF's parser warns of each oddity of a file it still reads; kb says what failed.
        _ => "warn,lopdf=error,pdf_extract=off",
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(&CliError::runtime(format!("cannot start the async runtime: {error}"))),
    };
    match runtime.block_on(commands::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

/// Prints `error: message` on stderr (nothing when the output was closed) and gives the code.
fn fail(error: &CliError) -> ExitCode {
    if error.kind != FailureKind::OutputClosed {
        eprintln!("error: {error}");
    }
    error.exit_code()
}

/// Logs to stderr, filtered by `RUST_LOG` (else by `default`: `warn`, or `info` when
/// serving, and for `kb chat` no warning of the citations it took out).
fn init_logs(default: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    // The IMAP client traces each command it sends, the LOGIN with its password among them:
    // never below info, whatever RUST_LOG asks.
    let filter = match "async_imap=info".parse() {
        Ok(directive) => filter.add_directive(directive),
        Err(_) => filter,
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
