//! Why a run never reached its target: the last failed connect of a run in
//! which no connect succeeded, said the way a user can act on it.
//!
//! The usual first mistake with a load generator is a port where nothing
//! listens. wrk says "Connection refused" at once; a report full of zeros and a
//! line of error classes says nothing a newcomer can act on. So a run that
//! never connected carries a [`ConnectFailure`], the CLI prints it as its one
//! error line (`connection refused to 127.0.0.1:1: is a server listening?`),
//! and the run stops within about a second ([`NEVER_CONNECTED`]).
//!
//! For an `https://` target a connection is made when its TLS handshake
//! completes, so a handshake that fails on every try is such a failure too, of
//! kind `tls`: `TLS handshake with 127.0.0.1:8443 (localhost) failed: invalid
//! peer certificate: UnknownIssuer: the certificate's issuer is not trusted:
//! pass --cacert FILE ..., or --insecure ...`.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use rustix::io::Errno;
use serde::{Deserialize, Serialize};

use crate::handshake_failure::HandshakeFailureKind;

/// A run in which no connect has succeeded and at least one has failed stops
/// this long after its start: long enough for a few connects per connection
/// (the backoff starts at 10 ms and doubles) and for a server that is still
/// starting, short enough to be "at once" for a person at a terminal.
pub const NEVER_CONNECTED: Duration = Duration::from_secs(1);

/// What kind of failure the last connect was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectFailureKind {
    /// `ECONNREFUSED`: nothing listens on the port.
    Refused,
    /// `ENETUNREACH` or `EHOSTUNREACH`: no route to the address.
    Unreachable,
    /// `ETIMEDOUT`: the kernel gave up waiting for the handshake.
    TimedOut,
    /// Anything else (out of ports or file descriptors, ...); `os_error` says.
    Other,
    /// The TCP connect succeeded, the TLS handshake did not; `tls` says why.
    Tls,
}

/// The last failed connect of a run in which no connect succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConnectFailure {
    /// The address that refused (`127.0.0.1:8080`, `[::1]:8080`).
    pub addr: String,
    /// The kind of failure.
    pub kind: ConnectFailureKind,
    /// The OS error number (`errno`); `null` for a TLS failure.
    pub os_error: Option<i32>,
    /// A TLS failure: its kind.
    pub tls: Option<HandshakeFailureKind>,
    /// A TLS failure: what rustls reported, and the server name it checked.
    pub detail: Option<String>,
}

impl ConnectFailure {
    pub(crate) fn new(addr: SocketAddr, errno: Errno) -> ConnectFailure {
        let kind = if errno == Errno::CONNREFUSED {
            ConnectFailureKind::Refused
        } else if errno == Errno::NETUNREACH || errno == Errno::HOSTUNREACH {
            ConnectFailureKind::Unreachable
        } else if errno == Errno::TIMEDOUT {
            ConnectFailureKind::TimedOut
        } else {
            ConnectFailureKind::Other
        };
        ConnectFailure {
            addr: addr.to_string(),
            kind,
            os_error: Some(errno.raw_os_error()),
            tls: None,
            detail: None,
        }
    }

    /// A TLS handshake with `addr` that failed with `kind`; `detail` says
    /// what rustls reported.
    pub(crate) fn tls(
        addr: SocketAddr,
        kind: HandshakeFailureKind,
        detail: String,
    ) -> ConnectFailure {
        ConnectFailure {
            addr: addr.to_string(),
            kind: ConnectFailureKind::Tls,
            os_error: None,
            tls: Some(kind),
            detail: Some(detail),
        }
    }
}

/// One sentence that says what happened and what to check.
impl fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addr = &self.addr;
        match self.kind {
            ConnectFailureKind::Refused => {
                write!(f, "connection refused to {addr}: is a server listening?")
            }
            ConnectFailureKind::Unreachable => write!(
                f,
                "{addr} is unreachable (no route to its network or host): check the address"
            ),
            ConnectFailureKind::TimedOut => write!(
                f,
                "connection to {addr} timed out: is the host up, and is the port open?"
            ),
            ConnectFailureKind::Other => write!(
                f,
                "cannot connect to {addr}: {}",
                std::io::Error::from_raw_os_error(self.os_error.unwrap_or(0))
            ),
            ConnectFailureKind::Tls => {
                let kind = self.tls.unwrap_or(HandshakeFailureKind::Other);
                let detail = self.detail.as_deref().unwrap_or("no detail");
                write!(
                    f,
                    "TLS handshake with {addr} failed ({detail}): {}",
                    kind.advice()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_says_what_to_check() {
        let a: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let say = |e| ConnectFailure::new(a, e).to_string();
        assert_eq!(
            say(Errno::CONNREFUSED),
            "connection refused to 127.0.0.1:1: is a server listening?"
        );
        assert!(say(Errno::HOSTUNREACH).contains("unreachable"));
        assert!(say(Errno::TIMEDOUT).contains("timed out"));
        assert!(say(Errno::MFILE).contains("cannot connect to 127.0.0.1:1: "));
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        assert!(
            ConnectFailure::new(v6, Errno::CONNREFUSED)
                .to_string()
                .contains("[::1]:9")
        );
    }
}
