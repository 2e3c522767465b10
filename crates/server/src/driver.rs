//! The drivers: what moves a [`crate::conn::Conn`] along (read, hand it the
//! bytes, write what it asks, linger, close), one per way of waiting, over
//! the loop written once ([`dispatch`]), the steps written once ([`step`],
//! [`closing`]), one timer heap ([`timers`]) and one module of shared
//! policy.
//!
//! - [`dispatch`]: the one loop that carries out what `Conn` asks (the
//!   match on [`crate::conn::Interest`]); each driver says how it does each
//!   thing ([`dispatch::Carry`]), and where it has to wait;
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
//! - [`ring`]: one thread, io_uring, many connections (uring): completion
//!   I/O through the sans-I/O side of the [`wire`], receiving into the
//!   shared buffers of [`bufring`];
//! - [`closing`]: the end of a connection (the TLS `close_notify`, the
//!   lingering close's drain), one step that every driver waits for its own
//!   way;
//! - [`step`]: one read and one write through the wire, the outcome told to
//!   `Conn`; the driver says only what it does when the socket is not ready;
//! - [`grace`]: the end of the grace period of shutdown, for the two loops
//!   (forced once, then a last wait for what they cannot take back);
//! - [`places`]: where a loop keeps its connections, each place with a
//!   generation that stale events and timer entries are checked against;
//! - [`spares`]: the buffers lent to connections that read and write, taken
//!   back while they are idle;
//! - [`timers`]: the deadlines of a loop's connections, one heap with lazy
//!   deletion for the epoll loop and the ring;
//! - [`policy`]: what they all do the same way: a connection's open and
//!   close bookkeeping, the linger bounds, the accept back-off, resource
//!   errors, sending a chunk, burning `--work`, waiting out a `--delay` hold
//!   on a thread, the deadlines, the grace period;
//! - [`wire`]: one connection's transport, plain or TLS ([`wire::Wire`]):
//!   the drivers' side of HTTPS (it sends through [`policy`], so it sits here
//!   and not in [`crate::tls`], which the configuration imports).
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
pub(crate) mod bufring;
pub(crate) mod closing;
pub(crate) mod connection;
pub(crate) mod dispatch;
pub(crate) mod evloop;
pub(crate) mod grace;
pub(crate) mod handoff;
pub(crate) mod places;
pub(crate) mod policy;
pub(crate) mod ring;
pub(crate) mod spares;
pub(crate) mod step;
pub(crate) mod timers;
pub(crate) mod tokio_task;
pub(crate) mod wire;
