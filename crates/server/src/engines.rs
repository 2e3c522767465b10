//! The engines: how connections are accepted and given CPU time.
//!
//! Each file holds one architecture and nothing else; parsing, files, the log
//! and the counters live in [`crate::conn`] and [`crate::handler`]. Every engine
//! runs until shutdown is asked for, then finishes in-flight work within the
//! grace period and returns.

pub(crate) mod pool;
pub(crate) mod serial;
