//! The engine choice: one enum, a name and a one-line description each, and the
//! list every test iterates over, so a new engine joins every test by being added
//! to [`Engine::ALL`].

use std::fmt;
use std::net::TcpListener;
use std::str::FromStr;
use std::sync::Arc;

use crate::ServerError;
use crate::engines;
use crate::site::Site;

/// A concurrency architecture for serving connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Engine {
    /// One connection at a time on the accepting thread.
    Serial,
    /// A fixed pool of worker threads fed by a bounded queue.
    #[default]
    Pool,
}

impl Engine {
    /// Every engine, in the order `servelab engines` lists them.
    pub const ALL: &'static [Engine] = &[Engine::Serial, Engine::Pool];

    /// The name used by `--engine`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Serial => "serial",
            Engine::Pool => "pool",
        }
    }

    /// One line saying what the engine is.
    pub fn describe(self) -> &'static str {
        match self {
            Engine::Serial => "one connection at a time on the accepting thread (the baseline)",
            Engine::Pool => {
                "--workers threads fed by a bounded queue (--queue); 503 when it is full"
            }
        }
    }

    /// Does `--workers` mean anything to this engine?
    pub fn uses_workers(self) -> bool {
        !matches!(self, Engine::Serial)
    }

    /// Runs the engine until shutdown; returns once in-flight work is done.
    pub(crate) fn run(self, listener: &TcpListener, site: &Arc<Site>) -> Result<(), ServerError> {
        match self {
            Engine::Serial => {
                engines::serial::run(listener, site);
                Ok(())
            }
            Engine::Pool => engines::pool::run(listener, site),
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
