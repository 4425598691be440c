-- Sign-in links sent by email: each kept only as the SHA-256 of its code, used once
-- (`used_at`), and good until `expires_at` (15 minutes after it is made).
CREATE TABLE sign_in_links (
    hash TEXT PRIMARY KEY NOT NULL,
    person TEXT NOT NULL REFERENCES people (name) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT NULL
);
CREATE INDEX sign_in_links_person ON sign_in_links (person, created_at);
