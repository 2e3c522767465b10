//! What a run does: the [`LoadSpec`] the CLI and the lab fill in.
//!
//! A spec is plain data with public fields and a [`LoadSpec::new`] that gives
//! wrk-like defaults (10 closed users on one connection each for 10 seconds), so a
//! caller sets only what it cares about. [`LoadSpec::validate`] rejects what cannot
//! run, with a message that names the setting; [`LoadSpec::segment_share`] cuts the
//! users, rate, connections and request count into the share of one segment.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::error::LoadError;
use crate::expect_status::ExpectStatus;
use crate::stages::Stages;
use crate::start_at::StartAt;
use crate::target::{Method, Target};
use servelab_dist::Dist;

/// The highest `--rate` accepted, in requests per second.
pub const MAX_RATE: f64 = 1e7;

/// The most `--streams` accepted: far above any server's
/// SETTINGS_MAX_CONCURRENT_STREAMS (nginx and servelab say 100, h2o 100).
pub const MAX_STREAMS: u32 = 10_000;

/// How long an event loop polls its sockets before it blocks, while
/// requests are in flight, when `--poll-before-sleep` is not given: HTTP/2's
/// in cleartext (see the event loop's module docs and docs/load.md for the
/// measurements).
pub const DEFAULT_POLL_BEFORE_SLEEP_H2: Duration = Duration::from_micros(3);
/// The same for HTTP/2 over TLS (every target `https://`). Longer, because
/// at 3 us a TLS client woke twice as often per request as h2load (0.23
/// against 0.11 at 50x10 against nginx), and on loopback the server pays for
/// each wake-up. At 4 us it woke 0.15 times per request against h2load's
/// 0.12, at 0.92 of h2load's client CPU per request, as at 3 us
/// (bench/results/2026-12-04/h2-path: b3, b4 at 3 us; c1 at 4 us).
/// Both budgets are calibrations of one machine: on a faster one
/// (bench/results/2026-12-05/h2-tls-diag) 4 us left load at 0.90 of
/// h2load's rate at 50x10 over TLS, 8 us matched it at 1.12x h2load's
/// client CPU, and 10x10 did best with no poll at all.
pub const DEFAULT_POLL_BEFORE_SLEEP_H2_TLS: Duration = Duration::from_micros(4);
/// The same for HTTP/1.1: off.
pub const DEFAULT_POLL_BEFORE_SLEEP_HTTP1: Duration = Duration::ZERO;
/// The longest `--nap` accepted: a nap delays the responses that arrive
/// during it, so past a millisecond it would be the client, not the server,
/// that the latencies measure.
pub const MAX_NAP: Duration = Duration::from_millis(1);
/// The longest `--poll-before-sleep` accepted: past it the client burns a
/// CPU to save wake-ups that cost microseconds.
pub const MAX_POLL_BEFORE_SLEEP: Duration = Duration::from_millis(1);

/// How requests are generated.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// A closed population: each user sends a request, waits for its answer, thinks,
    /// and sends the next; a session of `session` requests shares one connection.
    Closed {
        /// Number of users (each holds at most one connection).
        users: u32,
        /// Requests per connection; `None` keeps one connection for the whole run.
        session: Option<u32>,
        /// Think time between an answer and the user's next request.
        think: Dist,
    },
    /// An open stream: requests start at `rate` per second whatever the server does,
    /// on a pool of up to `connections` keep-alive connections; a request that finds
    /// every connection busy waits in the client, and its latency counts from its
    /// intended start (coordinated omission corrected).
    Open {
        /// Requests per second (whole run, all threads).
        rate: f64,
        /// How start times are spaced.
        arrival: Arrival,
        /// Most connections open at once.
        connections: u32,
        /// Requests per connection; `None` keeps connections open.
        session: Option<u32>,
    },
}

/// Spacing of the start times of an open workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrival {
    /// Exponential gaps: a Poisson process (the M in M/M/c).
    #[default]
    Poisson,
    /// Equal gaps of `1/rate` (wrk2's constant throughput).
    Uniform,
}

impl FromStr for Arrival {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, LoadError> {
        match s {
            "poisson" => Ok(Arrival::Poisson),
            "uniform" => Ok(Arrival::Uniform),
            _ => Err(LoadError::Spec(format!(
                "unknown arrival `{s}` (poisson or uniform)"
            ))),
        }
    }
}

impl fmt::Display for Arrival {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arrival::Poisson => "poisson",
            Arrival::Uniform => "uniform",
        })
    }
}

/// One of N equal shares of a run, for running the same command on N machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// 1-based index of this share.
    pub index: u32,
    /// Number of shares.
    pub count: u32,
}

impl Segment {
    /// The whole run.
    pub const WHOLE: Segment = Segment { index: 1, count: 1 };

    /// The share of `total` that this segment takes: equal parts, the first
    /// `total % count` segments taking one more, so that the shares add up exactly.
    pub fn share(&self, total: u64) -> u64 {
        let (n, i) = (self.count as u64, self.index as u64 - 1);
        total / n + u64::from(i < total % n)
    }
}

/// The variable in which a Kubernetes Indexed Job gives each pod its index
/// (0-based), and which `env:N` reads.
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

impl Segment {
    /// The segment of a pod of an Indexed Job of `count` completions, whose
    /// [`INDEX_VAR`] holds `index` (0-based: segment `index + 1` of `count`).
    pub fn of_job_index(index: Option<&str>, count: u32) -> Result<Segment, LoadError> {
        let why = match index {
            None => format!("{INDEX_VAR} is not set (it is in the pods of an Indexed Job)"),
            Some(v) => match v.trim().parse::<u32>() {
                Ok(i) if i < count => {
                    return Ok(Segment {
                        index: i + 1,
                        count,
                    });
                }
                _ => format!("{INDEX_VAR}={v} is not an index from 0 to {}", count - 1),
            },
        };
        Err(LoadError::Spec(format!("--segment env:{count}: {why}")))
    }
}

impl FromStr for Segment {
    type Err = LoadError;
    /// `I/N`, or `env:N`: the index from [`INDEX_VAR`] (a Kubernetes Indexed
    /// Job's pod), plus one.
    fn from_str(s: &str) -> Result<Self, LoadError> {
        if let Some(n) = s.strip_prefix("env:") {
            let count = match n.trim().parse::<u32>() {
                Ok(c) if c > 0 => c,
                _ => {
                    return Err(LoadError::Spec(format!(
                        "bad segment `{s}`: expected env:N with N >= 1"
                    )));
                }
            };
            let index = std::env::var(INDEX_VAR).ok();
            return Segment::of_job_index(index.as_deref(), count);
        }
        let bad = || LoadError::Spec(format!("bad segment `{s}`: expected I/N with 1 <= I <= N"));
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Segment { index, count })
    }
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Everything a run needs; see the crate docs for an example.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// URLs with weights; at least one.
    pub targets: Vec<Target>,
    /// GET or HEAD.
    pub method: Method,
    /// Extra request headers, `Name: value`.
    pub headers: Vec<String>,
    /// Closed users or open arrivals.
    pub workload: Workload,
    /// Stop after this many requests have finished (answered, failed or given up).
    pub requests: Option<u64>,
    /// Stop after this long; requests not finished then are counted as
    /// unfinished (`in_flight`, `never_sent`).
    /// With neither limit, a run lasts 10 s.
    pub duration: Option<Duration>,
    /// Per-attempt timeout; `None` waits forever.
    pub timeout: Option<Dist>,
    /// Retries after a timeout; `None` retries without end (seed 002's users).
    pub retries: Option<u32>,
    /// Wait between a timed-out attempt and its retry.
    pub retry_wait: Dist,
    /// Event-loop threads (at most one per user or connection is used).
    pub threads: usize,
    /// Seed of every random stream (think times, arrivals, targets).
    pub seed: u64,
    /// Which share of the run this process does.
    pub segment: Segment,
    /// The request body of every target without one of its own (see
    /// [`Target::body`]); sent with `Content-Length`. Needs a method that
    /// takes a body (POST, PUT, PATCH, DELETE).
    pub body: Option<Arc<[u8]>>,
    /// When set, the run waits for this time before it starts (see
    /// [`StartAt`]); at most [`MAX_AHEAD`](crate::start_at::MAX_AHEAD) ahead.
    pub start_at: Option<StartAt>,
    /// A load that ramps: the users (closed; `users` must be at least the
    /// highest target) or the rate (open; `rate` must be the highest target)
    /// follow the stages, and the run lasts their total (`duration` unset).
    pub stages: Option<Stages>,
    /// The response statuses that count as ok (default 200 to 399).
    pub expect_status: ExpectStatus,
    /// Send an idempotent request again, once, on a new connection when the
    /// reused keep-alive connection it was sent on closes before any byte of
    /// the answer (default; RFC 9112, 9.3.1). `false` counts it as an error
    /// of class `closed` (or `reset`).
    pub retry_on_close: bool,
    /// TLS settings of `https://` targets (verification, client certificate,
    /// resumption).
    pub tls: crate::tls::TlsOptions,
    /// `https://`: accept only the server certificate of this SHA-256
    /// fingerprint (`--pin`), instead of a chain to a trusted CA.
    pub tls_pin: Option<crate::tls::Pin>,
    /// The latency percentiles of the summary, added to the JSON spectrum
    /// (default p50, p90, p99, p99.9).
    pub percentiles: crate::metric::Percentiles,
    /// HTTP/1.1, or HTTP/2 with N streams per connection (`--h2 --streams N`).
    /// With HTTP/2 a closed run's `users` are connections, each carrying
    /// `streams` closed users (one per stream slot), and an open run's
    /// `connections` carry up to `streams` requests each.
    pub protocol: crate::protocol::Protocol,
    /// Draw a progress bar on stderr when it is a terminal.
    pub progress: bool,
    /// When set (by another thread, or by [`stop_on_signals`](crate::stop_on_signals)),
    /// the run ends at the threads' next loop turn and reports what it saw.
    pub stop: Option<Arc<AtomicBool>>,
    /// How long each event loop polls its sockets (`epoll_wait` with a zero
    /// timeout) before it blocks, while requests are in flight
    /// (`--poll-before-sleep`); zero blocks at once. `None`: the protocol's
    /// default ([`DEFAULT_POLL_BEFORE_SLEEP_H2`],
    /// [`DEFAULT_POLL_BEFORE_SLEEP_HTTP1`]).
    pub poll_before_sleep: Option<Duration>,
    /// How long each event loop sleeps on its own timer when it has requests
    /// in flight and nothing is ready, before it polls and blocks (`--nap`);
    /// zero (the default) never naps. A loop that blocks in `epoll_wait` is
    /// woken by the peer whose data arrives, and on loopback that peer is the
    /// server, which then pays for the wake-up; a napping loop is off the
    /// wait queue, so the server's send wakes nobody. The price: a response
    /// that arrives during a nap is taken up when the nap ends, up to `nap`
    /// late (bench/results/2026-12-05/h2-tls-diag).
    pub nap: Duration,
}

impl LoadSpec {
    /// A spec with the defaults: 10 closed users, one connection each, 10 s, GET.
    pub fn new(targets: Vec<Target>) -> LoadSpec {
        LoadSpec {
            targets,
            method: Method::Get,
            headers: Vec::new(),
            workload: Workload::Closed {
                users: 10,
                session: None,
                think: Dist::ZERO,
            },
            requests: None,
            duration: None,
            timeout: None,
            retries: Some(0),
            retry_wait: Dist::ZERO,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            seed: 1,
            segment: Segment::WHOLE,
            body: None,
            start_at: None,
            stages: None,
            expect_status: ExpectStatus::default(),
            retry_on_close: true,
            tls: crate::tls::TlsOptions::default(),
            tls_pin: None,
            percentiles: crate::metric::Percentiles::standard(),
            protocol: crate::protocol::Protocol::Http1,
            progress: false,
            stop: None,
            poll_before_sleep: None,
            nap: Duration::ZERO,
        }
    }

    /// The time limit in force: the stages' total, or `duration`, or 10 s
    /// when neither limit is set.
    pub fn effective_duration(&self) -> Option<Duration> {
        if let Some(st) = &self.stages {
            return Some(st.total());
        }
        match (self.requests, self.duration) {
            (None, None) => Some(Duration::from_secs(10)),
            (_, d) => d,
        }
    }

    /// Checks that the spec can run.
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |s: &str| Err(LoadError::Spec(s.to_string()));
        if self.targets.is_empty() {
            return bad("no target URL (give one or more URLs, or --urls FILE)");
        }
        for t in &self.targets {
            crate::target::parse_url(&t.url)?;
            if !(t.weight.is_finite() && t.weight > 0.0) {
                return bad(&format!(
                    "the weight of {} must be a positive number",
                    t.url
                ));
            }
        }
        let bodies = self
            .body
            .iter()
            .chain(self.targets.iter().filter_map(|t| t.body.as_ref()));
        let mut total = 0u64;
        for b in bodies {
            if !self.method.takes_body() {
                return bad(&format!(
                    "a request body needs --method POST, PUT, PATCH or DELETE, not {}",
                    self.method.as_str()
                ));
            }
            if b.len() as u64 > crate::target::MAX_BODY {
                return bad("a request body is above 64 MiB");
            }
            total += b.len() as u64;
        }
        if total > crate::target::MAX_BODIES {
            return bad("the request bodies hold more than 256 MiB together");
        }
        if let Some(at) = self.start_at {
            let ahead =
                at.0.duration_since(std::time::SystemTime::now())
                    .unwrap_or_default();
            if ahead > crate::start_at::MAX_AHEAD {
                return bad(&format!(
                    "--start-at {at} is more than 24 hours ahead: check the date"
                ));
            }
        }
        if self.threads == 0 {
            return bad("--threads must be at least 1");
        }
        if self.requests == Some(0) {
            return bad("--requests must be at least 1");
        }
        if self.duration.is_some_and(|d| d.is_zero()) {
            return bad("--duration must be positive");
        }
        if self.timeout.is_some_and(|t| t.mean() <= 0.0) {
            return bad("--timeout must be positive");
        }
        if self
            .poll_before_sleep
            .is_some_and(|d| d > MAX_POLL_BEFORE_SLEEP)
        {
            return bad("--poll-before-sleep must be at most 1ms (0 turns it off)");
        }
        if self.nap > MAX_NAP {
            return bad("--nap must be at most 1ms (0 turns it off)");
        }
        if let crate::protocol::Protocol::H2 { streams } = self.protocol {
            self.validate_h2(streams)?;
        }
        if let Some(st) = &self.stages {
            if self.duration.is_some() {
                return bad("--stages set the length of the run: drop --duration");
            }
            let max = st.max();
            match self.workload {
                Workload::Closed { users, .. } if f64::from(users) < max.ceil() => {
                    return bad(&format!(
                        "--stages reach {max} users, but only {users} are allocated"
                    ));
                }
                Workload::Open { rate, .. } if rate != max => {
                    return bad(&format!(
                        "with --stages the stages set the rate: write --rate {max} \
                         (their highest target), not --rate {rate}"
                    ));
                }
                _ => {}
            }
        }
        match self.workload {
            Workload::Closed { users, session, .. } => {
                if users == 0 {
                    return bad("--users must be at least 1");
                }
                if session == Some(0) {
                    return bad("--session must be at least 1");
                }
            }
            Workload::Open {
                rate,
                connections,
                session,
                ..
            } => {
                if !(rate.is_finite() && rate > 0.0) {
                    return bad("--rate must be a positive number of requests per second");
                }
                // Far beyond what one client machine sends; it also keeps the gap
                // between arrivals (1/rate) a representable, non-zero duration.
                if rate > MAX_RATE {
                    return bad("--rate is above 10,000,000 requests per second");
                }
                if connections == 0 {
                    return bad("--connections must be at least 1");
                }
                if session == Some(0) {
                    return bad("--session must be at least 1");
                }
            }
        }
        Ok(())
    }

    /// How long the event loops poll before they block: `poll_before_sleep`,
    /// or the protocol's default (for HTTP/2, over TLS when every target is
    /// `https://`: one loop polls for all its connections).
    pub fn poll_before_sleep(&self) -> Duration {
        let tls = || {
            self.targets
                .iter()
                .all(|t| crate::target::parse_url(&t.url).is_ok_and(|u| u.tls))
        };
        self.poll_before_sleep.unwrap_or(if !self.protocol.is_h2() {
            DEFAULT_POLL_BEFORE_SLEEP_HTTP1
        } else if tls() {
            DEFAULT_POLL_BEFORE_SLEEP_H2_TLS
        } else {
            DEFAULT_POLL_BEFORE_SLEEP_H2
        })
    }

    /// What HTTP/2 does not support yet, refused in one line each (never
    /// silently ignored).
    fn validate_h2(&self, streams: u32) -> Result<(), LoadError> {
        let bad = |s: &str| Err(LoadError::Spec(s.to_string()));
        if streams == 0 || streams > MAX_STREAMS {
            return bad(&format!(
                "--streams must be from 1 to {MAX_STREAMS} (requests in flight per connection)"
            ));
        }
        if self.stages.is_some() {
            return bad("--stages is not supported with --h2 yet: use --users or --rate");
        }
        let session = match self.workload {
            Workload::Closed { session, .. } | Workload::Open { session, .. } => session,
        };
        if session.is_some() {
            return bad(
                "--session is not supported with --h2 yet: an HTTP/2 connection lasts the run",
            );
        }
        Ok(())
    }

    /// The spec of this process's segment: its share of users (or rate and
    /// connections) and of the request count. Fails when the share is empty.
    pub fn segment_share(&self) -> Result<LoadSpec, LoadError> {
        let seg = self.segment;
        let mut out = self.clone();
        if seg.count == 1 {
            return Ok(out);
        }
        match &mut out.workload {
            Workload::Closed { users, .. } => {
                *users = seg.share(u64::from(*users)) as u32;
                if *users == 0 {
                    return Err(LoadError::Spec(format!(
                        "segment {seg} gets no users: use at least {} users",
                        seg.count
                    )));
                }
            }
            Workload::Open {
                rate, connections, ..
            } => {
                *rate /= f64::from(seg.count);
                *connections = (seg.share(u64::from(*connections)) as u32).max(1);
            }
        }
        if let Some(r) = &mut out.requests {
            *r = seg.share(*r);
            if *r == 0 {
                return Err(LoadError::Spec(format!("segment {seg} gets no requests")));
            }
        }
        // Different segments must not replay the same random streams.
        out.seed = self
            .seed
            .wrapping_add(u64::from(seg.index - 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_shares_add_up() {
        for total in [0u64, 1, 7, 10, 1001] {
            for n in 1..6 {
                let sum: u64 = (1..=n)
                    .map(|i| Segment { index: i, count: n }.share(total))
                    .sum();
                assert_eq!(sum, total, "{total} over {n}");
            }
        }
    }

    #[test]
    fn a_segment_from_a_job_index() {
        assert_eq!(
            Segment::of_job_index(Some("0"), 3).unwrap(),
            Segment { index: 1, count: 3 }
        );
        assert_eq!(
            Segment::of_job_index(Some("2"), 3).unwrap(),
            Segment { index: 3, count: 3 }
        );
        let e = Segment::of_job_index(Some("3"), 3).unwrap_err().to_string();
        assert!(
            e.contains("JOB_COMPLETION_INDEX=3 is not an index from 0 to 2"),
            "{e}"
        );
        let e = Segment::of_job_index(None, 3).unwrap_err().to_string();
        assert!(
            e.contains("--segment env:3: JOB_COMPLETION_INDEX is not set"),
            "{e}"
        );
        assert!("env:0".parse::<Segment>().is_err());
        assert!("env:x".parse::<Segment>().is_err());
    }

    #[test]
    fn segment_parses() {
        assert_eq!(
            "2/3".parse::<Segment>().unwrap(),
            Segment { index: 2, count: 3 }
        );
        for bad in ["0/3", "4/3", "x", "1/0", "1/"] {
            assert!(bad.parse::<Segment>().is_err(), "{bad}");
        }
    }

    #[test]
    fn segment_share_splits_users_and_requests() {
        let mut s = LoadSpec::new(vec![Target::new("http://127.0.0.1/")]);
        s.workload = Workload::Closed {
            users: 5,
            session: None,
            think: Dist::ZERO,
        };
        s.requests = Some(101);
        s.segment = Segment { index: 1, count: 2 };
        let a = s.segment_share().unwrap();
        s.segment = Segment { index: 2, count: 2 };
        let b = s.segment_share().unwrap();
        assert_eq!(a.requests.unwrap() + b.requests.unwrap(), 101);
        let users = |s: &LoadSpec| match s.workload {
            Workload::Closed { users, .. } => users,
            _ => 0,
        };
        assert_eq!(users(&a) + users(&b), 5);
        assert_ne!(a.seed, b.seed);
        s.segment = Segment { index: 6, count: 6 };
        assert!(s.segment_share().is_err());
    }

    #[test]
    fn validate_names_the_setting() {
        let mut s = LoadSpec::new(vec![Target::new("http://127.0.0.1/")]);
        assert!(s.validate().is_ok());
        s.workload = Workload::Open {
            rate: 0.0,
            arrival: Arrival::Poisson,
            connections: 1,
            session: None,
        };
        assert!(s.validate().unwrap_err().to_string().contains("--rate"));
        s.targets.clear();
        assert!(s.validate().is_err());
    }
}
