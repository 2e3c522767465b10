//! Why a server did not start, as a value that whoever started it can read.
//!
//! The one-line `servelab: error: ...` on stderr is for people; its wording
//! changes (clap's messages, a better hint), so a program must not sort
//! failures by it. A program that starts `servelab serve` (the lab does) sets
//! [`REPORT_ENV`] to a file path; when `servelab serve` ends with an error
//! (a flag error included; almost always at start), the binary writes one
//! [`StartFailure`] there as JSON, and still prints the same human line and
//! exits with status 2. Nothing is written when it ends well.
//!
//! An environment variable, not a flag: it reaches the binary even when the
//! flags themselves are the failure (an unknown flag stops clap before any flag
//! is read), and a command that is not servelab (a peer server, `sh -c`) just
//! ignores it where a flag it does not know would stop it. A file, not a line
//! on stderr: nothing else writes there, so nothing needs telling apart.

use std::error::Error;
use std::io::{self, Read};
use std::path::Path;

use crate::error::{Chain, ServerError};

/// The variable that names the file a failed start is reported in.
pub const REPORT_ENV: &str = "SERVELAB_START_REPORT";

/// The largest report [`StartFailure::read`] accepts (a message is one line).
const MAX_REPORT: u64 = 64 * 1024;

/// What kind of failure stopped a server from starting.
///
/// Read by other programs and other versions: a kind a reader does not know
/// reads as [`StartFailureKind::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartFailureKind {
    /// A flag this build does not have.
    UnknownFlag,
    /// An `--engine` this build does not have.
    UnknownEngine,
    /// A flag with a value out of range, missing, or in conflict with another.
    BadFlag,
    /// The root does not exist.
    RootMissing,
    /// The root exists but is not a directory.
    RootNotDir,
    /// Another socket listens on the address.
    AddressInUse,
    /// The system refused (a port below 1024, an unreadable root or log).
    PermissionDenied,
    /// The address could not be bound for another reason (not a local address).
    CannotBind,
    /// The access log could not be opened.
    AccessLog,
    /// The `--auth` file cannot be read or is not safe to use.
    Auth,
    /// A configuration value the flags accept but the server does not.
    BadConfig,
    /// A system call failed while setting up (threads, pipes, signals).
    System,
    /// Anything else, and any kind that a newer server reports.
    #[serde(other)]
    Other,
}

/// A failed start: its kind, and the one line that was printed for people.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StartFailure {
    /// What kind of failure.
    pub kind: StartFailureKind,
    /// The error as printed after `servelab: error: `.
    pub message: String,
}

impl StartFailure {
    /// The failure for an error of `servelab serve`: the kind from the
    /// [`ServerError`] in its chain, if any, the message from the whole chain.
    pub fn of_error(err: &(dyn Error + 'static)) -> StartFailure {
        let mut next = Some(err);
        let mut kind = StartFailureKind::Other;
        while let Some(e) = next {
            if let Some(server) = e.downcast_ref::<ServerError>() {
                kind = kind_of(server);
                break;
            }
            next = e.source();
        }
        StartFailure {
            kind,
            message: Chain(err).to_string(),
        }
    }

    /// The failure for a flag error of clap's, with the `message` printed.
    pub fn of_flag_error(err: &clap::Error, message: String) -> StartFailure {
        use clap::error::{ContextKind, ContextValue, ErrorKind};
        let kind = match err.kind() {
            ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand => {
                StartFailureKind::UnknownFlag
            }
            ErrorKind::InvalidValue | ErrorKind::ValueValidation
                if matches!(err.get(ContextKind::InvalidArg),
                    Some(ContextValue::String(arg)) if arg.starts_with("--engine")) =>
            {
                StartFailureKind::UnknownEngine
            }
            _ => StartFailureKind::BadFlag,
        };
        StartFailure { kind, message }
    }

    /// Writes the failure to the file that [`REPORT_ENV`] names, if it is set.
    /// The human line is printed either way, so a report that cannot be
    /// written is left out rather than said twice.
    pub fn report_if_asked(&self) {
        let Some(path) = std::env::var_os(REPORT_ENV).filter(|p| !p.is_empty()) else {
            return;
        };
        if let Ok(json) = serde_json::to_vec(self) {
            let _ = std::fs::write(path, json);
        }
    }

    /// Reads a report written by [`StartFailure::report_if_asked`]: `None`
    /// when there is none (the program is not servelab, or an older build),
    /// an error when it is unreadable, too large or not a report.
    pub fn read(path: &Path) -> io::Result<Option<StartFailure>> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut text = Vec::new();
        file.take(MAX_REPORT + 1).read_to_end(&mut text)?;
        if text.len() as u64 > MAX_REPORT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {MAX_REPORT} bytes"),
            ));
        }
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// The kind of a server's own error.
fn kind_of(err: &ServerError) -> StartFailureKind {
    let denied = |e: &io::Error| e.kind() == io::ErrorKind::PermissionDenied;
    match err {
        ServerError::Root { source, .. } if denied(source) => StartFailureKind::PermissionDenied,
        ServerError::Root { .. } => StartFailureKind::RootMissing,
        ServerError::RootNotDir(_) => StartFailureKind::RootNotDir,
        ServerError::AddrInUse(_) => StartFailureKind::AddressInUse,
        ServerError::Bind { source, .. } if denied(source) => StartFailureKind::PermissionDenied,
        ServerError::Bind { .. } => StartFailureKind::CannotBind,
        ServerError::Log { source, .. } if denied(source) => StartFailureKind::PermissionDenied,
        ServerError::Log { .. } => StartFailureKind::AccessLog,
        ServerError::Auth { .. } => StartFailureKind::Auth,
        ServerError::Config(_) | ServerError::Tls(_) => StartFailureKind::BadConfig,
        ServerError::Io { .. } | ServerError::NoOpenat2 { .. } => StartFailureKind::System,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_anywhere_in_the_chain_gives_the_kind() {
        #[derive(Debug, thiserror::Error)]
        #[error("starting")]
        struct Outer(#[source] ServerError);
        let inner = ServerError::bind(
            "127.0.0.1:80".parse().unwrap(),
            io::Error::from_raw_os_error(libc::EACCES),
        );
        let f = StartFailure::of_error(&Outer(inner));
        assert_eq!(f.kind, StartFailureKind::PermissionDenied);
        assert!(f.message.starts_with("starting: cannot listen on"), "{f:?}");
        let f = StartFailure::of_error(&io::Error::other("no site"));
        assert_eq!(f.kind, StartFailureKind::Other);
    }

    #[test]
    fn flag_errors_are_sorted_by_clap_kind_not_wording() {
        let kind = |line: &str| {
            let err = crate::args::ServeArgs::try_parse_from(line.split_whitespace()).unwrap_err();
            StartFailure::of_flag_error(&err, String::new()).kind
        };
        assert_eq!(kind("--no-such-flag"), StartFailureKind::UnknownFlag);
        assert_eq!(kind("--engine nginx"), StartFailureKind::UnknownEngine);
        assert_eq!(kind("--workers many"), StartFailureKind::BadFlag);
    }

    #[test]
    fn a_report_round_trips_and_unknown_kinds_read_as_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        assert_eq!(StartFailure::read(&path).unwrap(), None);
        let f = StartFailure {
            kind: StartFailureKind::AddressInUse,
            message: "cannot listen".into(),
        };
        std::fs::write(&path, serde_json::to_vec(&f).unwrap()).unwrap();
        assert_eq!(StartFailure::read(&path).unwrap(), Some(f));
        std::fs::write(&path, r#"{"kind":"cosmic_ray","message":"m"}"#).unwrap();
        assert_eq!(
            StartFailure::read(&path).unwrap().unwrap().kind,
            StartFailureKind::Other
        );
        std::fs::write(&path, "not json").unwrap();
        assert!(StartFailure::read(&path).is_err());
    }
}
