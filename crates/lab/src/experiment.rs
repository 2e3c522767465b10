//! Experiments: what an experiment file says, and the plan a run follows.
//!
//! An experiment file is read once ([`Experiment::parse`]), checked once, and
//! planned once ([`Experiment::plan`]) into a list of points holding only typed
//! values; a run reads that list and nothing else.
//!
//! Layout:
//! - `schema.rs`: the TOML format as serde types ([`Experiment`] and its parts)
//! - `template.rs`: `{AXIS}` and `{tmp}` placeholders
//! - `validate.rs`: checks that do not depend on a point, and reading a file
//!   ([`Experiment::parse`]: deserialise, then check)
//! - `plan.rs`: every point expanded and resolved ([`Plan`])
//! - [`run_time`]: how long a run of a plan takes, estimated (`lab list`)
//! - [`builtin`]: the experiments of `experiments/`, compiled in

pub mod builtin;
mod plan;
pub mod run_time;
mod schema;
mod template;
mod validate;

pub use plan::{
    Measure, Model, Plan, PlanOptions, PlannedPoint, PointTls, ResolvedLoad, ServedFile, Server,
    Trust, Work,
};
pub use schema::{
    AccuracySpec, AppliesSpec, Axis, ClaimSpec, ClaimTest, ConclusionKind, ConclusionSpec,
    EngineName, Expect, Experiment, FileSpec, LoadSection, ModelSpec, PlotSpec, QuickSpec, Scalar,
    ServerSpec, Source, TargetSpec, Template,
};
