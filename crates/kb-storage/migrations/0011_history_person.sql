-- The person who asked for an operation when kb serves several people: a person's name,
-- 'local' for the CLI, kb mcp and the owner socket, NULL for outside edits and syncs.
-- Operations recorded before are the local owner's.
ALTER TABLE operations ADD COLUMN person TEXT NULL;
UPDATE operations SET person = 'local' WHERE source NOT IN ('outside', 'sync');
CREATE INDEX operations_person ON operations (person, id);
