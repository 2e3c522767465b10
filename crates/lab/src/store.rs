//! What a run keeps: its results and the directory they live in.
//!
//! Layout (each file imports only those above it):
//! - [`machine`]: the machine a run was made on (CPU, kernel, servelab's
//!   version and commit)
//! - [`results`]: `results.json` and `results.csv`: every point, repeat,
//!   summary, check and prediction, and how older schemas are read
//! - [`rundir`]: the results directory, and what the lab may overwrite

pub mod machine;
pub mod results;
pub mod rundir;
