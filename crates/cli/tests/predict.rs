//! `servelab predict` end to end against `servelab serve` with CPU-bound work,
//! and its one-line errors.
//!
//! The assertions are statistical and generous, never timed: the machine is
//! shared, so the fit is asked to find the server's demand (5 ms of CPU per
//! request, plus the HTTP work of a debug build) within a wide band, and the
//! files to exist and parse.

use std::process::{Child, Command};

mod support;

/// A server on port 0 that burns exponential CPU of mean 5 ms per request;
/// killed when dropped, its site removed after it.
struct Server {
    child: Child,
    url: String,
    /// The site it serves (it reads its files at each request).
    _root: tempfile::TempDir,
}

impl Server {
    /// The event engine: idle connections hold no worker. A keep-alive
    /// timeout of 1 s keeps the probes' wait for it short.
    fn start() -> Server {
        Server::with(&[
            "--engine",
            "event",
            "--workers",
            "2",
            "--keepalive-timeout",
            "1s",
        ])
    }

    /// A server of `engine_args` (engine, workers, keep-alive) burning
    /// exponential CPU of mean 5 ms per request.
    fn with(engine_args: &[&str]) -> Server {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("index.html"), "hello\n").unwrap();
        let mut args = engine_args.to_vec();
        args.extend(["--work", "exp:5ms", "--log", "off"]);
        args.push(root.path().to_str().unwrap());
        let (child, addr) = support::serve(&args);
        Server {
            child,
            url: format!("http://{addr}/"),
            _root: root,
        }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn predict(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_servelab"))
        .arg("predict")
        .args(args)
        .arg("--no-progress")
        .output()
        .unwrap()
}

/// The rows of `results.json`'s error table with verdict `verdict`.
fn targets(json: &serde_json::Value, verdict: &str) -> Vec<String> {
    json["validation"]["table"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|r| r["verdict"] == verdict)
                .map(|r| r["target"].as_str().unwrap_or("?").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The exit status follows the error table: 4 with a missed target, else 5
/// with one that could not be decided, else 0; one stderr line per such
/// target; and the output's first line is the validation's headline.
fn assert_status_follows_the_table(o: &std::process::Output, json: &serde_json::Value) {
    let missed = targets(json, "missed");
    let open = targets(json, "inconclusive");
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    let code = o.status.code();
    let expect = if !missed.is_empty() {
        4
    } else if !open.is_empty() {
        5
    } else {
        0
    };
    assert_eq!(
        code,
        Some(expect),
        "missed {missed:?}, inconclusive {open:?}: {err}"
    );
    let lines = |prefix: &str| err.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(
        lines("servelab: predict: target missed: "),
        missed.len(),
        "{err}"
    );
    assert_eq!(
        lines("servelab: predict: target inconclusive: "),
        open.len(),
        "{err}"
    );
    // (A caller that streamed stderr and dropped stdout passes none.)
    if !o.stdout.is_empty() {
        let first = out.lines().next().unwrap_or("");
        assert!(first.starts_with("validation: "), "{out}");
        assert_eq!(first.contains("MISSED"), !missed.is_empty(), "{first}");
    }
}

fn one_error_line(out: &std::process::Output) -> String {
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("servelab: error: "), "{err}");
    err
}

#[test]
fn the_fit_recovers_the_cpu_demand_and_writes_a_report_that_parses() {
    let srv = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let pid = srv.pid();
    let o = predict(&[
        &srv.url,
        "--pid",
        &pid,
        "--budget",
        "6s",
        "--validate-budget",
        "3s",
        "--users",
        "2,8",
        "--rates",
        "20,60",
        "--slo",
        "p99<1s",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("model: servelab sim --users 2,8 "),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    // A validation of 3 s may miss a target or not; the status says which.
    assert_status_follows_the_table(&o, &json);
    assert_eq!(json["schema"], "servelab-predict/3");
    // The idle step: one user thinking ten response times (no --think was
    // asked), when the budget left room for it, and never in the fit.
    let idle = &json["idle"];
    assert!(json.get("idle").is_some(), "no `idle` in results.json");
    if !idle.is_null() {
        assert_eq!(idle["step"]["load"]["users"], 1, "{idle}");
        assert_ne!(idle["step"]["load"]["think"], "const:0s", "{idle}");
        let summary = idle["summary"].as_str().unwrap_or("");
        assert!(
            summary.starts_with("idle gap: one user thinking "),
            "{summary}"
        );
        assert!(stdout.contains(summary), "{stdout}");
        let thinking = json["staircase"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["load"]["think"] != "const:0s")
            .count();
        assert_eq!(thinking, 0, "a thinking step in the fit's staircase");
    }
    let fit = &json["fit"];
    // U/X, or c/X_max when the busy machine did not give the server the
    // whole cores that U/X implies; the note says which and why.
    assert!(
        fit["demand_from"] == "cpu" || fit["demand_from"] == "plateau",
        "{}",
        fit["demand_from"]
    );
    let notes: Vec<&str> = fit["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes.iter().any(|n| n.starts_with("demand: U/X = ")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("threads per core k") || n.contains("cannot tell k")),
        "{notes:?}"
    );
    // 5 ms of work a request, and the HTTP work around it; 2 workers may not
    // both get a CPU from a machine that also runs the load generator.
    let d_ms = fit["cpu_demand_s"]["value"].as_f64().unwrap() * 1e3;
    assert!((3.5..9.0).contains(&d_ms), "CPU per request {d_ms} ms");
    let cores = fit["cores"].as_u64().unwrap();
    assert!((1..=2).contains(&cores), "c = {cores}");
    let forecasts = json["forecasts"].as_array().unwrap();
    assert_eq!(forecasts.len(), 4);
    // The open rates are predicted after the users, and measured in the validation.
    assert_eq!(forecasts[3]["load"]["rate"], 60.0);
    assert!(forecasts[0]["load"].get("rate").is_none());
    assert!(stdout.contains("60/s"), "{stdout}");
    let points = json["validation"]["points"].as_array().unwrap();
    assert!(!points.is_empty());
    assert!(
        points.iter().any(|p| p["load"]["rate"] == 20.0),
        "no open point in {points:?}"
    );
    assert_eq!(json["validation"]["table"].as_array().unwrap().len(), 5);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("measured against predicted"));

    // The directory is never written over.
    let again = predict(&[
        &srv.url,
        "--budget",
        "1s",
        "--no-validate",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = one_error_line(&again);
    assert!(err.contains("never overwrites"), "{err}");
}

/// A server that loses three quarters of its CPU once the fit is done: the
/// test stops it for 30 ms and lets it run for 10 (SIGSTOP/SIGCONT) from the
/// moment `predict` prints its fit line until `predict` exits. The validation
/// then measures about a quarter of the throughput the fit predicts past the
/// knee, whatever the model: the throughput target is missed, so the exit is 4
/// with a line saying so, and the report is still written. Its progress goes
/// to a pipe: one line a step.
///
/// Why a quarter, not half (10 ms each way, until 2026-12-04): the server is
/// not pinned, so its two workers may use both CPUs, and a fit made from the
/// low steps may settle on one core (`c = 1`); half of two cores' throughput
/// is then the one-core model's own, and the target was judged inconclusive
/// (errors of 11-42% within the intervals of 0.2 s windows) on a quiet
/// machine. A quarter is below either model by more than the windows' spread.
#[test]
fn a_missed_target_is_exit_4_and_a_line_and_no_validate_is_exit_0() {
    use std::io::{BufRead, BufReader};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let srv = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let pid = srv.pid();
    let mut child = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .arg("predict")
        .args([
            &srv.url,
            "--pid",
            &pid,
            "--budget",
            "6s",
            "--validate-budget",
            "4s",
            "--users",
            "2",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let throttle = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let server = rustix::process::Pid::from_raw(srv.child.id() as i32).unwrap();
    let stopper = {
        let (throttle, done) = (Arc::clone(&throttle), Arc::clone(&done));
        std::thread::spawn(move || {
            use rustix::process::{Signal, kill_process};
            while !done.load(Ordering::Relaxed) {
                if throttle.load(Ordering::Relaxed) {
                    let _ = kill_process(server, Signal::STOP);
                    std::thread::sleep(std::time::Duration::from_millis(30));
                    let _ = kill_process(server, Signal::CONT);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            let _ = kill_process(server, Signal::CONT);
        })
    };
    let mut err = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.contains("] fit: c = ") {
            throttle.store(true, Ordering::Relaxed);
        }
        err.push_str(&line);
        err.push('\n');
    }
    let status = child.wait().unwrap();
    done.store(true, Ordering::Relaxed);
    stopper.join().unwrap();
    let o = std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: err.clone().into_bytes(),
    };
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json written"),
    )
    .unwrap();
    let missed = targets(&json, "missed");
    assert!(
        missed.iter().any(|t| t == "throughput"),
        "{missed:?}: {err}"
    );
    assert_status_follows_the_table(&o, &json);
    assert!(
        err.contains("target missed: throughput largest |error| "),
        "{err}"
    );
    // One line per step: the probes, the calibration's steps, the fit, the
    // validation's.
    let step_lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("servelab: predict: ["))
        .collect();
    for what in [
        "] probes: ",
        "] calibration: 1 user: ",
        "] fit: ",
        "] validation: ",
    ] {
        assert!(
            step_lines.iter().any(|l| l.contains(what)),
            "no `{what}` line in {err}"
        );
    }
    // No bar: nothing redraws with a carriage return.
    assert!(!err.contains('\r'), "{err:?}");

    let no_validate = predict(&[
        &srv.url,
        "--budget",
        "3s",
        "--no-validate",
        "--users",
        "2",
        "--out",
        dir.path().join("again").to_str().unwrap(),
    ]);
    assert_eq!(
        no_validate.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&no_validate.stderr)
    );
    // --no-progress: no step lines.
    assert!(
        no_validate.stderr.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&no_validate.stderr)
    );
}

/// `results.json`'s architecture after a short calibration without validation.
fn architecture_of(srv: &Server) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = predict(&[
        &srv.url,
        "--budget",
        "6s",
        "--no-validate",
        "--users",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    (json, stdout)
}

/// servelab's pool: a kept-alive connection holds one of its 4 workers until
/// it has been idle for the keep-alive timeout. The probes must find W = 4
/// and the timeout (2 s; the bound is generous for a busy machine and the
/// probe's own 3 s wait at this budget), and the model must hold them: W =
/// c·k threads held by connections, closed after the keep-alive timeout.
#[test]
fn the_pool_engine_s_four_held_workers_and_its_keepalive_timeout_are_found() {
    let srv = Server::with(&[
        "--engine",
        "pool",
        "--workers",
        "4",
        "--keepalive-timeout",
        "2s",
    ]);
    let (json, stdout) = architecture_of(&srv);
    let a = &json["architecture"];
    assert_eq!(a["workers"]["kind"], "held", "{a:#}");
    assert_eq!(a["workers"]["workers"], 4, "{a:#}");
    assert_eq!(a["keepalive"]["kind"], "closes", "{a:#}");
    let after = a["keepalive"]["after_s"].as_f64().unwrap();
    assert!((1.5..3.0).contains(&after), "keep-alive {after} s: {a:#}");
    assert!(!a["how"].as_array().unwrap().is_empty());
    assert!(
        stdout.contains("architecture (") && stdout.contains("W = 4"),
        "{stdout}"
    );
    let fit = &json["fit"];
    assert_eq!(fit["connections"]["kind"], "held", "{fit:#}");
    let threads = fit["cores"].as_u64().unwrap() * fit["threads_per_core"].as_u64().unwrap();
    assert_eq!(threads, 4, "{fit:#}");
    let ka = fit["connections"]["keepalive_timeout"].as_f64().unwrap();
    assert!((ka - after).abs() < 1e-9, "{ka} against {after}");
    let sim = json["sim_command"].as_str().unwrap();
    assert!(
        sim.contains(" --hold-workers --keepalive-timeout "),
        "{sim}"
    );
    // The model holds the workers: nothing warns that it ignores them. But
    // users with no think time come back long before the 2 s timeout, so
    // past W the others may never be served, and the warning says so.
    let warnings: Vec<&str> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        !warnings.iter().any(|w| w.contains("ignores that limit")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("past N = 4 users") && w.contains("may never be served")),
        "{warnings:?}"
    );
}

/// servelab's reactor serves any number of connections with a loop per core:
/// idle connections hold nothing, and the probes must say so.
#[test]
fn the_reactor_engine_s_connections_hold_no_worker() {
    let srv = Server::with(&[
        "--engine",
        "reactor",
        "--workers",
        "2",
        "--keepalive-timeout",
        "2s",
    ]);
    let (json, stdout) = architecture_of(&srv);
    let a = &json["architecture"];
    assert_eq!(a["workers"]["kind"], "not_held", "{a:#}");
    // Far more idle connections than its 2 threads, each answered.
    let held = a["workers"]["held"].as_u64().unwrap();
    assert!(held >= 16, "{a:#}");
    assert_eq!(a["keepalive"]["kind"], "closes", "{a:#}");
    assert_eq!(json["fit"]["connections"]["kind"], "free");
    assert!(
        !json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("held workers")),
        "{}",
        json["warnings"]
    );
    assert!(stdout.contains("do not hold workers"), "{stdout}");
}

#[test]
fn an_unreachable_server_is_one_line() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = one_error_line(&predict(&[&format!("http://127.0.0.1:{port}/")]));
    assert!(err.contains("cannot reach"), "{err}");
}

#[test]
fn a_server_that_answers_with_errors_is_one_line() {
    let srv = Server::start();
    let err = one_error_line(&predict(&[&format!("{}missing", srv.url)]));
    assert!(
        err.contains("answers with errors") && err.contains("404"),
        "{err}"
    );
}

#[test]
fn a_pid_that_is_not_the_server_is_one_line() {
    let srv = Server::start();
    // A process of ours that is not the server (this test's own pid is the
    // server's parent, so its tree does hold the socket).
    let mut other = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = other.id().to_string();
    let o = predict(&[&srv.url, "--pid", &pid, "--budget", "1s", "--no-validate"]);
    let _ = other.kill();
    let _ = other.wait();
    let err = one_error_line(&o);
    assert!(err.contains("is not the server"), "{err}");
}

#[test]
fn a_budget_past_an_hour_is_refused_before_any_load() {
    let err = one_error_line(&predict(&["http://127.0.0.1:1/", "--budget", "2h"]));
    assert!(err.contains("budget"), "{err}");
}
