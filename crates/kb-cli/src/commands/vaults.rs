//! `kb vaults`: the vaults `kb serve` serves once it has accounts, and who may use them
//! (kept in `KB_DATA_DIR/server.sqlite`, beside the people).

use chrono::Utc;
use kb_domain::{VaultName, VaultRole};
use kb_storage::accounts::vaults::{Granted, NewVault, VaultPlace};
use serde_json::json;

use super::people::{open, person_name, shown};
use crate::cli::VaultsAction;
use crate::failure::CliError;
use crate::output::{Format, print_json, print_text};

/// `kb vaults add|list|grant|ungrant|remove`.
pub async fn run(action: VaultsAction, format: Format) -> Result<(), CliError> {
    let accounts = open(false).await?;
    let data = kb_server::people::data_dir()?;
    match action {
        VaultsAction::Add { name, path, owner, sync_remote } => {
            let name = VaultName::parse(&name).map_err(|e| CliError::usage(e.to_string()))?;
            let owner = owner.as_deref().map(person_name).transpose()?;
            if sync_remote.as_deref().is_some_and(|r| r.trim().is_empty() || r.contains(char::is_whitespace))
            {
                return Err(CliError::usage(
                    "--sync-remote takes a git remote: a path, ssh://… or https://…",
                ));
            }
            if path.exists() && !path.is_dir() {
                return Err(CliError::usage(format!("{} is not a folder", path.display())));
            }
            std::fs::create_dir_all(&path)
                .map_err(|e| CliError::usage(format!("cannot make {}: {e}", path.display())))?;
            let folder = std::fs::canonicalize(&path)
                .map_err(|e| CliError::usage(format!("cannot find {}: {e}", path.display())))?;
            // One folder is one vault: another name for it would open it to other grants.
            let canonical = |p: std::path::PathBuf| std::fs::canonicalize(&p).unwrap_or(p);
            let people = canonical(data.join("vaults"));
            if folder.starts_with(&people) {
                return Err(CliError::usage(format!(
                    "{} is under {}, where people's own vaults are: it cannot be added again",
                    folder.display(),
                    people.display()
                )));
            }
            for vault in accounts.vaults().await? {
                if vault.place != VaultPlace::Served
                    && canonical(vault.place.resolve(&data, std::path::Path::new(""))) == folder
                {
                    return Err(CliError::usage(format!(
                        "{} is the vault {} already: grant that one instead",
                        folder.display(),
                        vault.name
                    )));
                }
            }
            let vault = NewVault {
                name: &name,
                path: &folder,
                owner: owner.as_ref(),
                sync_remote: sync_remote.as_deref(),
            };
            if !accounts.add_vault(&vault, Utc::now()).await? {
                return Err(CliError::usage(format!(
                    "cannot add {name}: a vault or a person has that name already, or the owner has no account"
                )));
            }
            if format.is_json() {
                return print_json(
                    &json!({"name": name.as_str(), "path": folder, "owner": owner.map(|o| o.to_string())}),
                );
            }
            let whose = match &owner {
                Some(owner) => format!(" {owner}'s own vault (their default from now on)"),
                None => " shared: `kb vaults grant NAME USER reader|editor` lets someone in".to_string(),
            };
            print_text(&format!("{name} is {},{whose}.\n", folder.display()))
        }
        VaultsAction::List => {
            let vaults = accounts.vaults().await?;
            let mut listed = Vec::new();
            for vault in vaults {
                let grants = accounts.grants(&vault.name).await?;
                listed.push((vault, grants));
            }
            if format.is_json() {
                let list: Vec<_> = listed
                    .iter()
                    .map(|(vault, grants)| {
                        let folder = match &vault.place {
                            VaultPlace::Served => None,
                            place => Some(place.resolve(&data, std::path::Path::new(""))),
                        };
                        json!({
                            "name": vault.name,
                            "path": folder,
                            "served": vault.place == VaultPlace::Served,
                            "owner": vault.owner,
                            "sync_remote": vault.sync_remote,
                            "grants": grants.iter().map(|(p, r)| json!({"person": p, "role": r.as_str()})).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                return print_json(&json!({"vaults": list}));
            }
            if listed.is_empty() {
                return print_text("No vaults yet: `kb users add NAME` gives each person their own.\n");
            }
            let mut text = String::new();
            for (vault, grants) in &listed {
                let folder = match &vault.place {
                    VaultPlace::Served => "the vault kb serve is given".to_string(),
                    place => shown(&place.resolve(&data, std::path::Path::new("")).display().to_string()),
                };
                let owner = vault.owner.as_deref().map(|o| format!(", {o}'s own")).unwrap_or_default();
                let grants: Vec<String> = grants.iter().map(|(p, r)| format!("{p} {r}")).collect();
                let grants =
                    if grants.is_empty() { String::new() } else { format!("; {}", grants.join(", ")) };
                text.push_str(&format!("{}  {folder}{owner}{grants}\n", vault.name));
            }
            print_text(&text)
        }
        VaultsAction::Grant { name, user, role } => {
            let role = match VaultRole::parse(&role) {
                Some(role @ (VaultRole::Reader | VaultRole::Editor)) => role,
                _ => return Err(CliError::usage("the role is reader or editor")),
            };
            let user = person_name(&user)?;
            match accounts.grant(&name, user.as_str(), role).await? {
                Granted::Done => {}
                Granted::NoVault => {
                    return Err(CliError::usage(format!("there is no vault named {}", shown(&name))));
                }
                Granted::NoPerson => {
                    return Err(CliError::usage(format!("there is no account named {user}")));
                }
                Granted::Owner => {
                    return Err(CliError::usage(format!(
                        "{} is {user}'s own vault: they are its editor",
                        shown(&name)
                    )));
                }
            }
            if format.is_json() {
                return print_json(&json!({"vault": name, "person": user.as_str(), "role": role.as_str()}));
            }
            let article = if role == VaultRole::Editor { "an" } else { "a" };
            print_text(&format!("{user} is {article} {role} of {name} from their next request on.\n"))
        }
        VaultsAction::Ungrant { name, user } => {
            let user = person_name(&user)?;
            if !accounts.ungrant(&name, user.as_str()).await? {
                return Err(CliError::usage(format!("{user} has no grant in {}", shown(&name))));
            }
            if format.is_json() {
                return print_json(&json!({"vault": name, "person": user.as_str(), "role": null}));
            }
            print_text(&format!("{user} can no longer use {name}, from their next request on.\n"))
        }
        VaultsAction::Remove { name } => {
            if !accounts.remove_vault(&name).await? {
                return Err(CliError::usage(format!("there is no vault named {}", shown(&name))));
            }
            if format.is_json() {
                return print_json(&json!({"removed": name}));
            }
            print_text(&format!("{name} is forgotten, with its grants; its files are as they were.\n"))
        }
    }
}
