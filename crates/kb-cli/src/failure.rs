//! Why a command failed, and the exit code that says so: 1 for a runtime failure (not
//! found, the model down, a database error), 2 for bad usage (a refused path, an invalid
//! argument, update, move or setting), 3 for an action the role does not allow. Every error of the layers below is mapped here, in
//! one place.

use std::fmt;
use std::process::ExitCode;

use kb_core::{ConfigError, CoreError, ErrorCode, ToolFailure, TurnError};
use kb_domain::StoreError;

/// What kind of failure, deciding the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The command ran and something went wrong (exit 1).
    Runtime,
    /// The command was given something it cannot take (exit 2).
    Usage,
    /// Whoever read the output stopped reading (`kb list | head`): a quiet end (exit 0).
    OutputClosed,
    /// The role in the vault does not allow the action; nothing changed (exit 3).
    Forbidden,
}

/// A failed command: printed as `error: message` on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// Runtime or usage.
    pub kind: FailureKind,
    /// What went wrong, for a person.
    pub message: String,
}

impl CliError {
    /// A runtime failure (exit 1).
    pub fn runtime(message: impl Into<String>) -> CliError {
        CliError { kind: FailureKind::Runtime, message: message.into() }
    }

    /// A usage failure (exit 2).
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError { kind: FailureKind::Usage, message: message.into() }
    }

    /// The process exit code.
    pub fn exit_code(&self) -> ExitCode {
        match self.kind {
            FailureKind::Runtime => ExitCode::from(1),
            FailureKind::Usage => ExitCode::from(2),
            FailureKind::OutputClosed => ExitCode::SUCCESS,
            FailureKind::Forbidden => ExitCode::from(3),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl From<ToolFailure> for CliError {
    fn from(failure: ToolFailure) -> CliError {
        match failure.code {
            ErrorCode::InvalidArguments
            | ErrorCode::InvalidPath
            | ErrorCode::InvalidUpdate
            | ErrorCode::InvalidMove
            | ErrorCode::LinkRefused
            | ErrorCode::UnreadableFile => CliError::usage(failure.message),
            ErrorCode::ForbiddenRole => CliError { kind: FailureKind::Forbidden, message: failure.message },
            _ => CliError::runtime(failure.message),
        }
    }
}

impl From<ConfigError> for CliError {
    fn from(error: ConfigError) -> CliError {
        CliError::usage(error.to_string())
    }
}

impl From<CoreError> for CliError {
    fn from(error: CoreError) -> CliError {
        match error {
            CoreError::Config(config) => config.into(),
            other => CliError::runtime(kb_domain::Chain(&other).to_string()),
        }
    }
}

impl From<StoreError> for CliError {
    /// What failed and why, down to the system's reason ("cannot make …: Permission
    /// denied").
    fn from(error: StoreError) -> CliError {
        CliError::runtime(kb_domain::Chain(&error).to_string())
    }
}

impl From<TurnError> for CliError {
    fn from(error: TurnError) -> CliError {
        match error {
            TurnError::EmptyMessage | TurnError::MessageTooLong(_) => CliError::usage(error.to_string()),
            other => CliError::runtime(other.to_string()),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(error: std::io::Error) -> CliError {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            return CliError { kind: FailureKind::OutputClosed, message: String::new() };
        }
        CliError::runtime(error.to_string())
    }
}

impl From<serde_json::Error> for CliError {
    fn from(error: serde_json::Error) -> CliError {
        if let Some(kind) = error.io_error_kind() {
            return std::io::Error::from(kind).into();
        }
        CliError::runtime(format!("cannot write JSON: {error}"))
    }
}

impl From<anyhow::Error> for CliError {
    fn from(error: anyhow::Error) -> CliError {
        CliError::runtime(format!("{error:#}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: ErrorCode) -> CliError {
        ToolFailure::new(code, "m").into()
    }

    #[test]
    fn refused_paths_and_bad_arguments_are_usage_errors() {
        assert_eq!(failure(ErrorCode::InvalidPath).kind, FailureKind::Usage);
        assert_eq!(failure(ErrorCode::InvalidArguments).kind, FailureKind::Usage);
        assert_eq!(failure(ErrorCode::InvalidUpdate).kind, FailureKind::Usage);
        assert_eq!(failure(ErrorCode::InvalidMove).kind, FailureKind::Usage);
        let refused = failure(ErrorCode::ForbiddenRole);
        assert_eq!(refused.exit_code(), ExitCode::from(3));
    }

    #[test]
    fn a_failed_start_says_what_failed_and_why() {
        let outside = kb_domain::RepositoryError::OutsideVault("people/x.md".to_string());
        let error = CliError::from(CoreError::Vault(outside));
        assert_eq!(error.kind, FailureKind::Runtime);
        assert_eq!(error.message, "cannot open the vault: path people/x.md leads outside the vault");
    }

    #[test]
    fn missing_entries_and_internal_faults_are_runtime_errors() {
        assert_eq!(failure(ErrorCode::NotFound).kind, FailureKind::Runtime);
        assert_eq!(failure(ErrorCode::ClassificationFailed).kind, FailureKind::Runtime);
        assert_eq!(failure(ErrorCode::Internal).kind, FailureKind::Runtime);
    }
}
