//! The people one kb serves and what each may do: a [`PersonName`] (checked), the
//! [`VaultRole`] a person has in a vault, and [`LOCAL_PERSON`], who the CLI, `kb mcp` and the
//! owner socket act as (whoever can read the vault's files can read the vault).

use std::fmt;

/// The person the local ways in (the CLI, `kb mcp` over stdio, the owner socket) act as.
pub const LOCAL_PERSON: &str = "local";

/// A person's name in kb: 1 to 32 lowercase ASCII letters, digits, `-` and `_`, starting
/// with a letter; never [`LOCAL_PERSON`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PersonName(String);

/// Why a person's name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} cannot name a person: {reason}")]
pub struct InvalidPersonName {
    /// The name given.
    pub name: String,
    /// Why not, in words.
    pub reason: &'static str,
}

impl PersonName {
    /// The longest name.
    pub const MAX_LEN: usize = 32;

    /// Checks `name` (case is folded: `Ana` is `ana`).
    pub fn parse(name: &str) -> Result<PersonName, InvalidPersonName> {
        let folded = name.trim().to_ascii_lowercase();
        let refuse = |reason| Err(InvalidPersonName { name: name.to_string(), reason });
        if folded.is_empty() || folded.len() > Self::MAX_LEN {
            return refuse("it must be 1 to 32 characters");
        }
        if !folded.starts_with(|c: char| c.is_ascii_lowercase()) {
            return refuse("it must start with a letter");
        }
        if !folded.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_') {
            return refuse("it may hold only letters, digits, '-' and '_'");
        }
        if folded == LOCAL_PERSON {
            return refuse("\"local\" is who the CLI and kb mcp act as");
        }
        Ok(PersonName(folded))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PersonName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A vault's name on a kb server, as `Kb-Vault` names it: the rules of a [`PersonName`]
/// (a person's own vault is named after them).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VaultName(String);

impl VaultName {
    /// Checks `name` as [`PersonName::parse`] does.
    pub fn parse(name: &str) -> Result<VaultName, InvalidPersonName> {
        PersonName::parse(name).map(|person| VaultName(person.0))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for VaultName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a person may do in a vault. Ordered: each role may do what the ones before it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum VaultRole {
    /// Searches, reads, lists, chats and gets digests.
    Reader,
    /// Also changes entries.
    Editor,
    /// Also manages people and vaults.
    Admin,
}

impl VaultRole {
    /// The role's name, as grants and answers write it.
    pub fn as_str(self) -> &'static str {
        match self {
            VaultRole::Reader => "reader",
            VaultRole::Editor => "editor",
            VaultRole::Admin => "admin",
        }
    }

    /// The role named `name` (`reader`, `editor`, `admin`).
    pub fn parse(name: &str) -> Option<VaultRole> {
        match name.trim().to_ascii_lowercase().as_str() {
            "reader" => Some(VaultRole::Reader),
            "editor" => Some(VaultRole::Editor),
            "admin" => Some(VaultRole::Admin),
            _ => None,
        }
    }

    /// Whether this role may do what `needed` may.
    pub fn allows(self, needed: VaultRole) -> bool {
        self >= needed
    }
}

impl fmt::Display for VaultRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who asks kb for something: a person with their role in the vault, or the local owner
/// (the CLI, `kb mcp`, the owner socket, and any kb without accounts), who may do anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// The person; `None` for the local owner.
    person: Option<PersonName>,
    /// What they may do here.
    role: VaultRole,
}

impl Actor {
    /// The local owner.
    pub fn local() -> Actor {
        Actor { person: None, role: VaultRole::Admin }
    }

    /// `person`, with `role` in the vault asked.
    pub fn person(person: PersonName, role: VaultRole) -> Actor {
        Actor { person: Some(person), role }
    }

    /// The person's name; `None` for the local owner.
    pub fn name(&self) -> Option<&str> {
        self.person.as_ref().map(PersonName::as_str)
    }

    /// What they may do here.
    pub fn role(&self) -> VaultRole {
        self.role
    }

    /// Whether what belongs to `owner` (`None`: the local owner's) is theirs to see: the
    /// local owner sees everything, a person only their own.
    pub fn sees(&self, owner: Option<&str>) -> bool {
        match self.name() {
            None => true,
            Some(name) => owner == Some(name),
        }
    }
}

impl Default for Actor {
    fn default() -> Actor {
        Actor::local()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_local_is_taken() {
        assert_eq!(PersonName::parse(" Ana ").unwrap().as_str(), "ana");
        assert_eq!(PersonName::parse("bo-2_x").unwrap().to_string(), "bo-2_x");
        for bad in ["", "2ana", "ana smith", "an/a", "local", "LOCAL", "ä", &"a".repeat(33)] {
            assert!(PersonName::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn roles_include_the_ones_below() {
        assert!(VaultRole::Admin.allows(VaultRole::Editor) && VaultRole::Editor.allows(VaultRole::Reader));
        assert!(!VaultRole::Reader.allows(VaultRole::Editor) && !VaultRole::Editor.allows(VaultRole::Admin));
        for role in [VaultRole::Reader, VaultRole::Editor, VaultRole::Admin] {
            assert_eq!(VaultRole::parse(role.as_str()), Some(role));
        }
        assert_eq!(VaultRole::parse("owner"), None);
    }
}
