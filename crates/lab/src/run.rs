//! Running a planned experiment end to end: files, predictions, servers,
//! warm-up, repeats, progress, failures, Ctrl-C, and the results directory.
//!
//! The run follows the experiment's [`Plan`] and nothing else: every field was
//! expanded, parsed and checked when it was planned, before anything ran. Every
//! point gets a freshly started server (so a log file or a cache from one point
//! never favours the next), a warm-up at full load that is thrown away, then
//! measured windows of fixed length, at least the plan's fewest and more until
//! the headline metric's 95% interval is within the plan's precision or its cap
//! ([`crate::protocol`]); then the point's validity checks ([`crate::check`]).
//! A point that fails is recorded with its reason and the
//! run goes on; Ctrl-C stops the load run in progress, stops the server, and
//! still writes what was measured. [`Finished::check`] then says whether the
//! run as a whole produced anything.
//!
//! Layout: this file holds the run as a whole (options, directories, results,
//! Ctrl-C, progress); `measure.rs` a measured point step by step, with one
//! binary (`lab run`) or two (`lab ab`); `record.rs` a measured repeat's
//! figures; `ab.rs` the interleaved pair of `lab ab`; `counters.rs` the
//! server's own counters read during a repeat; `simulate.rs` the simulator's
//! points and predictions.

mod ab;
mod counters;
mod measure;
mod record;
mod simulate;

pub use ab::{AbFinished, Binary, check_exe, run_ab};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cpu::Placement;
use crate::error::{LabError, Result};
use crate::experiment::{Experiment, Plan};
use crate::index;
use crate::machine::{self, Machine};
use crate::results::{PointRecord, RunResults, SCHEMA, Status};
use crate::rundir;

/// How to run an experiment.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Shrink every sweep (`--quick`).
    pub quick: bool,
    /// A fixed number of repeats per point instead of the experiment's
    /// fewest-to-cap (`--repeats`).
    pub repeats: Option<u32>,
    /// Target relative half-width of the headline metric's 95% interval
    /// instead of the experiment's (`--precision`, as a fraction: 0.02 is 2%).
    pub precision: Option<f64>,
    /// Results directory (default `results/<name>-<timestamp>`); it must not exist.
    pub out: Option<PathBuf>,
    /// Replace `out` if it holds a previous lab run (`--force`).
    pub force: bool,
    /// The `servelab` binary that serves (`servelab serve`).
    pub exe: PathBuf,
    /// servelab version, for the machine record.
    pub version: String,
    /// The command line that reruns this, for the report.
    pub command: String,
    /// Show a progress bar on a terminal.
    pub progress: bool,
}

/// A run that wrote its results.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The results directory.
    pub dir: PathBuf,
    /// What was written to `results.json`.
    pub results: RunResults,
    /// The directory of runs whose `index.html` was refreshed, if any.
    pub index: Option<PathBuf>,
}

impl Finished {
    /// Each point that produced no figures, as "label: status: reason".
    pub fn problems(&self) -> Vec<String> {
        self.results
            .points
            .iter()
            .filter(|p| matches!(p.status, Status::Failed | Status::Unavailable))
            .map(|p| {
                format!(
                    "{}: {}: {}",
                    p.label(),
                    p.status.as_str(),
                    p.reason.as_deref().unwrap_or("no reason recorded")
                )
            })
            .collect()
    }

    /// An error when the run was interrupted or no point produced figures: a
    /// run that measured nothing must not look like a success.
    pub fn check(&self) -> Result<()> {
        if self.results.interrupted {
            return Err(LabError::Interrupted(self.dir.clone()));
        }
        if !self.results.points.iter().any(|p| p.status == Status::Ok) {
            return Err(LabError::NoFigures(self.dir.clone()));
        }
        Ok(())
    }
}

/// Plans an experiment, makes its results directory, runs it and writes the
/// results; a mistake in the file or a refused `--out` stops it before anything
/// runs.
pub fn run(exp: &Experiment, opts: &RunOptions) -> Result<Finished> {
    let (started_utc, stamp) = machine::utc_now();
    let setup = Setup::new(exp, opts)?;
    let out = rundir::create(opts.out.as_deref(), exp.name(), &stamp, opts.force)?;

    let stop = Arc::new(AtomicBool::new(false));
    let signals = Signals::register(&stop)?;
    let t0 = Instant::now();
    let plan = &setup.plan;
    let bar = progress_bar(opts.progress, plan, exp.is_simulated());
    let records = if exp.is_simulated() {
        let mut records: Vec<PointRecord> = plan.points.iter().map(PointRecord::planned).collect();
        simulate::simulate_all(plan, &mut records, &stop, &bar);
        records
    } else {
        write_files(plan)?;
        let mut arms = [measure::Arm::new(&opts.exe, plan)];
        measure::measure_all(
            plan,
            &mut arms,
            &|_, _| vec![0],
            &setup.placement,
            &stop,
            &bar,
        )?;
        let [arm] = arms;
        arm.records
    };
    bar.finish_and_clear();
    drop(signals);

    let results = setup.results(
        exp,
        opts,
        started_utc,
        t0.elapsed().as_secs_f64(),
        stop.load(Ordering::Relaxed),
        records,
    );
    write_run(&out.path, &results, exp)?;
    // A failure here costs only the listing, not the run.
    let index = out
        .runs
        .filter(|runs| index::write(runs).is_ok_and(|w| w == index::Written::Yes));
    Ok(Finished {
        dir: out.path,
        results,
        index,
    })
}

/// What a run needs before its first point: the temporary directory, the
/// plan, the CPU placement and the kernel's scheduler figures.
struct Setup {
    /// Served files, server logs, peer configurations; removed however the run ends.
    #[allow(
        dead_code,
        reason = "held so that the directory lives as long as the run"
    )]
    tmp: tempfile::TempDir,
    plan: Plan,
    placement: Placement,
    kernel: Option<crate::sched::KernelSched>,
}

impl Setup {
    /// Plans the experiment (both sweeps, so that a mistake in either is
    /// reported now) and places it on CPUs.
    fn new(exp: &Experiment, opts: &RunOptions) -> Result<Setup> {
        let tmp = tempfile::Builder::new()
            .prefix(&format!(
                "servelab-lab-{}-{}-",
                exp.name(),
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| LabError::io(std::env::temp_dir(), e))?;
        // Peers that drop privileges (h2o as root) must still read the files.
        let _ = std::fs::set_permissions(
            tmp.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
        // The other sweep is planned only to report its mistakes now, not on the
        // next run (and before the kernel is measured, which takes a second).
        exp.plan(!opts.quick, opts.repeats, tmp.path())?;
        exp.plan(opts.quick, opts.repeats, tmp.path())?;
        let placement = if exp.is_simulated() {
            Placement {
                server: vec![],
                load: vec![],
            }
        } else {
            Placement::plan()
        };
        let kernel = exp.uses_kernel().then(|| {
            let cpu = placement
                .server
                .first()
                .copied()
                .unwrap_or_else(|| crate::cpu::allowed_cpus().first().copied().unwrap_or(0));
            crate::sched::KernelSched::detect(cpu)
        });
        let mut plan = match &kernel {
            Some(k) => exp.plan_with(opts.quick, opts.repeats, tmp.path(), k)?,
            None => exp.plan(opts.quick, opts.repeats, tmp.path())?,
        };
        if let Some(p) = opts.precision {
            plan.precision = p;
        }
        Ok(Setup {
            tmp,
            plan,
            placement,
            kernel,
        })
    }

    /// What `results.json` holds for a run of this setup.
    fn results(
        &self,
        exp: &Experiment,
        opts: &RunOptions,
        started_utc: String,
        duration_s: f64,
        interrupted: bool,
        points: Vec<PointRecord>,
    ) -> RunResults {
        RunResults {
            schema: SCHEMA.into(),
            experiment: exp.name().into(),
            source_file: exp.source.file.clone(),
            source: exp.source.text.clone(),
            command: opts.command.clone(),
            quick: opts.quick,
            repeats: self.plan.repeats,
            protocol: (!exp.is_simulated()).then(|| protocol_of(&self.plan)),
            started_utc,
            duration_s,
            machine: Machine::detect(&opts.version, opts.exe.parent()),
            placement: if exp.is_simulated() {
                "simulation only: no server or load generator".into()
            } else {
                self.placement.describe()
            },
            interrupted,
            kernel: self.kernel.clone(),
            points,
        }
    }
}

/// Writes a run's `results.json`, `results.csv` and `report.html` into `dir`.
fn write_run(dir: &std::path::Path, results: &RunResults, exp: &Experiment) -> Result<()> {
    results.write_json(dir)?;
    results.write_csv(dir)?;
    crate::report::write(dir, results, exp)
}

/// The protocol the plan's measured points follow, for `results.json`.
fn protocol_of(plan: &Plan) -> crate::protocol::Protocol {
    let loads = plan.points.iter().filter_map(|p| match &p.work {
        crate::experiment::Work::Measure(m) => Some(&m.load),
        crate::experiment::Work::Simulate(_) => None,
    });
    let (mut window, mut warmup) = (f64::INFINITY, f64::INFINITY);
    for l in loads {
        window = window.min(l.duration.as_secs_f64());
        warmup = warmup.min(l.warmup.as_secs_f64());
    }
    crate::protocol::Protocol {
        quick: plan.quick,
        window_s: if window.is_finite() { window } else { 0.0 },
        warmup_s: if warmup.is_finite() { warmup } else { 0.0 },
        min_repeats: plan.repeats,
        max_repeats: plan.max_repeats,
        precision: plan.precision,
        headline: plan.headline,
        interleaved: None,
    }
}

/// Creates the served files of the plan under `tmp/www`.
fn write_files(plan: &Plan) -> Result<()> {
    let root = plan.tmp.join("www");
    std::fs::create_dir_all(&root).map_err(|e| LabError::io(&root, e))?;
    let index = root.join("index.html");
    std::fs::write(
        &index,
        "<!doctype html><title>servelab lab</title><p>lab root</p>\n",
    )
    .map_err(|e| LabError::io(&index, e))?;
    for f in &plan.files {
        let path = root.join(&f.name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| LabError::io(parent, e))?;
        }
        std::fs::write(&path, file_bytes(f.size)).map_err(|e| LabError::io(&path, e))?;
    }
    Ok(())
}

/// Printable, non-repeating-looking bytes (lines of 76), so compression or a
/// page-cache trick cannot make one size cheaper than another.
fn file_bytes(size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(size as usize);
    let mut x: u32 = 0x9e37_79b9;
    while (out.len() as u64) < size {
        if out.len() % 76 == 75 {
            out.push(b'\n');
        } else {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            out.push(b'a' + (x % 26) as u8);
        }
    }
    out
}

fn progress_bar(show: bool, plan: &Plan, simulated: bool) -> ProgressBar {
    let points = plan.points.len() as u64;
    let total = if simulated {
        points
    } else {
        points * u64::from(plan.repeats)
    };
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {unit} ETA {eta} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    let unit = if simulated { "points" } else { "repeats" };
    bar.set_style(style.with_key(
        "unit",
        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(unit);
        },
    ));
    bar
}

/// SIGINT and SIGTERM set the stop flag while a run is in progress (instead of
/// killing the lab and orphaning its servers); unregistered when dropped.
#[derive(Debug)]
pub struct Signals(Vec<signal_hook::SigId>);

impl Signals {
    /// Sets `stop` on SIGINT and SIGTERM until the value is dropped.
    pub fn register(stop: &Arc<AtomicBool>) -> Result<Signals> {
        let mut ids = Vec::new();
        for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            let id = signal_hook::flag::register(sig, Arc::clone(stop))
                .map_err(|e| LabError::Other(format!("cannot handle signal {sig}: {e}")))?;
            ids.push(id);
        }
        Ok(Signals(ids))
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Model, PlannedPoint, Work};

    #[test]
    fn file_bytes_have_the_size_asked() {
        for n in [0, 1, 75, 76, 77, 5000] {
            assert_eq!(file_bytes(n).len() as u64, n);
        }
        assert!(file_bytes(200).iter().all(|b| b.is_ascii()));
    }

    #[test]
    fn a_run_with_no_figures_or_an_interruption_is_an_error() {
        let mut rec = PointRecord::planned(&PlannedPoint {
            index: 0,
            vars: vec![],
            work: Work::Simulate(Box::new(Model {
                model: servelab_sim::Model::default(),
                run: servelab_sim::RunSpec {
                    reps: 2,
                    length: servelab_sim::Length::Requests(100),
                    warmup: servelab_sim::Warmup::Mser5,
                    seed: 1,
                },
            })),
        });
        rec.status = Status::Failed;
        rec.server = Some("pool".into());
        rec.reason = Some("repeat 1: no request succeeded (2 errors: status 2)".into());
        let mut finished = Finished {
            dir: "out".into(),
            results: RunResults {
                schema: SCHEMA.into(),
                experiment: "t".into(),
                source_file: "t".into(),
                source: String::new(),
                command: String::new(),
                quick: true,
                repeats: 1,
                protocol: None,
                started_utc: String::new(),
                duration_s: 0.0,
                machine: Machine::detect("0", None),
                placement: String::new(),
                interrupted: false,
                kernel: None,
                points: vec![rec],
            },
            index: None,
        };
        assert!(matches!(finished.check(), Err(LabError::NoFigures(_))));
        assert_eq!(
            finished.problems(),
            ["pool: failed: repeat 1: no request succeeded (2 errors: status 2)"]
        );
        finished.results.points[0].status = Status::Ok;
        assert!(finished.check().is_ok());
        finished.results.interrupted = true;
        assert!(matches!(finished.check(), Err(LabError::Interrupted(_))));
    }
}
