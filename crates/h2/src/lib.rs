//! servelab-h2: HTTP/2 (RFC 9113) for servelab as pure code over bytes.
#![deny(missing_docs)]

pub mod error;
pub mod frame;
pub mod hpack;
pub mod settings;

pub use error::{ErrorCode, H2Error};
