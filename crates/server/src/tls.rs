//! HTTPS: a TLS layer beneath [`crate::conn::Conn`], which only ever sees
//! plaintext.
//!
//! rustls's sans-I/O `ServerConnection` sits between the socket and `Conn`:
//! a driver that would `recv` into [`crate::conn::Conn::read_space`] or send
//! what [`crate::conn::Conn::next_write`] offers calls `Wire::recv` and
//! `Wire::send` instead, which for a TLS connection move ciphertext on the
//! socket and plaintext to and from `Conn`. The drivers keep their own way of
//! waiting (a blocking syscall with a socket timeout, an epoll edge, a tokio
//! readiness); the wire keeps their contract: a read returns fewer bytes than
//! asked only when the socket had no more, and `Event::Wrote(n)` still means
//! `n` bytes are on their way to the client.
//!
//! So the handshake is driven by whatever waits for a request head: it counts
//! against `--read-timeout` (the head's deadline runs from the connection's
//! start), and on the event-driven engines a connection mid-handshake is one
//! more socket waiting for an edge, holding no worker.
//!
//! Layout:
//! - [`config`]: the rustls server configuration from `--tls-cert` and
//!   `--tls-key` (PEM, with the chain) or `--tls-self-signed` (and the
//!   certificate written for clients by `--tls-self-signed-cert`), the
//!   server's cipher-suite order, and the certificate's SHA-256 fingerprint;
//! - the transport itself, plain or TLS, is `driver::wire`: it is the
//!   drivers' (it sends through their policy), and this module stays below
//!   the configuration that names a certificate source.
//!
//! Not used: kernel TLS (`TCP_ULP` "tls", which would let `sendfile` carry
//! encrypted file bodies). A file body over TLS is read and encrypted in
//! bounded chunks in user space instead (see `driver::wire`).

pub(crate) mod config;

pub(crate) use config::Tls;
pub use config::TlsSource;
