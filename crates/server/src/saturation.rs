//! The warning when an engine's workers have run out: one line on stderr,
//! at most every [`EVERY`], naming the flag to raise and the engines that
//! don't have the problem.
//!
//! The engines whose [`Capacity`] is bounded (`serial`, `pool` and `prefork`
//! give each connection a worker for its whole life, and `thread` and `fork`
//! stop accepting at `--max-conns`) can run out; which engines those are, and
//! what the line says of each, follows the engine catalogue. An ordinary
//! keep-alive client (a browser, `ab -k -c 50`) holds its worker while it is
//! idle, up to `--keepalive-timeout`, so a few such clients leave every other
//! connection waiting, in the pool's queue or the kernel's backlog. The server
//! is not broken, only full, but from outside it looks hung: `ab -k -c 50`
//! against one pool worker printed nothing for 40 s. Apache says "server
//! reached MaxRequestWorkers setting, consider raising the MaxRequestWorkers
//! setting" in the same case; this is that line.
//!
//! A watcher thread ([`watch`]) looks once a [`TICK`]: the engine is full
//! when every worker has a connection (`open` of the shared counters, exact
//! across prefork's and fork's processes too) and a connection is waiting
//! (the pool's queue is not empty, or a listener has a connection nobody
//! accepted). Full at two looks in a row, so at least a second, counts; a
//! burst that a worker clears within the tick does not. The thread exits when
//! shutdown is asked for (it polls the wake pipe) or its [`Watch`] is dropped.
//!
//! The line is written with one `write(2)` to descriptor 2, not through
//! `eprintln!`'s lock: `fork` and `prefork` fork while this thread runs, and a
//! child must never inherit a lock held by a thread that does not exist there.

use std::net::TcpListener;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::engine::{Capacity, Engine};
use crate::runtime::shared::Shared;

/// How often the watcher looks. A second is short next to the keep-alive
/// timeout (5 s by default) that makes clients wait, and costs nothing.
const TICK: Duration = Duration::from_secs(1);

/// At most one line per this long, however long the engine stays full: the
/// operator needs to hear it, not to have the log flooded.
pub(crate) const EVERY: Duration = Duration::from_secs(10);

/// What runs out in an engine, and the flag that gives more of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limit {
    engine: Engine,
    /// Connections served at once.
    capacity: u64,
}

impl Limit {
    /// The limit of the configured engine, or `None` for an engine whose
    /// connections never wait for a worker ([`Capacity::Unbounded`]).
    pub(crate) fn of(c: &crate::config::Config) -> Option<Limit> {
        let capacity = match c.engine.capacity() {
            Capacity::One => 1,
            Capacity::Workers => c.workers,
            Capacity::MaxConns => c.max_conns,
            Capacity::Unbounded => return None,
        };
        Some(Limit {
            engine: c.engine,
            capacity: capacity as u64,
        })
    }

    /// The warning, one line with its newline.
    pub(crate) fn message(&self, keepalive: Duration) -> String {
        let n = self.capacity;
        let e = self.engine;
        let (full, raise) = match e.capacity() {
            Capacity::One => (format!("the {e} engine's one connection is busy"), ""),
            Capacity::Workers if n == 1 => {
                (format!("the one {e} worker is busy"), "raise --workers, ")
            }
            Capacity::Workers => (format!("all {n} {e} workers are busy"), "raise --workers, "),
            Capacity::MaxConns => (
                format!("{n} connections are open, the --max-conns of the {e} engine"),
                "raise --max-conns, ",
            ),
            // `Limit::of` makes none for these; said all the same.
            Capacity::Unbounded => (format!("the {e} engine is full"), ""),
        };
        format!(
            "servelab: warning: {full} and connections are waiting \
             (a kept-alive connection holds its worker until it has been idle for \
             --keepalive-timeout {}): {raise}lower --keepalive-timeout, or use \
             --engine {}, which serve any number of connections with \
             a fixed set of threads\n",
            show(keepalive),
            unbounded_with_workers()
        )
    }
}

/// The engines that serve any number of connections with `--workers`
/// threads and run here, from the catalogue: `async, reactor, event or
/// uring` (without `uring` where io_uring is refused).
fn unbounded_with_workers() -> String {
    let names: Vec<&str> = Engine::ALL
        .iter()
        .filter(|e| e.capacity() == Capacity::Unbounded && e.uses_workers())
        .filter(|e| e.available().is_ok())
        .map(|e| e.name())
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `5s`, `500ms`.
fn show(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Decides, look by look, when to warn: full at two looks in a row, then at
/// most once per [`EVERY`].
#[derive(Debug, Default)]
pub(crate) struct Warner {
    full_before: bool,
    last: Option<Instant>,
}

impl Warner {
    /// Takes one look (`full` at time `now`); true when a line is due.
    pub(crate) fn look(&mut self, full: bool, now: Instant) -> bool {
        let sustained = full && self.full_before;
        self.full_before = full;
        if !sustained {
            return false;
        }
        match self.last {
            Some(t) if now.duration_since(t) < EVERY => false,
            _ => {
                self.last = Some(now);
                true
            }
        }
    }
}

/// The running watcher; dropping it stops the thread within a [`TICK`].
#[derive(Debug)]
pub(crate) struct Watch {
    stop: Arc<AtomicBool>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How many accepted connections wait for a worker (the pool's queue).
pub(crate) type Queued = Box<dyn Fn() -> usize + Send>;

/// Starts watching `site`'s engine, if it has a [`Limit`]. `queued` counts
/// the connections an engine has accepted but no worker has taken; without
/// it, waiting means a connection in a listener's backlog. Keep the [`Watch`]
/// for as long as the engine runs.
pub(crate) fn watch(
    listeners: &[TcpListener],
    site: &Arc<Shared>,
    queued: Option<Queued>,
) -> Option<Watch> {
    let limit = Limit::of(&site.config)?;
    // Our own descriptors for the listeners, so the thread needs no borrow;
    // a forked child closes them with every other foreign socket.
    let listeners: Vec<TcpListener> = listeners
        .iter()
        .filter_map(|l| l.try_clone().ok())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let site = site.clone();
    let stopped = stop.clone();
    std::thread::Builder::new()
        .name("servelab-watch".into())
        .spawn(move || run(&listeners, &site, limit, queued, &stopped))
        .ok()?;
    Some(Watch { stop })
}

fn run(
    listeners: &[TcpListener],
    site: &Shared,
    limit: Limit,
    queued: Option<Queued>,
    stop: &AtomicBool,
) {
    let mut warner = Warner::default();
    let tick = crate::driver::policy::timespec(TICK);
    loop {
        let mut wake = [PollFd::from_borrowed_fd(
            site.shutdown.wake_fd(),
            PollFlags::IN,
        )];
        match rustix::event::poll(&mut wake, Some(&tick)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {}
            _ => return,
        }
        if stop.load(Ordering::Relaxed) || site.shutdown.is_requested() {
            return;
        }
        let busy = site.stats.snapshot().open >= limit.capacity;
        let full = busy
            && match &queued {
                Some(queued) => queued() > 0,
                None => backlog(listeners),
            };
        if warner.look(full, Instant::now()) {
            let line = limit.message(site.config.keepalive_timeout);
            let _ = rustix::io::write(std::io::stderr().as_fd(), line.as_bytes());
        }
    }
}

/// Whether a listener holds a connection that nobody has accepted yet.
fn backlog(listeners: &[TcpListener]) -> bool {
    let mut fds: Vec<PollFd<'_>> = listeners
        .iter()
        .map(|l| PollFd::new(l, PollFlags::IN))
        .collect();
    let now = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(n) if n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_engine_is_reported_after_two_looks_then_at_most_every_ten_seconds() {
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_secs(n);
        let mut w = Warner::default();
        assert!(!w.look(true, s(0)), "one look is a burst");
        assert!(w.look(true, s(1)));
        assert!(!w.look(true, s(2)));
        assert!(!w.look(true, s(10)));
        assert!(w.look(true, s(11)));
        // Free again, then full again: still no more than one line per 10 s.
        assert!(!w.look(false, s(12)));
        assert!(!w.look(true, s(13)));
        assert!(!w.look(true, s(14)));
        assert!(w.look(true, s(21)));
        // Full at every other look only: never sustained.
        let mut w = Warner::default();
        for i in 0..20 {
            assert!(!w.look(i % 2 == 0, s(i)));
        }
    }

    /// Every engine of the catalogue: a bounded one has a limit of the size
    /// its flag gives and a line that names it; an unbounded one has none.
    #[test]
    fn every_bounded_engine_has_a_limit_and_a_line() {
        let mut c = crate::config::Config::new("www");
        c.workers = 3;
        c.max_conns = 7;
        for &e in Engine::ALL {
            c.engine = e;
            let limit = Limit::of(&c);
            let expected = match e.capacity() {
                Capacity::One => Some(1),
                Capacity::Workers => Some(3),
                Capacity::MaxConns => Some(7),
                Capacity::Unbounded => None,
            };
            assert_eq!(limit.map(|l| l.capacity), expected, "{e}");
            if let Some(l) = limit {
                let line = l.message(Duration::from_secs(5));
                assert!(line.contains(e.name()), "{e}: {line}");
                assert_eq!(line.lines().count(), 1, "{e}");
            }
        }
    }

    #[test]
    fn the_message_names_the_flag_to_raise_and_the_engines_without_the_problem() {
        let ka = Duration::from_secs(5);
        let pool = Limit {
            engine: Engine::Pool,
            capacity: 2,
        }
        .message(ka);
        assert!(
            pool.starts_with("servelab: warning: all 2 pool workers are busy"),
            "{pool}"
        );
        assert!(pool.contains("raise --workers") && pool.contains("--keepalive-timeout 5s"));
        assert!(pool.contains("--engine async, reactor, event"), "{pool}");
        assert_eq!(pool.lines().count(), 1);
        let one = Limit {
            engine: Engine::Prefork,
            capacity: 1,
        }
        .message(ka);
        assert!(one.contains("the one prefork worker is busy"), "{one}");
        let thread = Limit {
            engine: Engine::Thread,
            capacity: 3,
        }
        .message(Duration::from_millis(500));
        assert!(
            thread.contains("raise --max-conns") && thread.contains("500ms"),
            "{thread}"
        );
        let serial = Limit {
            engine: Engine::Serial,
            capacity: 1,
        }
        .message(ka);
        assert!(!serial.contains("raise"), "{serial}");
    }
}
