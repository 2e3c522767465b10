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
//!
//! Errors: every subcommand returns `anyhow::Result`; `main` prints one line
//! (`servelab: error: ...`, with the cause chain joined by `: `) and exits with
//! status 2. Flag errors are reported by clap, also with status 2.

// The `///` comments on flags are clap's help text, written for a terminal
// (`results/<name>-<timestamp>`, `http://host[:port]/path`), not rustdoc markup.
#![allow(rustdoc::invalid_html_tags, rustdoc::broken_intra_doc_links)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod lab;
mod load;
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Engines | Command::Sim(_)) {
        quiet_on_closed_pipe();
    }
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Engines => serve::list_engines(),
        Command::Load(args) => load::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Lab(args) => lab::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("servelab: error: {err:#}");
            ExitCode::from(2)
        }
    }
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
