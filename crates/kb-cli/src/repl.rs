//! `kb chat`: the conversation in a terminal. Without `--conversation` or `--new` it lists
//! recent conversations and lets the person pick one by number (Enter starts a new one).
//! Each line read is one chat turn; `quit`, `exit` or end of input (Ctrl-D) end it. Lines
//! come from stdin, so a pipe can drive it too. `--verbose` prints the tool calls of each
//! turn and their results, read back from the stored messages; `--json` prints each turn's
//! answer as one JSON line instead of the prompts.

use std::io::{BufRead, IsTerminal, Write};

use kb_core::{Assistant, ChatResponse, Conversation, ConversationId, Message};
use kb_domain::Role;
use kb_server::dto::{ChatAnswer, MessageJson};
use serde_json::Value;

use crate::cli::ChatArgs;
use crate::failure::CliError;
use crate::output::Format;

/// How many recent conversations the picker offers.
const PICK_FROM: usize = 10;
/// How many earlier messages are shown when going on with a conversation.
const RECAP_MESSAGES: usize = 4;

/// Runs the REPL until `quit`, `exit` or end of input.
pub async fn run(kb: &Assistant, args: &ChatArgs, format: Format) -> Result<(), CliError> {
    let stdin = std::io::stdin();
    let echo = !stdin.is_terminal();
    let mut input = stdin.lock();
    let banner = format!("kb chat ({} model) — type quit or exit to leave", kb.model_name());
    let mut current = match (&args.conversation, args.new) {
        (Some(id), _) => {
            // An unknown id ends here, before anything is shown.
            let found = kb.chat().conversation(&ConversationId::new(id.trim())).await?;
            if !format.is_json() {
                say(&banner)?;
            }
            Some(recap(found, format)?)
        }
        (None, true) if format.is_json() => None,
        (None, true) => {
            say(&banner)?;
            None
        }
        (None, false) => match pick(kb, &mut input, echo, format, &banner).await? {
            Pick::Quit => return Ok(()),
            Pick::New => None,
            Pick::Existing(id) => Some(recap(kb.chat().conversation(&id).await?, format)?),
        },
    };
    loop {
        if !format.is_json() {
            prompt("you> ")?;
        }
        let Some(line) = read_line(&mut input)? else {
            if !format.is_json() {
                say("")?;
            }
            break;
        };
        let text = line.trim();
        if echo && !format.is_json() {
            say(text)?;
        }
        if text.is_empty() {
            continue;
        }
        if text == "quit" || text == "exit" {
            break;
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
        let (answer, printed) = if live {
            let (sender, events) = tokio::sync::mpsc::unbounded_channel();
            let (answer, printed) = tokio::join!(
                kb.chat().send_with_events(current.as_ref(), text, sender),
                print_deltas(events)
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
                show_turn(&response, &tools, format, printed)?;
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

/// What the person chose in the picker.
enum Pick {
    New,
    Existing(ConversationId),
    Quit,
}

/// Lists recent conversations and reads the person's choice.
async fn pick(
    kb: &Assistant,
    input: &mut impl BufRead,
    echo: bool,
    format: Format,
    banner: &str,
) -> Result<Pick, CliError> {
    let recent: Vec<_> = kb.chat().conversations().await?.into_iter().take(PICK_FROM).collect();
    if !format.is_json() {
        say(banner)?;
    }
    if recent.is_empty() {
        return Ok(Pick::New);
    }
    let out = |text: &str| if format.is_json() { note(text) } else { say(text) };
    out("Recent conversations:")?;
    for (n, conversation) in recent.iter().enumerate() {
        let when = conversation.updated_at.format("%Y-%m-%d %H:%M");
        out(&format!("  {:>2}. {}  ({when})", n + 1, conversation.title))?;
    }
    loop {
        prompt_to(format, "Pick a number, or press Enter for a new conversation: ")?;
        let Some(line) = read_line(input)? else { return Ok(Pick::Quit) };
        let choice = line.trim();
        if echo {
            out(choice)?;
        }
        if choice.is_empty() || choice.eq_ignore_ascii_case("n") || choice.eq_ignore_ascii_case("new") {
            return Ok(Pick::New);
        }
        if choice == "quit" || choice == "exit" {
            return Ok(Pick::Quit);
        }
        match choice.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| recent.get(i)) {
            Some(conversation) => return Ok(Pick::Existing(conversation.id.clone())),
            None => out(&format!("'{choice}' is not one of 1-{}", recent.len()))?,
        }
    }
}

/// Shows the title and last few messages of a conversation being taken up again.
fn recap(
    (conversation, messages): (Conversation, Vec<Message>),
    format: Format,
) -> Result<ConversationId, CliError> {
    if !format.is_json() {
        say(&format!("Going on with \"{}\"", conversation.title))?;
        let said: Vec<&Message> = messages
            .iter()
            .filter(|m| matches!(m.role, Role::User | Role::Assistant) && m.tool_calls.is_empty())
            .collect();
        for message in &said[said.len().saturating_sub(RECAP_MESSAGES)..] {
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

/// Prints the answer's pieces as they arrive, after `kb> `, as the whole answer would be
/// printed (trimmed at both ends); answers whether it printed any (the line is then ended,
/// and the answer not printed again).
async fn print_deltas(
    mut events: tokio::sync::mpsc::UnboundedReceiver<kb_core::domain::turn_events::TurnEvent>,
) -> Result<bool, CliError> {
    let mut printed = false;
    // Whitespace held back until more text follows it (none is printed at the end).
    let mut held = String::new();
    while let Some(event) = events.recv().await {
        let kb_core::domain::turn_events::TurnEvent::MessageDelta { text } = event else { continue };
        let body = text.trim_end();
        if body.trim().is_empty() {
            if printed {
                held.push_str(&text);
            }
            continue;
        }
        if printed {
            prompt(&held)?;
            prompt(body)?;
        } else {
            prompt("kb> ")?;
            prompt(body.trim_start())?;
            printed = true;
        }
        held = text[body.len()..].to_string();
    }
    if printed {
        say("")?;
    }
    Ok(printed)
}

/// Prints one turn: its tool calls (verbose), the answer (unless it was printed as it
/// came) and what was filed.
fn show_turn(
    response: &ChatResponse,
    tools: &[Message],
    format: Format,
    printed: bool,
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
    if !printed {
        say(&format!("kb> {}", response.message.content.trim()))?;
    }
    if let Some(entry) = &response.entry {
        say(&format!("    (filed {} with confidence {:.2})", entry.path, entry.confidence))?;
    }
    Ok(())
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

/// The picker's question: on stderr in JSON mode.
fn prompt_to(format: Format, text: &str) -> Result<(), CliError> {
    if format.is_json() {
        let mut err = std::io::stderr().lock();
        write!(err, "{text}")?;
        Ok(())
    } else {
        prompt(text)
    }
}
