//! The DIST syntax: random durations for service, think, timeout and wait times,
//! shared by `servelab serve`, `servelab load` and `servelab sim`.
//!
//! One experiment describes the server, the load and the model with the same words,
//! so the words must mean the same thing in all three. This crate is the single
//! parser and sampler; the other crates re-export [`Dist`] and [`parse_duration`].
//!
//! | text                 | meaning                                              |
//! |----------------------|------------------------------------------------------|
//! | `40ms`, `1s`, `2.5`  | constant; a plain number is seconds                  |
//! | `const:1s`           | constant                                             |
//! | `exp:6s`             | exponential with mean 6 s                            |
//! | `uniform:4s..10s`    | uniform on [4 s, 10 s]                               |
//! | `lognormal:1s,2`     | lognormal with mean 1 s and coefficient of variation 2 (heavy tail) |
//! | `50s+exp:5s`         | shifted: 50 s plus an exponential with mean 5 s      |
//!
//! Units are `ns`, `us` (or `µs`), `ms`, `s`, `m` (minutes) and `h`.
//!
//! Layout:
//! - [`dist`]: [`Dist`], its parser, display and sampling (`f64` seconds for the
//!   simulator, [`std::time::Duration`] for real timers)
//! - [`duration`]: [`parse_secs_f64`] and [`parse_duration`], one duration
//! - [`error`], the error type: [`DistError`]
//! - [`student`]: Student's t distribution (CDF and quantiles, real degrees of
//!   freedom), for the simulator's intervals and the lab's Welch test
//!
//! ```
//! use rand::SeedableRng;
//! use servelab_dist::Dist;
//!
//! let think: Dist = "1s+exp:5s".parse()?;
//! assert_eq!(think.mean(), 6.0);
//! let mut rng = rand::rngs::StdRng::seed_from_u64(1);
//! assert!(think.sample_duration(&mut rng) >= std::time::Duration::from_secs(1));
//! # Ok::<(), servelab_dist::DistError>(())
//! ```

#![deny(missing_docs)]

pub mod dist;
pub mod duration;
pub mod error;
pub mod student;

pub use dist::{Dist, Random};
pub use duration::{MAX_SECS, parse_duration, parse_secs_f64};
pub use error::DistError;
