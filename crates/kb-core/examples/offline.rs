//! Runs kb offline on a throw-away vault: a capture, a chat turn, a search and a digest.
//!
//! `cargo run -p kb-core --example offline`

use kb_core::{Assistant, CaptureOptions, Config, SearchRequest};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("kb-example-{}", std::process::id()));
    let kb = Assistant::open(Config::offline(&dir)).await?;

    let filed = kb.entries().capture("Renew passport by Dec 15", &CaptureOptions::default()).await?;
    println!("captured: {} as {} in {}", filed.name, filed.path, filed.category);

    let turn = kb.chat().send(None, "met Priya at the robotics meetup").await?;
    println!("kb: {}", turn.message.content);

    let hits = kb.entries().search(&SearchRequest::new("passport")).await?;
    for hit in &hits.entries {
        println!("found: {} ({})", hit.name, hit.path);
    }

    let digest = kb.entries().digest("daily").await?;
    println!("{}", digest.content);

    kb.close().await;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
