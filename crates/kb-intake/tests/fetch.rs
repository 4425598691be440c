//! The web reader against real HTTP servers on loopback: which addresses it refuses (before
//! any connection), redirects, limits, and a page read.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use kb_domain::{PageError, PageReader};
use kb_intake::{FetchSettings, HostResolver, WebReader};

/// Names the tests resolve, and to what.
struct Names(HashMap<String, Vec<IpAddr>>);

#[async_trait]
impl HostResolver for Names {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let found = self.0.get(host).ok_or_else(|| std::io::Error::other("no such host"))?;
        Ok(found.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
    }
}

fn names(pairs: &[(&str, &str)]) -> Arc<Names> {
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for (host, ip) in pairs {
        map.entry(host.to_string()).or_default().push(ip.parse().unwrap());
    }
    Arc::new(Names(map))
}

const ARTICLE: &str = r#"<!doctype html><html><head><title>Sourdough notes</title></head><body>
<nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<article><h1>Sourdough notes</h1>
<p>Feed the starter twice a day with equal weights of flour and water, and keep it somewhere
warm; after a week it doubles in four hours and smells of yoghurt rather than of glue.</p>
<p>The dough wants a long cold proof: twelve hours in the fridge gives the crumb its holes
and the crust its blisters. Bake in a closed pot for twenty minutes, then open it.</p>
</article><footer>Cookie settings</footer></body></html>"#;

/// A server on 127.0.0.1 answering the routes the tests use; counts the connections made
/// to it.
async fn server() -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    let listener = listener.tap_io(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
    });
    let app = Router::new()
        .route("/article", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], ARTICLE) }))
        .route("/loop", get(|| async { Redirect::to("/loop") }))
        .route("/chain/{n}", get(chain))
        .route("/to", get(to))
        .route("/big", get(|| async { ([(header::CONTENT_TYPE, "text/html")], "x".repeat(4096)) }))
        .route("/endless", get(endless))
        .route("/slow", get(slow))
        .route("/missing", get(|| async { StatusCode::NOT_FOUND }))
        .route(
            "/gzip",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "text/html"), (header::CONTENT_ENCODING, "gzip")],
                    vec![0x1f_u8, 0x8b, 8, 0, 1, 2, 3],
                )
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, connections)
}

/// `/chain/N` redirects N more times, then to the article.
async fn chain(axum::extract::Path(n): axum::extract::Path<u32>) -> Redirect {
    if n == 0 { Redirect::to("/article") } else { Redirect::to(&format!("/chain/{}", n - 1)) }
}

/// `/to?url=U` redirects to U.
async fn to(axum::extract::Query(query): axum::extract::Query<HashMap<String, String>>) -> Redirect {
    Redirect::to(&query["url"])
}

/// A body that never ends and says no length.
async fn endless() -> Response {
    let chunks = futures_chunks();
    Response::builder().header(header::CONTENT_TYPE, "text/html").body(Body::from_stream(chunks)).unwrap()
}

fn futures_chunks() -> impl tokio_stream::Stream<Item = Result<Vec<u8>, std::io::Error>> {
    tokio_stream::iter(std::iter::repeat_with(|| Ok(vec![b'a'; 1024])))
}

/// Answers after five seconds.
async fn slow(_: HeaderMap) -> impl IntoResponse {
    tokio::time::sleep(Duration::from_secs(5)).await;
    ARTICLE
}

fn settings() -> FetchSettings {
    FetchSettings { timeout: Duration::from_secs(3), max_bytes: 1024 * 1024, allow_private: false }
}

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[tokio::test]
async fn private_addresses_are_refused_before_any_connection() {
    let (port, connections) = server().await;
    let resolver = names(&[
        ("evil.test", "127.0.0.1"),
        ("mixed.test", "93.184.215.14"),
        ("mixed.test", "127.0.0.1"),
        ("metadata.test", "169.254.169.254"),
    ]);
    let reader = WebReader::with_resolver(settings(), resolver);
    for url in [
        format!("http://evil.test:{port}/article"),
        format!("http://mixed.test:{port}/article"),
        format!("http://metadata.test:{port}/article"),
        format!("http://127.0.0.1:{port}/article"),
        format!("http://[::ffff:127.0.0.1]:{port}/article"),
        format!("http://2130706433:{port}/article"),
        format!("http://0x7f.1:{port}/article"),
        format!("http://[::1]:{port}/article"),
        format!("http://0.0.0.0:{port}/article"),
        "http://10.1.2.3/".to_string(),
        "https://[fd00::1]/".to_string(),
        "http://100.64.1.1/".to_string(),
    ] {
        let error = reader.read(&url).await.unwrap_err();
        assert!(matches!(error, PageError::Refused { .. }), "{url}: {error:?}");
        assert!(error.to_string().contains("KB_FETCH_ALLOW_PRIVATE"), "{error}");
    }
    for url in ["file:///etc/passwd", "ftp://example.org/", "gopher://example.org/", "not a url"] {
        let error = reader.read(url).await.unwrap_err();
        assert!(matches!(error, PageError::Refused { .. }), "{url}: {error:?}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 0, "no connection was made");
}

#[tokio::test]
async fn a_redirect_is_checked_like_the_first_address() {
    let (port, connections) = server().await;
    let resolver = names(&[("public.test", "127.0.0.1"), ("inside.test", "192.168.1.20")]);
    let reader = WebReader::with_resolver(settings(), resolver).taking_as_public(LOOPBACK);
    for target in [
        "http://10.0.0.1/admin".to_string(),
        "http://inside.test/".to_string(),
        format!("http://127.0.0.2:{port}/article"),
        "http://[::ffff:a00:1]/".to_string(),
        "file:///etc/passwd".to_string(),
    ] {
        let before = connections.load(Ordering::SeqCst);
        let url = format!("http://public.test:{port}/to?url={target}");
        let error = reader.read(&url).await.unwrap_err();
        assert!(matches!(error, PageError::Refused { .. }), "{target}: {error:?}");
        assert_eq!(connections.load(Ordering::SeqCst), before + 1, "only the first server was reached");
    }
}

#[tokio::test]
async fn a_page_is_read_through_its_redirects_as_markdown() {
    let (port, _) = server().await;
    let reader = WebReader::with_resolver(settings(), names(&[("public.test", "127.0.0.1")]))
        .taking_as_public(LOOPBACK);
    let page = reader.read(&format!("http://public.test:{port}/chain/4")).await.unwrap();
    assert_eq!(page.url, format!("http://public.test:{port}/article"));
    assert_eq!(page.title.as_deref(), Some("Sourdough notes"));
    let markdown = page.markdown.unwrap();
    assert!(markdown.contains("long cold proof"), "{markdown}");
    assert!(!markdown.contains("Cookie settings"), "{markdown}");
}

#[tokio::test]
async fn redirects_loops_sizes_and_slowness_have_limits() {
    let (port, _) = server().await;
    let small = FetchSettings { max_bytes: 2048, ..settings() };
    let reader = WebReader::with_resolver(small, names(&[])).taking_as_public(LOOPBACK);
    let base = format!("http://127.0.0.1:{port}");
    let too_many = reader.read(&format!("{base}/chain/5")).await.unwrap_err();
    assert!(matches!(too_many, PageError::TooManyRedirects { limit: 5, .. }), "{too_many:?}");
    let looping = reader.read(&format!("{base}/loop")).await.unwrap_err();
    assert!(matches!(looping, PageError::TooManyRedirects { .. }), "{looping:?}");
    let big = reader.read(&format!("{base}/big")).await.unwrap_err();
    assert!(matches!(big, PageError::TooLarge { limit: 2048, .. }), "{big:?}");
    let endless = reader.read(&format!("{base}/endless")).await.unwrap_err();
    assert!(matches!(endless, PageError::TooLarge { .. }), "{endless:?}");
    let compressed = reader.read(&format!("{base}/gzip")).await.unwrap();
    assert_eq!(compressed.markdown, None, "a compressed body is not read as text");
    let with_password =
        reader.read(&format!("http://ana:secret@127.0.0.1:{port}/article")).await.unwrap_err();
    assert!(matches!(with_password, PageError::Refused { .. }), "{with_password:?}");
    assert!(!with_password.to_string().contains("secret"), "{with_password}");
    let missing = reader.read(&format!("{base}/missing")).await.unwrap_err();
    assert!(matches!(missing, PageError::Status { status: 404, .. }), "{missing:?}");
    let started = Instant::now();
    let quick = FetchSettings { timeout: Duration::from_secs(1), ..settings() };
    let slow = WebReader::with_resolver(quick, names(&[])).taking_as_public(LOOPBACK);
    let error = slow.read(&format!("{base}/slow")).await.unwrap_err();
    assert!(matches!(error, PageError::TimedOut { secs: 1, .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(4), "the deadline held: {:?}", started.elapsed());
    let unknown = reader.read("http://nowhere.test/").await.unwrap_err();
    assert!(matches!(unknown, PageError::Unreachable { .. }), "{unknown:?}");
}
