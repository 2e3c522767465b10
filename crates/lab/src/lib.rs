//! servelab-lab: experiments that tie the server, the load generator and the
//! simulator together, reproducible with one command and reported with plots.
//!
//! `servelab lab run NAME` starts each server as a child process pinned to its own
//! CPU, drives it with `servelab-load` from another CPU, warms up, measures
//! windows of time until the figure that matters is known to a stated precision,
//! predicts with `servelab-sim` where a queueing model applies, and writes
//! `results.csv`, `results.json` and a self-contained `report.html`.
//!
//! Layout:
//! - [`experiment`]: the TOML experiment format, its validation, the plan of its points,
//!   how long a run of it takes, and the [`builtin`] experiments
//! - [`run`]: running an experiment (servers, warm-up, repeats, progress, Ctrl-C), and
//!   [`run::run_ab`] two servelab binaries interleaved repeat by repeat (`lab ab`)
//! - [`process`]: the processes a run starts and where they run: [`server`], [`peer`],
//!   [`apache`] (child processes, peer configs), [`cpu`] (placement), [`sched`] (the
//!   kernel scheduler's slice and switch cost, for round-robin models)
//! - [`protocol`], [`check`]: the measurement protocol (warm-up, windows of time,
//!   repeats until a precision) and the validity checks of every point
//! - [`sample`]: a sample of repeats (its Student-t interval) and Welch's t-test
//! - [`store`]: what a run keeps: [`results`], [`machine`] (what is recorded, and on
//!   what), [`rundir`] (the results directory, and what the lab may overwrite)
//! - [`metric`]: the metrics a point records, one catalogue
//! - [`report`]: the reports: the page, its plots, conclusion, the seed's claims
//!   tested, measured against simulated, where a prediction applies, agreement by
//!   construction, which definition a rebuilt report renders, the index of runs,
//!   and two runs compared
//! - [`html`]: escaping and the style sheet of every page
//!
//! The modules import no circle, nor do the files of each module folder: a test
//! (`src/layout.rs`) walks their `crate::` and `super::`
//! paths with `servelab-layout`.
//!
//! `servelab predict URL` lives in its own crate, `servelab-predict`, which
//! uses this one (protocol, checks, CPU readings, statistics, plots, HTML).
//!
//! # Example
//!
//! ```no_run
//! use servelab_lab::{RunOptions, builtin, run};
//!
//! let exp = builtin::load("model")?;
//! let opts = RunOptions {
//!     quick: true,
//!     repeats: None,
//!     precision: None,
//!     out: Some("results/model-try".into()),
//!     force: false,
//!     exe: "target/release/servelab".into(),
//!     version: "0.1.0".into(),
//!     command: "servelab lab run model --quick".into(),
//!     progress: true,
//! };
//! let finished = run::run(&exp, &opts)?;
//! println!("report: {}", finished.dir.join("report.html").display());
//! finished.check()?; // interrupted, or no point produced figures
//! # Ok::<(), servelab_lab::LabError>(())
//! ```

#![deny(missing_docs)]

pub mod check;
mod error;
pub mod experiment;
pub mod html;
pub mod metric;
pub mod protocol;
pub mod run;
pub mod sample;

pub mod process;
/// The process modules where other crates have always found them.
pub use process::{apache, cpu, peer, sched, server};

pub mod store;
/// The storage modules where other crates have always found them.
pub use store::{machine, results, rundir};

pub mod report;
/// The reporting modules other crates use, where they have always found them.
pub use report::{accuracy, compare, conclusion, index, plot};

pub use error::{LabError, Result};
pub use experiment::Experiment;
pub use experiment::Source;
/// The experiments' modules where other crates have always found them.
pub use experiment::{builtin, run_time};
pub use run::{AbFinished, Finished, RunOptions};
pub use store::results::RunResults;

#[cfg(test)]
mod layout;
