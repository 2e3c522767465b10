//! `servelab predict URL`: measure any HTTP server, fit seed 002's model, predict
//! the loads asked about and check the prediction on loads the fit never saw
//! (crate `servelab-predict`).
//!
//! Exit status: 0 when the prediction was made and, if validated, met every
//! target (or `--no-validate`); 2 for bad input or a run that could not go on;
//! [`EXIT_MISSED`] when the validation missed a target (past it by more than
//! the error's 95% interval), [`EXIT_INCONCLUSIVE`] when none was missed but
//! one could not be decided; the report is still printed and written, and
//! each such target is one line on stderr.

use std::path::PathBuf;
use std::time::Duration;

use servelab_dist::Dist;
use servelab_predict::{self as predict, CpuSource, Load, PredictOptions, ProgressMode, Slo};

/// Exit status when the validation missed a target: like `load --fail-if`'s
/// crossed threshold, distinct from 2 (bad input, or the run could not go on).
pub(crate) const EXIT_MISSED: u8 = 4;
/// Exit status when no target was missed but at least one could not be
/// decided (an error past its target within the error's 95% interval): not
/// a pass, and not a miss shown.
pub(crate) const EXIT_INCONCLUSIVE: u8 = 5;

/// Flags of `servelab predict`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: servelab serve --engine event --workers 2 --work exp:5ms --port 8080 &\n         servelab predict http://127.0.0.1:8080/ --pid $! --users 4,16,64 --think exp:50ms --slo 'p99<200ms'\n\
    Exit status: 0 the prediction was made and met every validation target (or --no-validate); \
    2 bad input, or the run could not go on; 4 the validation missed a target (past it by more \
    than the error's 95% interval); 5 none missed, but one could not be decided (each such target \
    is a line on stderr, the report is written)."
)]
pub(crate) struct Args {
    /// The URL to measure: http://host[:port]/path (it must answer 2xx).
    url: String,
    /// The server's process (repeatable; its children are included): its CPU
    /// gives the demand by the service demand law D = U/X.
    #[arg(long, value_name = "PID", conflicts_with = "cgroup")]
    pid: Vec<u32>,
    /// The server's cgroup v2 directory: its cpu.stat gives the CPU.
    #[arg(long, value_name = "DIR")]
    cgroup: Option<PathBuf>,
    /// Measurement time of the fit's staircase.
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "60s")]
    budget: Duration,
    /// Measurement time of the validation (loads the fit never saw).
    #[arg(long, value_name = "DURATION", value_parser = duration, default_value = "60s")]
    validate_budget: Duration,
    /// Skip the validation.
    #[arg(long)]
    no_validate: bool,
    /// Users to predict: a list (1,50,144), a range with step (1..800:25), or both.
    #[arg(long, default_value = "1,2,4,8,16,32")]
    users: String,
    /// Open rates to predict, requests per second (Poisson arrivals): a list
    /// (50,100,200); the validation measures them too.
    #[arg(long, value_name = "LIST", value_parser = rates)]
    rates: Option<Rates>,
    /// Their think time; the validation uses it too (0: ten demands, exponential).
    #[arg(long, value_name = "DIST", value_parser = dist, default_value = "0")]
    think: Dist,
    /// Their client timeout (none by default).
    #[arg(long, value_name = "DIST", value_parser = dist)]
    timeout: Option<Dist>,
    /// Retries after a timeout [default: unbounded].
    #[arg(long, value_name = "N")]
    retries: Option<u32>,
    /// An objective, STAT<DURATION with STAT mean, p50, p90 or p99: the largest
    /// number of users that meets it is predicted.
    #[arg(long, value_name = "OBJECTIVE")]
    slo: Option<Slo>,
    /// Results directory, which must not exist [default: results/predict-<timestamp>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress: no bar on a terminal, no line per step elsewhere.
    #[arg(long)]
    no_progress: bool,
}

/// A list of open rates: one value to clap, which reads `Vec` as repeats.
#[derive(Debug, Clone)]
struct Rates(Vec<f64>);

fn rates(s: &str) -> Result<Rates, String> {
    s.split(',')
        .map(|r| match r.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
            _ => Err(format!("`{r}` is not a rate above 0 (requests per second)")),
        })
        .collect::<Result<_, _>>()
        .map(Rates)
}

fn dist(s: &str) -> Result<Dist, String> {
    s.parse::<Dist>().map_err(|e| e.to_string())
}

fn duration(s: &str) -> Result<Duration, String> {
    servelab_dist::parse_duration(s).map_err(|e| e.to_string())
}

/// Runs `servelab predict`.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let users = servelab_sim::parse_users(&args.users)?;
    let cpu = match (args.pid.is_empty(), args.cgroup) {
        (false, _) => CpuSource::Pids(args.pid),
        (true, Some(dir)) => CpuSource::Cgroup(dir),
        (true, None) => CpuSource::None,
    };
    let opts = PredictOptions {
        url: args.url,
        cpu,
        budget: args.budget,
        validate_budget: (!args.no_validate).then_some(args.validate_budget),
        users,
        rates: args.rates.map_or_else(Vec::new, |r| r.0),
        load: Load {
            users: 1,
            rate: None,
            think: args.think,
            timeout: args.timeout,
            retries: args.retries,
        },
        slo: args.slo,
        out: args.out,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        progress: ProgressMode::for_stderr(!args.no_progress),
    };
    let o = predict::run(&opts)?;
    print(&o);
    let (missed, open) = o
        .validation
        .as_ref()
        .map_or_else(Default::default, |v| (v.missed(), v.inconclusive()));
    for (rows, what) in [(&missed, "target missed"), (&open, "target inconclusive")] {
        for r in rows.iter() {
            eprintln!(
                "servelab: predict: {what}: {} largest |error| {} > {} ({} of {} points past it)",
                r.target.label(),
                r.max_abs_pct.map_or("-".into(), |e| format!("{e:.1}%")),
                r.limit_pct.map_or("-".into(), |l| format!("{l:.0}%")),
                r.missed_points + r.inconclusive_points,
                r.points
            );
        }
    }
    let status = if !missed.is_empty() {
        EXIT_MISSED
    } else if !open.is_empty() {
        EXIT_INCONCLUSIVE
    } else {
        return Ok(());
    };
    // The report is printed and written; only the status is left to give
    // (`main` maps every error to 2).
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    std::process::exit(i32::from(status));
}

fn print(o: &predict::Outcome) {
    // The headline, then why each target not met was not, first: a reader
    // who stops after a screenful still knows what to distrust and why.
    if let Some(v) = &o.validation {
        println!("{}", v.headline());
        for r in v.table.iter().filter(|r| !r.why.is_empty()) {
            println!("  {}: {}", r.target.label(), r.why.join("; "));
        }
    }
    for w in &o.warnings {
        println!("warning: {w}");
    }
    let a = &o.architecture;
    println!(
        "architecture ({:.1} s of probes): {}",
        a.probe_s,
        a.summary()
    );
    for h in &a.how {
        println!("  {h}");
    }
    let f = &o.fit;
    let hw = |e: &predict::Estimate, s: f64| {
        e.half_width
            .map_or(String::new(), |h| format!(" ± {:.3}", h * s))
    };
    let open = o.staircase.iter().filter(|s| s.load.rate.is_some()).count();
    println!(
        "fit ({} steps of closed users with no think time, {open} open):",
        o.staircase.len() - open
    );
    let used = |from: predict::DemandFrom| {
        if f.demand_from == from {
            "  <- the model's demand"
        } else {
            ""
        }
    };
    if let Some(c) = &f.cpu_demand_s {
        println!(
            "  CPU per request D = U/X   {:.3}{} ms{}",
            c.value * 1e3,
            hw(c, 1e3),
            used(predict::DemandFrom::Cpu)
        );
        for d in &f.demand_per_step {
            println!(
                "    at {:<20} {:.3}{} ms",
                d.load,
                d.cpu_s.value * 1e3,
                hw(&d.cpu_s, 1e3)
            );
        }
    }
    let r = &f.low_load_response_s;
    println!(
        "  response time at 1 user   {:.3}{} ms{}",
        r.value * 1e3,
        hw(r, 1e3),
        used(predict::DemandFrom::ResponseTime)
    );
    if let Some(p) = &f.plateau_demand_s {
        println!(
            "  c/X_max                   {:.3}{} ms{}",
            p.value * 1e3,
            hw(p, 1e3),
            used(predict::DemandFrom::Plateau)
        );
    }
    println!(
        "  plateau X_max             {:.1}{} /s",
        f.throughput_max.value,
        hw(&f.throughput_max, 1.0)
    );
    println!(
        "  servers X_max·D           {:.2}{} -> c = {}",
        f.servers_raw.value,
        hw(&f.servers_raw, 1.0),
        f.cores
    );
    println!(
        "  CV at 1 user              {:.2}{}",
        f.cv.value,
        hw(&f.cv, 1.0)
    );
    if let Some(s) = &f.demand_slope_s_per_user {
        println!(
            "  CPU per added user        {:+.4}{} ms",
            s.value * 1e3,
            hw(s, 1e3)
        );
    }
    if let Some((lo, hi)) = f.buffer_bounds {
        println!("  buffer from refusals      {lo}..={hi} -> {}", f.buffer);
    }
    if let Some(t) = &f.threads_fit {
        println!(
            "  threads per core k: mean R per step, error = (predicted − measured) / measured"
        );
        let mut head = format!("    {:<16}", "k (policy)");
        for s in &t.steps {
            head.push_str(&format!(" {s:>10}"));
        }
        println!("{head}        RMS");
        let mut meas = format!("    {:<16}", "measured ms");
        for m in &t.measured_ms {
            meas.push_str(&m.map_or(format!(" {:>10}", "-"), |m| format!(" {m:>10.3}")));
        }
        println!("{meas}");
        for c in &t.candidates {
            let mut line = format!(
                "    {:<16}",
                format!("{} ({})", c.threads_per_core, c.policy)
            );
            for e in &c.errors_pct {
                line.push_str(&e.map_or(format!(" {:>10}", "-"), |e| format!(" {e:>+9.1}%")));
            }
            let mark = if c.threads_per_core == t.chosen {
                "  <- the model's k"
            } else {
                ""
            };
            println!("{line} {:>9.1}%{mark}", c.rms_pct);
        }
    }
    for n in &f.notes {
        println!("  note: {n}");
    }
    if let Some(g) = &o.idle {
        println!("  {}", g.summary);
    }
    println!("model: {}", o.sim_command);
    println!("load      X/s    goodput/s  drops/s  R ms     p99 ms   U %");
    for p in &o.forecasts {
        println!(
            "{:<9} {:<6.1} {:<10.1} {:<8.1} {:<8} {:<8} {:.1}",
            p.load.describe(),
            p.throughput.value,
            p.goodput.value,
            p.drop_rate.value,
            p.mean_ms.map_or("-".into(), |m| format!("{:.2}", m.value)),
            p.p99_ms.map_or("-".into(), |m| format!("{:.2}", m.value)),
            p.utilisation_pct.value
        );
    }
    if let Some(w) = o.architecture.held_workers()
        && o.forecasts.iter().any(|p| p.past_held_workers)
    {
        println!(
            "  (past {w} users a user waits for a held connection to close: the model holds \
             the {w} workers)"
        );
    }
    if o.forecasts.iter().any(|p| p.load.rate.is_some()) {
        println!(
            "  (an open rate λ is simulated as {n} users thinking exp({n}/λ): the simulator has \
             closed users only)",
            n = predict::OPEN_POPULATION
        );
    }
    println!("knee N* = {:.1} users", o.knee_users);
    if let Some(slo) = &o.slo {
        match o.slo_users {
            Some(n) => println!("largest load meeting {slo}: {n} users"),
            None => println!("largest load meeting {slo}: none, one user already misses it"),
        }
    }
    if let Some(v) = &o.validation {
        println!(
            "validation at {} loads the fit never saw (error = (predicted − measured) / measured; \
             predicted as measured: windows of {:.2} s from an empty server and fresh \
             connections, R over the answered requests):",
            v.points.len(),
            v.window_s
        );
        for r in &v.table {
            println!(
                "  {:<18} target {:<5} largest |error| {:<7} mean {:<7} {}",
                r.target.label(),
                r.limit_pct.map_or("none".into(), |l| format!("{l:.0}%")),
                r.max_abs_pct.map_or("-".into(), |e| format!("{e:.1}%")),
                r.mean_abs_pct.map_or("-".into(), |e| format!("{e:.1}%")),
                r.verdict.map_or("", |v| v.label())
            );
        }
    }
    println!("report: {}", o.dir.join("report.html").display());
}
