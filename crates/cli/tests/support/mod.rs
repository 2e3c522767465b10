//! Helpers shared by the binary's test files: the binary itself, and a
//! `servelab serve` started on a free port.
//!
//! Each test file stays a binary of its own, so that the lab's CPU-pinned runs
//! (`lab.rs`) never share the machine with another file's tests; a file uses
//! some of these helpers, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};

/// The `servelab` binary under test.
pub fn servelab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_servelab"))
}

/// Starts `servelab serve` with `args` on a free port; returns the child and its
/// address, read from its start line on stderr.
pub fn serve(args: &[&str]) -> (Child, SocketAddr) {
    let mut child = servelab()
        .args(["serve", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    // servelab: serving ROOT on http://ADDR (engine E, N workers)
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap_or_else(|| panic!("unexpected start line: {line:?}"));
    assert!(line.starts_with("servelab: serving "), "{line}");
    (child, addr.parse().unwrap())
}
