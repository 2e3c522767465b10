//! `prefork`: `--workers` processes that all accept on the one listening socket.
//!
//! Seed 001's "many handlers listen on one socket", and Apache's prefork MPM:
//! the master binds, forks the workers and then only supervises. Each worker is
//! a single-threaded process that polls the shared listener, accepts, and serves
//! that connection to its end before accepting again, so `--workers` is also the
//! number of connections served at once. The kernel hands each connection to
//! one worker; the others' `accept` finds nothing and they poll again (the
//! thundering herd is the price of the simplest design, and small at these
//! worker counts).
//!
//! Supervision: the master holds a pidfd per worker (`pidfd_open`, Linux 5.3),
//! which becomes readable when that worker exits. The master reaps it and, unless
//! the server is stopping, forks a replacement; a worker that dies within a
//! second of its start is replaced only after a pause, so a worker that crashes
//! at once cannot make the master fork in a tight loop.
//!
//! Shutdown: all processes share the wake pipe, so SIGTERM to the master (or
//! [`crate::Running::shutdown`]) reaches every worker at once: each stops
//! accepting, closes its connection if idle or finishes its response, and exits.
//! The master waits for all of them within the grace period, then kills the rest
//! with SIGKILL. Signal handlers are inherited, so SIGTERM sent to a worker (or
//! to the process group, as Ctrl-C does) also stops the whole server gracefully.
//!
//! A worker whose master dies (killed, crashed) gets SIGTERM from the kernel
//! (`PR_SET_PDEATHSIG`) and stops, so no orphan keeps accepting on the port.
//! (The signal follows the death of the master's forking thread, which is the
//! thread that runs the engine until it returns.)
//!
//! Counters are exact across workers through the shared mapping of `stats.rs`.
//! A worker killed in the middle of a connection leaves `open` one too high.
//! Each worker writes the access log through its own synchronous writer (see
//! `AccessLog::process_writer`); the master passes SIGHUP on to every worker,
//! so `kill -HUP <master>` makes each reopen the log file (within a second).

use std::net::TcpListener;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags};

use crate::driver::blocking::{self, Next};
use crate::driver::grace;
use crate::driver::policy;
use crate::error::ServerError;
use crate::runtime::child;
use crate::runtime::shared::Shared;

/// A worker that ends sooner than this after its start is replaced only after
/// [`RESPAWN_PAUSE`].
const QUICK_DEATH: Duration = Duration::from_secs(1);
const RESPAWN_PAUSE: Duration = Duration::from_millis(200);

/// One live worker process.
struct WorkerProcess {
    pid: libc::pid_t,
    pidfd: OwnedFd,
    started: Instant,
}

pub(crate) fn run(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<(), ServerError> {
    // SIGHUP (reopen the access log) is sent to the master; it passes it on,
    // since each worker has its own log descriptor. Registered before the
    // workers start, so they inherit a handler too and a forwarded SIGHUP can
    // never kill one.
    let hup = Arc::new(AtomicBool::new(false));
    let hup_id = match site.log.reopen_flag() {
        Some(_) => signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone()).ok(),
        None => None,
    };
    let watch = crate::saturation::watch(listeners, site, None);
    let result = supervise(listeners, site, &hup, hup_id.is_some());
    drop(watch);
    if let Some(id) = hup_id {
        signal_hook::low_level::unregister(id);
    }
    result
}

fn supervise(
    listeners: &[TcpListener],
    site: &Arc<Shared>,
    hup: &AtomicBool,
    forward_hup: bool,
) -> Result<(), ServerError> {
    let mut workers: Vec<WorkerProcess> = Vec::with_capacity(site.config.workers);
    for _ in 0..site.config.workers {
        match start(listeners, site) {
            Ok(w) => workers.push(w),
            Err(e) => {
                // Could not start them all: stop those that did start.
                site.shutdown.trigger();
                finish(&mut workers, site);
                return Err(e);
            }
        }
    }
    loop {
        let mut fds = Vec::with_capacity(workers.len() + 1);
        fds.push(PollFd::from_borrowed_fd(
            site.shutdown.wake_fd(),
            PollFlags::IN,
        ));
        for w in &workers {
            fds.push(PollFd::new(&w.pidfd, PollFlags::IN));
        }
        // The signal may land on another thread of the master, so the flag is
        // looked at once a second rather than relying on EINTR.
        let tick = policy::timespec(Duration::from_secs(1));
        match rustix::event::poll(&mut fds, forward_hup.then_some(&tick)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                eprintln!("servelab: poll in the prefork master failed: {e}; stopping");
                break;
            }
        }
        if hup.swap(false, Ordering::Relaxed) {
            for w in &workers {
                child::kill(w.pid, libc::SIGHUP);
            }
        }
        if !fds[0].revents().is_empty() || site.shutdown.is_requested() {
            break;
        }
        let exited: Vec<usize> = (0..workers.len())
            .filter(|&i| !fds[i + 1].revents().is_empty())
            .collect();
        drop(fds);
        // Highest index first, so each swap_remove leaves the others in place.
        let dead: Vec<WorkerProcess> = exited
            .into_iter()
            .rev()
            .map(|i| workers.swap_remove(i))
            .collect();
        for w in dead {
            let ended = child::reap(w.pid, true);
            eprintln!(
                "servelab: prefork worker {} ended ({ended:?}); starting another",
                w.pid
            );
            if w.started.elapsed() < QUICK_DEATH {
                blocking::wait_or_shutdown(site, RESPAWN_PAUSE);
            }
            if site.shutdown.is_requested() {
                break;
            }
            match start(listeners, site) {
                Ok(w) => workers.push(w),
                // Try again when the next worker ends or on the next loop.
                Err(e) => eprintln!(
                    "servelab: cannot replace a prefork worker: {}",
                    crate::error::Chain(&e)
                ),
            }
        }
        if workers.is_empty() {
            eprintln!("servelab: no prefork worker could be started; stopping");
            break;
        }
    }
    site.shutdown.trigger();
    finish(&mut workers, site);
    Ok(())
}

/// Forks one worker.
fn start(listeners: &[TcpListener], site: &Arc<Shared>) -> Result<WorkerProcess, ServerError> {
    let master = std::process::id();
    let pid = child::fork().map_err(ServerError::io("forking a prefork worker"))?;
    let Some(pid) = pid else {
        // The worker. If the master dies without stopping it (SIGKILL, a
        // crash), it gets SIGTERM instead of accepting on as an orphan: the
        // inherited handler makes that a graceful stop, or the default action
        // ends it. The check after the prctl covers a master that died first.
        let _ =
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM));
        if rustix::process::getppid().map(|p| p.as_raw_pid() as u32) != Some(master) {
            child::exit(1);
        }
        let keep: Vec<_> = listeners.iter().map(child::raw).collect();
        child::close_foreign_sockets(&keep);
        child::watch_shutdown(site);
        let mut worker = site.process_local();
        blocking::accept_loop(listeners, site, |stream, peer| {
            blocking::serve(stream, peer, site, &mut worker);
            Next::Continue
        });
        drop(worker);
        child::exit(0);
    };
    let raw = rustix::process::Pid::from_raw(pid).expect("fork returns a positive pid");
    match rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()) {
        Ok(pidfd) => Ok(WorkerProcess {
            pid,
            pidfd,
            started: Instant::now(),
        }),
        Err(e) => {
            child::kill(pid, libc::SIGKILL);
            let _ = child::reap(pid, true);
            Err(ServerError::Io {
                context: "watching a prefork worker (pidfd_open needs Linux 5.3)",
                source: e.into(),
            })
        }
    }
}

/// Waits for every worker within the grace period, then kills the rest
/// ([`grace::wait_out`], the loops' rule: SIGKILL ends them at once).
fn finish(workers: &mut Vec<WorkerProcess>, site: &Shared) {
    struct Workers<'a> {
        live: Vec<WorkerProcess>,
        site: &'a Shared,
    }
    impl grace::Outstanding for Workers<'_> {
        fn wait_until(&mut self, until: Instant) -> usize {
            while !self.live.is_empty() {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                let ts = policy::timespec(left);
                let mut fds: Vec<PollFd<'_>> = self
                    .live
                    .iter()
                    .map(|w| PollFd::new(&w.pidfd, PollFlags::IN))
                    .collect();
                let _ = rustix::event::poll(&mut fds, Some(&ts));
                let gone: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
                drop(fds);
                let mut i = 0;
                self.live.retain(|w| {
                    let keep = !gone[i];
                    i += 1;
                    if !keep {
                        child::report("prefork worker", w.pid, child::reap(w.pid, true));
                    }
                    keep
                });
            }
            self.live.len()
        }
        fn force(&mut self) {
            let pids: Vec<libc::pid_t> = self.live.drain(..).map(|w| w.pid).collect();
            for (pid, ended) in child::cut_off(&pids, self.site) {
                child::report("prefork worker", pid, ended);
            }
        }
    }
    let mut w = Workers {
        live: std::mem::take(workers),
        site,
    };
    grace::wait_out(site.config.grace, &mut w);
}
