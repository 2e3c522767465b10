//! What the README and the docs quote from the tools is what the tools print.
//!
//! A retyped output drifts: the README once said `--wide` shows 9 more columns
//! where `sim` hid 10, and "all thirteen" experiments where `lab list` showed 14.
//! This test runs every quoted command whose output is deterministic (`sim`,
//! seeded; `lab list`, a plan) and compares the quoted lines with what the
//! binary prints, and it checks the counts the README states in words.
//! Outputs that are measurements (`load`, `lab run`) are examples, marked so in
//! the text, and are not compared.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The quoted files: README.md and every page of docs/.
fn pages() -> Vec<(String, String)> {
    let mut pages = vec![("README.md".to_string(), read(&repo().join("README.md")))];
    let mut docs: Vec<_> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for p in docs {
        let name = format!("docs/{}", p.file_name().unwrap().to_string_lossy());
        pages.push((name, read(&p)));
    }
    pages
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A fenced block that starts with `$ servelab …`: the command's words and the
/// quoted lines after it.
struct Quote {
    page: String,
    line: usize,
    words: Vec<String>,
    lines: Vec<String>,
}

fn quotes() -> Vec<Quote> {
    let mut out = Vec::new();
    for (page, text) in pages() {
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            if lines[i].starts_with("```") && i + 1 < lines.len() {
                if let Some(cmd) = lines[i + 1].strip_prefix("$ servelab ") {
                    let mut body = Vec::new();
                    let mut j = i + 2;
                    while j < lines.len() && !lines[j].starts_with("```") {
                        body.push(lines[j].to_string());
                        j += 1;
                    }
                    // A comment after the command (`# then open …`) is not a word.
                    let cmd = cmd.split(" #").next().unwrap();
                    out.push(Quote {
                        page: page.clone(),
                        line: i + 2,
                        words: cmd.split_whitespace().map(str::to_string).collect(),
                        lines: body,
                    });
                    i = j;
                }
            }
            i += 1;
        }
    }
    out
}

/// Commands whose output is the same on every run, so a quote can be compared.
fn deterministic(words: &[String]) -> bool {
    match words.first().map(String::as_str) {
        Some("sim") => !words.iter().any(|w| w == "--seed-from-time"),
        Some("lab") => words.get(1).is_some_and(|w| w == "list"),
        _ => false,
    }
}

fn run(words: &[String]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args(words)
        .output()
        .unwrap();
    assert!(o.status.success(), "servelab {words:?} failed: {o:?}");
    // Everything the user sees, in the order of the streams' own lines.
    let mut all = String::from_utf8_lossy(&o.stdout).into_owned();
    all.push_str(&String::from_utf8_lossy(&o.stderr));
    all
}

/// The quoted lines, split at `...` (lines left out), each run of lines found
/// contiguously in the output, the runs in order.
fn check_quote(q: &Quote, output: &str) -> Result<(), String> {
    let out: Vec<&str> = output.lines().map(str::trim_end).collect();
    let mut from = 0;
    for run in q.lines.split(|l| l.trim() == "...") {
        let run: Vec<&str> = run.iter().map(|l| l.trim_end()).collect();
        if run.is_empty() {
            continue;
        }
        let found = (from..=out.len().saturating_sub(run.len()))
            .find(|&k| out[k..k + run.len()] == run[..])
            .ok_or_else(|| {
                format!(
                    "{}:{}: `servelab {}` no longer prints these lines:\n{}\n--- it prints:\n{}",
                    q.page,
                    q.line,
                    q.words.join(" "),
                    run.join("\n"),
                    output
                )
            })?;
        from = found + run.len();
    }
    Ok(())
}

#[test]
fn every_quoted_deterministic_output_is_what_the_binary_prints() {
    let quotes: Vec<_> = quotes()
        .into_iter()
        .filter(|q| deterministic(&q.words))
        .collect();
    assert!(
        quotes.iter().any(|q| q.words[0] == "sim") && quotes.iter().any(|q| q.words[0] == "lab"),
        "the README quotes `sim` and `lab list`: the parser of quotes is broken"
    );
    let mut failures = Vec::new();
    for q in &quotes {
        if let Err(e) = check_quote(q, &run(&q.words)) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The checker itself fails on a quote that is not in the output.
#[test]
fn a_quote_that_differs_from_the_output_fails() {
    let q = Quote {
        page: "README.md".into(),
        line: 1,
        words: vec!["sim".into()],
        lines: vec!["a".into(), "...".into(), "c".into()],
    };
    assert!(check_quote(&q, "a\nb\nc\n").is_ok());
    assert!(check_quote(&q, "c\nb\na\n").is_err(), "order matters");
    let q = Quote {
        lines: vec!["a".into(), "c".into()],
        ..q
    };
    assert!(check_quote(&q, "a\nb\nc\n").is_err(), "a run is contiguous");
}

/// The README's sentence about hidden columns names the count `sim` prints.
#[test]
fn the_readme_counts_the_columns_and_experiments_the_tools_show() {
    let readme = read(&repo().join("README.md"));
    let sim = run(&["sim", "--users", "1,50,144,300"].map(String::from));
    let hidden: usize = sim
        .lines()
        .find_map(|l| l.strip_prefix('(')?.split(' ').next()?.parse().ok())
        .expect("sim says how many columns it hid");
    assert!(
        readme.contains(&format!("`--wide` shows {hidden} more columns")),
        "sim hides {hidden} columns; the README says otherwise"
    );

    let list = run(&["lab", "list"].map(String::from));
    let experiments = list
        .lines()
        .filter(|l| !l.starts_with("total ") && !l.trim().is_empty())
        .count();
    assert_eq!(experiments, servelab_lab::builtin::BUILTIN.len());
    let stated = format!("The {experiments} built-in experiments");
    assert!(
        readme.contains(&stated),
        "`lab list` shows {experiments} experiments; the README should say \"{stated}\""
    );
    // Counts in words drift: the README states the number once, in digits, above.
    for word in [
        "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
    ] {
        for phrase in [
            format!("all {word} experiments"),
            format!("all {word}\n"),
            format!("all {word})"),
        ] {
            assert!(
                !readme.contains(&phrase),
                "the README counts experiments in words (\"{phrase}\"): say it in digits from `lab list`"
            );
        }
    }
}
