//! servelab-predict: `servelab predict URL`: measure a server nobody here wrote, fit seed 002's
//! model to it, predict the loads asked about, and measure loads the fit never
//! saw to report the error against the targets of issue 17.
//!
//! Why all four in one command: estimating demands (LibReDE), predicting from
//! typed-in demands (JMT, PDQ) and curve fitting (USL) each stop short of
//! checking themselves; here every prediction comes with its measured error.
//!
//! This crate uses the lab (`servelab-lab`: its protocol, checks, CPU
//! readings, statistics, plots and HTML) and the simulator; the lab does not
//! use it.
//!
//! Layout (no module imports one that imports it back: `the_modules_import_no_circle`):
//! - [`run()`]: the four steps in order, with [`PredictOptions`]
//! - [`Outcome`]: everything found, as `results.json` holds it
//! - `probe`: the URL answers, with success, before anything is measured
//! - [`Architecture`]: whether connections hold workers, W, the keep-alive
//!   timeout, found by idle connections before the staircase
//! - `listener`: a `--pid` holds the socket listening on the URL's port
//! - [`CpuSource`]: the server's CPU from its processes or its cgroup
//! - `staircase`: one step under the lab's protocol, and the fit's staircase
//! - [`NonCpuDelay`]: a response time far above the CPU, and its likely cause
//! - [`Fit`]: the model's parameters with their intervals, and `servelab sim`'s line
//! - `threads`: the threads per core k, fitted by simulating each candidate
//! - [`ThreadsFit`]: that fit's record, every candidate and its residuals
//! - `held`: the W workers the probes found, made the model's c·k threads
//! - [`PastWorkers`]: the calibration step past W, and whether it confirms W
//! - [`IdleGap`]: one user thinking against the back-to-back steps: a server
//!   slower after an idle gap than the busy demand says
//! - [`Forecast`]: the simulator at the asked loads, the knee, the objective
//! - `validate`: the loads the fit never saw, and the error table
//! - [`Verdict`]: each target met, missed or inconclusive against the
//!   error's interval, and what the measurement says about why
//! - `report`: `results.json` and `report.html`, in a new directory
//! - [`ProgressMode`]: a bar on a terminal, a line per step elsewhere

#![deny(missing_docs)]

mod architecture;
mod cpu_source;
mod delay;
mod fit;
mod forecast;
mod held;
mod idle;
mod judge;
mod kfit;
mod listener;
mod outcome;
mod past_workers;
mod probe;
mod progress;
mod report;
mod run;
mod slo;
mod staircase;
mod threads;
mod validate;

pub use architecture::{Architecture, KeepAlive, MaxRequests, Workers};
pub use cpu_source::CpuSource;
pub use delay::{DelayCause, NonCpuDelay};
pub use fit::{DemandFrom, Estimate, Fit, OPEN_POPULATION, RR_QUANTUM_S, StepDemand};
pub use forecast::Forecast;
pub use idle::IdleGap;
pub use judge::{PointError, Target, Verdict};
pub use kfit::{Candidate, ThreadsFit};
pub use outcome::{Outcome, PredictOptions, Validation};
pub use past_workers::PastWorkers;
pub use progress::ProgressMode;
pub use report::SCHEMA;
pub use run::{DEFAULT_BUDGET, MAX_BUDGET, run};
pub use servelab_lab::{LabError, Result};
pub use slo::{Slo, SloStat};
pub use staircase::{Load, OPEN_SHARES, Repeat, Step};
pub use validate::{KNEE_FACTORS, Point, Row, THINK_DEMANDS};

#[cfg(test)]
mod layout;
