//! The lab's error type: what went wrong, and whether the run can go on.
//!
//! Errors about one point of a sweep (a server that would not start, a load run that
//! failed) are not errors of this type: they are recorded in the results as a failed
//! point and the run goes on. What remains here stops the command.

use std::path::PathBuf;

/// Everything that stops a `servelab lab` command.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// An experiment file is not valid; the message names the file, line and column.
    /// Nothing has been run; fix the file and run again.
    #[error("{file}:{line}:{column}: {message}")]
    Experiment {
        /// The file (or `builtin:NAME` for a built-in experiment).
        file: String,
        /// 1-based line of the offending value.
        line: usize,
        /// 1-based column of the offending value.
        column: usize,
        /// What is wrong and what would be right.
        message: String,
    },
    /// No built-in experiment and no file has this name; the command stops.
    /// `suggestion` is the built-in name closest to it, when one is close.
    #[error(
        "no experiment named `{name}`{} (`servelab lab list` shows them; or give a path to a .toml file)",
        suggestion.as_ref().map(|s| format!(": did you mean `{s}`?")).unwrap_or_default()
    )]
    UnknownExperiment {
        /// What was asked for.
        name: String,
        /// The closest built-in name, if any is within a few edits.
        suggestion: Option<&'static str>,
    },
    /// A file or directory could not be read or written; the command stops.
    /// The operating system's error is the source, said once by `{:#}`.
    #[error("{path}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A results directory does not hold what `lab report` or `lab compare` need.
    #[error("{path}: {message}")]
    Results {
        /// The file that was read.
        path: PathBuf,
        /// What is missing or malformed.
        message: String,
    },
    /// `lab report` or `lab compare` was given a directory that holds no
    /// `results.json` (or nothing at all); nothing was read or written.
    #[error(
        "{0} is not a servelab lab run (no results.json): give a run's directory, such as results/NAME-TIME, or make one with `servelab lab run NAME`"
    )]
    NoResults(PathBuf),
    /// `--out` names something that exists; nothing was run or written.
    #[error(
        "{0} already exists; a run goes into a new directory (choose another --out, or add --force to replace a previous lab run)"
    )]
    OutExists(PathBuf),
    /// `--out --force` names something that is not a lab run; it is left alone.
    // The marker's name is `rundir::RUN_MARKER`, written out so that this
    // module imports nothing of the modules that return its errors (a test in
    // `rundir` checks that the two agree).
    #[error(
        "{0} exists and does not hold a lab run (it has no .servelab-lab-run file); it is not replaced even with --force"
    )]
    NotARun(PathBuf),
    /// Every point failed or was unavailable; the results (with each point's
    /// reason) were written.
    #[error("no point produced figures; the reasons are above and in {0}")]
    NoFigures(PathBuf),
    /// The run was interrupted (Ctrl-C or SIGTERM); partial results were written and
    /// every server was stopped.
    #[error("interrupted; partial results are in {0}")]
    Interrupted(PathBuf),
    /// Something the lab needs from the system failed (a plot, a signal handler).
    #[error("{0}")]
    Other(String),
}

impl LabError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> LabError {
        LabError::Io {
            path: path.into(),
            source,
        }
    }
}

/// The lab's result type.
pub type Result<T, E = LabError> = std::result::Result<T, E>;
