//! The TLS half of a connection's exchange: the handshake, the request
//! written through the rustls session, and the response read out of it.
//!
//! The socket stays the loop's: rustls's sans-I/O `ClientConnection` is fed
//! ciphertext with `read_tls` and drained with `write_tls` over [`Wire`], in
//! the same edge-triggered way as plain HTTP (read until `EAGAIN` or a complete
//! response). Plaintext goes in through the session's writer (rustls encrypts
//! from its own buffer, bounded at 64 KiB, so a large body is streamed), and
//! comes out through `fill_buf`, parsed in place: the response bytes are
//! never copied into the loop's buffer.
//!
//! A handshake that fails is a connect that failed: one error of class
//! `tls_handshake` (counted by kind), a backoff, and a new connection for the
//! same request; a run in which no handshake ever completes stops within
//! [`NEVER_CONNECTED`](crate::connect_failure::NEVER_CONNECTED) and says why.

use std::io::{self, BufRead as _, Write as _};
use std::time::{Duration, Instant};

use rustix::io::Errno;

use super::exchange::{io_class, write_class};
use super::{ClientLoop, thread_cpu};
use crate::client_conn::ConnState;
use crate::connect_failure::ConnectFailure;
use crate::handshake_failure::HandshakeFailureKind;
use crate::metrics::{Counts, ErrorClass};
use crate::response::Feed;
use crate::tls::Wire;
use std::os::fd::OwnedFd;

/// Moves a handshake on as far as the socket allows (shared by the HTTP/1.1
/// and HTTP/2 loops); counts the bytes in `counts`.
pub(super) fn handshake_step(
    sock: &OwnedFd,
    tls: &mut rustls::ClientConnection,
    counts: &mut Counts,
) -> Step {
    loop {
        while tls.wants_write() {
            match tls.write_tls(&mut Wire(sock)) {
                Ok(n) => counts.bytes_sent += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Step::Failed(HandshakeFailureKind::Closed, e.to_string()),
            }
        }
        if !tls.is_handshaking() {
            return Step::Done;
        }
        match tls.read_tls(&mut Wire(sock)) {
            Ok(0) => {
                return Step::Failed(
                    HandshakeFailureKind::Closed,
                    "the server closed the connection".to_string(),
                );
            }
            Ok(n) => counts.bytes_received += n as u64,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Step::Wait,
            Err(e) => return Step::Failed(HandshakeFailureKind::Closed, e.to_string()),
        }
        if let Err(e) = tls.process_new_packets() {
            // Tell the server why (rustls queued the alert).
            let _ = tls.write_tls(&mut Wire(sock));
            return Step::Failed(HandshakeFailureKind::of(&e), e.to_string());
        }
    }
}

/// How a handshake step ended.
pub(super) enum Step {
    /// The handshake is done.
    Done,
    /// Waiting for the socket (an edge will call again).
    Wait,
    /// It failed: the kind, and what happened.
    Failed(HandshakeFailureKind, String),
}

pub(super) fn errno_of(e: &io::Error) -> Errno {
    Errno::from_io_error(e).unwrap_or(Errno::IO)
}

impl ClientLoop {
    /// The TCP connect succeeded for an `https://` target: queue the
    /// ClientHello and start the handshake.
    pub(super) fn start_handshake(&mut self, i: usize, now: Instant) {
        let cpu = thread_cpu();
        let target = self.conns[i].conn_target;
        let Some(t) = &self.cfg.targets[target].tls else {
            return;
        };
        // Building the ClientHello draws the key shares: part of the
        // handshake's CPU.
        let made = t.connect();
        let s = &mut self.conns[i];
        s.handshake_start = now;
        s.state = ConnState::Handshaking;
        s.tls_cpu = thread_cpu().saturating_sub(cpu);
        match made {
            Ok(c) => {
                s.tls = Some(Box::new(c));
                self.handshake(i, now);
            }
            Err(e) => self.handshake_failed(i, now, HandshakeFailureKind::Other, e.to_string()),
        }
    }

    /// Moves the handshake on as far as the socket allows; when it is done,
    /// records it and sends the request.
    pub(super) fn handshake(&mut self, i: usize, now: Instant) {
        let cpu = thread_cpu();
        let step = self.handshake_step(i);
        let s = &mut self.conns[i];
        s.tls_cpu += thread_cpu().saturating_sub(cpu);
        match step {
            Step::Wait => {}
            Step::Done => {
                let resumed = s
                    .tls
                    .as_ref()
                    .is_some_and(|t| t.handshake_kind() == Some(rustls::HandshakeKind::Resumed));
                // The clock again, not the event's time: a step may read the
                // server's whole flight and do the handshake's crypto in one
                // call (on loopback the answer is there before the first read
                // gives up), and `now` would leave that out (a regression:
                // handshakes of 0 us in a debug build).
                let done = Instant::now();
                let took = done.saturating_duration_since(s.handshake_start);
                self.rec.handshake(took, resumed, s.tls_cpu);
                // Reachable only once the server answers: a TLS 1.3 server
                // may still refuse the client's certificate.
                self.send(i, done);
            }
            Step::Failed(kind, detail) => self.handshake_failed(i, now, kind, detail),
        }
    }

    fn handshake_step(&mut self, i: usize) -> Step {
        let s = &mut self.conns[i];
        let (Some(sock), Some(tls)) = (s.sock.as_ref(), s.tls.as_deref_mut()) else {
            return Step::Wait;
        };
        handshake_step(sock, tls, &mut self.rec.counts)
    }

    /// A handshake failed: one error, and a backoff before the same request
    /// connects again (as after a refused connect). A connection is usable
    /// (and the backoff reset) only after its first answer, so that a server
    /// that refuses every client after the handshake backs off too.
    fn handshake_failed(
        &mut self,
        i: usize,
        now: Instant,
        kind: HandshakeFailureKind,
        detail: String,
    ) {
        let s = &self.conns[i];
        let target = &self.cfg.targets[s.conn_target];
        let addr = target.addrs[s.addr_index];
        let detail = match &target.tls {
            Some(t) => format!("{detail}; server name {}", t.name.to_str()),
            None => detail,
        };
        self.close_sock(i);
        self.conns[i].tls_cpu = Duration::ZERO;
        self.rec.handshake_failed(now, kind);
        self.note_connect_failure(ConnectFailure::tls(addr, kind, detail));
        self.back_off(i, now);
    }

    /// Writes what is left of the request through the TLS session: hands
    /// rustls as much plaintext as it buffers, and the records to the socket,
    /// until all is sent or the socket is full.
    pub(super) fn tls_write_more(&mut self, i: usize, now: Instant) {
        let s = &mut self.conns[i];
        let p = &self.cfg.targets[s.req.target];
        let head = if s.closing { &p.close } else { &p.keep_alive };
        let body = &p.body[..];
        let total = head.len() + body.len();
        let (Some(sock), Some(tls)) = (s.sock.as_ref(), s.tls.as_deref_mut()) else {
            return;
        };
        loop {
            while s.written < total {
                let rest = if s.written < head.len() {
                    &head[s.written..]
                } else {
                    &body[s.written - head.len()..]
                };
                // Zero: rustls's buffer is full until records go out.
                match tls.writer().write(rest) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => s.written += n,
                }
            }
            if !tls.wants_write() {
                break;
            }
            match tls.write_tls(&mut Wire(sock)) {
                Ok(n) => self.rec.counts.bytes_sent += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    let class = write_class(s.reused, errno_of(&e));
                    return self.fail(i, now, class);
                }
            }
        }
        s.state = ConnState::Reading;
    }

    /// Reads ciphertext until the response is complete, the socket is
    /// drained, or EOF, and parses the plaintext where rustls holds it.
    pub(super) fn tls_on_readable(
        &mut self,
        i: usize,
        now: Instant,
        flags: rustix::event::epoll::EventFlags,
    ) {
        use rustix::event::epoll::EventFlags as F;
        let hup = flags.intersects(F::HUP | F::RDHUP | F::ERR);
        let head = self.cfg.targets[self.conns[i].req.target].head;
        loop {
            let s = &mut self.conns[i];
            let (Some(sock), Some(tls)) = (s.sock.as_ref(), s.tls.as_deref_mut()) else {
                return;
            };
            let mut eof = false;
            let mut drained = false;
            match tls.read_tls(&mut Wire(sock)) {
                Ok(0) => eof = true,
                Ok(n) => self.rec.bytes(now, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => drained = true,
                Err(e) => return self.fail(i, now, io_class(errno_of(&e))),
            }
            if let Err(e) = tls.process_new_packets() {
                let _ = tls.write_tls(&mut Wire(sock));
                // In TLS 1.3 the server checks the client's certificate after
                // the client's side of the handshake is done: its refusal
                // arrives as the first answer. The connection never carried
                // a request: a failed handshake, and the request goes again.
                if !s.reused {
                    let detail = e.to_string();
                    return self.handshake_failed(i, now, HandshakeFailureKind::of(&e), detail);
                }
                return self.fail(i, now, ErrorClass::Malformed);
            }
            let mut reader = tls.reader();
            loop {
                match reader.fill_buf() {
                    // A close_notify: the server closed the session.
                    Ok([]) => {
                        eof = true;
                        break;
                    }
                    Ok(data) => {
                        if s.req.first_byte.is_none() {
                            s.req.first_byte = Some(now);
                        }
                        let n = data.len();
                        match s.parser.feed(data, head) {
                            Ok(Feed::Complete { used }) => {
                                reader.consume(used);
                                // Bytes past the response: nobody asked for them.
                                if used < n || matches!(reader.fill_buf(), Ok(d) if !d.is_empty()) {
                                    return self.fail(i, now, ErrorClass::Malformed);
                                }
                                if hup || eof {
                                    self.close_sock(i);
                                }
                                // The server answered over TLS: the target is
                                // reachable (see `handshake_failed`).
                                if !self.conns[i].reused {
                                    self.usable(i, now);
                                }
                                return self.complete(i, now);
                            }
                            Ok(Feed::Incomplete) => reader.consume(n),
                            Err(_) => return self.fail(i, now, ErrorClass::Malformed),
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    // The TCP connection closed without a close_notify: as a
                    // plain close (a body delimited by it is still complete).
                    Err(_) => {
                        eof = true;
                        break;
                    }
                }
            }
            if eof {
                return self.on_eof(i, now);
            }
            if drained {
                return;
            }
        }
    }

    /// An idle TLS connection became readable: take in what the server sent
    /// (TLS 1.3 session tickets come after the handshake). Returns whether the
    /// connection stays open: not after a close, an error or unasked-for data.
    pub(super) fn tls_idle_read(&mut self, i: usize) -> bool {
        let s = &mut self.conns[i];
        let (Some(sock), Some(tls)) = (s.sock.as_ref(), s.tls.as_deref_mut()) else {
            return false;
        };
        loop {
            match tls.read_tls(&mut Wire(sock)) {
                Ok(0) => return false,
                Ok(n) => self.rec.counts.bytes_received += n as u64,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return matches!(
                        tls.reader().fill_buf(),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock
                    );
                }
                Err(_) => return false,
            }
            if tls.process_new_packets().is_err() {
                return false;
            }
        }
    }
}
