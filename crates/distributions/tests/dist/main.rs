//! Integration tests of `servelab-dist` through its public API only, as the server,
//! the load generator and the simulator use it.

mod determinism;
mod syntax;
