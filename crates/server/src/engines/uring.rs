//! `uring`: one io_uring loop per worker thread (`--workers`), each with a
//! multishot accept on the shared listeners, multishot receives into its own
//! provided buffers, and one `io_uring_enter` per turn that submits the
//! turn's sends and waits for what comes next (see [`crate::driver::ring`]).
//!
//! The shape of `reactor` (a loop per core, each owning its connections from
//! accept to close) with completion I/O in place of readiness. Where this
//! system refuses io_uring (`kernel.io_uring_disabled`, or a seccomp profile
//! such as Docker's default), the catalogue says the engine is unavailable
//! and `serve` names `--engine reactor` instead.

use std::net::TcpListener;
use std::sync::Arc;

use crate::driver::ring::Ring;
use crate::engine::Engine;
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    super::workers::on_workers(site, Engine::Uring, |site| {
        Ring::new(site, listeners)?.run()
    })
}
