-- How far a conversation's summary reaches, so that a chat turn reads only the messages
-- after it: how many of the oldest messages it covers, and the entry filed last in them.
-- NULL with a summary means a summary stored before this was recorded (kb works out what
-- it covered once, from the messages, and records it).

ALTER TABLE conversations ADD COLUMN summary_covers INTEGER NULL;
ALTER TABLE conversations ADD COLUMN summary_last_filed TEXT NULL;
