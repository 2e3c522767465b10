//! What the Linux scheduler does on this machine, in the two numbers a
//! round-robin model needs: the quantum and the cost of a context switch.
//!
//! A round-robin model (seed 002's, `servelab sim --policy rr`) gives each ready
//! thread a quantum and charges a switch when it preempts. Linux has neither
//! number as such, so the lab finds them three ways and records all three:
//!
//! - **The slice setting** ([`read_slice`]). EEVDF kernels (6.6 and later) call
//!   it `base_slice_ns` and keep it in debugfs (`/sys/kernel/debug/sched/`); some
//!   builds export it as `/proc/sys/kernel/sched_base_slice_ns`. CFS kernels
//!   called the nearest thing `min_granularity_ns` (debugfs from 5.13, a sysctl
//!   before). debugfs is usually root-only; when no file can be read, the
//!   setting is the kernel's default, `0.75 ms x (1 + log2 min(CPUs, 8))`, and
//!   the record says it was derived, not read.
//! - **The effective slice** ([`measure_slice`]): two threads spin on one CPU
//!   and note every gap in their own clock readings; the run between two gaps is
//!   what the scheduler really gave. It differs from the setting when
//!   preemption waits for the scheduler tick (no high-resolution tick, the
//!   default): a 1.5 ms slice on a 250 Hz kernel runs for 4 ms.
//! - **The switch cost** ([`measure_switch`]): a ping-pong, as lmbench's
//!   `lat_ctx` does it: two threads on one CPU pass a byte back and forth over
//!   two pipes, so every hand-over is a switch; the time a single thread takes
//!   to write and read a pipe alone is subtracted. It is the direct cost of a
//!   switch (with a wake-up), not the cache misses that follow it.
//!
//! Both measurements pin their threads to one CPU and take about a second
//! together. They are measurements of a shared machine: the record keeps
//! the spread (median and quartiles) beside the figure.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// The kernel's slice setting and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SliceSetting {
    /// The slice, in seconds.
    pub seconds: f64,
    /// The file it was read from, or how it was derived when none was readable.
    pub source: String,
}

/// Where the setting may live, newest kernels first: (path under the root,
/// what the kernel calls it).
const SLICE_FILES: &[(&str, &str)] = &[
    ("sys/kernel/debug/sched/base_slice_ns", "EEVDF base slice"),
    ("proc/sys/kernel/sched_base_slice_ns", "EEVDF base slice"),
    (
        "sys/kernel/debug/sched/min_granularity_ns",
        "CFS minimum granularity",
    ),
    (
        "proc/sys/kernel/sched_min_granularity_ns",
        "CFS minimum granularity",
    ),
];

/// The kernel's default before scaling (`normalized_sysctl_sched_base_slice`,
/// and CFS's `min_granularity` before it).
const DEFAULT_SLICE_NS: f64 = 750_000.0;

/// Reads the slice setting under `root` (`/` on a live system); with no
/// readable file, derives the kernel's default for `cpus` online CPUs.
pub fn read_slice(root: &Path, cpus: usize) -> SliceSetting {
    for (file, what) in SLICE_FILES {
        let path = root.join(file);
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if let Ok(ns) = text.trim().parse::<u64>()
            && ns > 0
        {
            return SliceSetting {
                seconds: ns as f64 / 1e9,
                source: format!("{what}, read from /{file}"),
            };
        }
    }
    // SCHED_TUNABLESCALING_LOG, the default: factor 1 + ilog2(min(cpus, 8)).
    let factor = 1 + (cpus.clamp(1, 8) as u32).ilog2();
    SliceSetting {
        seconds: DEFAULT_SLICE_NS * f64::from(factor) / 1e9,
        source: format!(
            "not readable here (no such file, or debugfs not mounted or root-only); the \
             kernel's default 0.75 ms x {factor} for {cpus} CPUs"
        ),
    }
}

/// A measured duration: median and quartiles over samples, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Median.
    pub median: f64,
    /// First quartile.
    pub q1: f64,
    /// Third quartile.
    pub q3: f64,
    /// Number of samples.
    pub samples: usize,
}

impl Measured {
    /// Median and quartiles of `values` (seconds); `None` when empty.
    pub fn of(values: &mut [f64]) -> Option<Measured> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        Some(Measured {
            median: at(0.5),
            q1: at(0.25),
            q3: at(0.75),
            samples: values.len(),
        })
    }
}

/// Everything the lab knows about the scheduler of the server's CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSched {
    /// The CPU measured.
    pub cpu: usize,
    /// The slice setting.
    pub setting: SliceSetting,
    /// The effective slice of two CPU-bound threads.
    pub slice: Option<Measured>,
    /// The cost of one context switch.
    pub switch: Option<Measured>,
    /// Why a measurement is missing.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl KernelSched {
    /// Reads the setting and measures slice and switch on `cpu`.
    pub fn detect(cpu: usize) -> KernelSched {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut notes = Vec::new();
        let slice = measure_slice(cpu, Duration::from_secs(1))
            .map_err(|e| notes.push(format!("effective slice not measured: {e}")))
            .ok()
            .flatten();
        let switch = measure_switch(cpu, 20_000)
            .map_err(|e| notes.push(format!("switch cost not measured: {e}")))
            .ok();
        KernelSched {
            cpu,
            setting: read_slice(Path::new("/"), cpus),
            slice,
            switch,
            notes,
        }
    }

    /// The quantum a round-robin model should use: the effective slice when
    /// measured, the setting otherwise.
    pub fn quantum(&self) -> f64 {
        self.slice.map_or(self.setting.seconds, |m| m.median)
    }

    /// The switch cost a model should use (0 when it could not be measured).
    pub fn switch_cost(&self) -> f64 {
        self.switch.map_or(0.0, |m| m.median)
    }

    /// The values a plan uses when nothing was measured (planning a file
    /// without running it): the setting as read or derived, and no switch cost.
    pub fn unmeasured() -> KernelSched {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        KernelSched {
            cpu: 0,
            setting: read_slice(Path::new("/"), cpus),
            slice: None,
            switch: None,
            notes: vec!["not measured".into()],
        }
    }
}

/// Two threads spin on `cpu` for `run`; each records the stretches during
/// which its clock readings follow each other without a gap (it was running).
/// Only a stretch that began and ended with the other spinner's turn counts:
/// a gap where some third task ran (the machine is shared) says nothing about
/// the slice between two equal threads. The median stretch is the slice the
/// scheduler gave; `None` when no stretch qualified.
pub fn measure_slice(cpu: usize, run: Duration) -> std::io::Result<Option<Measured>> {
    // A gap longer than this is another thread's turn, not a cache miss or an
    // interrupt (those take a few microseconds).
    const GAP: Duration = Duration::from_micros(200);
    let start = Arc::new(AtomicBool::new(false));
    // Which spinner ran last: each writes its number on every turn of its loop
    // (both run on one CPU, so the line never bounces between caches).
    let last_runner = Arc::new(AtomicUsize::new(usize::MAX));
    let spin = |me: usize| {
        let (start, last_runner) = (start.clone(), last_runner.clone());
        move || -> std::io::Result<Vec<f64>> {
            crate::process::cpu::pin_current_thread(&[cpu])?;
            while !start.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            let t0 = Instant::now();
            let mut runs = Vec::new();
            let (mut began, mut last) = (t0, t0);
            // Whether the current stretch began after the sibling's turn.
            let mut clean = false;
            while last - t0 < run {
                let now = Instant::now();
                if now - last > GAP {
                    let sibling = last_runner.load(Ordering::Relaxed) == 1 - me;
                    if clean && sibling {
                        runs.push((last - began).as_secs_f64());
                    }
                    clean = sibling;
                    began = now;
                }
                last_runner.store(me, Ordering::Relaxed);
                last = now;
            }
            Ok(runs)
        }
    };
    let a = std::thread::spawn(spin(0));
    let b = std::thread::spawn(spin(1));
    start.store(true, Ordering::Release);
    let mut runs = join(a)?;
    runs.extend(join(b)?);
    Ok(Measured::of(&mut runs))
}

/// The cost of one context switch on `cpu`: `rounds` round trips of a byte
/// between two threads over two pipes, less the pipe cost alone.
pub fn measure_switch(cpu: usize, rounds: u32) -> std::io::Result<Measured> {
    let mut samples = Vec::new();
    // Five batches, so the record has a spread.
    for _ in 0..5 {
        let overhead = pipe_alone(cpu, rounds)?;
        let pingpong = ping_pong(cpu, rounds)?;
        let per_switch = pingpong.as_secs_f64() / (2.0 * f64::from(rounds))
            - overhead.as_secs_f64() / f64::from(rounds);
        samples.push(per_switch.max(0.0));
    }
    Measured::of(&mut samples).ok_or_else(|| std::io::Error::other("no ping-pong batch finished"))
}

/// `rounds` round trips between two threads pinned to `cpu`.
fn ping_pong(cpu: usize, rounds: u32) -> std::io::Result<Duration> {
    let (mut a_read, mut b_write) = pipe()?;
    let (mut b_read, mut a_write) = pipe()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        crate::process::cpu::pin_current_thread(&[cpu])?;
        let mut byte = [0u8];
        for _ in 0..rounds {
            b_read.read_exact(&mut byte)?;
            b_write.write_all(&byte)?;
        }
        Ok(())
    });
    let timed = std::thread::spawn(move || -> std::io::Result<Duration> {
        crate::process::cpu::pin_current_thread(&[cpu])?;
        let mut byte = [0u8];
        let t0 = Instant::now();
        for _ in 0..rounds {
            a_write.write_all(&byte)?;
            a_read.read_exact(&mut byte)?;
        }
        Ok(t0.elapsed())
    });
    let took = join(timed)?;
    join(echo)?;
    Ok(took)
}

/// `rounds` writes and reads of one byte through one pipe by one thread: the
/// part of a ping-pong hand-over that is not the switch.
fn pipe_alone(cpu: usize, rounds: u32) -> std::io::Result<Duration> {
    let t = std::thread::spawn(move || -> std::io::Result<Duration> {
        crate::process::cpu::pin_current_thread(&[cpu])?;
        let (mut r, mut w) = pipe()?;
        let mut byte = [0u8];
        let t0 = Instant::now();
        for _ in 0..rounds {
            w.write_all(&byte)?;
            r.read_exact(&mut byte)?;
        }
        Ok(t0.elapsed())
    });
    join(t)
}

/// A pipe's (read end, write end), as files so that `Read` and `Write` work.
fn pipe() -> std::io::Result<(std::fs::File, std::fs::File)> {
    let (r, w) = rustix::pipe::pipe()?;
    Ok((std::fs::File::from(r), std::fs::File::from(w)))
}

fn join<T>(h: std::thread::JoinHandle<std::io::Result<T>>) -> std::io::Result<T> {
    h.join()
        .unwrap_or_else(|_| Err(std::io::Error::other("measuring thread panicked")))
}

impl KernelSched {
    /// The report's section on the kernel figures a model used.
    pub fn html(&self) -> String {
        use crate::html::esc;
        let ms = |s: f64| format!("{:.3} ms", s * 1e3);
        let us = |s: f64| format!("{:.2} &micro;s", s * 1e6);
        let spread = |m: &Measured, f: &dyn Fn(f64) -> String| {
            format!(
                "{} (quartiles {} .. {}, {} samples)",
                f(m.median),
                f(m.q1),
                f(m.q3),
                m.samples
            )
        };
        let slice = self
            .slice
            .as_ref()
            .map_or("not measured".to_string(), |m| spread(m, &ms));
        let switch = self
            .switch
            .as_ref()
            .map_or("not measured".to_string(), |m| spread(m, &us));
        let notes = if self.notes.is_empty() {
            String::new()
        } else {
            format!("<p>{}</p>", esc(&self.notes.join("; ")))
        };
        format!(
            "<h2>The kernel's scheduler (CPU {})</h2><dl class=\"meta\">\
             <dt>slice setting</dt><dd>{} ({})</dd>\
             <dt>effective slice</dt><dd>{slice}: the run of a CPU-bound thread between two turns of \
             another, measured by two spinners; the model's quantum</dd>\
             <dt>context switch</dt><dd>{switch}: pipe ping-pong less the pipe alone; the model's \
             switch cost</dd></dl>{notes}\n",
            self.cpu,
            ms(self.setting.seconds),
            esc(&self.setting.source),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_readable_setting_wins_and_nanoseconds_become_seconds() {
        let root = tempfile::tempdir().unwrap();
        let put = |file: &str, text: &str| {
            let p = root.path().join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("proc/sys/kernel/sched_min_granularity_ns", "3000000\n");
        let s = read_slice(root.path(), 2);
        assert_eq!(s.seconds, 0.003);
        assert!(s.source.contains("CFS minimum granularity"), "{}", s.source);
        put("sys/kernel/debug/sched/base_slice_ns", "2800000\n");
        let s = read_slice(root.path(), 2);
        assert_eq!(s.seconds, 0.0028);
        assert_eq!(
            s.source,
            "EEVDF base slice, read from /sys/kernel/debug/sched/base_slice_ns"
        );
    }

    #[test]
    fn without_a_readable_setting_the_default_is_derived_and_says_so() {
        let root = tempfile::tempdir().unwrap();
        let two = read_slice(root.path(), 2);
        assert_eq!(two.seconds, 0.0015);
        assert!(
            two.source.starts_with("not readable here"),
            "{}",
            two.source
        );
        assert_eq!(read_slice(root.path(), 1).seconds, 0.00075);
        // The scaling stops at 8 CPUs: 1 + log2(8) = 4.
        assert_eq!(read_slice(root.path(), 64).seconds, 0.003);
        // A file that is not a number is skipped, not read as 0.
        let p = root.path().join("proc/sys/kernel/sched_base_slice_ns");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "fast\n").unwrap();
        assert_eq!(read_slice(root.path(), 2).seconds, 0.0015);
    }

    #[test]
    fn quartiles_of_samples() {
        let m = Measured::of(&mut [5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!((m.q1, m.median, m.q3, m.samples), (2.0, 3.0, 4.0, 5));
        assert!(Measured::of(&mut []).is_none());
    }
}
