//! The drivers: the loops that move a [`crate::conn::Conn`] along (read, hand
//! it the bytes, write what it asks, linger, close), one per way of waiting,
//! over one module of shared policy.
//!
//! - [`accept`]: what every accept loop does when `accept` fails (retry,
//!   wait, or pause on a resource error);
//! - [`blocking`]: blocking syscalls on a thread or process that owns the
//!   connection (serial, thread, pool, fork, prefork); also the blocking
//!   accept loop and the 503 for a connection that cannot be taken;
//! - [`evloop`]: one thread, non-blocking sockets and epoll, many connections
//!   (epoll, reactor, and the selector of event);
//! - [`handoff`]: a worker thread that takes a connection with a complete
//!   request from an event loop, serves it and gives it back (event);
//! - [`connection`]: an event loop's connection (socket, `Conn`, readiness),
//!   which travels between the loop and the workers;
//! - [`tokio_task`]: a tokio task per connection (async);
//! - [`policy`]: what they all do the same way: the lingering close, the
//!   accept back-off, resource errors, sending a chunk, burning `--work`,
//!   waiting out a `--delay` hold on a thread, the grace period.
//!
//! The contract: a driver reports every outcome to [`crate::conn::Conn::on`]
//! as an [`crate::conn::Event`] and carries out the
//! [`crate::conn::Interest`] it gets back, with its own way of waiting. It
//! decides nothing about what an outcome means (abandon, 408, linger, idle
//! close at shutdown, release after a hold): that is `Conn`'s.
//!
//! The engines in [`crate::engines`] choose a driver and say how connections
//! are accepted and given CPU.

pub(crate) mod accept;
pub(crate) mod blocking;
pub(crate) mod connection;
pub(crate) mod evloop;
pub(crate) mod handoff;
pub(crate) mod policy;
pub(crate) mod tokio_task;
