-- Mail taken in: each message kb files from a mailbox is claimed here before it is filed,
-- so that every kb process watching the mailbox (and one restarted half-way) files it once.
--
-- `message` names it in its mailbox (`user@host:port/FOLDER UIDVALIDITY:UID`); `message_id`
-- is its Message-ID, unique, so the same mail under another UID (delivered twice, or the
-- folder rebuilt with a new UIDVALIDITY) is not filed again. `operation` is the history
-- operation that filed it, set in the transaction that records the capture (NULL while it
-- is being filed; 0 when its note was found in the vault, written but never recorded). `claimed_at` is RFC 3339 text in UTC: a claim never finished (the process
-- stopped mid-way) is taken again after a while.
CREATE TABLE mail_claims (
    message TEXT PRIMARY KEY NOT NULL,
    message_id TEXT NULL UNIQUE,
    claimed_at TEXT NOT NULL,
    operation INTEGER NULL
);
