//! A small W3C WebDriver client over chromedriver's HTTP API: just what the web page test
//! needs (navigate, find, click, type, run a script, resize, screenshot, DevTools
//! commands), plus the chromedriver process itself, killed when dropped.

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The key W3C WebDriver sends for Enter.
pub const ENTER: &str = "\u{E007}";
/// The key W3C WebDriver sends for Shift (held until the next key is sent).
pub const SHIFT: &str = "\u{E008}";
/// The element id key of W3C WebDriver answers.
const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A running chromedriver, killed when dropped.
pub struct Driver {
    child: Child,
    /// Where it listens, like `http://127.0.0.1:9515`.
    pub url: String,
}

impl Driver {
    /// Starts `binary` on a free port and waits until it answers `/status`.
    pub async fn start(binary: &Path) -> Driver {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        // In a process group of its own, with the browsers it starts: ended together.
        let child = Command::new(binary)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let driver = Driver { child, url: format!("http://127.0.0.1:{port}") };
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(response) = http.get(format!("{}/status", driver.url)).send().await
                && let Ok(status) = response.json::<Value>().await
                && status["value"]["ready"] == json!(true)
            {
                return driver;
            }
            assert!(Instant::now() < deadline, "chromedriver did not become ready within 20 s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Driver {
    /// Ends chromedriver and every browser it started (they would outlive it otherwise).
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A browser session.
pub struct Session {
    http: reqwest::Client,
    base: String,
}

/// An element of the page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Element {
    /// Its WebDriver id (to pass it to a script).
    pub fn id(&self) -> &str {
        &self.0
    }
}

impl Session {
    /// Opens headless Chromium (`browser`) with a fresh profile in `profile_dir`.
    pub async fn new(
        driver: &Driver,
        browser: &Path,
        profile_dir: &Path,
        width: u32,
        height: u32,
    ) -> Session {
        let args = [
            "--headless".to_string(),
            "--no-sandbox".to_string(),
            "--disable-gpu".to_string(),
            "--disable-quic".to_string(),
            "--no-first-run".to_string(),
            "--disable-background-networking".to_string(),
            "--disable-component-update".to_string(),
            "--disable-sync".to_string(),
            "--disable-dev-shm-usage".to_string(),
            // A microphone that plays a tone, allowed without asking (the voice note test).
            "--use-fake-device-for-media-stream".to_string(),
            "--use-fake-ui-for-media-stream".to_string(),
            format!("--user-data-dir={}", profile_dir.display()),
            format!("--window-size={width},{height}"),
        ];
        let capabilities = json!({
            "capabilities": {
                "alwaysMatch": {
                    "browserName": "chrome",
                    "goog:chromeOptions": { "binary": browser.display().to_string(), "args": args },
                }
            }
        });
        let http = reqwest::Client::new();
        let answer =
            call(&http, reqwest::Method::POST, &format!("{}/session", driver.url), Some(capabilities))
                .await
                .unwrap_or_else(|e| panic!("cannot open a Chromium session: {e}"));
        let id = answer["sessionId"].as_str().expect("a session id").to_string();
        Session { http, base: format!("{}/session/{id}", driver.url) }
    }

    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        call(&self.http, method, &format!("{}{path}", self.base), body).await
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.cmd(reqwest::Method::POST, path, Some(body)).await.unwrap_or_else(|e| panic!("POST {path}: {e}"))
    }

    /// Loads `url`.
    pub async fn goto(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    /// The element `css` selects, if any.
    pub async fn try_find(&self, css: &str) -> Option<Element> {
        let found = self
            .cmd(reqwest::Method::POST, "/element", Some(json!({ "using": "css selector", "value": css })))
            .await
            .ok()?;
        found[ELEMENT_KEY].as_str().map(|id| Element(id.to_string()))
    }

    /// Waits (up to 60 s: a loaded 2-core CI machine is slow) for `css` to select a displayed element.
    pub async fn wait_for(&self, css: &str) -> Element {
        let script = "const e = document.querySelector(arguments[0]); \
                      return !!e && !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);";
        self.wait_until(&format!("{css} to be shown"), script, json!([css])).await;
        self.try_find(css).await.unwrap_or_else(|| panic!("{css} vanished"))
    }

    /// Waits (up to 60 s: a loaded 2-core CI machine is slow) until `script` (with `args`) returns true.
    pub async fn wait_until(&self, what: &str, script: &str, args: Value) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if self.execute(script, args.clone()).await == json!(true) {
                return;
            }
            if Instant::now() > deadline {
                let page = self.execute("return document.body.innerText;", json!([])).await;
                panic!("waited 60 s for {what}; the page shows:\n{}", page.as_str().unwrap_or_default());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs `script` in the page with `args`; answers its return value.
    pub async fn execute(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": args })).await
    }

    /// Reloads the page.
    pub async fn refresh(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// Runs the Chrome DevTools Protocol command `cmd` with `params` on the page (through
    /// chromedriver's `goog/cdp/execute`); answers its result.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.post("/goog/cdp/execute", json!({ "cmd": cmd, "params": params })).await
    }

    /// Runs the asynchronous `script` in the page (it ends by calling its last argument
    /// with the answer); answers that.
    pub async fn execute_async(&self, script: &str) -> Value {
        self.post("/execute/async", json!({ "script": script, "args": [] })).await
    }

    /// Clicks `element`.
    pub async fn click(&self, element: &Element) {
        self.post(&format!("/element/{}/click", element.0), json!({})).await;
    }

    /// Types `text` into `element` (WebDriver key codes like [`ENTER`] allowed).
    pub async fn type_into(&self, element: &Element, text: &str) {
        self.post(&format!("/element/{}/value", element.0), json!({ "text": text })).await;
    }

    /// The rendered text of `element`.
    pub async fn text(&self, element: &Element) -> String {
        let value = self
            .cmd(reqwest::Method::GET, &format!("/element/{}/text", element.0), None)
            .await
            .unwrap_or_else(|e| panic!("text: {e}"));
        value.as_str().unwrap_or_default().to_string()
    }

    /// The rendered text of the element `css` selects.
    pub async fn text_of(&self, css: &str) -> String {
        let element = self.wait_for(css).await;
        self.text(&element).await
    }

    /// Resizes the window.
    pub async fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({ "width": width, "height": height })).await;
    }

    /// A PNG of the viewport, written to `path`.
    pub async fn screenshot(&self, path: &Path) {
        let value = self
            .cmd(reqwest::Method::GET, "/screenshot", None)
            .await
            .unwrap_or_else(|e| panic!("screenshot: {e}"));
        let png = decode_base64(value.as_str().expect("base64 PNG"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, png).unwrap();
    }

    /// Accepts the open `confirm()` dialog.
    pub async fn accept_alert(&self) {
        self.post("/alert/accept", json!({})).await;
    }

    /// Closes the browser.
    pub async fn quit(self) {
        let _ = self.cmd(reqwest::Method::DELETE, "", None).await;
    }
}

/// One WebDriver command; answers `value`, or the driver's error as text.
async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> Result<Value, String> {
    let mut request = http.request(method, url).timeout(Duration::from_secs(60));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let answer: Value = response.json().await.map_err(|e| e.to_string())?;
    if status.is_success() {
        Ok(answer["value"].clone())
    } else {
        Err(format!("{status}: {} {}", answer["value"]["error"], answer["value"]["message"]))
    }
}

/// Standard base64 (what WebDriver screenshots are).
fn decode_base64(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => continue,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}

#[test]
fn base64_decodes() {
    assert_eq!(decode_base64("aGVsbG8="), b"hello");
    assert_eq!(decode_base64("aGk="), b"hi");
    assert_eq!(decode_base64("YWJj"), b"abc");
}
