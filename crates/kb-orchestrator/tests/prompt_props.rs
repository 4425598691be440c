#![allow(clippy::unwrap_used, clippy::expect_used)]
//! For any vault overview (empty or not, any unicode names and summaries), any summary of
//! earlier turns and any budget, the system prompt names the role, every tool with
//! guidance on when to use it, today's date, the overview (or its placeholder) and the
//! conversation section (the summary, or its placeholder).

use chrono::NaiveDate;
use kb_domain::{Category, EntryPath, EntrySummary};
use kb_orchestrator::prompt::{EMPTY_OVERVIEW, NO_SUMMARY, PromptInputs, system_prompt};
use proptest::prelude::*;

const CATEGORIES: [Category; 5] =
    [Category::People, Category::Projects, Category::Ideas, Category::Admin, Category::Inbox];

/// Text that sometimes holds the template's own slot names, to catch double substitution.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "\\PC{0,40}",
        1 => "\\PC{0,10}(\\{overview\\}|\\{conversation\\}|\\{today\\}|\\{timezone\\})\\PC{0,10}",
        1 => ".{0,40}",
    ]
}

fn summary_entry() -> impl Strategy<Value = EntrySummary> {
    (0..5_usize, "[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}", text(), text(), proptest::option::of("[a-z]{3,8}"))
        .prop_map(|(c, slug, name, summary, status)| {
            let category = CATEGORIES[c];
            EntrySummary {
                path: EntryPath::parse(&format!("{}/{slug}.md", category.as_str())).unwrap(),
                category,
                name,
                status,
                updated_at: None,
                summary,
            }
        })
}

fn date() -> impl Strategy<Value = NaiveDate> {
    (1970..2200_i32, 1..=12_u32, 1..=28_u32).prop_map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_system_prompt_has_every_section(
        entries in proptest::collection::vec(summary_entry(), 0..50),
        summary in proptest::option::of(text()),
        budget in prop_oneof![Just(0_usize), 0..5000_usize, Just(usize::MAX)],
        today in date(),
        time_zone in proptest::option::of(text()),
    ) {
        let prompt = system_prompt(&PromptInputs {
            today,
            time_zone: time_zone.as_deref(),
            entries: &entries,
            folders: &[],
            overview_token_budget: budget,
            summary: summary.as_deref(),
        });

        prop_assert!(prompt.contains("personal knowledge management assistant"));
        let registry = kb_tools::standard_registry().unwrap();
        let names = registry.names();
        prop_assert_eq!(names.len(), 13);
        for name in names {
            let guided = prompt.lines().any(|line| {
                line.contains(name) && line.replacen(name, "", 1).trim_matches([' ', '-', ':']).chars().count() >= 20
            });
            prop_assert!(guided, "no guidance line for {}", name);
        }
        prop_assert!(prompt.contains(&today.format("%Y-%m-%d").to_string()));

        let (overview_part, conversation_part) = sections(&prompt);
        match entries.first() {
            None => prop_assert!(overview_part.contains(EMPTY_OVERVIEW)),
            Some(first) => {
                prop_assert!(overview_part.contains(&first.path.to_string()));
                prop_assert!(!overview_part.contains(EMPTY_OVERVIEW) || first.name.contains(EMPTY_OVERVIEW));
            }
        }
        match summary.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => prop_assert!(conversation_part.contains(NO_SUMMARY)),
            Some(text) => prop_assert!(conversation_part.contains(text), "summary {:?} not in {:?}", text, conversation_part),
        }
    }
}

/// The vault overview and the conversation section (the template puts them last, in that
/// order, under these headings).
fn sections(prompt: &str) -> (&str, &str) {
    let overview_at = prompt.find("## Overview of the knowledge base").unwrap();
    let conversation_at = prompt.rfind("## This conversation so far").unwrap();
    (&prompt[overview_at..conversation_at], &prompt[conversation_at..])
}
