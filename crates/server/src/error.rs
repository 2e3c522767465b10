//! The errors a server can report to whoever started it.
//!
//! Per-connection trouble (a reset, a timeout, a malformed request) is never an
//! error here: it is answered on the wire, counted and logged, and the server goes
//! on. These are the failures that stop a server from starting or running.

use std::io;
use std::path::PathBuf;

/// Why a server could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The root is missing or not a directory; the server does not start.
    #[error("root {path}: {source}")]
    Root {
        /// The root as configured.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The root exists but is not a directory; the server does not start.
    #[error("root {0} is not a directory")]
    RootNotDir(PathBuf),
    /// The address could not be bound (in use, not local, no permission).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// What the system said.
        source: io::Error,
    },
    /// The access log could not be opened; the server does not start.
    #[error("cannot open access log {path}: {source}")]
    Log {
        /// The log path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// A configuration value is out of range (for example zero workers).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Any other system failure while setting up (threads, pipes, signals).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// What the system said.
        source: io::Error,
    },
}

impl ServerError {
    pub(crate) fn io(context: &'static str) -> impl FnOnce(io::Error) -> ServerError {
        move |source| ServerError::Io { context, source }
    }
}
