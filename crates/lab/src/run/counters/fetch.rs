//! One `GET` to the point's server, over plain TCP or TLS, read to the close:
//! what the status reader and the drain send. The load generator has its own
//! client; this one is blocking and sends one request per connection
//! (`Connection: close`), which is all these two need.
//!
//! Over TLS it uses the load generator's own client configuration
//! ([`servelab_load::tls_client_config`]) for the point's [`Trust`]. It never
//! resumes a session: a reading every few seconds is not worth a session
//! store, and a full handshake is what the server can least delay.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::ClientConfig;
use rustls::pki_types::ServerName;

use crate::experiment::Trust;

/// How to reach the server: plain TCP, or TLS with this configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wire {
    tls: Option<Arc<ClientConfig>>,
}

impl Wire {
    /// Plain TCP.
    pub(crate) fn plain() -> Wire {
        Wire { tls: None }
    }

    /// TLS trusting `trust`; an unreadable certificate file is an error.
    pub(crate) fn tls(trust: &Trust) -> Result<Wire, String> {
        Ok(Wire {
            tls: Some(client_config(trust)?),
        })
    }

    /// Whether this wire speaks TLS.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// The load generator's own client configuration for this trust, never
/// resuming.
fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, String> {
    servelab_load::tls_client_config(&trust.tls_options(false)).map_err(|e| e.to_string())
}

/// Sends `GET path` to `addr` and returns the whole response (head and body),
/// waiting until `deadline` at most.
pub(crate) fn get(
    wire: &Wire,
    addr: SocketAddr,
    path: &str,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let mut s = TcpStream::connect_timeout(&addr, left).map_err(|e| format!("connect: {e}"))?;
    let _ = s.set_read_timeout(Some(left));
    let _ = s.set_write_timeout(Some(left));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut out = Vec::new();
    match &wire.tls {
        None => {
            s.write_all(req.as_bytes())
                .map_err(|e| format!("send: {e}"))?;
            s.read_to_end(&mut out).map_err(|e| format!("read: {e}"))?;
        }
        Some(config) => {
            // The lab's servers answer on 127.0.0.1 or ::1, and their
            // certificates name both (`--tls-self-signed` does).
            let name = ServerName::IpAddress(addr.ip().into());
            let conn = rustls::ClientConnection::new(Arc::clone(config), name)
                .map_err(|e| format!("TLS: {e}"))?;
            let mut tls = rustls::StreamOwned::new(conn, s);
            tls.write_all(req.as_bytes())
                .and_then(|()| tls.flush())
                .map_err(|e| format!("TLS send: {e}"))?;
            match tls.read_to_end(&mut out) {
                Ok(_) => {}
                // A server that closes without close_notify has still sent
                // its whole answer (Connection: close).
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => {}
                Err(e) => return Err(format!("TLS read: {e}")),
            }
        }
    }
    Ok(out)
}
