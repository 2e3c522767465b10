//! Integration tests of `servelab serve`: each scenario starts a real server on
//! port 0 for every engine in `Engine::ALL`, speaks raw bytes over `TcpStream`,
//! and asserts on the response bytes.

mod support;

mod access_log;
mod churn;
mod conditional;
mod conformance;
mod counters;
mod errors;
mod event_loops;
mod exhaustion;
mod faults;
mod keep_alive;
mod parsing;
mod ranges;
mod request_workers;
mod shutdown;
mod slow_clients;
mod smuggling;
mod static_files;
mod traversal;
