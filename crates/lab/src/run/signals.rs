//! Ctrl-C and SIGTERM during a run: a flag the run polls, so that it stops
//! its servers and writes what it measured instead of dying.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::error::{LabError, Result};

/// SIGINT and SIGTERM set the stop flag while a run is in progress (instead of
/// killing the lab and orphaning its servers); unregistered when dropped.
#[derive(Debug)]
pub struct Signals(Vec<signal_hook::SigId>);

impl Signals {
    /// Sets `stop` on SIGINT and SIGTERM until the value is dropped.
    pub fn register(stop: &Arc<AtomicBool>) -> Result<Signals> {
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(sig, Arc::clone(stop))
                .map_err(|e| LabError::Other(format!("cannot handle signal {sig}: {e}")))?;
            ids.push(id);
        }
        Ok(Signals(ids))
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}
