-- Scheduled digests never lost, never doubled by kb.

-- The digest a slot wrote: the slot is taken and its digest kept in one transaction, so a
-- slot that ran always has its digest (NULL for a slot only noted, and for slots taken
-- before this migration).
ALTER TABLE schedule_runs ADD COLUMN digest_id INTEGER NULL REFERENCES digests(id) ON DELETE SET NULL;

-- One row per digest and channel, kept from the digest's transaction until the delivery
-- went through ('delivered') or was given up ('failed'): the next kb serve resumes a
-- 'pending' one after a crash or a restart. `delivery_key` is sent with every attempt
-- (the email's Message-ID, the webhook's Idempotency-Key) so a receiver can drop a
-- repeat. `attempts` counts the attempts begun; `sending` is 1 while one is under way (a
-- process that finds it 1 and takes the delivery knows the last attempt was cut short).
-- `next_at` is when the next attempt is due (RFC 3339, UTC).
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    digest_id INTEGER NOT NULL REFERENCES digests(id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    delivery_key TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    sending INTEGER NOT NULL DEFAULT 0,
    next_at TEXT NOT NULL,
    UNIQUE (digest_id, channel)
);
CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending';
