//! What runs the process, below HTTP: the state every connection shares and
//! each worker owns, the clock, counters, the service time a worker adds,
//! graceful shutdown and forked children.
//!
//! Nothing here parses a request; the site ([`crate::site`]), the connection
//! ([`crate::conn`]) and the drivers and engines above it read and update it.
//!
//! Layout:
//! - [`shared`] holds [`shared::Shared`] (read-only after start, apart from atomics)
//!   and [`shared::Local`] (one per worker thread or process);
//! - [`clock`], the `Date` and log timestamps, formatted once a second;
//! - [`stats`] and [`service_time`], the counters of `/-/status` and the
//!   service-time histogram of `/-/metrics`;
//! - [`service`], `--work` and `--delay`, the service time a worker adds;
//! - [`shutdown`], stop accepting, finish what is in flight, close the idle;
//! - [`child`], the `fork` and `prefork` engines' children, forked, reaped and
//!   reported.

pub(crate) mod child;
pub(crate) mod clock;
pub(crate) mod service;
pub(crate) mod service_time;
pub(crate) mod shared;
pub(crate) mod shutdown;
pub(crate) mod stats;
