//! `servelab`: the command-line front end of the laboratory.
//!
//! This binary only parses flags and calls the libraries; every subcommand lives in
//! its own module so that the flag definitions sit next to the code that maps them
//! onto a library's configuration.
//!
//! Layout:
//! - `serve`: `servelab serve` and `servelab engines` (crate `servelab-server`)
//! - `load`: `servelab load` (crate `servelab-load`)
//! - `sim`: `servelab sim` (crate `servelab-sim`)
//! - `lab`: `servelab lab` (crate `servelab-lab`)
//! - `predict`: `servelab predict` (crate `servelab-predict`)
//!
//! Errors: every subcommand returns `anyhow::Result`; `main` prints one line
//! (`servelab: error: ...`, with the cause chain joined by `: `) and exits with
//! status 2. Flag errors come from clap and are printed the same way, on one
//! line with clap's tip and the command whose `--help` to read ([`flag_error`]);
//! `--help` and `--version` print as clap prints them and exit 0. A failed
//! `serve` (flags included) is also written as a typed
//! `servelab_server::StartFailure` where `SERVELAB_START_REPORT` says.

// The `///` comments on flags are clap's help text, written for a terminal
// (`results/<name>-<timestamp>`, `http://host[:port]/path`), not rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod lab;
mod load;
mod predict;
mod serve;
mod sim;

/// A laboratory for web-server concurrency: a static-file server with
/// interchangeable engines, a load generator, a simulator and experiments.
#[derive(Debug, Parser)]
#[command(name = "servelab", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a directory over HTTP/1.1 with the chosen concurrency engine.
    Serve(serve::Args),
    /// List the concurrency engines, one line each.
    Engines,
    /// Generate HTTP load: closed users, open arrivals, sessions, timeouts.
    Load(load::Args),
    /// Simulate a multithreaded server and compare with the exact queueing model.
    Sim(sim::Args),
    /// Run experiments (servers + load + simulator) and write reports.
    Lab(lab::Args),
    /// Measure any HTTP server, fit the model, predict loads, check the prediction.
    Predict(predict::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return flag_error(&err, &command_path(std::env::args_os().skip(1))),
    };
    if matches!(cli.command, Command::Engines | Command::Sim(_)) {
        quiet_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Engines => serve::list_engines(),
        Command::Load(args) => load::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Lab(args) => lab::run(args),
        Command::Predict(args) => predict::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("servelab: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Reports a flag error of clap's in the binary's one style, or prints the
/// help or version that was asked for.
///
/// clap renders an error as a paragraph: `error: MESSAGE`, maybe indented
/// continuation lines, a `tip:`, a usage line and "For more information, try
/// '--help'". That is three to six lines without the `servelab:` prefix that
/// every other error has, and scripts (the lab among them) read the first line.
/// Here the message and the tip are joined on one line, and the usage line
/// gives the command whose `--help` to suggest.
fn flag_error(err: &clap::Error, command: &str) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        // `servelab` alone: the help, but the command was not run.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::from(2)
        }
        _ => {
            let words: Vec<String> = std::env::args().skip(1).collect();
            let message = plain_words(err, &words, command)
                .unwrap_or_else(|| one_line(&err.render().to_string(), command));
            eprintln!("servelab: error: {message}");
            servelab_server::StartFailure::of_flag_error(err, message).report_if_asked();
            ExitCode::from(2)
        }
    }
}

/// Flags of other load generators that users type from habit, with what
/// `servelab load` calls them: (flag, whose it is, ours).
const FOREIGN_LOAD_FLAGS: [(&str, &str, &str); 4] = [
    (
        "-z",
        "hey's and oha's run length",
        "-d/--duration, e.g. -d 30s",
    ),
    ("-R", "wrk2's rate", "--rate, e.g. --rate 1000"),
    ("-m", "hey's method", "--method"),
    ("-D", "wrk2's distribution", "--arrival poisson or uniform"),
];

/// Some flag errors said in plain words, where clap's own words mislead:
/// - a negative number after a flag (`--rate -5`, `--keepalive-timeout -5s`)
///   is read by clap as an unknown flag `-5`, with the advice "to pass '-5'
///   as a value, use '-- -5'", which is wrong; the value is the mistake;
/// - a flag of another load generator (`load -z 1s`, hey's and oha's
///   duration) gets clap's usage of the subcommand; it is not ours, and ours
///   is named.
///
/// `words` are the arguments after the program's name. `None`: clap's
/// message, made one line by [`one_line`].
fn plain_words(err: &clap::Error, words: &[String], command: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if err.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg) else {
        return None;
    };
    let help = format!("(see `{command} --help`)");
    let negative = arg
        .strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
    if negative {
        // The word as the user typed it (`-5s`, where clap names `-5`).
        let at = words.iter().position(|w| w.starts_with(arg.as_str()))?;
        let value = &words[at];
        let flag = at.checked_sub(1).map(|i| words[i].as_str())?;
        if !flag.starts_with('-') {
            return None;
        }
        let give = if flag == "--rate" {
            "give a rate above 0"
        } else if value
            .trim_start_matches(['-', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
            .is_empty()
        {
            "give a number of 0 or more"
        } else {
            "give a duration of 0 or more"
        };
        return Some(format!("{flag}: {value} is negative: {give} {help}"));
    }
    if command == "servelab load" {
        let (_, whose, ours) = FOREIGN_LOAD_FLAGS.iter().find(|(f, _, _)| f == arg)?;
        return Some(format!(
            "{arg} is not a flag of `servelab load` ({whose}): use {ours} {help}"
        ));
    }
    None
}

/// The (sub)command that the words name, `servelab lab report` for
/// `lab report --bad`: the leading words that are subcommands.
fn command_path(words: impl IntoIterator<Item = std::ffi::OsString>) -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = String::from("servelab");
    for word in words {
        let Some(sub) = word.to_str().and_then(|w| cmd.find_subcommand(w)).cloned() else {
            break;
        };
        path.push(' ');
        path.push_str(sub.get_name());
        cmd = sub;
    }
    path
}

/// clap's rendered error as one line: the message (its continuation lines
/// joined), then each tip, then which `--help` to read.
fn one_line(rendered: &str, command: &str) -> String {
    let mut message: Vec<&str> = Vec::new();
    let mut tips: Vec<&str> = Vec::new();
    // The usage block: `Usage: …` and its indented alternatives
    // (`servelab load <COMMAND>`), up to the next blank line.
    let mut in_usage = false;
    for line in rendered.lines().map(str::trim) {
        if line.starts_with("Usage: ") {
            in_usage = true;
            continue;
        } else if in_usage && !line.is_empty() {
            continue;
        }
        in_usage = false;
        if let Some(tip) = line.strip_prefix("tip: ") {
            tips.push(tip);
        } else if line.is_empty() || line.starts_with("For more information") {
            continue;
        } else {
            message.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    let mut out = message.join(" ");
    for tip in tips {
        out.push_str("; ");
        out.push_str(tip);
    }
    out.push_str(&format!(" (see `{command} --help`)"));
    out
}

/// Lets `servelab engines | head` end quietly, as any Unix filter does.
///
/// Rust ignores SIGPIPE, so writing to a closed pipe is an `EPIPE` error and
/// `println!` panics on it. For the commands that only print (no sockets), the
/// default disposition is right: the process ends silently when its reader has
/// gone. `serve`, `load` and `lab` keep SIGPIPE ignored, because there a peer
/// closing a socket must be an error to handle, not death.
#[allow(unsafe_code)]
fn quiet_on_closed_pipe() {
    // SAFETY: called first thing in `main`, before any thread is started;
    // signal(2) with SIG_DFL only resets this process's disposition of SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(words: &str) -> String {
        let err = Cli::try_parse_from(words.split_whitespace()).unwrap_err();
        let command = command_path(words.split_whitespace().skip(1).map(Into::into));
        one_line(&err.render().to_string(), &command)
    }

    #[test]
    fn a_flag_error_is_one_line_with_the_tip_and_the_command() {
        let e = error_of("servelab serve --prot 3");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.starts_with("unexpected argument '--prot' found"), "{e}");
        assert!(e.contains("a similar argument exists: '--port'"), "{e}");
        assert!(e.ends_with("(see `servelab serve --help`)"), "{e}");
        let e = error_of("servelab lod");
        assert!(e.contains("'lod'") && e.contains("'load'"), "{e}");
        assert!(e.ends_with("(see `servelab --help`)"), "{e}");
        // A required argument: clap lists it on an indented line of its own.
        let e = error_of("servelab lab report");
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(e.contains("<DIR>"), "{e}");
        assert!(e.ends_with("(see `servelab lab report --help`)"), "{e}");
        let e = error_of("servelab serve --engine nginx");
        assert!(e.ends_with("(see `servelab serve --help`)"), "{e}");
        // The usage's second line is not part of the message (issue 30).
        let e = error_of("servelab load --bogus x");
        assert!(!e.contains("<COMMAND>"), "{e}");
    }

    fn plain(words: &str) -> Option<String> {
        let err = Cli::try_parse_from(words.split_whitespace()).unwrap_err();
        let words: Vec<String> = words.split_whitespace().skip(1).map(Into::into).collect();
        let command = command_path(words.iter().map(Into::into));
        plain_words(&err, &words, &command)
    }

    #[test]
    fn negative_values_and_foreign_flags_are_said_in_plain_words() {
        assert_eq!(
            plain("servelab load --rate -5 http://x/").as_deref(),
            Some("--rate: -5 is negative: give a rate above 0 (see `servelab load --help`)")
        );
        assert_eq!(
            plain("servelab serve --keepalive-timeout -5s").as_deref(),
            Some(
                "--keepalive-timeout: -5s is negative: give a duration of 0 or more \
                 (see `servelab serve --help`)"
            )
        );
        let e = plain("servelab load -c -3 http://x/").unwrap();
        assert!(e.starts_with("-c: -3 is negative: give a number"), "{e}");
        let e = plain("servelab load -z 1s http://x/").unwrap();
        assert!(e.starts_with("-z is not a flag of `servelab load`"), "{e}");
        assert!(e.contains("-d/--duration"), "{e}");
        // Anything else stays clap's.
        assert_eq!(plain("servelab load --bogus x"), None);
    }
}
