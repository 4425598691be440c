//! `kb serve --tls-cert FILE --tls-key FILE`: HTTPS with a self-signed certificate made
//! here, asked by a client that trusts only that certificate; and the flags and files kb
//! refuses (one flag without the other, a missing file, a file that is no certificate, a
//! key of another certificate), each with a clear message and exit code 2, never a panic.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncBufReadExt;
use tokio::process::Command;

/// A self-signed certificate for `localhost` and `127.0.0.1`: (certificate PEM, key PEM).
fn self_signed() -> (String, String) {
    let made =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    (made.cert.pem(), made.signing_key.serialize_pem())
}

/// `kb serve` on `vault` with `args`, its environment cleared of what could reach a model.
fn kb_serve(vault: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kb"));
    for var in
        ["OPENAI_API_KEY", "KB_API_TOKEN", "KB_ADDR", "KB_DIR", "DATABASE_URL", "KB_TLS_CERT", "KB_TLS_KEY"]
    {
        command.env_remove(var);
    }
    command.arg("serve").arg("--kb-dir").arg(vault).args(args).stdin(Stdio::null()).kill_on_drop(true);
    command
}

/// Runs `kb serve` with `args` and `env`, which must fail at once: its exit code and stderr.
async fn refused(vault: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let run =
        kb_serve(vault, args).envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::piped()).output();
    let output =
        tokio::time::timeout(Duration::from_secs(30), run).await.expect("kb serve should stop").unwrap();
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_serves_https_with_the_certificate_it_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    let (cert, key) = self_signed();
    let cert_file = dir.path().join("cert.pem");
    let key_file = dir.path().join("key.pem");
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let mut kb = kb_serve(
        &vault,
        &[
            "--addr",
            &addr,
            "--tls-cert",
            cert_file.to_str().unwrap(),
            "--tls-key",
            key_file.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();

    // It says where it listens, with https.
    let mut lines = tokio::io::BufReader::new(kb.stdout.take().unwrap()).lines();
    let said = tokio::time::timeout(Duration::from_secs(60), lines.next_line()).await.unwrap().unwrap();
    let said = said.unwrap_or_default();
    assert!(said.contains(&format!("https://{addr}/")), "{said}");

    // A client that trusts only this certificate gets /healthz and the page over HTTPS.
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(cert.as_bytes()).unwrap()])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let health = loop {
        match client.get(format!("https://localhost:{port}/healthz")).send().await {
            Ok(response) => break response,
            Err(error) => {
                assert!(Instant::now() < deadline, "no HTTPS answer: {error:?}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    assert_eq!(health.status(), 200);
    let health: serde_json::Value = health.json().await.unwrap();
    assert_eq!(health["model"], "offline", "{health}");
    let page = client.get(format!("https://127.0.0.1:{port}/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("/manifest.webmanifest"));

    // Plain HTTP on the same port gets no page.
    let plain = reqwest::Client::new().get(format!("http://{addr}/healthz")).send().await;
    assert!(plain.map(|r| r.status() != 200).unwrap_or(true), "plain HTTP is not served");
    kb.kill().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kb_refuses_tls_flags_and_files_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    let (cert, key) = self_signed();
    let (_, other_key) = self_signed();
    for (name, text) in [
        ("cert.pem", cert.as_str()),
        ("key.pem", key.as_str()),
        ("other-key.pem", other_key.as_str()),
        ("junk.pem", "not a certificate\n"),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let file = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
    let addr = ["--addr", "127.0.0.1:0"];

    let cases: [(Vec<String>, &str); 6] = [
        (vec!["--tls-cert".into(), file("cert.pem")], "--tls-cert needs --tls-key"),
        (vec!["--tls-key".into(), file("key.pem")], "--tls-key needs --tls-cert"),
        (
            vec!["--tls-cert".into(), file("missing.pem"), "--tls-key".into(), file("key.pem")],
            "cannot read the TLS file",
        ),
        (
            vec!["--tls-cert".into(), file("junk.pem"), "--tls-key".into(), file("key.pem")],
            "no CERTIFICATE section",
        ),
        (vec!["--tls-cert".into(), file("cert.pem"), "--tls-key".into(), file("junk.pem")], "no private key"),
        (
            vec!["--tls-cert".into(), file("cert.pem"), "--tls-key".into(), file("other-key.pem")],
            "does not go with the certificate",
        ),
    ];
    for (flags, says) in cases {
        let args: Vec<&str> = addr.iter().copied().chain(flags.iter().map(String::as_str)).collect();
        let (code, stderr) = refused(&vault, &args, &[]).await;
        assert_eq!(code, Some(2), "kb serve {args:?}: {stderr}");
        assert!(stderr.contains(says), "kb serve {args:?} should say {says:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // The variables stand for the flags; a blank one counts as unset.
    let cert_file = file("cert.pem");
    let (code, stderr) = refused(&vault, &addr, &[("KB_TLS_CERT", &cert_file)]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-cert needs --tls-key"), "{stderr}");
    let key_file = file("key.pem");
    let (code, stderr) = refused(&vault, &addr, &[("KB_TLS_CERT", " "), ("KB_TLS_KEY", &key_file)]).await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-key needs --tls-cert"), "{stderr}");
    assert!(!vault.join(".kb").exists(), "a bad TLS file stops kb before the vault is opened");
}
