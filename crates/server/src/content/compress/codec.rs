//! The three codings `--compress` produces, each at one fixed level.
//!
//! Levels, chosen for a body that is compressed once and then served from the
//! cache of compressed bodies ([`super::store`]) many times, so a level may cost
//! more CPU than nginx's per-response default would:
//! - gzip 5: Caddy's default (`encode gzip`); nginx's `gzip_comp_level` defaults
//!   to 1, because nginx compresses every response again. zlib's own default is 6.
//! - brotli 5: between Cloudflare's on-the-fly 4 and ngx_brotli's default 6; the
//!   brotli default, 11, is for offline use (hundreds of times slower).
//! - zstd 3: the library's own default, and Caddy's `encode zstd` default.
//!
//! Each encoder is deterministic for the same input and level (gzip's header
//! carries no time or name), so every worker and every process that compresses
//! the same file version makes the same bytes: the strong ETag of the compressed
//! representation (`ETag::encoded`) holds across them.

use std::io::{self, Write};

use servelab_http::encoding::Coding;

/// gzip's level (flate2 on zlib-rs, 0 to 9).
pub(crate) const GZIP_LEVEL: u32 = 5;
/// brotli's quality (0 to 11).
pub(crate) const BROTLI_QUALITY: u32 = 5;
/// brotli's window: 2^22 bytes, the encoder's default; every decoder takes it.
const BROTLI_LGWIN: u32 = 22;
/// zstd's level (1 to 22).
pub(crate) const ZSTD_LEVEL: i32 = 3;

/// `input` encoded with `coding`; identity is the input itself.
pub(crate) fn encode(coding: Coding, input: &[u8]) -> io::Result<Vec<u8>> {
    // Text shrinks 3-5x at these levels: start there, grow if needed.
    let out = Vec::with_capacity(input.len() / 3 + 64);
    match coding {
        Coding::Identity => Ok(input.to_vec()),
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(out, flate2::Compression::new(GZIP_LEVEL));
            e.write_all(input)?;
            e.finish()
        }
        Coding::Br => {
            let mut e = brotli::CompressorWriter::new(out, 4096, BROTLI_QUALITY, BROTLI_LGWIN);
            e.write_all(input)?;
            e.flush()?;
            Ok(e.into_inner())
        }
        Coding::Zstd => zstd::bulk::compress(input, ZSTD_LEVEL),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Read;

    use super::*;

    /// The body decoded as a client would.
    pub(crate) fn decode(coding: Coding, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match coding {
            Coding::Identity => out.extend_from_slice(body),
            Coding::Gzip => {
                flate2::read::GzDecoder::new(body)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Br => {
                brotli::Decompressor::new(body, 4096)
                    .read_to_end(&mut out)
                    .unwrap();
            }
            Coding::Zstd => out = zstd::stream::decode_all(body).unwrap(),
        }
        out
    }

    /// Some text that is not one repeated byte: words from a small vocabulary in
    /// an order drawn from a fixed generator.
    pub(crate) fn text(len: usize) -> Vec<u8> {
        const WORDS: [&str; 8] = [
            "<div class=\"row\">",
            "servelab ",
            "compress ",
            "</div>\n",
            "request ",
            "the ",
            "response ",
            "0123 ",
        ];
        let mut x: u32 = 0x9e37_79b9;
        let mut out = Vec::with_capacity(len + 32);
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            out.extend_from_slice(WORDS[(x % 8) as usize].as_bytes());
        }
        out.truncate(len);
        out
    }

    #[test]
    fn every_coding_round_trips_and_shrinks_text() {
        for len in [0, 1, 1024, 100_000] {
            let input = text(len);
            for coding in Coding::ENCODED {
                let body = encode(coding, &input).unwrap();
                assert_eq!(decode(coding, &body), input, "{coding:?} {len}");
                if len >= 1024 {
                    assert!(
                        body.len() * 2 < input.len(),
                        "{coding:?} {len}: {}",
                        body.len()
                    );
                }
            }
        }
        assert_eq!(encode(Coding::Identity, b"abc").unwrap(), b"abc");
    }

    /// The same input gives the same bytes: the strong ETag relies on it.
    #[test]
    fn encoding_is_deterministic() {
        let input = text(50_000);
        for coding in Coding::ENCODED {
            assert_eq!(
                encode(coding, &input).unwrap(),
                encode(coding, &input).unwrap(),
                "{coding:?}"
            );
        }
    }
}
