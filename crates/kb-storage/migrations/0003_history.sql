-- Revision history: every change to an entry's file, grouped in operations (the changes
-- of one action, undone together). File contents are stored once, by SHA-256 hash.

CREATE TABLE blobs (
    hash TEXT PRIMARY KEY NOT NULL,
    bytes BLOB NOT NULL
);

CREATE TABLE operations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    source TEXT NOT NULL,
    tool TEXT NULL,
    conversation_id TEXT NULL,
    -- The operation this one undid.
    reverts INTEGER NULL REFERENCES operations (id)
);

CREATE INDEX operations_by_conversation ON operations (conversation_id, id);
CREATE INDEX operations_by_reverts ON operations (reverts);

CREATE TABLE revisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    operation INTEGER NOT NULL REFERENCES operations (id),
    description TEXT NOT NULL,
    entry_id TEXT NULL,
    path_before TEXT NULL,
    path_after TEXT NULL,
    before_hash TEXT NULL REFERENCES blobs (hash),
    after_hash TEXT NULL REFERENCES blobs (hash)
);

CREATE INDEX revisions_by_operation ON revisions (operation);
CREATE INDEX revisions_by_entry ON revisions (entry_id, id);
CREATE INDEX revisions_by_path_after ON revisions (path_after, id);
CREATE INDEX revisions_by_path_before ON revisions (path_before, id);

-- What history last recorded at each path where a file should be.
CREATE TABLE heads (
    path TEXT PRIMARY KEY NOT NULL,
    hash TEXT NOT NULL REFERENCES blobs (hash)
);
