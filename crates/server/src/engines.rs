//! The engines: how connections are accepted and given CPU time.
//!
//! Each file holds one architecture and nothing else; parsing, files, the log
//! and the counters live in [`crate::conn`] and [`crate::handler`]. Every engine
//! runs until shutdown is asked for, then finishes in-flight work within the
//! grace period and returns.

mod child;
pub(crate) mod epoll;
pub(crate) mod fork;
pub(crate) mod pool;
pub(crate) mod prefork;
pub(crate) mod reactor;
pub(crate) mod serial;
pub(crate) mod thread;
pub(crate) mod tokio_rt;
