//! Whether a `--pid` is the server: one of the sockets its process tree holds
//! open must be the one listening on the URL's port.
//!
//! Why check: the CPU of the wrong process gives a demand near zero (a shell)
//! or one from another workload, and the fit would be confidently wrong. Linux
//! lists listening sockets with their inodes in `/proc/net/tcp` and `tcp6`;
//! a process's descriptors link to `socket:[INODE]` in `/proc/PID/fd`.

use std::collections::HashSet;

/// TCP state LISTEN in `/proc/net/tcp`.
const LISTEN: &str = "0A";

/// Most descriptors looked at per process (a server with more is read in part).
const MAX_FDS: usize = 1 << 16;

/// Most processes of one tree looked at.
const MAX_PROCESSES: usize = 4096;

/// The inodes of the sockets listening on `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> HashSet<u64> {
    let mut out = HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(table) {
            out.extend(inodes_in(&text, port));
        }
    }
    out
}

/// The inodes of a `/proc/net/tcp` table's rows that listen on `port`.
fn inodes_in(text: &str, port: u16) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local = f.get(1)?;
            let p = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
            (p == port && *f.get(3)? == LISTEN).then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The pid and its descendants.
fn tree(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // The command may hold spaces and parentheses: the fields start after the last ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|s| s.parse::<u32>().ok());
            if let Some(ppid) = ppid {
                parent_of.push((p, ppid));
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() && out.len() < MAX_PROCESSES {
        let p = out[i];
        out.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// Why `pid` is not the server listening on `port`, or `None` when its tree
/// holds that listening socket.
pub(crate) fn not_listening(pid: u32, port: u16) -> Option<String> {
    if std::fs::metadata(format!("/proc/{pid}")).is_err() {
        return Some(format!("--pid {pid}: no such process"));
    }
    let wanted = listening_inodes(port);
    if wanted.is_empty() {
        return Some(format!(
            "--pid {pid}: nothing on this machine listens on port {port} (is the URL's server local?)"
        ));
    }
    let mut readable = false;
    for p in tree(pid) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{p}/fd")) else {
            continue;
        };
        readable = true;
        for fd in fds.flatten().take(MAX_FDS) {
            let Ok(link) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = link
                .to_str()
                .and_then(|s| s.strip_prefix("socket:["))
                .and_then(|s| s.strip_suffix(']'))
                .and_then(|s| s.parse::<u64>().ok());
            if inode.is_some_and(|i| wanted.contains(&i)) {
                return None;
            }
        }
    }
    Some(if readable {
        format!("--pid {pid} is not the server: neither it nor its children listen on port {port}")
    } else {
        format!(
            "--pid {pid}: its open files cannot be read (another user's process?), so it cannot be checked as the server on port {port}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listening_row_is_found_by_port_and_state() {
        let text = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n\
   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0 100 0 0 10 0\n";
        assert_eq!(inodes_in(text, 8080), vec![4242]);
        assert!(inodes_in(text, 8081).is_empty());
    }

    #[test]
    fn this_process_is_the_server_of_its_own_listener_and_not_of_another_port() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        assert_eq!(not_listening(std::process::id(), port), None);
        // A child that holds no socket of ours is not the server (pid 1 would
        // be: in a container it is this process's ancestor).
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let why = not_listening(child.id(), port);
        let _ = child.kill();
        let _ = child.wait();
        assert!(why.unwrap().contains("is not the server"));
        drop(l);
    }
}
