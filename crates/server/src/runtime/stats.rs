//! Server counters: what happened, exactly, for `--status` and for experiments.
//!
//! Plain relaxed atomics: every counter is an independent tally, read without a
//! snapshot guarantee across counters (a reader may see a request counted before
//! its bytes). Each sits on its own cache line so that workers on different cores
//! do not fight over one line for unrelated counters.
//!
//! Shared memory, so the process engines count exactly: the atomics live in one
//! anonymous `MAP_SHARED` mapping made when the server is built, before any
//! `fork`. A child process (a `fork` connection or a `prefork` worker) inherits
//! the mapping itself, not a copy of it, so its `fetch_add` lands on the very
//! cache line the parent and its siblings update, and `/-/status` read in any
//! process is the total of all of them with no aggregation step and no message
//! passing. Atomic read-modify-write on shared memory is coherent across
//! processes exactly as across threads. The one thing a child cannot do is finish
//! its bookkeeping if it is killed mid-request: `open` and `in_flight` then keep
//! its share (the `fork` parent corrects `open` for a child that died by a signal,
//! never below zero).
//!
//! If the kernel refuses the mapping (it never does for one page short of memory
//! exhaustion) the counters fall back to the heap and the process engines would
//! count only what the parent sees; the server says so on stderr.
//!
//! Per-request counters go through a [`Tally`], one per worker context
//! (`Local`). A `fetch_add` is a locked read-modify-write, a full memory
//! barrier even on a line no other core touches, and a keep-alive request made
//! six of them. So each worker thread owns a
//! shard of those counters that only it writes, with a plain load and store (no
//! lock: one writer cannot lose its own updates), and a snapshot sums the shared
//! block and every shard. A reader may see a shard's counter one store late,
//! which relaxed atomics allowed already. The shards are plain heap memory: a
//! forked child gets a copy, so a child process's tally (and a worker beyond the
//! [`SHARDS`] in use) counts in the shared block, with `fetch_add`, as before.
#![allow(unsafe_code)] // mmap/munmap of the shared counter block; see SAFETY notes.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::runtime::service_time::{self, BUCKETS, ServiceTimes};

/// One counter on its own cache line.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Counter(AtomicU64);

impl Counter {
    fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }
    fn sub(&self, n: u64) {
        self.0.fetch_sub(n, Relaxed);
    }
    fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// The counters themselves: all zeros is the initial state, which is what a
/// fresh anonymous mapping holds.
#[derive(Debug, Default)]
#[repr(C)]
struct Block {
    accepted: Counter,
    open: Counter,
    dropped: Counter,
    in_flight: Counter,
    abandoned: Counter,
    bytes_sent: Counter,
    /// Responses by status class: index 1..=5 for 1xx..5xx, 0 unused.
    by_class: [Counter; 6],
    /// Completely written responses per service-time bucket (see `service_time.rs`).
    service: [Counter; BUCKETS],
    /// Sum of their service times in nanoseconds.
    service_sum_ns: Counter,
    /// TLS handshakes done: full, resumed; and failed (see `driver/wire.rs`).
    tls_full: Counter,
    tls_resumed: Counter,
    tls_failed: Counter,
    /// Handshakes done per handshake-time bucket (the service-time bounds).
    handshake: [Counter; BUCKETS],
    /// Sum of their handshake times in nanoseconds.
    handshake_sum_ns: Counter,
    /// Connections that became HTTP/2 (see `conn/h2.rs`), and those open now.
    h2_conns: Counter,
    h2_open: Counter,
    /// HTTP/2 streams that carried a request, and those being served now.
    h2_streams: Counter,
    h2_streams_open: Counter,
}

/// Where the [`Block`] lives.
#[derive(Debug)]
enum Storage {
    /// A `MAP_SHARED` anonymous mapping of `len` bytes, shared with children.
    Shared { block: NonNull<Block>, len: usize },
    /// Fallback when the mapping could not be made.
    Heap(Box<Block>),
}

// SAFETY: the mapping is only ever accessed through `&Block`, whose fields are
// atomics (Sync); the pointer is valid from construction until `Drop`.
unsafe impl Send for Storage {}
// SAFETY: as above: shared access is through atomics only.
unsafe impl Sync for Storage {}

impl Storage {
    fn new() -> Storage {
        let len = std::mem::size_of::<Block>();
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choice
        // aliases nothing. It is page-aligned (more than Block's 64-byte
        // alignment) and zero-filled, and all-zero bytes are a valid Block
        // (AtomicU64 zero). It is unmapped only in Drop.
        let mapped = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::SHARED,
            )
        };
        match mapped.ok().and_then(|p| NonNull::new(p.cast::<Block>())) {
            Some(block) => Storage::Shared { block, len },
            None => {
                eprintln!(
                    "servelab: cannot map shared counters; process engines will count only the parent"
                );
                Storage::Heap(Box::default())
            }
        }
    }

    fn block(&self) -> &Block {
        match self {
            // SAFETY: valid and initialised (see `new`) until Drop, which needs
            // `&mut self`, so no reference outlives the mapping.
            Storage::Shared { block, .. } => unsafe { block.as_ref() },
            Storage::Heap(b) => b,
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Storage::Shared { block, len } = *self {
            // SAFETY: the mapping was made in `new` with this length, and no
            // reference into it can outlive `self`.
            let _ = unsafe { rustix::mm::munmap(block.as_ptr().cast(), len) };
        }
    }
}

/// How many worker threads at once get a shard of their own (see the module
/// docs). More threads at once (a `--workers` above about 60, or the `thread`
/// engine's 65th concurrent connection) count with `fetch_add`: correct, as
/// before, only not lock-free.
pub(crate) const SHARDS: usize = 64;

/// The per-request counters of one worker thread, written by that thread only.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Shard {
    /// Started minus finished here; a request may start in one shard and
    /// finish in another, so this wraps and only the sum is meaningful.
    in_flight: AtomicU64,
    abandoned: AtomicU64,
    bytes_sent: AtomicU64,
    by_class: [AtomicU64; 6],
    service: [AtomicU64; BUCKETS],
    service_sum_ns: AtomicU64,
}

/// Adds `n` to a counter that only the calling thread writes: a plain load
/// and store, no lock prefix. Wrapping, so `in_flight` may go "below zero" in
/// one shard (see [`Shard`]).
fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

/// The live counters of one server, shared by its threads and, through a shared
/// mapping, by its child processes.
#[derive(Debug)]
pub struct Stats {
    started: Instant,
    storage: Storage,
    /// One per worker thread that holds a [`Tally`] (see the module docs).
    shards: Box<[Shard]>,
    /// Indices of the shards no tally holds.
    free: Mutex<Vec<u16>>,
}

/// A copy of the counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    /// Seconds since the server started.
    pub uptime_secs: u64,
    /// Time since the server started, to the nanosecond.
    pub uptime: std::time::Duration,
    /// Connections accepted.
    pub accepted: u64,
    /// Connections open now.
    pub open: u64,
    /// Connections refused with 503 because the queue or the connection cap was full.
    pub dropped: u64,
    /// Requests being answered now.
    pub in_flight: u64,
    /// Responses whose client had gone before they were completely written.
    pub abandoned: u64,
    /// Bytes written to clients (heads and bodies).
    pub bytes_sent: u64,
    /// Responses completely written, by status class: `[1xx, 2xx, 3xx, 4xx,
    /// 5xx]`; an abandoned response is counted in `abandoned` only.
    pub responses: [u64; 5],
    /// Service times of the responses completely written.
    pub service: ServiceTimes,
    /// TLS handshakes (all zero without TLS).
    pub tls: TlsCounts,
    /// HTTP/2 connections and streams (all zero without HTTP/2).
    pub h2: H2Counts,
}

/// HTTP/2 counters of a [`Snapshot`]: connections and streams apart, since
/// one connection carries many requests at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct H2Counts {
    /// Connections that spoke HTTP/2 (also counted in `accepted`).
    pub connections: u64,
    /// HTTP/2 connections open now.
    pub open: u64,
    /// Streams that carried a request.
    pub streams: u64,
    /// Streams being served now.
    pub open_streams: u64,
}

/// TLS handshake counters of a [`Snapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TlsCounts {
    /// Full handshakes done.
    pub full: u64,
    /// Handshakes that resumed a session (a ticket or a session ID).
    pub resumed: u64,
    /// Handshakes that failed: not TLS (plain HTTP included), malformed, or
    /// a client that closed mid-handshake.
    pub failed: u64,
    /// Time from accept to the handshake done, per bucket (the bounds of
    /// the service-time histogram).
    pub handshake: ServiceTimes,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            started: Instant::now(),
            storage: Storage::new(),
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            // Popped from the end: shard 0 first.
            free: Mutex::new((0..SHARDS as u16).rev().collect()),
        }
    }
}

impl Stats {
    fn c(&self) -> &Block {
        self.storage.block()
    }
    pub(crate) fn conn_opened(&self) {
        self.c().accepted.add(1);
        self.c().open.add(1);
    }
    pub(crate) fn conn_closed(&self) {
        self.c().open.sub(1);
    }
    /// The parent of a process that died by a signal closes its books: never
    /// below zero, in case the child had closed them itself just before.
    pub(crate) fn conn_lost(&self) {
        let _ = self
            .c()
            .open
            .0
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
    }
    pub(crate) fn dropped(&self) {
        self.c().dropped.add(1);
    }
    pub(crate) fn request_started(&self) {
        self.c().in_flight.add(1);
    }
    pub(crate) fn request_finished(&self, abandoned: bool) {
        self.c().in_flight.sub(1);
        if abandoned {
            self.c().abandoned.add(1);
        }
    }
    pub(crate) fn response(&self, status: u16) {
        let class = usize::from(status / 100).min(5);
        self.c().by_class[class].add(1);
    }
    pub(crate) fn sent(&self, bytes: u64) {
        self.c().bytes_sent.add(bytes);
    }
    /// A response was completely written `d` after its request was parsed.
    pub(crate) fn served(&self, d: Duration) {
        self.c().service[service_time::bucket(d)].add(1);
        self.c().service_sum_ns.add(service_time::nanos(d));
    }

    /// A TLS handshake finished, `d` after the connection was accepted.
    pub(crate) fn tls_handshake(&self, resumed: bool, d: Duration) {
        if resumed {
            self.c().tls_resumed.add(1);
        } else {
            self.c().tls_full.add(1);
        }
        self.c().handshake[service_time::bucket(d)].add(1);
        self.c().handshake_sum_ns.add(service_time::nanos(d));
    }
    /// A TLS handshake failed.
    pub(crate) fn tls_failed(&self) {
        self.c().tls_failed.add(1);
    }

    /// A connection became HTTP/2 (`opened`) or an HTTP/2 one ended.
    pub(crate) fn h2_conn(&self, opened: bool) {
        if opened {
            self.c().h2_conns.add(1);
            self.c().h2_open.add(1);
        } else {
            self.c().h2_open.sub(1);
        }
    }

    /// An HTTP/2 stream's request began to be served (`opened`), or its
    /// service ended (written, reset or abandoned).
    pub(crate) fn h2_stream(&self, opened: bool) {
        if opened {
            self.c().h2_streams.add(1);
            self.c().h2_streams_open.add(1);
        } else {
            self.c().h2_streams_open.sub(1);
        }
    }

    /// A tally for a worker thread: its own shard if one is free, else the
    /// shared counters. Not for a forked child, whose copy of the shards
    /// nobody reads: that is [`Stats::process_tally`].
    pub(crate) fn tally(self: &Arc<Self>) -> Tally {
        let shard = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        Tally {
            stats: Arc::clone(self),
            shard,
        }
    }

    /// A tally for a forked child process: the shared counters only.
    pub(crate) fn process_tally(self: &Arc<Self>) -> Tally {
        Tally {
            stats: Arc::clone(self),
            shard: None,
        }
    }

    /// The counters now.
    pub fn snapshot(&self) -> Snapshot {
        let c = self.c();
        let sum = |own: u64, f: &dyn Fn(&Shard) -> &AtomicU64| {
            self.shards
                .iter()
                .fold(own, |acc, s| acc.wrapping_add(f(s).load(Relaxed)))
        };
        Snapshot {
            uptime_secs: self.started.elapsed().as_secs(),
            uptime: self.started.elapsed(),
            accepted: c.accepted.get(),
            open: c.open.get(),
            dropped: c.dropped.get(),
            in_flight: sum(c.in_flight.get(), &|s| &s.in_flight),
            abandoned: sum(c.abandoned.get(), &|s| &s.abandoned),
            bytes_sent: sum(c.bytes_sent.get(), &|s| &s.bytes_sent),
            responses: [1, 2, 3, 4, 5].map(|i| sum(c.by_class[i].get(), &|s| &s.by_class[i])),
            service: ServiceTimes {
                buckets: std::array::from_fn(|i| sum(c.service[i].get(), &|s| &s.service[i])),
                sum_ns: sum(c.service_sum_ns.get(), &|s| &s.service_sum_ns),
            },
            tls: TlsCounts {
                full: c.tls_full.get(),
                resumed: c.tls_resumed.get(),
                failed: c.tls_failed.get(),
                handshake: ServiceTimes {
                    buckets: std::array::from_fn(|i| c.handshake[i].get()),
                    sum_ns: c.handshake_sum_ns.get(),
                },
            },
            h2: H2Counts {
                connections: c.h2_conns.get(),
                open: c.h2_open.get(),
                streams: c.h2_streams.get(),
                open_streams: c.h2_streams_open.get(),
            },
        }
    }
}

/// The per-request counters as one worker context counts them: into its own
/// shard when it has one (plain stores), else into the shared block (see the
/// module docs). One per `Local`; it gives its shard back when dropped. Its
/// methods take `&mut self`, so the one-writer rule of a shard is the borrow
/// checker's: only the holder of the tally writes it.
#[derive(Debug)]
pub(crate) struct Tally {
    stats: Arc<Stats>,
    shard: Option<u16>,
}

impl Tally {
    fn own(&self) -> Option<&Shard> {
        self.shard.map(|i| &self.stats.shards[usize::from(i)])
    }
    pub(crate) fn request_started(&mut self) {
        match self.own() {
            Some(s) => bump(&s.in_flight, 1),
            None => self.stats.request_started(),
        }
    }
    pub(crate) fn request_finished(&mut self, abandoned: bool) {
        match self.own() {
            Some(s) => {
                bump(&s.in_flight, 1u64.wrapping_neg());
                if abandoned {
                    bump(&s.abandoned, 1);
                }
            }
            None => self.stats.request_finished(abandoned),
        }
    }
    pub(crate) fn sent(&mut self, bytes: u64) {
        match self.own() {
            Some(s) => bump(&s.bytes_sent, bytes),
            None => self.stats.sent(bytes),
        }
    }
    /// A response with `status` was completely written `d` after its request
    /// was parsed: its class, its service time, and one request fewer in
    /// flight, with one look for the shard.
    pub(crate) fn completed(&mut self, status: u16, d: Duration) {
        match self.own() {
            Some(s) => {
                bump(&s.by_class[usize::from(status / 100).min(5)], 1);
                bump(&s.service[service_time::bucket(d)], 1);
                bump(&s.service_sum_ns, service_time::nanos(d));
                bump(&s.in_flight, 1u64.wrapping_neg());
            }
            None => {
                self.stats.response(status);
                self.stats.served(d);
                self.stats.request_finished(false);
            }
        }
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        if let Some(i) = self.shard.take() {
            // The counts stay in the shard; the next tally adds to them.
            self.stats
                .free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_gauges() {
        let s = Stats::default();
        s.conn_opened();
        s.conn_opened();
        s.conn_closed();
        s.response(200);
        s.response(404);
        s.response(503);
        s.response(299);
        s.request_started();
        s.request_finished(true);
        let snap = s.snapshot();
        assert_eq!(snap.accepted, 2);
        assert_eq!(snap.open, 1);
        assert_eq!(snap.responses, [0, 2, 0, 1, 1]);
        assert_eq!(snap.in_flight, 0);
        assert_eq!(snap.abandoned, 1);
    }

    #[test]
    fn lost_connection_never_goes_below_zero() {
        let s = Stats::default();
        s.conn_opened();
        s.conn_lost();
        s.conn_lost();
        assert_eq!(s.snapshot().open, 0);
    }

    /// The point of the shared mapping: a child's updates are the parent's.
    #[test]
    fn forked_child_counts_in_parent() {
        let s = Stats::default();
        assert!(matches!(s.storage, Storage::Shared { .. }));
        s.sent(5);
        // SAFETY: the child touches only atomics in the shared mapping and then
        // calls _exit, which is async-signal-safe; it allocates nothing and takes
        // no lock, so other test threads holding locks at the fork do not matter.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            s.sent(7);
            s.response(200);
            s.served(Duration::from_millis(3));
            // SAFETY: leaves the child without running the parent's destructors.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just made; `status` is a valid out pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(r, pid);
        let snap = s.snapshot();
        assert_eq!(snap.bytes_sent, 12);
        assert_eq!(snap.responses[1], 1);
        assert_eq!(snap.service.count(), 1);
        assert_eq!(snap.service.sum_ns, 3_000_000);
        assert_eq!(
            snap.service.buckets[service_time::bucket(Duration::from_millis(3))],
            1
        );
    }

    /// A worker's own shard and the shared block add up, whichever a request
    /// started and finished in; a shard goes back when its tally is dropped.
    #[test]
    fn tallies_add_up_across_shards_and_the_shared_block() {
        let s = Arc::new(Stats::default());
        let mut a = s.tally();
        let mut b = s.tally();
        assert!(a.shard.is_some() && b.shard.is_some());
        assert_ne!(a.shard, b.shard);
        a.request_started();
        a.request_started();
        b.request_finished(false);
        assert_eq!(s.snapshot().in_flight, 1, "started in a, finished in b");
        a.sent(10);
        b.sent(5);
        s.sent(1);
        a.completed(200, Duration::from_millis(3));
        assert_eq!(s.snapshot().in_flight, 0);
        b.request_started();
        b.completed(404, Duration::from_micros(70));
        b.request_started();
        b.request_finished(true);
        let snap = s.snapshot();
        assert_eq!(snap.in_flight, 0);
        assert_eq!(snap.abandoned, 1);
        assert_eq!(snap.bytes_sent, 16);
        assert_eq!(snap.responses, [0, 1, 0, 1, 0]);
        assert_eq!(snap.service.count(), 2);
        assert_eq!(snap.service.sum_ns, 3_070_000);
        let freed = a.shard;
        drop(a);
        let mut c = s.tally();
        assert_eq!(c.shard, freed, "a dropped tally's shard is reused");
        c.sent(4);
        assert_eq!(s.snapshot().bytes_sent, 20, "and what it held still counts");
        // A child process's tally counts in the shared block.
        let mut p = s.process_tally();
        assert!(p.shard.is_none());
        p.request_started();
        p.completed(500, Duration::from_millis(1));
        let snap = s.snapshot();
        assert_eq!((snap.responses[4], snap.in_flight), (1, 0));
        assert_eq!(snap.service.count(), 3);
    }

    /// Beyond `SHARDS` tallies at once, the rest share the locked counters and
    /// still count; threads writing their own shards lose nothing.
    #[test]
    fn more_tallies_than_shards_still_count() {
        let s = Arc::new(Stats::default());
        let mut tallies: Vec<Tally> = (0..SHARDS + 3).map(|_| s.tally()).collect();
        assert_eq!(tallies.iter().filter(|t| t.shard.is_none()).count(), 3);
        std::thread::scope(|scope| {
            for t in &mut tallies[SHARDS - 2..] {
                scope.spawn(move || {
                    for _ in 0..10_000 {
                        t.request_started();
                        t.sent(1);
                        t.completed(200, Duration::from_micros(5));
                    }
                });
            }
        });
        let snap = s.snapshot();
        assert_eq!(snap.bytes_sent, 50_000);
        assert_eq!(snap.responses[1], 50_000);
        assert_eq!(snap.service.count(), 50_000);
        assert_eq!(snap.service.sum_ns, 50_000 * 5_000);
        assert_eq!(snap.in_flight, 0);
    }
}
