//! The configuration of an [`crate::Assistant`]: where the vault and database are, which
//! model to use, and the chat settings; read from the environment (the `KB_*` variables)
//! or built in code.

mod intake;
mod mail;

pub use intake::IntakeConfig;
pub use mail::MailConfig;

use std::path::PathBuf;

use kb_domain::schedule::Schedule;
use kb_llm::openai::{EmbeddingSettings, OpenAiSettings};

pub use crate::outreach::{EmailConfig, OutreachConfig, WebhookConfig};

/// Which model answers.
#[derive(Debug, Clone)]
pub enum ModelChoice {
    /// The built-in offline model (deterministic rules, no network).
    Offline,
    /// An OpenAI-compatible server.
    OpenAi(OpenAiSettings),
}

/// Whether kb also commits its changes to git (`KB_GIT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GitMode {
    /// Git is left alone (`off`, the default).
    #[default]
    Off,
    /// Each change kb makes is also committed to the git work tree the vault is in,
    /// staging only the paths kb changed (`commit`).
    Commit,
}

/// Everything an assistant needs to start.
#[derive(Debug, Clone)]
pub struct Config {
    /// The vault folder (`KB_DIR`, `--kb-dir`; default `kb`).
    pub kb_dir: PathBuf,
    /// The conversation database (`DATABASE_URL`; default `sqlite://{kb_dir}/.kb/kb.sqlite`).
    pub database_url: Option<String>,
    /// The model.
    pub model: ModelChoice,
    /// Captures below this confidence go to the inbox (`KB_CONFIDENCE_THRESHOLD`, 0.6).
    pub threshold: f64,
    /// Tool rounds per chat turn (`KB_MAX_TOOL_ROUNDS`, 5).
    pub max_tool_rounds: usize,
    /// Recent messages sent with each turn (`KB_HISTORY_WINDOW`, 20).
    pub conversation_window: usize,
    /// The person's time zone, for the prompt (`KB_TIMEZONE`).
    pub time_zone: Option<String>,
    /// Whether to follow edits made outside kb while it runs (on for servers and the REPL).
    pub watch: bool,
    /// Whether the entries will be needed at once (a list, a digest, a change): their
    /// saved catalogue then loads while the search index opens. A process that follows
    /// the vault (`watch`) always does; a one-shot search need not.
    pub entries_needed: bool,
    /// Whether the search index opens at start (`true`). A one-shot command that only
    /// reads entries (a list, an entry, a digest) sets `false`: the index then opens only
    /// if it searches after all. A process that follows the vault (`watch`) always opens it.
    pub search_needed: bool,
    /// Whether each change is also committed to git (`KB_GIT`, `off`).
    pub git: GitMode,
    /// The language search stems words in (`KB_LANGUAGE`, `english`).
    pub search_language: kb_search::SearchLanguage,
    /// Files and folders of the vault kb leaves out, as `.gitignore` patterns
    /// (`KB_EXCLUDE`, comma-separated), beside what the vault's `.gitignore` and
    /// `.kbignore` ignore.
    pub exclude: Vec<String>,
    /// Scheduled digests, nudges and where digests are sent.
    pub outreach: OutreachConfig,
    /// The embedding model search by meaning uses (`KB_EMBEDDINGS_*`; none: keyword
    /// search only).
    pub embeddings: Option<EmbeddingSettings>,
    /// Sync through git (`KB_SYNC_REMOTE`; none: the vault stays on this device).
    pub sync: Option<SyncConfig>,
    /// With sync on, the one device that sends scheduled digests and nudges
    /// (`KB_OUTREACH_DEVICE`; unset: none does).
    pub outreach_device: Option<String>,
    /// What kb takes in besides typed text: links' pages, files, mail, voice.
    pub intake: IntakeConfig,
}

/// How the vault syncs through git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncConfig {
    /// The remote (`KB_SYNC_REMOTE`): a path, `ssh://…`, `https://…` (never with a password).
    pub remote: String,
    /// How long a long-running process waits between rounds (`KB_SYNC_INTERVAL`, 60 s).
    pub interval: std::time::Duration,
    /// This device's name (`KB_DEVICE`; default: the host name).
    pub device: String,
    /// The longest a fetch or a push may take (`KB_SYNC_TIMEOUT_SECS`, 300).
    pub timeout: std::time::Duration,
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A variable with a value of the wrong kind.
    #[error("{name}={value:?} is not valid: {expected}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A setting that could not be used, and why.
    #[error("{name}: {problem}")]
    Setting {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The model settings are wrong.
    #[error("language model settings: {0}")]
    Model(String),
    /// The embedding settings (`KB_EMBEDDINGS_*`) are wrong.
    #[error("embedding settings: {0}")]
    Embeddings(String),
}

impl Config {
    /// Why this process sends no scheduled digests or nudges, when it does not: with sync
    /// on, only the device `KB_OUTREACH_DEVICE` names sends them, so that several devices
    /// do not send each one.
    pub fn outreach_held_back(&self) -> Option<String> {
        let sync = self.sync.as_ref()?;
        match &self.outreach_device {
            Some(sender) if *sender == sync.device => None,
            Some(sender) => Some(format!(
                "scheduled digests and nudges are sent by the device {sender} (KB_OUTREACH_DEVICE), not by this one ({})",
                sync.device
            )),
            None => Some(format!(
                "with sync on, no device sends scheduled digests and nudges until KB_OUTREACH_DEVICE names one (this one is {})",
                sync.device
            )),
        }
    }

    /// An offline configuration for the vault at `kb_dir`, with every default.
    pub fn offline(kb_dir: impl Into<PathBuf>) -> Config {
        Config {
            kb_dir: kb_dir.into(),
            database_url: None,
            model: ModelChoice::Offline,
            threshold: kb_tools::DEFAULT_THRESHOLD,
            max_tool_rounds: 5,
            conversation_window: 20,
            time_zone: None,
            watch: false,
            entries_needed: false,
            search_needed: true,
            git: GitMode::Off,
            search_language: kb_search::SearchLanguage::default(),
            exclude: Vec::new(),
            outreach: OutreachConfig::default(),
            embeddings: None,
            sync: None,
            outreach_device: None,
            intake: IntakeConfig::default(),
        }
    }

    /// Reads the configuration from the environment; `kb_dir` (a `--kb-dir` flag) wins
    /// over `KB_DIR`.
    pub fn from_env(kb_dir: Option<PathBuf>) -> Result<Config, ConfigError> {
        Config::from_lookup(kb_dir, |name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
    }

    /// Reads the configuration through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(
        kb_dir: Option<PathBuf>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let dir =
            kb_dir.or_else(|| lookup("KB_DIR").map(PathBuf::from)).unwrap_or_else(|| PathBuf::from("kb"));
        let mut config = Config::offline(dir);
        config.database_url = lookup("DATABASE_URL");
        if let Some(zone) = lookup("KB_TIMEZONE") {
            if crate::clock::parse_zone(&zone).is_none() {
                return Err(ConfigError::Invalid {
                    name: "KB_TIMEZONE",
                    value: zone,
                    expected: "an IANA time zone name like Europe/Paris or America/New_York",
                });
            }
            config.time_zone = Some(zone);
        }
        if let Some(value) = lookup("KB_CONFIDENCE_THRESHOLD") {
            config.threshold = value.trim().parse::<f64>().ok().filter(|t| (0.0..=1.0).contains(t)).ok_or(
                ConfigError::Invalid {
                    name: "KB_CONFIDENCE_THRESHOLD",
                    value,
                    expected: "a number from 0 to 1",
                },
            )?;
        }
        if let Some(value) = lookup("KB_LANGUAGE") {
            config.search_language = value.parse().map_err(|_| ConfigError::Invalid {
                name: "KB_LANGUAGE",
                value,
                expected: "a language search can stem: arabic, danish, dutch, english, finnish, french, german, \
                           greek, hungarian, italian, norwegian, portuguese, romanian, russian, spanish, swedish, \
                           tamil or turkish",
            })?;
        }
        if let Some(value) = lookup("KB_GIT") {
            config.git = match value.trim() {
                "off" => GitMode::Off,
                "commit" => GitMode::Commit,
                _ => return Err(ConfigError::Invalid { name: "KB_GIT", value, expected: "off or commit" }),
            };
        }
        if let Some(value) = lookup("KB_EXCLUDE") {
            config.exclude =
                value.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::to_string).collect();
        }
        config.outreach = outreach(&lookup)?;
        config.sync = sync(&lookup)?;
        config.outreach_device = lookup("KB_OUTREACH_DEVICE").map(|d| d.trim().to_string());
        config.intake = IntakeConfig::from_lookup(&lookup)?;
        if config.intake.mail.as_ref().is_some_and(|mail| mail.reply) && config.outreach.email.is_none() {
            return Err(ConfigError::Invalid {
                name: "KB_MAIL_REPLY",
                value: lookup("KB_MAIL_REPLY").unwrap_or_default(),
                expected: "set only with KB_SMTP_URL (and KB_EMAIL_FROM), which the replies are sent through",
            });
        }
        if config.sync.is_some() {
            // Every change is a commit, so the next round has it to send.
            config.git = GitMode::Commit;
        }
        config.max_tool_rounds = count(&lookup, "KB_MAX_TOOL_ROUNDS", config.max_tool_rounds)?;
        config.conversation_window = count(&lookup, "KB_HISTORY_WINDOW", config.conversation_window)?;
        config.embeddings =
            EmbeddingSettings::from_lookup(&lookup).map_err(|e| ConfigError::Embeddings(e.to_string()))?;
        let settings = OpenAiSettings::from_lookup(&lookup).map_err(|e| ConfigError::Model(e.to_string()))?;
        if let Some(settings) = settings {
            config.model = ModelChoice::OpenAi(settings);
        }
        Ok(config)
    }

    /// The database URL in use.
    pub fn database_url(&self) -> String {
        self.database_url
            .clone()
            .unwrap_or_else(|| format!("sqlite://{}", self.kb_dir.join(".kb").join("kb.sqlite").display()))
    }

    /// The configuration of another vault a kb server serves, at `folder`, syncing with
    /// `sync_remote` when given: the same model and settings, its own database (in its
    /// `.kb/`), no mailbox (mail is filed in the vault `kb serve` is given), and no
    /// digest recipients until the server names them.
    pub fn for_vault(
        &self,
        folder: &std::path::Path,
        sync_remote: Option<&str>,
    ) -> Result<Config, ConfigError> {
        let mut config = self.clone();
        config.kb_dir = folder.to_path_buf();
        config.database_url = None;
        config.intake.mail = None;
        config.outreach.email = None;
        config.outreach.webhook = None;
        config.sync = match sync_remote {
            None => None,
            Some(remote) => {
                kb_storage::sync::check_remote(remote)
                    .map_err(|e| ConfigError::Setting { name: "--sync-remote", problem: e.to_string() })?;
                Some(SyncConfig {
                    remote: remote.to_string(),
                    interval: self.sync.as_ref().map_or(std::time::Duration::from_secs(60), |s| s.interval),
                    device: self.sync.as_ref().map_or_else(host_name, |s| s.device.clone()),
                    timeout: self.sync.as_ref().map_or(std::time::Duration::from_secs(300), |s| s.timeout),
                })
            }
        };
        Ok(config)
    }

    /// What names the database however its URL is spelled: a SQLite file's canonical
    /// path (once the file exists), else the URL itself. Two processes whose identities
    /// are equal share one database.
    pub fn database_identity(&self) -> String {
        let url = self.database_url();
        let file = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"));
        let file = file.map(|rest| rest.split('?').next().unwrap_or(rest));
        match file {
            Some(file) if !file.is_empty() && !file.starts_with(':') => {
                std::fs::canonicalize(file).map(|path| path.display().to_string()).unwrap_or(url)
            }
            _ => url,
        }
    }
}

/// The outreach settings: schedules, the stale-project threshold, email, webhook, retries.
fn outreach(lookup: &impl Fn(&str) -> Option<String>) -> Result<OutreachConfig, ConfigError> {
    let mut outreach = OutreachConfig::default();
    let schedule_error = |name: &'static str, value: String| {
        move |e: kb_domain::schedule::ScheduleError| ConfigError::Invalid { name, value, expected: e.problem }
    };
    if let Some(value) = lookup("KB_DAILY_DIGEST_AT") {
        outreach.daily = Schedule::daily("KB_DAILY_DIGEST_AT", &value)
            .map_err(schedule_error("KB_DAILY_DIGEST_AT", value.clone()))?;
    }
    if let Some(value) = lookup("KB_WEEKLY_REVIEW_AT") {
        outreach.weekly = Schedule::weekly("KB_WEEKLY_REVIEW_AT", &value)
            .map_err(schedule_error("KB_WEEKLY_REVIEW_AT", value.clone()))?;
    }
    let stale = count(lookup, "KB_STALE_DAYS", outreach.nudges.stale_days as usize)?;
    outreach.nudges.stale_days = u32::try_from(stale).unwrap_or(u32::MAX);
    if let Some(smtp_url) = lookup("KB_SMTP_URL") {
        let needed = |name: &'static str| {
            lookup(name).ok_or(ConfigError::Invalid {
                name,
                value: String::new(),
                expected: "set whenever KB_SMTP_URL is (the sender, and the recipients separated by commas)",
            })
        };
        outreach.email =
            Some(EmailConfig { smtp_url, from: needed("KB_EMAIL_FROM")?, to: needed("KB_EMAIL_TO")? });
    }
    if let Some(url) = lookup("KB_WEBHOOK_URL") {
        let format =
            lookup("KB_WEBHOOK_FORMAT").unwrap_or_else(|| "json".to_string()).trim().to_ascii_lowercase();
        if !["json", "ntfy", "slack"].contains(&format.as_str()) {
            return Err(ConfigError::Invalid {
                name: "KB_WEBHOOK_FORMAT",
                value: format,
                expected: "json, ntfy or slack",
            });
        }
        outreach.webhook = Some(WebhookConfig { url, format });
    }
    if let Some(value) = lookup("KB_DELIVERY_BACKOFF_MS") {
        let ms = value.trim().parse::<u64>().ok().ok_or(ConfigError::Invalid {
            name: "KB_DELIVERY_BACKOFF_MS",
            value,
            expected: "a whole number of milliseconds",
        })?;
        outreach.retry.first_wait = std::time::Duration::from_millis(ms);
    }
    Ok(outreach)
}

/// The sync settings, when `KB_SYNC_REMOTE` is set.
fn sync(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<SyncConfig>, ConfigError> {
    let Some(remote) = lookup("KB_SYNC_REMOTE").map(|r| r.trim().to_string()) else { return Ok(None) };
    kb_storage::sync::check_remote(&remote)
        .map_err(|e| ConfigError::Setting { name: "KB_SYNC_REMOTE", problem: e.to_string() })?;
    // A day at most: a longer pause is a mistake, and doubling it after a failure overflows.
    let seconds = count(lookup, "KB_SYNC_INTERVAL", 60)?;
    if seconds > 86_400 {
        return Err(ConfigError::Invalid {
            name: "KB_SYNC_INTERVAL",
            value: seconds.to_string(),
            expected: "a whole number of seconds from 1 to 86400",
        });
    }
    let timeout = count(lookup, "KB_SYNC_TIMEOUT_SECS", 300)?.min(86_400);
    let device = match lookup("KB_DEVICE") {
        Some(device) => device.trim().to_string(),
        None => host_name(),
    };
    Ok(Some(SyncConfig {
        remote,
        interval: std::time::Duration::from_secs(seconds as u64),
        device,
        timeout: std::time::Duration::from_secs(timeout as u64),
    }))
}

/// This machine's host name (`device` when it cannot be read).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "device".to_string())
}

fn count(
    lookup: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: usize,
) -> Result<usize, ConfigError> {
    match lookup(name) {
        None => Ok(default),
        Some(value) => value.trim().parse::<usize>().ok().filter(|n| *n >= 1).ok_or(ConfigError::Invalid {
            name,
            value,
            expected: "a whole number of at least 1",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(None, |name| map.get(name).cloned())
    }

    #[test]
    fn defaults_are_offline_in_kb() {
        let c = config(&[]).unwrap();
        assert!(matches!(c.model, ModelChoice::Offline));
        assert_eq!(c.kb_dir, PathBuf::from("kb"));
        assert_eq!(c.database_url(), "sqlite://kb/.kb/kb.sqlite");
        assert_eq!(c.threshold, 0.6);
    }

    #[test]
    fn one_database_has_one_identity_however_its_url_is_spelled() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("kb.sqlite");
        std::fs::write(&file, "").unwrap();
        let spellings = [
            format!("sqlite://{}", file.display()),
            format!("sqlite:{}?mode=rwc", file.display()),
            format!("sqlite://{}/./kb.sqlite", dir.path().display()),
        ];
        let identities: Vec<String> = spellings
            .iter()
            .map(|url| config(&[("DATABASE_URL", url)]).unwrap().database_identity())
            .collect();
        assert!(identities.iter().all(|i| *i == identities[0]), "{identities:?}");
        let other = dir.path().join("other.sqlite");
        std::fs::write(&other, "").unwrap();
        let url = format!("sqlite://{}", other.display());
        assert_ne!(config(&[("DATABASE_URL", &url)]).unwrap().database_identity(), identities[0]);
        // Not a file: the URL itself.
        let memory = config(&[("DATABASE_URL", "sqlite::memory:")]).unwrap();
        assert_eq!(memory.database_identity(), "sqlite::memory:");
    }

    #[test]
    fn sync_is_read_and_implies_commits() {
        let c = config(&[
            ("KB_SYNC_REMOTE", "/srv/vault.git"),
            ("KB_DEVICE", "laptop"),
            ("KB_SYNC_INTERVAL", "5"),
        ])
        .unwrap();
        let sync = c.sync.unwrap();
        assert_eq!((sync.remote.as_str(), sync.device.as_str()), ("/srv/vault.git", "laptop"));
        assert_eq!(sync.interval, std::time::Duration::from_secs(5));
        assert_eq!(c.git, GitMode::Commit);
        let secret = config(&[("KB_SYNC_REMOTE", "https://me:hunter2@example.com/v.git")]).unwrap_err();
        assert!(!secret.to_string().contains("hunter2"), "{secret}");
        assert!(config(&[("KB_SYNC_REMOTE", "/r.git"), ("KB_SYNC_INTERVAL", "0")]).is_err());
        assert!(!config(&[("KB_SYNC_REMOTE", "/r.git")]).unwrap().sync.unwrap().device.is_empty());
        // With sync on, one device sends the scheduled digests.
        assert_eq!(config(&[]).unwrap().outreach_held_back(), None);
        let on = [("KB_SYNC_REMOTE", "/r.git"), ("KB_DEVICE", "laptop")];
        assert!(config(&on).unwrap().outreach_held_back().unwrap().contains("KB_OUTREACH_DEVICE"));
        let here = [on[0], on[1], ("KB_OUTREACH_DEVICE", "laptop")];
        assert_eq!(config(&here).unwrap().outreach_held_back(), None);
        let there = [on[0], on[1], ("KB_OUTREACH_DEVICE", "nas")];
        assert!(config(&there).unwrap().outreach_held_back().unwrap().contains("nas"));
    }

    #[test]
    fn variables_are_read_and_checked() {
        let c =
            config(&[("KB_DIR", "/tmp/v"), ("KB_CONFIDENCE_THRESHOLD", "0.8"), ("KB_MAX_TOOL_ROUNDS", "3")])
                .unwrap();
        assert_eq!(c.kb_dir, PathBuf::from("/tmp/v"));
        assert_eq!(c.threshold, 0.8);
        assert_eq!(c.max_tool_rounds, 3);
        assert!(config(&[("KB_CONFIDENCE_THRESHOLD", "2")]).is_err());
        assert!(config(&[("KB_MAX_TOOL_ROUNDS", "zero")]).is_err());
        assert_eq!(
            config(&[("KB_TIMEZONE", "Europe/Paris")]).unwrap().time_zone.as_deref(),
            Some("Europe/Paris")
        );
        assert!(config(&[("KB_TIMEZONE", "Mars/Olympus")]).is_err());
        assert_eq!(config(&[]).unwrap().search_language.name(), "english");
        assert_eq!(config(&[("KB_LANGUAGE", "French")]).unwrap().search_language.name(), "french");
        assert!(config(&[("KB_LANGUAGE", "klingon")]).unwrap_err().to_string().contains("KB_LANGUAGE"));
        assert_eq!(config(&[]).unwrap().git, GitMode::Off);
        assert_eq!(config(&[("KB_GIT", "off")]).unwrap().git, GitMode::Off);
        assert_eq!(config(&[("KB_GIT", "commit")]).unwrap().git, GitMode::Commit);
        let bogus = config(&[("KB_GIT", "bogus")]).unwrap_err();
        assert_eq!(bogus.to_string(), r#"KB_GIT="bogus" is not valid: off or commit"#);
        let outreach = config(&[]).unwrap().outreach;
        assert_eq!(outreach.daily.map(|s| s.time.to_string()), Some("07:00:00".into()));
        assert_eq!(outreach.weekly.and_then(|s| s.weekday), Some(chrono::Weekday::Sun));
        assert_eq!((outreach.email, outreach.webhook, outreach.nudges.stale_days), (None, None, 14));
        let off = config(&[("KB_DAILY_DIGEST_AT", "off"), ("KB_WEEKLY_REVIEW_AT", "Off")]).unwrap().outreach;
        assert!(off.schedules().is_empty());
        let set = config(&[("KB_DAILY_DIGEST_AT", "06:30"), ("KB_STALE_DAYS", "21")]).unwrap().outreach;
        assert_eq!(
            (set.daily.map(|s| s.time.to_string()), set.nudges.stale_days),
            (Some("06:30:00".into()), 21)
        );
        assert!(
            config(&[("KB_DAILY_DIGEST_AT", "7am")]).unwrap_err().to_string().contains("KB_DAILY_DIGEST_AT")
        );
        assert!(config(&[("KB_WEEKLY_REVIEW_AT", "16:00")]).is_err());
        let no_to = config(&[("KB_SMTP_URL", "smtp://localhost:25"), ("KB_EMAIL_FROM", "kb@example.org")]);
        assert!(no_to.unwrap_err().to_string().contains("KB_EMAIL_TO"));
        assert!(config(&[("KB_WEBHOOK_URL", "http://x"), ("KB_WEBHOOK_FORMAT", "teams")]).is_err());
        let key = config(&[("OPENAI_API_KEY", "sk-test")]).unwrap();
        assert!(matches!(key.model, ModelChoice::OpenAi(_)));
    }

    #[test]
    fn wrong_embedding_settings_are_named_as_such() {
        let error =
            config(&[("KB_EMBEDDINGS_MODEL", "m"), ("KB_EMBEDDINGS_QUERY_TIMEOUT_MS", "soon")]).unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("embedding settings: ") && text.contains("KB_EMBEDDINGS_QUERY_TIMEOUT_MS"),
            "{text}"
        );
    }
}
