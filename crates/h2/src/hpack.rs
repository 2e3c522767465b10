//! HPACK (RFC 7541), written for this crate: a decoder with hard limits, and an encoder with
//! a small dynamic table ([`encoder::MAX_TABLE`]).
//!
//! Why by hand rather than a crate: of the crates that expose HPACK on its own, `hpack`
//! (0.3) has no setting for either limit; `loona-hpack` 0.4 (formerly `fluke-hpack`) bounds
//! the table a peer may select and streams fields to a callback (so a caller could count the
//! list), but accepts a table size update after a field, which RFC 7541 §4.2 forbids, has no
//! way to require the update a lowered SETTINGS_HEADER_TABLE_SIZE calls for, and brings
//! `tracing` and a second `thiserror`; `httlib-hpack` bounds the table but decodes every
//! field into owned vectors, so a bomb's memory is its decoded size; `h2`'s HPACK is private.
//! The codec here is 1,160 lines, tests and the RFC 7541 Appendix B Huffman table included;
//! the tests run the Appendix C examples. docs/h2.md has the comparison.
//!
//! # Limits
//! - The dynamic table never grows past the SETTINGS_HEADER_TABLE_SIZE we advertised
//!   ([`Decoder::new`]); a size update above it is a COMPRESSION_ERROR.
//! - A decoded header list (name + value + 32 per field, RFC 9113 §6.5.2) past
//!   SETTINGS_MAX_HEADER_LIST_SIZE stops being emitted: the block is still decoded to its
//!   end so that the table stays in step with the peer, and the result is
//!   [`HpackError::ListTooLarge`], a stream-level refusal (the connection survives).
//! - Work per block is linear in the block's octets, which the connection bounds
//!   ([`crate::Limits::max_header_block`]).
//!
//! # Layout
//! - [`integer`]: prefixed integers (§5.1), capped.
//! - [`huffman`]: the Huffman code (§5.2).
//! - [`table`]: the static and dynamic tables (§2.3, §4).
//! - [`decoder`], [`encoder`]: header blocks.

pub mod decoder;
pub mod encoder;
pub mod huffman;
pub mod integer;
pub mod table;

pub use decoder::{Decoder, HpackError};
pub use encoder::Encoder;
