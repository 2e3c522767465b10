//! Integration tests of servelab-load: one binary, one file per behaviour.
//!
//! Every test starts its own server on 127.0.0.1:0 (a tiny one written in
//! `support`, or `servelab serve` in-process), bounds its run by a request count
//! with a duration as a safety net, and asserts on counts, never on speed.

mod support;

mod addresses;
mod against_serve;
mod bodies;
mod counts;
mod failures;
mod h2;
mod h2_server;
mod keep_alive_close;
mod little;
mod malformed;
mod merge;
mod open_backlog;
mod open_rate;
mod series;
mod think_precision;
mod think_time;
mod timeouts;
mod tls;
mod tls_server;
