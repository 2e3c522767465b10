//! `servelab sim`: flags of the simulator, mapped onto `servelab_sim::{Model, RunSpec}`.
//!
//! Everything else (simulation, exact solution, bounds, formatting) lives in the
//! `servelab-sim` library, so that the lab runs exactly what this command runs. The
//! defaults are seed 002's first configuration without timeouts, so that a bare
//! `servelab sim` shows simulation and exact solution side by side.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use servelab_sim::{
    Affinity, Connections, Dist, HeldWorkers, Length, Model, NoEffect, OnAbandon, OnFull, Policy,
    RunSpec, SimError, Sweep, Warmup, report,
};

fn dist(s: &str) -> Result<Dist, String> {
    s.parse::<Dist>().map_err(|e| e.to_string())
}

/// A distribution or `none`. A newtype because clap reads a bare `Option<T>` field as
/// "flag may be absent", not as a value that can be `none`.
#[derive(Clone, Debug)]
struct MaybeDist(Option<Dist>);

fn optional_dist(s: &str) -> Result<MaybeDist, String> {
    if s == "none" {
        Ok(MaybeDist(None))
    } else {
        dist(s).map(|d| MaybeDist(Some(d)))
    }
}

/// A session length in requests, or `none` (one connection for the whole run).
#[derive(Clone, Copy, Debug)]
struct MaybeSession(Option<u32>);

fn session(s: &str) -> Result<MaybeSession, String> {
    match s {
        "none" => Ok(MaybeSession(None)),
        _ => match s.parse::<u32>() {
            Ok(0) | Err(_) => Err(format!(
                "`{s}` is not a session: a number of requests (at least 1) or none"
            )),
            Ok(n) => Ok(MaybeSession(Some(n))),
        },
    }
}

/// A keep-alive timeout in seconds, or `none`.
#[derive(Clone, Copy, Debug)]
struct MaybeSecs(Option<f64>);

fn keepalive(s: &str) -> Result<MaybeSecs, String> {
    HeldWorkers::parse_keepalive(s)
        .map(MaybeSecs)
        .map_err(|e| e.to_string())
}

/// A request limit per connection (at least 1), or `none`.
#[derive(Clone, Copy, Debug)]
struct MaybeLimit(Option<u32>);

fn request_limit(s: &str) -> Result<MaybeLimit, String> {
    HeldWorkers::parse_request_limit(s)
        .map(MaybeLimit)
        .map_err(|e| e.to_string())
}

fn duration(s: &str) -> Result<f64, String> {
    servelab_dist::parse_secs_f64(s).map_err(|e| e.to_string())
}

fn warmup(s: &str) -> Result<Warmup, String> {
    if s == "mser5" || s == "mser-5" {
        Ok(Warmup::Mser5)
    } else if s == "mser5-each" {
        Ok(Warmup::Mser5Each)
    } else {
        duration(s).map(Warmup::Fixed)
    }
}

/// Flags of `servelab sim`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "DIST: 40ms, 1s, const:1s, exp:6s, uniform:4s..10s, lognormal:MEAN,CV, A+DIST \
    (e.g. 50s+exp:5s); plain numbers are seconds (the same syntax as serve --delay and load --think).\n\
    Example (seed 002): servelab sim --users 1..800:25 --timeout 50s+exp:5s --threads-per-core 8 --policy rr --context-switch 0.1"
)]
pub(crate) struct Args {
    /// User counts: a list (1,50,144), a range with step (1..800:25, ends at 800), or both.
    #[arg(long, default_value = "100")]
    users: String,
    /// Think time between an answer and the next request.
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "uniform:4s..10s")]
    think: Dist,
    /// Service demand of a request on one core.
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "exp:0.2s")]
    service: Dist,
    /// Client timeout, or `none`; after a timeout the user waits --retry-wait and
    /// retries, and the abandoned request is handled as --on-abandon says. Seed 002:
    /// 50s+exp:5s.
    #[arg(long, value_name = "DIST|none", value_parser = optional_dist, default_value = "none")]
    timeout: MaybeDist,
    /// Retries after timeouts and rejections before the user gives up and thinks
    /// again [default: unbounded].
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// Wait between a timeout (or a rejection) and the retry, as `load --retry-wait`.
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "0")]
    retry_wait: Dist,
    /// A full buffer: reject (answer at once, like the pool's 503; the user waits
    /// --retry-wait and retries) or silent (the user learns at its timeout; with no
    /// timeout it thinks again, as in the exact model).
    #[arg(long, value_name = "reject|silent", value_parser = |s: &str| s.parse::<OnFull>().map_err(|e| e.to_string()), default_value = "silent")]
    on_full: OnFull,
    /// A request whose user timed out: finish (served anyway, badput, seed 002) or
    /// cancel (removed from the buffer or stopped on its core, as `serve --on-abandon cancel`).
    #[arg(long, value_name = "finish|cancel", value_parser = |s: &str| s.parse::<OnAbandon>().map_err(|e| e.to_string()), default_value = "finish")]
    on_abandon: OnAbandon,
    /// Number of cores c.
    #[arg(long, default_value_t = 4)]
    cores: u32,
    /// Threads per core k.
    #[arg(long, default_value_t = 1)]
    threads_per_core: u32,
    /// Shared buffer capacity B (requests waiting for a thread); more are dropped.
    #[arg(long, default_value_t = 500)]
    buffer: u32,
    /// Scheduling on a core: fcfs (run to completion) or rr (round robin).
    #[arg(long, value_parser = |s: &str| s.parse::<Policy>().map_err(|e| e.to_string()), default_value = "fcfs")]
    policy: Policy,
    /// Round-robin quantum [default: 0.5s].
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    quantum: Option<f64>,
    /// Cost of a round-robin preemption (busy, not utilisation). Seed 002: 0.1, 0.01, 0.001.
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "0")]
    context_switch: f64,
    /// Thread placement: pinned (thread-to-core affinity, seed 002) or shared (global run queue).
    #[arg(long, value_parser = |s: &str| s.parse::<Affinity>().map_err(|e| e.to_string()), default_value = "pinned")]
    affinity: Affinity,
    /// Requests a user sends on one connection before it opens a new one (as
    /// `load --session`), or `none`: one connection for the whole run. Only
    /// --first-demand makes it matter.
    #[arg(long, value_name = "N|none", value_parser = session, default_value = "none")]
    session: MaybeSession,
    /// Extra CPU demand of a connection's first request, added to its --service
    /// draw (a TLS handshake: e.g. const:130us). Its mean spread over --session
    /// adds to S in the bounds; the exact solution no longer applies.
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "0")]
    first_demand: Dist,
    /// Extra CPU demand of a request that starts on a core idle for at least
    /// --idle-gap, added to its --service draw (a server slower after an idle gap
    /// than back to back: `predict` fits it from one user thinking). The exact
    /// solution no longer applies; the bounds keep the busy demand.
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "0")]
    idle_demand: Dist,
    /// How long a core must have idled for --idle-demand to be paid (a request
    /// that follows another back to back does not pay it).
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "1ms")]
    idle_gap: f64,
    /// Workers held by connections (a thread or process per connection: serve's
    /// pool and prefork, Apache prefork/worker, gunicorn gthread): the c x k threads
    /// are the W workers, and a connection holds one from accept until it closes
    /// (keep-alive timeout, request limit, --session, or a client timeout); more
    /// connections wait in the --backlog. Without it requests queue for threads
    /// (an event-driven server).
    #[arg(long)]
    hold_workers: bool,
    /// With --hold-workers: idle time after an answer before the server closes a
    /// kept-alive connection and frees its worker, or none [default: 5s].
    #[arg(long, value_name = "DURATION|none", value_parser = keepalive, allow_hyphen_values = true)]
    keepalive_timeout: Option<MaybeSecs>,
    /// With --hold-workers: requests after which the server closes a connection,
    /// or none [default: none].
    #[arg(long, value_name = "N|none", value_parser = request_limit, allow_hyphen_values = true)]
    max_requests_per_conn: Option<MaybeLimit>,
    /// With --hold-workers: connections waiting for a worker (the listen backlog);
    /// one more is refused, handled as --on-full says [default: 511].
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    backlog: Option<u32>,
    /// Independent replications per point.
    #[arg(long, default_value_t = 10)]
    reps: u32,
    /// Completed requests per replication (including warm-up with MSER-5).
    #[arg(long, default_value_t = 20_000, conflicts_with = "horizon")]
    requests: u64,
    /// Simulated time per replication instead of a request count.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    horizon: Option<f64>,
    /// Warm-up deletion: mser5 (MSER-5 on the average of the replications, one cut for
    /// all), mser5-each (MSER-5 per replication, the old default), or a fixed
    /// simulated duration to discard.
    #[arg(long, value_name = "mser5|mser5-each|DURATION", value_parser = warmup, default_value = "mser5")]
    warmup: Warmup,
    /// Master seed; same seed, same output, whatever --jobs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Parallel simulation jobs, one OS thread each (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Print only the exact solution and bounds (no simulation).
    #[arg(long)]
    analytic: bool,
    /// Write every metric with its interval, per point, as JSON (schema servelab-sim/4).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write every metric with its interval, one row per point, as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the event trace of replication 0 of the first point (for small runs).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Print every column of the table (by default it fits in 100 columns).
    #[arg(long)]
    wide: bool,
}

fn write_file(path: &Path, mut file: File, text: &str) -> anyhow::Result<()> {
    file.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The simulation flags given other values than their defaults: `--analytic`
/// ignores them. (A flag given at its default value cannot be told apart, and
/// changes nothing either way.)
fn simulation_flags_set(args: &Args, spec: &RunSpec) -> Vec<&'static str> {
    let default = RunSpec::default();
    [
        ("--reps", spec.reps != default.reps),
        (
            "--requests",
            spec.length != default.length && args.horizon.is_none(),
        ),
        ("--horizon", args.horizon.is_some()),
        ("--warmup", spec.warmup != default.warmup),
        ("--seed", spec.seed != default.seed),
        ("--jobs", args.jobs != 0),
        ("--wide", args.wide),
    ]
    .into_iter()
    .filter_map(|(flag, set)| set.then_some(flag))
    .collect()
}

/// The connection model of the flags: free, or held workers with the given settings
/// (each defaulting to [`HeldWorkers::default`]).
fn connections(args: &Args) -> Connections {
    if !args.hold_workers {
        return Connections::Free;
    }
    let d = HeldWorkers::default();
    Connections::Held(HeldWorkers {
        keepalive_timeout: args.keepalive_timeout.map_or(d.keepalive_timeout, |k| k.0),
        max_requests: args.max_requests_per_conn.map_or(d.max_requests, |m| m.0),
        backlog: args.backlog.unwrap_or(d.backlog),
    })
}

/// Runs `servelab sim`.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let users = servelab_sim::parse_users(&args.users)?;
    let base = Model {
        users: users[0],
        think: args.think,
        service: args.service,
        timeout: args.timeout.0,
        retries: args.retries,
        retry_wait: args.retry_wait,
        on_full: args.on_full,
        on_abandon: args.on_abandon,
        cores: args.cores,
        threads_per_core: args.threads_per_core,
        buffer: args.buffer,
        policy: args.policy,
        quantum: args.quantum.unwrap_or(Model::default().quantum),
        context_switch: args.context_switch,
        affinity: args.affinity,
        session: args.session.0,
        first_demand: args.first_demand,
        connections: connections(&args),
        idle_demand: args.idle_demand,
        idle_gap: args.idle_gap,
    };
    let sweep = Sweep { base, users };
    let spec = RunSpec {
        reps: args.reps,
        length: args
            .horizon
            .map_or(Length::Requests(args.requests), Length::Horizon),
        warmup: args.warmup,
        seed: args.seed,
    };
    // Check the input, then create the output files, so that a bad path fails before
    // a long sweep and a bad flag leaves no empty file behind.
    for m in sweep.models() {
        m.validate()?;
    }
    // Settings that cannot change the run: one line each, before it starts.
    let max_users = sweep.users.iter().copied().max().unwrap_or(1);
    let mut inert = servelab_sim::no_effect(&sweep.base, max_users);
    if args.quantum.is_some() && args.policy == Policy::Fcfs {
        inert.push(NoEffect::QuantumWithoutRoundRobin);
    }
    if !args.hold_workers {
        for (flag, set) in [
            ("--keepalive-timeout", args.keepalive_timeout.is_some()),
            (
                "--max-requests-per-conn",
                args.max_requests_per_conn.is_some(),
            ),
            ("--backlog", args.backlog.is_some()),
        ] {
            if set {
                inert.push(NoEffect::WithoutHeldWorkers(flag));
            }
        }
    }
    for w in inert {
        eprintln!("servelab: warning: {w}");
    }
    if args.analytic {
        let unused = simulation_flags_set(&args, &spec);
        if !unused.is_empty() {
            eprintln!(
                "servelab: warning: {} {} no effect with --analytic, which simulates nothing",
                unused.join(", "),
                if unused.len() == 1 { "has" } else { "have" }
            );
        }
    }
    if !args.analytic {
        spec.validate()?;
    }
    let create = |path: &Option<PathBuf>| -> anyhow::Result<Option<(PathBuf, File)>> {
        path.as_ref()
            .map(|p| {
                Ok((
                    p.clone(),
                    File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
                ))
            })
            .transpose()
    };
    let (json, csv, trace) = (
        create(&args.json)?,
        create(&args.csv)?,
        create(&args.trace)?,
    );
    let (points, spec_used) = if args.analytic {
        let points = sweep.analytic()?;
        print!("{}", report::analytic_table(&points));
        (points, None)
    } else {
        let started = Instant::now();
        let points = servelab_sim::run_models_on(&sweep.models(), &spec, args.jobs)?;
        let secs = started.elapsed().as_secs_f64();
        let columns = if args.wide {
            report::Columns::All
        } else {
            report::Columns::Fit
        };
        print!("{}", report::table(&points, Some(&spec), columns));
        let requests: f64 = points
            .iter()
            .filter_map(|p| {
                p.warmup
                    .map(|w| (w.mean_kept + w.mean_deleted) * f64::from(p.reps))
            })
            .sum();
        let events: u64 = points.iter().map(|p| p.events).sum();
        eprintln!(
            "simulated {} points x {} replications: {:.2} M requests, {:.2} M events in {secs:.2} s \
             ({:.2} M requests/s wall clock)",
            points.len(),
            spec.reps,
            requests / 1e6,
            events as f64 / 1e6,
            requests / secs / 1e6
        );
        (points, Some(spec))
    };
    if let Some((path, file)) = json {
        write_file(&path, file, &report::to_json(&points, spec_used.as_ref()))?;
    }
    if let Some((path, file)) = csv {
        write_file(&path, file, &report::to_csv(&points))?;
    }
    if let Some((path, file)) = trace {
        let cannot = || format!("cannot write trace {}", path.display());
        let mut out = BufWriter::new(file);
        servelab_sim::trace_replication(&sweep.models()[0], &spec, &mut out).map_err(|e| {
            // A write error is said with the path here, and its cause once; the
            // library's own words ("cannot write the event trace") would repeat it.
            match e {
                SimError::Trace(io) => anyhow::Error::new(io).context(cannot()),
                other => anyhow::Error::new(other),
            }
        })?;
        out.flush().with_context(cannot)?;
        eprintln!(
            "trace of replication 0 at N = {} written to {}",
            sweep.users[0],
            path.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn args(line: &str) -> Result<Args, clap::Error> {
        Cli::try_parse_from(std::iter::once("sim").chain(line.split_whitespace())).map(|c| c.args)
    }

    #[test]
    fn defaults_are_seed_002_without_timeouts() {
        let a = args("").unwrap();
        assert_eq!(a.think.to_string(), "uniform:4s..10s");
        assert_eq!(a.service.to_string(), "exp:0.2s");
        assert!(a.timeout.0.is_none());
        assert_eq!(
            (a.cores, a.threads_per_core, a.buffer, a.reps, a.requests),
            (4, 1, 500, 10, 20_000)
        );
        let a =
            args("--timeout 50s+exp:5s --policy rr --context-switch 10ms --warmup 30s").unwrap();
        assert_eq!(a.timeout.0.unwrap().mean(), 55.0);
        assert_eq!(
            (a.policy, a.context_switch, a.warmup),
            (Policy::RoundRobin, 0.01, Warmup::Fixed(30.0))
        );
    }

    #[test]
    fn semantics_flags_reach_the_model() {
        let a = args(
            "--users 30 --reps 2 --requests 500 --timeout 1s --retry-wait exp:0.1s \
             --on-full reject --on-abandon cancel",
        )
        .unwrap();
        assert_eq!(
            (a.on_full, a.on_abandon, a.retry_wait.mean()),
            (OnFull::Reject, OnAbandon::Cancel, 0.1)
        );
        run(a).unwrap();
        let d = args("").unwrap();
        assert_eq!(
            (d.on_full, d.on_abandon),
            (OnFull::Silent, OnAbandon::Finish)
        );
        assert!(d.retry_wait.is_zero());
    }

    #[test]
    fn session_and_first_demand_reach_the_model() {
        let a = args("--session 10 --first-demand const:130us").unwrap();
        assert_eq!(a.session.0, Some(10));
        assert!((a.first_demand.mean() - 130e-6).abs() < 1e-12);
        let d = args("").unwrap();
        assert_eq!(d.session.0, None);
        assert!(d.first_demand.is_zero());
        run(args(
            "--users 4 --reps 2 --requests 500 --think 0 --service const:1ms \
             --session 1 --first-demand const:1ms",
        )
        .unwrap())
        .unwrap();
    }

    #[test]
    fn bad_flags_are_errors_not_panics() {
        for line in [
            "--service weibull:1",
            "--think exp:0",
            "--policy lifo",
            "--requests 5 --horizon 1s",
            "--quantum x",
            "--on-abandon maybe",
            "--on-full drop",
            "--retry-wait soon",
            "--session 0",
            "--session many",
            "--first-demand fast",
        ] {
            assert!(args(line).is_err(), "{line}");
        }
        for line in [
            "--users 0",
            "--reps 0",
            "--cores 0",
            "--policy rr --quantum 0",
            "--users 1..9:0",
            "--on-full reject",
        ] {
            assert!(run(args(line).unwrap()).is_err(), "{line}");
        }
    }

    #[test]
    fn writes_json_csv_and_trace() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name).display().to_string();
        let line = format!(
            "--users 5,40 --reps 2 --requests 200 --json {} --csv {} --trace {}",
            p("out.json"),
            p("out.csv"),
            p("trace.tsv")
        );
        run(args(&line).unwrap()).unwrap();
        let json = std::fs::read_to_string(p("out.json")).unwrap();
        assert!(json.contains("\"schema\": \"servelab-sim/4\""));
        assert_eq!(
            std::fs::read_to_string(p("out.csv"))
                .unwrap()
                .lines()
                .count(),
            3
        );
        assert!(
            std::fs::read_to_string(p("trace.tsv"))
                .unwrap()
                .starts_with("time\tevent")
        );
        let bad = format!(
            "--users 5 --json {}",
            dir.path().join("missing/x.json").display()
        );
        assert!(run(args(&bad).unwrap()).is_err());
    }
}
