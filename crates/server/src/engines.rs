//! The engines: how connections are accepted and given CPU time, and nothing
//! more.
//!
//! Every engine has the same entry point, `run(listener, site)`, called by
//! [`crate::Engine`]; it runs until shutdown is asked for, then finishes
//! in-flight work within the grace period and returns. How a connection is
//! driven once accepted (read, write, linger, close) is the business of
//! [`crate::driver`]; no engine uses another engine's code.

pub(crate) mod epoll;
pub(crate) mod event;
pub(crate) mod fork;
pub(crate) mod pool;
pub(crate) mod prefork;
pub(crate) mod reactor;
pub(crate) mod serial;
pub(crate) mod thread;
pub(crate) mod tokio_rt;
