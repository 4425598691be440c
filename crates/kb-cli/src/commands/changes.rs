//! The commands that change an entry: `kb update` (update_entry) and `kb move`
//! (move_entry). Paths are checked by the tools, as for `kb show`, so a refused path
//! changes nothing and exits 2.

use kb_core::{Assistant, EntryEdit};
use serde_json::{Map, Value, json};

use crate::cli::{Setting, UpdateArgs};
use crate::failure::CliError;
use crate::output::{self, Format, show};

/// The keys update_entry reads as the notes rather than as a field.
const BODY_KEYS: [&str; 2] = ["content", "body"];

/// `kb update PATH [--set KEY=VALUE]... [--body TEXT | --append TEXT | --prepend TEXT |
/// --section NAME --add TEXT | --find X --replace Y [--count N]]`: the fields and the
/// notes change together, in one write, or not at all.
pub async fn update(kb: &Assistant, args: &UpdateArgs, format: Format) -> Result<(), CliError> {
    let edit = body_edit(args);
    let updates = fields(&args.set, edit.is_some())?;
    let updates = (!updates.is_empty()).then_some(Value::Object(updates));
    let data = kb.entries().update(&args.path, &EntryEdit { updates, body: edit }).await?;
    show(format, &data, output::updated)
}

/// The body edit the notes flags ask for (clap lets at most one of them through).
fn body_edit(args: &UpdateArgs) -> Option<Value> {
    let edit = |mode: &str, content: &str| json!({"mode": mode, "content": content});
    if let Some(text) = &args.body {
        return Some(edit("replace", text));
    }
    if let Some(text) = &args.append {
        return Some(edit("append", text));
    }
    if let Some(text) = &args.prepend {
        return Some(edit("prepend", text));
    }
    if let (Some(section), Some(text)) = (&args.section, &args.add) {
        let mut edit = edit("section", text);
        edit["section"] = Value::String(section.clone());
        return Some(edit);
    }
    let (find, replace) = (args.find.as_ref()?, args.replace.as_ref()?);
    let mut edit = edit("find_replace", replace);
    edit["find"] = Value::String(find.clone());
    if let Some(count) = args.count {
        edit["expectedReplacements"] = Value::from(count);
    }
    Some(edit)
}

/// `kb move PATH CATEGORY|TARGET_PATH`: the category is checked by move_entry (never the
/// inbox); a target path moves the note there.
pub async fn move_entry(kb: &Assistant, path: &str, target: &str, format: Format) -> Result<(), CliError> {
    // A target with a folder or ending in .md is a path; anything else names a category.
    let data = if target.contains('/') || target.to_ascii_lowercase().ends_with(".md") {
        kb.entries().move_to_path(path, target).await?
    } else {
        kb.entries().move_to(path, target).await?
    };
    show(format, &data, output::moved)
}

/// The `--set` fields as update_entry's `updates`; `notes_given` tells whether a notes
/// flag (`--body`, `--append`, …) changes the notes too. Refuses nothing to change, a field
/// given twice, and the notes given both ways.
fn fields(settings: &[Setting], notes_given: bool) -> Result<Map<String, Value>, CliError> {
    if settings.is_empty() && !notes_given {
        return Err(CliError::usage(
            "nothing to update: give --set KEY=VALUE, or change the notes with --body, --append, --prepend, \
             --section NAME --add TEXT or --find X --replace Y",
        ));
    }
    let mut updates = Map::new();
    let mut notes_set = notes_given;
    for setting in settings {
        if BODY_KEYS.contains(&setting.key.as_str()) {
            if notes_set {
                return Err(CliError::usage(format!(
                    "the notes are given twice (--set {} and a notes flag): give them once",
                    setting.key
                )));
            }
            notes_set = true;
            // The notes are text, whatever they look like.
            updates.insert("content".to_string(), Value::String(setting.text.clone()));
        } else if updates.insert(setting.key.clone(), setting.value.clone()).is_some() {
            return Err(CliError::usage(format!("field {:?} is set twice: set it once", setting.key)));
        }
    }
    Ok(updates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(args: &[&str]) -> Vec<Setting> {
        args.iter().map(|a| Setting::parse(a).unwrap_or_else(|e| panic!("{e}"))).collect()
    }

    #[test]
    fn settings_become_updates_with_the_notes_as_text() {
        let updates = fields(&set(&["status=done", "tags=[\"a\"]", "body=42"]), false)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Value::Object(updates), json!({"status": "done", "tags": ["a"], "content": "42"}));
    }

    #[test]
    fn nothing_to_change_and_twice_given_fields_are_usage_errors() {
        let usage = |settings: &[&str], notes: bool| fields(&set(settings), notes).map_err(|e| e.kind);
        assert_eq!(usage(&[], false), Err(crate::failure::FailureKind::Usage));
        assert!(usage(&[], true).is_ok());
        assert!(usage(&["status=done", "status=active"], false).is_err());
        assert!(usage(&["content=x"], true).is_err());
        assert!(usage(&["content=x", "body=y"], false).is_err());
    }

    fn parsed(args: &[&str]) -> Result<UpdateArgs, clap::Error> {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(["kb", "update", "ideas/a.md"].iter().chain(args))?;
        match cli.command {
            crate::cli::Command::Update(update) => Ok(update),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_notes_flag_is_a_body_edit() {
        let edit = |args: &[&str]| body_edit(&parsed(args).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(edit(&[]), None);
        assert_eq!(edit(&["--body", "x"]), Some(json!({"mode": "replace", "content": "x"})));
        assert_eq!(edit(&["--append", "x"]), Some(json!({"mode": "append", "content": "x"})));
        assert_eq!(edit(&["--prepend", "x"]), Some(json!({"mode": "prepend", "content": "x"})));
        assert_eq!(
            edit(&["--section", "Log", "--add", "Called"]),
            Some(json!({"mode": "section", "content": "Called", "section": "Log"}))
        );
        assert_eq!(
            edit(&["--find", "Fri", "--replace", "Mon"]),
            Some(json!({"mode": "find_replace", "content": "Mon", "find": "Fri"}))
        );
        assert_eq!(
            edit(&["--find", "Fri", "--replace", "", "--count", "2"]),
            Some(json!({"mode": "find_replace", "content": "", "find": "Fri", "expectedReplacements": 2}))
        );
    }

    #[test]
    fn notes_flags_exclude_each_other_and_need_their_partners() {
        for args in [
            &["--append", "x", "--prepend", "y"][..],
            &["--body", "x", "--find", "a", "--replace", "b"],
            &["--section", "Log"],
            &["--add", "x"],
            &["--find", "a"],
            &["--replace", "a"],
            &["--count", "2"],
            &["--find", "a", "--replace", "b", "--count", "0"],
        ] {
            assert!(parsed(args).is_err(), "{args:?}");
        }
    }
}
