//! Where the server's CPU time comes from: its processes (`--pid`, each with
//! its whole tree, read in nanoseconds by the lab's [`cpu`](servelab_lab::cpu)), its
//! cgroup (`cpu.stat`'s `usage_usec`), or nowhere.
//!
//! Why both: a server started by hand has a pid; one in a container has a
//! cgroup that holds every process it forks, including those that exit between
//! two readings. Without either, the demand can only come from response times,
//! and the fit says so.

use std::path::PathBuf;

use serde::Serialize;

use servelab_lab::cpu::{CpuReading, TICK_SECONDS};
use servelab_lab::{LabError, Result};

/// Largest `cpu.stat` file read: the kernel's is a few hundred bytes.
const MAX_CPU_STAT: u64 = 64 * 1024;

/// The server's CPU, as the user pointed at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "at")]
pub enum CpuSource {
    /// Not measured: the demand comes from response times and the plateau.
    None,
    /// These processes and all their descendants.
    Pids(Vec<u32>),
    /// A cgroup v2 directory (its `cpu.stat`).
    Cgroup(PathBuf),
}

impl CpuSource {
    /// Whether the server's CPU is measured at all.
    pub fn measured(&self) -> bool {
        !matches!(self, CpuSource::None)
    }

    /// Nanoseconds of CPU used so far; `Err` says why it cannot be read.
    pub(crate) fn read_ns(&self) -> Result<Option<f64>> {
        match self {
            CpuSource::None => Ok(None),
            CpuSource::Pids(pids) => {
                let mut total = 0.0;
                for &pid in pids {
                    let r = CpuReading::of_tree(pid);
                    if r.processes == 0 {
                        return Err(LabError::Other(format!(
                            "--pid {pid}: no such process (or its CPU clock cannot be read)"
                        )));
                    }
                    total += r.ns as f64 + r.child_ticks as f64 * TICK_SECONDS * 1e9;
                }
                Ok(Some(total))
            }
            CpuSource::Cgroup(dir) => {
                let path = dir.join("cpu.stat");
                let text = read_limited(&path).map_err(|e| {
                    LabError::Other(format!(
                        "--cgroup {}: cannot read cpu.stat: {e}",
                        dir.display()
                    ))
                })?;
                usage_usec(&text).map(|us| Some(us as f64 * 1e3)).ok_or_else(|| {
                    LabError::Other(format!(
                        "--cgroup {}: cpu.stat has no usage_usec line (is it a cgroup v2 directory?)",
                        dir.display()
                    ))
                })
            }
        }
    }
}

fn read_limited(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(path)?
        .take(MAX_CPU_STAT)
        .read_to_string(&mut s)?;
    Ok(s)
}

/// The `usage_usec` value of a cgroup v2 `cpu.stat`.
fn usage_usec(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("usage_usec "))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_usage_is_read_from_its_line() {
        let text = "usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n";
        assert_eq!(usage_usec(text), Some(1_234_567));
        assert_eq!(usage_usec("user_usec 5\n"), None);
    }

    #[test]
    fn this_process_tree_has_cpu_and_a_dead_pid_is_an_error() {
        let me = CpuSource::Pids(vec![std::process::id()]);
        assert!(me.read_ns().unwrap().unwrap() > 0.0);
        let gone = CpuSource::Pids(vec![u32::MAX - 1]);
        assert!(gone.read_ns().is_err());
        assert_eq!(CpuSource::None.read_ns().unwrap(), None);
    }
}
