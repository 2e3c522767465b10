//! The end of a connection, written once for every driver: the wire's end (a
//! TLS `close_notify`, which may have to wait for room in the socket), then,
//! for a lingering close, the write side shut and what the client still sends
//! read and dropped ([`Linger`]), the two within one [`LINGER`] timed from the
//! first wait.
//!
//! [`Closing::step`] goes as far as the socket allows without waiting, with
//! non-blocking calls on any socket, and says what it waits for; the driver
//! supplies only the wait: `poll` on a thread ([`super::blocking`]), the
//! loop's edges and timer ([`super::evloop`]), tokio's readiness
//! ([`super::tokio_task`]). Before, each driver had its own drain, two of
//! them blocking reads.

use std::os::fd::AsFd;
use std::time::Instant;

use rustix::io::Errno;
use rustix::net::RecvFlags;

use super::policy::Linger;
use super::wire::{Ending, Wire};
use crate::runtime::shared::Shared;

/// A close in progress.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Closing {
    /// A lingering close was asked for ([`crate::conn::Interest::Close`]).
    linger: bool,
    /// The wire's end is done; with `linger`, the write side is shut.
    ended: bool,
    /// Set once the close has to wait (for room, or for the client).
    wait: Option<Linger>,
}

/// What [`Closing::step`] left to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// Nothing: the socket may close.
    Done,
    /// Wait until the socket is ready for this, or `until` (then step again:
    /// the close is over).
    Wait { ready: Ready, until: Instant },
}

/// What a close waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ready {
    /// Bytes from the client, or its end (the drain).
    Read,
    /// Room in the socket (the `close_notify`).
    Write,
}

impl Closing {
    /// A close, lingering or not.
    pub(crate) fn new(linger: bool) -> Closing {
        Closing {
            linger,
            ended: false,
            wait: None,
        }
    }

    /// Takes the close as far as the socket allows without waiting.
    pub(crate) fn step(&mut self, sock: impl AsFd, wire: &mut Wire, site: &Shared) -> Close {
        if !self.ended {
            let over = self.wait.is_some_and(|l| l.is_over());
            if wire.end(&sock, site) == Ending::Pending && !over {
                let until = self.wait.get_or_insert_with(Linger::start).until();
                return Close::Wait {
                    ready: Ready::Write,
                    until,
                };
            }
            self.ended = true;
            if !self.linger {
                return Close::Done;
            }
            let _ = rustix::net::shutdown(&sock, rustix::net::Shutdown::Write);
        }
        let linger = self.wait.get_or_insert_with(Linger::start);
        let mut sink = [0u8; 4096];
        loop {
            if linger.is_over() {
                return Close::Done;
            }
            match rustix::net::recv(&sock, &mut sink, RecvFlags::DONTWAIT) {
                Ok((0, _)) => return Close::Done,
                Ok((n, _)) => linger.drained(n),
                Err(Errno::AGAIN) => {
                    return Close::Wait {
                        ready: Ready::Read,
                        until: linger.until(),
                    };
                }
                Err(Errno::INTR) => {}
                Err(_) => return Close::Done,
            }
        }
    }

    /// When the wait of the close ends at the latest, once it has begun.
    pub(crate) fn until(&self) -> Option<Instant> {
        self.wait.map(|l| l.until())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::policy::LINGER;
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    fn site() -> Shared {
        let dir = std::env::temp_dir();
        Shared::new(crate::config::Config::new(dir)).unwrap()
    }

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (server, _) = l.accept().unwrap();
        server.set_nonblocking(true).unwrap();
        (server, client)
    }

    #[test]
    fn a_plain_close_is_done_at_once() {
        let site = site();
        let (server, _client) = pair();
        let mut c = Closing::new(false);
        assert_eq!(c.step(&server, &mut Wire::Plain, &site), Close::Done);
    }

    /// A lingering close shuts our side, drops what the client sends, waits
    /// for more, and ends with the client's end.
    #[test]
    fn a_lingering_close_drains_until_the_client_ends() {
        let site = site();
        let (server, mut client) = pair();
        client.write_all(b"unread request bytes").unwrap();
        let mut c = Closing::new(true);
        // Our side is shut: the client reads the end.
        let waits = c.step(&server, &mut Wire::Plain, &site);
        assert!(
            matches!(waits, Close::Wait { ready: Ready::Read, until } if until <= Instant::now() + LINGER),
            "{waits:?}"
        );
        let mut buf = [0u8; 8];
        assert_eq!(std::io::Read::read(&mut client, &mut buf).unwrap(), 0);
        client.shutdown(std::net::Shutdown::Write).unwrap();
        // The client's end arrives; the drain is over.
        let mut done = Close::Wait {
            ready: Ready::Read,
            until: Instant::now(),
        };
        for _ in 0..100 {
            done = c.step(&server, &mut Wire::Plain, &site);
            if done == Close::Done {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(done, Close::Done);
    }
}
