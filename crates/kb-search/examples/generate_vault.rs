//! Writes a generated vault for trying kb at size by hand:
//! `cargo run --release -p kb-search --features testgen --example generate_vault -- DIR 100000`.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "generated-vault".to_string()));
    let size = args.next().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    kb_search::testgen::write_vault(&dir, size, 7)?;
    println!("wrote {size} entries under {}", dir.display());
    Ok(())
}
