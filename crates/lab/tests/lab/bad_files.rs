//! A mistake in an experiment file is one `file:line:column: message`, found
//! before anything runs, by the parsers that would use the value.

use std::path::Path;

use servelab_lab::builtin;

/// Writes `text` as `bad.toml` and loads and plans it (quick and full).
fn check(text: &str) -> Result<(), String> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let exp = builtin::load(path.to_str().unwrap()).map_err(|e| strip(&e, tmp.path()))?;
    for quick in [true, false] {
        exp.plan(
            &servelab_lab::experiment::PlanOptions::sweep(quick),
            Path::new("/tmp/servelab-lab"),
        )
        .map_err(|e| strip(&e, tmp.path()))?;
    }
    Ok(())
}

fn strip(e: &dyn std::fmt::Display, dir: &Path) -> String {
    e.to_string().replace(&format!("{}/", dir.display()), "")
}

fn model_with(from: &str, to: &str) -> (String, usize) {
    let text = include_str!("../../../../experiments/model.toml").replace(from, to);
    let line = text.lines().position(|l| l.contains(to)).unwrap() + 1;
    (text, line)
}

#[test]
fn a_typo_in_an_engine_is_found_with_the_server_crates_own_names() {
    let (text, line) = model_with("engine = \"pool\"", "engine = \"warp\"");
    let e = check(&text).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "bad.toml:{line}:10: unknown engine `warp` (known: serial,"
        )),
        "{e}"
    );
}

#[test]
fn server_args_are_read_by_the_parser_of_servelab_serve() {
    let (text, line) = model_with("\"--delay\", \"exp:20ms\"", "\"--delay\", \"exp:zz\"");
    let e = check(&text).unwrap_err();
    assert!(
        e.starts_with(&format!("bad.toml:{line}:"))
            && e.contains("args: invalid value 'exp:zz' for '--delay <DIST>'"),
        "{e}"
    );
    let (text, _) = model_with("\"--delay\", \"exp:20ms\"", "\"--engine\", \"serial\"");
    let e = check(&text).unwrap_err();
    assert!(
        e.contains("the lab sets --root, --addr, --port and --engine itself"),
        "{e}"
    );
    // The directory as `servelab serve DIR` is the root too.
    let (text, _) = model_with("\"--delay\", \"exp:20ms\"", "\"some/dir\"");
    let e = check(&text).unwrap_err();
    assert!(e.contains("the lab sets --root"), "{e}");
}

#[test]
fn an_unknown_metric_names_its_line_and_the_known_ones() {
    let (text, line) = model_with("y = \"mean_ms\"", "y = \"mean_response\"");
    let e = check(&text).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "bad.toml:{line}:5: unknown metric `mean_response` (known: throughput, mean_ms,"
        )),
        "{e}"
    );
}

#[test]
fn a_mistake_only_in_the_quick_sweep_is_found_too() {
    let text = include_str!("../../../../experiments/seed002.toml")
        .replace("quick = [150, 400]", "quick = [0, 400]");
    let e = check(&text).unwrap_err();
    assert!(e.starts_with("bad.toml:") && e.contains("model"), "{e}");
}

#[test]
fn a_syntax_error_and_a_missing_file_are_one_line_each() {
    let e = check("name = \"x\"\ntitle = [\n").unwrap_err();
    assert!(e.starts_with("bad.toml:"), "{e}");
    let e = builtin::load("/no/such/dir/x.toml").unwrap_err();
    // The OS error is the source, not repeated in the message.
    assert_eq!(e.to_string(), "/no/such/dir/x.toml");
    let source = std::error::Error::source(&e).unwrap().to_string();
    assert!(source.contains("No such file or directory"), "{source}");
}
