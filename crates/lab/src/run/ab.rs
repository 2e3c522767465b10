//! `servelab lab ab`: one experiment measured with two `servelab` binaries,
//! interleaved, so that a comparison of the two can tell a change of the
//! build from a change of the machine.
//!
//! Two separate runs measure A, then, minutes later, B. Their repeats sample the
//! noise within each run, not the drift between them: on this machine a rerun
//! of the same binary 37 minutes later was 3-7% slower at every point, and
//! Welch's t marked 12 of 16 figures. Here every point is measured with A and
//! with B back to back, each with its own freshly started server, in the order
//! A B, B A, B A, A B, then again (ABBA, by point). Drift slower than a point (a
//! warm-up and a few windows per side) then hits both sides alike, a linear
//! drift cancels over each four points, and Welch's t on each side's repeats at
//! a point is left with the noise it is built for.
//!
//! Why ABBA and not A B, B A, A B, B A: the points of an experiment usually
//! cycle through its servers (thread, epoll, thread, epoll, ...), and plain
//! alternation would then measure thread always with A first and epoll always
//! with B first, so an order effect would look like a difference between the
//! binaries at every point of one server. In ABBA order each of two or three
//! cycling servers is led by A as often as by B.
//!
//! Peers (nginx, h2o, ...) are not servelab and serve the same on both sides;
//! they are measured on both sides all the same. Their A/B differences are a
//! control: the same server measured twice under the same design, so a peer
//! that `lab compare` marks shows what chance and residual drift do.
//!
//! The pair is written as `OUT/a` and `OUT/b`, two ordinary run directories
//! (`lab report` and `lab compare` read them), each recording in its protocol
//! that it was measured interleaved with the other
//! ([`crate::results::Interleaved`]), `OUT/compare.html`, and `OUT/index.html`
//! listing both sides (the pair's directory is marked as a lab run, so that
//! `--force` may replace it, and as a directory of runs, so that the index of
//! the directory around it links to it).
//!
//! The order alternates by point, not by repeat: the repeats of a point are
//! measured by one server process, in `measure.rs`, which this module drives
//! one point at a time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Finished, RunOptions, Setup, Signals, measure, progress_bar, write_files, write_run};
use crate::error::{LabError, Result};
use crate::experiment::{Experiment, Plan};
use crate::machine;
use crate::results::{Interleaved, PointRecord, Side};
use crate::rundir;

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

/// The side measured first at point `i`: A B B A, A B B A, ... (ABBA).
pub(crate) fn first_at(i: usize) -> Side {
    if i.div_ceil(2) % 2 == 0 {
        Side::A
    } else {
        Side::B
    }
}

/// 0 for A, 1 for B: where a side's figures go in a pair of arrays.
fn index(side: Side) -> usize {
    usize::from(side == Side::B)
}

/// Measures `exp` with binary A (`opts.exe`) and binary B (`exe_b`) interleaved
/// point by point, and writes `OUT/a`, `OUT/b` and `OUT/compare.html`. `OUT` is
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
    let mut recs_a: Vec<PointRecord> = plan.points.iter().map(PointRecord::planned).collect();
    let mut recs_b = recs_a.clone();
    let mut first = Vec::with_capacity(plan.points.len());
    let mut seconds = [0.0_f64; 2];
    let mut started: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let pair_t0 = Instant::now();
    for (i, p) in plan.points.iter().enumerate() {
        let one = Plan {
            points: vec![p.clone()],
            ..plan.clone()
        };
        let lead = first_at(i);
        first.push(lead);
        for side in [lead, lead.other()] {
            let (o, rec) = match side {
                Side::A => (&opts_a, &mut recs_a[i]),
                Side::B => (&opts_b, &mut recs_b[i]),
            };
            let t0 = Instant::now();
            started[index(side)].push(t0.duration_since(pair_t0).as_secs_f64());
            measure::measure_all(
                &one,
                o,
                &setup.placement,
                &stop,
                &bar,
                std::slice::from_mut(rec),
            )?;
            seconds[index(side)] += t0.elapsed().as_secs_f64();
        }
    }
    bar.finish_and_clear();
    drop(signals);

    let interrupted = stop.load(Ordering::Relaxed);
    let pair = format!("{started_utc}-{}", std::process::id());
    let finish = |side: Side, o: &RunOptions, recs: Vec<PointRecord>, dir: PathBuf| {
        let secs = seconds[index(side)];
        let mut results = setup.results(exp, o, started_utc.clone(), secs, interrupted, recs);
        if let Some(p) = &mut results.protocol {
            p.interleaved = Some(Interleaved {
                side,
                pair: pair.clone(),
                exe_a: bin_a.path.display().to_string(),
                exe_b: bin_b.path.display().to_string(),
                first: first.clone(),
                started_s: started[index(side)].clone(),
            });
        }
        write_run(&dir, &results, exp)?;
        Ok::<_, LabError>(Finished {
            dir,
            results,
            index: None,
        })
    };
    let a = finish(Side::A, &opts_a, recs_a, dir_a.path)?;
    let b = finish(Side::B, &opts_b, recs_b, dir_b.path)?;
    let compare_html = out.path.join("compare.html");
    let names = |f: &Finished| f.dir.display().to_string();
    let page = crate::compare::html(&a.results, &b.results, &names(&a), &names(&b))?;
    std::fs::write(&compare_html, page).map_err(|e| LabError::io(&compare_html, e))?;
    // The pair's index lists both sides, and the directory of runs around it
    // links to the pair; a failure here costs only the listings.
    if rundir::mark_runs(&out.path).is_ok() {
        let _ = crate::index::write(&out.path);
    }
    if let Some(runs) = &out.runs {
        let _ = crate::index::write(runs);
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
    fn the_order_is_abba_so_that_cycling_servers_are_led_by_both() {
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
