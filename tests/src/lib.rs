//! End-to-end suites that cross kb's crates live in `tests/tests/`; this library holds
//! what they share.
