//! The `kb` binary. (Its commands land with issue 6.)

fn main() -> anyhow::Result<()> {
    eprintln!("kb {}: the command-line interface lands with issue 6", env!("CARGO_PKG_VERSION"));
    Ok(())
}
