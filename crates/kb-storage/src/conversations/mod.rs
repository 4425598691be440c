//! The SQLite conversation store.
