//! Graceful shutdown: stop accepting, finish what is in flight, close the idle.
//!
//! Seed 001 could not stop its server without socket errors; the design here makes
//! every part of shutdown explicit:
//!
//! - A self-pipe is the one wake-up source. A signal handler (registered by
//!   [`crate::Server::run_until_signal`]) or [`crate::Running::shutdown`] writes a
//!   byte to it. Acceptors and event loops poll its read end next to their
//!   listeners; it is never drained, so it stays readable (level-triggered) and
//!   wakes every loop that watches it, however many there are.
//! - The [`Registry`] knows every open connection of the blocking engines and
//!   whether it is idle (waiting for a next request) or busy. On shutdown the idle
//!   ones get `shutdown(SHUT_RD)`, which makes their blocked `read` return 0 so the
//!   worker closes them; busy ones finish their response (sent with
//!   `Connection: close`) and then close.
//! - After the grace period whatever is left is cut with `shutdown(SHUT_RDWR)`.
//!
//! Idle marking and the shutdown scan form a Dekker pair on SeqCst atomics: a
//! worker marks its connection idle and then checks the flag; the trigger sets the
//! flag and then scans. At least one of them sees the other, so no connection can
//! slip into a blocking read after the scan without noticing the shutdown.
#![allow(unsafe_code)] // shutdown(2) on registered raw descriptors; see SAFETY notes.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};

/// The shutdown state shared by a server's threads.
#[derive(Debug)]
pub(crate) struct Shutdown {
    requested: AtomicBool,
    /// Set directly by the SIGINT/SIGTERM handler. The pipe alone is not enough:
    /// it wakes loops that poll it, but the `serial` engine's only thread may be
    /// busy with a kept-alive client and never poll it; this flag makes that
    /// client's next response say `Connection: close`.
    signalled: Arc<AtomicBool>,
    forced: AtomicBool,
    wake_rd: OwnedFd,
    wake_wr: OwnedFd,
    pub(crate) registry: Registry,
}

impl Shutdown {
    pub(crate) fn new() -> io::Result<Shutdown> {
        let (wake_rd, wake_wr) = rustix::pipe::pipe_with(
            rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
        )?;
        Ok(Shutdown {
            requested: AtomicBool::new(false),
            signalled: Arc::new(AtomicBool::new(false)),
            forced: AtomicBool::new(false),
            wake_rd,
            wake_wr,
            registry: Registry::default(),
        })
    }

    /// Has shutdown begun?
    pub(crate) fn is_requested(&self) -> bool {
        self.requested.load(SeqCst) || self.signalled.load(SeqCst)
    }

    /// The flag a SIGINT/SIGTERM handler sets (next to writing the wake pipe).
    pub(crate) fn signal_flag(&self) -> Arc<AtomicBool> {
        self.signalled.clone()
    }

    /// Has the grace period run out? Then nothing more is served.
    pub(crate) fn is_forced(&self) -> bool {
        self.forced.load(SeqCst)
    }

    /// The grace period is over: cut every connection and serve nothing more.
    pub(crate) fn force(&self) {
        self.trigger();
        self.forced.store(true, SeqCst);
        self.registry.close_all();
    }

    /// The descriptor that becomes readable when shutdown is asked for.
    pub(crate) fn wake_fd(&self) -> BorrowedFd<'_> {
        self.wake_rd.as_fd()
    }

    /// A descriptor for signal handlers to write to (see `signal_hook::low_level::pipe`).
    pub(crate) fn wake_writer(&self) -> io::Result<OwnedFd> {
        self.wake_wr.try_clone()
    }

    /// Asks for shutdown: wakes every loop and closes idle connections. Idempotent.
    pub(crate) fn trigger(&self) {
        // The flag before the wake-up: a loop the pipe wakes must already see
        // shutdown requested (an idle connection's deadline becomes now), or
        // it goes back to sleep until its old timer. A full pipe already wakes
        // everyone, so a failed write loses nothing.
        let first = !self.requested.swap(true, SeqCst);
        let _ = rustix::io::write(&self.wake_wr, &[1]);
        if first {
            self.registry.close_idle();
        }
    }
}

/// The open connections of the blocking engines.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    slots: Mutex<Vec<Option<Arc<Tracked>>>>,
    free: Mutex<Vec<usize>>,
}

#[derive(Debug)]
struct Tracked {
    fd: RawFd,
    idle: AtomicBool,
}

/// A registered connection; deregisters on drop (before the socket is closed,
/// because the caller drops the guard before the stream).
#[derive(Debug)]
pub(crate) struct Registration<'r> {
    registry: &'r Registry,
    index: usize,
    slot: Arc<Tracked>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Vec<Option<Arc<Tracked>>>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers an open socket; keep the guard alive while the socket is open.
    pub(crate) fn register(&self, fd: &impl AsRawFd) -> Registration<'_> {
        let slot = Arc::new(Tracked {
            fd: fd.as_raw_fd(),
            idle: AtomicBool::new(false),
        });
        let mut slots = self.lock();
        let reuse = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let index = match reuse {
            Some(i) => {
                slots[i] = Some(slot.clone());
                i
            }
            None => {
                slots.push(Some(slot.clone()));
                slots.len() - 1
            }
        };
        Registration {
            registry: self,
            index,
            slot,
        }
    }

    /// Connections registered now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().iter().filter(|s| s.is_some()).count()
    }

    fn close_idle(&self) {
        for slot in self.lock().iter().flatten() {
            if slot.idle.load(SeqCst) {
                shutdown_fd(slot.fd, libc::SHUT_RD);
            }
        }
    }

    /// Cuts every remaining connection (after the grace period).
    pub(crate) fn close_all(&self) {
        for slot in self.lock().iter().flatten() {
            shutdown_fd(slot.fd, libc::SHUT_RDWR);
        }
    }
}

impl Registration<'_> {
    /// Marks the connection idle (between requests) or busy. Returns the shutdown
    /// flag as seen *after* the mark, which is what makes the Dekker pair work.
    pub(crate) fn set_idle(&self, idle: bool, shutdown: &Shutdown) -> bool {
        self.slot.idle.store(idle, SeqCst);
        shutdown.is_requested()
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut slots = self.registry.lock();
        slots[self.index] = None;
        self.registry
            .free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(self.index);
    }
}

fn shutdown_fd(fd: RawFd, how: libc::c_int) {
    // SAFETY: `fd` belongs to a registered connection. A registration is removed
    // under the registry lock (which the callers of this function hold) before
    // its socket is closed, so the descriptor is open and still that socket.
    // shutdown(2) does not close or free anything; an error (e.g. ENOTCONN after
    // the peer left) is harmless and ignored.
    unsafe {
        libc::shutdown(fd, how);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    #[test]
    fn trigger_unblocks_idle_reader_only() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _c1 = TcpStream::connect(addr).unwrap();
        let _c2 = TcpStream::connect(addr).unwrap();
        let (mut idle, _) = listener.accept().unwrap();
        let (busy, _) = listener.accept().unwrap();
        let sd = Shutdown::new().unwrap();
        let r1 = sd.registry.register(&idle);
        let r2 = sd.registry.register(&busy);
        assert!(!r1.set_idle(true, &sd));
        assert!(!r2.set_idle(false, &sd));
        assert_eq!(sd.registry.len(), 2);
        sd.trigger();
        assert!(sd.is_requested());
        let mut b = [0u8; 1];
        assert_eq!(idle.read(&mut b).unwrap(), 0, "idle connection sees EOF");
        busy.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        assert!(
            (&busy).read(&mut b).is_err(),
            "busy connection is left alone"
        );
        drop(r1);
        assert_eq!(sd.registry.len(), 1);
        drop(r2);
        assert_eq!(sd.registry.len(), 0);
        // The wake pipe stays readable.
        let wake = sd.wake_fd();
        let mut fds = [rustix::event::PollFd::new(
            &wake,
            rustix::event::PollFlags::IN,
        )];
        assert_eq!(rustix::event::poll(&mut fds, None).unwrap(), 1);
    }
}
