//! servelab-sim: a discrete-event simulator of a multithreaded web server, with the
//! exact queueing solution beside it wherever one exists.
//!
//! This is seed 002's model done properly: a closed population of users (think,
//! request, wait or time out, wait and retry) in front of a server with `c` cores, `k`
//! threads per core, thread-to-core affinity, a shared bounded buffer that rejects or
//! drops, abandoned requests finished or cancelled, and FCFS or round-robin scheduling
//! with a context-switch cost, and connections that carry `session` requests each,
//! whose first request pays an extra demand (a TLS handshake's CPU,
//! [`Model::first_demand`]). Its words mean what `servelab load` and `servelab
//! serve` mean by them (see [`model`]): the user's response time R_user counts the
//! timeouts and retries, as `load` does, beside the per-attempt R_attempt (both over
//! the answers of the kept window, so equal without retries); users still waiting
//! when a run ends are counted apart, and every point is checked against Little's law N = X (R + Z) ([`LittleCheck`]), so a run too short
//! for its response times says so. Each
//! configuration is run as independent replications, with a warm-up cut chosen by
//! MSER-5 on their average (see `warmup`) and Student-t intervals; the statistics are
//! streamed (an HDR histogram for the percentiles, and MSER-5's batch series bounded
//! by merging batches), so memory does not grow with the length of a run;
//! product-form configurations are also solved exactly (a birth-death chain in log
//! space), and the asymptotic bounds are always given. `servelab sim` is a thin front
//! end; the lab calls this library directly.
//!
//! Layout:
//! - [`Dist`]: distributions and their text syntax (`exp:0.2s`, `50s+exp:5s`, ...),
//!   re-exported from `servelab-dist`, the one parser shared with `serve` and `load`
//! - [`model`]: the model ([`Model`], [`Policy`], [`Affinity`], [`OnFull`],
//!   [`OnAbandon`], and [`Connections`] with [`HeldWorkers`]: requests queueing for
//!   threads, or connections holding them) and what its words mean
//! - [`spec`]: how to run it ([`RunSpec`]: replications, length, warm-up, seed)
//! - [`no_effect`](mod@no_effect): settings that cannot change a run (warned about before it)
//! - `queue`, `engine`, `window`: the event list, one replication's event loop, and
//!   its kept window (streamed statistics, the MSER-5 series, metrics at the cut)
//! - `warmup`: the warm-up cut, chosen over all replications of a point
//! - [`estimate`]: an [`Estimate`] (a mean with its t interval over replications),
//!   MSER-5, quantiles
//! - [`exact`]: the exact solution and when it applies
//! - [`bounds`]: asymptotic bounds and the saturation point
//! - [`result`]: what a sweep point returns (the JSON schema)
//! - [`sweep`]: sweeps over users in parallel, user-list syntax, traced runs
//! - [`report`]: the text table (fitted to 100 columns), CSV and JSON writers
//!
//! The model's semantics, precisely enough to reimplement it (placement, when a
//! context switch is charged, the start state, run length, MSER-5, every JSON field),
//! are in `docs/sim-model.md`.
//! - [`trace`]: the event-trace format
//!
//! # Example
//!
//! ```
//! use servelab_sim::{Dist, Length, Model, RunSpec, Warmup, bounds, exact, run_point};
//!
//! // Seed 002's server: 4 cores, 1 thread each, exponential service of 0.2 s; users
//! // think 7 s on average (uniform 4..10 s).
//! let model = Model { users: 50, service: "exp:0.2s".parse()?, think: Dist::uniform(4.0, 10.0),
//!                     ..Model::default() };
//! let spec = RunSpec { reps: 5, length: Length::Requests(2_000), warmup: Warmup::Mser5, seed: 42 };
//! let point = run_point(&model, &spec)?;
//! let sim = point.sim.unwrap();
//! let exact = exact::solve(&model).expect("product-form: exponential service, k = 1, no timeouts");
//! assert!((sim.throughput.mean - exact.throughput).abs() < 0.05 * exact.throughput);
//! assert!(sim.throughput.mean <= bounds::bounds(&model).throughput_max * 1.05);
//! println!("X = {:.3} ± {:.3} /s (exact {:.3})", sim.throughput.mean, sim.throughput.half_width, exact.throughput);
//! # Ok::<(), servelab_sim::SimError>(())
//! ```

#![deny(missing_docs)]

pub mod bounds;
mod engine;
mod error;
pub mod estimate;
pub mod exact;
pub mod model;
pub mod no_effect;
mod queue;
pub mod report;
pub mod result;
pub mod spec;
pub mod sweep;
pub mod trace;
mod warmup;
mod window;

pub use bounds::Bounds;
pub use error::{Result, SimError};
pub use estimate::Estimate;
pub use exact::Exact;
pub use model::{
    Affinity, Connections, DEFAULT_IDLE_GAP, HeldWorkers, Model, OnAbandon, OnFull, Policy,
};
pub use no_effect::{NoEffect, no_effect};
pub use result::{Diff, LittleCheck, Metrics, PointResult, WarmupUsed};
pub use servelab_dist::Dist;
pub use spec::{Length, RunSpec, Warmup};
pub use sweep::{Sweep, parse_users, run_models, run_models_on, run_point, trace_replication};

#[cfg(test)]
mod layout;
