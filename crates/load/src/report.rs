//! The result of a run: [`Report`], its JSON form, its human summary, and merging.
//!
//! The JSON form is the contract with the lab and with `servelab load merge`; its
//! schema is versioned by the `schema` field (`servelab-load/6`) and documented in
//! the crate docs. A reader must check `schema` and refuse other versions; fields
//! may be added within a version, never renamed or removed.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::connect_failure::{ConnectFailure, NEVER_CONNECTED};
use crate::error::LoadError;
use crate::h2_counts::H2Counts;
use crate::handshake_failure::HandshakeFailures;
use crate::histogram::Histogram;
use crate::metric::{Metric, Percentiles};
use crate::metrics::{Counts, Errors, Recorder, STATUS_SLOTS, Second, add_series};
use crate::spec::{LoadSpec, Workload};
use crate::stages::Stages;
use crate::think::ThinkTimes;

/// The schema version written in every report.
pub const SCHEMA: &str = "servelab-load/6";

/// The version before [`SCHEMA`], still read: it differs only by the fields
/// version 6 added (`run.protocol`, `run.streams`, `h2`), and every
/// version 5 report is an HTTP/1.1 run.
pub const SCHEMA_V5: &str = "servelab-load/5";

/// Below this share of the offered rate, an open run's target is saturated.
pub const SATURATED_BELOW: f64 = 0.95;

/// The command a report came from (the whole run, before any segment split).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// `closed` or `open`.
    pub workload: String,
    /// `http/1.1` or `h2` (version 6; version 5 reports read as `http/1.1`).
    #[serde(default = "http1_name")]
    pub protocol: String,
    /// `h2`: requests in flight per connection (`--streams`); `null` for
    /// HTTP/1.1.
    #[serde(default)]
    pub streams: Option<u32>,
    /// Closed: number of users (with `h2`: connections × streams, one user
    /// per stream slot).
    pub users: Option<u32>,
    /// Open: requests per second.
    pub rate: Option<f64>,
    /// Open: `poisson` or `uniform`.
    pub arrival: Option<String>,
    /// Open: most connections at once. Closed `h2`: the connections the
    /// users share (`null` for closed HTTP/1.1, where it equals `users`).
    pub connections: Option<u32>,
    /// Requests per connection (`null`: one connection for the whole run).
    pub session: Option<u32>,
    /// Closed: think time DIST.
    pub think: Option<String>,
    /// Targets as `[url, weight]`, a login's password shown as `***`.
    pub targets: Vec<(String, f64)>,
    /// `GET`, `HEAD`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// Per target, the length of its request body in bytes (0: none).
    pub body_bytes: Vec<u64>,
    /// Extra request headers.
    pub headers: Vec<String>,
    /// Request limit of the whole run.
    pub requests: Option<u64>,
    /// Time limit in seconds.
    pub duration_s: Option<f64>,
    /// Per-attempt timeout DIST (`null`: none).
    pub timeout: Option<String>,
    /// Retries after a timeout: a number or `inf`.
    pub retries: String,
    /// Wait before a retry, DIST.
    pub retry_wait: String,
    /// Seed of the random streams.
    pub seed: u64,
    /// The statuses that count as ok, canonical (`200-399`, `200,304`).
    pub expect_status: String,
    /// Whether a request whose reused connection closed before any answer
    /// was sent again (`true`) or counted as an error.
    pub retry_on_close: bool,
    /// The stages, canonical (`30s:100,120s:100,30s:0`), or `null`.
    pub stages: Option<String>,
    /// `--start-at`, RFC 3339 UTC, or `null`.
    pub start_at: Option<String>,
    /// The latency percentiles of the summary (`--percentiles`), e.g.
    /// `[50.0, 90.0, 99.0, 99.9]`; each is in every histogram's spectrum.
    #[serde(default)]
    pub percentiles: Percentiles,
    /// How long each event loop polled its sockets before it blocked while
    /// requests were in flight (`--poll-before-sleep`, or the protocol's
    /// default), in microseconds; `0`: it blocked at once. Added within
    /// version 6: `null` in a report written before it (whose loops blocked
    /// at once).
    #[serde(default)]
    pub poll_before_sleep_us: Option<f64>,
    /// How long each event loop napped on its own timer before it blocked
    /// (`--nap`), in microseconds; `0`: it never napped. Added within version
    /// 6: `null` in a report written before it (whose loops never napped).
    #[serde(default)]
    pub nap_us: Option<f64>,
}

fn http1_name() -> String {
    crate::protocol::Protocol::Http1.name().to_string()
}

impl RunInfo {
    pub(crate) fn of(spec: &LoadSpec) -> RunInfo {
        let h2 = spec.protocol.is_h2();
        let mut info = RunInfo {
            workload: String::new(),
            protocol: spec.protocol.name().to_string(),
            streams: h2.then(|| spec.protocol.streams()),
            users: None,
            rate: None,
            arrival: None,
            connections: None,
            session: None,
            think: None,
            targets: spec
                .targets
                .iter()
                .map(|t| (crate::login::redact(&t.url), t.weight))
                .collect(),
            method: spec.method.as_str().to_string(),
            body_bytes: spec
                .targets
                .iter()
                .map(|t| {
                    t.body
                        .as_ref()
                        .or(spec.body.as_ref())
                        .map_or(0, |b| b.len() as u64)
                })
                .collect(),
            headers: spec.headers.clone(),
            requests: spec.requests,
            duration_s: spec.effective_duration().map(|d| d.as_secs_f64()),
            timeout: spec.timeout.map(|t| t.to_string()),
            retries: spec.retries.map_or("inf".to_string(), |r| r.to_string()),
            retry_wait: spec.retry_wait.to_string(),
            seed: spec.seed,
            expect_status: spec.expect_status.to_string(),
            retry_on_close: spec.retry_on_close,
            poll_before_sleep_us: Some(spec.poll_before_sleep().as_secs_f64() * 1e6),
            nap_us: Some(spec.nap.as_secs_f64() * 1e6),
            stages: spec.stages.as_ref().map(|s| s.to_string()),
            start_at: spec.start_at.map(|t| t.to_string()),
            percentiles: spec.percentiles.clone(),
        };
        match spec.workload {
            Workload::Closed {
                users,
                session,
                think,
            } => {
                info.workload = "closed".into();
                info.users = Some(users.saturating_mul(spec.protocol.streams()));
                info.connections = h2.then_some(users);
                info.session = session;
                info.think = Some(think.to_string());
            }
            Workload::Open {
                rate,
                arrival,
                connections,
                session,
            } => {
                info.workload = "open".into();
                info.rate = Some(rate);
                info.arrival = Some(arrival.to_string());
                info.connections = Some(connections);
                info.session = session;
            }
        }
        info
    }
}

/// Rates over the run's duration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Open workload: scheduled requests per second, the offered rate (`null`
    /// for closed users, whose rate is what the server allows).
    pub offered_per_s: Option<f64>,
    /// Completed requests per second, the achieved rate.
    pub requests_per_s: f64,
    /// Ok requests per second (goodput).
    pub ok_per_s: f64,
    /// Response bytes per second.
    pub bytes_per_s: f64,
    /// Client CPU (user + system, all event-loop threads) per completed request,
    /// us (`null` when no request completed).
    pub cpu_us_per_request: Option<f64>,
    /// Client thread CPU per completed TLS handshake (`tls_cpu_s` over
    /// `counts.tls_full + counts.tls_resumed`), us; `null` without a handshake.
    pub cpu_us_per_handshake: Option<f64>,
}

/// Everything a run measured. Serialises to the documented JSON schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// The generator and its version.
    pub generator: String,
    /// The command (whole run).
    pub run: RunInfo,
    /// The segments this report covers, as `I/N`, sorted.
    pub segments: Vec<String>,
    /// Event-loop threads used (summed over segments).
    pub threads: usize,
    /// Wall-clock start, milliseconds since the Unix epoch (earliest segment).
    pub started_unix_ms: u64,
    /// Length of the run in seconds (longest segment).
    pub duration_s: f64,
    /// The run stopped early because its target could not be reached: no
    /// connect ever succeeded within [`NEVER_CONNECTED`] of the start, or (a
    /// run limited only by `requests`) none succeeded for 10 s. In a merge: any
    /// segment.
    pub unreachable: bool,
    /// The run was cut short (Ctrl-C, SIGTERM, or [`LoadSpec::stop`]) before
    /// its requests or its time were done; its figures cover the part that
    /// ran. In a merge: any segment.
    #[serde(default)]
    pub interrupted: bool,
    /// When no connect succeeded in the whole run and some failed: the last
    /// failure, which the CLI prints as its error (`connection refused to
    /// ADDR: is a server listening?`). `null` otherwise.
    pub connect_failure: Option<ConnectFailure>,
    /// With `--start-at`: how late the run started after that time, ms (the
    /// oversleep, or how long ago the time had passed when the process got
    /// there). In a merge: the latest segment's. `null` without `--start-at`.
    pub start_lag_ms: Option<f64>,
    /// CPU seconds the event-loop threads used (summed over segments).
    pub client_cpu_s: f64,
    /// Request and connection counters.
    pub counts: Counts,
    /// Failed requests by class.
    pub errors: Errors,
    /// Responses by status code.
    pub status: BTreeMap<String, u64>,
    /// Rates.
    pub throughput: Throughput,
    /// Latency from the intended start to the request's outcome (corrected for
    /// coordinated omission), us: to the complete response (any status) or to
    /// the error that ended it. One value per finished request: `count ==
    /// counts.completed` (since `servelab-load/5`; version 4 also held the
    /// unfinished requests' ages, which biased its mean low).
    pub latency: Histogram,
    /// The age at the end of the run of each request unfinished then
    /// (`counts.in_flight + counts.never_sent`): the end less its intended
    /// start, us, a lower bound of its latency. `count == in_flight +
    /// never_sent`.
    pub unfinished_age: Histogram,
    /// Latency from the last attempt's send to the complete response, us.
    pub latency_uncorrected: Histogram,
    /// Time from send to the first response byte, us.
    pub ttfb: Histogram,
    /// TCP connect time, us.
    pub connect: Histogram,
    /// TLS handshake time, from the TCP connect's end to the handshake's,
    /// us; completed handshakes only (empty for `http://`).
    pub tls_handshake: Histogram,
    /// Failed TLS handshakes by kind (`errors.tls_handshake` in all).
    pub tls_failures: HandshakeFailures,
    /// Client thread CPU spent in completed TLS handshakes, s: each
    /// handshake's building of its ClientHello and every step that moved it
    /// on, timed with the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`, ns).
    pub tls_cpu_s: f64,
    /// One entry per second of the run.
    pub series: Vec<Second>,
    /// Closed users with a think time: the asked, drawn and measured mean
    /// think ([`ThinkTimes`]); `null` otherwise. Little's law for closed
    /// users holds with `think.measured_mean_us` as Z.
    #[serde(default)]
    pub think: Option<ThinkTimes>,
    /// `h2` runs: what the streams did ([`H2Counts`]); `null` for HTTP/1.1.
    #[serde(default)]
    pub h2: Option<H2Counts>,
}

impl Report {
    /// Builds the report of one process's run from its merged recorder.
    pub(crate) fn build(
        spec: &LoadSpec,
        rec: &Recorder,
        threads: usize,
        started_unix_ms: u64,
        elapsed: Duration,
        cpu: Duration,
    ) -> Report {
        let mut status = BTreeMap::new();
        for (code, &n) in rec.status.iter().enumerate() {
            if n > 0 {
                let key = if code == STATUS_SLOTS - 1 {
                    "other".to_string()
                } else {
                    code.to_string()
                };
                status.insert(key, n);
            }
        }
        let mut r = Report {
            schema: SCHEMA.to_string(),
            generator: format!("servelab-load {}", env!("CARGO_PKG_VERSION")),
            run: RunInfo::of(spec),
            segments: vec![spec.segment.to_string()],
            threads,
            started_unix_ms,
            duration_s: elapsed.as_secs_f64(),
            unreachable: false,
            interrupted: false,
            connect_failure: None,
            start_lag_ms: None,
            client_cpu_s: cpu.as_secs_f64(),
            counts: rec.counts,
            errors: rec.errors,
            status,
            throughput: Throughput::default(),
            latency: Histogram::from_hdr_with(&rec.latency, &spec.percentiles),
            unfinished_age: Histogram::from_hdr_with(&rec.unfinished_age, &spec.percentiles),
            latency_uncorrected: Histogram::from_hdr_with(
                &rec.latency_uncorrected,
                &spec.percentiles,
            ),
            ttfb: Histogram::from_hdr_with(&rec.ttfb, &spec.percentiles),
            connect: Histogram::from_hdr_with(&rec.connect, &spec.percentiles),
            tls_handshake: Histogram::from_hdr_with(&rec.tls_handshake, &spec.percentiles),
            tls_failures: rec.tls_failures,
            tls_cpu_s: rec.tls_cpu.as_secs_f64(),
            series: rec.series.clone(),
            think: match spec.workload {
                Workload::Closed { think, .. } if !think.is_zero() => {
                    Some(ThinkTimes::of(think.mean(), &rec.thinks))
                }
                _ => None,
            },
            h2: spec.protocol.is_h2().then_some(rec.h2),
        };
        r.throughput = r.rates();
        r.finish_series();
        r
    }

    /// The run's stages, when it had some.
    pub fn stages(&self) -> Option<Stages> {
        self.run.stages.as_deref().and_then(|s| s.parse().ok())
    }

    /// Fills in each second's percentiles, and marks it with the stage under
    /// way at its start.
    fn finish_series(&mut self) {
        let stages = self.stages();
        for sec in &mut self.series {
            sec.finish();
            if let Some(st) = &stages {
                sec.stage = Some(st.index_at(Duration::from_secs(sec.t)) as u32);
            }
        }
    }

    fn rates(&self) -> Throughput {
        let d = self.duration_s.max(1e-9);
        Throughput {
            offered_per_s: (self.run.workload == "open").then(|| self.counts.scheduled as f64 / d),
            requests_per_s: self.counts.completed as f64 / d,
            ok_per_s: self.counts.ok as f64 / d,
            bytes_per_s: self.counts.bytes_received as f64 / d,
            cpu_us_per_request: (self.counts.completed > 0)
                .then(|| self.client_cpu_s * 1e6 / self.counts.completed as f64),
            cpu_us_per_handshake: {
                let n = self.counts.tls_full + self.counts.tls_resumed;
                (n > 0).then(|| self.tls_cpu_s * 1e6 / n as f64)
            },
        }
    }

    /// The value of `m` in this report (microseconds, a share, or per second),
    /// or why the report has none.
    pub fn metric(&self, m: Metric) -> Result<f64, &'static str> {
        let h = &self.latency;
        let latency = |v: f64| {
            if h.count == 0 {
                Err("no request finished, so no latency was measured")
            } else {
                Ok(v)
            }
        };
        match m {
            Metric::Percentile(p) => latency(h.percentile(p) as f64),
            Metric::Max => latency(h.max as f64),
            Metric::Mean => latency(h.mean),
            Metric::Errors => self
                .error_rate()
                .ok_or("no request finished and none failed"),
            Metric::Unfinished => {
                let c = &self.counts;
                if c.scheduled == 0 {
                    Err("no request was scheduled")
                } else {
                    Ok((c.in_flight + c.never_sent) as f64 / c.scheduled as f64)
                }
            }
            Metric::Rps => Ok(self.throughput.requests_per_s),
            Metric::Goodput => Ok(self.throughput.ok_per_s),
        }
    }

    /// The share of outcomes that were errors: `errors / (ok + errors)`, where
    /// errors are failed requests and failed connects. `None` when there was no
    /// outcome at all (nothing answered, nothing failed).
    pub fn error_rate(&self) -> Option<f64> {
        let outcomes = self.counts.ok + self.counts.errors;
        (outcomes > 0).then(|| self.counts.errors as f64 / outcomes as f64)
    }

    /// Open workload: `(offered, achieved)` requests per second when the
    /// achieved rate is below [`SATURATED_BELOW`] of the offered one, i.e. the
    /// target did not keep up and the client's backlog grew.
    pub fn saturation(&self) -> Option<(f64, f64)> {
        let offered = self.throughput.offered_per_s?;
        let achieved = self.throughput.requests_per_s;
        (offered > 0.0 && achieved < SATURATED_BELOW * offered).then_some((offered, achieved))
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }

    /// Parses a JSON report, checking the schema version.
    pub fn from_json(text: &str, path: &Path) -> Result<Report, LoadError> {
        let bad = |why: String| LoadError::Report {
            path: path.to_path_buf(),
            why,
        };
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SCHEMA | SCHEMA_V5) => {}
            Some(old @ ("servelab-load/4" | "servelab-load/3" | "servelab-load/2")) => {
                return Err(bad(format!(
                    "schema `{old}`, expected `{SCHEMA}`: its `latency` mixes the unfinished \
                     requests' ages (lower bounds) with the finished requests' latencies, which \
                     `{SCHEMA}` keeps apart; rerun it"
                )));
            }
            Some(other) => return Err(bad(format!("schema `{other}`, expected `{SCHEMA}`"))),
            None => return Err(bad("no `schema` field".to_string())),
        }
        serde_json::from_value(value).map_err(|e| bad(e.to_string()))
    }

    /// Reads a JSON report from a file.
    pub fn read(path: &Path) -> Result<Report, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::File {
            path: path.to_path_buf(),
            source,
        })?;
        Report::from_json(&text, path)
    }

    /// Writes the JSON report to a file.
    pub fn write(&self, path: &Path) -> Result<(), LoadError> {
        std::fs::write(path, self.to_json() + "\n").map_err(|source| LoadError::File {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Merges the reports of segments of one run, exactly: counters and histograms
    /// are added, percentiles recomputed from the added histograms.
    pub fn merge(reports: &[Report]) -> Result<Report, LoadError> {
        let Some(first) = reports.first() else {
            return Err(LoadError::Merge("no reports".to_string()));
        };
        let mut out = first.clone();
        let mut hists = [
            first.latency.to_hdr()?,
            first.latency_uncorrected.to_hdr()?,
            first.ttfb.to_hdr()?,
            first.connect.to_hdr()?,
            first.tls_handshake.to_hdr()?,
            first.unfinished_age.to_hdr()?,
        ];
        for r in &reports[1..] {
            if r.run != first.run {
                return Err(LoadError::Merge(
                    "the reports come from different commands (compare their `run` fields)"
                        .to_string(),
                ));
            }
            for s in &r.segments {
                if out.segments.contains(s) {
                    return Err(LoadError::Merge(format!(
                        "segment {s} appears twice; merge each segment once"
                    )));
                }
                out.segments.push(s.clone());
            }
            for (h, j) in hists.iter_mut().zip([
                &r.latency,
                &r.latency_uncorrected,
                &r.ttfb,
                &r.connect,
                &r.tls_handshake,
                &r.unfinished_age,
            ]) {
                h.add(j.to_hdr()?)
                    .map_err(|e| LoadError::Merge(format!("{e:?}")))?;
            }
            out.counts.add(&r.counts);
            out.errors.add(&r.errors);
            out.tls_failures.add(&r.tls_failures);
            out.tls_cpu_s += r.tls_cpu_s;
            for (k, v) in &r.status {
                *out.status.entry(k.clone()).or_insert(0) += v;
            }
            add_series(&mut out.series, &r.series);
            out.threads += r.threads;
            out.started_unix_ms = out.started_unix_ms.min(r.started_unix_ms);
            out.duration_s = out.duration_s.max(r.duration_s);
            out.unreachable |= r.unreachable;
            out.interrupted |= r.interrupted;
            out.start_lag_ms = match (out.start_lag_ms, r.start_lag_ms) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            // A run never connected only if no segment did.
            if r.connect_failure.is_none() {
                out.connect_failure = None;
            }
            out.client_cpu_s += r.client_cpu_s;
            out.h2 = match (out.h2, r.h2) {
                (Some(mut a), Some(b)) => {
                    a.add(&b);
                    Some(a)
                }
                (a, b) => a.or(b),
            };
            out.think = match (out.think, r.think) {
                (Some(a), Some(b)) => Some(a.merged(&b)),
                (a, b) => a.or(b),
            };
        }
        out.segments.sort_by_key(|s| {
            s.split_once('/')
                .and_then(|(i, _)| i.parse::<u32>().ok())
                .unwrap_or(0)
        });
        let [l, lu, t, c, h, u] = hists;
        out.unfinished_age = Histogram::from_hdr_with(&u, &first.run.percentiles);
        out.latency = Histogram::from_hdr_with(&l, &first.run.percentiles);
        out.latency_uncorrected = Histogram::from_hdr_with(&lu, &first.run.percentiles);
        out.ttfb = Histogram::from_hdr_with(&t, &first.run.percentiles);
        out.connect = Histogram::from_hdr_with(&c, &first.run.percentiles);
        out.tls_handshake = Histogram::from_hdr_with(&h, &first.run.percentiles);
        out.throughput = out.rates();
        out.finish_series();
        Ok(out)
    }

    /// The human summary printed on stdout.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let r = &self.run;
        let shape = if r.workload == "open" {
            format!(
                "open, {} req/s ({}), up to {} connections",
                r.rate.unwrap_or(0.0),
                r.arrival.as_deref().unwrap_or("?"),
                r.connections.unwrap_or(0)
            )
        } else {
            format!(
                "closed, {} users, think {}",
                r.users.unwrap_or(0),
                r.think.as_deref().unwrap_or("0s")
            )
        };
        let shape = match &r.stages {
            Some(st) => format!("{shape}, stages {st}"),
            None => shape,
        };
        let session = match (r.session, r.workload.as_str(), r.streams) {
            (_, "open", Some(m)) => format!("h2, {m} streams per connection"),
            (_, _, Some(m)) => format!(
                "h2, {} connections x {m} streams",
                r.connections.unwrap_or(0)
            ),
            (Some(k), _, _) => format!("session {k}"),
            (None, "open", _) => "keep-alive".to_string(),
            (None, _, _) => "one connection each".to_string(),
        };
        let _ = writeln!(
            s,
            "servelab load: {shape}, {session}; {} target(s); segments {}; {} threads; {:.2} s",
            r.targets.len(),
            self.segments.join(","),
            self.threads,
            self.duration_s
        );
        let c = &self.counts;
        let open = r.workload == "open";
        let sent = if open || c.never_sent > 0 {
            format!(
                "{} scheduled: {} sent, {} never sent",
                c.scheduled, c.sent, c.never_sent
            )
        } else {
            format!("{} sent", c.sent)
        };
        let _ = writeln!(
            s,
            "  requests     {sent}; {} completed ({} ok, {} failed), {} in flight at the end",
            c.completed, c.ok, c.failed, c.in_flight
        );
        let _ = writeln!(
            s,
            "  attempts     {} attempts, {} timeouts, {} retries",
            c.attempts, c.timeouts, c.retries
        );
        if let Some(h) = &self.h2 {
            let limit = h
                .server_max_streams
                .map_or("none".to_string(), |m| m.to_string());
            let _ = writeln!(
                s,
                "  h2 streams   {} opened, {} completed, {} reset by the server, {} refused \
                 (sent again), {} cancelled (timeouts); {} waited for a stream; {} connections, \
                 {} GOAWAY; server's stream limit {limit}",
                h.streams_opened,
                h.streams_completed,
                h.streams_reset,
                h.streams_refused,
                h.streams_cancelled,
                h.waited_for_stream,
                c.connections,
                h.goaways
            );
        }
        if c.close_retries > 0 {
            let _ = writeln!(
                s,
                "  close retry  {} requests sent again on a new connection: their reused \
                 connection closed before any answer (RFC 9112 9.3.1; not errors)",
                c.close_retries
            );
        }
        let t = &self.throughput;
        if c.completed == 0 {
            let _ = writeln!(s, "  throughput   none: no request completed");
        } else {
            let _ = writeln!(
                s,
                "  throughput   {:.1} req/s, goodput {:.1} ok/s, {}/s",
                t.requests_per_s,
                t.ok_per_s,
                fmt_bytes(t.bytes_per_s)
            );
        }
        if let Some(offered) = t.offered_per_s {
            // A segment's report offers its share of the rate set for the run.
            let set = match (r.rate, self.segments.as_slice()) {
                (Some(x), [one]) if one == "1/1" => format!("{x} set"),
                (Some(x), _) => format!("{x} set for the whole run"),
                (None, _) => "rate not recorded".to_string(),
            };
            let _ = writeln!(
                s,
                "  rate         offered {offered:.1} req/s ({set}), achieved {:.1} req/s ({:.2} of offered)",
                t.requests_per_s,
                t.requests_per_s / offered.max(1e-9)
            );
        }
        if let (Some(at), Some(lag)) = (&r.start_at, self.start_lag_ms) {
            let who = if self.segments.len() > 1 {
                "the latest segment"
            } else {
                "it"
            };
            let _ = writeln!(
                s,
                "  start        --start-at {at}: {who} started {lag:.1} ms after that time"
            );
        }
        if let Some((offered, achieved)) = self.saturation() {
            let _ = writeln!(
                s,
                "  warning      the target is saturated: it completed {achieved:.1} of the \
                 {offered:.1} req/s offered (below {SATURATED_BELOW}); the latencies measure \
                 the client's backlog"
            );
        }
        if let Some(f) = &self.connect_failure {
            let _ = writeln!(
                s,
                "  stopped      no connection was ever made ({:.0} s): {f}",
                NEVER_CONNECTED.as_secs_f64()
            );
            let _ = writeln!(
                s,
                "  latency      none measured: no request reached a server"
            );
            return self.summary_tail(s);
        }
        if self.interrupted {
            let asked = match (r.requests, r.duration_s) {
                (Some(n), _) => format!("{n} requests"),
                (None, Some(d)) => format!("{d} s"),
                (None, None) => "the run".to_string(),
            };
            let _ = writeln!(
                s,
                "  stopped      early: cut short (Ctrl-C or a signal) after {:.2} s of {asked}; \
                 the figures cover the part that ran",
                self.duration_s
            );
        }
        if self.unreachable {
            let _ = writeln!(
                s,
                "  stopped      early: no connect succeeded for {} s (the target is unreachable)",
                crate::event_loop::UNREACHABLE.as_secs()
            );
        }
        let ps = &r.percentiles;
        hist_line(&mut s, "latency", &self.latency, ps);
        let unfinished = c.in_flight + c.never_sent;
        if unfinished > 0 {
            let a = &self.unfinished_age;
            let _ = writeln!(
                s,
                "  unfinished   {unfinished} requests at the end, not in the latency above (of \
                 the {} finished): {} old on average, the oldest {} (lower bounds of their latency)",
                self.latency.count,
                fmt_us(a.mean),
                fmt_us(a.max as f64)
            );
        }
        if r.workload == "open" || self.latency.p99 != self.latency_uncorrected.p99 {
            hist_line(&mut s, "uncorrected", &self.latency_uncorrected, ps);
        }
        hist_line(&mut s, "first byte", &self.ttfb, ps);
        hist_line(&mut s, "connect", &self.connect, ps);
        hist_line(&mut s, "handshake", &self.tls_handshake, ps);
        self.think_line(&mut s);
        self.stage_lines(&mut s);
        self.summary_tail(s)
    }

    /// The think times: asked and measured means (the drawn one when the
    /// draws' sampling error makes it worth telling apart).
    fn think_line(&self, s: &mut String) {
        let Some(t) = &self.think else {
            return;
        };
        if t.count == 0 {
            let _ = writeln!(
                s,
                "  think        asked mean {}; none ended in a request",
                fmt_us(t.asked_mean_us)
            );
            return;
        }
        let _ = writeln!(
            s,
            "  think        asked mean {}, measured mean {} ({} thinks; {:+.1}us against \
             their draws' mean {})",
            fmt_us_precise(t.asked_mean_us),
            fmt_us_precise(t.measured_mean_us),
            t.count,
            t.overshoot_us(),
            fmt_us_precise(t.drawn_mean_us),
        );
    }

    /// One line per stage: the ramp, and what the seconds that began in it
    /// completed (the per-second series has no finer grain).
    fn stage_lines(&self, s: &mut String) {
        let Some(st) = self.stages() else {
            return;
        };
        let unit = if self.run.workload == "open" {
            "req/s"
        } else {
            "users"
        };
        let mut from = 0.0;
        for (i, stage) in st.stages().iter().enumerate() {
            let secs = self.series.iter().filter(|x| x.stage == Some(i as u32));
            let (mut n, mut completed, mut ok, mut errors) = (0u64, 0, 0, 0);
            for x in secs {
                n += 1;
                completed += x.completed;
                ok += x.ok;
                errors += x.errors;
            }
            let rate = if n > 0 {
                format!("{:.1} req/s", completed as f64 / n as f64)
            } else {
                "no whole second".to_string()
            };
            let _ = writeln!(
                s,
                "  stage {:<6} {from} -> {} {unit} over {:.1} s: {completed} completed ({ok} ok, \
                 {errors} errors) in the {n} second{} that began in it, {rate}",
                i + 1,
                stage.target,
                stage.duration.as_secs_f64(),
                if n == 1 { "" } else { "s" }
            );
            from = stage.target;
        }
    }

    /// The summary's last lines: connections, statuses, errors, client CPU.
    fn summary_tail(&self, mut s: String) -> String {
        let c = &self.counts;
        let t = &self.throughput;
        let _ = writeln!(
            s,
            "  connections  {} opened, {} idle ones closed by the server",
            c.connections, c.idle_closed
        );
        let handshakes = c.tls_full + c.tls_resumed;
        if handshakes + self.tls_failures.total() > 0 {
            let cpu = t
                .cpu_us_per_handshake
                .map_or(String::new(), |us| format!(", {us:.1} us client cpu each"));
            let _ = writeln!(
                s,
                "  tls          {handshakes} handshakes: {} full, {} resumed{cpu}",
                c.tls_full, c.tls_resumed
            );
            let failed: Vec<String> = self
                .tls_failures
                .by_kind()
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            if !failed.is_empty() {
                let _ = writeln!(
                    s,
                    "  tls failed   {} handshakes: {}",
                    self.tls_failures.total(),
                    failed.join(", ")
                );
            }
        }
        let codes: Vec<String> = self
            .status
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        if !codes.is_empty() {
            let _ = writeln!(s, "  status       {}", codes.join(", "));
        }
        let e = &self.errors;
        let classes = [
            ("connect refused", e.connect_refused),
            ("connect other", e.connect_other),
            ("reset", e.reset),
            ("closed", e.closed),
            ("timeout", e.timeout),
            ("malformed", e.malformed),
            ("unexpected status", e.unexpected_status),
            ("io other", e.io_other),
            ("tls handshake", e.tls_handshake),
        ];
        let errs: Vec<String> = classes
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if !errs.is_empty() {
            let rate = self.error_rate().map_or(String::new(), |x| {
                format!(" ({:.2}% of outcomes)", x * 100.0)
            });
            let _ = writeln!(s, "  errors       {}{rate}: {}", c.errors, errs.join(", "));
        }
        match t.cpu_us_per_request {
            Some(us) => {
                let _ = writeln!(
                    s,
                    "  client cpu   {:.3} s ({us:.2} us/request)",
                    self.client_cpu_s
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "  client cpu   {:.3} s (no request completed)",
                    self.client_cpu_s
                );
            }
        }
        s
    }
}

/// One summary line for a histogram, or none when it is empty. The figures
/// carry the names of the metric catalogue, which `--fail-if` reads.
fn hist_line(s: &mut String, name: &str, h: &Histogram, percentiles: &Percentiles) {
    if h.count > 0 {
        let _ = write!(s, "  {name:<12} min {}", fmt_us(h.min as f64));
        let _ = write!(s, "  {} {}", Metric::Mean, fmt_us(h.mean));
        for p in percentiles.iter() {
            let m = Metric::Percentile(p);
            let _ = write!(s, "  {m} {}", fmt_us(h.percentile(p) as f64));
        }
        let _ = write!(s, "  {} {}", Metric::Max, fmt_us(h.max as f64));
        s.push('\n');
    }
}

fn fmt_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{us:.0}us")
    }
}

/// A duration to the microsecond, for figures compared at that grain.
fn fmt_us_precise(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.6}s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3}ms", us / 1e3)
    } else {
        format!("{us:.1}us")
    }
}

fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ErrorClass;
    use crate::spec::Segment;
    use crate::target::Target;
    use std::time::Instant;

    fn report(seg: Segment, latencies_ms: &[u64]) -> Report {
        let mut spec = LoadSpec::new(vec![Target::new("http://127.0.0.1:1/")]);
        spec.segment = seg;
        let t0 = Instant::now();
        let mut rec = Recorder::new(t0);
        for &ms in latencies_ms {
            let end = t0 + Duration::from_millis(ms);
            rec.response(end, t0, (t0, end), 200, true);
        }
        rec.failure(t0, t0, ErrorClass::Reset);
        Report::build(
            &spec,
            &rec,
            1,
            1000,
            Duration::from_secs(2),
            Duration::from_millis(10),
        )
    }

    #[test]
    fn json_round_trips_and_checks_the_schema() {
        let r = report(Segment::WHOLE, &[1, 2, 3]);
        let back = Report::from_json(&r.to_json(), Path::new("x")).unwrap();
        // Floats may differ in the last bit through JSON; everything else is exact.
        assert_eq!(
            (&back.run, &back.counts, &back.errors),
            (&r.run, &r.counts, &r.errors)
        );
        assert_eq!(back.latency.buckets, r.latency.buckets);
        assert_eq!(back.series, r.series);
        let other = r.to_json().replace(SCHEMA, "servelab-load/99");
        let err = Report::from_json(&other, Path::new("x"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("servelab-load/99"), "{err}");
        assert!(Report::from_json("{}", Path::new("x")).is_err());
    }

    #[test]
    fn merge_adds_counts_and_histograms() {
        let a = report(Segment { index: 1, count: 2 }, &[1, 2, 3]);
        let b = report(Segment { index: 2, count: 2 }, &[100, 200]);
        let m = Report::merge(&[b.clone(), a.clone()]).unwrap();
        assert_eq!(m.counts.completed, 7);
        assert_eq!(m.counts.ok, 5);
        assert_eq!(m.errors.reset, 2);
        // Five answers and two failures (each report's reset, at 0 ms).
        assert_eq!(m.latency.count, 7);
        assert_eq!(m.status["200"], 5);
        assert_eq!(m.segments, vec!["1/2", "2/2"]);
        // The merged median is the middle of all seven values (0, 0, 1, 2, 3, 100,
        // 200 ms), not an average of the two medians (1 and 100 ms).
        assert_eq!(m.latency.p50 / 1000, 2, "{}", m.latency.p50);
        assert!(Report::merge(&[a.clone(), a]).is_err());
    }

    #[test]
    fn summary_mentions_counts_and_errors() {
        let s = report(Segment::WHOLE, &[1]).summary();
        assert!(s.contains("2 completed (1 ok, 1 failed)"), "{s}");
        assert!(s.contains("reset 1"), "{s}");
        assert!(!s.contains("warning"), "{s}");
    }
}
