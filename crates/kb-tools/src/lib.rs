//! kb-tools: the tool registry and the seven tools of SPEC §2 (classify_and_capture,
//! list_entries, get_entry, generate_digest, update_entry, move_entry, search_entries).
//!
//! Tools see storage and search only through kb-domain's ports; this crate must not
//! depend on kb-storage, kb-search or any adapter. (The tools land with issue 4.)
