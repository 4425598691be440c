//! `kb chat`: the conversation in a terminal. Without `--conversation` or `--new` it lists
//! recent conversations and lets the person pick one by number (Enter starts a new one, and
//! a message typed there starts one with it; see [`mod@pick`]).
//! Each line read is one chat turn; `quit`, `exit`, `/quit` or end of input (Ctrl-D) end
//! it; `/new` starts a new conversation, `/undo` undoes this conversation's last change and
//! `/help` lists these. Lines come from stdin, so a pipe can drive it too; on a terminal
//! they are read with line editing, and what was typed is kept in the vault's
//! `.kb/chat-history` for the next session (Up recalls it). On a terminal each tool of a
//! turn shows as a line while the turn runs (✓ or ✗ and what it did) and, when the terminal
//! takes colour, the answer printed as it came is replaced, once whole, by its rendered
//! markdown; elsewhere, when kb took citations no tool returned out of it, the checked
//! answer is printed again after a line naming them. `--verbose` prints the tool calls of each
//! turn and their results, read back from the stored messages; `--json` prints each turn's
//! answer as one JSON line instead of the prompts.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use kb_core::domain::turn_events::TurnEvent;
use kb_core::{Assistant, ChatResponse, Conversation, ConversationId, LaterChanges, Message, UndoOf};
use kb_domain::Role;
use kb_server::dto::{ChatAnswer, MessageJson};
use rustyline::error::ReadlineError;
use serde_json::Value;

use crate::cli::ChatArgs;
use crate::failure::CliError;
use crate::output::Format;
use crate::terminal;

mod pick;

use self::pick::{Pick, pick};

/// How many earlier messages are shown when going on with a conversation.
const RECAP_MESSAGES: usize = 4;
/// The file under the vault that keeps the lines typed in `kb chat`, for the next session.
const HISTORY_FILE: &str = ".kb/chat-history";
/// How many typed lines the history keeps.
const HISTORY_LINES: usize = 1000;
/// What `/help` prints.
const HELP: &str = "Type a message to talk to kb. Commands:
  /new    start a new conversation
  /undo   undo the last change kb made in this conversation
  /help   show this
  /quit   leave (also quit, exit or Ctrl-D)";

/// Runs the REPL until `quit`, `exit` or end of input.
pub async fn run(kb: &Assistant, args: &ChatArgs, format: Format) -> Result<(), CliError> {
    let mut input = Input::open(kb.vault_root());
    let echo = !input.is_terminal();
    let styled = terminal::styled();
    let banner =
        format!("kb chat ({} model) — type /help for commands, quit or exit to leave", kb.model_name());
    // A message typed at the picker, sent as the new conversation's first.
    let mut first = None;
    let mut current = match (&args.conversation, args.new) {
        (Some(id), _) => {
            // An unknown id ends here, before anything is shown.
            let found = kb.chat().conversation(&ConversationId::new(id.trim())).await?;
            if !format.is_json() {
                say(&banner)?;
            }
            Some(recap(found, format, styled)?)
        }
        (None, true) if format.is_json() => None,
        (None, true) => {
            say(&banner)?;
            None
        }
        (None, false) => match pick(kb, &mut input, echo, format, &banner).await? {
            Pick::Quit => return Ok(()),
            Pick::New => None,
            Pick::Ask(text) => {
                first = Some(text);
                None
            }
            Pick::Existing(id) => Some(recap(kb.chat().conversation(&id).await?, format, styled)?),
        },
    };
    loop {
        // A message typed at the picker is the first (it was shown as typed already).
        let line = match first.take() {
            Some(text) => text,
            None => {
                let you = if format.is_json() { "" } else { "you> " };
                let Some(line) = input.read(you, false, true)? else {
                    if !format.is_json() {
                        say("")?;
                    }
                    break;
                };
                if echo && !format.is_json() {
                    say(line.trim())?;
                }
                line
            }
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        match Command::of(text) {
            Some(Command::Quit) => break,
            Some(command) => {
                command.run(kb, &mut current, format).await?;
                continue;
            }
            None => {}
        }
        let seen = match (&current, args.verbose) {
            (Some(id), true) => {
                kb.chat().conversation(id).await.map(|(_, messages)| messages.len()).unwrap_or(0)
            }
            _ => 0,
        };
        // The answer is printed as it is written, unless the turn is printed whole (JSON,
        // or verbose with its tool calls first).
        let live = !format.is_json() && !args.verbose;
        // On a terminal the tools show as they run; on one that takes colour the answer,
        // once whole, replaces what was printed as it came, rendered.
        let shown = Live { tools: shows_tools(&input), styled };
        let (answer, printed) = if live {
            let (sender, events) = tokio::sync::mpsc::unbounded_channel();
            let (answer, printed) = tokio::join!(
                kb.chat().send_with_events(current.as_ref(), text, sender),
                follow(events, shown)
            );
            (answer, printed?)
        } else {
            (kb.chat().send(current.as_ref(), text).await, false)
        };
        match answer {
            Ok(response) => {
                current = Some(response.conversation_id.clone());
                let tools = if args.verbose {
                    new_tool_messages(kb, &response.conversation_id, seen).await
                } else {
                    Vec::new()
                };
                show_turn(&response, &tools, format, printed, styled)?;
            }
            Err(error) => {
                if printed {
                    say("")?;
                }
                note(&format!("error: {}", CliError::from(error)))?
            }
        }
    }
    if let (Some(id), Format::Text) = (&current, format) {
        note(&format!("(conversation {id}: go on with `kb chat --conversation {id}`)"))?;
    }
    Ok(())
}

/// Shows the title and last few messages of a conversation being taken up again.
fn recap(
    (conversation, messages): (Conversation, Vec<Message>),
    format: Format,
    styled: bool,
) -> Result<ConversationId, CliError> {
    if !format.is_json() {
        say(&format!("Going on with \"{}\"", conversation.title))?;
        let said: Vec<&Message> = messages
            .iter()
            .filter(|m| matches!(m.role, Role::User | Role::Assistant) && m.tool_calls.is_empty())
            .collect();
        for message in &said[said.len().saturating_sub(RECAP_MESSAGES)..] {
            if message.role == Role::Assistant && styled {
                say("kb>")?;
                prompt(&terminal::markdown(message.content.trim()))?;
                continue;
            }
            let who = if message.role == Role::User { "you" } else { "kb" };
            say(&format!("{who}> {}", message.content.trim()))?;
        }
    }
    Ok(conversation.id)
}

/// The tool calls and results stored for the turn: messages after the first `seen`.
async fn new_tool_messages(kb: &Assistant, id: &ConversationId, seen: usize) -> Vec<Message> {
    match kb.chat().conversation(id).await {
        Ok((_, messages)) => messages
            .into_iter()
            .skip(seen)
            .filter(|m| m.role == Role::Tool || !m.tool_calls.is_empty())
            .collect(),
        Err(error) => {
            tracing::warn!(%error, "cannot read back the tool calls of the turn");
            Vec::new()
        }
    }
}

/// What a turn shows while it runs.
#[derive(Debug, Clone, Copy)]
struct Live {
    /// A line per tool as it runs (on a terminal).
    tools: bool,
    /// Whether the output takes colour (the answer is then rendered once whole).
    styled: bool,
}

/// Whether the person types at a terminal (so the tool lines can be shown and rewritten).
fn shows_tools(input: &Input) -> bool {
    input.is_terminal() && std::io::stdout().is_terminal()
}

/// Follows a turn's events: a line per tool (`  … name` while it runs, then `  ✓ what it
/// did` or `  ✗ why not`) when `live.tools`, and the answer's pieces after `kb> ` as they
/// arrive, as the whole answer would be printed (trimmed at both ends). When `live.styled`
/// the answer is then taken back off the screen, to be printed again rendered (below it
/// when it cannot be taken back). Answers whether the answer stays printed (the line is
/// then ended, and the answer not printed again).
async fn follow(
    mut events: tokio::sync::mpsc::UnboundedReceiver<TurnEvent>,
    live: Live,
) -> Result<bool, CliError> {
    let mut printed = false;
    // Whitespace held back until more text follows it (none is printed at the end).
    let mut held = String::new();
    // The tool whose line is open (written without its end, to be rewritten when it ends).
    let mut running: Option<String> = None;
    // The answer as printed so far, and whether a tool line came after it began (it cannot
    // then be taken back whole).
    let mut streamed = String::new();
    let mut interleaved = false;
    while let Some(event) = events.recv().await {
        match event {
            TurnEvent::ToolStarted { name, .. } if live.tools => {
                interleaved |= printed;
                if running.take().is_some() {
                    say("")?;
                }
                prompt(&format!("  … {name}"))?;
                running = Some(name);
            }
            TurnEvent::ToolFinished { name, success, summary, path } if live.tools => {
                interleaved |= printed;
                if let Some(open) = running.take() {
                    // The open line is rewritten when it is this tool's, else ended.
                    prompt(if open == name { "\r\x1b[2K" } else { "\n" })?;
                }
                let mut line = format!("  {} {}", terminal::mark(success, live.styled), summary.trim());
                if let Some(path) = path.filter(|path| !summary.contains(path.as_str())) {
                    line.push_str(&format!(" ({path})"));
                }
                say(&line)?;
            }
            TurnEvent::MessageDelta { text } => {
                if running.take().is_some() {
                    say("")?;
                }
                let body = text.trim_end();
                if body.trim().is_empty() {
                    if printed {
                        held.push_str(&text);
                    }
                    continue;
                }
                let piece = if printed {
                    format!("{held}{body}")
                } else {
                    printed = true;
                    format!("kb> {}", body.trim_start())
                };
                prompt(&piece)?;
                streamed.push_str(&piece);
                held = text[body.len()..].to_string();
            }
            _ => {}
        }
    }
    if live.styled && printed {
        // Rendered in its place, or (taller than the screen, or with tool lines within it)
        // below it.
        let whole = !interleaved && running.is_none();
        if !(whole && take_back(&streamed)?) {
            say("")?;
        }
        return Ok(false);
    }
    if printed || running.is_some() {
        say("")?;
    }
    Ok(printed)
}

/// Takes `text`, just printed with the cursor at its end, back off the terminal when all of
/// it is still on the screen; answers whether it did.
fn take_back(text: &str) -> Result<bool, CliError> {
    let Ok((columns, rows)) = termimad::crossterm::terminal::size() else { return Ok(false) };
    let columns = usize::from(columns.max(1));
    // The rows it took: each line at least one, a long line wrapping onto more.
    let used: usize = text.split('\n').map(|line| line.chars().count().div_ceil(columns).max(1)).sum();
    if used >= usize::from(rows) {
        return Ok(false);
    }
    let up = used - 1;
    // Back to the start of its first row, then clear to the end of the screen.
    let mut undo = String::from("\r");
    if up > 0 {
        undo.push_str(&format!("\x1b[{up}A"));
    }
    undo.push_str("\x1b[J");
    prompt(&undo)?;
    Ok(true)
}

/// Prints one turn: its tool calls (verbose), the answer (unless it was printed as it
/// came) and what was filed.
fn show_turn(
    response: &ChatResponse,
    tools: &[Message],
    format: Format,
    printed: bool,
    styled: bool,
) -> Result<(), CliError> {
    if format.is_json() {
        let mut value = serde_json::to_value(ChatAnswer::from(response))?;
        if let Value::Object(map) = &mut value
            && !tools.is_empty()
        {
            let tools: Vec<MessageJson> = tools.iter().map(MessageJson::from).collect();
            map.insert("toolMessages".to_string(), serde_json::to_value(tools)?);
        }
        return say(&serde_json::to_string(&value)?);
    }
    for message in tools {
        for call in &message.tool_calls {
            say(&format!("  [tool call] {} {}", call.name, call.arguments))?;
        }
        if message.role == Role::Tool {
            say(&format!("  [tool result] {}", message.content.trim()))?;
        }
    }
    if !printed && styled {
        say("kb>")?;
        prompt(&terminal::markdown(response.message.content.trim()))?;
    } else if !printed {
        say(&format!("kb> {}", response.message.content.trim()))?;
    } else if let Some(note) = dropped_note(&response.dropped_citations) {
        // The answer printed as it came cited what no tool returned: the checked one follows.
        say(&note)?;
        say(&format!("kb> {}", response.message.content.trim()))?;
    }
    if let Some(entry) = &response.entry {
        say(&format!("    (filed {} with confidence {:.2})", entry.path, entry.confidence))?;
    }
    Ok(())
}

/// The line saying which citations were taken out of an answer already printed, if any.
fn dropped_note(dropped: &[String]) -> Option<String> {
    let (what, them) = if dropped.len() == 1 { ("citation", "it") } else { ("citations", "them") };
    (!dropped.is_empty())
        .then(|| format!("    ({what} of {} taken out: no tool returned {them})", dropped.join(", ")))
}

/// Reads one line; `None` at end of input.
fn read_line(input: &mut impl BufRead) -> Result<Option<String>, CliError> {
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(0) => Ok(None),
        Ok(_) => Ok(Some(line)),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            Err(CliError::usage("input is not valid UTF-8"))
        }
        Err(error) => Err(error.into()),
    }
}

fn say(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

fn prompt(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// A line on stderr (the picker in JSON mode, so stdout stays JSON lines).
fn note(text: &str) -> Result<(), CliError> {
    let mut err = std::io::stderr().lock();
    writeln!(err, "{text}")?;
    Ok(())
}

/// A line the person types that kb answers itself rather than sending it to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Quit,
    New,
    Undo,
    Help,
    /// A word starting with `/` that is no command.
    Unknown,
}

impl Command {
    /// The command `text` (trimmed) is, if it is one: `quit`, `exit` (in any case), or one word
    /// after `/`.
    fn of(text: &str) -> Option<Command> {
        if text.eq_ignore_ascii_case("quit") || text.eq_ignore_ascii_case("exit") {
            return Some(Command::Quit);
        }
        let word = text.strip_prefix('/').filter(|word| !word.contains(char::is_whitespace))?;
        Some(match word.to_ascii_lowercase().as_str() {
            "quit" | "exit" | "q" => Command::Quit,
            "new" => Command::New,
            "undo" => Command::Undo,
            "help" | "?" => Command::Help,
            _ => Command::Unknown,
        })
    }

    /// Does what the command asks (all but `Quit`, which ends the loop); what it says goes
    /// to stderr in JSON mode, except what `/undo` undid, which is a JSON line.
    async fn run(
        self,
        kb: &Assistant,
        current: &mut Option<ConversationId>,
        format: Format,
    ) -> Result<(), CliError> {
        let tell = |text: &str| if format.is_json() { note(text) } else { say(text) };
        match self {
            Command::Quit => Ok(()),
            Command::Help => tell(HELP),
            Command::Unknown => tell("unknown command: /help lists them"),
            Command::New => {
                *current = None;
                tell("(a new conversation: your next message starts it)")
            }
            Command::Undo => {
                let Some(id) = current.clone() else {
                    return tell("nothing to undo: this conversation has changed nothing yet");
                };
                match kb.history().undo(UndoOf::Conversation(id), LaterChanges::Refuse).await {
                    Ok(data) if format.is_json() => say(&serde_json::to_string(&data)?),
                    Ok(data) => prompt(&crate::commands::history::undone(&serde_json::to_value(&data)?)),
                    Err(error) => note(&format!("error: {}", CliError::from(error))),
                }
            }
        }
    }
}

/// Where the typed lines come from: stdin as it is (a pipe, a file), or, when stdin is a
/// terminal, a line editor whose history is kept in a file between sessions.
enum Input {
    /// Lines read from stdin as they come.
    Lines(std::io::StdinLock<'static>),
    /// A terminal, read with line editing.
    Editor {
        /// The line editor.
        editor: Box<rustyline::DefaultEditor>,
        /// The history file (none when it cannot be kept).
        history: Option<PathBuf>,
    },
}

impl Input {
    /// The line editor when stdin is a terminal (with the history under `vault`), else stdin.
    fn open(vault: &Path) -> Input {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Input::Lines(stdin.lock());
        }
        let config = rustyline::Config::builder()
            .max_history_size(HISTORY_LINES)
            .map(|config| config.auto_add_history(false).build());
        let editor = match config.and_then(rustyline::DefaultEditor::with_config) {
            Ok(editor) => editor,
            Err(error) => {
                tracing::warn!(%error, "no line editing: reading stdin as it comes");
                return Input::Lines(stdin.lock());
            }
        };
        let mut editor = Box::new(editor);
        let history = vault.join(HISTORY_FILE);
        match editor.load_history(&history) {
            Ok(()) => {}
            Err(ReadlineError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => tracing::warn!(%error, path = %history.display(), "cannot read the chat history"),
        }
        Input::Editor { editor, history: Some(history) }
    }

    /// Keeps `line` in the history (on a terminal), as a message typed after `you> ` is.
    fn remember(&mut self, line: &str) {
        if let Input::Editor { editor, history } = self {
            remember_line(editor, history, line);
        }
    }

    /// Whether the lines come from a terminal.
    fn is_terminal(&self) -> bool {
        matches!(self, Input::Editor { .. })
    }

    /// Reads one line after `question` (on stderr when `to_stderr`); `None` at end of input.
    /// A line typed at the terminal is kept in the history when `remember`.
    fn read(&mut self, question: &str, to_stderr: bool, remember: bool) -> Result<Option<String>, CliError> {
        match self {
            Input::Lines(input) => {
                if to_stderr {
                    let mut err = std::io::stderr().lock();
                    write!(err, "{question}")?;
                } else if !question.is_empty() {
                    prompt(question)?;
                }
                read_line(input)
            }
            Input::Editor { editor, history } => {
                let shown = if to_stderr {
                    let mut err = std::io::stderr().lock();
                    write!(err, "{question}")?;
                    ""
                } else {
                    question
                };
                let line = match editor.readline(shown) {
                    Ok(line) => line,
                    // Ctrl-C drops the line being typed.
                    Err(ReadlineError::Interrupted) => return Ok(Some(String::new())),
                    Err(ReadlineError::Eof) => return Ok(None),
                    Err(error) => {
                        return Err(CliError::runtime(format!("cannot read the terminal: {error}")));
                    }
                };
                if remember && !line.trim().is_empty() {
                    remember_line(editor, history, line.trim());
                }
                Ok(Some(line))
            }
        }
    }
}

/// Adds `line` to the editor's history and appends it to the history file (a warning, once,
/// if the file cannot be written: the session goes on without it).
fn remember_line(editor: &mut rustyline::DefaultEditor, history: &mut Option<PathBuf>, line: &str) {
    if let Err(error) = editor.add_history_entry(line) {
        tracing::warn!(%error, "cannot keep the line in the history");
    }
    let Some(path) = history.as_deref() else { return };
    let written = match path.parent().map(std::fs::create_dir_all) {
        Some(Err(error)) => Err(ReadlineError::Io(error)),
        _ => editor.append_history(path),
    };
    if let Err(error) = written {
        tracing::warn!(%error, path = %path.display(), "cannot write the chat history");
        *history = None;
    }
}

#[cfg(test)]
mod tests {
    use super::Command;

    #[test]
    fn quit_and_exit_are_commands_in_any_case_and_nothing_else_is() {
        for text in ["quit", "QUIT", "Exit", "/Quit", "/q"] {
            assert!(matches!(Command::of(text), Some(Command::Quit)), "{text}");
        }
        for text in ["quit now", "exits", "what do I quit?"] {
            assert!(Command::of(text).is_none(), "{text}");
        }
    }
}
