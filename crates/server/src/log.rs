//! The access log: one line per request (Combined Log Format, `line.rs`, or
//! JSON with `--log-format json`, `json.rs`), never lost or torn.
//!
//! Seed 000 found that a logger shared by every connection serialised the whole
//! server. Both designs are here so experiments can show the difference:
//!
//! - [`LogMode::Sync`]: one file behind one lock; each line is written with a
//!   single `write(2)` while the lock is held. Simple, immediately durable in the
//!   page cache, and a point of contention under load.
//! - [`LogMode::Buffered`]: each worker owns a buffer (a mutex only the worker and
//!   the flusher ever take, so it is uncontended in practice). A flusher thread
//!   swaps each buffer for an empty one at least once a second (sooner when one
//!   grows past [`EARLY_FLUSH`]) and writes it out; on shutdown it drains
//!   everything. A worker never waits for the disk. Lines of different workers
//!   may appear out of time order, each line stays whole.
//!
//! Lines are always assembled completely before they are written or appended,
//! so neither mode can interleave two lines. SIGHUP sets the reopen flag
//! (see [`AccessLog::reopen_flag`]); the file is reopened before the next write,
//! which is what logrotate's `postrotate` expects. A failed write is reported once
//! on stderr and serving goes on: a full log disk must not take the site down.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::mem;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::config::{LogMode, LogTarget};
use crate::error::ServerError;

mod format;
mod json;
mod line;

pub(crate) use format::{Format, of as format_of};
pub(crate) use line::CLIENT_CLOSED;

/// A worker's buffer that the flusher writes out once it holds this much.
const EARLY_FLUSH: usize = 256 * 1024;
/// The longest a line may wait in a buffer.
const FLUSH_INTERVAL: Duration = Duration::from_secs(1);

/// The access log of one server.
#[derive(Debug)]
pub(crate) struct AccessLog {
    shared: Option<Arc<Shared>>,
    flusher: Mutex<Option<JoinHandle<()>>>,
}

#[derive(Debug)]
struct Shared {
    mode: LogMode,
    target: LogTarget,
    sink: Mutex<Sink>,
    reopen: Arc<AtomicBool>,
    /// Buffered mode: every worker's buffer.
    buffers: Mutex<Vec<Arc<Mutex<Vec<u8>>>>>,
    wake: Condvar,
    wake_lock: Mutex<bool>, // true: stop requested
}

#[derive(Debug)]
struct Sink {
    file: File,
    failed: bool,
}

/// A worker's handle for writing lines.
#[derive(Debug)]
pub(crate) struct LogWriter {
    shared: Option<Arc<Shared>>,
    buffer: Option<Arc<Mutex<Vec<u8>>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_target(target: &LogTarget) -> io::Result<File> {
    match target {
        LogTarget::Off => unreachable!("an off log has no sink"),
        LogTarget::Stdout => Ok(File::from(rustix::io::fcntl_dupfd_cloexec(
            rustix::stdio::stdout(),
            0,
        )?)),
        LogTarget::File(path) => OpenOptions::new().create(true).append(true).open(path),
    }
}

impl Sink {
    fn write(&mut self, bytes: &[u8], shared: &Shared) {
        if shared.reopen.swap(false, Ordering::AcqRel) {
            match open_target(&shared.target) {
                Ok(f) => {
                    self.file = f;
                    self.failed = false;
                }
                Err(e) => {
                    eprintln!("servelab: cannot reopen access log: {e}; keeping the old file")
                }
            }
        }
        if let Err(e) = self.file.write_all(bytes) {
            if !self.failed {
                eprintln!("servelab: access log write failed: {e}; serving goes on");
                self.failed = true;
            }
        } else {
            self.failed = false;
        }
    }
}

impl AccessLog {
    /// Opens the log; a file that cannot be opened stops the server from starting.
    pub(crate) fn open(target: &LogTarget, mode: LogMode) -> Result<AccessLog, ServerError> {
        if *target == LogTarget::Off {
            return Ok(AccessLog {
                shared: None,
                flusher: Mutex::new(None),
            });
        }
        let file = open_target(target).map_err(|source| ServerError::Log {
            path: match target {
                LogTarget::File(p) => p.clone(),
                _ => "-".into(),
            },
            source,
        })?;
        let shared = Arc::new(Shared {
            mode,
            target: target.clone(),
            sink: Mutex::new(Sink {
                file,
                failed: false,
            }),
            reopen: Arc::new(AtomicBool::new(false)),
            buffers: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            wake_lock: Mutex::new(false),
        });
        let flusher = if mode == LogMode::Buffered {
            let s = shared.clone();
            Some(
                std::thread::Builder::new()
                    .name("servelab-log".into())
                    .spawn(move || s.flush_loop())
                    .map_err(ServerError::io("starting the log flusher"))?,
            )
        } else {
            None
        };
        Ok(AccessLog {
            shared: Some(shared),
            flusher: Mutex::new(flusher),
        })
    }

    /// The flag a SIGHUP handler sets to have the file reopened.
    pub(crate) fn reopen_flag(&self) -> Option<Arc<AtomicBool>> {
        self.shared.as_ref().map(|s| s.reopen.clone())
    }

    /// A handle for one worker (thread or process).
    pub(crate) fn writer(&self) -> LogWriter {
        let buffer = self.shared.as_ref().and_then(|s| {
            (s.mode == LogMode::Buffered).then(|| {
                let b = Arc::new(Mutex::new(Vec::with_capacity(16 * 1024)));
                lock(&s.buffers).push(b.clone());
                b
            })
        });
        LogWriter {
            shared: self.shared.clone(),
            buffer,
        }
    }

    /// A writer for a forked child process (`fork`, `prefork`), which must not
    /// touch this log's mutexes or buffers: another thread of the parent (the
    /// flusher, say) may have held one at the moment of the fork, and the child
    /// inherits it locked forever. The child's writer opens the target afresh
    /// (`O_APPEND`; standard output is duplicated) and writes synchronously, one
    /// `write(2)` per line, so nothing waits in a buffer when the child exits and
    /// lines of different processes never tear: appends to one file are atomic
    /// with respect to each other. It shares the reopen flag, which SIGHUP sets
    /// in whichever process receives it. Takes no lock; call it in the child.
    pub(crate) fn process_writer(&self) -> LogWriter {
        let Some(s) = &self.shared else {
            return LogWriter {
                shared: None,
                buffer: None,
            };
        };
        let file = match open_target(&s.target) {
            Ok(f) => f,
            Err(e) => {
                let msg = format!("servelab: child cannot open the access log: {e}\n");
                let _ = rustix::io::write(rustix::stdio::stderr(), msg.as_bytes());
                return LogWriter {
                    shared: None,
                    buffer: None,
                };
            }
        };
        let shared = Arc::new(Shared {
            mode: LogMode::Sync,
            target: s.target.clone(),
            sink: Mutex::new(Sink {
                file,
                failed: false,
            }),
            reopen: s.reopen.clone(),
            buffers: Mutex::new(Vec::new()),
            wake: Condvar::new(),
            wake_lock: Mutex::new(false),
        });
        LogWriter {
            shared: Some(shared),
            buffer: None,
        }
    }

    /// Writes out every buffered line and stops the flusher. Idempotent.
    pub(crate) fn close(&self) {
        if let Some(s) = &self.shared {
            *lock(&s.wake_lock) = true;
            s.wake.notify_all();
            if let Some(h) = lock(&self.flusher).take() {
                let _ = h.join();
            }
            s.flush_all();
        }
    }
}

impl Drop for AccessLog {
    fn drop(&mut self) {
        self.close();
    }
}

impl Shared {
    fn flush_loop(&self) {
        let mut stop = lock(&self.wake_lock);
        while !*stop {
            stop = self
                .wake
                .wait_timeout(stop, FLUSH_INTERVAL)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            drop(stop);
            self.flush_all();
            stop = lock(&self.wake_lock);
        }
    }

    /// Swaps every worker buffer out and writes each with one write. The list
    /// lock is held only to copy the list, so a new worker registering its buffer
    /// never waits for the disk.
    fn flush_all(&self) {
        let list: Vec<_> = lock(&self.buffers).clone();
        let mut spare = Vec::new();
        let mut sink = lock(&self.sink);
        for b in &list {
            {
                let mut guard = lock(b);
                if !guard.is_empty() {
                    // Hand the worker the spare (with its capacity) and take its lines.
                    mem::swap(&mut *guard, &mut spare);
                }
            }
            if !spare.is_empty() {
                sink.write(&spare, self);
                spare.clear();
            }
        }
        if self.reopen.load(Ordering::Acquire) {
            sink.write(&[], self);
        }
        drop(sink);
        drop(list);
        // A buffer only the log holds belongs to a worker that is gone; keep it
        // until its last lines are out.
        lock(&self.buffers).retain(|b| Arc::strong_count(b) > 1 || !lock(b).is_empty());
    }
}

impl LogWriter {
    /// A second handle on the same buffer (or the same sink): lines written
    /// through either stay in the order they were written. The `event` engine
    /// gives its workers the selector's, so that a connection's close line
    /// never reaches the log before the lines of its requests.
    pub(crate) fn share(&self) -> LogWriter {
        LogWriter {
            shared: self.shared.clone(),
            buffer: self.buffer.clone(),
        }
    }

    /// Is there a log? When not, skip formatting.
    pub(crate) fn enabled(&self) -> bool {
        self.shared.is_some()
    }

    /// Writes one complete line (which must end with `\n`).
    pub(crate) fn line(&mut self, line: &[u8]) {
        let Some(shared) = &self.shared else { return };
        match &self.buffer {
            Some(buf) => {
                let mut b = lock(buf);
                b.extend_from_slice(line);
                if b.len() >= EARLY_FLUSH {
                    drop(b);
                    shared.wake.notify_one();
                }
            }
            None => lock(&shared.sink).write(line, shared),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_of(path: &std::path::Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn hammer(mode: LogMode) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("access.log");
        let log = AccessLog::open(&LogTarget::File(path.clone()), mode).unwrap();
        std::thread::scope(|s| {
            for t in 0..8 {
                let mut w = log.writer();
                s.spawn(move || {
                    for i in 0..500 {
                        let line = format!("thread {t} line {i} {}\n", "x".repeat(i % 300));
                        w.line(line.as_bytes());
                    }
                });
            }
        });
        log.close();
        let lines = lines_of(&path);
        assert_eq!(lines.len(), 8 * 500);
        for l in &lines {
            let mut parts = l.split(' ');
            assert_eq!(parts.next(), Some("thread"));
            let _t = parts.next().unwrap();
            assert_eq!(parts.next(), Some("line"));
            let i: usize = parts.next().unwrap().parse().unwrap();
            assert_eq!(parts.next().unwrap().len(), i % 300, "torn line: {l}");
        }
    }

    #[test]
    fn sync_lines_whole_and_complete() {
        hammer(LogMode::Sync);
    }

    #[test]
    fn buffered_lines_whole_and_complete() {
        hammer(LogMode::Buffered);
    }

    #[test]
    fn reopen_moves_to_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.log");
        let log = AccessLog::open(&LogTarget::File(path.clone()), LogMode::Sync).unwrap();
        let mut w = log.writer();
        w.line(b"one\n");
        std::fs::rename(&path, dir.path().join("a.log.1")).unwrap();
        log.reopen_flag().unwrap().store(true, Ordering::Release);
        w.line(b"two\n");
        assert_eq!(lines_of(&path), ["two"]);
        assert_eq!(lines_of(&dir.path().join("a.log.1")), ["one"]);
    }

    #[test]
    fn off_is_disabled() {
        let log = AccessLog::open(&LogTarget::Off, LogMode::Buffered).unwrap();
        assert!(log.reopen_flag().is_none());
        let mut w = log.writer();
        assert!(!w.enabled());
        w.line(b"ignored\n");
    }
}
