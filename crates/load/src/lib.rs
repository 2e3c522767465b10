//! servelab-load: an HTTP/1.1 load generator for closed users, open arrivals,
//! sessions, timeouts and retries, fast enough that the server is what gets measured
//! and exact in its percentiles.
//!
//! It reproduces the ways the seed reports drove their servers: httperf sessions
//! (`users` x `session` requests with think time), a threaded client, ab concurrency
//! sweeps (`session = 1`), and seed 002's users who think, time out and retry.
//!
//! Layout:
//! - [`spec`]: [`LoadSpec`], [`Workload`], [`Arrival`], [`Segment`]: what a run does
//! - [`Dist`] (from `servelab-dist`): the DIST syntax for think times, timeouts
//!   and waits, the same one that `servelab serve --delay` and `servelab sim` read
//! - [`target`]: [`Target`] URLs, weights, URL files, prebuilt request bytes
//! - `run`: [`run`], which splits the work over event-loop threads
//! - `event_loop` (with `exchange`, `closed`, `open`): one epoll event loop per
//!   thread; `client_conn`: one client connection (a closed user, or a
//!   connection of the open pool); `timer`: the loop's timer queue;
//!   `control`: what the threads share (request tickets, progress, stop)
//! - `arrival`: the start times of open requests
//! - `response`: the strict, copy-free response parser
//! - `metrics`, [`histogram`]: what each thread records ([`Counts`], [`Errors`],
//!   [`Second`], HdrHistograms)
//! - [`report`]: [`Report`], its JSON schema, its summary, and [`Report::merge`]
//! - [`threshold`]: [`Threshold`], k6-like pass/fail checks (`p99>200ms`, `errors>1%`)
//! - `progress`: the terminal progress bar
//!
//! # Example
//!
//! ```no_run
//! use servelab_load::{LoadSpec, Target, Workload};
//!
//! let mut spec = LoadSpec::new(vec![Target::new("http://127.0.0.1:8080/index.html")]);
//! // Seed 000: 8 users, sessions of 10 requests, 1 s of think time.
//! spec.workload = Workload::Closed { users: 8, session: Some(10), think: "1s".parse()? };
//! spec.requests = Some(800);
//! let report = servelab_load::run(&spec)?;
//! assert_eq!(report.counts.completed, 800);
//! println!("{}", report.summary());
//! println!("p99 = {} us", report.latency.p99);
//! # Ok::<(), servelab_load::LoadError>(())
//! ```
//!
//! # Workloads
//!
//! - Closed (`users`): each user opens a connection, sends `session` requests on it
//!   (keep-alive; `session = 1` is one request per connection), thinks `think`
//!   after every answer (also between sessions), closes after its session and
//!   starts over. Without a session a user keeps one connection for the run, as
//!   wrk's connections do. The last request of a session carries
//!   `Connection: close`. A connection that closes for any other reason (an error,
//!   a timeout, the server) is replaced by a new one with a fresh session.
//! - Open (`rate`): requests start at `rate` per second (Poisson or evenly spaced),
//!   whatever the server does, on a pool of up to `connections` keep-alive
//!   connections. A request that finds them all busy waits in the client; its
//!   `latency` counts from its intended start (coordinated omission corrected, as
//!   wrk2 does), while `latency_uncorrected` counts from when it was sent.
//! - Timeouts: each attempt has a timeout drawn from `timeout`; an attempt that
//!   expires is abandoned (its connection closed) and retried after `retry_wait`,
//!   up to `retries` times (`None`: forever). A retried request keeps its intended
//!   start, so its `latency` includes the failed attempts and the waits.
//! - Limits: `requests` ends the run after exactly that many requests have
//!   finished (ok or error): closed users each send an equal share (seed 002's
//!   users issue a fixed number of requests; it also keeps sessions whole), open
//!   arrivals stop after that many. `duration` ends the run at that time, dropping
//!   requests still in flight. Without either a run lasts 10 s. `stop` ends it
//!   early (Ctrl-C in the CLI) and it still reports.
//! - Several targets: a request picks one by weight; a connection carries only
//!   requests for the address it was opened to.
//! - Segments: `segment = I/N` runs the I-th of N equal shares of the users (or of
//!   the rate and connections) and of the request count, with its own random
//!   streams; [`Report::merge`] adds the segments' reports exactly.
//!
//! # What counts as an error
//!
//! Every response is checked: status line and headers must parse, `Content-Length`
//! (or the chunked framing) is honoured, an EOF inside a response or bytes after it
//! are errors. A request ends either ok (a valid 2xx response) or in exactly one
//! error class of [`Errors`]: `connect_refused`, `connect_other`, `reset`,
//! `closed` (closed before any response byte), `timeout` (no retry left),
//! `malformed`, `non_2xx` (valid, but not 2xx), `io_other`. So
//! `counts.completed == counts.ok + counts.errors` and
//! `counts.errors == errors.total()`.
//!
//! # JSON schema `servelab-load/1`
//!
//! `servelab load --json FILE` writes [`Report`] with serde; readers check
//! `schema` first. Within version 1 fields may be added, never renamed or removed.
//! All durations in histograms are integer microseconds.
//!
//! ```text
//! {
//!   "schema": "servelab-load/1",
//!   "generator": "servelab-load 0.1.0",
//!   "run": { "workload": "closed"|"open", "users", "rate", "arrival", "connections",
//!            "session", "think", "targets": [[url, weight]], "method", "headers",
//!            "requests", "duration_s", "timeout", "retries": "N"|"inf",
//!            "retry_wait", "seed" },          // the command, before segment split
//!   "segments": ["1/2", "2/2"],               // segments this report covers
//!   "threads": 4, "started_unix_ms": 0, "duration_s": 10.0, "client_cpu_s": 1.2,
//!   "counts": { "completed", "ok", "errors", "attempts", "timeouts", "retries",
//!               "connections", "idle_closed", "bytes_sent", "bytes_received" },
//!   "errors": { "connect_refused", "connect_other", "reset", "closed", "timeout",
//!               "malformed", "non_2xx", "io_other" },
//!   "status": { "200": 990, "404": 10 },
//!   "throughput": { "requests_per_s", "ok_per_s", "bytes_per_s", "cpu_us_per_request" },
//!   "latency":             HISTOGRAM,  // intended start -> response end (corrected)
//!   "latency_uncorrected": HISTOGRAM,  // last send -> response end
//!   "ttfb":                HISTOGRAM,  // send -> first response byte
//!   "connect":             HISTOGRAM,  // TCP connect
//!   "series": [ { "t": 0, "completed", "ok", "errors", "timeouts", "bytes" }, ... ]
//! }
//! HISTOGRAM = { "count", "min", "mean", "stdev", "p50", "p90", "p99", "p999", "max",
//!               "percentiles": [[0.0, v], [10.0, v], ..., [99.999, v], [100.0, v]],
//!               "buckets": [[highest_value_of_bucket_us, count], ...] }
//! ```
//!
//! `buckets` rebuild the HdrHistogram (1 us to 1 h, 3 significant digits) exactly,
//! which is how `merge` adds segments without averaging percentiles.

#![deny(missing_docs)]

pub mod histogram;
pub mod report;
pub mod spec;
pub mod target;
pub mod threshold;

mod arrival;
mod client_conn;
mod control;
mod error;
mod event_loop;
mod metrics;
mod progress;
mod response;
mod run;
mod timer;

pub use error::LoadError;
pub use histogram::Histogram;
pub use metrics::{Counts, Errors, Second};
pub use report::{Report, RunInfo, SCHEMA, Throughput};
pub use run::{run, stop_on_signals};
pub use servelab_dist::Dist;
pub use spec::{Arrival, LoadSpec, Segment, Workload};
pub use target::{Method, Target, read_url_file};
pub use threshold::{Threshold, Verdict};
