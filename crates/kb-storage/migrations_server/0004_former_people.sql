-- The names of people removed: never given again, since conversations, revisions, snoozes
-- and Idempotency-Keys in the vaults still name them.
CREATE TABLE former_people (
    name TEXT PRIMARY KEY NOT NULL,
    removed_at TEXT NOT NULL
);
