//! No heap allocation per request on the hot path of the event-loop engines.
//!
//! A counting global allocator wraps the system one; the server runs in this
//! process on its own thread; the client (also here) uses only a stack buffer.
//! After a warm-up (buffers grown, the file cached, the timer heap sized), a
//! thousand keep-alive requests must not allocate at all, anywhere in the
//! process. One test in this binary, so no other test allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use servelab_server::{Config, Engine, Server, Waits};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counter is a plain atomic and allocates nothing.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, SeqCst);
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const REQ: &[u8] = b"GET /1k.txt HTTP/1.1\r\nHost: t\r\nUser-Agent: alloc-test\r\n\r\n";

/// Sends one request and reads exactly one response of `len` bytes (0: learn
/// it from this response's head). Returns the length.
fn request(s: &mut TcpStream, buf: &mut [u8; 4096], len: usize) -> usize {
    s.write_all(REQ).unwrap();
    let mut got = 0;
    loop {
        let n = s.read(&mut buf[got..]).unwrap();
        assert!(n > 0, "server closed");
        got += n;
        if len > 0 {
            if got >= len {
                assert_eq!(got, len, "one response at a time");
                assert!(buf.starts_with(b"HTTP/1.1 200 OK\r\n"));
                return len;
            }
            continue;
        }
        if let Some(end) = buf[..got].windows(4).position(|w| w == b"\r\n\r\n") {
            // The body is the 1 KiB file.
            if got >= end + 4 + 1024 {
                return end + 4 + 1024;
            }
        }
    }
}

#[test]
fn keep_alive_requests_do_not_allocate_on_epoll_or_reactor() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.txt"), "a".repeat(1024)).unwrap();
    // The loops that answer on their own thread (epoll, reactor).
    let loops = Engine::ALL
        .iter()
        .copied()
        .filter(|e| e.waits() == Waits::EventLoop);
    for engine in loops {
        let mut config = Config::new(dir.path());
        config.engine = engine;
        config.workers = 1;
        let server = Server::bind(config).unwrap().spawn();
        let mut s = TcpStream::connect(server.local_addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 4096];
        let len = request(&mut s, &mut buf, 0);
        for _ in 0..200 {
            request(&mut s, &mut buf, len);
        }
        let before = ALLOCS.load(SeqCst);
        for _ in 0..1000 {
            request(&mut s, &mut buf, len);
        }
        let allocs = ALLOCS.load(SeqCst) - before;
        assert_eq!(allocs, 0, "{engine}: {allocs} allocations in 1000 requests");
        drop(s);
        server.shutdown().unwrap();
    }
}
