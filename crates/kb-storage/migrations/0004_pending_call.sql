-- A tool call a chat turn proposed and that waits for the person's yes (delete_entry in a
-- chat): JSON text {tool, arguments, proposal}, NULL when nothing waits. The next message
-- of the conversation takes it away, whether it confirms or cancels.

ALTER TABLE conversations ADD COLUMN pending_call TEXT NULL;
