//! What a request gets: from a parsed request head to a response, the static
//! site's rules and features. No sockets and no connection state: the
//! connection ([`crate::conn`]) calls [`handler::respond`] and sends what it
//! produced.
//!
//! Layout:
//! - [`handler`], the static-file rules (dotfiles, precompressed siblings,
//!   preconditions, ranges, `--header`), and the dispatch to the others;
//! - [`response`], what answering produces beside the bytes (status, length,
//!   the body still to send) and what a head says about persistence;
//! - [`autoindex`], `--autoindex` listings;
//! - [`spa`], `--spa` routes;
//! - [`status`], `/-/status` (JSON) and `/-/metrics` (Prometheus).

pub(crate) mod autoindex;
pub(crate) mod handler;
pub(crate) mod response;
pub(crate) mod spa;
pub(crate) mod status;
