//! Child processes of the `fork` and `prefork` engines: forking, what a child
//! does first and the one way it leaves, and how the parent reaps, kills and
//! reports them.
//!
//! `fork(2)` in a multithreaded process copies only the calling thread; any lock
//! another thread held at that moment stays locked forever in the child. So a
//! child here never takes a lock the parent's other threads use: it gets its own
//! log writer ([`crate::runtime::shared::Shared::process_local`]), writes its own messages
//! with a bare `write(2)`, and updates only the shared atomics of `stats.rs`.
//! glibc's `malloc` is fork-safe (it resets its arenas' locks in the child), so
//! ordinary Rust allocation is fine. Tests run servers on threads of one process,
//! which is exactly this situation.
//!
//! A child also inherits every descriptor of the parent. In a real server that
//! is the listener and a few files, but in a process that runs other servers
//! (the test binary, the lab) it includes their client sockets: a copy held by a
//! child keeps such a connection open after its owner closed it, and its client
//! waits for an end of stream that comes only when the child exits. So the child
//! closes every socket it does not need ([`close_foreign_sockets`]); the other
//! descriptors (the root, cached files, pipes) stay, since the request path may
//! use them.
//!
//! Shutdown reaches a child through the parent's wake pipe, which it inherits:
//! [`watch_shutdown`] starts a thread that waits for the pipe and then triggers
//! the child's own copy of the shutdown state, which closes its idle connection
//! exactly as in the parent (see `shutdown.rs`).
#![allow(unsafe_code)] // fork, _exit and close on descriptors; see SAFETY notes.

use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::Arc;

use rustix::event::{PollFd, PollFlags};

use crate::runtime::shared::Shared;

/// Forks. `Ok(None)` in the child, `Ok(Some(pid))` in the parent.
pub(crate) fn fork() -> std::io::Result<Option<libc::pid_t>> {
    // SAFETY: the child runs only code that follows this module's rules (no lock
    // shared with the parent's other threads; glibc malloc is fork-safe) and
    // leaves through `exit`, never by returning into the caller's stack of
    // destructors.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(std::io::Error::last_os_error()),
        0 => Ok(None),
        pid => Ok(Some(pid)),
    }
}

/// Ends the child at once with `code`, without running destructors or atexit
/// handlers: those belong to the parent (joining its threads, flushing its log
/// buffers, unmapping the counters) and must not run twice.
pub(crate) fn exit(code: i32) -> ! {
    // SAFETY: _exit is async-signal-safe and does not return.
    unsafe { libc::_exit(code) }
}

/// Writes a message to standard error with one `write(2)` and no lock (the
/// standard library's stderr lock may be held by another thread of the parent).
pub(crate) fn say(msg: &str) {
    let _ = rustix::io::write(rustix::stdio::stderr(), msg.as_bytes());
}

/// Closes every socket of the process except `keep`.
pub(crate) fn close_foreign_sockets(keep: &[RawFd]) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let mut doomed = Vec::new();
    for entry in dir.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<RawFd>().ok())
        else {
            continue;
        };
        if fd <= 2 || keep.contains(&fd) {
            continue;
        }
        // The directory's own descriptor is listed too; it is no socket.
        if let Ok(target) = std::fs::read_link(entry.path())
            && target
                .as_os_str()
                .as_encoded_bytes()
                .starts_with(b"socket:")
        {
            doomed.push(fd);
        }
    }
    for fd in doomed {
        // SAFETY: `fd` is a socket of this (single-threaded) child that nothing
        // in the child uses: the child serves only the sockets in `keep`. Owned
        // wrappers of it in the parent's copied memory are never dropped here,
        // because the child leaves through `exit`.
        unsafe {
            libc::close(fd);
        }
    }
}

/// Starts the thread that turns the parent's shutdown into this child's.
pub(crate) fn watch_shutdown(site: &Arc<Shared>) {
    let site = site.clone();
    let spawned = std::thread::Builder::new()
        .name("sl-child-stop".into())
        .stack_size(64 * 1024)
        .spawn(move || {
            loop {
                let mut fds = [PollFd::from_borrowed_fd(
                    site.shutdown.wake_fd(),
                    PollFlags::IN,
                )];
                match rustix::event::poll(&mut fds, None) {
                    Ok(_) => break,
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(_) => return,
                }
            }
            site.shutdown.trigger();
        });
    if let Err(e) = spawned {
        say(&format!(
            "servelab: child {} cannot watch for shutdown: {e}; it stops when its connection ends\n",
            std::process::id()
        ));
    }
}

/// The raw descriptor of anything that has one.
pub(crate) fn raw(fd: &impl AsFd) -> RawFd {
    fd.as_fd().as_raw_fd()
}

/// Waits for `pid` (a child of ours); returns how it ended, `None` if it is
/// still running (with `block == false`).
pub(crate) fn reap(pid: libc::pid_t, block: bool) -> Option<Ended> {
    let mut status = 0;
    let flags = if block { 0 } else { libc::WNOHANG };
    loop {
        // SAFETY: waits only for our own child `pid`; `status` is a valid out
        // pointer. Never waitpid(-1): other code in the process may have
        // children of its own (other servers in a test binary).
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r == pid {
            return Some(if libc::WIFSIGNALED(status) {
                Ended::Signal(libc::WTERMSIG(status))
            } else {
                Ended::Exit(libc::WEXITSTATUS(status))
            });
        }
        match (r, std::io::Error::last_os_error().raw_os_error()) {
            (-1, Some(libc::EINTR)) => continue,
            // Not (or no longer) our child to wait for: with SIGCHLD ignored
            // (a disposition inherited across exec) the kernel reaps children
            // itself. Either way it is gone.
            (-1, Some(libc::ECHILD)) => return Some(Ended::Gone),
            _ => return None,
        }
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Exit(i32),
    Signal(i32),
    /// Reaped already, by us or by the kernel (SIGCHLD ignored).
    Gone,
}

/// Says on stderr that child `pid` (a `what`) ended abnormally, if it did: by a
/// signal or with a non-zero status. Returns whether it did. A child that was
/// reaped already, or is still running (`None`), is no news.
pub(crate) fn report(what: &str, pid: libc::pid_t, ended: Option<Ended>) -> bool {
    match ended {
        Some(Ended::Exit(0) | Ended::Gone) | None => false,
        Some(how) => {
            eprintln!("servelab: {what} {pid} ended abnormally ({how:?})");
            true
        }
    }
}

/// The grace period is over and `pids` have not ended: cuts every connection
/// ([`crate::runtime::shutdown::Shutdown::force`]), kills them all with SIGKILL, then
/// reaps each. Returns how each ended, for the caller to account and report.
pub(crate) fn cut_off(pids: &[libc::pid_t], site: &Shared) -> Vec<(libc::pid_t, Option<Ended>)> {
    site.shutdown.force();
    for &pid in pids {
        kill(pid, libc::SIGKILL);
    }
    pids.iter().map(|&pid| (pid, reap(pid, true))).collect()
}

/// Sends `sig` to our child `pid`.
pub(crate) fn kill(pid: libc::pid_t, sig: i32) {
    // SAFETY: kill has no memory effects; `pid` is a child we have not reaped,
    // so the id cannot have been reused by another process.
    unsafe {
        libc::kill(pid, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reap_reports_exit_code_and_signal() {
        // The children only call _exit or pause; nothing that could meet a
        // lock held by another test thread.
        let Some(a) = fork().unwrap() else { exit(3) };
        assert_eq!(reap(a, true), Some(Ended::Exit(3)));
        assert_eq!(reap(a, true), Some(Ended::Gone), "already reaped");
        let Some(b) = fork().unwrap() else {
            loop {
                // SAFETY: pause has no preconditions; the parent kills us.
                unsafe { libc::pause() };
            }
        };
        assert_eq!(reap(b, false), None, "still running");
        kill(b, libc::SIGKILL);
        assert_eq!(reap(b, true), Some(Ended::Signal(libc::SIGKILL)));
    }

    #[test]
    fn foreign_sockets_are_closed_in_the_child_only() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let keep = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let (lfd, kfd) = (raw(&listener), raw(&keep));
        let Some(pid) = fork().unwrap() else {
            close_foreign_sockets(&[kfd]);
            let closed = rustix::io::fcntl_getfd(
                // SAFETY: only asks whether the number is still a descriptor.
                unsafe { std::os::fd::BorrowedFd::borrow_raw(lfd) },
            )
            .is_err();
            // SAFETY: as above.
            let kept = rustix::io::fcntl_getfd(unsafe { std::os::fd::BorrowedFd::borrow_raw(kfd) })
                .is_ok();
            exit(if closed && kept { 0 } else { 1 });
        };
        assert_eq!(reap(pid, true), Some(Ended::Exit(0)));
        // The parent's sockets are untouched.
        assert!(listener.local_addr().is_ok());
    }
}
