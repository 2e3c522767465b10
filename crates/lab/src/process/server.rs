//! A server under test as a child process: started pinned to the server CPU, in
//! its own process group, waited for until it accepts connections, and always
//! stopped (SIGTERM to the whole group, then SIGKILL) when dropped, so that a
//! failed point, an error or Ctrl-C never leaves a server or a forked worker
//! behind. A server that exits before listening is sorted by the typed
//! [`StartFailure`] that servelab writes where [`REPORT_ENV`] says, never by
//! the wording of its stderr.

use std::ffi::OsString;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group};

use servelab_server::{REPORT_ENV, StartFailure, StartFailureKind};

use crate::process::cpu;

/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a server did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartError {
    /// The engine, flag or peer does not exist here; the point is unavailable.
    Unavailable(String),
    /// It exists but failed; the point failed.
    Failed(String),
    /// Ctrl-C arrived while waiting.
    Interrupted,
}

/// A running server process.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its command line, for the results.
    pub command: String,
    stderr: PathBuf,
}

impl ServerProcess {
    /// Starts `argv` (which makes it listen on `port`) pinned to the server's
    /// CPUs, then pins the calling thread back to the load's; waits until it
    /// accepts connections.
    pub fn start(
        argv: &[OsString],
        port: u16,
        dir: &Path,
        placement: &cpu::Placement,
        stop: &AtomicBool,
    ) -> Result<ServerProcess, StartError> {
        let stderr_path = dir.join(format!("server-{port}.stderr"));
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| StartError::Failed(format!("{}: {e}", stderr_path.display())))?;
        let report = dir.join(format!("server-{port}.start.json"));
        match std::fs::remove_file(&report) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(StartError::Failed(format!("{}: {e}", report.display())));
            }
            _ => {}
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env(REPORT_ENV, &report)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .current_dir(dir)
            .process_group(0);
        cpu::pin_current_thread(&placement.server)
            .map_err(|e| StartError::Failed(format!("pinning to the server CPU: {e}")))?;
        let spawned = cmd.spawn();
        cpu::pin_current_thread(&placement.load)
            .map_err(|e| StartError::Failed(format!("pinning to the load CPUs: {e}")))?;
        let child = spawned.map_err(|e| {
            StartError::Unavailable(format!("cannot start {}: {e}", argv[0].to_string_lossy()))
        })?;
        let mut server = ServerProcess {
            child,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
            command: argv
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            stderr: stderr_path,
        };
        let start = Instant::now();
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(StartError::Interrupted);
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                let what = format!("exited with {status} before listening");
                return Err(match StartFailure::read(&report) {
                    Ok(Some(failure)) => sort(&what, failure),
                    Ok(None) => StartError::Failed(with_line(&what, &server.stderr_tail())),
                    Err(e) => StartError::Failed(format!(
                        "{}; its start report {} is unreadable: {e}",
                        with_line(&what, &server.stderr_tail()),
                        report.display()
                    )),
                });
            }
            if TcpStream::connect_timeout(&server.addr, Duration::from_millis(200)).is_ok() {
                return Ok(server);
            }
            if start.elapsed() > START_TIMEOUT {
                return Err(StartError::Failed(format!(
                    "not listening on {} after {START_TIMEOUT:?}",
                    server.addr
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id (the process group's leader).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last lines of its standard error.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        let lines: Vec<&str> = text.lines().rev().take(3).collect();
        lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
    }

    /// Stops the whole process group: SIGTERM, up to 2 s of grace, then SIGKILL.
    pub fn stop(&mut self) {
        let Some(pid) = Pid::from_raw(self.child.id() as i32) else {
            return;
        };
        let _ = kill_process_group(pid, Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Forked workers may outlive the leader: the group gets SIGKILL regardless.
        let _ = kill_process_group(pid, Signal::KILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A free loopback port (the listener is closed again; a race with another program
/// is possible and shows as a failed start).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// A start failure from the server's own report: a flag or engine that this
/// build does not have means the point is unavailable, anything else failed.
fn sort(what: &str, failure: StartFailure) -> StartError {
    let msg = with_line(what, &failure.message);
    match failure.kind {
        StartFailureKind::UnknownFlag | StartFailureKind::UnknownEngine => {
            StartError::Unavailable(format!("not in this build: {msg}"))
        }
        _ => StartError::Failed(msg),
    }
}

/// `what: line`, or `what` when there is no line.
fn with_line(what: &str, line: &str) -> String {
    if line.trim().is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", line.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `sh -c script` as a server on a free port.
    fn start_sh(script: &str) -> StartError {
        let dir = tempfile::tempdir().unwrap();
        let argv: Vec<OsString> = ["sh", "-c", script].map(OsString::from).to_vec();
        let port = free_port().unwrap();
        let stop = AtomicBool::new(false);
        let placement = cpu::Placement {
            server: vec![],
            load: vec![],
        };
        ServerProcess::start(&argv, port, dir.path(), &placement, &stop).unwrap_err()
    }

    #[test]
    fn a_failed_start_is_sorted_by_the_report_not_by_stderr_wording() {
        // The stderr says what the old wording match took for a missing flag;
        // the report says the address is in use, and wins.
        let e = start_sh(
            r#"echo "error: unexpected argument '--delay' found" >&2
            printf '{"kind":"address_in_use","message":"cannot listen"}' > "$SERVELAB_START_REPORT"
            exit 2"#,
        );
        assert!(
            matches!(e, StartError::Failed(ref m) if m.contains("cannot listen")),
            "{e:?}"
        );
        let e = start_sh(
            r#"echo "servelab: error: something" >&2
            printf '{"kind":"unknown_engine","message":"no engine nginx"}' > "$SERVELAB_START_REPORT"
            exit 2"#,
        );
        assert!(
            matches!(e, StartError::Unavailable(ref m) if m.contains("no engine nginx")),
            "{e:?}"
        );
    }

    #[test]
    fn a_server_that_exits_at_once_without_a_report_failed_with_its_stderr() {
        let e = start_sh("echo \"error: unexpected argument '--delay' found\" >&2; exit 3");
        assert!(
            matches!(e, StartError::Failed(ref m) if m.contains("--delay")),
            "{e:?}"
        );
        let e = start_sh("echo 'not json' > \"$SERVELAB_START_REPORT\"; exit 3");
        assert!(
            matches!(e, StartError::Failed(ref m) if m.contains("unreadable")),
            "{e:?}"
        );
    }

    #[test]
    fn a_listening_child_is_found_and_its_whole_group_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port().unwrap();
        // python3 is in CI's system packages; a child of the shell must die too.
        if Command::new("python3").arg("-c").arg("1").status().is_err() {
            eprintln!("skipped: no python3");
            return;
        }
        let script = format!(
            "sleep 600 & exec python3 -c 'import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\",{port})); s.listen(); time.sleep(600)'"
        );
        let argv: Vec<OsString> = vec!["sh".into(), "-c".into(), script.into()];
        let stop = AtomicBool::new(false);
        let placement = cpu::Placement {
            server: vec![],
            load: vec![],
        };
        let mut s = ServerProcess::start(&argv, port, dir.path(), &placement, &stop).unwrap();
        let pgid = s.pid();
        assert!(s.alive());
        s.stop();
        assert!(!s.alive());
        // No live (non-zombie) process of the group is left; an orphan killed by
        // SIGKILL may stay a zombie until its new parent reaps it.
        let live = |pgid: u32| {
            std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    return false;
                };
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    return false;
                };
                let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 1..]
                    .split_whitespace()
                    .collect();
                f[2] == pgid.to_string() && f[0] != "Z" && f[0] != "X"
            })
        };
        let mut tries = 0;
        while live(pgid) && tries < 100 {
            std::thread::sleep(Duration::from_millis(20));
            tries += 1;
        }
        assert!(!live(pgid), "a process of the group survived");
    }
}
