use proptest::prelude::*;

use super::*;

fn path(text: &str) -> EntryPath {
    EntryPath::parse(text).unwrap()
}

fn entry(at: &str, text: &str) -> Entry {
    Entry::from_document(path(at), text).unwrap()
}

fn on() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 21).unwrap()
}

fn now() -> DateTime<Utc> {
    "2026-11-21T09:00:00Z".parse().unwrap()
}

fn priya() -> Entry {
    entry(
        "people/priya-raman.md",
        "---\nid: T1\nname: Priya Raman\ncontext: Robotics lead\ntags: [work, Robots]\n\
         follow_ups: [send the deck]\ncreated_at: 2026-01-01T00:00:00Z\nupdated_at: 2026-01-01T00:00:00Z\n---\n\
         Met at the meetup.\n",
    )
}

fn priya_short() -> Entry {
    entry(
        "people/priya.md",
        "---\nid: S1\nname: Priya\ncontext: Knows the robot people\ntags: [robots, coffee]\n\
         follow_ups: [send the deck, ask about the grant]\nlast_touched: 2026-11-01\nphone: 555 0100\n\
         related_projects: [projects/robot.md]\nconfidence: 0.5\nsource: chat\n---\nLikes [the lab](lab.md).\n",
    )
}

#[test]
fn the_target_keeps_its_fields_and_gains_lists_aliases_and_a_section() {
    let merged = merge_entries(&priya(), &[priya_short()], on(), now()).unwrap();
    let fm = &merged.entry.frontmatter;
    assert_eq!(fm.get_str("id"), Some("T1"));
    assert_eq!(fm.get_str("name"), Some("Priya Raman"));
    assert_eq!(fm.get_str("context"), Some("Robotics lead"));
    assert_eq!(fm.get_str("created_at"), Some("2026-01-01T00:00:00Z"));
    assert_eq!(fm.get_str("updated_at"), Some("2026-11-21T09:00:00Z"));
    assert_eq!(fm.get_str_list("tags"), ["work", "Robots", "coffee"]);
    assert_eq!(fm.get_str_list("follow_ups"), ["send the deck", "ask about the grant"]);
    assert_eq!(fm.get_str_list("related_projects"), ["projects/robot.md"]);
    assert_eq!(fm.get_str_list("aliases"), ["Priya"]);
    // Gaps are filled: a field of the category, a key of the person's own.
    assert_eq!(fm.get_str("last_touched"), Some("2026-11-01"));
    assert_eq!(fm.get_str("phone"), Some("555 0100"));
    assert!(fm.get("confidence").is_none() && fm.get("source").is_none());
    assert_eq!(
        merged.entry.body,
        "Met at the meetup.\n\n## Merged from Priya (2026-11-21)\n\nLikes [the lab](lab.md).\n\n\
         - context: Knows the robot people\n"
    );
    assert_eq!(merged.text, merged.entry.to_document());
}

#[test]
fn refuses_no_sources_itself_and_repeats() {
    let target = priya();
    assert_eq!(merge_entries(&target, &[], on(), now()), Err(MergeError::NoSources(target.path.clone())));
    assert_eq!(
        merge_entries(&target, std::slice::from_ref(&target), on(), now()),
        Err(MergeError::IntoItself(target.path.clone()))
    );
    let source = priya_short();
    assert_eq!(
        merge_entries(&target, &[source.clone(), source.clone()], on(), now()),
        Err(MergeError::Repeated(source.path.clone()))
    );
}

#[test]
fn an_inbox_capture_merges_with_its_fields_listed_and_links_rebased() {
    let inbox = entry(
        "inbox/call-priya.md",
        "---\nname: Call Priya\noriginal_text: |\n  call priya\n  about robots\nsuggested_category: people\n---\n\
         See [notes](notes.md) and [p](../people/priya-raman.md).\n",
    );
    let merged = merge_entries(&priya(), &[inbox], on(), now()).unwrap();
    let fm = &merged.entry.frontmatter;
    assert!(fm.get("original_text").is_none() && fm.get("suggested_category").is_none());
    assert_eq!(fm.get_str_list("aliases"), ["Call Priya"]);
    assert!(
        merged.entry.body.ends_with(
            "## Merged from Call Priya (2026-11-21)\n\n\
             See [notes](../inbox/notes.md) and [p](../people/priya-raman.md).\n\n\
             - original_text:\n  call priya\n  about robots\n- suggested_category: people\n"
        ),
        "{}",
        merged.entry.body
    );
}

#[test]
fn references_to_a_source_point_at_the_target() {
    let target = entry(
        "projects/robot.md",
        "---\nname: Robot\nrelated_people: [people/sam.md, people/ana.md]\n---\nWith [Ana](../people/ana.md).\n",
    );
    let source = entry(
        "projects/robot-arm.md",
        "---\nname: Robot arm\nrelated_people: [people/ana.md, projects/robot.md]\n---\nPart of [robot](robot.md).\n",
    );
    let other = entry("people/ana.md", "---\nname: Ana\n---\n");
    let merged = merge_entries(&target, &[source, other], on(), now()).unwrap();
    // ana.md is merged in: the list names the target instead, which is dropped as itself.
    assert_eq!(merged.entry.frontmatter.get_str_list("related_people"), ["people/sam.md"]);
    assert!(merged.entry.body.starts_with("With [Ana](../projects/robot.md).\n"), "{}", merged.entry.body);
    assert_eq!(merged.entry.frontmatter.get_str_list("aliases"), ["Robot arm", "Ana"]);
}

#[test]
fn a_source_named_like_the_target_adds_no_alias_and_an_empty_target_body_takes_the_notes() {
    let target = entry("ideas/bakery.md", "---\nname: Bakery\ntags: Food\n---\n");
    let source = entry("ideas/bakery-2.md", "---\nname: bakery\ntags: [food, bread]\n---\nSourdough.\n");
    let merged = merge_entries(&target, &[source], on(), now()).unwrap();
    assert!(merged.entry.frontmatter.get("aliases").is_none());
    assert_eq!(merged.entry.frontmatter.get_str_list("tags"), ["Food", "bread"]);
    assert_eq!(merged.entry.body, "## Merged from bakery (2026-11-21)\n\nSourdough.\n");
}

fn word() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "A", "b", "B", "work", "Work", "x y", "é", "robots"])
        .prop_map(str::to_string)
}

fn with_lists(at: &str, name: &str, tags: &[String], follow_ups: &[String]) -> Entry {
    let mut fm = Frontmatter::new();
    fm.set("name", Value::String(name.to_string()));
    fm.set("tags", Value::Array(tags.iter().cloned().map(Value::String).collect()));
    fm.set("follow_ups", Value::Array(follow_ups.iter().cloned().map(Value::String).collect()));
    Entry { path: path(at), frontmatter: fm, body: String::new() }
}

proptest! {
    #[test]
    fn united_lists_hold_every_item_once(
        lists in prop::collection::vec(
            (prop::collection::vec(word(), 0..5), prop::collection::vec(word(), 0..5)),
            2..5,
        ),
        names in prop::collection::vec(prop::sample::select(vec!["Priya", "priya", "Sam", "Ana Lee", "Zoë"]), 5),
    ) {
        let entries: Vec<Entry> = lists
            .iter()
            .enumerate()
            .map(|(i, (tags, follow_ups))| with_lists(&format!("people/p{i}.md"), names[i], tags, follow_ups))
            .collect();
        let merged = merge_entries(&entries[0], &entries[1..], on(), now()).unwrap();
        let fm = &merged.entry.frontmatter;
        let tags = fm.get_str_list("tags");
        let follow_ups = fm.get_str_list("follow_ups");
        let aliases = fm.get_str_list("aliases");
        for (tag_list, follow_up_list) in &lists {
            for tag in tag_list {
                prop_assert_eq!(tags.iter().filter(|t| t.to_lowercase() == tag.to_lowercase()).count(), 1);
            }
            for item in follow_up_list {
                prop_assert_eq!(follow_ups.iter().filter(|f| *f == item).count(), 1);
            }
        }
        let every_tag = lists.iter().flat_map(|(t, _)| t).map(|t| t.to_lowercase());
        prop_assert!(tags.iter().all(|t| every_tag.clone().any(|x| x == t.to_lowercase())));
        // The target's own items come first, in their order.
        let own: Vec<String> = {
            let mut seen: Vec<String> = Vec::new();
            for t in &lists[0].0 {
                if !seen.iter().any(|s| s.to_lowercase() == t.to_lowercase()) {
                    seen.push(t.clone());
                }
            }
            seen
        };
        prop_assert_eq!(&tags[..own.len()], own.as_slice());
        // Every source's name resolves: the target's own name or an alias, each once.
        let target_name = fold_name(names[0]);
        for name in &names[1..lists.len()] {
            let folded = fold_name(name);
            if folded != target_name {
                prop_assert_eq!(aliases.iter().filter(|a| fold_name(a) == folded).count(), 1);
            }
        }
        prop_assert!(aliases.iter().all(|a| fold_name(a) != target_name));
        // One section per source, and the text reads back as the entry.
        prop_assert_eq!(merged.entry.body.matches("## Merged from ").count(), lists.len() - 1);
        prop_assert_eq!(Entry::from_document(entries[0].path.clone(), &merged.text).unwrap(), merged.entry);
    }
}
