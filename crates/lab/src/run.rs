//! Running a planned experiment end to end: files, predictions, servers,
//! warm-up, repeats, progress, failures, Ctrl-C, and the results directory.
//!
//! The run follows the experiment's [`Plan`](crate::experiment::Plan) and nothing else: every field was
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
//! Layout (no file names its parent: each imports only its siblings):
//! - this file: [`run`], one experiment from its plan to its results directory
//! - `options.rs`: [`RunOptions`]; `setup.rs`: the temporary directory, the one
//!   plan, the CPU placement, the kernel's figures, and what `results.json`
//!   records of them; `finished.rs`: [`Finished`] and the files a run writes
//! - `progress.rs`: the progress bar; `signals.rs`: Ctrl-C ([`Signals`])
//! - `measure.rs`: a measured point step by step, with one binary (`lab run`)
//!   or two (`lab ab`); `record.rs` a measured repeat's figures; `counters.rs`
//!   the server's own counters read during a repeat
//! - `simulate.rs`: the simulator's points and predictions
//! - `ab.rs`: the interleaved pair of `lab ab`

mod ab;
mod counters;
mod finished;
mod measure;
mod options;
mod progress;
mod record;
mod setup;
mod signals;
mod simulate;

pub use ab::{AbFinished, Binary, check_exe, run_ab};
pub use finished::Finished;
pub use options::RunOptions;
pub use signals::Signals;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::error::Result;
use crate::experiment::Experiment;
use crate::report::index;
use crate::store::machine;
use crate::store::results::PointRecord;
use crate::store::rundir;
use finished::write_run;
use progress::progress_bar;
use setup::{Setup, write_files};

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
