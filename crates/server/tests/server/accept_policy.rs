//! The accept policy on every engine: a server whose descriptors run out
//! (`EMFILE`) while a client waits in the backlog must pause accepting (the
//! back-off of `driver/accept.rs`, 10 ms doubling to 500 ms), neither spin on
//! the listener that stays readable nor die, and serve that client once
//! descriptors are free again.
//!
//! Each engine runs in a child process (this test binary again, running
//! [`child_server`] only), so that lowering its `RLIMIT_NOFILE` touches
//! nothing of the tests running beside it. The parent lowers the soft limit of
//! every process of the server (prefork's workers too) to the lowest free
//! descriptor, so that the next `accept` fails with `EMFILE`; then it connects
//! and sends a request, waits [`EXHAUSTED`], and puts the limit back.
//!
//! What it checks: the server's CPU time over the exhausted window (summed
//! over every thread of every process of the server, from `schedstat`, in
//! nanoseconds) is under [`SPIN_CPU`], and the waiting client then gets its
//! 200. It is a bound on work done, not on speed, and the margins are wide
//! both ways: a loop that backs off wakes about eight times in the window and
//! uses well under a millisecond, while a loop that retries at once, or waits
//! for a listener that stays readable, uses the CPU it can get, which is the
//! whole window on a quiet machine and still a fifth of it with ten threads
//! competing for the two cores. An engine that stops accepting after the error
//! never answers (the read times out).
//!
//! How it was checked to fail: with `Accepting::failed` answering
//! `Step::Wait` for a resource error (no pause), every engine failed the CPU
//! bound; with the `async` accept loop ignoring `Step::Pause`, `async` alone
//! failed.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Resource, Rlimit, prlimit};
use servelab_server::Engine;

use crate::support::*;

/// Tells this binary that it is the child that runs a server.
const CHILD: &str = "SERVELAB_TEST_ACCEPT_POLICY_ENGINE";

/// How long the server stays out of descriptors with a client waiting.
const EXHAUSTED: Duration = Duration::from_secs(1);

/// Most server CPU over [`EXHAUSTED`] that is not spinning (5% of it).
const SPIN_CPU: Duration = Duration::from_millis(50);

/// Not a test of its own: the server half of
/// [`every_engine_pauses_accepting_when_out_of_descriptors`], run in a child
/// process. Without the variable it returns at once.
#[test]
fn child_server() {
    let Ok(engine) = std::env::var(CHILD) else {
        return;
    };
    let engine: Engine = engine.parse().unwrap();
    let dir = fixture();
    let server = start(dir.path(), engine, |c| c.workers = 1);
    println!("addr={}", server.local_addr());
    std::io::stdout().flush().unwrap();
    // Serve until the parent says so. A line, not the end of input: the
    // `fork` and `prefork` servers that other tests run in the parent fork
    // copies of it, which hold our standard input open too.
    let _ = std::io::stdin().read_line(&mut String::new());
    server.shutdown().unwrap();
}

/// The child process and every process below it.
fn tree(root: u32) -> Vec<u32> {
    let mut all = vec![root];
    let mut i = 0;
    while i < all.len() {
        let pid = all[i];
        for task in tasks(pid) {
            let path = format!("/proc/{pid}/task/{task}/children");
            let kids = std::fs::read_to_string(path).unwrap_or_default();
            all.extend(
                kids.split_whitespace()
                    .filter_map(|k| k.parse::<u32>().ok()),
            );
        }
        i += 1;
    }
    all
}

fn tasks(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// CPU time of every thread of `pids`, in nanoseconds (`schedstat`).
fn cpu_ns(pids: &[u32]) -> u64 {
    pids.iter()
        .flat_map(|&pid| tasks(pid).into_iter().map(move |t| (pid, t)))
        .filter_map(|(pid, t)| {
            let s = std::fs::read_to_string(format!("/proc/{pid}/task/{t}/schedstat")).ok()?;
            s.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

/// The descriptor the process would get next: the lowest one not open.
fn lowest_free_fd(pid: u32) -> Option<u64> {
    let open: Vec<u64> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    (0..).find(|fd| !open.contains(fd))
}

/// Sets the `RLIMIT_NOFILE` of `pid`; returns the limit it had, or nothing
/// if the process has gone (a `fork` child that finished its connection).
fn set_nofile(pid: u32, limit: Rlimit) -> Option<Rlimit> {
    prlimit(Some(Pid::from_raw(pid as i32)?), Resource::Nofile, limit).ok()
}

/// A soft limit of `soft` descriptors under the hard limit the child
/// inherited from this process.
fn soft_nofile(soft: u64) -> Rlimit {
    Rlimit {
        current: Some(soft),
        maximum: rustix::process::getrlimit(Resource::Nofile).maximum,
    }
}

/// The child, its address, and the rest of its standard output (read to the
/// end after it is told to stop, so that libtest there can say its result).
fn spawn_child(engine: Engine) -> (Child, SocketAddr, impl Iterator) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "accept_policy::child_server",
            "--exact",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, engine.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("{engine}: the child ended before it said its address"))
            .unwrap();
        // libtest's "test ... " has no newline before what the test prints.
        if let Some((_, a)) = line.split_once("addr=") {
            break a.trim().parse().unwrap();
        }
    };
    (child, addr, lines)
}

#[test]
fn every_engine_pauses_accepting_when_out_of_descriptors() {
    let mut failed = Vec::new();
    for engine in Engine::here() {
        let (mut child, addr, rest) = spawn_child(engine);
        // Serving one request first starts whatever an engine starts lazily.
        assert_eq!(simple(addr, "/hello.txt").status, 200, "{engine}: before");
        let pids = tree(child.id());
        let old: Vec<(u32, Rlimit)> = pids
            .iter()
            .filter_map(|&p| Some((p, set_nofile(p, soft_nofile(lowest_free_fd(p)?))?)))
            .collect();
        let mut client = connect(addr);
        client
            .write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        let before = cpu_ns(&pids);
        std::thread::sleep(EXHAUSTED);
        // Saturating: a `fork` child that ends meanwhile takes its CPU time
        // with it.
        let used = Duration::from_nanos(cpu_ns(&pids).saturating_sub(before));
        for (p, limit) in old {
            let _ = set_nofile(p, limit);
        }
        let mut out = Vec::new();
        let read = client.read_to_end(&mut out);
        let _ = child.stdin.take().unwrap().write_all(b"stop\n");
        rest.for_each(drop);
        let _ = child.wait();
        eprintln!("{engine}: {used:?} of server CPU over {EXHAUSTED:?} out of descriptors");
        if used >= SPIN_CPU {
            failed.push(format!(
                "{engine}: {used:?} of CPU in {EXHAUSTED:?} while accept failed with EMFILE: \
                 the accept loop spins instead of pausing"
            ));
        }
        if read.is_err() || out.is_empty() {
            failed.push(format!(
                "{engine}: the client waiting while descriptors were out was never served \
                 ({read:?}): the accept loop gave up"
            ));
        } else if parse_one(&out, false).0.status != 200 {
            failed.push(format!("{engine}: the waiting client got no 200"));
        }
    }
    // Every engine is run before the verdict, so one run names all that fail.
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
