#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The web page's files over HTTP: `/` (and `/share`) and the styles, script and libraries
//! it loads, its manifest, icons and service worker, each with its content type, cache
//! header and version tag, none behind the API token.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A fresh, empty vault directory under the system's temp dir.
fn vault_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kb-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An answer: status, headers (names lower-cased) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// `GET path` over HTTP/1.1 with `extra` header lines, read to the end.
async fn get(addr: std::net::SocketAddr, path: &str, extra: &str) -> Answer {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{extra}\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer { status, headers, body: body.to_string() }
}

/// `GET path`'s body as bytes (an image).
async fn get_bytes(addr: std::net::SocketAddr, path: &str) -> Vec<u8> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let start = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(raw.starts_with(b"HTTP/1.1 200"), "{path}");
    raw.split_off(start)
}

#[tokio::test]
async fn the_page_and_its_files_are_served_with_their_types_and_no_token() {
    let dir = vault_dir("page");
    let assistant = kb_core::Assistant::open(kb_core::Config::offline(&dir)).await.unwrap();
    let state = kb_server::AppState::new(Arc::new(assistant), Some("s3cret".to_string()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, kb_server::router(state)).await });

    // The page names its styles, its script and the two libraries, all from kb itself.
    let page = get(addr, "/", "").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.header("content-type"), Some("text/html; charset=utf-8"));
    for file in ["/page.css", "/page.js", "/vendor/marked.umd.js", "/vendor/purify.min.js"] {
        assert!(page.body.contains(&format!("\"{file}\"")), "/ loads {file}");
    }
    assert!(!page.body.contains("<style") && !page.body.contains("<script>"), "no inline style or script");
    let policy = page.header("content-security-policy").expect("a Content-Security-Policy");
    assert!(policy.contains("script-src 'self'") && policy.contains("default-src 'none'"), "{policy}");
    // Its manifest and service worker are kb's own, and the policy lets only those in.
    assert!(page.body.contains(r#"<link rel="manifest" href="/manifest.webmanifest">"#));
    assert!(policy.contains("manifest-src 'self'") && policy.contains("worker-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe") && !policy.contains('*'), "{policy}");

    // The share route is the same page, whatever the query.
    let share = get(addr, "/share?title=T&text=Buy%20milk&url=https%3A%2F%2Fexample.org", "").await;
    assert_eq!(share.status, 200);
    assert_eq!(share.body, page.body);
    assert_eq!(share.header("content-security-policy"), Some(policy));

    // The manifest: an installable app with its icons at kb, and the share target.
    let manifest = get(addr, "/manifest.webmanifest", "").await;
    assert_eq!(manifest.status, 200);
    assert_eq!(manifest.header("content-type"), Some("application/manifest+json"));
    let manifest: serde_json::Value = serde_json::from_str(&manifest.body).expect("the manifest is JSON");
    assert_eq!(manifest["name"], "kb");
    assert_eq!(manifest["display"], "standalone");
    assert_eq!(manifest["start_url"], "/");
    assert_eq!(manifest["share_target"]["action"], "/share");
    assert_eq!(manifest["share_target"]["method"], "POST");
    assert_eq!(manifest["share_target"]["enctype"], "multipart/form-data");
    assert_eq!(manifest["share_target"]["params"]["files"][0]["name"], "files");
    for (src, sizes) in [("/icons/kb-192.png", "192x192"), ("/icons/kb-512.png", "512x512")] {
        let icons = manifest["icons"].as_array().unwrap();
        assert!(icons.iter().any(|i| i["src"] == src && i["sizes"] == sizes), "{src} in {icons:?}");
        let icon = get_bytes(addr, src).await;
        assert!(icon.starts_with(b"\x89PNG\r\n\x1a\n"), "{src} is a PNG");
        let size = u32::from_be_bytes(icon[16..20].try_into().unwrap());
        assert_eq!(format!("{size}x{size}"), sizes, "{src}");
    }

    // The service worker, at the root so its scope is the whole page, under its own strict
    // policy; it keeps no answer of the API.
    let worker = get(addr, "/sw.js", "").await;
    assert_eq!(worker.status, 200);
    assert_eq!(worker.header("content-type"), Some("text/javascript; charset=utf-8"));
    assert_eq!(worker.header("content-security-policy"), Some("default-src 'none'; connect-src 'self'"));
    assert!(worker.body.contains("\"/page.js\"") && !worker.body.contains("\"/api"), "{}", worker.body);

    // Each file: 200 without the token, its type, checked back each time, tagged.
    for (path, content_type, sample) in [
        ("/page.css", "text/css; charset=utf-8", "--accent"),
        ("/page.js", "text/javascript; charset=utf-8", "function renderMarkdown"),
        ("/vendor/marked.umd.js", "text/javascript; charset=utf-8", "marked v18"),
        ("/vendor/purify.min.js", "text/javascript; charset=utf-8", "DOMPurify 3"),
        ("/manifest.webmanifest", "application/manifest+json", "share_target"),
        ("/sw.js", "text/javascript; charset=utf-8", "addEventListener(\"fetch\""),
        ("/icons/kb.svg", "image/svg+xml", "<svg"),
    ] {
        let file = get(addr, path, "").await;
        assert_eq!(file.status, 200, "{path}: {}", file.body);
        assert_eq!(file.header("content-type"), Some(content_type), "{path}");
        assert_eq!(file.header("cache-control"), Some("no-cache"), "{path}");
        assert_eq!(file.header("x-content-type-options"), Some("nosniff"), "{path}");
        assert!(file.body.contains(sample), "{path} is the file");
        let etag = file.header("etag").expect("an ETag").to_string();

        // Asked again with its tag: 304, no body.
        let again = get(addr, path, &format!("If-None-Match: {etag}\r\n")).await;
        assert_eq!(again.status, 304, "{path}");
        assert_eq!(again.header("etag"), Some(etag.as_str()));
        assert!(again.body.is_empty(), "{path}");
        let stale = get(addr, path, "If-None-Match: \"0000\"\r\n").await;
        assert_eq!(stale.status, 200, "{path}");
    }

    // The API behind the page still asks for the token; a file the page does not have is 404.
    assert_eq!(get(addr, "/api/conversations", "").await.status, 401);
    let missing = get(addr, "/vendor/other.js", "").await;
    assert_eq!(missing.status, 404);
    assert!(missing.header("content-type").unwrap_or_default().contains("json"));
    let _ = std::fs::remove_dir_all(&dir);
}
