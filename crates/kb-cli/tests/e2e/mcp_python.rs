//! kb's MCP server driven by the official MCP Python SDK (PyPI `mcp` 2.3.0), as an
//! assistant that knows nothing of kb would drive it: over stdio against `kb mcp`, and over
//! streamable HTTP against `/mcp` on `kb serve` (with a bearer token). The scenario is
//! `tests/mcp/client.py`: the handshake, every tool (checked on disk too), each kind of
//! error, the resources with pagination, subscriptions to outside edits, and the prompts.
//!
//! The interpreter is `$KB_MCP_PYTHON` when set; otherwise a virtualenv made once under
//! the target folder (`python3 -m venv`, then `pip install mcp==2.3.0`) and reused. When
//! neither works the tests fail, saying why: they never skip.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{self, KbServer};

/// The SDK version the scenario is written against: the pin of `tests/mcp/requirements.txt`
/// (which `.ci/run` installs too).
const MCP_VERSION: &str = "2.3.0";

fn requirements() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("mcp").join("requirements.txt")
}

#[test]
fn the_pinned_sdk_is_the_one_the_scenario_is_written_against() {
    let pins = std::fs::read_to_string(requirements()).unwrap();
    assert!(pins.lines().any(|l| l.trim() == format!("mcp=={MCP_VERSION}")), "{pins}");
}
/// How many idea entries the vault starts with: more than one `resources/list` page.
const IDEAS: usize = 120;
/// How long the whole scenario may take (it takes seconds; a hang must not block CI).
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(240);

/// A scenario script: `client.py` (the 2025 protocol, through `ClientSession`) or
/// `modern.py` (the 2026 protocol, through the SDK's `Client`).
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("mcp").join(name)
}

/// A vault as a person may already have it: 120 ideas, and two people named Sam.
fn prepare_vault(vault: &Path) {
    for category in common::CATEGORIES {
        std::fs::create_dir_all(vault.join(category)).unwrap();
    }
    for i in 1..=IDEAS {
        std::fs::write(
            vault.join(format!("ideas/idea-{i:03}.md")),
            format!("---\nname: Idea number {i:03}\n---\nA thought worth keeping, number {i}.\n"),
        )
        .unwrap();
    }
    std::fs::write(
        vault.join("people/sam-lee.md"),
        "---\nname: Sam Lee\n---\nWorks on the garden project.\n",
    )
    .unwrap();
    std::fs::write(vault.join("people/sam-ortiz.md"), "---\nname: Sam Ortiz\n---\nPlays the cello.\n")
        .unwrap();
}

/// The Python interpreter with the MCP SDK, found or set up once for the whole test
/// binary (the two tests wait for the one setting it up).
fn python() -> PathBuf {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(find_python) {
        Ok(python) => python.clone(),
        Err(why) => panic!("no Python with the MCP SDK ({MCP_VERSION}) for the MCP tests: {why}"),
    }
}

fn find_python() -> Result<PathBuf, String> {
    if let Some(given) = std::env::var_os("KB_MCP_PYTHON") {
        let given = PathBuf::from(given);
        return match has_sdk(&given) {
            Ok(()) => Ok(given),
            Err(why) => Err(format!("KB_MCP_PYTHON={} cannot run the SDK: {why}", given.display())),
        };
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv.join("bin").join("python");
    if has_sdk(&python).is_ok() {
        return Ok(python);
    }
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv), "python3 -m venv")?;
    let pip = venv.join("bin").join("pip");
    run(
        Command::new(&pip)
            .args(["install", "--quiet", "--disable-pip-version-check", "-r"])
            .arg(requirements()),
        &format!("pip install mcp=={MCP_VERSION} (into {})", venv.display()),
    )?;
    has_sdk(&python)
        .map_err(|why| format!("{} still cannot run the SDK after installing it: {why}", python.display()))?;
    Ok(python)
}

/// Whether `python` imports the SDK, of the version the scenario is written against.
fn has_sdk(python: &Path) -> Result<(), String> {
    let check = format!(
        "import importlib.metadata as m, mcp, httpx2\nv = m.version('mcp')\nassert v == '{MCP_VERSION}', f'mcp {{v}} is installed, not {MCP_VERSION}'"
    );
    run(Command::new(python).arg("-c").arg(check), &format!("{} -c 'import mcp'", python.display()))
}

/// Runs a setup command to the end; its output in the error when it fails.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let output =
        command.stdin(Stdio::null()).output().map_err(|e| format!("{what}: could not start: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Runs the scenario with `args`; fails the test with the script's output unless every
/// check passed.
fn run_scenario(script_name: &str, args: &[&str], server_log: impl Fn() -> String) {
    let python = python();
    let outputs = tempfile::tempdir().unwrap();
    let stdout_file = outputs.path().join("stdout");
    let stderr_file = outputs.path().join("stderr");
    let mut command = Command::new(&python);
    // Nothing that could reach a real model, another vault or a proxy.
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "KB_MODEL",
        "KB_DIR",
        "KB_API_TOKEN",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ] {
        command.env_remove(var).env_remove(var.to_ascii_lowercase());
    }
    command
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("PYTHONUNBUFFERED", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .arg(script(script_name))
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout_file).unwrap())
        .stderr(std::fs::File::create(&stderr_file).unwrap());
    let started = Instant::now();
    let mut child = command.spawn().unwrap_or_else(|e| panic!("could not start {}: {e}", python.display()));
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > SCENARIO_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |file: &Path| {
        let mut text = String::new();
        std::fs::File::open(file).and_then(|mut f| f.read_to_string(&mut text)).unwrap();
        text
    };
    let (stdout, stderr) = (read(&stdout_file), read(&stderr_file));
    let report = || {
        format!(
            "{script_name} {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}\n--- kb log ---\n{}",
            args.join(" "),
            server_log()
        )
    };
    match status {
        None => panic!("the scenario did not finish within {SCENARIO_TIMEOUT:?}\n{}", report()),
        Some(status) => assert!(status.success(), "the scenario failed ({status})\n{}", report()),
    }
    eprintln!("{script_name} {} passed in {:.1?}:\n{stdout}", args[0], started.elapsed());
}

#[test]
fn the_python_sdk_drives_kb_mcp_over_stdio() {
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    prepare_vault(&vault);
    let kb = env!("CARGO_BIN_EXE_kb");
    // kb mcp's own log goes to the script's stderr (the SDK passes it through).
    run_scenario("client.py", &["stdio", kb, vault.to_str().unwrap()], String::new);
}

#[test]
fn the_python_sdk_drives_kb_mcp_over_the_2026_protocol() {
    let root = tempfile::tempdir().unwrap();
    let vault = root.path().join("vault");
    prepare_vault(&vault);
    run_scenario("modern.py", &["stdio", env!("CARGO_BIN_EXE_kb"), vault.to_str().unwrap()], String::new);
}

#[test]
fn the_python_sdk_drives_kb_serve_over_the_2026_protocol() {
    python();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(KbServer::start_with_vault(&[("KB_API_TOKEN", "secret")], prepare_vault));
    let url = format!("http://{}/mcp", server.addr);
    let vault = server.vault();
    run_scenario("modern.py", &["http", &url, "secret", vault.to_str().unwrap()], || server.log());
}

#[test]
fn the_python_sdk_drives_kb_serve_over_streamable_http() {
    // Set up the interpreter before kb starts, so that kb does not wait on pip.
    python();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(KbServer::start_with_vault(&[("KB_API_TOKEN", "secret")], prepare_vault));
    let url = format!("http://{}/mcp", server.addr);
    let vault = server.vault();
    run_scenario("client.py", &["http", &url, "secret", vault.to_str().unwrap()], || server.log());
}
