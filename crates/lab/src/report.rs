//! The reports: what a run's numbers say, in a page a reader can trust.
//!
//! Layout (each module imports only those above it; the circle check in
//! `src/layout.rs` keeps it so):
//! - [`applicability`]: where a prediction applies, and why not elsewhere
//! - [`construction`]: agreement by construction (a server that sleeps the
//!   model's own service time), said wherever it is quoted
//! - [`accuracy`]: measured against simulated, error per point and per metric
//! - [`plot`]: the figures, one per `[[plot]]`, and the timelines
//! - [`conclusion`]: the sentence a run concludes with
//! - [`claim`]: the seed's claims, each with its verdict
//! - [`definition`]: which definition of an experiment a rebuilt report
//!   renders (its current words when it plans the run's points, else the run's
//!   own)
//! - [`page`]: `report.html` and the `figure-N.svg` beside it
//! - [`index`]: the listing of a directory of runs
//! - [`compare`]: two runs side by side (`lab compare`, `lab ab`)

pub mod accuracy;
pub mod applicability;
pub mod claim;
pub mod compare;
pub mod conclusion;
pub mod construction;
pub mod definition;
pub mod index;
pub mod page;
pub mod plot;

pub use page::{figure_file, rebuild, render, write};
