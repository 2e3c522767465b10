//! The `servelab` binary and one `--quick` run of every built-in experiment,
//! made once per test process and shared, so that checking the runs and opening
//! their reports does not run every experiment twice.
//!
//! Cargo gives a crate's tests only that crate's own binaries
//! (`CARGO_BIN_EXE_*`), and `servelab` belongs to the cli crate. So the tests
//! build it with the cargo, profile and target directory they were built with
//! (`cargo build -p servelab`: quick when it is up to date, as it is after
//! `cargo test --workspace`), the way trybuild and escargot build binaries from
//! a test. `SERVELAB_BIN` names another binary to use instead.
//!
//! The runs go into `CARGO_TARGET_TMPDIR/quick-runs/NAME`, replaced on every
//! test process, and stay there afterwards for a reader to open.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use servelab_lab::builtin::BUILTIN;
use servelab_lab::results::RunResults;

/// Serialises the tests that start servers: they pin servers to the same CPU.
static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the servers' CPU for the caller.
pub fn lock() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `servelab` binary, built on first use.
pub fn servelab() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        if let Some(exe) = std::env::var_os("SERVELAB_BIN") {
            return PathBuf::from(exe);
        }
        // This test runs as <target>/<profile>/deps/lab-<hash>.
        let me = std::env::current_exe().expect("the test's own path");
        let profile_dir = me
            .parent()
            .and_then(Path::parent)
            .expect("<target>/<profile>/deps");
        let target = profile_dir.parent().expect("<target>");
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
        let started = Instant::now();
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "servelab", "--bin", "servelab"])
            .args(["--profile", profile])
            .arg("--target-dir")
            .arg(target)
            .arg("--manifest-path")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"))
            .status()
            .expect("run cargo build -p servelab");
        assert!(status.success(), "cargo build -p servelab failed");
        eprintln!(
            "servelab built for the lab tests in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        profile_dir.join("servelab")
    })
}

/// One quick run of a built-in experiment.
pub struct Run {
    /// The experiment's name.
    pub name: &'static str,
    /// Its results directory (report.html, results.json, figure-N.svg).
    pub dir: PathBuf,
    /// Its results.
    pub results: RunResults,
}

/// Every built-in experiment run once with `--quick`, in `BUILTIN` order.
pub fn runs() -> &'static [Run] {
    static RUNS: OnceLock<Vec<Run>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("quick-runs");
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).expect("create the runs directory");
        let exe = servelab();
        let _g = lock();
        let t0 = Instant::now();
        let runs = BUILTIN
            .iter()
            .map(|(name, _)| {
                let dir = base.join(name);
                let started = Instant::now();
                let o = Command::new(exe)
                    .args(["lab", "run", name, "--quick", "--no-progress", "--out"])
                    .arg(&dir)
                    .output()
                    .expect("run servelab");
                assert!(
                    o.status.success(),
                    "lab run {name} --quick failed: {}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr)
                );
                eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
                Run {
                    name,
                    results: RunResults::read(&dir).expect("results.json"),
                    dir,
                }
            })
            .collect();
        eprintln!(
            "every quick experiment: {:.1} s, in {}",
            t0.elapsed().as_secs_f64(),
            base.display()
        );
        runs
    })
}
