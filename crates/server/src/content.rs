//! What the server reads from disk and keeps: the layer beneath every request.
//!
//! Nothing here parses a request or knows about connections; [`crate::site`]
//! decides what a request gets and asks this layer for the bytes, and
//! [`crate::runtime::shared`] holds one of each for the whole server.
//!
//! Layout:
//! - [`files`], the served tree, opened beneath the root with
//!   `openat2(RESOLVE_BENEATH)` (the one place a path meets the disk);
//! - [`cache`], each worker's open files, their metadata and small bodies, and
//!   their precompressed siblings;
//! - [`compress`], `--compress`, bodies compressed on the fly and the bounded
//!   store that keeps them;
//! - [`auth`], `--auth`, the credentials file and the check of a login against
//!   it (the same bcrypt work whether or not the user exists, so time does not
//!   say which users exist; SECURITY.md).

pub(crate) mod auth;
pub(crate) mod cache;
pub(crate) mod compress;
pub(crate) mod files;
