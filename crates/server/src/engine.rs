//! The engine choice: one enum, a name and a one-line description each, and the
//! list every test iterates over, so a new engine joins every test by being added
//! to [`Engine::ALL`].

use std::fmt;
use std::net::TcpListener;
use std::str::FromStr;
use std::sync::Arc;

use crate::ServerError;
use crate::engines;
use crate::shared::Shared;

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
    ];

    /// The name used by `--engine`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Serial => "serial",
            Engine::Thread => "thread",
            Engine::Pool => "pool",
            Engine::Fork => "fork",
            Engine::Prefork => "prefork",
            Engine::Async => "async",
            Engine::Epoll => "epoll",
            Engine::Reactor => "reactor",
            Engine::Event => "event",
        }
    }

    /// One line saying what the engine is.
    pub fn describe(self) -> &'static str {
        match self {
            Engine::Serial => "one connection at a time on the accepting thread (the baseline)",
            Engine::Thread => {
                "a new thread per connection, at most --max-conns at once (then accepting waits)"
            }
            Engine::Pool => {
                "--workers threads fed by a bounded queue (--queue); 503 when it is full"
            }
            Engine::Fork => {
                "a new process per connection, at most --max-conns at once; children reaped"
            }
            Engine::Prefork => {
                "--workers processes all accepting on one socket; a dead worker is replaced"
            }
            Engine::Async => {
                "tokio's multi-threaded runtime (--workers threads), one task per connection"
            }
            Engine::Epoll => {
                "one thread, one epoll loop over non-blocking sockets (nginx with one worker)"
            }
            Engine::Reactor => {
                "--workers threads, each its own epoll loop on the shared listener (EPOLLEXCLUSIVE)"
            }
            Engine::Event => {
                "one epoll selector holds idle connections and reads heads; --workers threads \
                 serve complete requests from a bounded queue (--queue); 503 when it is full"
            }
        }
    }

    /// Does `--workers` mean anything to this engine?
    pub fn uses_workers(self) -> bool {
        !matches!(
            self,
            Engine::Serial | Engine::Thread | Engine::Fork | Engine::Epoll
        )
    }

    /// Does the engine's listener defer accepting until the client's first
    /// bytes come (`TCP_DEFER_ACCEPT`, set at bind)? Its event loops count
    /// on it (see `driver::evloop`).
    pub(crate) fn defers_accept(self) -> bool {
        matches!(self, Engine::Epoll | Engine::Reactor | Engine::Event)
    }

    /// Runs the engine until shutdown; returns once in-flight work is done.
    pub(crate) fn run(
        self,
        listeners: &[TcpListener],
        site: &Arc<Shared>,
    ) -> Result<(), ServerError> {
        match self {
            Engine::Serial => engines::serial::run(listeners, site),
            Engine::Thread => engines::thread::run(listeners, site),
            Engine::Pool => engines::pool::run(listeners, site),
            Engine::Fork => engines::fork::run(listeners, site),
            Engine::Prefork => engines::prefork::run(listeners, site),
            Engine::Async => engines::tokio_rt::run(listeners, site),
            Engine::Epoll => engines::epoll::run(listeners, site),
            Engine::Reactor => engines::reactor::run(listeners, site),
            Engine::Event => engines::event::run(listeners, site),
        }
    }
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
}
