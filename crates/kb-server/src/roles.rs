//! The role each route needs in a vault once kb has accounts: one table, checked before
//! the route runs, beside the tool registry's own check (a tool that changes the vault
//! needs an editor, whoever asks). A route without a rule here is refused to everyone, so
//! a new route cannot go out unchecked; the table test lists every route.

use axum::http::Method;
use kb_core::domain::VaultRole;

/// The role `method` on `route` (a route's pattern as axum matched it: `/api/entries/{*path}`)
/// needs; `None` when the table has no rule for it.
pub fn needed(method: &Method, route: &str) -> Option<VaultRole> {
    use VaultRole::{Editor, Reader};
    let route = route.strip_prefix("/api").unwrap_or(route);
    let method = method.as_str();
    let role = match (method, route) {
        // MCP: every method reads; `tools/call` is checked tool by tool in the registry.
        (_, "/mcp") => Reader,
        // A chat turn is a reader's too: their turn is offered only the tools that read.
        ("POST", "/chat") => Reader,
        // A person's own conversations.
        ("GET", "/conversations") | ("GET" | "PATCH" | "DELETE", "/conversations/{id}") => Reader,
        ("GET", "/entries" | "/entries/{*path}") => Reader,
        // Change, delete, move and restore.
        ("PATCH" | "DELETE" | "POST", "/entries/{*path}") => Editor,
        ("POST", "/undo" | "/merge" | "/capture" | "/files" | "/voice") => Editor,
        ("GET", "/duplicates" | "/search" | "/index" | "/nudges" | "/digests" | "/sync" | "/vaults") => {
            Reader
        }
        // A digest is written (and sent to the vault's people) for a reader too.
        ("POST", "/digest" | "/digests") => Reader,
        ("POST", "/nudges/snooze" | "/nudges/done" | "/sync" | "/sync/resolve") => Editor,
        _ => return None,
    };
    Some(role)
}

/// The role an MCP method needs: a reader's, each of them (`tools/call` runs only the
/// tools the role allows, checked in the registry); `None` for a method kb does not answer.
pub fn mcp_method(method: &str) -> Option<VaultRole> {
    match method {
        "initialize"
        | "ping"
        | "tools/list"
        | "tools/call"
        | "resources/list"
        | "resources/templates/list"
        | "resources/read"
        | "resources/subscribe"
        | "resources/unsubscribe"
        | "prompts/list"
        | "prompts/get"
        | "subscriptions/listen" => Some(VaultRole::Reader),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route of `routes::router` with every method it answers, and the role it needs.
    /// A route added there must be added here, and to [`needed`].
    pub(crate) const TABLE: &[(&str, &str, VaultRole)] = &[
        ("POST", "/api/chat", VaultRole::Reader),
        ("GET", "/api/conversations", VaultRole::Reader),
        ("GET", "/api/conversations/{id}", VaultRole::Reader),
        ("PATCH", "/api/conversations/{id}", VaultRole::Reader),
        ("DELETE", "/api/conversations/{id}", VaultRole::Reader),
        ("GET", "/api/entries", VaultRole::Reader),
        ("GET", "/api/entries/{*path}", VaultRole::Reader),
        ("PATCH", "/api/entries/{*path}", VaultRole::Editor),
        ("POST", "/api/entries/{*path}", VaultRole::Editor),
        ("DELETE", "/api/entries/{*path}", VaultRole::Editor),
        ("POST", "/api/undo", VaultRole::Editor),
        ("GET", "/api/duplicates", VaultRole::Reader),
        ("POST", "/api/merge", VaultRole::Editor),
        ("POST", "/api/capture", VaultRole::Editor),
        ("POST", "/api/files", VaultRole::Editor),
        ("POST", "/api/voice", VaultRole::Editor),
        ("GET", "/api/search", VaultRole::Reader),
        ("POST", "/api/digest", VaultRole::Reader),
        ("GET", "/api/index", VaultRole::Reader),
        ("GET", "/api/nudges", VaultRole::Reader),
        ("POST", "/api/nudges/snooze", VaultRole::Editor),
        ("POST", "/api/nudges/done", VaultRole::Editor),
        ("GET", "/api/digests", VaultRole::Reader),
        ("POST", "/api/digests", VaultRole::Reader),
        ("GET", "/api/sync", VaultRole::Reader),
        ("POST", "/api/sync", VaultRole::Editor),
        ("POST", "/api/sync/resolve", VaultRole::Editor),
        ("GET", "/api/vaults", VaultRole::Reader),
        ("POST", "/mcp", VaultRole::Reader),
        ("GET", "/mcp", VaultRole::Reader),
        ("DELETE", "/mcp", VaultRole::Reader),
    ];

    /// Every path routed under `/api` in `routes/mod.rs`, read from its source: a route
    /// added there without a line in [`TABLE`] fails here.
    #[test]
    fn every_routed_path_is_in_the_table() {
        let source = include_str!("routes/mod.rs");
        let api =
            &source[source.find("let api = Router::new()").unwrap()..source.find(".fallback(").unwrap()];
        let mut routed = Vec::new();
        for piece in api.split(".route(").skip(1) {
            let path = piece.trim_start().strip_prefix('"').and_then(|rest| rest.split('"').next()).unwrap();
            routed.push(format!("/api{path}"));
        }
        assert!(routed.len() >= 20, "{routed:?}");
        for path in routed {
            assert!(TABLE.iter().any(|(_, route, _)| *route == path), "{path} has no line in the role table");
        }
    }

    #[test]
    fn every_mcp_method_is_a_readers() {
        for method in crate::mcp::KNOWN_METHODS {
            assert_eq!(mcp_method(method), Some(VaultRole::Reader), "{method}");
        }
        assert_eq!(mcp_method("tools/delete"), None);
    }

    #[test]
    fn every_route_has_the_role_the_table_gives_it() {
        for &(method, route, role) in TABLE {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            assert_eq!(needed(&method, route), Some(role), "{method} {route}");
        }
        assert_eq!(needed(&Method::PUT, "/api/entries/{*path}"), None, "no rule: refused");
        assert_eq!(needed(&Method::GET, "/api/nowhere"), None);
    }

    /// Every tool, with the role it needs (an editor for any that changes the vault): a new
    /// tool must be added here.
    #[test]
    fn every_tool_has_a_role() {
        use VaultRole::{Editor, Reader};
        let expected = [
            ("classify_and_capture", Editor),
            ("list_entries", Reader),
            ("get_entry", Reader),
            ("generate_digest", Reader),
            ("update_entry", Editor),
            ("move_entry", Editor),
            ("search_entries", Reader),
            ("delete_entry", Editor),
            ("undo_last_change", Editor),
            ("find_duplicates", Reader),
            ("merge_entries", Editor),
            ("build_context", Reader),
            ("resolve_conflict", Editor),
        ];
        let specs = kb_core::assistant::standard_specs().unwrap();
        let mut actual: Vec<(String, VaultRole)> = specs
            .iter()
            .map(|s| (s.definition.name.clone(), if s.hints.read_only { Reader } else { Editor }))
            .collect();
        let mut expected: Vec<(String, VaultRole)> =
            expected.iter().map(|(n, r)| (n.to_string(), *r)).collect();
        actual.sort();
        expected.sort();
        assert_eq!(actual, expected);
    }
}
