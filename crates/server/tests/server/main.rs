//! Integration tests of `servelab serve`: each scenario starts a real server on
//! port 0 for every engine this system runs (`Engine::here()`, the catalogue's `ALL`
//! less what the kernel refuses), speaks raw bytes over `TcpStream`,
//! and asserts on the response bytes.

mod support;

mod accept_policy;
mod access_log;
mod addresses;
mod auth;
mod auth_timing;
mod churn;
mod client_gone;
mod compression;
mod conditional;
mod conformance;
mod counters;
mod deadlines;
mod directory_hint;
mod dotfiles;
mod errors;
mod event_loops;
mod exhaustion;
mod faults;
mod h2_client;
mod h2_curl;
mod h2_defences;
mod h2_static;
mod headers;
mod json_log;
mod keep_alive;
mod listing;
mod parsing;
mod precompressed;
mod preconditions;
mod ranges;
mod request_workers;
mod service_histogram;
mod shutdown;
mod slow_clients;
mod smuggling;
mod spa;
mod static_files;
mod tls;
mod tls_options;
mod tls_slowloris;
mod traversal;
