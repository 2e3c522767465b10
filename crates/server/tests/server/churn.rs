//! The thread and process engines leave nothing behind: many connections in a
//! row leave no thread, no zombie and no open socket; the cap makes clients
//! wait instead of refusing them; a prefork worker that dies is replaced.
//!
//! Tests run in parallel in one process, so nothing here counts the whole
//! process's descriptors or threads: each check is tied to one server. Server
//! sockets are found in `/proc/net/tcp` by the server's port (a leaked accepted
//! socket shows as ESTABLISHED or CLOSE_WAIT with an owner), threads by their
//! name `sl-conn-<port>`, processes by being our children holding the server's
//! listening socket. The 100,000-connection version is `bench/conn-churn.sh`.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use servelab_server::{Capacity, Engine};

use crate::support::*;

/// Waits (bounded) until `f` is true; returns its last value.
fn eventually(mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        if f() {
            return true;
        }
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Server-side sockets on `port` that some process still holds, by TCP state
/// (hex, as in /proc/net/tcp), listening sockets excluded.
fn held_sockets(port: u16) -> Vec<String> {
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let mut held = Vec::new();
    for line in tcp.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let local_port = f[1].rsplit(':').next().unwrap();
        let state = f[3];
        let inode = f[9];
        if u16::from_str_radix(local_port, 16).unwrap() == port && state != "0A" && inode != "0" {
            held.push(format!("state {state} inode {inode}"));
        }
    }
    held
}

/// Inode of the listening socket on `port`.
fn listen_inode(port: u16) -> String {
    let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
    tcp.lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| {
            f[3] == "0A"
                && u16::from_str_radix(f[1].rsplit(':').next().unwrap(), 16).unwrap() == port
        })
        .map(|f| f[9].to_owned())
        .expect("the listener")
}

/// Our child processes: (pid, state letter, holds the socket `inode`).
fn children(inode: &str) -> Vec<(u32, char, bool)> {
    let me = std::process::id();
    let needle = format!("socket:[{inode}]");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // After the ")" that ends the command name: state, then ppid.
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split(' ');
        let state = f.next().unwrap().chars().next().unwrap();
        let ppid: u32 = f.next().unwrap().parse().unwrap();
        if ppid != me {
            continue;
        }
        let holds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| {
                d.flatten().any(|e| {
                    std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy() == needle)
                })
            })
            .unwrap_or(false);
        out.push((pid, state, holds));
    }
    out
}

fn zombies() -> usize {
    // Any zombie child of this process: other tests' children are reaped
    // promptly too, so the count must reach zero.
    children("-").iter().filter(|c| c.1 == 'Z').count()
}

/// Threads of this process named `name`.
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .count()
}

fn churn(addr: SocketAddr, n: usize) {
    for i in 0..n {
        // Alternate close and keep-alive-then-client-close.
        let req: &[u8] = if i % 2 == 0 {
            b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        } else {
            b"GET /hello.txt HTTP/1.0\r\n\r\n"
        };
        let raw = exchange(addr, req);
        assert!(raw.starts_with(b"HTTP/1.1 200"), "connection {i}");
    }
}

#[test]
fn many_connections_leave_nothing_behind() {
    for engine in [Engine::Thread, Engine::Fork, Engine::Prefork] {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| c.status = true);
        let addr = server.local_addr();
        let port = addr.port();
        let inode = listen_inode(port);
        churn(addr, 1500);
        assert!(
            eventually(|| held_sockets(port).is_empty()),
            "{engine}: sockets still held: {:?}",
            held_sockets(port)
        );
        if engine == Engine::Thread {
            let name = format!("sl-conn-{port}");
            assert!(
                eventually(|| threads_named(&name) == 0),
                "{engine}: {} connection threads left",
                threads_named(&name)
            );
        }
        // Fork: a child that is still alive holds its connection's socket (seen
        // above) and one that ended unreaped is a zombie (checked below).
        if engine == Engine::Prefork {
            let workers = children(&inode).iter().filter(|c| c.2).count();
            assert_eq!(workers, 2, "{engine}: the two workers, no more");
        }
        let s = server.stats().snapshot();
        assert_eq!(s.accepted, 1500, "{engine}");
        assert_eq!(s.responses[1], 1500, "{engine}");
        assert_eq!(s.open, 0, "{engine}");
        server.shutdown().unwrap();
        assert!(
            children(&inode).iter().all(|c| !c.2),
            "{engine}: a process outlived shutdown: {:?}",
            children(&inode)
        );
        assert!(eventually(|| zombies() == 0), "{engine}: zombies");
    }
}

/// At `--max-conns` the thread and fork engines stop accepting: the next client
/// waits in the backlog and is served when a slot frees, never refused.
#[test]
fn cap_makes_clients_wait_not_fail() {
    let capped = Engine::here().filter(|e| e.capacity() == Capacity::MaxConns);
    for engine in capped {
        let dir = fixture();
        let server = start(dir.path(), engine, |c| {
            c.max_conns = 1;
            c.status = true;
        });
        let addr = server.local_addr();
        let mut first = connect(addr);
        first
            .write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 4096];
        let n = first.read(&mut buf).unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        // The first connection stays open (keep-alive): the cap is reached.
        let mut second = connect(addr);
        second
            .write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap();
        second
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let early = second.read(&mut buf);
        assert!(
            early.is_err(),
            "{engine}: the second client was answered while the first held the only slot: {early:?}"
        );
        drop(first);
        second
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut rest = Vec::new();
        second.read_to_end(&mut rest).unwrap();
        assert!(
            rest.starts_with(b"HTTP/1.1 200"),
            "{engine}: served after the slot freed"
        );
        let s = server.stats().snapshot();
        assert_eq!(s.dropped, 0, "{engine}");
        assert_eq!(s.responses[4], 0, "{engine}: no 503");
        server.shutdown().unwrap();
    }
}

#[test]
fn prefork_replaces_a_dead_worker() {
    let dir = fixture();
    let server = start(dir.path(), Engine::Prefork, |_| {});
    let addr = server.local_addr();
    let inode = listen_inode(addr.port());
    assert_eq!(simple(addr, "/hello.txt").status, 200);
    let holders = || -> Vec<u32> {
        children(&inode)
            .iter()
            .filter(|c| c.2)
            .map(|c| c.0)
            .collect()
    };
    // A child that another test of this process forks at the same moment
    // holds a copy of every socket until it closes the foreign ones, so a
    // third holder may show for an instant: wait for the two workers alone.
    assert!(eventually(|| holders().len() == 2), "{:?}", holders());
    let workers = holders();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &workers[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(
        eventually(|| {
            let now: Vec<u32> = children(&inode)
                .iter()
                .filter(|c| c.2 && c.1 != 'Z')
                .map(|c| c.0)
                .collect();
            now.len() == 2 && !now.contains(&workers[0])
        }),
        "a new worker replaced the dead one: {:?}",
        children(&inode)
    );
    for _ in 0..20 {
        assert_eq!(simple(addr, "/hello.txt").status, 200);
    }
    server.shutdown().unwrap();
    // As above: a child forked by another test may hold a copy of the
    // listening socket for an instant; the workers themselves must be gone.
    assert!(
        eventually(|| children(&inode).iter().all(|c| !c.2)),
        "workers gone: {:?}",
        children(&inode)
    );
    assert!(eventually(|| zombies() == 0), "no zombie");
}
