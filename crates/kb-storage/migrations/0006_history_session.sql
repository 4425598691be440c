-- The MCP session an operation was made in (stdio: the `kb mcp` process; HTTP: its
-- Mcp-Session-Id), so an MCP client's undo reaches only its own changes.
ALTER TABLE operations ADD COLUMN session TEXT NULL;

CREATE INDEX operations_by_session ON operations (session, id);
