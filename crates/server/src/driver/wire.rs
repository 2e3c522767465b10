//! One connection's transport: the socket itself ([`Wire::Plain`]), or a
//! rustls session over it ([`Wire::Tls`]), so that the TLS layer is written
//! once for every driver.
//!
//! Its core does no I/O (rustls is sans-I/O already): [`Wire::unseal`] takes
//! bytes received and gives plaintext (and appends the handshake records to
//! send), [`Wire::seal`] takes plaintext and appends the bytes to send,
//! [`Wire::finish`] appends the `close_notify`. A driver that moves the
//! bytes itself (the ring, [`super::ring`]) calls only these; sending a file
//! is then its own business (the ring reads the range into its send buffer).
//!
//! The readiness drivers call [`Wire::recv`] and [`Wire::send`] where they
//! would call `recv` and `send`/`sendfile`, and [`Wire::end`] before they
//! close: over TLS these are the core plus one socket call each way (`pull`,
//! `push`); plaintext goes straight to the socket ([`policy::send_chunk`]:
//! `send`, or `sendfile` for a file range), so a plain keep-alive request
//! costs what it did. `end` sends the TLS `close_notify`; when the socket has
//! no room for it (the last records filled it and the client is still
//! reading) it answers [`Ending::Pending`], and the driver calls it again
//! once the socket is writable, within [`policy::LINGER`]: a client that
//! reads to the end then sees a clean end, never a truncation alarm.
//!
//! The contract the drivers rely on, kept for TLS:
//! - `recv` returns fewer bytes than asked only when the socket had nothing
//!   more (or its end came): an edge-triggered loop may stop reading then. It
//!   first hands over plaintext rustls still holds, reads ciphertext until it
//!   has plaintext, and answers `EAGAIN` only when the socket is drained. It
//!   waits (a blocking socket) only while it has nothing to return, so a
//!   blocking driver's read timeout bounds the handshake as it bounds a head.
//!   Once it has plaintext, a `recv` of its own that came back short (the
//!   socket drained, as a plain short read says) ends it: it does not ask
//!   the socket again only to hear `EAGAIN`. Over TLS with HTTP/2 (h2load,
//!   50 connections of 10 streams) that probe was every second `recv`, a
//!   tenth of a syscall a request.
//! - `send` returns `n` only once the ciphertext of those `n` plaintext bytes
//!   has gone to the socket. Ciphertext that did not fit stays with the
//!   session, `EAGAIN` is returned, and the next `send` (the driver offers
//!   the same chunk again) finishes it and reports the `n`.
//! - A file chunk is read (`pread`) and encrypted [`RECORD`] bytes at a time:
//!   one TLS record, so memory per connection stays flat whatever the file's
//!   size; `sendfile` cannot carry TLS without kernel TLS.
//!
//! Failures: a ClientHello that is not TLS, or is malformed, gets rustls's
//! alert and the read fails (the connection closes, the server goes on); one
//! that starts like an HTTP method gets a plain `400` saying that the port
//! speaks HTTPS, as nginx does. Both count as failed handshakes, as does a
//! client that closes mid-handshake or runs out of `--read-timeout` in it.

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;
use std::time::Instant;

use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};
use rustls::{HandshakeKind, ServerConfig, ServerConnection};

use super::policy;
use crate::conn::Chunk;
use crate::runtime::shared::Shared;

/// Plaintext taken per `send` over TLS: one full record.
pub(crate) const RECORD: usize = 16 * 1024;

/// The answer to plain HTTP on the TLS port.
const PLAIN_HTTP: &[u8] = b"HTTP/1.1 400 Bad Request\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Content-Length: 48\r\n\
Connection: close\r\n\
\r\n\
This port speaks HTTPS: ask for https:// here.\r\n";

/// How one connection's bytes reach its socket.
#[derive(Debug)]
pub(crate) enum Wire {
    /// Plaintext HTTP: the socket itself.
    Plain,
    /// HTTPS: a rustls session over the socket (boxed: its state is large).
    Tls(Box<Session>),
}

/// What [`Wire::end`] left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Nothing: the socket may close.
    Done,
    /// The `close_notify` waits for room in the socket: call `end` again when
    /// it is writable.
    Pending,
}

/// Where a TLS connection's handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Handshake {
    Pending,
    /// Done; whether it resumed a session.
    Done {
        resumed: bool,
    },
    Failed,
}

/// A TLS connection's state beside its socket.
#[derive(Debug)]
pub(crate) struct Session {
    /// `None` only if rustls refused to make one (it does not for a valid
    /// configuration): the connection then fails at its first read.
    tls: Option<ServerConnection>,
    handshake: Handshake,
    began: Instant,
    /// The first byte the client sent: `0x16` for a TLS handshake record.
    first: Option<u8>,
    /// The socket has ended (a read returned 0).
    eof: bool,
    /// Plaintext bytes of the last chunk already encrypted whose ciphertext
    /// is not all out yet (see the module docs).
    owed: Option<usize>,
    /// A file chunk on its way to rustls; made at the first file body.
    file_buf: Vec<u8>,
    /// The `close_notify` is queued in rustls ([`Wire::end`] began).
    ending: bool,
    /// Readiness side: bytes received, `cipher[cpos..cend]`, not yet taken
    /// by rustls. The buffer keeps its length (one record and a bit, once
    /// sized) between reads: resizing it for each `recv` zeroed 17 KiB a read.
    cipher: Vec<u8>,
    cpos: usize,
    cend: usize,
    /// The last `recv` of this [`Session::recv`] filled less than it was
    /// given: the socket was drained then (see [`Session::pull`]).
    drained: bool,
    /// Readiness side: bytes to send, from `opos`, that the socket has not
    /// taken yet.
    out: Vec<u8>,
    opos: usize,
}

impl Wire {
    /// The transport of a connection just accepted on `site`.
    pub(crate) fn new(site: &Shared) -> Wire {
        match &site.tls {
            None => Wire::Plain,
            Some(tls) => Wire::Tls(Box::new(Session::new(&tls.config))),
        }
    }

    /// What ALPN chose: `Some(true)` for `h2`, `Some(false)` for another
    /// protocol, `None` in plaintext or when the client offered none (or
    /// before the handshake is done).
    pub(crate) fn alpn_h2(&self) -> Option<bool> {
        match self {
            Wire::Plain => None,
            Wire::Tls(s) => s.tls.as_ref()?.alpn_protocol().map(|p| p == b"h2"),
        }
    }

    /// Reads plaintext into `buf` (see the module docs for the contract).
    #[inline]
    pub(crate) fn recv(
        &mut self,
        sock: impl AsFd,
        buf: &mut [u8],
        site: &Shared,
    ) -> rustix::io::Result<usize> {
        match self {
            Wire::Plain => rustix::net::recv(sock, buf, RecvFlags::empty()).map(|(n, _)| n),
            Wire::Tls(s) => s.recv(sock.as_fd(), buf, site),
        }
    }

    /// Sends (part of) `chunk`; returns the plaintext bytes that went out.
    #[inline]
    pub(crate) fn send(
        &mut self,
        sock: impl AsFd,
        chunk: Chunk<'_>,
        file_follows: bool,
    ) -> rustix::io::Result<usize> {
        match self {
            Wire::Plain => policy::send_chunk(sock, chunk, file_follows),
            Wire::Tls(s) => s.send(sock.as_fd(), chunk),
        }
    }

    /// The most a [`Wire::send`] of `chunk` takes: fewer means the socket
    /// was full (an edge-triggered loop then waits for room).
    #[inline]
    pub(crate) fn offered(&self, chunk: &Chunk<'_>) -> usize {
        let len = match chunk {
            Chunk::Bytes(bytes) => bytes.len(),
            Chunk::File { len, .. } => *len,
        };
        match self {
            Wire::Plain => len,
            Wire::Tls(_) => len.min(RECORD),
        }
    }

    /// Before the socket closes: a TLS `close_notify`, so a client reading to
    /// the end sees a clean end. It never waits: [`Ending::Pending`] says the
    /// socket had no room, and the driver calls again once it is writable (or
    /// gives up at its bound and closes). A handshake that began and never
    /// finished (it ran out of `--read-timeout`, or shutdown came) is counted
    /// as failed.
    pub(crate) fn end(&mut self, sock: impl AsFd, site: &Shared) -> Ending {
        match self {
            Wire::Plain => Ending::Done,
            Wire::Tls(s) => s.end(sock.as_fd(), site),
        }
    }

    /// Has no byte come from the client yet? A TLS read answers `EAGAIN`
    /// after taking a ClientHello, so an event loop asks this before it
    /// judges a first read that found nothing (see "Deadlines" in
    /// `driver::policy`). Plaintext keeps no count: true, and the caller's
    /// `EAGAIN` says it.
    pub(crate) fn heard_nothing(&self) -> bool {
        match self {
            Wire::Plain => true,
            Wire::Tls(s) => s.first.is_none(),
        }
    }

    /// `Some(resumed)` once a TLS handshake is done; `None` for plain HTTP
    /// or a handshake not done.
    pub(crate) fn resumed(&self) -> Option<bool> {
        match self {
            Wire::Tls(s) => match s.handshake {
                Handshake::Done { resumed } => Some(resumed),
                _ => None,
            },
            Wire::Plain => None,
        }
    }
}

/// What [`Wire::unseal`] made of the bytes received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unsealed {
    /// This many plaintext bytes are in the space given.
    Plain(usize),
    /// Nothing yet: more bytes from the socket are needed.
    More,
    /// The client's clean end (a TLS `close_notify`).
    End,
}

/// The sans-I/O side of the wire, for a driver that moves the bytes itself
/// (the ring, [`super::ring`]): it hands in what the socket delivered and
/// sends what the wire leaves in `out`. No call here touches a socket.
impl Wire {
    /// Takes received bytes from the front of `input` (advancing it past
    /// what was used) and puts plaintext into `space`. TLS handshake records,
    /// tickets and alerts that answer them are appended to `out`, to be sent.
    /// `Err` when the client's bytes are not (valid) TLS: `out` then holds
    /// rustls's alert, or the plain-HTTP `400`, and the connection closes
    /// once it is sent.
    pub(crate) fn unseal(
        &mut self,
        input: &mut &[u8],
        space: &mut [u8],
        out: &mut Vec<u8>,
        site: &Shared,
    ) -> rustix::io::Result<Unsealed> {
        match self {
            Wire::Plain => {
                let n = input.len().min(space.len());
                space[..n].copy_from_slice(&input[..n]);
                *input = &input[n..];
                Ok(if n == 0 {
                    Unsealed::More
                } else {
                    Unsealed::Plain(n)
                })
            }
            Wire::Tls(s) => s.unseal(input, space, out, site),
        }
    }

    /// Takes plaintext to send: appends its bytes (over TLS, its records) to
    /// `out`, and says how many plaintext bytes it took.
    pub(crate) fn seal(&mut self, plain: &[u8], out: &mut Vec<u8>) -> rustix::io::Result<usize> {
        match self {
            Wire::Plain => {
                out.extend_from_slice(plain);
                Ok(plain.len())
            }
            Wire::Tls(s) => {
                let tls = s.tls.as_mut().ok_or(Errno::PROTO)?;
                let n = tls.writer().write(plain).map_err(|e| errno(&e))?;
                drain(tls, out)?;
                Ok(n)
            }
        }
    }

    /// The sans-I/O [`Wire::end`]: the `close_notify` (appended to `out`) of
    /// a TLS connection whose handshake was done, or a failed handshake
    /// counted. Called once, before the close.
    pub(crate) fn finish(&mut self, out: &mut Vec<u8>, site: &Shared) {
        if let Wire::Tls(s) = self {
            s.finish(out, site);
        }
    }
}

impl Session {
    fn new(config: &Arc<ServerConfig>) -> Session {
        Session {
            tls: ServerConnection::new(config.clone()).ok(),
            handshake: Handshake::Pending,
            began: Instant::now(),
            first: None,
            eof: false,
            owed: None,
            file_buf: Vec::new(),
            ending: false,
            cipher: Vec::new(),
            cpos: 0,
            cend: 0,
            drained: false,
            out: Vec::new(),
            opos: 0,
        }
    }

    fn recv(
        &mut self,
        sock: BorrowedFd<'_>,
        buf: &mut [u8],
        site: &Shared,
    ) -> rustix::io::Result<usize> {
        let mut filled = 0;
        // Only a `recv` of this call tells that the socket is drained: an
        // earlier call's says nothing of what came since (the edge that
        // brought the driver here).
        self.drained = false;
        loop {
            let cipher = std::mem::take(&mut self.cipher);
            let mut out = std::mem::take(&mut self.out);
            let mut input = &cipher[self.cpos..self.cend];
            let before = input.len();
            let got = self.unseal(&mut input, &mut buf[filled..], &mut out, site);
            self.cpos += before - input.len();
            self.cipher = cipher;
            if self.cpos == self.cend {
                self.cpos = 0;
                self.cend = 0;
            }
            self.out = out;
            // The handshake's flight (or a ticket, or an alert). It is small
            // and the socket fresh, so it fits; what does not goes with the
            // next read or write.
            match self.push(sock, SendFlags::NOSIGNAL | SendFlags::DONTWAIT) {
                Ok(()) | Err(Errno::AGAIN) => {}
                Err(e) if got.is_ok() => return Err(e),
                Err(_) => {}
            }
            match got? {
                Unsealed::Plain(n) => {
                    filled += n;
                    if filled == buf.len() {
                        return Ok(filled);
                    }
                }
                Unsealed::End => return Ok(filled),
                Unsealed::More if self.eof => return Ok(filled),
                // The socket had no more when it was last read: a `recv` now
                // would only say `EAGAIN` (one syscall a read, over TLS).
                // Bytes that came since raise a new edge.
                Unsealed::More if filled > 0 && self.drained => return Ok(filled),
                Unsealed::More => {
                    // Wait only while there is nothing to return.
                    let flags = if filled > 0 {
                        RecvFlags::DONTWAIT
                    } else {
                        RecvFlags::empty()
                    };
                    match self.pull(sock, flags) {
                        Ok(0) => {
                            self.eof = true;
                            if self.handshake == Handshake::Pending {
                                // A truncated ClientHello, or a client that gave up.
                                if self.first.is_some() {
                                    self.handshake = Handshake::Failed;
                                    site.stats.tls_failed();
                                }
                                return Ok(0);
                            }
                        }
                        Ok(_) => {}
                        Err(Errno::AGAIN) if filled > 0 => return Ok(filled),
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }

    /// Readiness side: receives what the socket has (waiting as `flags` say)
    /// after the bytes rustls has not taken yet. Fewer bytes than asked
    /// means the socket was drained (as a plain `recv` tells an
    /// edge-triggered loop): [`Session::drained`].
    fn pull(&mut self, sock: BorrowedFd<'_>, flags: RecvFlags) -> rustix::io::Result<usize> {
        /// A record and its header, with room to spare.
        const PULL: usize = RECORD + 1024;
        if self.cpos > 0 {
            self.cipher.copy_within(self.cpos..self.cend, 0);
            self.cend -= self.cpos;
            self.cpos = 0;
        }
        let at = self.cend;
        if self.cipher.len() < at + PULL {
            self.cipher.resize(at + PULL, 0);
        }
        let got = rustix::net::recv(sock, &mut self.cipher[at..at + PULL], flags).map(|(n, _)| n);
        let n = *got.as_ref().unwrap_or(&0);
        self.cend = at + n;
        self.drained = got.is_ok() && n < PULL;
        got
    }

    /// Readiness side: sends what waits in `out` until it is all gone or the
    /// socket is full (`EAGAIN`; on a blocking socket, the send timeout).
    fn push(&mut self, sock: BorrowedFd<'_>, flags: SendFlags) -> rustix::io::Result<()> {
        while self.opos < self.out.len() {
            match rustix::net::send(sock, &self.out[self.opos..], flags) {
                Ok(n) => self.opos += n,
                Err(Errno::INTR) => {}
                Err(e) => return Err(e),
            }
        }
        self.out.clear();
        self.opos = 0;
        Ok(())
    }

    fn unseal(
        &mut self,
        input: &mut &[u8],
        space: &mut [u8],
        out: &mut Vec<u8>,
        site: &Shared,
    ) -> rustix::io::Result<Unsealed> {
        let Some(tls) = self.tls.as_mut() else {
            self.fail(site);
            return Err(Errno::PROTO);
        };
        loop {
            match tls.reader().read(space) {
                Ok(0) if !space.is_empty() => return Ok(Unsealed::End),
                Ok(n) => return Ok(Unsealed::Plain(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return Ok(Unsealed::End),
            }
            if input.is_empty() {
                return Ok(Unsealed::More);
            }
            if self.first.is_none() {
                self.first = Some(input[0]);
            }
            match tls.read_tls(input) {
                Ok(0) => return Ok(Unsealed::More),
                Ok(_) => {}
                Err(e) => return Err(errno(&e)),
            }
            if tls.process_new_packets().is_err() {
                if self.first.is_some_and(|b| b.is_ascii_uppercase()) {
                    out.extend_from_slice(PLAIN_HTTP);
                } else {
                    let _ = drain(tls, out);
                }
                self.fail(site);
                return Err(Errno::PROTO);
            }
            if self.handshake == Handshake::Pending && !tls.is_handshaking() {
                let resumed = tls.handshake_kind() == Some(HandshakeKind::Resumed);
                self.handshake = Handshake::Done { resumed };
                site.stats.tls_handshake(resumed, self.began.elapsed());
            }
            drain(tls, out)?;
        }
    }

    fn send(&mut self, sock: BorrowedFd<'_>, chunk: Chunk<'_>) -> rustix::io::Result<usize> {
        let Some(tls) = self.tls.as_mut() else {
            return Err(Errno::PROTO);
        };
        if let Some(n) = self.owed {
            self.push(sock, SendFlags::NOSIGNAL)?;
            self.owed = None;
            return Ok(n);
        }
        let n = match chunk {
            Chunk::Bytes(bytes) => {
                let take = bytes.len().min(RECORD);
                tls.writer().write(&bytes[..take]).map_err(|e| errno(&e))?
            }
            Chunk::File { file, offset, len } => {
                let want = len.min(RECORD);
                self.file_buf.resize(want, 0);
                let mut got = 0;
                while got < want {
                    match rustix::io::pread(file, &mut self.file_buf[got..], offset + got as u64) {
                        Ok(0) => break,
                        Ok(k) => got += k,
                        Err(Errno::INTR) => {}
                        Err(e) => return Err(e),
                    }
                }
                if got == 0 {
                    // Truncated while being sent: `Event::Wrote(0)`.
                    return Ok(0);
                }
                tls.writer()
                    .write_all(&self.file_buf[..got])
                    .map_err(|e| errno(&e))?;
                got
            }
        };
        drain(tls, &mut self.out)?;
        match self.push(sock, SendFlags::NOSIGNAL) {
            Ok(()) => Ok(n),
            Err(e) => {
                if e == Errno::AGAIN {
                    self.owed = Some(n);
                }
                Err(e)
            }
        }
    }

    fn end(&mut self, sock: BorrowedFd<'_>, site: &Shared) -> Ending {
        let mut out = std::mem::take(&mut self.out);
        self.finish(&mut out, site);
        self.out = out;
        // Ciphertext still owed goes first, then the alert. Any error but a
        // full socket ends the connection: nothing more can go.
        match self.push(sock, SendFlags::NOSIGNAL | SendFlags::DONTWAIT) {
            Err(Errno::AGAIN) => Ending::Pending,
            _ => Ending::Done,
        }
    }

    /// The `close_notify` (appended to `out`) of a connection whose
    /// handshake was done, once; or a handshake that began and never
    /// finished, counted as failed.
    fn finish(&mut self, out: &mut Vec<u8>, site: &Shared) {
        match (self.tls.as_mut(), self.handshake) {
            (Some(tls), Handshake::Done { .. }) if !self.ending => {
                tls.send_close_notify();
                self.ending = true;
                let _ = drain(tls, out);
            }
            (_, Handshake::Pending) if self.first.is_some() => self.fail(site),
            _ => {}
        }
    }

    fn fail(&mut self, site: &Shared) {
        if self.handshake == Handshake::Pending {
            site.stats.tls_failed();
        }
        self.handshake = Handshake::Failed;
    }
}

/// Moves what rustls has to send into `out`.
fn drain(tls: &mut ServerConnection, out: &mut Vec<u8>) -> rustix::io::Result<()> {
    while tls.wants_write() {
        tls.write_tls(out).map_err(|e| errno(&e))?;
    }
    Ok(())
}

fn errno(e: &io::Error) -> Errno {
    Errno::from_io_error(e).unwrap_or(Errno::IO)
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};
    use std::sync::mpsc;

    use rustix::event::{PollFd, PollFlags};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

    use super::*;
    use std::time::Duration;

    use crate::config::Config;
    use crate::tls::TlsSource;

    /// The last records fill the socket and the client has not read them
    /// yet: `end` says [`Ending::Pending`] instead of dropping the
    /// `close_notify` (and the ciphertext still owed), and once the client
    /// reads, a later `end` finishes, so the client's read to the end is
    /// clean and whole. Before, the alert was tried once and lost, and the
    /// client saw a truncation (`UnexpectedEof`).
    #[test]
    fn a_close_notify_that_meets_a_full_socket_waits_for_room() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let mut config = Config::new(dir.path());
        config.tls = Some(TlsSource::SelfSignedSaved { cert: cert.clone() });
        let site = Shared::new(config).unwrap();
        let mut roots = RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(&cert).unwrap())
            .unwrap();
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let client = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();

        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let reader = std::thread::spawn(move || {
            let name = ServerName::try_from("127.0.0.1").unwrap();
            let conn = ClientConnection::new(Arc::new(client), name).unwrap();
            let mut s = StreamOwned::new(conn, TcpStream::connect(addr).unwrap());
            s.write_all(b"x").unwrap();
            s.flush().unwrap();
            go_rx.recv().unwrap(); // not one byte read until the server is full
            let mut out = Vec::new();
            s.read_to_end(&mut out).map(|_| out.len())
        });
        let (sock, _) = listener.accept().unwrap();
        sock.set_nonblocking(true).unwrap();
        socket2::SockRef::from(&sock)
            .set_send_buffer_size(4096)
            .unwrap();
        let mut wire = Wire::new(&site);
        let mut one = [0u8; 1];
        loop {
            match wire.recv(&sock, &mut one, &site) {
                Ok(1) => break,
                Err(Errno::AGAIN) | Ok(_) => std::thread::sleep(Duration::from_millis(1)),
                Err(e) => panic!("handshake: {e}"),
            }
        }
        // Records until the socket is full; the last one is owed.
        let record = vec![7u8; RECORD];
        let mut sent = 0;
        while let Ok(n) = wire.send(&sock, Chunk::Bytes(&record), false) {
            sent += n;
        }
        let owed = RECORD;
        assert_eq!(
            wire.end(&sock, &site),
            Ending::Pending,
            "after {sent} bytes"
        );
        go_tx.send(()).unwrap();
        let mut tries = 0;
        while wire.end(&sock, &site) == Ending::Pending {
            tries += 1;
            assert!(tries < 10_000, "the close_notify never went out");
            let mut fds = [PollFd::new(&sock, PollFlags::OUT)];
            let _ = rustix::event::poll(&mut fds, Some(&policy::timespec(Duration::from_secs(1))));
        }
        drop(sock);
        let got = reader
            .join()
            .unwrap()
            .expect("a clean end, the close_notify");
        assert_eq!(got, sent + owed);
    }
}
