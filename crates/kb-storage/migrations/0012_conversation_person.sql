-- The person a conversation belongs to when kb serves several people; NULL for the local
-- owner's (every conversation from before).
ALTER TABLE conversations ADD COLUMN person TEXT NULL;
