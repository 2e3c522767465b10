//! `servelab load`: the flags of the load generator, mapped onto a
//! [`servelab_load::LoadSpec`], and `servelab load merge` for segment reports.
//!
//! `--users` selects the closed workload, `--rate` the open one; both take
//! `--session`. The summary goes to stdout, the JSON report to `--json FILE`, the
//! progress bar to stderr when it is a terminal.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use servelab_dist::parse_duration;
use servelab_load::{Arrival, Dist, LoadSpec, Report, Segment, Target, Workload, read_url_file};

/// Flags of `servelab load`.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "DIST: 40ms, 1s, const:1s, exp:6s, uniform:4s..10s, lognormal:MEAN,CV, A+DIST \
    (e.g. 50s+exp:5s); plain numbers are seconds (the same syntax as servelab sim and serve --delay)."
)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Option<LoadCommand>,
    #[command(flatten)]
    run: RunArgs,
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
    /// URLs to request (http://host[:port]/path); a request picks one at random.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// File with one URL per line and an optional weight (`URL [WEIGHT]`).
    #[arg(long = "urls", value_name = "FILE")]
    url_file: Option<PathBuf>,

    /// Closed workload: number of users, each with one connection at a time [default: 10].
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
    #[arg(long, value_name = "N", default_value_t = 100, requires = "rate")]
    connections: u32,

    /// Stop after this many requests have finished (whole run, all segments).
    #[arg(long, short = 'n', value_name = "N")]
    requests: Option<u64>,
    /// Stop after this long (e.g. 30s, 2m) [default: 10s unless --requests].
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

    /// HTTP method: GET or HEAD.
    #[arg(long, default_value = "GET")]
    method: String,
    /// Extra request header `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "HEADER")]
    headers: Vec<String>,

    /// Event-loop threads [default: the number of CPUs].
    #[arg(long, short = 't', value_name = "T")]
    threads: Option<usize>,
    /// Seed of the random streams (think times, arrivals, targets).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run the I-th of N equal shares of the users or rate (for several machines).
    #[arg(long, value_name = "I/N", default_value = "1/1")]
    segment: String,

    /// Write the report as JSON (schema servelab-load/1) to this file.
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
        None => load(args.run),
    }
}

fn dist(flag: &str, s: &str) -> anyhow::Result<Dist> {
    s.parse::<Dist>().with_context(|| format!("--{flag}"))
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
    spec.workload = match a.rate {
        Some(rate) => Workload::Open {
            rate,
            arrival: a.arrival.parse::<Arrival>()?,
            connections: a.connections,
            session: a.session,
        },
        None => Workload::Closed {
            users: a.users.unwrap_or(10),
            session: a.session,
            think: dist("think", &a.think)?,
        },
    };
    spec.requests = a.requests;
    spec.duration = match &a.duration {
        Some(d) => {
            Some(parse_duration(d).map_err(|why| anyhow::anyhow!("--duration `{d}`: {why}"))?)
        }
        None => None,
    };
    spec.timeout = a
        .timeout
        .as_deref()
        .map(|t| dist("timeout", t))
        .transpose()?;
    spec.retries = match a.retries.as_str() {
        "inf" | "infinite" => None,
        n => Some(
            n.parse()
                .map_err(|_| anyhow::anyhow!("--retries `{n}`: expected a number or `inf`"))?,
        ),
    };
    spec.retry_wait = dist("retry-wait", &a.retry_wait)?;
    if let Some(t) = a.threads {
        spec.threads = t;
    }
    spec.seed = a.seed;
    spec.segment = a.segment.parse::<Segment>()?;
    spec.progress = !a.no_progress && !a.quiet;
    spec.validate()?;
    Ok(spec)
}

fn load(a: RunArgs) -> anyhow::Result<()> {
    let mut spec = spec_of(&a)?;
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
    if !a.quiet {
        print!("{}", report.summary());
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
    }

    #[test]
    fn bad_input_is_a_clear_error_not_a_panic() {
        for argv in [
            &["http://127.0.0.1:1/", "--think", "soon"][..],
            &["http://127.0.0.1:1/", "--retries", "many"],
            &["http://127.0.0.1:1/", "--segment", "3/2"],
            &["http://127.0.0.1:1/", "--duration", "-5s"],
            &["ftp://127.0.0.1:1/"],
            &[],
        ] {
            assert!(spec(argv).is_err(), "{argv:?}");
        }
        // --users and --rate exclude each other.
        assert!(parse(&["http://x/", "--users", "2", "--rate", "3"]).is_err());
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
}
