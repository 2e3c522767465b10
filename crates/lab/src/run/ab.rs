//! `servelab lab ab`: one experiment measured with two `servelab` binaries,
//! interleaved, so that a comparison of the two can tell a change of the
//! build from a change of the machine.
//!
//! Two separate runs measure A, then, minutes later, B. Their repeats sample the
//! noise within each run, not the drift between them: on this machine a rerun
//! of the same binary 37 minutes later was 3-7% slower at every point, and
//! Welch's t marked 12 of 16 figures. Here every point is measured with A and
//! with B together: both binaries' servers start (each on its own free port,
//! both pinned to the server's CPUs as in `lab run`) and warm up, then their
//! repeats alternate in ABBA order by repeat: A B, B A, A B, B A, ... when A
//! leads the point, B A, A B, ... when B does ([`order_at`]). Each repeat is
//! its own load run, as in `lab run`. The two sides take the same number of
//! repeats: the pair goes on until the protocol's rule
//! ([`crate::protocol::decide`]) stops both at the same count, or the cap.
//!
//! Why by repeat and not by point: the first `lab ab` measured all of A's
//! repeats of a point on A's server, then all of B's on B's (ABBA only from
//! point to point). With the same binary on both sides on a quiet machine it
//! marked 3 of 16 figures of `connections`, all at 512 connections, where B was
//! 3.8-4.1% slower on both engines, whichever side went first. Drift within the
//! ~40 s of a point, or what the first side leaves behind (5,000 new
//! connections a second leave TIME_WAIT sockets, the page cache, the
//! scheduler's state), then lands on one side's repeats only, and Welch's t,
//! with four tight repeats a side, marks it. By repeat, anything slower than
//! one window hits both sides alike, a linear drift cancels over each four
//! repeats, and what a repeat leaves behind is met by A's and B's next repeats
//! equally often. The servers stay up between repeats (an idle server costs
//! nothing but memory), so each side keeps one warmed-up server per point, as
//! in `lab run`.
//!
//! Why ABBA and not A B, A B, ...: plain alternation puts A first in every
//! pair of repeats, so an order effect (the second of two back-to-back runs
//! being slower) would look like a difference between the binaries. The side
//! that leads a point's first repeat still alternates by point in ABBA order
//! ([`first_at`]): the points of an experiment usually cycle through its
//! servers (thread, epoll, thread, epoll, ...), so each of two or three
//! cycling servers is led by A as often as by B, and with an odd number of
//! repeats neither side leads more pairs over the run.
//!
//! Peers (nginx, h2o, ...) are not servelab and serve the same on both sides;
//! they are measured on both sides all the same. Their A/B differences are a
//! control: the same server measured twice under the same design, so a peer
//! that `lab compare` marks shows what chance and residual drift do.
//!
//! A point that fails on one side (say, an engine that binary A does not have)
//! is recorded on that side, its server stopped at once, and the other side
//! measures the rest of its repeats alone, with a note saying so.
//!
//! The pair is written as `OUT/a` and `OUT/b`, two ordinary run directories
//! (`lab report` and `lab compare` read them), each recording in its protocol
//! that it was measured interleaved with the other
//! ([`crate::store::results::Interleaved`]: the order, when each side's server and
//! each repeat began, and each server's process id), `OUT/compare.html`, and
//! `OUT/index.html` listing both sides (the pair's directory is marked as a lab
//! run, so that `--force` may replace it, and as a directory of runs, so that
//! the index of the directory around it links to it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::finished::{Finished, write_run};
use super::measure;
use super::options::RunOptions;
use super::progress::progress_bar;
use super::setup::{Setup, write_files};
use super::signals::Signals;
use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::store::machine;
use crate::store::results::{Alternation, Interleaved, Side};
use crate::store::rundir;

/// A pair that `servelab lab ab` measured and wrote.
#[derive(Debug, Clone)]
pub struct AbFinished {
    /// The pair's directory (`--out`), holding `a/`, `b/` and `compare.html`.
    pub dir: PathBuf,
    /// Side A's run (`dir/a`).
    pub a: Finished,
    /// Side B's run (`dir/b`).
    pub b: Finished,
    /// The comparison page (`dir/compare.html`).
    pub compare_html: PathBuf,
}

impl AbFinished {
    /// An error when the pair was interrupted or a side produced no figures.
    pub fn check(&self) -> Result<()> {
        self.a.check()?;
        self.b.check()
    }
}

/// A `servelab` binary given as `--a` or `--b`: its absolute path and the
/// version it reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binary {
    /// Absolute path (servers are started from another working directory).
    pub path: PathBuf,
    /// What `BIN --version` says after "servelab ".
    pub version: String,
}

/// Checks that `path` is an executable `servelab` binary, before anything runs:
/// a missing file, a directory, a file without execute permission, or a program
/// that does not answer `--version` as servelab does is one line naming `flag`.
pub fn check_exe(flag: &str, path: &Path) -> Result<Binary> {
    use std::os::unix::fs::PermissionsExt as _;
    let bad = |why: String| LabError::Other(format!("{flag} {}: {why}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| bad(io_reason(&e)))?;
    if meta.is_dir() {
        return Err(bad("is a directory, not a servelab binary".into()));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(bad("is not executable".into()));
    }
    let abs = std::fs::canonicalize(path).map_err(|e| bad(io_reason(&e)))?;
    let out = Command::new(&abs)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| bad(format!("cannot be run: {}", io_reason(&e))))?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.trim().strip_prefix("servelab ") {
        Some(v) if out.status.success() => Ok(Binary {
            path: abs,
            version: v.trim().to_string(),
        }),
        _ => Err(bad(
            "is not a servelab binary (its --version does not say \"servelab VERSION\")".into(),
        )),
    }
}

/// The system's reason without its "(os error N)".
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// The side that leads point `i`'s first repeat: A B B A, A B B A, ... (ABBA
/// by point).
pub(crate) fn first_at(i: usize) -> Side {
    if i.div_ceil(2) % 2 == 0 {
        Side::A
    } else {
        Side::B
    }
}

/// The two sides in the order in which they measure repeat `r` (from 1) of
/// point `i`: the point's leader ([`first_at`]) first in odd repeats, the
/// other side first in even ones (ABBA by repeat).
pub(crate) fn order_at(i: usize, r: u32) -> [Side; 2] {
    let lead = first_at(i);
    if r % 2 == 1 {
        [lead, lead.other()]
    } else {
        [lead.other(), lead]
    }
}

/// 0 for A, 1 for B: where a side's figures go in a pair of arrays.
fn index(side: Side) -> usize {
    usize::from(side == Side::B)
}

/// Measures `exp` with binary A (`opts.exe`) and binary B (`exe_b`) interleaved
/// repeat by repeat, and writes `OUT/a`, `OUT/b` and `OUT/compare.html`. `OUT` is
/// `opts.out` (default `results/NAME-ab-STAMP`), under the same never-overwrite
/// rules as `lab run`. A simulated experiment is refused: both sides would run
/// the same simulator in this process.
pub fn run_ab(exp: &Experiment, opts: &RunOptions, exe_b: &Path) -> Result<AbFinished> {
    if exp.is_simulated() {
        return Err(LabError::Other(format!(
            "{} is a simulated experiment: no servelab binary serves it, so A and B would be the \
             same simulator; use `servelab lab run`",
            exp.name()
        )));
    }
    let bin_a = check_exe("--a", &opts.exe)?;
    let bin_b = check_exe("--b", exe_b)?;
    let (started_utc, stamp) = machine::utc_now();
    let setup = Setup::new(exp, opts)?;
    let out = rundir::create(
        opts.out.as_deref(),
        &format!("{}-ab", exp.name()),
        &stamp,
        opts.force,
    )?;
    let side_dir =
        |side: Side| rundir::create(Some(&out.path.join(side.dir_name())), "", "", false);
    let (dir_a, dir_b) = (side_dir(Side::A)?, side_dir(Side::B)?);
    let side_opts = |bin: &Binary| RunOptions {
        exe: bin.path.clone(),
        version: bin.version.clone(),
        ..opts.clone()
    };
    let (opts_a, opts_b) = (side_opts(&bin_a), side_opts(&bin_b));

    let stop = Arc::new(AtomicBool::new(false));
    let signals = Signals::register(&stop)?;
    let plan = &setup.plan;
    let bar = progress_bar(opts.progress, plan, false);
    bar.set_length(2 * bar.length().unwrap_or(0));
    write_files(plan)?;
    let mut arms = [
        measure::Arm::new(&bin_a.path, plan),
        measure::Arm::new(&bin_b.path, plan),
    ];
    let order = |i: usize, r: u32| order_at(i, r).map(index).to_vec();
    let pair_t0 = Instant::now();
    measure::measure_all(plan, &mut arms, &order, &setup.placement, &stop, &bar)?;
    bar.finish_and_clear();
    drop(signals);

    let interrupted = stop.load(Ordering::Relaxed);
    let pair = format!("{started_utc}-{}", std::process::id());
    let first: Vec<Side> = (0..plan.points.len()).map(first_at).collect();
    let since = |t: Instant| t.saturating_duration_since(pair_t0).as_secs_f64();
    let [arm_a, arm_b] = arms;
    let finish = |side: Side, o: &RunOptions, arm: measure::Arm<'_>, dir: PathBuf| {
        let mut results = setup.results(
            exp,
            o,
            started_utc.clone(),
            arm.busy.as_secs_f64(),
            interrupted,
            arm.records,
        );
        if let Some(p) = &mut results.protocol {
            p.interleaved = Some(Interleaved {
                side,
                pair: pair.clone(),
                exe_a: bin_a.path.display().to_string(),
                exe_b: bin_b.path.display().to_string(),
                by: Alternation::Repeat,
                first: first.clone(),
                started_s: arm.times.iter().map(|t| since(t.started)).collect(),
                repeat_started_s: arm
                    .times
                    .iter()
                    .map(|t| t.repeats.iter().map(|r| since(*r)).collect())
                    .collect(),
                server_pid: arm.times.iter().map(|t| t.pid).collect(),
            });
        }
        write_run(&dir, &results, exp)?;
        Ok::<_, LabError>(Finished {
            dir,
            results,
            index: None,
        })
    };
    let a = finish(Side::A, &opts_a, arm_a, dir_a.path)?;
    let b = finish(Side::B, &opts_b, arm_b, dir_b.path)?;
    let compare_html = out.path.join("compare.html");
    let names = |f: &Finished| f.dir.display().to_string();
    let page = crate::report::compare::html(&a.results, &b.results, &names(&a), &names(&b))?;
    crate::report::compare::write_html(&compare_html, &page)?;
    // The pair's index lists both sides, and the directory of runs around it
    // links to the pair; a failure here costs only the listings.
    if rundir::mark_runs(&out.path).is_ok() {
        let _ = crate::report::index::write(&out.path);
    }
    if let Some(runs) = &out.runs {
        let _ = crate::report::index::write(runs);
    }
    Ok(AbFinished {
        dir: out.path,
        a,
        b,
        compare_html,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leader_is_abba_by_point_so_that_cycling_servers_are_led_by_both() {
        use Side::{A, B};
        let order: Vec<Side> = (0..8).map(first_at).collect();
        assert_eq!(order, [A, B, B, A, A, B, B, A]);
        // Points that cycle through 2 or 3 servers: each server is led by A
        // as often as by B over 12 points.
        for servers in [2, 3] {
            for s in 0..servers {
                let led: Vec<Side> = (s..12).step_by(servers).map(first_at).collect();
                let by_a = led.iter().filter(|x| **x == A).count();
                assert_eq!(
                    2 * by_a,
                    led.len(),
                    "{servers} servers, server {s}: {led:?}"
                );
            }
        }
    }

    #[test]
    fn repeats_alternate_abba_from_the_points_leader() {
        use Side::{A, B};
        // The sequence of load runs at a point, repeat after repeat.
        let runs =
            |i: usize, n: u32| -> Vec<Side> { (1..=n).flat_map(|r| order_at(i, r)).collect() };
        assert_eq!(runs(0, 4), [A, B, B, A, A, B, B, A]);
        assert_eq!(runs(1, 4), [B, A, A, B, B, A, A, B]);
        for i in 0..8 {
            // Repeat 1 is led by the point's leader, and the sides alternate
            // in leading every later repeat.
            assert_eq!(order_at(i, 1)[0], first_at(i), "point {i}");
            for r in 1..10 {
                let [x, y] = order_at(i, r);
                assert_ne!(x, y, "point {i}, repeat {r}: both sides measure");
                assert_ne!(order_at(i, r + 1)[0], x, "point {i}, repeat {r}");
            }
            // Over four repeats each side runs as often in each position,
            // so a linear drift lands on both alike: the mean position in
            // the sequence of eight load runs is the same for A and B.
            let seq = runs(i, 4);
            let at = |side: Side| -> usize {
                seq.iter()
                    .enumerate()
                    .filter(|(_, s)| **s == side)
                    .map(|(k, _)| k)
                    .sum()
            };
            assert_eq!(at(A), at(B), "point {i}: {seq:?}");
        }
    }

    #[test]
    fn a_missing_or_non_executable_binary_is_one_line_naming_its_flag() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope");
        let e = check_exe("--b", &missing).unwrap_err().to_string();
        assert_eq!(e, format!("--b {}: no such file", missing.display()));
        let plain = tmp.path().join("plain");
        std::fs::write(&plain, "#!/bin/sh\necho servelab 9\n").unwrap();
        let e = check_exe("--a", &plain).unwrap_err().to_string();
        assert!(
            e.starts_with("--a ") && e.ends_with("is not executable"),
            "{e}"
        );
        let e = check_exe("--a", tmp.path()).unwrap_err().to_string();
        assert!(e.ends_with("is a directory, not a servelab binary"), "{e}");
        // An executable that is not servelab.
        let other = tmp.path().join("other");
        std::fs::write(&other, "#!/bin/sh\necho nginx 1.2\n").unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = check_exe("--b", &other).unwrap_err().to_string();
        assert!(e.contains("is not a servelab binary"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        // One that answers as servelab does is taken, by its absolute path.
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o755)).unwrap();
        let bin = check_exe("--a", &plain).unwrap();
        assert_eq!(bin.version, "9");
        assert!(bin.path.is_absolute());
    }
}
