//! The lab's behaviour through its library, with no server: experiment files
//! and their mistakes, the directories a run may and may not write, and reports
//! rebuilt from results. Runs here are simulated experiments, which start no
//! process.
//!
//! The tests that start servers need the `servelab` binary (the lab starts
//! `servelab serve` children), which Cargo builds and names only for the tests
//! of the `servelab` crate: they are in `crates/cli/tests/lab.rs`.

mod bad_files;
mod doc_figures;
mod never_overwrite;
mod rebuild;
mod tls_keys;

use std::path::{Path, PathBuf};

use servelab_lab::{Experiment, Finished, RunOptions, builtin, run};

/// Options of a quick run into `out`.
fn options(out: &Path, force: bool) -> RunOptions {
    RunOptions {
        quick: true,
        repeats: None,
        precision: None,
        out: Some(out.to_path_buf()),
        force,
        // A simulated experiment starts no server.
        exe: PathBuf::from("servelab"),
        version: "test".into(),
        command: "servelab lab run seed002 --quick".into(),
        progress: false,
    }
}

/// seed002 (the simulator alone) with `--quick`, into `out`.
fn run_seed002(out: &Path, force: bool) -> servelab_lab::Result<Finished> {
    let exp: Experiment = builtin::load("seed002").unwrap();
    run::run(&exp, &options(out, force))
}
