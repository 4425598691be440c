-- Idempotency keys: the answer given to a request that carried an `Idempotency-Key`, so a
-- repeat gets it again and files nothing new.
--
-- A row is inserted (claimed) before the request runs, with `status` NULL; the answer is
-- written into it after. The primary key makes the claim atomic across processes: of two
-- inserts with one key exactly one succeeds. `fingerprint` names the request (method,
-- path, a hash of the body): the same key with another request is refused. `claimed_at`
-- is RFC 3339 text in UTC; rows older than a day are removed.
CREATE TABLE idempotency_keys (
    key TEXT PRIMARY KEY NOT NULL,
    fingerprint TEXT NOT NULL,
    claimed_at TEXT NOT NULL,
    status INTEGER NULL,
    content_type TEXT NULL,
    body BLOB NULL
);
CREATE INDEX idempotency_keys_claimed_at ON idempotency_keys (claimed_at);
