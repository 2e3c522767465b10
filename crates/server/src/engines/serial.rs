//! `serial`: one connection at a time, on the accepting thread.
//!
//! The baseline of seed 000: the next client waits until the current one has
//! closed its connection (a keep-alive session holds the server for its whole
//! length). Useful only as the denominator of a speedup.

use std::net::TcpListener;
use std::sync::Arc;

use crate::driver::blocking::{self, Next};
use crate::error::ServerError;
use crate::runtime::shared::Shared;

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    let mut worker = site.local();
    let _watch = crate::saturation::watch(listeners, site, None);
    blocking::accept_loop(listeners, site, |stream, peer| {
        blocking::serve(stream, peer, site, &mut worker);
        Next::Continue
    });
    Ok(())
}
