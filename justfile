# kb's everyday commands. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

# Address `just serve` listens on.
addr := env_var_or_default("KB_ADDR", "127.0.0.1:8080")

# Show the recipes.
default:
    @just --list

# Start kb (release build): HTTP API and web page on KB_ADDR.
serve:
    cargo run --release -p kb-cli --bin kb -- serve --addr {{addr}}

# Run every test of the workspace.
test:
    cargo test --workspace

# Print the benchmark tables (target/bench/search.md, relevance.md, vectors.md, vault.md, startup.md, people.md, notes.md, sync.md, sync-follow.md). KB_BENCH_SIZES=1000,10000 keeps it short.
bench:
    mkdir -p target/bench
    cargo bench -p kb-search --bench search
    cargo bench -p kb-search --bench relevance
    cargo bench -p kb-search --bench vectors
    cargo bench -p kb-cli --bench vault
    cargo bench -p kb-cli --bench startup
    cargo bench -p kb-cli --bench people
    cargo bench -p kb-core --bench notes
    cargo bench -p kb-storage --bench sync
    cargo bench -p kb-core --bench sync_follow

# Format the code.
fmt:
    cargo fmt --all

# Check formatting and lints (warnings are errors).
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Build the API documentation of every crate (rustdoc warnings are errors), into target/doc.
doc:
    RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --workspace --no-deps
