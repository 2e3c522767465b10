//! `servelab sim`'s errors as a user meets them: one line, the cause said once, a
//! non-zero exit, never a panic. (A file of its own so that it merges beside
//! `cli.rs`, which other work changes.)

use std::process::Command;

fn sim(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .arg("sim")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts that `err` is one `servelab: error:` line saying its last cause once.
fn said_once(args: &[&str], err: &str) {
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("servelab: error:"))
        .unwrap_or_else(|| panic!("{args:?}: no error line in {err}"));
    assert_eq!(
        err.lines().filter(|l| l.contains("error")).count(),
        1,
        "{args:?}: {err}"
    );
    let cause = line.rsplit(": ").next().unwrap().trim();
    assert_eq!(line.matches(cause).count(), 1, "{args:?}: {line}");
    assert!(line.matches("(os error").count() <= 1, "{args:?}: {line}");
}

/// Regression (issue 18): `--trace /dev/full` printed "cannot write trace /dev/full:
/// cannot write trace: No space left on device (os error 28): No space left on
/// device (os error 28)".
#[test]
fn a_trace_write_error_says_its_cause_once() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full on this system");
        return;
    }
    let args = [
        "--users",
        "5",
        "--reps",
        "1",
        "--requests",
        "2000",
        "--trace",
        "/dev/full",
    ];
    let (code, err) = sim(&args);
    assert_ne!(code, Some(0), "{err}");
    said_once(&args, &err);
    assert!(err.contains("cannot write trace /dev/full"), "{err}");
}

#[test]
fn bad_output_paths_and_flags_say_their_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir
        .path()
        .join("no/such/dir/out.json")
        .display()
        .to_string();
    let missing_trace = dir.path().join("no/such/dir/t.tsv").display().to_string();
    for args in [
        vec!["--json", missing.as_str()],
        vec!["--trace", missing_trace.as_str()],
        vec!["--users", "0"],
        vec!["--reps", "0"],
    ] {
        let (code, err) = sim(&args);
        assert_ne!(code, Some(0), "{args:?}: {err}");
        said_once(&args, &err);
    }
}

/// Regression (issue 17 §5): README's seed-002 example `--policy rr --context-switch
/// 0.1` with 1 thread per core printed output bit-identical to FCFS, silently. A
/// setting that cannot change the run now gets one warning line; the run goes on.
#[test]
fn a_setting_without_effect_gets_one_warning_line() {
    let small = ["--users", "5", "--reps", "2", "--requests", "200"];
    for (extra, says) in [
        (
            &["--policy", "rr", "--context-switch", "0.1"][..],
            "--policy rr",
        ),
        (&["--quantum", "1s"][..], "--quantum"),
        (&["--on-abandon", "cancel"][..], "--on-abandon cancel"),
    ] {
        let args: Vec<&str> = small.iter().chain(extra).copied().collect();
        let (code, err) = sim(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].starts_with("servelab: warning: ") && warnings[0].contains(says),
            "{args:?}: {err}"
        );
    }
    let fixed = [
        "--threads-per-core",
        "4",
        "--policy",
        "rr",
        "--context-switch",
        "0.1",
    ];
    let args: Vec<&str> = small.iter().chain(&fixed).copied().collect();
    let (code, err) = sim(&args);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

#[test]
fn simulation_flags_with_analytic_get_one_warning_line() {
    let (code, err) = sim(&["--analytic", "--users", "10", "--reps", "5", "--seed", "3"]);
    assert_eq!(code, Some(0), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].contains("--reps, --seed have no effect with --analytic"),
        "{err}"
    );
    let (_, err) = sim(&["--analytic", "--users", "10"]);
    assert!(!err.contains("warning"), "{err}");
}

/// The held-worker flags (issue 27): a bad value is one line naming it, negative
/// numbers included (not clap's advice to pass them after `--`).
#[test]
fn bad_held_worker_settings_say_their_cause_once() {
    for (args, says) in [
        (
            &["--hold-workers", "--keepalive-timeout", "-1s"][..],
            "keepalive",
        ),
        (
            &["--hold-workers", "--keepalive-timeout", "soon"][..],
            "keepalive",
        ),
        (
            &["--hold-workers", "--max-requests-per-conn", "0"][..],
            "request limit",
        ),
        (
            &["--hold-workers", "--max-requests-per-conn", "-3"][..],
            "request limit",
        ),
        (&["--hold-workers", "--backlog", "-5"][..], "backlog"),
    ] {
        let (code, err) = sim(args);
        assert_ne!(code, Some(0), "{args:?}: {err}");
        said_once(args, &err);
        assert!(!err.contains("-- -"), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// A held-worker setting without `--hold-workers` changes nothing: one warning line
/// naming it, and the run goes on.
#[test]
fn held_worker_settings_without_held_workers_get_one_warning_line() {
    let small = ["--users", "5", "--reps", "2", "--requests", "200"];
    for flag in [
        "--keepalive-timeout",
        "--max-requests-per-conn",
        "--backlog",
    ] {
        let value = if flag == "--keepalive-timeout" {
            "2s"
        } else {
            "10"
        };
        let args: Vec<&str> = small.iter().copied().chain([flag, value]).collect();
        let (code, err) = sim(&args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
        let warnings: Vec<&str> = err.lines().filter(|l| l.contains("warning")).collect();
        assert_eq!(warnings.len(), 1, "{args:?}: {err}");
        assert!(
            warnings[0].contains(flag) && warnings[0].contains("without --hold-workers"),
            "{args:?}: {err}"
        );
    }
}
