//! CPU placement and CPU accounting.
//!
//! Server and load generator run on separate CPUs when there are two or more, so
//! that the load generator's work does not count against the server. Placement is
//! done without `unsafe` and without `taskset`: the lab pins its own thread to the
//! server's CPU, spawns the server (a child inherits its parent thread's
//! affinity, and so do all the threads and processes it makes later), then pins
//! itself back to the load generator's CPUs before the load threads start.
//!
//! Server CPU is read in nanoseconds from each live process's CPU clock, for the
//! whole process tree, plus the reaped children's ticks from `/proc/PID/stat`,
//! so that the process engines are charged for their workers and a 10 us request
//! is not measured with a 10 ms clock.

use std::collections::HashMap;

use rustix::thread::{CpuSet, sched_getaffinity, sched_setaffinity};

/// CPUs this process may use, ascending.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        Err(_) => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

/// Where the server and the load generator run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// CPUs of the server (empty: not pinned).
    pub server: Vec<usize>,
    /// CPUs of the load generator (empty: not pinned).
    pub load: Vec<usize>,
}

impl Placement {
    /// The server on the first allowed CPU and the load on the others; no pinning
    /// on a single CPU.
    pub fn plan() -> Placement {
        let cpus = allowed_cpus();
        if cpus.len() < 2 {
            return Placement {
                server: Vec::new(),
                load: Vec::new(),
            };
        }
        Placement {
            server: vec![cpus[0]],
            load: cpus[1..].to_vec(),
        }
    }

    /// Whether server and load are on separate CPUs.
    pub fn separate(&self) -> bool {
        !self.server.is_empty()
    }

    /// A sentence for the report.
    pub fn describe(&self) -> String {
        if self.separate() {
            format!(
                "server pinned to CPU {}, load generator to CPU {} (separate CPUs)",
                list(&self.server),
                list(&self.load)
            )
        } else {
            "only one CPU: server and load generator share it, so the load generator's work \
             competes with the server's (figures are lower than on two CPUs)"
                .into()
        }
    }
}

fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Pins the calling thread to `cpus` (nothing when empty). Threads and processes it
/// starts afterwards inherit the placement.
pub fn pin_current_thread(cpus: &[usize]) -> std::io::Result<()> {
    if cpus.is_empty() {
        return Ok(());
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c);
    }
    sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// /proc reports reaped children's CPU time in USER_HZ, which Linux fixes at 100
/// for user space on every architecture whatever the kernel's internal HZ: one
/// tick is 10 ms.
pub const TICK_SECONDS: f64 = 0.01;

/// Largest share of a CPU figure that the ticks of reaped children may leave
/// uncertain before the figure counts as unmeasurable.
///
/// Only `--engine fork` reaps children during a repeat: their CPU reaches the
/// parent's `cutime`/`cstime`, which /proc gives in whole ticks only (the sum is
/// kept in nanoseconds and truncated when read, so a difference is off by less
/// than one tick). Everything else is read in nanoseconds.
pub const MAX_TICK_SHARE: f64 = 0.10;

/// CPU used so far by a process tree: `pid` and all its live descendants.
///
/// Each live process is read through its POSIX CPU clock
/// (`clock_getcpuclockid` + `clock_gettime`): nanoseconds, and, unlike
/// `/proc/PID/task/*/schedstat`, it keeps the time of threads that have
/// already exited (the thread engine starts one per connection). Children
/// that were reaped are added from `cutime + cstime` in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuReading {
    /// Nanoseconds of CPU of the live processes (all their threads, dead ones too).
    pub ns: u64,
    /// Ticks of [`TICK_SECONDS`] of reaped children.
    pub child_ticks: u64,
    /// Processes of the tree that were read.
    pub processes: u64,
}

impl CpuReading {
    /// Reads the tree of `pid` now.
    pub fn of_tree(pid: u32) -> CpuReading {
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                    continue;
                };
                if let Some(fields) = stat_fields(p)
                    && let Some(ppid) = fields.get(1).and_then(|s| s.parse::<u32>().ok())
                {
                    children.entry(ppid).or_default().push(p);
                }
            }
        }
        let mut reading = CpuReading {
            ns: 0,
            child_ticks: 0,
            processes: 0,
        };
        let mut todo = vec![pid];
        while let Some(p) = todo.pop() {
            if let (Some(ns), Some(f)) = (process_cpu_ns(p), stat_fields(p)) {
                // Fields after the command: state(0) ppid(1) ... cutime(13) cstime(14).
                reading.ns += ns;
                reading.child_ticks += f[13..15]
                    .iter()
                    .filter_map(|s| s.parse::<u64>().ok())
                    .sum::<u64>();
                reading.processes += 1;
            }
            todo.extend(children.get(&p).into_iter().flatten());
        }
        reading
    }

    /// Seconds of CPU the server used between `self` (the start) and `end`, or
    /// why it cannot be measured. Over a window it gives the server's CPU share
    /// U; over the requests finished, the CPU per request D (U = X·D).
    pub fn seconds(self, end: CpuReading) -> Result<f64, String> {
        if self.processes == 0 || end.processes == 0 {
            return Err("the server's CPU clock could not be read".into());
        }
        let ticks = end.child_ticks.saturating_sub(self.child_ticks);
        // A process that exits between the readings takes its clock with it,
        // and its time reappears in its parent's child ticks: the sum stays.
        let total = (end.ns as f64 + end.child_ticks as f64 * TICK_SECONDS * 1e9)
            - (self.ns as f64 + self.child_ticks as f64 * TICK_SECONDS * 1e9);
        if total <= 0.0 {
            return Err("the server used no CPU that its clocks could see".into());
        }
        if ticks > 0 && TICK_SECONDS * 1e9 > MAX_TICK_SHARE * total {
            return Err(format!(
                "reaped children's CPU is known to 10 ms only, and the whole figure was {:.1} ms, \
                 so the repeat was too short",
                total / 1e6
            ));
        }
        Ok(total / 1e9)
    }

    /// Microseconds of CPU per request between `self` (the start) and `end`, or
    /// why it cannot be measured.
    pub fn per_request_us(self, end: CpuReading, requests: u64) -> Result<f64, String> {
        if requests == 0 {
            return Err("no request completed".into());
        }
        Ok(self.seconds(end)? * 1e6 / requests as f64)
    }
}

/// Nanoseconds of CPU that process `pid` has used (all its threads, live and
/// exited), from its POSIX process CPU clock; `None` when it is gone.
#[allow(unsafe_code)] // clock_getcpuclockid(3) + clock_gettime(2); see SAFETY notes.
pub(crate) fn process_cpu_ns(pid: u32) -> Option<u64> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: `clock` is a valid, writable clockid_t for the call to fill in;
    // the function reads nothing else. Linux lets any process read another's
    // process CPU clock (posix-cpu-timers: `pid_for_clock`), as /proc does.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; `clock` came from the call
    // above (if the process exited since, the call fails with EINVAL).
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(u64::try_from(ts.tv_sec).ok()? * 1_000_000_000 + u64::try_from(ts.tv_nsec).ok()?)
}

/// The fields of /proc/PID/stat after the `(comm)` field.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<String> = rest.split_whitespace().map(String::from).collect();
    (f.len() > 15).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_uses_some_cpu_and_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        let r = CpuReading::of_tree(std::process::id());
        assert!(r.processes >= 1);
        assert!(stat_fields(std::process::id()).is_some());
    }

    #[test]
    fn cpu_is_read_in_nanoseconds_and_never_zero() {
        let at = |ns, child_ticks| CpuReading {
            ns,
            child_ticks,
            processes: 1,
        };
        // 1.5 ms over 1000 requests: 1.5 us each, a figure ticks could not see.
        let us = at(0, 0).per_request_us(at(1_500_000, 0), 1000).unwrap();
        assert!((us - 1.5).abs() < 1e-9, "{us}");
        let e = at(5, 0).per_request_us(at(5, 0), 1000).unwrap_err();
        assert!(e.contains("no CPU"), "{e}");
        assert!(at(0, 0).per_request_us(at(50, 0), 0).is_err());
        // A reaped child's tick in a 20 ms figure: 50% uncertain, unmeasurable.
        let e = at(0, 0).per_request_us(at(10_000_000, 1), 10).unwrap_err();
        assert!(e.contains("10 ms only"), "{e}");
        // The same tick in 2 s of CPU: 0.5%, measured.
        assert!(at(0, 0).per_request_us(at(1_990_000_000, 1), 10).is_ok());
    }

    #[test]
    fn this_process_clock_moves_in_nanoseconds() {
        let a = process_cpu_ns(std::process::id()).unwrap();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        let b = process_cpu_ns(std::process::id()).unwrap();
        assert!(b > a);
        assert_eq!(process_cpu_ns(u32::MAX), None);
    }

    #[test]
    fn placement_separates_when_it_can() {
        let p = Placement::plan();
        if allowed_cpus().len() >= 2 {
            assert!(p.separate());
            assert!(p.server.iter().all(|c| !p.load.contains(c)));
        } else {
            assert!(p.describe().contains("one CPU"));
        }
    }

    #[test]
    fn pinning_a_thread_to_an_allowed_cpu_works() {
        let cpus = allowed_cpus();
        std::thread::spawn(move || pin_current_thread(&cpus[..1]))
            .join()
            .unwrap()
            .unwrap();
    }
}
