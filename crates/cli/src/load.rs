//! `servelab load`: the flags of the load generator, mapped onto a
//! [`servelab_load::LoadSpec`], and `servelab load merge` for segment reports.
//! The flags that describe the load build a [`servelab_load::LoadSettings`],
//! the type the lab's `[load]` reads too, and every value is read by its parser.
//!
//! `--users` selects the closed workload, `--rate` the open one; both take
//! `--session`. The summary goes to stdout, the JSON report to `--json FILE`, the
//! progress bar to stderr when it is a terminal.
//!
//! Exit status: 0 when the run measured what it was asked to; 2 for bad input
//! or a run that could not start (before anything runs, or no connect ever
//! succeeded: `connection refused to ADDR: is a server listening?`); 3 when more than
//! `--max-error-rate` of the outcomes were errors, or nothing finished at all; 4
//! when a `--fail-if` or `--threshold` threshold failed or could not be
//! measured. When both 3 and 4 apply the status is 3 (the latencies of a
//! failing run mean little), and every reason is printed, one line each, on
//! stderr. A run cut short by Ctrl-C (SIGINT) prints and writes its report,
//! says it was cut short, and exits 130 (143 for SIGTERM), as shells do.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use servelab_load::threshold::parse_share;
use servelab_load::{LoadSettings, LoadSpec, Report, Segment, Target, Threshold, read_url_file};

/// Flags of `servelab load`.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "DIST: 40ms, 1s, const:1s, exp:6s, uniform:4s..10s, lognormal:MEAN,CV, A+DIST \
    (e.g. 50s+exp:5s); plain numbers are seconds (the same syntax as servelab sim and serve --delay).\n\
    TIME: 30s, 1.5s, 250us, 2m, or parts that add up: 1h30m, 1m30s.\n\
    THRESHOLD (--fail-if, when the run fails): METRIC OP VALUE with OP one of > >= < <=; \
    METRIC: p50 p90 p99 p99.9 (or any pNN, pNN.N: p95, p99.99) max mean \
    (corrected latency, VALUE a duration with its unit: 200ms, 1.5s, 250us), errors unfinished \
    (VALUE a share: 1% or 0.01), rps goodput (per second).\n\
    CONDITION (--threshold, k6's spelling of what must hold): p(95)<200ms, p(99.9)<1s, \
    avg<50ms, med<10ms, max<1s, or METRIC OP VALUE as above; k6 metric names may lead: \
    http_req_duration:p(99)<300ms, http_req_failed:rate<1% (servelab's errors: errors over ok \
    plus errors, failed connects included), http_reqs:rate>100 (rps). A latency needs its \
    unit (k6 reads 200 as ms, servelab as s: both are refused). Each threshold is reported \
    as `p99 was 431 µs, limit < 1 ms: failed`.\n\
    Exit status: 0 ok; 2 bad input or the run could not start (also: no connection could \
    be made, said within about a second); 3 error rate above \
    --max-error-rate, or no request finished; 4 a --fail-if or --threshold threshold failed \
    or not measured; 130 cut short by Ctrl-C (143 by SIGTERM), the report still printed."
)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Option<LoadCommand>,
    // Boxed: the run's flags are most of `servelab`'s argument enum.
    #[command(flatten)]
    run: Box<RunArgs>,
}

#[derive(Debug, Subcommand)]
enum LoadCommand {
    /// Merge the JSON reports of the segments of one run (histograms added exactly).
    Merge(MergeArgs),
}

#[derive(Debug, Parser)]
struct MergeArgs {
    /// JSON reports written by `servelab load --json`.
    #[arg(required = true, value_name = "REPORT")]
    reports: Vec<PathBuf>,
    /// Write the merged report here (as JSON).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// URLs to request (http://host[:port]/path or https://...); a request
    /// picks one at random.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// File with one URL per line, an optional weight and an optional body
    /// file relative to it (`URL [WEIGHT] [@BODY]`).
    #[arg(long = "urls", value_name = "FILE")]
    url_file: Option<PathBuf>,

    /// HTTP/2: ALPN h2 over TLS for https:// URLs, prior knowledge for http://.
    /// With --users N the run has N connections of --streams users each.
    #[arg(long)]
    h2: bool,
    /// With --h2: requests kept in flight per connection (h2load's -m); the
    /// server's SETTINGS_MAX_CONCURRENT_STREAMS caps it.
    #[arg(long, value_name = "N", requires = "h2")]
    streams: Option<u32>,
    /// While requests are in flight, poll the sockets this long (epoll_wait
    /// with a zero timeout) before blocking: fewer wake-ups, which a server on
    /// the same machine pays for, at some client CPU; 0 = off, at most 1ms.
    /// The defaults were calibrated against h2load on one machine: on another,
    /// measure again (docs/load.md, Speed)
    /// [default: 3us with --h2, 4us with --h2 when every URL is https://, 0 without].
    #[arg(long, value_name = "TIME")]
    poll_before_sleep: Option<String>,
    /// While requests are in flight and none is ready, sleep this long on the
    /// client's own timer before polling and blocking: on loopback what the
    /// server sends meanwhile then wakes nobody, so the server does not pay
    /// for those wake-ups (nginx spent 16-19% less CPU per request than under
    /// h2load over HTTP/2 on one machine: docs/load.md, Speed). A response that arrives during a
    /// nap is taken up, and timed, when it ends: up to TIME late. 0 = off (the
    /// default), at most 1ms
    #[arg(long, value_name = "TIME")]
    nap: Option<String>,

    /// Closed workload: number of users, each with one connection at a time
    /// (with --h2: connections, each with --streams users) [default: 10].
    #[arg(long, short = 'c', value_name = "N", conflicts_with = "rate")]
    users: Option<u32>,
    /// Requests per connection (keep-alive); 1 = a connection per request (ab without -k).
    /// Without it a connection lasts the whole run.
    #[arg(long, value_name = "K")]
    session: Option<u32>,
    /// Think time between an answer and the user's next request (DIST, see below).
    #[arg(
        long,
        value_name = "DIST",
        default_value = "0s",
        conflicts_with = "rate"
    )]
    think: String,

    /// Open workload: requests started per second, whatever the server does.
    #[arg(long, value_name = "R")]
    rate: Option<f64>,
    /// Spacing of open arrivals: poisson or uniform.
    #[arg(
        long,
        value_name = "KIND",
        default_value = "poisson",
        requires = "rate"
    )]
    arrival: String,
    /// Open workload: most connections at once (requests beyond wait in the client).
    #[arg(long, value_name = "N", default_value_t = servelab_load::DEFAULT_CONNECTIONS, requires = "rate")]
    connections: u32,

    /// Ramp the load, as k6's stages: DURATION:TARGET,... e.g. 30s:100,2m:100,30s:0.
    /// The users (or, with --rate, the requests per second; then --rate is the
    /// highest target) move linearly from the previous target (0 at first) to
    /// each stage's; the run lasts the stages' total. The summary and the JSON
    /// series show each stage.
    #[arg(long, value_name = "STAGES", conflicts_with_all = ["users", "duration"])]
    stages: Option<String>,

    /// Stop after this many requests have finished (whole run, all segments).
    #[arg(long, short = 'n', value_name = "N")]
    requests: Option<u64>,
    /// Stop after this long (e.g. 30s, 2m, 1h30m); requests not finished then are
    /// counted as unfinished [default: 10s unless --requests].
    #[arg(long, short = 'd', value_name = "TIME")]
    duration: Option<String>,

    /// Timeout of each attempt (DIST); an expired attempt is abandoned.
    #[arg(long, value_name = "DIST")]
    timeout: Option<String>,
    /// Retries after a timeout: a number or `inf`.
    #[arg(long, value_name = "N|inf", default_value = "0")]
    retries: String,
    /// Wait before retrying a timed-out attempt (DIST).
    #[arg(long, value_name = "DIST", default_value = "0s")]
    retry_wait: String,
    /// Count a request as an error (`closed`) when the reused keep-alive
    /// connection it went out on closes before any byte of the answer. By
    /// default such a request is sent again, once, on a new connection when
    /// its method is idempotent (GET, HEAD, PUT, DELETE: RFC 9112 9.3.1, as
    /// browsers do), and counted in `close retry`.
    #[arg(long)]
    no_retry_on_close: bool,

    /// HTTP method: GET, HEAD, POST, PUT, PATCH or DELETE. A POST or PATCH
    /// lost to a keep-alive close is not sent again (it is not idempotent).
    #[arg(long, default_value = "GET")]
    method: String,
    /// Request body: a FILE, or @- for standard input (at most 64 MiB), sent
    /// with Content-Length; needs --method POST, PUT, PATCH or DELETE. A URL
    /// in --urls may name its own: `URL [WEIGHT] [@FILE]`. Set the type with
    /// -H 'Content-Type: ...'.
    #[arg(long, value_name = "FILE|@-")]
    body: Option<String>,
    /// Response statuses that count as ok: codes and ranges, e.g. 200,304 or
    /// 200-299 (like k6, redirects and 304 are ok by default; any other
    /// response is an `unexpected status` error).
    #[arg(long, value_name = "LIST", default_value = "200-399")]
    expect_status: String,
    /// https://: do not verify the server's certificate (any certificate and
    /// name are accepted; the handshake still checks the server's key).
    #[arg(long, short = 'k', conflicts_with = "cacert")]
    insecure: bool,
    /// https://: trust only the CA certificates in this PEM file [default:
    /// the system's trust store].
    #[arg(long, value_name = "FILE")]
    cacert: Option<PathBuf>,
    /// https://: accept only the server certificate of this SHA-256
    /// fingerprint (AB:CD:…, 32 bytes, with or without colons, either case),
    /// as `servelab serve --tls-self-signed` prints it at start, instead of
    /// a chain to a trusted CA.
    #[arg(long, value_name = "SHA256", conflicts_with_all = ["insecure", "cacert"])]
    pin: Option<String>,
    /// https://: a client certificate chain (PEM) for servers that require
    /// mutual TLS; needs --key.
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<PathBuf>,
    /// https://: the private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<PathBuf>,
    /// https://: resume TLS sessions on reconnect (tickets or session IDs,
    /// kept in memory for the run); `off`: a full handshake on every new
    /// connection.
    #[arg(long, value_name = "on|off", default_value = "on")]
    tls_resume: OnOff,
    /// Extra request header `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "HEADER")]
    headers: Vec<String>,

    /// Event-loop threads [default: the number of CPUs].
    #[arg(long, short = 't', value_name = "T")]
    threads: Option<usize>,
    /// Seed of the random streams (think times, arrivals, targets).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run the I-th of N equal shares of the users or rate (for several machines);
    /// env:N takes I from JOB_COMPLETION_INDEX + 1, as a pod of a Kubernetes
    /// Indexed Job of N completions (see deploy/kubernetes/).
    #[arg(long, value_name = "I/N|env:N", default_value = "1/1")]
    segment: String,
    /// Wait until this UTC time (RFC 3339, e.g. 2026-11-25T18:00:00Z) before
    /// starting, so that the segments on several machines start together; the
    /// report says how late this one started.
    #[arg(long, value_name = "TIME")]
    start_at: Option<String>,

    /// Fail (exit 3) when more than this share of outcomes are errors (failed
    /// requests and failed connects, over ok + errors): a percentage or a fraction;
    /// 100% turns the check off.
    #[arg(long, value_name = "SHARE", default_value = "1%")]
    max_error_rate: String,
    /// Fail (exit 4) when the report crosses THRESHOLD, e.g. 'p99>200ms',
    /// 'p95>10ms' or 'errors>0.5%', quoted for the shell (repeatable; see below).
    #[arg(long = "fail-if", value_name = "THRESHOLD")]
    fail_if: Vec<String>,
    /// Pass only when CONDITION holds, in k6's spelling, e.g. 'p(95)<200ms'
    /// or 'http_req_failed:rate<1%' (exit 4 otherwise; repeatable; see below).
    #[arg(long, value_name = "CONDITION")]
    threshold: Vec<String>,
    /// The latency percentiles of the summary, also added to the JSON's
    /// spectrum, e.g. 50,90,95,99,99.9.
    #[arg(long, value_name = "LIST", default_value = "50,90,99,99.9")]
    percentiles: String,

    /// Write the report as JSON (schema servelab-load/6) to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Do not print the summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Never draw the progress bar (it is drawn only on a terminal anyway).
    #[arg(long)]
    no_progress: bool,
}

/// Runs `servelab load`.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Some(LoadCommand::Merge(m)) => merge(m),
        None => load(*args.run),
    }
}

/// A switch written `on` or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OnOff {
    On,
    Off,
}

fn spec_of(a: &RunArgs) -> anyhow::Result<LoadSpec> {
    let mut targets: Vec<Target> = a.urls.iter().map(Target::new).collect();
    if let Some(f) = &a.url_file {
        targets.extend(read_url_file(f)?);
    }
    if targets.is_empty() {
        anyhow::bail!("no target: give one or more URLs, or --urls FILE");
    }
    let mut spec = LoadSpec::new(targets);
    spec.method = a.method.parse()?;
    spec.headers = a.headers.clone();
    spec.body = a
        .body
        .as_deref()
        .map(servelab_load::target::read_body)
        .transpose()?;
    spec.expect_status = a.expect_status.parse()?;
    let stages = a
        .stages
        .as_deref()
        .map(str::parse::<servelab_load::Stages>)
        .transpose()?;
    settings_of(a, stages.as_ref())?.apply(&mut spec)?;
    spec.stages = stages;
    spec.requests = a.requests;
    spec.retry_on_close = !a.no_retry_on_close;
    spec.tls = servelab_load::TlsOptions {
        insecure: a.insecure,
        cacert: a.cacert.clone(),
        client_cert: a.cert.clone().zip(a.key.clone()),
        resume: spec.tls.resume,
    };
    spec.tls_pin = a
        .pin
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|why: String| anyhow::anyhow!("--pin: {why}"))?;
    spec.percentiles = a
        .percentiles
        .parse()
        .map_err(|why: String| anyhow::anyhow!("--percentiles: {why}"))?;
    if let Some(t) = a.threads {
        spec.threads = t;
    }
    spec.seed = a.seed;
    spec.segment = a.segment.parse::<Segment>()?;
    spec.start_at = a
        .start_at
        .as_deref()
        .map(str::parse::<servelab_load::StartAt>)
        .transpose()?;
    spec.progress = !a.no_progress && !a.quiet;
    spec.validate()?;
    Ok(spec)
}

/// The flags that describe the load, as the [`LoadSettings`] that the lab's
/// `[load]` section also deserialises into: each read by the settings' own
/// parser, so a flag and a key say the same thing. clap keeps open-workload
/// flags (`--arrival`, `--connections`) to `--rate` and `--think` to closed
/// users; their defaults are passed only where they apply.
fn settings_of(
    a: &RunArgs,
    stages: Option<&servelab_load::Stages>,
) -> anyhow::Result<LoadSettings> {
    let open = a.rate.is_some();
    let text = |key: &str, v: &str| {
        LoadSettings::from_text([(key, v)])
            .map_err(|why| anyhow::anyhow!("--{}: {why}", key.replace('_', "-")))
    };
    let mut s = LoadSettings {
        // With stages, as many users as the highest target.
        users: match stages {
            Some(st) if !open => Some(st.max().ceil().min(f64::from(u32::MAX)) as u32),
            _ => a.users,
        },
        session: a.session,
        rate: a.rate,
        connections: open.then_some(a.connections),
        protocol: a.h2.then_some(servelab_load::Protocol::H2 { streams: 1 }),
        streams: a.streams,
        tls_resume: Some(a.tls_resume == OnOff::On),
        ..LoadSettings::default()
    };
    if open {
        s.arrival = text("arrival", &a.arrival)?.arrival;
    } else {
        s.think = text("think", &a.think)?.think;
    }
    if let Some(d) = &a.duration {
        s.duration = text("duration", d)?.duration;
    }
    if let Some(t) = &a.timeout {
        s.timeout = text("timeout", t)?.timeout;
    }
    if let Some(p) = &a.poll_before_sleep {
        s.poll_before_sleep = text("poll_before_sleep", p)?.poll_before_sleep;
    }
    if let Some(n) = &a.nap {
        s.nap = text("nap", n)?.nap;
    }
    s.retries = text("retries", &a.retries)?.retries;
    s.retry_wait = text("retry_wait", &a.retry_wait)?.retry_wait;
    Ok(s)
}

/// What decides the exit status after a run: the error budget and the
/// thresholds, parsed (and refused when impossible) before the run.
#[derive(Debug)]
struct Checks {
    max_error_rate: f64,
    thresholds: Vec<Threshold>,
}

/// The run measured what it was asked to.
const EXIT_OK: u8 = 0;
/// More than `--max-error-rate` of the outcomes were errors, or none finished.
const EXIT_ERRORS: u8 = 3;
/// A `--fail-if` threshold was crossed or could not be measured.
const EXIT_THRESHOLD: u8 = 4;

fn checks_of(a: &RunArgs) -> anyhow::Result<Checks> {
    let max_error_rate =
        parse_share(&a.max_error_rate).map_err(|why| anyhow::anyhow!("--max-error-rate: {why}"))?;
    if !(0.0..=1.0).contains(&max_error_rate) {
        anyhow::bail!(
            "--max-error-rate `{}`: a share between 0% and 100%",
            a.max_error_rate
        );
    }
    let mut thresholds: Vec<Threshold> = a
        .fail_if
        .iter()
        .map(|t| t.parse::<Threshold>().context("--fail-if"))
        .collect::<anyhow::Result<_>>()?;
    for t in &a.threshold {
        thresholds.push(Threshold::pass_condition(t).context("--threshold")?);
    }
    Ok(Checks {
        max_error_rate,
        thresholds,
    })
}

/// What the checks found: the exit status, one line for each reason the run
/// failed, and one line per threshold for the summary.
struct Outcome {
    status: u8,
    failures: Vec<String>,
    thresholds: Vec<String>,
}

/// The exit status of a finished run, and one line for each reason it failed.
fn verdict(report: &Report, checks: &Checks) -> Outcome {
    let mut lines = Vec::new();
    let mut summary = Vec::new();
    let mut status = EXIT_OK;
    match report.error_rate() {
        Some(rate) if rate > checks.max_error_rate => {
            status = EXIT_ERRORS;
            lines.push(format!(
                "{:.2}% of outcomes were errors ({} errors, {} ok), above --max-error-rate {}%",
                rate * 100.0,
                report.counts.errors,
                report.counts.ok,
                checks.max_error_rate * 100.0
            ));
        }
        Some(_) => {}
        None => {
            status = EXIT_ERRORS;
            lines.push(format!(
                "no request finished and none failed ({} unfinished at the end)",
                report.counts.in_flight + report.counts.never_sent
            ));
        }
    }
    for t in &checks.thresholds {
        let v = t.check(report);
        let line = t.describe(&v);
        summary.push(line.clone());
        if !v.failed() {
            continue;
        }
        lines.push(line);
        if status == EXIT_OK {
            status = EXIT_THRESHOLD;
        }
    }
    Outcome {
        status,
        failures: lines,
        thresholds: summary,
    }
}

/// The exit status of a run cut short by `signal`: 128 + its number, as
/// shells give (130 for Ctrl-C's SIGINT).
fn interrupted_status(signal: Option<i32>) -> i32 {
    128 + signal.unwrap_or(2)
}

fn load(a: RunArgs) -> anyhow::Result<()> {
    let mut spec = spec_of(&a)?;
    let checks = checks_of(&a)?;
    if let Some(path) = &a.json {
        // Fail before the run, not after it, when the report cannot be written.
        std::fs::File::create(path).with_context(|| format!("--json {}", path.display()))?;
    }
    // Ctrl-C ends the run early but still prints (and writes) the report.
    spec.stop = Some(servelab_load::stop_on_signals()?);
    let report = servelab_load::run(&spec)?;
    if let Some(path) = &a.json {
        report.write(path)?;
    }
    let outcome = verdict(&report, &checks);
    if !a.quiet {
        print!("{}", report.summary());
        for line in &outcome.thresholds {
            println!("  threshold    {line}");
        }
    }
    if report.interrupted {
        // Cut short: the figures are printed and written, and the status
        // says so, whatever the checks found in the part that ran.
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        eprintln!(
            "servelab: load stopped early by a signal after {:.2} s; the report covers \
             the part that ran",
            report.duration_s
        );
        std::process::exit(interrupted_status(servelab_load::stop_signal()));
    }
    if let Some(failure) = &report.connect_failure {
        // Nothing was ever connected: one error line that says what to check
        // (status 2, a run that could not start), not an error budget.
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        anyhow::bail!("{failure}");
    }
    let Outcome {
        status, failures, ..
    } = outcome;
    for line in &failures {
        eprintln!("servelab: load failed: {line}");
    }
    if status != EXIT_OK {
        // The report is printed and written; only the status is left to give.
        // `main` maps every error to status 2, so a run that measured a failure
        // exits here with its own status.
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        std::process::exit(i32::from(status));
    }
    Ok(())
}

fn merge(m: MergeArgs) -> anyhow::Result<()> {
    let reports = m
        .reports
        .iter()
        .map(|p| Report::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = Report::merge(&reports)?;
    if let Some(path) = &m.json {
        merged.write(path)?;
    }
    print!("{}", merged.summary());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_load::{Arrival, Workload};

    #[derive(Debug, clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Result<Args, clap::Error> {
        Cli::try_parse_from(std::iter::once("load").chain(argv.iter().copied())).map(|c| c.args)
    }

    fn spec(argv: &[&str]) -> anyhow::Result<LoadSpec> {
        let args = parse(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        spec_of(&args.run)
    }

    /// Issue 31: the flags build the same `LoadSettings` that an
    /// experiment's `[load]` deserialises into, each value read by one parser.
    #[test]
    fn the_flags_build_the_settings_a_labs_load_reads() {
        let flags = |argv: &[&str]| {
            let args = parse(argv).unwrap();
            settings_of(&args.run, None).unwrap()
        };
        let keys = |pairs: &[(&str, &str)]| LoadSettings::from_text(pairs.iter().copied()).unwrap();
        assert_eq!(
            flags(&[
                "http://127.0.0.1:1/",
                "-c",
                "10",
                "--session",
                "5",
                "--think",
                "exp:1s",
                "-d",
                "30s",
                "--timeout",
                "2s",
                "--retries",
                "inf",
                "--retry-wait",
                "40ms",
                "--tls-resume",
                "off",
            ]),
            keys(&[
                ("users", "10"),
                ("session", "5"),
                ("think", "exp:1s"),
                ("duration", "30s"),
                ("timeout", "2s"),
                ("retries", "inf"),
                ("retry_wait", "40ms"),
                ("tls_resume", "off"),
            ])
        );
        assert_eq!(
            flags(&["http://127.0.0.1:1/", "--h2", "--streams", "100"]),
            keys(&[
                ("protocol", "h2"),
                ("streams", "100"),
                ("think", "0s"),
                ("retries", "0"),
                ("retry_wait", "0s"),
                ("tls_resume", "on"),
            ])
        );
        let e = spec(&["http://127.0.0.1:1/", "--retries", "lots"]).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "--retries: `lots`: expected a number or `inf`"
        );
    }

    #[test]
    fn closed_users_with_sessions_and_think() {
        let s = spec(&[
            "http://127.0.0.1:1/",
            "--users",
            "8",
            "--session",
            "10",
            "--think",
            "exp:6s",
        ])
        .unwrap();
        assert_eq!(
            s.workload,
            Workload::Closed {
                users: 8,
                session: Some(10),
                think: "exp:6s".parse().unwrap()
            }
        );
        assert_eq!(
            s.effective_duration(),
            Some(std::time::Duration::from_secs(10))
        );
    }

    #[test]
    fn open_rate_timeouts_retries_and_segments() {
        let s = spec(&[
            "http://127.0.0.1:1/",
            "--rate",
            "500",
            "--arrival",
            "uniform",
            "--timeout",
            "uniform:1s..2s",
            "--retries",
            "inf",
            "--retry-wait",
            "40ms",
            "--segment",
            "2/3",
            "-n",
            "900",
        ])
        .unwrap();
        assert!(
            matches!(s.workload, Workload::Open { rate, arrival: Arrival::Uniform, .. } if rate == 500.0)
        );
        assert_eq!(s.retries, None);
        assert_eq!(s.segment, Segment { index: 2, count: 3 });
        assert_eq!(s.requests, Some(900));
        assert_eq!(s.expect_status.to_string(), "200-399", "the default");
        assert!(s.retry_on_close, "the default");
        assert_eq!(s.stages, None);
        let s = spec(&["http://127.0.0.1:1/", "--no-retry-on-close"]).unwrap();
        assert!(!s.retry_on_close);
        let s = spec(&["http://127.0.0.1:1/", "--expect-status", "304,200-204"]).unwrap();
        assert_eq!(s.expect_status.to_string(), "200-204,304");
        assert!(s.tls.resume && !s.tls.insecure, "the defaults");
        let s = spec(&[
            "https://127.0.0.1:1/",
            "--cacert",
            "ca.pem",
            "--cert",
            "c.pem",
            "--key",
            "k.pem",
            "--tls-resume",
            "off",
        ])
        .unwrap();
        assert!(!s.tls.resume);
        assert_eq!(
            s.tls.cacert.as_deref(),
            Some(std::path::Path::new("ca.pem"))
        );
        assert!(s.tls.client_cert.is_some());
        assert!(spec(&["https://127.0.0.1:1/", "--cert", "c.pem"]).is_err());
        assert!(spec(&["https://127.0.0.1:1/", "-k", "--cacert", "a"]).is_err());
    }

    #[test]
    fn bad_input_is_a_clear_error_not_a_panic() {
        for argv in [
            &["http://127.0.0.1:1/", "--think", "soon"][..],
            &["http://127.0.0.1:1/", "--retries", "many"],
            &["http://127.0.0.1:1/", "--segment", "3/2"],
            &["http://127.0.0.1:1/", "--start-at", "18:00"],
            &["http://127.0.0.1:1/", "--start-at", "2999-01-01T00:00:00Z"],
            &["http://127.0.0.1:1/", "--expect-status", "2xx"],
            &["http://127.0.0.1:1/", "--expect-status", "600"],
            &["http://127.0.0.1:1/", "--duration", "-5s"],
            &["ftp://127.0.0.1:1/"],
            &[],
        ] {
            assert!(spec(argv).is_err(), "{argv:?}");
        }
        // --users and --rate exclude each other.
        assert!(parse(&["http://x/", "--users", "2", "--rate", "3"]).is_err());
    }

    fn checks(argv: &[&str]) -> anyhow::Result<Checks> {
        let args = parse(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        checks_of(&args.run)
    }

    #[test]
    fn error_budget_and_thresholds_parse_before_the_run() {
        let c = checks(&["http://127.0.0.1:1/"]).unwrap();
        assert_eq!(c.max_error_rate, 0.01, "the default budget is 1%");
        assert!(c.thresholds.is_empty());
        let c = checks(&[
            "http://127.0.0.1:1/",
            "--max-error-rate",
            "0.05",
            "--fail-if",
            "p99>200ms",
            "--fail-if",
            "errors>1%",
        ])
        .unwrap();
        assert_eq!(c.max_error_rate, 0.05);
        assert_eq!(c.thresholds.len(), 2);
        for bad in [
            &["--fail-if", "p99>soon"][..],
            &["--fail-if", "errors>150%"],
            &["--fail-if", "latency>1s"],
            &["--max-error-rate", "120%"],
            &["--max-error-rate", "some"],
        ] {
            let argv: Vec<&str> = std::iter::once("http://127.0.0.1:1/")
                .chain(bad.iter().copied())
                .collect();
            let e = checks(&argv).unwrap_err();
            // One line, naming the flag.
            let msg = format!("{e:#}");
            assert!(!msg.contains('\n') && msg.contains("--"), "{msg}");
        }
        // A latency without a unit is refused with the fix (issue 19).
        let e = checks(&["http://127.0.0.1:1/", "--fail-if", "p99>200"]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("write `p99>200ms`"), "{msg}");
    }

    #[test]
    fn methods_and_bodies() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.json");
        std::fs::write(&f, "{}").unwrap();
        let body = f.to_str().unwrap();
        let s = spec(&["http://127.0.0.1:1/", "--method", "post", "--body", body]).unwrap();
        assert_eq!(s.method, servelab_load::Method::Post);
        assert_eq!(s.body.as_deref(), Some(&b"{}"[..]));
        for argv in [
            &["http://127.0.0.1:1/", "--body", body][..],
            &[
                "http://127.0.0.1:1/",
                "--method",
                "PUT",
                "--body",
                "/no/such/file",
            ],
            &["http://127.0.0.1:1/", "--method", "TRACE"],
        ] {
            let e = spec(argv).unwrap_err();
            assert!(!format!("{e:#}").contains('\n'), "{e:#}");
        }
    }

    #[test]
    fn stages_ramp_users_or_with_rate_the_rate() {
        let s = spec(&["http://127.0.0.1:1/", "--stages", "30s:100,2m:100,30s:0"]).unwrap();
        assert!(matches!(s.workload, Workload::Closed { users: 100, .. }));
        assert_eq!(
            s.effective_duration(),
            Some(std::time::Duration::from_secs(180))
        );
        let s = spec(&[
            "http://127.0.0.1:1/",
            "--stages",
            "5s:40.5",
            "--rate",
            "40.5",
        ])
        .unwrap();
        assert!(matches!(s.workload, Workload::Open { rate, .. } if rate == 40.5));
        // --rate must be the highest target; --stages set the length and the users.
        let e = spec(&["http://127.0.0.1:1/", "--stages", "5s:40", "--rate", "10"]).unwrap_err();
        assert!(format!("{e:#}").contains("write --rate 40"), "{e:#}");
        assert!(parse(&["http://x/", "--stages", "5s:4", "-d", "5s"]).is_err());
        assert!(parse(&["http://x/", "--stages", "5s:4", "--users", "5"]).is_err());
        assert!(spec(&["http://x/", "--stages", "5s"]).is_err());
    }

    #[test]
    fn help_names_every_metric_of_the_catalogue() {
        use clap::CommandFactory as _;
        let help = Cli::command().render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for m in servelab_load::Metric::ALL {
            assert!(help.contains(&format!(" {m} ")), "{m} missing from --help");
        }
    }

    #[test]
    fn merge_is_a_subcommand() {
        let a = parse(&["merge", "a.json", "b.json", "--json", "m.json"]).unwrap();
        match a.command {
            Some(LoadCommand::Merge(m)) => {
                assert_eq!(m.reports.len(), 2);
                assert_eq!(m.json, Some(PathBuf::from("m.json")));
            }
            None => panic!("merge not parsed"),
        }
    }

    #[test]
    fn url_file_with_weights() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("urls.txt");
        std::fs::write(
            &f,
            "# two pages\nhttp://127.0.0.1:1/a 3\nhttp://127.0.0.1:1/b\n",
        )
        .unwrap();
        let s = spec(&["--urls", f.to_str().unwrap()]).unwrap();
        assert_eq!(s.targets.len(), 2);
        assert_eq!(s.targets[0].weight, 3.0);
    }

    #[test]
    fn poll_before_sleep_is_a_time_0_is_off_and_absent_is_the_default() {
        let s = spec(&["http://x/", "--h2", "--poll-before-sleep", "0"]).unwrap();
        assert_eq!(s.poll_before_sleep, Some(std::time::Duration::ZERO));
        let s = spec(&["http://x/", "--poll-before-sleep", "5us"]).unwrap();
        assert_eq!(
            s.poll_before_sleep,
            Some(std::time::Duration::from_micros(5))
        );
        assert_eq!(
            spec(&["http://x/", "--h2"]).unwrap().poll_before_sleep,
            None
        );
        let e = spec(&["http://x/", "--poll-before-sleep", "2ms"]).unwrap_err();
        assert!(e.to_string().contains("at most 1ms"), "{e}");
        let e = spec(&["http://x/", "--poll-before-sleep", "soon"]).unwrap_err();
        assert!(e.to_string().contains("--poll-before-sleep"), "{e}");
    }

    #[test]
    fn nap_is_a_time_off_by_default_and_at_most_1ms() {
        use std::time::Duration;
        assert_eq!(spec(&["http://x/", "--h2"]).unwrap().nap, Duration::ZERO);
        let s = spec(&["http://x/", "--h2", "--nap", "10us"]).unwrap();
        assert_eq!(s.nap, Duration::from_micros(10));
        assert_eq!(
            spec(&["http://x/", "--nap", "0"]).unwrap().nap,
            Duration::ZERO
        );
        let e = spec(&["http://x/", "--nap", "2ms"]).unwrap_err();
        assert!(e.to_string().contains("--nap must be at most 1ms"), "{e}");
        let e = spec(&["http://x/", "--nap", "soon"]).unwrap_err();
        assert!(e.to_string().contains("--nap"), "{e}");
    }

    #[test]
    fn h2_takes_streams_and_streams_need_h2() {
        let s = spec(&["http://x/", "--h2", "-c", "5", "--streams", "10"]).unwrap();
        assert_eq!(s.protocol, servelab_load::Protocol::H2 { streams: 10 });
        assert!(matches!(s.workload, Workload::Closed { users: 5, .. }));
        let s = spec(&["http://x/", "--h2"]).unwrap();
        assert_eq!(s.protocol, servelab_load::Protocol::H2 { streams: 1 });
        assert_eq!(
            spec(&["http://x/"]).unwrap().protocol,
            servelab_load::Protocol::Http1
        );
        assert!(parse(&["http://x/", "--streams", "10"]).is_err());
    }
}
