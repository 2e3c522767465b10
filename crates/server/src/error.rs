//! The errors a server can report to whoever started it.
//!
//! Per-connection trouble (a reset, a timeout, a malformed request) is never an
//! error here: it is answered on the wire, counted and logged, and the server goes
//! on. These are the failures that stop a server from starting or running.
//!
//! A variant with an `io::Error` names what was being done in its message and
//! keeps the system's words in [`std::error::Error::source`], never in both:
//! `{:#}` (anyhow's alternate form, which the binary prints) then says each
//! once, "cannot listen on 127.0.0.1:80: Permission denied (os error 13)".

use std::io;
use std::path::PathBuf;

/// Why a server could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The root is missing or not a directory; the server does not start.
    #[error("root {path}")]
    Root {
        /// The root as configured.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The root exists but is not a directory; the server does not start.
    #[error("root {0} is not a directory")]
    RootNotDir(PathBuf),
    /// The kernel cannot open files beneath the root with `openat2(2)` (Linux
    /// 5.6 and later; a seccomp filter may refuse it too). Without it every
    /// request would get 500, so the server does not start.
    #[error(
        "cannot open files beneath {path} with openat2 (Linux 5.6 or later, allowed by any seccomp filter), which keeps every request inside the root"
    )]
    NoOpenat2 {
        /// The root as configured.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// Another socket already listens on the address; the server does not
    /// start. The usual first mistake (a second server, or one still running),
    /// so the message says what to change.
    #[error(
        "cannot listen on {0}: the address is already in use (is another server running there?): choose another port with --port N (0 picks a free one) or another --addr HOST:PORT"
    )]
    AddrInUse(std::net::SocketAddr),
    /// The address could not be bound (not local, no permission).
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// What the system said.
        source: io::Error,
    },
    /// The access log could not be opened; the server does not start.
    #[error("cannot open access log {path}")]
    Log {
        /// The log path.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The `--auth` file cannot be read or is not safe to use (a weak hash, a
    /// malformed line); the server does not start. The message says which
    /// line and why, and the system's words when it could not be read.
    #[error("--auth {path}: {message}")]
    Auth {
        /// The password file.
        path: PathBuf,
        /// What is wrong, and what to do.
        message: String,
    },
    /// The TLS certificate or key cannot be read or used (`--tls-cert`,
    /// `--tls-key`, `--tls-self-signed`); the server does not start. The
    /// message names the file and what is wrong.
    #[error("{0}")]
    Tls(String),
    /// A configuration value is out of range (for example zero workers).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Any other system failure while setting up (threads, pipes, signals).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: &'static str,
        /// What the system said.
        source: io::Error,
    },
}

impl ServerError {
    /// The error for a failed bind of `addr`.
    pub(crate) fn bind(addr: std::net::SocketAddr, source: io::Error) -> ServerError {
        if source.kind() == io::ErrorKind::AddrInUse {
            ServerError::AddrInUse(addr)
        } else {
            ServerError::Bind { addr, source }
        }
    }

    pub(crate) fn io(context: &'static str) -> impl FnOnce(io::Error) -> ServerError {
        move |source| ServerError::Io { context, source }
    }
}

/// Displays an error and its sources joined by `: `, as anyhow's `{:#}` does,
/// for the server's own messages on stderr.
pub(crate) struct Chain<'e>(pub(crate) &'e (dyn std::error::Error + 'static));

impl std::fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut next = self.0.source();
        while let Some(e) = next {
            write!(f, ": {e}")?;
            next = e.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_said_once() {
        let e = ServerError::Bind {
            addr: "127.0.0.1:80".parse().unwrap(),
            source: io::Error::from_raw_os_error(libc::EADDRINUSE),
        };
        let chain = Chain(&e).to_string();
        assert_eq!(chain.matches("os error").count(), 1, "{chain}");
        assert!(
            chain.starts_with("cannot listen on 127.0.0.1:80: "),
            "{chain}"
        );
    }

    #[test]
    fn an_address_in_use_says_what_to_change() {
        let addr = "127.0.0.1:8080".parse().unwrap();
        let e = ServerError::bind(addr, io::Error::from_raw_os_error(libc::EADDRINUSE));
        let chain = Chain(&e).to_string();
        assert!(chain.contains("already in use"), "{chain}");
        assert!(
            chain.contains("--port N") && chain.contains("--addr"),
            "{chain}"
        );
        let e = ServerError::bind(addr, io::Error::from_raw_os_error(libc::EACCES));
        assert!(matches!(e, ServerError::Bind { .. }));
    }
}
