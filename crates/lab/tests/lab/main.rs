//! servelab-lab end to end: experiments run through the `servelab` binary, and
//! their reports opened in a browser.
//!
//! Layout:
//! - [`quick`]: the binary, built for these tests, and one `--quick` run of every
//!   built-in experiment, shared by every test that needs one
//! - [`browser`]: each quick report rendered in headless Chromium

mod browser;
mod quick;
