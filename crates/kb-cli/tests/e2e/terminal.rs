//! `kb show` and `kb chat` in a real terminal: each runs inside a tmux session (a pseudo-
//! terminal, as a person's), and the test reads the screen. On a terminal the markdown is
//! rendered (no `**`, no `#`), each tool of a chat turn shows as a line, and what was typed
//! comes back with Up after the REPL is started again. In a pipe or with `NO_COLOR` the
//! markdown stays as written. An answer kb took a citation out of ends checked, on the
//! screen and in a pipe. Without tmux the tests say so and pass, except under CI
//! (`CI` set), where they fail.

use std::cell::Cell;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long the screen may take to show what is waited for.
const PATIENCE: Duration = Duration::from_secs(30);

/// A vault in a temporary folder, and a tmux server of its own that runs kb in it.
struct Terminal {
    root: TempDir,
    /// How many terminals were started: each has a tmux server of its own (a new one does
    /// not wait for the last one's to go).
    started: Cell<u32>,
}

impl Terminal {
    /// A new sandbox, or `None` (after saying why) when tmux is missing outside CI.
    fn new() -> Option<Terminal> {
        let found = Command::new("tmux").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status();
        if !found.is_ok_and(|status| status.success()) {
            assert!(std::env::var_os("CI").is_none(), "tmux is needed for the terminal tests");
            eprintln!("skipped: tmux is not installed (the terminal tests need it)");
            return None;
        }
        Some(Terminal { root: tempfile::tempdir().unwrap(), started: Cell::new(0) })
    }

    /// A sandbox for kb in pipes only (no tmux needed).
    fn piped_only() -> Terminal {
        Terminal { root: tempfile::tempdir().unwrap(), started: Cell::new(0) }
    }

    fn vault(&self) -> PathBuf {
        self.root.path().join("vault")
    }

    fn socket(&self) -> PathBuf {
        self.root.path().join(format!("tmux-{}.sock", self.started.get()))
    }

    /// Runs `kb --kb-dir VAULT ARGS…` in pipes (no terminal), `input` its stdin; answers
    /// its stdout.
    fn piped(&self, args: &[&str], input: &str) -> String {
        self.piped_with(args, input, &[])
    }

    /// [`Terminal::piped`] with `env` set for kb.
    fn piped_with(&self, args: &[&str], input: &str, env: &[(&str, &str)]) -> String {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
        clean(&mut command);
        command.envs(env.iter().copied());
        let mut child = command
            .arg("--kb-dir")
            .arg(self.vault())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "kb {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    }

    /// Starts `kb --kb-dir VAULT ARGS…` on a new 100×40 terminal (the last one ended
    /// first), `env` set for it (a variable given as empty is unset); the screen shows
    /// `[kb exited]` when it ends.
    fn start(&self, args: &[&str], env: &[(&str, &str)]) {
        self.start_sized(args, env, 40);
    }

    /// As [`Terminal::start`], on a terminal `rows` high.
    fn start_sized(&self, args: &[&str], env: &[(&str, &str)], rows: u16) {
        self.stop();
        let script = self.root.path().join("run.sh");
        let mut text = String::from("#!/bin/sh\n");
        for (name, value) in env {
            if value.is_empty() {
                text.push_str(&format!("unset {name}\n"));
            } else {
                text.push_str(&format!("export {name}='{value}'\n"));
            }
        }
        text.push_str(&format!("'{}' --kb-dir '{}'", env!("CARGO_BIN_EXE_kb"), self.vault().display()));
        for arg in args {
            text.push_str(&format!(" '{arg}'"));
        }
        text.push_str("\necho '[kb exited]'\nsleep 600\n");
        std::fs::write(&script, text).unwrap();
        self.started.set(self.started.get() + 1);
        let mut command = self.tmux();
        clean(&mut command);
        command.args(["new-session", "-d", "-x", "100", "-y", &rows.to_string(), "sh"]).arg(&script);
        assert!(command.status().unwrap().success(), "tmux did not start");
    }

    /// Ends the terminal (and its tmux server), if one runs.
    fn stop(&self) {
        let _ = self.tmux().args(["kill-server"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }

    fn tmux(&self) -> Command {
        let mut command = Command::new("tmux");
        command.arg("-S").arg(self.socket());
        command
    }

    /// Types `text` and Enter.
    fn type_line(&self, text: &str) {
        assert!(self.tmux().args(["send-keys", "-l", text]).status().unwrap().success());
        self.key("Enter");
    }

    /// Presses a key (tmux's name for it: `Enter`, `Up`).
    fn key(&self, name: &str) {
        assert!(self.tmux().args(["send-keys", name]).status().unwrap().success());
    }

    /// What the terminal shows now.
    fn screen(&self) -> String {
        let output = self.tmux().args(["capture-pane", "-p"]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The screen once `done` holds for it (failing, with the screen, after a while).
    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(start.elapsed() < PATIENCE, "the terminal never showed {what}:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An environment that cannot reach a real model or another vault, and takes colour.
fn clean(command: &mut Command) {
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "KB_MODEL",
        "KB_DIR",
        "DATABASE_URL",
        "KB_API_TOKEN",
        "KB_ADDR",
        "NO_COLOR",
        "TMUX",
    ] {
        command.env_remove(var);
    }
    command.env("RUST_LOG", "warn");
}

/// Files a person in the vault, then adds notes with a heading, bold, code, a link and a
/// table; answers the entry's path.
fn priya(terminal: &Terminal) -> &'static str {
    terminal.piped(&["capture", "Met Priya Raman at the robotics meetup"], "");
    let path = "people/priya-raman.md";
    let file = terminal.vault().join(path);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(
        "\n## Notes\n\nShe plays the **cello** and builds `drones`. See [her site](https://example.org).\n\n\
         | day | what |\n|-----|------|\n| Mon | lab |\n",
    );
    std::fs::write(&file, text).unwrap();
    path
}

fn lines_with<'a>(screen: &'a str, text: &str) -> Vec<&'a str> {
    screen.lines().filter(|line| line.contains(text)).collect()
}

#[test]
fn show_renders_markdown_on_a_terminal_and_keeps_it_as_written_elsewhere() {
    let Some(terminal) = Terminal::new() else { return };
    let path = priya(&terminal);

    terminal.start(&["show", path], &[]);
    let screen = terminal.wait_for("the entry", |screen| screen.contains("[kb exited]"));
    assert!(!screen.contains("**"), "raw bold on screen:\n{screen}");
    assert!(!screen.contains("## "), "raw heading on screen:\n{screen}");
    assert_eq!(lines_with(&screen, "Notes"), vec!["Notes"], "the heading, alone on its line:\n{screen}");
    assert!(screen.contains("She plays the cello and builds drones."), "{screen}");
    assert!(screen.contains("her site <https://example.org>"), "the link's address shown:\n{screen}");
    assert!(screen.contains("│Mon│lab │"), "the table drawn:\n{screen}");

    // NO_COLOR on the same terminal, and a pipe, get the markdown as written.
    terminal.start(&["show", path], &[("NO_COLOR", "1")]);
    let plain = terminal.wait_for("the entry", |screen| screen.contains("[kb exited]"));
    assert!(plain.contains("## Notes") && plain.contains("She plays the **cello**"), "{plain}");
    let piped = terminal.piped(&["show", path], "");
    assert!(piped.contains("\n## Notes\n\nShe plays the **cello** and builds `drones`."), "{piped}");
    assert!(!piped.contains('\x1b'), "no escape codes in a pipe: {piped:?}");
}

#[test]
fn chat_shows_tools_renders_answers_and_remembers_what_was_typed() {
    let Some(terminal) = Terminal::new() else { return };
    priya(&terminal);
    let question = "what do I know about Priya?";
    // In a pipe the answer is markdown as written, with bold in it, and no tool lines.
    let piped = terminal.piped(&["chat", "--new"], &format!("{question}\n"));
    assert!(piped.contains("**"), "the offline answer has bold to render: {piped}");
    assert!(!piped.contains('✓'), "no tool lines in a pipe: {piped}");

    terminal.start(&["chat", "--new"], &[]);
    terminal.wait_for("the prompt", |screen| screen.contains("you>"));
    terminal.type_line(question);
    // The answer is printed as it comes, then replaced by its rendered form: the next prompt
    // says the turn is over.
    let screen = terminal.wait_for("the answer and the next prompt", |screen| {
        screen.contains("Priya Raman (people/priya-raman.md)")
            && screen.lines().filter(|line| line.starts_with("you>")).count() >= 2
    });
    let lines: Vec<&str> = screen.lines().collect();
    let tool = lines.iter().position(|line| line.trim_start().starts_with("✓ "));
    let answer = lines.iter().position(|line| line.starts_with("kb>"));
    assert!(tool.is_some() && tool < answer, "a tool line before the answer:\n{screen}");
    assert!(!screen.contains("**"), "raw bold on screen:\n{screen}");
    terminal.type_line("/help");
    terminal.wait_for("the commands", |screen| screen.contains("/undo"));
    terminal.type_line("/quit");
    terminal.wait_for("the end", |screen| screen.contains("[kb exited]"));
    assert!(terminal.vault().join(".kb/chat-history").is_file(), "the history is kept in the vault");

    // A new session: Up brings back the last line typed before it.
    terminal.start(&["chat", "--new"], &[]);
    terminal.wait_for("the prompt", |screen| screen.contains("you>"));
    terminal.key("Up");
    terminal.wait_for("/quit recalled", |screen| screen.lines().any(|line| line == "you> /quit"));
    terminal.key("Up");
    terminal.key("Up");
    terminal.wait_for("the question recalled", |screen| {
        screen.lines().any(|line| line == format!("you> {question}"))
    });
}

#[test]
fn an_answer_taller_than_the_screen_is_rendered_below_it() {
    let Some(terminal) = Terminal::new() else { return };
    priya(&terminal);
    terminal.start_sized(&["chat", "--new"], &[], 12);
    terminal.wait_for("the prompt", |screen| screen.contains("you>"));
    terminal.type_line("what do I know about Priya?");
    let screen = terminal.wait_for("the answer and the next prompt", |screen| {
        screen.contains("│Mon│lab │") && screen.lines().last() == Some("you>")
    });
    assert!(!screen.contains("**") && !screen.contains("## "), "raw markdown on screen:\n{screen}");
}

#[test]
fn chat_commands_undo_start_anew_and_help() {
    let terminal = Terminal::piped_only();
    let idea = terminal.vault().join("ideas/a-cello-tuner-that-uses-a-drone.md");
    let out = terminal.piped(
        &["chat", "--new"],
        "Idea: a cello tuner that uses a drone\n/undo\n/new\n/undo\n/help\n/bogus\n/quit\nnot sent\n",
    );
    assert!(out.contains("removed ideas/a-cello-tuner-that-uses-a-drone.md"), "{out}");
    assert!(!idea.exists(), "the capture was undone");
    assert!(out.contains("a new conversation"), "{out}");
    assert!(out.contains("nothing to undo: this conversation has changed nothing yet"), "{out}");
    assert!(out.contains("/undo   undo the last change kb made in this conversation"), "{out}");
    assert!(out.contains("unknown command: /help lists them"), "{out}");
    assert!(!out.contains("not sent"), "the session ended at /quit: {out}");
}

#[test]
fn a_question_typed_at_the_picker_starts_a_new_conversation_with_it() {
    let Some(terminal) = Terminal::new() else { return };
    priya(&terminal);
    // An earlier conversation, so `kb chat` opens the picker.
    terminal.piped(&["chat", "--new"], "list my projects\n");

    terminal.start(&["chat"], &[]);
    terminal.wait_for("the picker", |screen| screen.contains("Pick a number"));
    // A number that is not a choice is refused, and the picker asks again.
    terminal.type_line("99");
    terminal.wait_for("the refusal", |screen| screen.contains("'99' is not one of 1-1"));
    terminal.type_line("what do I know about Priya?");
    let screen =
        terminal.wait_for("the answer", |screen| screen.contains("Priya Raman (people/priya-raman.md)"));
    assert!(!screen.contains("'what do I know about Priya?' is not one of"), "{screen}");
    assert!(!screen.contains("Going on with"), "a new conversation, not the earlier one:\n{screen}");
    terminal.type_line("quit");
    terminal.wait_for("the end", |screen| screen.contains("[kb exited]"));

    // The question opened a second conversation, as its first message.
    let listed = terminal.piped(&["conversations", "list"], "");
    let titles: Vec<&str> = listed.lines().collect();
    assert_eq!(titles.len(), 2, "{listed}");
    assert!(titles[0].contains("what do I know about Priya"), "{listed}");
    assert!(titles[1].contains("list my projects"), "{listed}");
    let history = std::fs::read_to_string(terminal.vault().join(".kb/chat-history")).unwrap();
    assert!(history.contains("what do I know about Priya?"), "kept for Up: {history}");
}

#[test]
fn chat_shows_the_checked_answer_when_kb_took_a_citation_out() {
    use kb_llm::testing::{FakeOpenAi, FakeReply};

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeOpenAi::start()).unwrap();
    let base = fake.base_url();
    let env = [("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", base.as_str()), ("KB_MODEL", "m")];
    let script = || {
        fake.push(FakeReply::tool_calls(&[("call_1", "get_entry", r#"{"path": "people/priya-raman.md"}"#)]));
        fake.push(FakeReply::text(
            "She plays the cello [people/priya-raman.md:9] in Paris [people/nobody.md:2].",
        ));
    };
    let checked = "She plays the cello [people/priya-raman.md:9] in Paris.";

    // In a pipe the answer is printed as it comes; then a line names what was taken out,
    // and the checked answer follows.
    let terminal = Terminal::piped_only();
    priya(&terminal);
    script();
    let out = terminal.piped_with(&["chat", "--new"], "what does Priya play?\n", &env);
    let answers: Vec<&str> = out.lines().filter(|line| line.starts_with("kb> ")).collect();
    assert_eq!(answers.last(), Some(&format!("kb> {checked}").as_str()), "{out}");
    assert!(answers[0].contains("[people/nobody.md:2]"), "streamed as written: {out}");
    assert!(out.contains("    (citation of people/nobody.md taken out: no tool returned it)"), "{out}");

    // On a terminal that takes colour, the answer printed as it came is replaced by the
    // checked one; the citation kept shows as written. (kb's own log level: no warning
    // breaks into the answer.)
    let Some(terminal) = Terminal::new() else { return };
    priya(&terminal);
    script();
    terminal.start(&["chat", "--new"], &[env[0], env[1], env[2], ("RUST_LOG", "")]);
    terminal.wait_for("the prompt", |screen| screen.contains("you>"));
    terminal.type_line("what does Priya play?");
    let screen = terminal.wait_for("the checked answer and the next prompt", |screen| {
        screen.contains(checked) && screen.lines().rfind(|line| !line.trim().is_empty()) == Some("you>")
    });
    assert!(!screen.contains("nobody.md"), "the citation taken out is gone from the screen:\n{screen}");
}
