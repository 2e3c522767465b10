//! Every built-in experiment's `--quick` report, opened in headless Chromium: the
//! page renders (a screenshot is saved beside the runs), logs nothing to the
//! console, and every figure either draws data marks in a series colour or says
//! in words why it has none. Each figure's own SVG file, linked from its caption,
//! exists.
//!
//! The test skips itself, saying so, when no Chromium is installed
//! (`.ci/install-chromium` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

use servelab_lab::plot::PALETTE;
use servelab_lab::plot::style::hex;
use servelab_lab::results::Status;

use crate::quick;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|b| {
            std::env::split_paths(&path)
                .map(|d| d.join(b))
                .find(|p| p.is_file())
        })
}

/// Opens `page` headless with a fresh profile, saves a screenshot to `shot`, and
/// returns the DOM as the browser parsed it and the console lines.
fn render(chrome: &Path, page: &Path, shot: &Path) -> (String, Vec<String>) {
    let profile = tempfile::tempdir().expect("a profile directory");
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

/// The `<figure class="plot">` elements of a page, as text.
fn figures(dom: &str) -> Vec<&str> {
    dom.split("<figure class=\"plot\"")
        .skip(1)
        .map(|f| f.split("</figure>").next().unwrap_or(f))
        .collect()
}

/// The value of attribute `name` in the first tag of `text`.
fn attr<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let tag = text.split('>').next()?;
    tag.split(&format!("{name}=\"")).nth(1)?.split('"').next()
}

#[test]
fn every_quick_report_renders_with_data_or_a_reason_in_every_figure() {
    let Some(chrome) = chromium() else {
        eprintln!("skipped: chromium is not installed (.ci/install-chromium installs it)");
        return;
    };
    let runs = quick::runs();
    let colours: Vec<String> = PALETTE.iter().map(|c| format!("\"{}\"", hex(*c))).collect();
    let mut checked = 0;
    for run in runs {
        let (exp, _) = servelab_lab::builtin::load(run.name).unwrap();
        assert!(
            run.results.points.iter().any(|p| p.status == Status::Ok),
            "{}: no point produced figures, so no figure could show any",
            run.name
        );
        let shot = run.dir.with_extension("png");
        let (dom, console) = render(&chrome, &run.dir.join("report.html"), &shot);
        assert!(console.is_empty(), "{}: console: {console:?}", run.name);
        let figs = figures(&dom);
        assert_eq!(
            figs.len(),
            exp.plots.len(),
            "{}: a figure per plot",
            run.name
        );
        for (i, f) in figs.iter().enumerate() {
            let what = format!("{} figure {}", run.name, i + 1);
            assert!(f.contains("<svg") && f.contains("</svg>"), "{what}: no SVG");
            let marks: usize = attr(f, "data-marks")
                .and_then(|m| m.parse().ok())
                .unwrap_or_else(|| panic!("{what}: no data-marks"));
            let coloured = colours.iter().any(|c| f.contains(c.as_str()));
            if marks > 0 {
                assert!(coloured, "{what}: {marks} marks, none in a series colour");
            } else {
                // A figure with nothing to draw must say why, in the figure.
                assert!(
                    f.contains("No point") || f.contains("None of the"),
                    "{what}: empty and silent"
                );
                eprintln!("{what}: no data, and says why");
            }
            let file = f
                .split("href=\"")
                .nth(1)
                .and_then(|h| h.split('"').next())
                .unwrap_or_else(|| panic!("{what}: no link to its SVG file"));
            let svg = std::fs::read_to_string(run.dir.join(file))
                .unwrap_or_else(|e| panic!("{what}: {file}: {e}"));
            assert!(svg.starts_with("<svg"), "{what}: {file} is not an SVG");
            checked += 1;
        }
        eprintln!("{}: screenshot {}", run.name, shot.display());
    }
    assert!(checked > 0, "no figure was checked");
}
