//! `servelab lab` end to end, through the binary: every built-in experiment with
//! `--quick`, the model against its exact solution, exit statuses and messages,
//! Ctrl-C, `lab report` and `lab compare`, and a headless browser opening the
//! reports and the bundled site.
//!
//! These are the lab's tests that need the `servelab` binary, because the lab
//! starts its servers as `servelab serve` children: Cargo gives its path
//! (`CARGO_BIN_EXE_servelab`) only to this crate's tests, and builds it for
//! them, so a test here can never run a stale binary. The lab's other tests
//! (experiment files, plans, output directories, reports rebuilt from results)
//! need no server and live in `crates/lab/tests/lab/`.
//!
//! The tests that start servers take a lock so that they run one at a time: they
//! pin servers to the same CPU, and the model check must not share it with another
//! experiment's load.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use servelab_lab::builtin::BUILTIN;
use servelab_lab::metric::Metric;
use servelab_lab::results::{RunResults, Status};
use servelab_lab::server::{ServerProcess, StartError, free_port};
use servelab_server::{StartFailure, StartFailureKind};

static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn servelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args(args)
        .output()
        .expect("run servelab")
}

fn run_quick(name: &str, out: &Path) -> RunResults {
    let o = servelab(&[
        "lab",
        "run",
        name,
        "--quick",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "lab run {name} --quick failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    RunResults::read(out).unwrap()
}

/// Every point produced figures (or names the engine, flag or peer this machine
/// lacks), and the report shows every plot.
fn check_run(name: &str, dir: &Path, r: &RunResults) {
    let exp = servelab_lab::builtin::load(name).unwrap();
    let planned = exp
        .plan(
            &servelab_lab::experiment::PlanOptions::sweep(true),
            Path::new("/tmp/servelab-lab"),
        )
        .unwrap()
        .points
        .len();
    assert_eq!(r.points.len(), planned, "{name}: every point is recorded");
    for p in &r.points {
        match p.status {
            Status::Ok => {
                // A peer's throughput under client timeouts counts what it
                // finished for nobody, which only its own counters see: then the
                // point says why, and has the goodput the client saw.
                let figure = if p.unmeasurable.contains_key(&Metric::Throughput) {
                    Metric::Goodput
                } else {
                    Metric::Throughput
                };
                assert!(
                    p.summary.get(&figure).is_some_and(|s| s.mean > 0.0),
                    "{name}: point {} has no {figure:?}",
                    p.label()
                );
                if p.server.is_some() {
                    assert_eq!(
                        p.repeats.len() as u32,
                        r.repeats,
                        "{name}: {} repeats",
                        p.label()
                    );
                }
            }
            Status::Unavailable => {
                let why = p.reason.as_deref().unwrap_or("");
                assert!(
                    why.contains("not installed")
                        || why.contains("not in this build")
                        || why.contains("unavailable here"),
                    "{name}: {} unavailable without a reason: {why}",
                    p.label()
                );
                eprintln!("{name}: {} unavailable here: {why}", p.label());
            }
            other => panic!("{name}: point {} is {other:?}: {:?}", p.label(), p.reason),
        }
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    for i in 1..=exp.plots.len() {
        assert!(
            html.contains(&format!("id=\"plot-{i}\"")),
            "{name}: plot {i} missing from the report"
        );
    }
    // One inline SVG per plot, and one per timeline of a flagged point.
    assert_eq!(
        html.matches("<svg").count(),
        exp.plots.len() + html.matches("<figure class=\"timeline\"").count(),
        "{name}: one inline SVG per plot"
    );
    assert!(
        html.contains("Conclusion:") && html.contains(&r.command),
        "{name}: conclusion and rerun command"
    );
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "{name}: the report fetches nothing"
    );
    // An experiment that predicts with the kernel's slice records and shows it;
    // one with an error table shows it.
    assert_eq!(
        r.kernel.is_some(),
        exp.uses_kernel(),
        "{name}: the kernel is measured exactly when a template names it"
    );
    if let Some(k) = &r.kernel {
        assert!(k.setting.seconds > 0.0, "{name}: {k:?}");
        assert!(
            html.contains("The kernel&#39;s scheduler") || html.contains("The kernel's scheduler")
        );
    }
    if exp.accuracy.is_some() {
        assert!(
            html.contains("Measured against simulated") && html.contains("largest error"),
            "{name}: the error table"
        );
    }
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert!(
        csv.lines().count() > r.points.len(),
        "{name}: a CSV row per repeat"
    );
    if name == "h2" {
        h2_points_say_their_protocol(r);
    }
    report_in_browser(name, dir, exp.plots.len());
}

/// Issue 29's `h2`: the protocol and streams of `[load]` reach the load
/// generator (an HTTP/2 point whose server answered HTTP/1.1 would have
/// failed, which `check_run` refuses), each HTTP/2 point says how many
/// connections carry how many users, and HTTP/1.1 runs at one stream only.
fn h2_points_say_their_protocol(r: &RunResults) {
    let mut h2 = 0;
    for p in r.points.iter().filter(|p| p.status == Status::Ok) {
        let protocol = p.var("protocol").map(|v| v.to_string());
        let streams = p.var("streams").and_then(|v| v.as_f64()).unwrap() as u32;
        let note = format!("10 connections carry {} closed users", 10 * streams);
        match protocol.as_deref() {
            Some("h2") => {
                h2 += 1;
                assert!(
                    p.notes.iter().any(|n| n.contains(&note)),
                    "{}: {:?}",
                    p.label(),
                    p.notes
                );
            }
            Some("http/1.1") => assert_eq!(streams, 1, "{}: skipped", p.label()),
            other => panic!("{}: protocol {other:?}", p.label()),
        }
    }
    assert!(h2 > 0, "no HTTP/2 point was measured");
}

#[test]
fn every_builtin_experiment_runs_quick_and_reports() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("results");
    let t0 = Instant::now();
    for (name, _) in BUILTIN {
        let dir = runs.join(name);
        let started = Instant::now();
        let r = run_quick(name, &dir);
        eprintln!("{name}: {:.1} s", started.elapsed().as_secs_f64());
        check_run(name, &dir, &r);
    }
    eprintln!("all quick experiments: {:.1} s", t0.elapsed().as_secs_f64());

    // The directory of runs, which the lab made, gets an index linking every report.
    let index = std::fs::read_to_string(runs.join("index.html")).unwrap();
    for (name, _) in BUILTIN {
        assert!(
            index.contains(&format!("href=\"{name}/report.html\"")),
            "index lacks {name}"
        );
    }

    // lab report rebuilds the page from results.json alone.
    let dir = runs.join("session");
    std::fs::remove_file(dir.join("report.html")).unwrap();
    let o = servelab(&["lab", "report", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        std::fs::read_to_string(dir.join("report.html"))
            .unwrap()
            .contains("id=\"plot-1\"")
    );

    // lab compare puts two runs side by side.
    let html = tmp.path().join("cmp.html");
    let a = runs.join("filesize");
    let o = servelab(&[
        "lab",
        "compare",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--html",
        html.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("throughput") && text.contains("1.00"),
        "{text}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<table>"));
    // --html draws both runs on the same axes: a figure per plot, with A's and
    // B's series in one legend.
    let plots = servelab_lab::builtin::load("filesize").unwrap().plots.len();
    assert_eq!(page.matches("<svg").count(), plots, "a figure per plot");
    assert!(page.contains(", A (measured)") && page.contains(", B (measured)"));

    // Two runs with no point in common are refused: one line, status 2.
    let b = runs.join("session");
    let o = servelab(&["lab", "compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nothing to compare") && err.contains("different experiments"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(o.stdout.is_empty(), "no table of dashes");
}

#[test]
fn model_measured_throughput_is_within_the_exact_models_interval() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let r = run_quick("model", &tmp.path().join("model"));
    let mut checked = 0;
    for p in r.points.iter().filter(|p| p.status == Status::Ok) {
        let measured = p.summary[&Metric::Throughput].mean;
        let exact = p.exact[&Metric::Throughput];
        let bound = p.exact[&Metric::ThroughputMax];
        // A loose, honest interval: the exact M/M/4//N value +-30%. Each quick
        // repeat is a window of 4 s (about 270 and 700 requests: 6% and 4% Poisson
        // noise), every user's first request skips its think time (a few percent
        // more in so short a run), requests pay a TCP connection and a debug
        // build's overhead the model does not have, and the machine is shared.
        assert!(
            (measured - exact).abs() <= 0.30 * exact,
            "{}: measured {measured:.1}/s, exact {exact:.1}/s",
            p.label()
        );
        // And never meaningfully above the asymptotic bound min(N/(S+Z), c/S).
        assert!(
            measured <= bound * 1.15,
            "{}: {measured:.1}/s above the bound {bound:.1}/s",
            p.label()
        );
        checked += 1;
    }
    assert_eq!(checked, r.points.len(), "every model point was measured");
}

/// A user's mistake is one line on standard error and status 2, never a panic.
#[test]
fn a_bad_file_or_a_missing_one_is_one_line_and_status_2() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    let text = include_str!("../../../experiments/model.toml")
        .replace("engine = \"pool\"", "engine = \"warp\"");
    std::fs::write(&path, &text).unwrap();
    let line = text.lines().position(|l| l.contains("warp")).unwrap() + 1;
    let o = servelab(&["lab", "run", path.to_str().unwrap(), "--quick"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with(&format!(
            "servelab: error: {}:{line}:10: unknown engine `warp`",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // Regression: the OS error was printed twice, once from the message and
    // once from its source.
    let missing = tmp.path().join("missing.toml");
    let o = servelab(&["lab", "run", missing.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    assert_eq!(err.matches("(os error 2)").count(), 1, "{err}");
    assert!(err.contains("missing.toml"), "{err}");

    let o = servelab(&["lab", "run", "no-such-experiment"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("servelab lab list"));
    // A typo gets the nearest built-in name, in the same one line.
    let o = servelab(&["lab", "run", "modle"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("servelab: error: no experiment named `modle`: did you mean `model`?"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = servelab(&["lab", "report", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// Regression: a run whose every point failed (here: a path that does not
/// exist, so every request gets 404) printed "0 of 2 points produced figures"
/// and exited 0, the reasons only in results.json.
#[test]
fn a_run_where_no_point_produced_figures_prints_why_and_exits_2() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("lost.toml");
    std::fs::write(
        &path,
        r#"
name = "lost"
title = "A path that is not there"
question = "Does a run that measures nothing say so?"
[[server]]
label = "pool"
engine = "pool"
args = ["--workers", "1"]
[[server]]
label = "serial"
engine = "serial"
[load]
users = 1
path = "/no-such-file.bin"
[quick]
repeats = 1
"#,
    )
    .unwrap();
    let out = tmp.path().join("results").join("lost");
    let o = servelab(&[
        "lab",
        "run",
        path.to_str().unwrap(),
        "--quick",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("2 of 2 points produced no figures"), "{err}");
    for server in ["pool", "serial"] {
        assert!(
            err.lines().any(|l| l
                .trim_start()
                .starts_with(&format!("{server}: failed: repeat 1: no request succeeded"))),
            "{server}: {err}"
        );
    }
    assert!(
        err.contains("servelab: error: no point produced figures"),
        "{err}"
    );
    // The results are still written, for a look at what happened.
    let r = RunResults::read(&out).unwrap();
    assert!(r.points.iter().all(|p| p.status == Status::Failed));
}

/// A server started with `--tls-self-signed` is loaded over https: its
/// warm-up, repeats, drain and status reader all speak TLS (a plain request
/// on its port gets nothing back), and each point records its handshakes:
/// full ones without resumption, resumed ones with it.
#[test]
fn a_tls_point_is_measured_over_https_with_its_handshakes() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tls-one.toml");
    std::fs::write(
        &path,
        r#"
name = "tls-one"
title = "One engine over TLS"
question = "Does the lab measure a TLS server over https?"
[[axis]]
name = "session"
label = "session"
unit = "requests"
values = [1]
quick = [1]
[[axis]]
name = "resume"
label = "resumption"
unit = "on or off"
values = [false, true]
[[file]]
name = "1k.txt"
size = 1024
[[server]]
label = "epoll"
engine = "epoll"
args = ["--tls-self-signed", "--status"]
[load]
users = 2
session = "{session}"
tls_resume = "{resume}"
path = "/1k.txt"
[[plot]]
title = "Handshakes"
x = "session"
y = "tls_handshake_ms"
[conclusion]
kind = "best"
metric = "throughput"
[quick]
repeats = 1
"#,
    )
    .unwrap();
    let out = tmp.path().join("results").join("tls-one");
    let o = servelab(&[
        "lab",
        "run",
        path.to_str().unwrap(),
        "--quick",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = RunResults::read(&out).unwrap();
    assert_eq!(r.points.len(), 2);
    for p in &r.points {
        assert_eq!(p.status, Status::Ok, "{:?}", p.reason);
        let resumed = p
            .vars
            .iter()
            .any(|(k, v)| k == "resume" && v.to_string() == "true");
        let mean = |m: Metric| p.summary.get(&m).map(|s| s.mean);
        assert!(
            p.notes
                .iter()
                .any(|n| n.starts_with("https, certificate not verified")),
            "the trust is said: {:?}",
            p.notes
        );
        assert!(mean(Metric::Throughput).is_some_and(|x| x > 0.0));
        // Abandoned requests come from the server's own counters only: the
        // status reader got its answer over TLS.
        assert!(
            mean(Metric::Abandoned).is_some(),
            "status over TLS: {:?}",
            p.unmeasurable
        );
        assert!(mean(Metric::HandshakeMs).is_some_and(|x| x > 0.0));
        assert!(mean(Metric::ClientHandshakeUs).is_some_and(|x| x > 0.0));
        let full = mean(Metric::FullHandshakes).unwrap();
        let res = mean(Metric::ResumedHandshakes).unwrap();
        // A session of one request: a handshake per request.
        if resumed {
            assert!(res > full, "resumed {res}/s, full {full}/s");
        } else {
            assert!(full > 0.0 && res == 0.0, "resumed {res}/s, full {full}/s");
        }
        assert!(
            p.command
                .as_deref()
                .is_some_and(|c| c.contains("--tls-self-signed")),
            "{:?}",
            p.command
        );
    }
}

/// Whether any live process has `needle` in its command line.
fn process_with(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let p = e.path();
        let state = std::fs::read_to_string(p.join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'));
        !zombie
            && std::fs::read(p.join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
    })
}

#[test]
fn ctrl_c_stops_the_run_and_every_server_and_keeps_the_results() {
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ftp");
    // The full fork-thread-pool experiment runs for minutes; it is interrupted.
    let child = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args([
            "lab",
            "run",
            "fork-thread-pool",
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let needle = format!("servelab-lab-fork-thread-pool-{}-", child.id());
    let start = Instant::now();
    while !process_with(&needle) && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(process_with(&needle), "no server was started");
    std::thread::sleep(Duration::from_millis(500));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let start = Instant::now();
    while process_with(&needle) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !process_with(&needle),
        "a server outlived the interrupted run"
    );
    let r = RunResults::read(&out).unwrap();
    assert!(r.interrupted);
    assert!(r.points.iter().any(|p| p.status == Status::Skipped));
    assert!(out.join("report.html").is_file());
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join(b))
                .find(|p| p.is_file())
        })
}

/// Opens `url` headless, saves a screenshot, and returns the console lines.
fn browse(chrome: &Path, url: &str, shot: &Path, profile: &Path) -> Vec<String> {
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1100,1600",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={}", shot.display()),
            url,
        ])
        .output()
        .expect("run chromium");
    assert!(
        o.status.success(),
        "chromium failed on {url}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        std::fs::metadata(shot).is_ok_and(|m| m.len() > 1000),
        "no screenshot of {url}"
    );
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(String::from)
        .collect()
}

/// Opens a report file headless, with a fresh profile and no network, saves a
/// screenshot to `shot`, and returns the DOM as the browser parsed it and the
/// console lines.
fn render_report(chrome: &Path, page: &Path, shot: &Path) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,3000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        o.status.success(),
        "chromium failed on {}: {}",
        page.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        std::fs::metadata(shot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot of {}",
        page.display()
    );
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    (String::from_utf8_lossy(&o.stdout).into_owned(), console)
}

/// A quick report in headless Chromium (skipped, saying so, without one): it
/// renders, logs nothing to the console, and every figure either draws data marks
/// in a series colour or says in words why it has none; each figure's own SVG
/// file, linked from its caption, exists. It reuses the quick run just checked,
/// so that no experiment runs twice for the browser.
fn report_in_browser(name: &str, dir: &Path, plots: usize) {
    let Some(chrome) = chromium() else {
        eprintln!(
            "{name}: browser check skipped: chromium is not installed (.ci/install-chromium installs it)"
        );
        return;
    };
    // Kept after the test, in the target directory, for a reader to look at.
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lab-report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{name}.png"));
    let (dom, console) = render_report(&chrome, &dir.join("report.html"), &shot);
    assert!(console.is_empty(), "{name}: console: {console:?}");
    let colours: Vec<String> = servelab_lab::plot::PALETTE
        .iter()
        .map(|c| format!("\"{}\"", servelab_lab::plot::style::hex(*c)))
        .collect();
    let figures: Vec<&str> = dom
        .split("<figure class=\"plot\"")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap_or(f))
        .collect();
    assert_eq!(
        figures.len(),
        plots,
        "{name}: a figure per plot in the browser"
    );
    for (i, f) in figures.iter().enumerate() {
        let what = format!("{name} figure {}", i + 1);
        assert!(f.contains("<svg") && f.contains("</svg>"), "{what}: no SVG");
        let marks: usize = f
            .split('>')
            .next()
            .and_then(|tag| tag.split("data-marks=\"").nth(1))
            .and_then(|m| m.split('"').next())
            .and_then(|m| m.parse().ok())
            .unwrap_or_else(|| panic!("{what}: no data-marks"));
        if marks > 0 {
            assert!(
                colours.iter().any(|c| f.contains(c.as_str())),
                "{what}: {marks} marks, none in a series colour"
            );
        } else {
            // A figure with nothing to draw says why, inside the figure.
            assert!(
                f.contains("No point") || f.contains("None of the") || f.contains("unmeasurable"),
                "{what}: empty and silent"
            );
            eprintln!("{what}: no data, and says why");
        }
        let file = f
            .split("href=\"")
            .nth(1)
            .and_then(|h| h.split('"').next())
            .unwrap_or_else(|| panic!("{what}: no link to its SVG file"));
        let svg = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{what}: {file}: {e}"));
        assert!(svg.starts_with("<svg"), "{what}: {file} is not an SVG");
    }
    eprintln!("{name}: report rendered, screenshot {}", shot.display());
}

/// A `servelab serve` child with a synchronous access log, stopped when dropped.
struct Serve(std::process::Child, u16);

impl Serve {
    fn start(root: &Path, log: &Path) -> Serve {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_servelab"));
        cmd.args([
            "serve",
            "--port",
            &port.to_string(),
            "--log",
            log.to_str().unwrap(),
            "--log-mode",
            "sync",
            "--root",
            root.to_str().unwrap(),
        ]);
        let child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "servelab serve did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Serve(child, port)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Every request of a combined-format access log got a 2xx or 3xx answer.
fn all_ok(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    for line in text.lines() {
        let status = line
            .split('"')
            .nth(2)
            .and_then(|r| r.split_whitespace().next())
            .unwrap_or("");
        assert!(
            status.starts_with('2') || status.starts_with('3'),
            "failed resource: {line}"
        );
    }
    text.lines().count()
}

#[test]
fn a_browser_opens_a_report_and_the_bundled_site_without_errors() {
    let Some(chrome) = chromium() else {
        eprintln!("skipped: chromium is not installed (.ci/install-chromium installs it)");
        return;
    };
    let _g = lock();
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let dir = results.join("model");
    run_quick("model", &dir);
    let profile = tmp.path().join("profile");

    // The report as a file, with no network at all.
    let console = browse(
        &chrome,
        &format!("file://{}", dir.join("report.html").display()),
        &tmp.path().join("report-file.png"),
        &profile,
    );
    assert!(console.is_empty(), "console messages: {console:?}");

    // The report served by `servelab serve --root results`.
    let log = tmp.path().join("results-access.log");
    {
        let s = Serve::start(&results, &log);
        let url = format!("http://127.0.0.1:{}/model/report.html", s.1);
        let console = browse(&chrome, &url, &tmp.path().join("report.png"), &profile);
        assert!(console.is_empty(), "console messages: {console:?}");
    }
    assert!(all_ok(&log) >= 1, "the report was not requested");

    // The bundled site.
    let log = tmp.path().join("site-access.log");
    {
        let www = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../www"));
        let s = Serve::start(www, &log);
        let console = browse(
            &chrome,
            &format!("http://127.0.0.1:{}/", s.1),
            &tmp.path().join("site.png"),
            &profile,
        );
        assert!(console.is_empty(), "console messages: {console:?}");
    }
    assert!(
        all_ok(&log) >= 2,
        "the site's page and its resources were not all requested"
    );
    eprintln!("screenshots in {}", tmp.path().display());
}

/// Starts `servelab serve WORDS` on `port` the way the lab starts a server:
/// how the lab sorts the failure, and the kind in the server's start report.
fn start_serve(port: u16, words: &[&str]) -> (StartError, StartFailureKind) {
    let dir = tempfile::tempdir().unwrap();
    let mut argv: Vec<std::ffi::OsString> =
        vec![env!("CARGO_BIN_EXE_servelab").into(), "serve".into()];
    argv.extend(
        words
            .iter()
            .map(|w| w.replace("PORT", &port.to_string()).into()),
    );
    let placement = servelab_lab::cpu::Placement {
        server: vec![],
        load: vec![],
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let e = ServerProcess::start(&argv, port, dir.path(), &placement, &stop).unwrap_err();
    let report = dir.path().join(format!("server-{port}.start.json"));
    let failure = StartFailure::read(&report)
        .unwrap()
        .expect("a start report");
    (e, failure.kind)
}

#[test]
fn the_lab_sorts_a_failed_start_by_the_servers_typed_report() {
    use StartError::{Failed, Unavailable};
    let port = free_port().unwrap();
    let (e, kind) = start_serve(port, &["--no-such-flag"]);
    assert_eq!(kind, StartFailureKind::UnknownFlag);
    assert!(
        matches!(e, Unavailable(ref m) if m.contains("--no-such-flag")),
        "{e:?}"
    );
    let (e, kind) = start_serve(port, &["--engine", "nginx"]);
    assert_eq!(kind, StartFailureKind::UnknownEngine);
    assert!(matches!(e, Unavailable(_)), "{e:?}");
    let (e, kind) = start_serve(port, &["--workers", "many"]);
    assert_eq!(kind, StartFailureKind::BadFlag);
    assert!(matches!(e, Failed(_)), "{e:?}");
    let missing = tempfile::tempdir().unwrap().path().join("gone");
    let (e, kind) = start_serve(
        port,
        &["--root", missing.to_str().unwrap(), "--port", "PORT"],
    );
    assert_eq!(kind, StartFailureKind::RootMissing);
    assert!(matches!(e, Failed(ref m) if m.contains("gone")), "{e:?}");

    // A port in use: a socket bound but not listening (so that the lab does not
    // take it for the server) and without SO_REUSEADDR (so the server's bind fails).
    use rustix::net::{AddressFamily, SocketType, bind, getsockname, socket};
    let held = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    bind(&held, &std::net::SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
    let port = match getsockname(&held).unwrap().try_into() {
        Ok(std::net::SocketAddr::V4(a)) => a.port(),
        other => panic!("bound {other:?}"),
    };
    let (e, kind) = start_serve(port, &["--addr", "127.0.0.1:PORT"]);
    assert_eq!(kind, StartFailureKind::AddressInUse);
    assert!(matches!(e, Failed(ref m) if m.contains("in use")), "{e:?}");
}
