//! The processes a run starts, and where they run: `servelab serve` and the
//! peers as children in their own process groups, the CPUs each side is pinned
//! to, and the kernel scheduler's figures on the server's CPU.
//!
//! Layout (each file imports only those above it, and nothing here imports the
//! rest of the lab but the page style of [`crate::html`]):
//! - [`cpu`]: CPU placement (server on the first CPU, the load on the others)
//!   and CPU-time readings of a process tree
//! - [`sched`]: the kernel's effective slice and switch cost, for round-robin
//!   models
//! - [`server`]: a server as a child process, started, watched and stopped
//! - [`apache`]: Apache httpd's whole configuration, generated
//! - [`peer`]: the installed peers (nginx, lighttpd, h2o, Apache) and their
//!   configurations

pub mod apache;
pub mod cpu;
pub mod others;
pub mod peer;
pub mod sched;
pub mod server;
