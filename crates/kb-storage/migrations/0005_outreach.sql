-- kb reaching out (scheduled digests, deliveries, nudges).

-- One row per scheduled slot taken: the primary key makes the claim exclusive, so among
-- several kb processes exactly one runs each slot. `ran` is 0 for a slot only noted (the
-- first start of a schedule does not send at once).
CREATE TABLE schedule_runs (
    schedule TEXT NOT NULL,
    slot TEXT NOT NULL,
    ran INTEGER NOT NULL,
    claimed_at TEXT NOT NULL,
    PRIMARY KEY (schedule, slot)
);

CREATE TABLE digests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    markdown TEXT NOT NULL,
    nudges TEXT NOT NULL,
    trigger TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    digest_id INTEGER NOT NULL REFERENCES digests(id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    delivered INTEGER NOT NULL,
    error TEXT NULL,
    will_retry INTEGER NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX deliveries_by_digest ON deliveries (digest_id);

CREATE TABLE snoozes (
    nudge_key TEXT PRIMARY KEY,
    until TEXT NOT NULL
);
