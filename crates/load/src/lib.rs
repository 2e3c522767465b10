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
//! - [`settings`]: [`LoadSettings`], the load a user chooses (users or rate,
//!   session, think, duration, timeouts, TLS resumption, protocol and
//!   streams), which `servelab load`'s flags build and the lab's `[load]`
//!   section deserialises into
//! - [`Dist`] (from `servelab-dist`): the DIST syntax for think times, timeouts
//!   and waits, the same one that `servelab serve --delay` and `servelab sim` read
//! - [`target`]: [`Target`] URLs, weights, URL files, methods, request bodies,
//!   prebuilt request bytes; `login`: a login in a URL, sent as Basic auth
//!   and never shown
//! - [`stages`]: [`Stages`], a load that ramps; [`start_at`]: [`StartAt`], a
//!   common start for segments on several machines
//! - [`expect_status`]: [`ExpectStatus`], the statuses that count as ok
//! - `run`: [`run`], which splits the work over event-loop threads
//! - `event_loop` (with `exchange`, `closed`, `open`): one epoll event loop per
//!   thread; `client_conn`: one client connection (a closed user, or a
//!   connection of the open pool); `timer`: the loop's timer queue;
//!   `control`: what the threads share (request tickets, progress, stop)
//! - `arrival`: the start times of open requests
//! - `response`: the strict, copy-free response parser
//! - `metrics`, [`histogram`]: what each thread records ([`Counts`], [`Errors`],
//!   [`Second`], HdrHistograms)
//! - [`report`]: [`Report`], its JSON schema, its summary, and [`Report::merge`];
//!   [`connect_failure`]: why a run never connected; [`coarse_histogram`]: the
//!   per-second latencies of the series
//! - [`metric`]: [`Metric`], the catalogue of the report's figures that checks
//!   name (`p99`, `errors`, `rps`...), with their units
//! - [`threshold`]: [`Threshold`], k6-like pass/fail checks (`p99>200ms`, `errors>1%`)
//! - [`think`]: [`ThinkTimes`], the think times closed users took, measured
//!   beside the ones they drew
//! - `progress`: the terminal progress bar
//! - `tls`: the TLS settings and rustls configuration of `https://` targets;
//!   `session_store`: the tickets that let connections resume
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
//!   wrk2 does), while `latency_uncorrected` counts from when it was sent. The
//!   waiting requests cost no memory: an arrival stays in the schedule (a start
//!   time and a random stream) until a connection takes it, so a target saturated
//!   for an hour holds no queue in the client; only requests already sent and
//!   waiting to be retried are kept, at most one per connection per timeout.
//! - A keep-alive close: a server may close an idle keep-alive connection at
//!   any moment (Apache's event MPM does when its workers are busy), and a
//!   request may cross the close. A request whose reused connection closes (or
//!   resets) before one byte of its answer goes out again, once, on a new
//!   connection (RFC 9112, 9.3.1; GET and HEAD are idempotent), with a
//!   timeout of its own; its latency includes the lost attempt and the
//!   reconnect. It is counted in `close_retries`, not as an error; with
//!   `retry_on_close = false` it is an error of class `closed` (or `reset`).
//! - Stages ([`Stages`], `--stages 30s:100,2m:100,30s:0`): the users, or the
//!   open rate, move linearly from one target to the next (from 0 at first),
//!   as k6's stages do, and the run lasts the stages' total. Closed: as many
//!   users as the highest target are allocated; the first `floor(level)` of
//!   them, taken from the threads in turn, may start requests, and a user
//!   above the level finishes its request and think time, closes its
//!   connection and waits. Open: the arrivals follow the changing rate by
//!   time-rescaling (an even beat gives exactly `floor(area)` arrivals). Each
//!   second of the series carries the index of its stage, and the summary has
//!   a line per stage. A segment takes its share of each target.
//! - Timeouts: each attempt has a timeout drawn from `timeout`; an attempt that
//!   expires is abandoned (its connection closed) and retried after `retry_wait`,
//!   up to `retries` times (`None`: forever). A retried request keeps its intended
//!   start, so its `latency` includes the failed attempts and the waits.
//! - Failed connects: a connect refused (or unreachable) on every address of the
//!   target counts as one error, in `connect_refused` or `connect_other`, and
//!   finishes no request: the connection keeps its request, backs off (10 ms,
//!   doubling up to 1 s, jittered) and connects again, with a fresh timeout. A
//!   server that comes back gets the held requests, whose latency spans the
//!   outage. A run in which no connect has ever succeeded stops about a
//!   second in ([`connect_failure::NEVER_CONNECTED`]) and says why
//!   ([`Report::connect_failure`]: `connection refused to ADDR: is a server
//!   listening?`); the requests it held were never written, so they count as
//!   `never_sent`. A run without a time limit whose target goes away later
//!   gives up after 10 s without a successful connect ([`Report::unreachable`]).
//! - Addresses: a host resolves to all its addresses, tried in turn until one
//!   connects (IPv4 first); the one that worked is tried first next time.
//!   `localhost` and `*.localhost` are 127.0.0.1 and ::1 (RFC 6761).
//! - Limits: `requests` ends the run after exactly that many requests have
//!   finished (ok or error): closed users each send an equal share (seed 002's
//!   users issue a fixed number of requests; it also keeps sessions whole), open
//!   arrivals stop after that many. `duration` ends the run at that time. Without
//!   either a run lasts 10 s. `stop` ends it early (Ctrl-C in the CLI) and it
//!   still reports.
//! - The end of a run: requests sent but not finished (`in_flight`) and open
//!   arrivals due before the end that no connection took (`never_sent`) are
//!   unfinished. Each is counted, with its age `end - intended start` (a lower
//!   bound of its latency) in `unfinished_age`, and kept out of the corrected
//!   `latency`, which holds the finished requests (a failed one with the time
//!   to its error): a mean over latencies and lower bounds mixed is neither.
//!   The summary gives the unfinished requests' number and ages.
//! - Logins: `http://user:password@host/` sends `Authorization: Basic …`
//!   (percent-decoded), never the login in `Host`; the report shows the
//!   password as `***`. A `-H Authorization` header takes precedence.
//! - Methods and bodies: GET, HEAD, POST, PUT, PATCH, DELETE; a body (the
//!   run's, [`LoadSpec::body`], or a URL's own, [`Target::body`], from
//!   `URL [WEIGHT] [@FILE]` in a URL file) is read once, at most 64 MiB, and
//!   sent after the prebuilt head with `Content-Length` (one `sendmsg` for
//!   both). GET and HEAD take no body; POST, PUT and PATCH without one send
//!   `Content-Length: 0`; POST and PATCH are never sent again after a
//!   keep-alive close.
//! - HTTP/2 ([`Protocol::H2`], `--h2 --streams N`): ALPN `h2` over TLS,
//!   prior knowledge over `http://`, through `servelab_h2::ClientConn` in an
//!   event loop of its own (`event_loop::h2`). A closed run's `users` are
//!   connections, each with `streams` closed users (one per stream slot, as
//!   h2load's clients × max concurrent streams); an open run's arrivals take
//!   a free slot of the `connections` × `streams`, and wait in the schedule
//!   when none is free. The server's SETTINGS_MAX_CONCURRENT_STREAMS caps
//!   the streams (a request waits at its connection for one); a stream the
//!   server refuses (REFUSED_STREAM, above a GOAWAY's last stream) goes out
//!   again once with no error; one it resets is an error of class `reset`;
//!   a timeout cancels the stream (RST_STREAM CANCEL), not the connection.
//!   Streams are counted apart from connections ([`H2Counts`]). Sessions
//!   and stages are refused with `--h2` for now, in one line each.
//! - HTTPS (`https://`, [`TlsOptions`]): rustls with the aws-lc-rs provider,
//!   TLS 1.3 and 1.2, ALPN `http/1.1`, SNI from the URL's host (none for an IP
//!   literal), verified against the system's trust store, or only
//!   `--cacert FILE`, or not at all (`--insecure`); `--cert FILE --key FILE`
//!   for mutual TLS. Sessions are resumed on reconnect (tickets or IDs in an
//!   in-memory cache shared by the run's connections) unless `--tls-resume
//!   off`. The event loop drives rustls's sans-I/O connection on its own
//!   non-blocking socket (`tls`, `event_loop::tls_io`): a handshake is part of
//!   connecting, and the request's latency includes it. A connection counts as
//!   made once the server answers its first request over TLS (a TLS 1.3
//!   server checks a client certificate after the client's side of the
//!   handshake is done). A handshake that fails is an error of class
//!   `tls_handshake` (by kind in `tls_failures`) that finishes no request: as
//!   after a refused connect, the connection backs off and connects again, and
//!   a run in which no handshake ever succeeds stops within about a second,
//!   saying why in one line (`connect_failure` of kind `tls`: `TLS handshake
//!   with 127.0.0.1:8443 failed (invalid peer certificate: UnknownIssuer;
//!   server name localhost): the certificate's issuer is not trusted: pass
//!   --cacert FILE with the CA that signed it, or --insecure to skip
//!   verification`).
//! - Several targets: a request picks one by weight; a connection carries only
//!   requests for the server it was opened to.
//! - Segments: `segment = I/N` runs the I-th of N equal shares of the users (or of
//!   the rate and connections) and of the request count, with its own random
//!   streams; [`Report::merge`] adds the segments' reports exactly. `env:N`
//!   takes `I` from `JOB_COMPLETION_INDEX` + 1, as in the pods of a Kubernetes
//!   Indexed Job (`deploy/kubernetes/`), and [`LoadSpec::start_at`] (an RFC
//!   3339 UTC time) makes every segment start together; each report says how
//!   late it started (`start_lag_ms`).
//!
//! # What is counted
//!
//! Every response is checked: status line and headers must parse, `Content-Length`
//! (or the chunked framing) is honoured, an EOF inside a response or bytes after it
//! are errors. A request that finishes ends either ok (a valid response whose
//! status is expected: [`ExpectStatus`], by default 200 to 399, as k6 has it;
//! wrk too counts only statuses above 399 as errors) or failed, in exactly one
//! error class of [`Errors`]: `reset`, `closed` (closed before any response
//! byte), `timeout` (no retry left), `malformed`, `unexpected_status` (valid,
//! but not an expected status), `io_other`. The two connect classes, `connect_refused`
//! and `connect_other`, count failed connects, and `tls_handshake` failed TLS
//! handshakes; these finish no request. So:
//!
//! - `scheduled == sent + never_sent` (`never_sent`: open arrivals no
//!   connection took, and requests held at the end for a connection that never
//!   opened);
//! - `sent == completed + in_flight`;
//! - `completed == ok + failed`;
//! - `errors == failed + connect_refused + connect_other + tls_handshake ==
//!   errors.total()`;
//! - `latency.count == completed`: one corrected latency per finished request,
//!   from its intended start to its response or to the error that ended it;
//! - `unfinished_age.count == in_flight + never_sent`: one age per request
//!   unfinished at the end.
//!
//! The error rate ([`Report::error_rate`]) is `errors / (ok + errors)`. An open
//! run whose achieved rate (`completed` per second) is below 0.95 of its offered
//! rate (`scheduled` per second) is saturated ([`Report::saturation`]): the
//! summary warns that its latencies measure the client's backlog.
//!
//! # JSON schema `servelab-load/6`
//!
//! `servelab load --json FILE` writes [`Report`] with serde; readers check
//! `schema` first. Within a version fields may be added, never renamed or
//! removed, and a field never changes its meaning. All durations in
//! histograms are integer microseconds.
//!
//! Version 6 (from 5), for HTTP/2: new `run.protocol` (`http/1.1` or `h2`),
//! `run.streams` (`--streams`, `null` for HTTP/1.1) and `h2` ([`H2Counts`]:
//! streams opened, completed, reset, refused, cancelled; GOAWAYs; requests
//! that waited for a stream; the server's lowest stream limit; `null` for
//! HTTP/1.1). A closed `h2` run's `run.users` counts every closed user
//! (connections × streams) and its `run.connections` the connections; an
//! HTTP/1.1 report keeps the meaning of every field of version 5, and
//! version 5 reports are still read (as HTTP/1.1 runs) and merged.
//!
//! Version 5 (from 4), for censoring: `latency` holds the finished requests
//! only (`count == counts.completed`), so its mean is the mean of finished
//! requests; each request unfinished at the end (`counts.in_flight +
//! counts.never_sent`) is in the new `unfinished_age` instead, with its age
//! (the end less its intended start, a lower bound of its latency). Version 4
//! mixed those ages into `latency`, which biased its mean low by about
//! (unfinished × their missing wait) / completed, in steady state too. New in
//! `think`: `uncounted` and `uncounted_total_s`, the thinks that are no draw
//! of Z (each user's first, a residual, and thinks cut by the end) and their
//! time in the run. With them a window's Little's law closes: N·T = completed
//! × (mean latency) + connect time + `think.measured_total_s` +
//! `think.uncounted_total_s` + `unfinished_age.count × unfinished_age.mean`,
//! up to the client's own turns. `load merge` refuses version 4 reports.
//!
//! Version 4 (from 3), for HTTPS: new `tls_handshake` (a histogram beside
//! `connect` and `ttfb`: from the TCP connect's end to the handshake's, us,
//! completed handshakes), `tls_failures` (failed handshakes by kind),
//! `tls_cpu_s`, `counts.tls_full`, `counts.tls_resumed`,
//! `errors.tls_handshake` and `throughput.cpu_us_per_handshake`;
//! `connect_failure` gained the kind `tls` with `tls` (the failure's kind) and
//! `detail`, and its `os_error` is `null` for a TLS failure. `counts.connections`
//! still counts TCP connects that succeeded. `tls_cpu_s` is the client's
//! thread CPU (`CLOCK_THREAD_CPUTIME_ID`, nanoseconds) spent building each
//! ClientHello and in every step that moved a handshake on (reading,
//! decrypting, verifying, writing), summed over the handshakes that
//! completed (the clock reads themselves, two per step, are included). A plain-HTTP run has an empty
//! `tls_handshake` and a `null` `cpu_us_per_handshake`.
//!
//! Added within version 4 (readers of older reports get the defaults):
//! `think` (closed users with a think time: the asked, drawn and measured mean
//! think, `null` otherwise), `interrupted` (the run was cut short by a signal
//! or [`LoadSpec::stop`]; `false`), `run.percentiles` (the summary's chosen
//! percentiles, each also in every histogram's `percentiles` spectrum;
//! `[50, 90, 99, 99.9]`); a target's login is written `user:***@`.
//!
//! Version 3 (from 2): `errors.non_2xx` became `errors.unexpected_status`,
//! since a 3xx is ok by default (`run.expect_status`, new, says which statuses
//! are); `never_sent` also counts requests held for a connection that never
//! opened; `run.method` may be `POST`, `PUT`, `PATCH` or `DELETE`. New:
//! `connect_failure`, `start_lag_ms`, `counts.close_retries`,
//! `run.retry_on_close`, `run.stages`, `run.body_bytes`, `run.start_at`, and
//! the series' `stage`, `in_flight`, `p50_us`, `p99_us` and `latency_buckets`.
//!
//! Version 2 (from 1):
//! `counts` gained `scheduled`, `sent`, `failed`, `in_flight`, `never_sent`;
//! `errors` counts failed connects, which no longer finish a request; `latency`
//! holds every scheduled request (failed and unfinished ones too); `throughput` gained `offered_per_s`, and
//! `cpu_us_per_request` is `null` when nothing completed; `unreachable` is new.
//!
//! ```text
//! {
//!   "schema": "servelab-load/6",
//!   "generator": "servelab-load 0.1.0",
//!   "run": { "workload": "closed"|"open", "protocol": "http/1.1"|"h2", "streams": null|N,
//!            "users", "rate", "arrival", "connections",
//!            "session", "think", "targets": [[url, weight]], "method",
//!            "body_bytes": [per target], "headers",
//!            "requests", "duration_s", "timeout", "retries": "N"|"inf",
//!            "retry_wait", "seed", "expect_status", "retry_on_close",
//!            "stages": null|"30s:100,120s:100,30s:0",
//!            "start_at": null|"2026-11-25T18:00:00.000Z",
//!            "percentiles": [50.0, 90.0, 99.0, 99.9] },
//!                                         // the command, before segment split
//!   "interrupted": false,                     // cut short by a signal (Ctrl-C)
//!   "think": null | { "asked_mean_us", "count", "drawn_mean_us",
//!                     "measured_mean_us", "drawn_total_s", "measured_total_s",
//!                     "uncounted", "uncounted_total_s" },
//!   "segments": ["1/2", "2/2"],               // segments this report covers
//!   "threads": 4, "started_unix_ms": 0, "duration_s": 10.0,
//!   "unreachable": false,                     // gave up: never connected, or no connect for 10 s
//!   "start_lag_ms": null | 1.2,               // with --start-at: how late it started
//!   "connect_failure": null | { "addr": "127.0.0.1:1", "kind": "refused"|"unreachable"|
//!                      "timed_out"|"other"|"tls", "os_error": 111|null,
//!                      "tls": null|"unknown_issuer"|"name_mismatch"|"expired"|
//!                             "not_yet_valid"|"bad_certificate"|"alert"|"not_tls"|
//!                             "closed"|"other",
//!                      "detail": null|"what rustls said; server name localhost" },
//!                                           // no connection ever made
//!   "tls_failures": { "unknown_issuer", "name_mismatch", "expired", "not_yet_valid",
//!                     "bad_certificate", "alert", "not_tls", "closed", "other" },
//!   "tls_cpu_s": 0.01,                        // client CPU in completed handshakes
//!   "client_cpu_s": 1.2,
//!   "counts": { "scheduled", "sent", "completed", "ok", "failed", "errors",
//!               "in_flight", "never_sent", "attempts", "timeouts", "retries",
//!               "close_retries",
//!               "connections", "tls_full", "tls_resumed",
//!               "idle_closed", "bytes_sent", "bytes_received" },
//!                                           // bytes: on the wire (TLS: records)
//!   "errors": { "connect_refused", "connect_other", "reset", "closed", "timeout",
//!               "malformed", "unexpected_status", "io_other", "tls_handshake" },
//!   "status": { "200": 990, "404": 10 },
//!   "throughput": { "offered_per_s": null|R,  // open: scheduled per second
//!                   "requests_per_s", "ok_per_s", "bytes_per_s",
//!                   "cpu_us_per_request": null|us,
//!                   "cpu_us_per_handshake": null|us },  // tls_cpu_s / handshakes
//!   "latency":             HISTOGRAM,  // intended start -> outcome (corrected): the
//!                                      // response or the error; finished requests
//!   "unfinished_age":      HISTOGRAM,  // unfinished at the end: intended start -> end
//!   "latency_uncorrected": HISTOGRAM,  // last send -> response end
//!   "ttfb":                HISTOGRAM,  // send -> first response byte
//!   "connect":             HISTOGRAM,  // TCP connect
//!   "tls_handshake":       HISTOGRAM,  // TLS handshake (empty for http://)
//!   "series": [ { "t": 0, "completed", "ok", "errors", "timeouts", "bytes",
//!                 "stage": 0,                 // only with stages
//!                 "in_flight": 4,             // as the second began (null: not sampled)
//!                 "p50_us", "p99_us",         // of the requests that finished in it
//!                 "latency_buckets": [[bucket, count], ...] }, ... ],
//!   "h2": null | { "streams_opened", "streams_completed", "streams_reset",
//!                  "streams_refused", "streams_cancelled", "goaways",
//!                  "waited_for_stream", "server_max_streams": null|N }
//! }
//! HISTOGRAM = { "count", "min", "mean", "stdev", "p50", "p90", "p99", "p999", "max",
//!               "percentiles": [[0.0, v], [10.0, v], ..., [99.999, v], [100.0, v]],
//!               "buckets": [[highest_value_of_bucket_us, count], ...] }
//! ```
//!
//! In the series, `in_flight` is counted by each thread at its first loop turn
//! in the second (within 100 ms of its start) and added over threads and
//! segments; with the second's latency it checks Little's law second by
//! second. `p50_us` and `p99_us` are the corrected latencies of the requests
//! that finished (answered or failed) in the second, from `latency_buckets`:
//! 8 buckets per power of two, exact below 16 us, each reported as its
//! midpoint, within 1/16 (6.25%) of the true value; bucket `i >= 16` covers
//! `[(8 + s) << (e - 3), (9 + s) << (e - 3))` with `e = (i - 16) / 8 + 4` and
//! `s = (i - 16) % 8`. The run's own percentiles above are exact (HdrHistogram).
//!
//! `buckets` rebuild the HdrHistogram (1 us to 1 h, 3 significant digits) exactly,
//! which is how `merge` adds segments without averaging percentiles.

#![deny(missing_docs)]

pub mod connect_failure;
pub mod expect_status;
pub mod h2_counts;
pub mod handshake_failure;
pub mod histogram;
pub mod metric;
pub mod protocol;
pub mod report;
pub mod settings;
pub mod spec;
pub mod stages;
pub mod start_at;
pub mod target;
pub mod think;
pub mod threshold;

mod arrival;
mod client_conn;
pub mod coarse_histogram;
mod control;
mod error;
mod event_loop;
mod h2_head;
mod login;
mod metrics;
mod progress;
mod response;
mod run;
mod session_store;
mod timer;
mod tls;

pub use coarse_histogram::CoarseHistogram;
pub use connect_failure::{ConnectFailure, ConnectFailureKind};
pub use error::LoadError;
pub use expect_status::ExpectStatus;
pub use h2_counts::H2Counts;
pub use handshake_failure::{HandshakeFailureKind, HandshakeFailures};
pub use histogram::Histogram;
pub use login::redact as redact_login;
pub use metric::Metric;
pub use metrics::{Counts, Errors, Second};
pub use protocol::Protocol;
pub use report::{Report, RunInfo, SCHEMA, Throughput};
pub use run::{run, stop_on_signals, stop_signal};
pub use servelab_dist::Dist;
pub use settings::{DEFAULT_CONNECTIONS, LoadSettings, Retries};
pub use spec::{Arrival, LoadSpec, Segment, Workload};
pub use stages::{Stage, Stages};
pub use start_at::StartAt;
pub use target::{Method, Target, read_url_file};
pub use think::ThinkTimes;
pub use threshold::{Threshold, Verdict};
pub use tls::client_config as tls_client_config;
pub use tls::{Pin, TlsOptions};

#[cfg(test)]
mod layout;
