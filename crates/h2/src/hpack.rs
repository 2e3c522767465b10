//! HPACK (RFC 7541), written for this crate: a decoder with hard limits, and an encoder that
//! keeps no dynamic state.
//!
//! Why by hand rather than a crate: the crates that expose HPACK on its own (`hpack`,
//! `fluke-hpack`/`loona-hpack`, `httlib-hpack`) bound the dynamic table size a peer may
//! select, but none stops a decoded header list at a size limit (an HPACK bomb of one-octet
//! references to a 4 KiB table entry decodes 4 KiB per octet), and `loona-hpack` panics on a
//! table size above its bound instead of returning an error; `h2`'s HPACK is private.
//! docs/h2.md has the full comparison. The Huffman table is RFC 7541 Appendix B; the tests
//! run the Appendix C examples.
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
