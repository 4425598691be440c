//! Runs kb offline on a throw-away vault: a capture, a chat turn, a search and a digest.
//!
//! `cargo run -p kb-core --example offline`

use kb_core::{Assistant, CaptureSource, Config};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("kb-example-{}", std::process::id()));
    let kb = Assistant::open(Config::offline(&dir)).await?;

    let filed = kb.capture("Renew passport by Dec 15", None, CaptureSource::Api).await?;
    println!("captured: {filed}");

    let turn = kb.chat(None, "met Priya at the robotics meetup").await?;
    println!("kb: {}", turn.message.content);

    let hits = kb.search("passport", None, None).await?;
    println!("search: {hits}");

    let digest = kb.digest("daily").await?;
    println!("{}", digest["content"].as_str().unwrap_or_default());

    kb.close().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
