//! CPU placement and CPU accounting.
//!
//! Server and load generator run on separate CPUs when there are two or more, so
//! that the load generator's work does not count against the server. Placement is
//! done without `unsafe` and without `taskset`: the lab pins its own thread to the
//! server's CPU, spawns the server (a child inherits its parent thread's
//! affinity, and so do all the threads and processes it makes later), then pins
//! itself back to the load generator's CPUs before the load threads start.
//!
//! Server CPU is read from `/proc/PID/stat` for the whole process tree (user +
//! system, plus reaped children), so the process engines are
//! charged for their workers.

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

/// /proc reports CPU time in USER_HZ, which Linux fixes at 100 for user space on
/// every architecture whatever the kernel's internal HZ: one tick is 10 ms.
pub const TICK_SECONDS: f64 = 0.01;

/// Fewest ticks per process of the tree for a CPU figure to count as measured.
///
/// Each process's counter is read truncated to whole ticks at the start and at
/// the end of a repeat, so a difference is off by up to one tick per process.
/// With at least 10 ticks per process that is at most 10%; below it, a quick
/// run of 0.02 s that read 0 or 1 tick would print a CPU cost of 0 while the
/// server was busy the whole time.
pub const MIN_TICKS: u64 = 10;

/// CPU used so far by a process tree: user + system ticks, including reaped
/// children, of `pid` and all its live descendants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuReading {
    /// Ticks of [`TICK_SECONDS`].
    pub ticks: u64,
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
            ticks: 0,
            processes: 0,
        };
        let mut todo = vec![pid];
        while let Some(p) = todo.pop() {
            if let Some(f) = stat_fields(p) {
                // Fields after the command: state(0) ppid(1) ... utime(11) stime(12)
                // cutime(13) cstime(14).
                reading.ticks += f[11..15]
                    .iter()
                    .filter_map(|s| s.parse::<u64>().ok())
                    .sum::<u64>();
                reading.processes += 1;
            }
            todo.extend(children.get(&p).into_iter().flatten());
        }
        reading
    }

    /// Microseconds of CPU per request between `self` (the start) and `end`, or
    /// why it cannot be measured.
    pub fn per_request_us(self, end: CpuReading, requests: u64) -> Result<f64, String> {
        let ticks = end.ticks.saturating_sub(self.ticks);
        let processes = self.processes.max(end.processes).max(1);
        let needed = MIN_TICKS * processes;
        if requests == 0 {
            return Err("no request completed".into());
        }
        if ticks < needed {
            let s = if ticks == 1 { "" } else { "s" };
            return Err(format!(
                "server CPU was {ticks} tick{s} of 10 ms over {requests} requests; \
                 at least {needed} are needed ({MIN_TICKS} per process), so the run was too short"
            ));
        }
        Ok(ticks as f64 * TICK_SECONDS / requests as f64 * 1e6)
    }
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
    fn too_few_ticks_are_unmeasurable_never_zero() {
        let at = |ticks, processes| CpuReading { ticks, processes };
        let e = at(100, 1).per_request_us(at(101, 1), 21_000).unwrap_err();
        assert!(
            e.contains("was 1 tick of") && e.contains("at least 10"),
            "{e}"
        );
        let e = at(0, 4).per_request_us(at(30, 4), 1000).unwrap_err();
        assert!(e.contains("at least 40"), "{e}");
        // 20 ticks = 0.2 s over 1000 requests: 200 us each.
        let us = at(0, 1).per_request_us(at(20, 1), 1000).unwrap();
        assert!((us - 200.0).abs() < 1e-9, "{us}");
        assert!(at(0, 1).per_request_us(at(50, 1), 0).is_err());
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
