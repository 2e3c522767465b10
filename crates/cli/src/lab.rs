//! `servelab lab`: list, run, run two binaries interleaved (`ab`), report and compare experiments (crate `servelab-lab`).
//!
//! The servers of an experiment are started as child processes of this same binary
//! (`servelab serve`), so that they can be pinned to their own CPU and so that the
//! process engines behave as they do from a shell.

use std::path::PathBuf;

use anyhow::Context as _;
use servelab_lab::results::Status;
use servelab_lab::{RunOptions, RunResults, builtin, compare, index, report, run, rundir};

/// Flags of `servelab lab`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Debug, clap::Subcommand)]
enum LabCommand {
    /// List the built-in experiments.
    List,
    /// Run an experiment (a built-in NAME or a path to a .toml file) and write
    /// a new directory, results/<name>-<timestamp>/, with results.csv,
    /// results.json and report.html. Exits with status 2 if no point produced
    /// figures.
    Run {
        /// Built-in experiment name (`servelab lab list`) or path to a .toml file.
        name: String,
        #[command(flatten)]
        sweep: Sweep,
    },
    /// Measure an experiment with two servelab binaries interleaved: at every
    /// point A's server and B's run side by side and their repeats alternate
    /// in ABBA order (A B, B A, A B, ...), as many for each, so that the
    /// machine's drift hits both alike.
    /// Writes OUT/a and OUT/b (ordinary run directories) and OUT/compare.html,
    /// and prints the comparison. Exits with status 2 if a side produced no
    /// figures.
    Ab {
        /// Built-in experiment name (`servelab lab list`) or path to a .toml file
        /// (a measured one: a simulation has no binary to compare).
        name: String,
        /// The servelab binary of side A, "before" [default: this binary].
        #[arg(long, value_name = "BIN")]
        a: Option<PathBuf>,
        /// The servelab binary of side B, "after".
        #[arg(long, value_name = "BIN")]
        b: PathBuf,
        #[command(flatten)]
        sweep: Sweep,
    },
    /// Rebuild report.html of a results directory from its results.json.
    Report {
        /// A results directory.
        dir: PathBuf,
    },
    /// Put two runs side by side (before and after a change).
    Compare {
        /// The first results directory (before).
        a: PathBuf,
        /// The second results directory (after).
        b: PathBuf,
        /// Also write the comparison as an HTML page, both runs drawn on the same axes.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
}

/// Runs `servelab lab`.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        LabCommand::List => {
            // Planned against a placeholder directory: nothing is created.
            let tmp = std::path::Path::new("/tmp/servelab-lab");
            let mut estimates = Vec::new();
            for (name, _) in builtin::BUILTIN {
                let exp = builtin::load(name)?;
                let full = exp.plan(&servelab_lab::experiment::PlanOptions::sweep(false), tmp)?;
                let estimate = servelab_lab::run_time::RunTime::of(&full);
                println!(
                    "{name:<18} {:>4} points ({:>3} with --quick)  full run {:<16} {}",
                    full.points.len(),
                    exp.plan(&servelab_lab::experiment::PlanOptions::sweep(true), tmp)?
                        .points
                        .len(),
                    estimate.to_string(),
                    exp.title
                );
                estimates.push(estimate);
            }
            let total = servelab_lab::run_time::RunTime::total(&estimates);
            println!(
                "{:<18} {:>4} measured points          full runs {total} (fewest repeats..cap)",
                "total", total.measured
            );
            Ok(())
        }
        LabCommand::Run { name, sweep } => {
            sweep.check()?;
            let exp = builtin::load(&name)?;
            let exe = std::env::current_exe().context("cannot find the servelab executable")?;
            let opts = run_options(vec!["run".into(), name.clone()], sweep, exe);
            let finished = run::run(&exp, &opts)?;
            let results = &finished.results;
            let count = |s: Status| results.points.iter().filter(|p| p.status == s).count();
            println!(
                "{}: {} points ok, {} failed, {} unavailable in {:.1} s",
                exp.name(),
                count(Status::Ok),
                count(Status::Failed),
                count(Status::Unavailable),
                results.duration_s
            );
            println!("{}", servelab_lab::conclusion::conclude(&exp, results));
            println!("report: {}", finished.dir.join("report.html").display());
            if let Some(runs) = &finished.index {
                println!("index: {}", runs.join("index.html").display());
            }
            let problems = finished.problems();
            if !problems.is_empty() {
                eprintln!(
                    "servelab: {} of {} points produced no figures:",
                    problems.len(),
                    results.points.len()
                );
                for p in &problems {
                    eprintln!("  {p}");
                }
            }
            finished.check()?;
            Ok(())
        }
        LabCommand::Ab { name, a, b, sweep } => {
            sweep.check()?;
            let exe = match a {
                Some(a) => a,
                None => std::env::current_exe().context("cannot find the servelab executable")?,
            };
            // Both binaries are checked before the experiment is even read,
            // so a typo costs nothing.
            run::check_exe("--a", &exe)?;
            run::check_exe("--b", &b)?;
            let exp = builtin::load(&name)?;
            let words = vec![
                "ab".into(),
                name.clone(),
                "--a".into(),
                exe.display().to_string(),
                "--b".into(),
                b.display().to_string(),
            ];
            let opts = run_options(words, sweep, exe);
            let pair = run::run_ab(&exp, &opts, &b)?;
            let (ra, rb) = (&pair.a.results, &pair.b.results);
            let ok = |r: &RunResults| r.points.iter().filter(|p| p.status == Status::Ok).count();
            println!(
                "{}: A {} of {} points ok in {:.1} s, B {} of {} in {:.1} s, interleaved",
                exp.name(),
                ok(ra),
                ra.points.len(),
                ra.duration_s,
                ok(rb),
                rb.points.len(),
                rb.duration_s
            );
            let (an, bn) = (
                pair.a.dir.display().to_string(),
                pair.b.dir.display().to_string(),
            );
            if compare::check(ra, rb, &an, &bn).is_ok() {
                print!("{}", compare::text(ra, rb, &an, &bn));
            }
            println!("compare: {}", pair.compare_html.display());
            for (side, f) in [("A", &pair.a), ("B", &pair.b)] {
                let problems = f.problems();
                if !problems.is_empty() {
                    eprintln!(
                        "servelab: side {side}: {} of {} points produced no figures:",
                        problems.len(),
                        f.results.points.len()
                    );
                    for p in &problems {
                        eprintln!("  {p}");
                    }
                }
            }
            pair.check()?;
            Ok(())
        }
        LabCommand::Report { dir } => {
            rundir::check_results(&dir)?;
            report::rebuild(&dir)?;
            // Refresh the listing of the directory of runs too, if the lab owns
            // it; only the listing is lost if it cannot be written.
            let _ = index::write(&rundir::parent_of(&dir));
            println!("report: {}", dir.join("report.html").display());
            Ok(())
        }
        LabCommand::Compare { a, b, html } => {
            rundir::check_results(&a)?;
            rundir::check_results(&b)?;
            let ra = RunResults::read(&a)?;
            let rb = RunResults::read(&b)?;
            let (an, bn) = (a.display().to_string(), b.display().to_string());
            compare::check(&ra, &rb, &an, &bn)?;
            print!("{}", compare::text(&ra, &rb, &an, &bn));
            if let Some(path) = html {
                compare::write_html(&path, &compare::html(&ra, &rb, &an, &bn)?)?;
                println!("html: {}", path.display());
            }
            Ok(())
        }
    }
}

/// The flags `lab run` and `lab ab` share.
#[derive(Debug, clap::Args)]
struct Sweep {
    /// Shrink every sweep and shorten every window (a check that the
    /// experiment runs; its report says it is quick).
    #[arg(long)]
    quick: bool,
    /// A fixed number of repeats per point (and side), instead of at least 3
    /// and more until the headline metric's 95% interval is within the target.
    #[arg(long, value_name = "N")]
    repeats: Option<u32>,
    /// Target half-width of the headline metric's 95% interval, in percent
    /// of its mean [default: the experiment's, usually 2].
    #[arg(long, value_name = "PCT")]
    precision: Option<f64>,
    /// The run's directory (for `lab ab`, the pair's), which must not exist
    /// [default: results/<name>-<timestamp>, or <name>-ab-<timestamp>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Replace --out if it holds a previous lab run (never anything else).
    #[arg(long, requires = "out")]
    force: bool,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
}

impl Sweep {
    /// Refuses `--repeats 0` and a `--precision` outside (0, 100).
    fn check(&self) -> anyhow::Result<()> {
        if self.repeats == Some(0) {
            anyhow::bail!("--repeats must be at least 1");
        }
        if self.precision.is_some_and(|p| !(p > 0.0 && p < 100.0)) {
            anyhow::bail!("--precision is a percentage above 0 and below 100");
        }
        Ok(())
    }
}

/// The run's options, with the command line that reruns it: `servelab lab`,
/// then `words` (the subcommand and its own arguments), then the shared flags.
fn run_options(words: Vec<String>, sw: Sweep, exe: PathBuf) -> RunOptions {
    let mut command = vec!["servelab".to_string(), "lab".into()];
    command.extend(words);
    if sw.quick {
        command.push("--quick".into());
    }
    if let Some(r) = sw.repeats {
        command.extend(["--repeats".into(), r.to_string()]);
    }
    if let Some(p) = sw.precision {
        command.extend(["--precision".into(), p.to_string()]);
    }
    RunOptions {
        quick: sw.quick,
        repeats: sw.repeats,
        precision: sw.precision.map(|p| p / 100.0),
        out: sw.out,
        force: sw.force,
        exe,
        version: env!("CARGO_PKG_VERSION").into(),
        command: command.join(" "),
        progress: !sw.no_progress,
    }
}
