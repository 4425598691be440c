//! `kb status`: one screen of what kb knows — entries per category, the search index,
//! the embedding model and how far it got (entries embedded of all, and queued), sync,
//! and what the person should know (why scheduled digests are not sent from here).

use kb_core::{Assistant, ListQuery};
use serde_json::{Value, json};

use crate::failure::CliError;
use crate::output::{self, Format};

/// The categories counted, in the order shown.
const CATEGORIES: [&str; 6] = ["people", "projects", "ideas", "admin", "inbox", "other"];

/// Runs `kb status`.
pub async fn run(kb: &Assistant, format: Format) -> Result<(), CliError> {
    let mut counts = Vec::with_capacity(CATEGORIES.len());
    for category in CATEGORIES {
        let query =
            ListQuery { category: Some(category.to_string()), limit: Some(1), ..ListQuery::default() };
        counts.push((category, kb.entries().list(&query).await?.total));
    }
    let health = kb.health();
    let embeddings = health.embeddings.as_ref().map(|coverage| {
        json!({
            "model": coverage.model,
            "embedded": coverage.embedded,
            "total": coverage.total,
            "queued": coverage.queued,
            "calibrated": coverage.calibrated,
        })
    });
    let status = json!({
        "vault": kb.vault_root().display().to_string(),
        "model": health.model,
        "entries": health.entries,
        "categories": counts.iter().map(|(c, n)| (c.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        "indexReady": health.index_ready,
        "indexProblem": health.index_problem,
        "embeddings": embeddings,
        "sync": health.sync.as_ref().map(|sync| json!({
            "state": sync.state,
            "lastSync": sync.last_sync.map(|at| at.to_rfc3339()),
            "conflicts": sync.conflicts,
        })),
        "notices": health.notices,
    });
    if format.is_json() { output::print_json(&status) } else { output::print_text(&text(&status)) }
}

/// The status on a screen.
fn text(status: &Value) -> String {
    let field = |key: &str| status.get(key).cloned().unwrap_or(Value::Null);
    let mut out = format!("vault        {}\n", field("vault").as_str().unwrap_or_default());
    out.push_str(&format!("chat model   {}\n", field("model").as_str().unwrap_or_default()));
    out.push_str(&format!("entries      {}\n", field("entries")));
    for category in CATEGORIES {
        let n = status["categories"][category].as_u64().unwrap_or(0);
        out.push_str(&format!("  {category:<10} {n}\n"));
    }
    match field("indexProblem").as_str() {
        None => out.push_str("search index ready\n"),
        Some(problem) => out.push_str(&format!("search index not ready: {problem}\n")),
    }
    match status.get("embeddings").filter(|e| !e.is_null()) {
        None => out.push_str("embeddings   none (set KB_EMBEDDINGS_MODEL to search by meaning)\n"),
        Some(e) => out.push_str(&format!(
            "embeddings   {}: {} of {} entries embedded, {} queued; {}\n",
            e["model"].as_str().unwrap_or_default(),
            e["embedded"],
            e["total"],
            e["queued"],
            if e["calibrated"] == true {
                "cut of matches by meaning measured on this vault"
            } else {
                "default cut of matches by meaning (not measured yet)"
            }
        )),
    }
    if let Some(sync) = status.get("sync").filter(|s| !s.is_null()) {
        let last = sync["lastSync"].as_str().unwrap_or("never");
        out.push_str(&format!(
            "sync         {}, last {last}, {} conflict copies (kb sync status)\n",
            sync["state"].as_str().unwrap_or_default(),
            sync["conflicts"]
        ));
    }
    for notice in status["notices"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        out.push_str(&format!("note         {notice}\n"));
    }
    out
}
