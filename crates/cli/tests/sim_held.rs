//! `servelab sim --hold-workers` as a user runs it (issue 27): the header says what
//! is modelled, the exact column never prints a number from the wrong model, and the
//! default model's output does not mention held workers at all.

use std::process::Command;

/// Runs `servelab sim ARGS --json FILE` and returns (stdout, stderr, JSON text).
fn sim(args: &[&str]) -> (String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .arg("sim")
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{args:?}: {stderr}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        std::fs::read_to_string(&json).unwrap(),
    )
}

const SMALL: [&str; 6] = ["--reps", "3", "--horizon", "100s", "--warmup", "10s"];

/// Six workers, eight users thinking 100 ms, kept alive 5 s: two users never get a
/// worker. The table says there is no exact solution and why, prints no exact value,
/// and warns that Little's law fails; the JSON model carries the settings.
#[test]
fn starved_users_are_flagged_and_no_exact_value_is_printed() {
    let mut args = vec![
        "--users",
        "8",
        "--cores",
        "2",
        "--threads-per-core",
        "3",
        "--service",
        "exp:10ms",
        "--think",
        "const:100ms",
        "--hold-workers",
    ];
    args.extend(SMALL);
    let (out, _, json) = sim(&args);
    assert!(
        out.contains("W=c*k=6 workers held by connections, backlog 511"),
        "{out}"
    );
    assert!(
        out.contains("exact: none (workers are held by kept-alive connections"),
        "{out}"
    );
    assert!(
        !out.contains("X exact"),
        "an exact column with no model: {out}"
    );
    assert!(out.contains("warning: Little's law"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let p = &v["points"][0];
    assert!(p["exact"].is_null(), "{p}");
    let c = &p["model"]["connections"];
    assert_eq!(c["kind"], "held", "{c}");
    assert_eq!(c["keepalive_timeout"], 5.0, "{c}");
    assert!(c["max_requests"].is_null(), "{c}");
    assert_eq!(c["backlog"], 511, "{c}");
    // Two users wait at the backlog the whole run.
    assert!((p["sim"]["mean_buffer"]["mean"].as_f64().unwrap() - 2.0).abs() < 1e-9);
}

/// One request per connection is per-request queueing with the backlog as the
/// buffer: the exact column comes back, with K = W + backlog.
#[test]
fn one_request_per_connection_has_the_per_request_exact_solution() {
    let mut args = vec![
        "--users",
        "50",
        "--hold-workers",
        "--max-requests-per-conn",
        "1",
        "--backlog",
        "20",
    ];
    args.extend(SMALL);
    let (out, _, json) = sim(&args);
    assert!(out.contains("exact: machine-repairman"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["points"][0]["exact"]["capacity"], 24, "{json}");
}

/// The default model's output has no trace of held workers (its JSON is what it
/// was before they existed).
#[test]
fn the_default_model_says_nothing_of_held_workers() {
    let mut args = vec!["--users", "20"];
    args.extend(SMALL);
    let (out, err, json) = sim(&args);
    assert!(!out.contains("held"), "{out}");
    assert!(!err.contains("warning"), "{err}");
    assert!(!json.contains("connections"), "{json}");
}
