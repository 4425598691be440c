-- A kb server's own database (KB_DATA_DIR/server.sqlite): the people it serves and their
-- tokens. Times are RFC 3339 text in UTC.
--
-- A token is kept only as the SHA-256 of its secret (`hash`, lowercase hex): the secret is
-- shown once, when it is issued. `expires_at` and `revoked_at` are NULL while they do not
-- apply; `last_used_at` is the last request it carried (kept to the minute).
CREATE TABLE people (
    name TEXT PRIMARY KEY NOT NULL,
    email TEXT NULL,
    webhook TEXT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

CREATE TABLE tokens (
    id TEXT PRIMARY KEY NOT NULL,
    person TEXT NOT NULL REFERENCES people (name) ON DELETE CASCADE,
    hash TEXT NOT NULL UNIQUE,
    label TEXT NULL,
    read_only INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    expires_at TEXT NULL,
    last_used_at TEXT NULL,
    revoked_at TEXT NULL
);
CREATE INDEX tokens_person ON tokens (person);
