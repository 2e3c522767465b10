//! `fork`: a new process for every connection, at most `--max-conns` at once.
//!
//! The oldest Unix server design (seed 003): the parent accepts, forks, closes
//! its copy of the connection and accepts again; the child serves the connection
//! to its end and exits. A crash in a child costs one connection, never the
//! server. What a child may do after a fork in a multithreaded process, and why
//! it closes foreign sockets, is in `child.rs`.
//!
//! Reaping, so that no zombie ever remains: a child's last act is to write its
//! pid (4 bytes, atomic on a pipe) to a pipe the parent polls next to the
//! listener and the shutdown pipe; the parent then `waitpid`s exactly that pid.
//! A child that dies without writing (killed by a signal) is found by a sweep of
//! `waitpid(pid, WNOHANG)` over the live children once a second. The parent
//! never calls `waitpid(-1)`, which could steal the children of other code in the
//! same process.
//!
//! The cap: at `--max-conns` live children the parent stops polling the
//! listener, so new clients wait in the backlog until a child exits.
//!
//! The accept loop is the one every blocking engine uses
//! ([`crate::driver::blocking::accept_with`]); this engine passes in the
//! children's pipe, the sweep and the cap. A fork that
//! fails (`EAGAIN` at the process limit, `ENOMEM`) is logged on stderr and the
//! connection answered with 503 and counted as dropped.
//!
//! Counters are exact because they live in shared memory (see `stats.rs`); each
//! child counts its own connection and requests. The access log of a child is
//! its own synchronous writer (see `AccessLog::process_writer`).
//!
//! Shutdown: the parent stops accepting; every child sees the inherited wake
//! pipe, closes its connection if idle or finishes its response; the parent
//! waits for them within the grace period, then kills what is left with SIGKILL
//! and reaps it.
//!
//! TLS and fork safety: aws-lc notices the fork (a `MADV_WIPEONFORK` page
//! that reads as zero in the child) and, at the child's first `RAND_bytes`
//! (rustls drawing the server random), re-seeds its per-process seed DRBG.
//! That re-seed is what keeps sibling children from sharing the parent's RNG
//! state (the same server random, key share and nonces); it stays, and the
//! test `each_connection_draws_its_own_server_random` guards it. Its cost
//! depends on the seed source. From aws-lc's CPU Jitter Entropy collector
//! (thousands of timed SHA-3 rounds) it was about 10 ms of CPU per child:
//! 91% of the server's CPU samples at `load -c 1 --session 1 --tls-resume
//! off` (`perf record -g`), a 10.1-17.8 ms gap (median 10.6) with no system
//! call between the ClientHello's `recvfrom` and the child's first
//! `getrandom` (`strace -f`, 73 children), and at `-c 2` on 2 busy CPUs a
//! handshake mean of 12.6-20.8 ms. The workspace therefore builds aws-lc
//! with `AWS_LC_SYS_NO_JITTER_ENTROPY` (`.cargo/config.toml`): the re-seed
//! reads 48 bytes of getrandom(2) instead, and a forked handshake's mean is
//! 1.3-1.8 ms. `prefork` pays the re-seed once per worker.

use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::driver::accept;
use crate::driver::blocking;
use crate::driver::grace;
use crate::driver::policy;
use crate::error::ServerError;
use crate::runtime::child::{self, Ended};
use crate::runtime::shared::Shared;

/// How often live children are checked for a death the pipe did not report.
const SWEEP: Duration = Duration::from_secs(1);

/// The parent's view of its children.
struct Children {
    live: HashSet<libc::pid_t>,
    done_rd: OwnedFd,
    done_wr: OwnedFd,
    last_sweep: Instant,
}

impl Children {
    /// Reaps every child that reported its end on the pipe.
    fn reap_reported(&mut self, site: &Shared) {
        let mut buf = [0u8; 4096];
        loop {
            match rustix::io::read(&self.done_rd, &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    for chunk in buf[..n].chunks_exact(4) {
                        let pid = libc::pid_t::from_ne_bytes(chunk.try_into().expect("4 bytes"));
                        if self.live.remove(&pid) {
                            // It wrote, so it is exiting: this wait is short.
                            let ended = child::reap(pid, true);
                            account(pid, ended, site);
                        }
                    }
                }
            }
        }
    }

    /// Reaps every child that has ended, reported or not.
    fn sweep(&mut self, site: &Shared) {
        self.last_sweep = Instant::now();
        self.live.retain(|&pid| match child::reap(pid, false) {
            Some(ended) => {
                account(pid, Some(ended), site);
                false
            }
            None => true,
        });
    }
}

/// A child that did not end normally did not close its books: correct the
/// gauge of open connections (its connection is closed now, by the kernel).
fn account(pid: libc::pid_t, ended: Option<Ended>, site: &Shared) {
    if child::report("connection process", pid, ended) && matches!(ended, Some(Ended::Signal(_))) {
        site.stats.conn_lost();
    }
}

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    let (done_rd, done_wr) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )
    .map_err(|e| ServerError::Io {
        context: "creating the child pipe",
        source: e.into(),
    })?;
    let mut acceptor = ForkAcceptor {
        kids: Children {
            live: HashSet::new(),
            done_rd,
            done_wr,
            last_sweep: Instant::now(),
        },
        site,
    };
    let _watch = crate::saturation::watch(listeners, site, None);
    blocking::accept_with(listeners, site, &mut acceptor);
    finish(&mut acceptor.kids, site);
    Ok(())
}

/// The blocking accept loop, with a child per connection: it also waits on
/// the pipe children report their end on, sweeps them every [`SWEEP`], and at
/// `--max-conns` live children leaves clients waiting in the backlog.
struct ForkAcceptor<'a> {
    kids: Children,
    site: &'a Arc<Shared>,
}

impl blocking::Acceptor for ForkAcceptor<'_> {
    fn handle(&mut self, stream: TcpStream, peer: SocketAddr) -> blocking::Next {
        spawn(stream, peer, self.site, &mut self.kids);
        blocking::Next::Continue
    }

    fn has_room(&self) -> bool {
        accept::has_room(self.kids.live.len(), self.site)
    }

    fn extra(&self) -> Option<BorrowedFd<'_>> {
        Some(self.kids.done_rd.as_fd())
    }

    fn period(&self) -> Option<Duration> {
        Some(SWEEP)
    }

    fn tick(&mut self, reported: bool) {
        if reported {
            self.kids.reap_reported(self.site);
        }
        if self.kids.last_sweep.elapsed() >= SWEEP {
            self.kids.sweep(self.site);
        }
    }
}

/// Forks a child for one connection; the parent keeps only its pid.
fn spawn(stream: TcpStream, peer: SocketAddr, site: &Arc<Shared>, kids: &mut Children) {
    match child::fork() {
        Err(e) => {
            eprintln!("servelab: cannot fork for a connection: {e}; answering 503");
            blocking::refuse(stream, site);
        }
        // The parent: the child has its own copy of the socket.
        Ok(Some(pid)) => {
            kids.live.insert(pid);
            drop(stream);
        }
        Ok(None) => {
            // The child. The listener goes with the other foreign sockets: a
            // child that held it would keep the port open after the server stops.
            child::close_foreign_sockets(&[child::raw(&stream)]);
            child::watch_shutdown(site);
            let mut worker = site.process_local();
            blocking::serve(stream, peer, site, &mut worker);
            drop(worker);
            let pid = std::process::id() as libc::pid_t;
            // A full pipe (16384 unreaped reports) only delays the reaping to
            // the next sweep.
            let _ = rustix::io::write(&kids.done_wr, &pid.to_ne_bytes());
            child::exit(0);
        }
    }
}

/// Waits for the children within the grace period, then kills the rest
/// ([`grace::wait_out`], the loops' rule: SIGKILL ends them at once).
fn finish(kids: &mut Children, site: &Shared) {
    struct Kids<'a> {
        kids: &'a mut Children,
        site: &'a Shared,
    }
    impl grace::Outstanding for Kids<'_> {
        fn wait_until(&mut self, until: Instant) -> usize {
            while !self.kids.live.is_empty() && Instant::now() < until {
                let left = until.saturating_duration_since(Instant::now());
                let wait = left.min(Duration::from_millis(100));
                let ts = policy::timespec(wait.max(Duration::from_millis(1)));
                let mut fds = [PollFd::new(&self.kids.done_rd, PollFlags::IN)];
                let _ = rustix::event::poll(&mut fds, Some(&ts));
                self.kids.reap_reported(self.site);
                self.kids.sweep(self.site);
            }
            self.kids.live.len()
        }
        fn force(&mut self) {
            let live: Vec<libc::pid_t> = self.kids.live.drain().collect();
            for (pid, ended) in child::cut_off(&live, self.site) {
                account(pid, ended, self.site);
            }
        }
    }
    grace::wait_out(site.config.grace, &mut Kids { kids, site });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn reported_children_are_reaped_and_killed_ones_accounted() {
        let site = Shared::new(Config::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        let (done_rd, done_wr) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )
        .unwrap();
        let mut kids = Children {
            live: HashSet::new(),
            done_rd,
            done_wr,
            last_sweep: Instant::now(),
        };
        // A child that reports its end, as a connection child does. It only
        // writes and exits: nothing that could meet another thread's lock.
        let Some(a) = child::fork().unwrap() else {
            let pid = std::process::id() as libc::pid_t;
            let _ = rustix::io::write(&kids.done_wr, &pid.to_ne_bytes());
            child::exit(0);
        };
        // A child killed before it could report (or close its books).
        let Some(b) = child::fork().unwrap() else {
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        };
        kids.live.extend([a, b]);
        site.stats.conn_opened(); // b's connection, counted by b

        let mut fds = [PollFd::new(&kids.done_rd, PollFlags::IN)];
        let ten_s = policy::timespec(Duration::from_secs(10));
        assert_eq!(rustix::event::poll(&mut fds, Some(&ten_s)).unwrap(), 1);
        kids.reap_reported(&site);
        assert_eq!(kids.live.iter().copied().collect::<Vec<_>>(), [b]);

        child::kill(b, libc::SIGKILL);
        let until = Instant::now() + Duration::from_secs(10);
        while !kids.live.is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
            kids.sweep(&site);
        }
        assert!(
            kids.live.is_empty(),
            "the killed child is reaped by the sweep"
        );
        assert_eq!(
            site.stats.snapshot().open,
            0,
            "its connection is taken back"
        );
    }
}
