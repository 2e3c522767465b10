//! The engine choice: one enum and one catalogue ([`Engine::entry`]) that holds
//! every fact about each engine (its name, description, how it scales, what
//! bounds it, which driver moves its connections, whether this system can run
//! it), and the list every test iterates over, so a new engine joins every test
//! by being added to [`Engine::ALL`] and says everything about itself in one
//! place. The one exception is how it runs: `engines::run` matches on the
//! engine, because `Config` names an engine and this module must sit below it
//! (the entry's `run` pointer made `config -> engine -> engines -> ... ->
//! config` a circle, issue 28).

use std::fmt;
use std::str::FromStr;

/// A concurrency architecture for serving connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Engine {
    /// One connection at a time on the accepting thread.
    Serial,
    /// A new thread per connection, at most `--max-conns` at once.
    Thread,
    /// A fixed pool of worker threads fed by a bounded queue.
    Pool,
    /// A new process per connection, at most `--max-conns` at once.
    Fork,
    /// `--workers` processes accepting on one shared listening socket.
    Prefork,
    /// tokio's multi-threaded runtime driving the connection state machine.
    Async,
    /// One thread, one epoll loop multiplexing every connection.
    Epoll,
    /// One epoll loop per worker thread, sharing the listener (the default).
    #[default]
    Reactor,
    /// One selector thread holds idle connections and reads heads; worker
    /// threads take complete requests from a bounded queue (half-sync/half-async).
    Event,
    /// One io_uring loop per worker thread: completion I/O (Linux 6.0+).
    Uring,
}

impl Engine {
    /// Every engine, in the order `servelab engines` lists them.
    pub const ALL: &'static [Engine] = &[
        Engine::Serial,
        Engine::Thread,
        Engine::Pool,
        Engine::Fork,
        Engine::Prefork,
        Engine::Async,
        Engine::Epoll,
        Engine::Reactor,
        Engine::Event,
        Engine::Uring,
    ];

    /// The catalogue: every fact about an engine, in one entry (the way
    /// `servelab-lab`'s `metric.rs` catalogues metrics). The match is
    /// exhaustive: a new engine does not compile until its entry says all
    /// of it.
    const fn entry(self) -> Entry {
        use Capacity::{MaxConns, One, Unbounded, Workers};
        use Waits::{Blocking, EventLoop, HandOff, Ring, Tokio};
        match self {
            Engine::Serial => Entry {
                name: "serial",
                describe: "one connection at a time on the accepting thread (the baseline)",
                threads: Threads::Single,
                capacity: One,
                waits: Blocking,
                http2: false,
                unavailable: always,
            },
            Engine::Thread => Entry {
                name: "thread",
                describe: "a new thread per connection, at most --max-conns at once \
                           (then accepting waits)",
                threads: Threads::PerConnection,
                capacity: MaxConns,
                waits: Blocking,
                http2: false,
                unavailable: always,
            },
            Engine::Pool => Entry {
                name: "pool",
                describe: "--workers threads fed by a bounded queue (--queue); 503 when it is full",
                threads: Threads::Workers,
                capacity: Workers,
                waits: Blocking,
                http2: false,
                unavailable: always,
            },
            Engine::Fork => Entry {
                name: "fork",
                describe: "a new process per connection, at most --max-conns at once; \
                           children reaped",
                threads: Threads::PerConnection,
                capacity: MaxConns,
                waits: Blocking,
                http2: false,
                unavailable: always,
            },
            Engine::Prefork => Entry {
                name: "prefork",
                describe: "--workers processes all accepting on one socket; \
                           a dead worker is replaced",
                threads: Threads::Workers,
                capacity: Workers,
                waits: Blocking,
                http2: false,
                unavailable: always,
            },
            Engine::Async => Entry {
                name: "async",
                describe: "tokio's multi-threaded runtime (--workers threads), \
                           one task per connection",
                threads: Threads::Workers,
                capacity: Unbounded,
                waits: Tokio,
                http2: true,
                unavailable: always,
            },
            Engine::Epoll => Entry {
                name: "epoll",
                describe: "one thread, one epoll loop over non-blocking sockets \
                           (nginx with one worker)",
                threads: Threads::Single,
                capacity: Unbounded,
                waits: EventLoop,
                http2: true,
                unavailable: always,
            },
            Engine::Reactor => Entry {
                name: "reactor",
                describe: "--workers threads, each its own epoll loop on the shared listener \
                           (EPOLLEXCLUSIVE)",
                threads: Threads::Workers,
                capacity: Unbounded,
                waits: EventLoop,
                http2: true,
                unavailable: always,
            },
            Engine::Event => Entry {
                name: "event",
                describe: "one epoll selector holds idle connections and reads heads; \
                           --workers threads serve complete requests from a bounded queue \
                           (--queue); 503 when it is full",
                threads: Threads::Workers,
                capacity: Unbounded,
                waits: HandOff,
                http2: true,
                unavailable: always,
            },
            Engine::Uring => Entry {
                name: "uring",
                describe: "--workers threads, each its own io_uring (multishot accept and \
                           receive, sends batched per turn) on the shared listener",
                threads: Threads::Workers,
                capacity: Unbounded,
                waits: Ring,
                http2: true,
                unavailable: uring_refused,
            },
        }
    }

    /// The name used by `--engine`.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// One line saying what the engine is.
    pub fn describe(self) -> &'static str {
        self.entry().describe
    }

    /// Does it carry HTTP/2 (ALPN offers `h2`, `--h2c` is taken)? One that
    /// does not speaks HTTP/1.1 only.
    pub fn carries_http2(self) -> bool {
        self.entry().http2
    }

    /// Does `--workers` mean anything to this engine?
    pub fn uses_workers(self) -> bool {
        self.entry().threads == Threads::Workers
    }

    /// What bounds the connections it serves at once.
    pub fn capacity(self) -> Capacity {
        self.entry().capacity
    }

    /// How its connections wait.
    pub fn waits(self) -> Waits {
        self.entry().waits
    }

    /// What the start-up line says of its threads with `--workers` and
    /// `--max-conns` (`Config::workers`, `Config::max_conns`): `2 workers`,
    /// `1 worker`, `at most 1024 connections at once`. It takes the two
    /// numbers, not the `Config`, because `Config` names an engine: this
    /// module sits below it.
    pub fn threads(self, workers: usize, max_conns: usize) -> String {
        match self.entry().threads {
            Threads::Single => count(1, "worker"),
            Threads::Workers => count(workers, "worker"),
            Threads::PerConnection => {
                format!("at most {} at once", count(max_conns, "connection"))
            }
        }
    }

    /// `Err` with one line saying why, when this system cannot run the
    /// engine (every engine here runs wherever servelab builds; one that
    /// needs a kernel feature says so here, and tests and the lab mark it
    /// unavailable rather than fail).
    pub fn available(self) -> Result<(), Unavailable> {
        match (self.entry().unavailable)() {
            None => Ok(()),
            Some(why) => Err(Unavailable { engine: self, why }),
        }
    }

    /// The engines this system can run, in [`Engine::ALL`]'s order: what
    /// tests iterate, so that an engine the kernel refuses (`uring` under a
    /// seccomp profile) is left out rather than failing them.
    pub fn here() -> impl Iterator<Item = Engine> {
        Engine::ALL
            .iter()
            .copied()
            .filter(|e| e.available().is_ok())
    }

    /// Does the engine's listener defer accepting until the client's first
    /// bytes come (`TCP_DEFER_ACCEPT`, set at bind)? Its event loops and
    /// rings count on it (see `driver::evloop`, `driver::ring`).
    pub(crate) fn defers_accept(self) -> bool {
        matches!(
            self.waits(),
            Waits::EventLoop | Waits::HandOff | Waits::Ring
        )
    }
}

/// What bounds the connections an engine serves at once, which is also what
/// runs out when it is full (see `saturation.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capacity {
    /// One connection at a time.
    One,
    /// `--workers`: a connection holds a worker for its whole life.
    Workers,
    /// `--max-conns`: a thread or process per connection, up to that many;
    /// then accepting waits.
    MaxConns,
    /// Any number: a connection waits in an event loop or a task, and takes
    /// a thread only while it has work.
    Unbounded,
}

/// How an engine's connections wait: which driver moves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waits {
    /// Blocking syscalls on a thread or process of its own.
    Blocking,
    /// Edges of an epoll loop that answers on its own thread.
    EventLoop,
    /// An epoll loop that hands complete requests to worker threads.
    HandOff,
    /// A tokio task.
    Tokio,
    /// Completions of an io_uring loop that answers on its own thread.
    Ring,
}

/// What the start-up line counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Threads {
    /// One thread serves everything.
    Single,
    /// `--workers` threads or processes.
    Workers,
    /// One per connection, up to `--max-conns`.
    PerConnection,
}

/// One engine's entry in the catalogue ([`Engine::entry`]).
struct Entry {
    name: &'static str,
    describe: &'static str,
    threads: Threads,
    capacity: Capacity,
    waits: Waits,
    /// Carries HTTP/2 (ALPN `h2`, `--h2c`); see docs/architecture.md.
    http2: bool,
    /// Why the engine cannot run here, if it cannot.
    unavailable: fn() -> Option<&'static str>,
}

/// For the engines that run wherever servelab builds.
fn always() -> Option<&'static str> {
    None
}

/// Why io_uring cannot run here, if it cannot: switched off by the
/// administrator (`kernel.io_uring_disabled` = 2), or `io_uring_setup`
/// refused (`EPERM` when disabled for this user or by a seccomp profile such
/// as Docker's default, `ENOSYS` on an old kernel). Asked once per process.
fn uring_refused() -> Option<&'static str> {
    static WHY: std::sync::OnceLock<Option<&'static str>> = std::sync::OnceLock::new();
    *WHY.get_or_init(|| {
        let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .is_ok_and(|v| v.trim() == "2");
        if disabled {
            return Some(
                "io_uring is switched off (kernel.io_uring_disabled); use --engine reactor",
            );
        }
        match io_uring::IoUring::new(2) {
            Ok(_) => None,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) => Some(
                "io_uring_setup is refused (kernel.io_uring_disabled, a seccomp profile, \
                 or an old kernel); use --engine reactor",
            ),
            Err(_) => Some("io_uring_setup failed; use --engine reactor"),
        }
    })
}

/// `1 worker`, `2 workers`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An engine this system cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the {engine} engine is unavailable here: {why}")]
pub struct Unavailable {
    /// The engine asked for.
    pub engine: Engine,
    /// Why, in a few words.
    pub why: &'static str,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown engine name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}` (run `servelab engines` to list them)")]
pub struct UnknownEngine(pub String);

impl FromStr for Engine {
    type Err = UnknownEngine;
    fn from_str(s: &str) -> Result<Engine, UnknownEngine> {
        Engine::ALL
            .iter()
            .copied()
            .find(|e| e.name() == s)
            .ok_or_else(|| UnknownEngine(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &e in Engine::ALL {
            assert_eq!(e.name().parse::<Engine>().unwrap(), e);
            assert!(!e.describe().is_empty());
        }
        assert!("nginx".parse::<Engine>().is_err());
    }

    #[test]
    fn every_engine_is_listed_once_and_runs_here() {
        for (i, &e) in Engine::ALL.iter().enumerate() {
            assert!(!Engine::ALL[..i].contains(&e), "{e} listed twice");
            // Only io_uring may be refused by the system (a seccomp profile).
            if e.waits() != Waits::Ring {
                assert_eq!(e.available(), Ok(()), "{e}");
            }
        }
        assert!(Engine::ALL.contains(&Engine::default()));
    }

    /// docs/serve.md's table of engines has one row per engine of the
    /// catalogue, in its order, and no other.
    #[test]
    fn the_docs_table_of_engines_follows_the_catalogue() {
        let doc = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/serve.md"));
        let table = doc
            .split("## Engines")
            .nth(1)
            .expect("docs/serve.md has a section `## Engines`");
        let rows: Vec<&str> = table
            .lines()
            .skip_while(|l| !l.starts_with("| `"))
            .take_while(|l| l.starts_with("| `"))
            .filter_map(|l| l.split('`').nth(1))
            .collect();
        let names: Vec<&str> = Engine::ALL.iter().map(|e| e.name()).collect();
        assert_eq!(rows, names);
    }

    /// The start-up line's count follows the flag that sizes the engine.
    /// Regression (from the binary): it said "(engine reactor, 1 workers)".
    #[test]
    fn the_thread_count_names_the_flag_that_sizes_the_engine() {
        for &e in Engine::ALL {
            let said = e.threads(3, 7);
            match e.capacity() {
                Capacity::MaxConns => assert_eq!(said, "at most 7 connections at once", "{e}"),
                _ if e.uses_workers() => assert_eq!(said, "3 workers", "{e}"),
                _ => assert_eq!(said, "1 worker", "{e}"),
            }
        }
        assert_eq!(Engine::Pool.threads(1, 7), "1 worker", "no plural for one");
    }
}
