//! CPU used on the machine by processes other than the server and the lab.
//!
//! The lab measures a server on one CPU with the load generator on another,
//! and reads both processes' CPU clocks; neither sees a third process that
//! takes a CPU away for part of a window (a build, a copy of a target
//! directory, another benchmark). A window disturbed that way is not a
//! property of the server: the reference `h2` run of 2026-12-04 measured
//! reactor's HTTP/1.1 point at 18k requests/s, the server 25% busy and a
//! p99 of 5–6 ms, in the minute two helper sessions copied build directories
//! (`cp -a` of several GB) beside it; epoll's point just before it gave 103k,
//! and reactor alone under `servelab load -c 10` afterwards 139k. Nothing in
//! the report said so. So each window also records the
//! machine's CPU time from `/proc/stat` (user, nice and system of every
//! CPU) less the server tree's and the lab process's (the load generator's
//! threads are the lab's), and [`crate::check`] flags a point whose windows
//! lent more than a small share of a CPU to others.
//!
//! `/proc/stat` counts in USER_HZ ticks ([`TICK_SECONDS`]), sampled at the
//! scheduler tick, while the two processes' clocks are exact: the two part
//! by the sampling's error, a few ticks per CPU, which on a 10 s window is
//! a fraction of a percent of a CPU against the check's 10% (a figure that
//! comes out below zero is read as zero). Interrupt and softirq time is left out of the machine's side
//! (the kernel may charge the loopback's packet work there rather than to
//! the process that caused it), and so is steal time (the hypervisor's, not
//! another process's on this machine).

use crate::process::cpu::{TICK_SECONDS, process_cpu_ns};

/// CPU seconds of the whole machine and of the lab process, read together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MachineReading {
    /// user + nice + system of every CPU, in seconds.
    machine_s: f64,
    /// The lab process's own CPU (every thread, the load generator's too).
    lab_s: f64,
}

impl MachineReading {
    /// Reads both now; `None` where `/proc/stat` or the lab's clock cannot be
    /// read (not Linux, or /proc not mounted): the window then records no
    /// figure and the point no check, rather than a made-up zero.
    pub fn now() -> Option<MachineReading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        Some(MachineReading {
            machine_s: busy_seconds(&stat)?,
            lab_s: process_cpu_ns(std::process::id())? as f64 / 1e9,
        })
    }

    /// CPU seconds used between `self` and `end` by processes other than
    /// the lab and the server, which used `server_s` (never below zero: the
    /// ticks' sampling can put the machine's figure a hair under the exact
    /// clocks').
    pub fn others_s(self, end: MachineReading, server_s: f64) -> f64 {
        let machine = end.machine_s - self.machine_s;
        let lab = end.lab_s - self.lab_s;
        (machine - lab - server_s).max(0.0)
    }
}

/// user + nice + system of the `cpu` line of `/proc/stat`, in seconds.
fn busy_seconds(stat: &str) -> Option<f64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    // cpu user nice system idle iowait irq softirq steal guest guest_nice;
    // guest time is already inside user.
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(3)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    (ticks.len() == 3).then(|| ticks.iter().sum::<u64>() as f64 * TICK_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_is_user_nice_and_system_of_the_summary_line() {
        let stat = "cpu  100 20 300 9000 5 60 70 80 0 0\ncpu0 50 10 150 4500 2 30 35 40 0 0\n";
        let s = busy_seconds(stat).expect("a cpu line");
        assert!((s - 4.20).abs() < 1e-9, "{s}");
        assert_eq!(busy_seconds("cpu0 1 2 3 4\n"), None, "no summary line");
        assert_eq!(
            busy_seconds("cpu  1 x 3 4\n"),
            None,
            "a field that is not a number"
        );
    }

    #[test]
    fn others_are_the_machine_less_the_lab_and_the_server_and_never_negative() {
        let a = MachineReading {
            machine_s: 10.0,
            lab_s: 1.0,
        };
        let b = MachineReading {
            machine_s: 30.0,
            lab_s: 9.0,
        };
        assert!((a.others_s(b, 10.0) - 2.0).abs() < 1e-9);
        assert_eq!(a.others_s(b, 13.0), 0.0);
        let now = MachineReading::now().expect("/proc/stat and the lab's clock on Linux");
        assert!(now.machine_s > 0.0 && now.lab_s > 0.0, "{now:?}");
    }
}
