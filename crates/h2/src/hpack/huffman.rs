//! The HPACK Huffman code (RFC 7541 §5.2, Appendix B): encode, and a bounded decode.
//!
//! The code is canonical (codes of one length are consecutive, in symbol order, and each
//! length continues from the last code of the shorter one, shifted), which a test below
//! checks. So decoding needs no tree: per bit length, the first code and where its symbols
//! start in the symbol list, built at compile time; and a 256-entry table for the codes of
//! 8 bits or fewer, which most octets of a header have. Decoding is O(input bits) at worst,
//! with its output capped by the caller, so a hostile string costs at most its own length in
//! CPU and the cap in memory.

/// (code, bit length) per symbol 0..=256; symbol 256 is EOS (RFC 7541 Appendix B).
#[rustfmt::skip]
static CODES: [(u32, u8); 257] = [
    (0x1ff8, 13), (0x7fffd8, 23), (0xfffffe2, 28), (0xfffffe3, 28),
    (0xfffffe4, 28), (0xfffffe5, 28), (0xfffffe6, 28), (0xfffffe7, 28),
    (0xfffffe8, 28), (0xffffea, 24), (0x3ffffffc, 30), (0xfffffe9, 28),
    (0xfffffea, 28), (0x3ffffffd, 30), (0xfffffeb, 28), (0xfffffec, 28),
    (0xfffffed, 28), (0xfffffee, 28), (0xfffffef, 28), (0xffffff0, 28),
    (0xffffff1, 28), (0xffffff2, 28), (0x3ffffffe, 30), (0xffffff3, 28),
    (0xffffff4, 28), (0xffffff5, 28), (0xffffff6, 28), (0xffffff7, 28),
    (0xffffff8, 28), (0xffffff9, 28), (0xffffffa, 28), (0xffffffb, 28),
    (0x14, 6), (0x3f8, 10), (0x3f9, 10), (0xffa, 12),
    (0x1ff9, 13), (0x15, 6), (0xf8, 8), (0x7fa, 11),
    (0x3fa, 10), (0x3fb, 10), (0xf9, 8), (0x7fb, 11),
    (0xfa, 8), (0x16, 6), (0x17, 6), (0x18, 6),
    (0x0, 5), (0x1, 5), (0x2, 5), (0x19, 6),
    (0x1a, 6), (0x1b, 6), (0x1c, 6), (0x1d, 6),
    (0x1e, 6), (0x1f, 6), (0x5c, 7), (0xfb, 8),
    (0x7ffc, 15), (0x20, 6), (0xffb, 12), (0x3fc, 10),
    (0x1ffa, 13), (0x21, 6), (0x5d, 7), (0x5e, 7),
    (0x5f, 7), (0x60, 7), (0x61, 7), (0x62, 7),
    (0x63, 7), (0x64, 7), (0x65, 7), (0x66, 7),
    (0x67, 7), (0x68, 7), (0x69, 7), (0x6a, 7),
    (0x6b, 7), (0x6c, 7), (0x6d, 7), (0x6e, 7),
    (0x6f, 7), (0x70, 7), (0x71, 7), (0x72, 7),
    (0xfc, 8), (0x73, 7), (0xfd, 8), (0x1ffb, 13),
    (0x7fff0, 19), (0x1ffc, 13), (0x3ffc, 14), (0x22, 6),
    (0x7ffd, 15), (0x3, 5), (0x23, 6), (0x4, 5),
    (0x24, 6), (0x5, 5), (0x25, 6), (0x26, 6),
    (0x27, 6), (0x6, 5), (0x74, 7), (0x75, 7),
    (0x28, 6), (0x29, 6), (0x2a, 6), (0x7, 5),
    (0x2b, 6), (0x76, 7), (0x2c, 6), (0x8, 5),
    (0x9, 5), (0x2d, 6), (0x77, 7), (0x78, 7),
    (0x79, 7), (0x7a, 7), (0x7b, 7), (0x7ffe, 15),
    (0x7fc, 11), (0x3ffd, 14), (0x1ffd, 13), (0xffffffc, 28),
    (0xfffe6, 20), (0x3fffd2, 22), (0xfffe7, 20), (0xfffe8, 20),
    (0x3fffd3, 22), (0x3fffd4, 22), (0x3fffd5, 22), (0x7fffd9, 23),
    (0x3fffd6, 22), (0x7fffda, 23), (0x7fffdb, 23), (0x7fffdc, 23),
    (0x7fffdd, 23), (0x7fffde, 23), (0xffffeb, 24), (0x7fffdf, 23),
    (0xffffec, 24), (0xffffed, 24), (0x3fffd7, 22), (0x7fffe0, 23),
    (0xffffee, 24), (0x7fffe1, 23), (0x7fffe2, 23), (0x7fffe3, 23),
    (0x7fffe4, 23), (0x1fffdc, 21), (0x3fffd8, 22), (0x7fffe5, 23),
    (0x3fffd9, 22), (0x7fffe6, 23), (0x7fffe7, 23), (0xffffef, 24),
    (0x3fffda, 22), (0x1fffdd, 21), (0xfffe9, 20), (0x3fffdb, 22),
    (0x3fffdc, 22), (0x7fffe8, 23), (0x7fffe9, 23), (0x1fffde, 21),
    (0x7fffea, 23), (0x3fffdd, 22), (0x3fffde, 22), (0xfffff0, 24),
    (0x1fffdf, 21), (0x3fffdf, 22), (0x7fffeb, 23), (0x7fffec, 23),
    (0x1fffe0, 21), (0x1fffe1, 21), (0x3fffe0, 22), (0x1fffe2, 21),
    (0x7fffed, 23), (0x3fffe1, 22), (0x7fffee, 23), (0x7fffef, 23),
    (0xfffea, 20), (0x3fffe2, 22), (0x3fffe3, 22), (0x3fffe4, 22),
    (0x7ffff0, 23), (0x3fffe5, 22), (0x3fffe6, 22), (0x7ffff1, 23),
    (0x3ffffe0, 26), (0x3ffffe1, 26), (0xfffeb, 20), (0x7fff1, 19),
    (0x3fffe7, 22), (0x7ffff2, 23), (0x3fffe8, 22), (0x1ffffec, 25),
    (0x3ffffe2, 26), (0x3ffffe3, 26), (0x3ffffe4, 26), (0x7ffffde, 27),
    (0x7ffffdf, 27), (0x3ffffe5, 26), (0xfffff1, 24), (0x1ffffed, 25),
    (0x7fff2, 19), (0x1fffe3, 21), (0x3ffffe6, 26), (0x7ffffe0, 27),
    (0x7ffffe1, 27), (0x3ffffe7, 26), (0x7ffffe2, 27), (0xfffff2, 24),
    (0x1fffe4, 21), (0x1fffe5, 21), (0x3ffffe8, 26), (0x3ffffe9, 26),
    (0xffffffd, 28), (0x7ffffe3, 27), (0x7ffffe4, 27), (0x7ffffe5, 27),
    (0xfffec, 20), (0xfffff3, 24), (0xfffed, 20), (0x1fffe6, 21),
    (0x3fffe9, 22), (0x1fffe7, 21), (0x1fffe8, 21), (0x7ffff3, 23),
    (0x3fffea, 22), (0x3fffeb, 22), (0x1ffffee, 25), (0x1ffffef, 25),
    (0xfffff4, 24), (0xfffff5, 24), (0x3ffffea, 26), (0x7ffff4, 23),
    (0x3ffffeb, 26), (0x7ffffe6, 27), (0x3ffffec, 26), (0x3ffffed, 26),
    (0x7ffffe7, 27), (0x7ffffe8, 27), (0x7ffffe9, 27), (0x7ffffea, 27),
    (0x7ffffeb, 27), (0xffffffe, 28), (0x7ffffec, 27), (0x7ffffed, 27),
    (0x7ffffee, 27), (0x7ffffef, 27), (0x7fffff0, 27), (0x3ffffee, 26),
    (0x3fffffff, 30),
];

const EOS: u16 = 256;
const MAX_BITS: usize = 30;

/// Per length: the first code, the number of codes, and where they start in `SYMBOLS`.
struct Canon {
    first: [u32; MAX_BITS + 1],
    count: [u16; MAX_BITS + 1],
    offset: [u16; MAX_BITS + 1],
    symbols: [u16; 257],
}

const fn canon() -> Canon {
    let mut c = Canon {
        first: [0; MAX_BITS + 1],
        count: [0; MAX_BITS + 1],
        offset: [0; MAX_BITS + 1],
        symbols: [0; 257],
    };
    let mut n = 0;
    let mut len = 1;
    while len <= MAX_BITS {
        c.offset[len] = n as u16;
        let mut s = 0;
        while s < 257 {
            if CODES[s].1 as usize == len {
                if c.count[len] == 0 {
                    c.first[len] = CODES[s].0;
                }
                c.count[len] += 1;
                c.symbols[n] = s as u16;
                n += 1;
            }
            s += 1;
        }
        len += 1;
    }
    c
}

static CANON: Canon = canon();

/// Octets `src` takes Huffman-encoded.
pub fn encoded_len(src: &[u8]) -> usize {
    let bits: usize = src
        .iter()
        .map(|&b| usize::from(CODES[usize::from(b)].1))
        .sum();
    bits.div_ceil(8)
}

/// Appends `src` Huffman-encoded, padded with the most significant bits of EOS (all ones).
pub fn encode(src: &[u8], out: &mut Vec<u8>) {
    let mut acc: u64 = 0;
    let mut bits = 0u32;
    for &b in src {
        let (code, len) = CODES[usize::from(b)];
        acc = (acc << len) | u64::from(code);
        bits += u32::from(len);
        while bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        let pad = 8 - bits;
        out.push(((acc << pad) | ((1 << pad) - 1)) as u8);
    }
}

/// Why a Huffman string is refused. All are COMPRESSION_ERROR for the connection, except
/// [`HuffmanError::TooLong`], which the caller maps to its own size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HuffmanError {
    /// The EOS symbol inside the string (RFC 7541 §5.2).
    Eos,
    /// Padding longer than 7 bits, or not the most significant bits of EOS.
    BadPadding,
    /// The decoded string would pass the caller's cap.
    TooLong,
}

/// For each value of the next 8 input bits: the symbol and length of the code of 8 bits or
/// fewer that starts there, or length 0 when the code there is longer. The common octets
/// (letters, digits, `/`, `.`, `-`) have codes of 5 to 8 bits, so most symbols take one
/// lookup; the rest fall back to the per-length search.
static SHORT: [(u8, u8); 256] = short_table();

const fn short_table() -> [(u8, u8); 256] {
    let mut t = [(0u8, 0u8); 256];
    let mut s = 0;
    while s < 256 {
        let (code, len) = CODES[s];
        if len <= 8 {
            let base = (code << (8 - len)) as usize;
            let mut i = 0;
            while i < 1 << (8 - len) {
                t[base + i] = (s as u8, len);
                i += 1;
            }
        }
        s += 1;
    }
    t
}

/// Appends the decoding of `src` to `out`, refusing to let `out` grow past `max` octets.
pub fn decode(src: &[u8], out: &mut Vec<u8>, max: usize) -> Result<(), HuffmanError> {
    // The next input bits, left-aligned in `acc`; `bits` of them are real.
    let mut acc: u64 = 0;
    let mut bits: u32 = 0;
    let mut next = 0;
    loop {
        while bits <= 56 && next < src.len() {
            acc |= u64::from(src[next]) << (56 - bits);
            next += 1;
            bits += 8;
        }
        if bits == 0 {
            return Ok(());
        }
        let (sym, len) = SHORT[(acc >> 56) as usize];
        let (sym, len) = if len != 0 && u32::from(len) <= bits {
            (u16::from(sym), u32::from(len))
        } else {
            match long_code(acc, bits) {
                Some(found) => found,
                None => break,
            }
        };
        if sym == EOS {
            return Err(HuffmanError::Eos);
        }
        if out.len() >= max {
            return Err(HuffmanError::TooLong);
        }
        out.push(sym as u8);
        acc <<= len;
        bits -= len;
    }
    // No whole code in what is left: it must be padding, fewer than 8 one-bits.
    let ones = !0u64 << (64 - bits);
    if bits > 7 || acc & ones != ones {
        return Err(HuffmanError::BadPadding);
    }
    Ok(())
}

/// The code of 9 to 30 bits at the top of `acc`, if all its bits are among the `bits` real
/// ones: the canonical search, one length at a time.
fn long_code(acc: u64, bits: u32) -> Option<(u16, u32)> {
    for len in 5..=bits.min(MAX_BITS as u32) {
        let code = (acc >> (64 - len)) as u32;
        let l = len as usize;
        let d = code.wrapping_sub(CANON.first[l]);
        if d < u32::from(CANON.count[l]) {
            return Some((
                CANON.symbols[usize::from(CANON.offset[l]) + d as usize],
                len,
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first decoder: one bit at a time. The table-driven one must agree with it.
    fn decode_bitwise(src: &[u8], out: &mut Vec<u8>, max: usize) -> Result<(), HuffmanError> {
        let mut code: u32 = 0;
        let mut len = 0usize;
        for &byte in src {
            for i in (0..8).rev() {
                code = (code << 1) | u32::from((byte >> i) & 1);
                len += 1;
                let d = code.wrapping_sub(CANON.first[len]);
                if d < u32::from(CANON.count[len]) {
                    let sym = CANON.symbols[usize::from(CANON.offset[len]) + d as usize];
                    if sym == EOS {
                        return Err(HuffmanError::Eos);
                    }
                    if out.len() >= max {
                        return Err(HuffmanError::TooLong);
                    }
                    out.push(sym as u8);
                    code = 0;
                    len = 0;
                } else if len >= MAX_BITS {
                    // Unreachable with a complete code, kept so that `len` can never index
                    // past the tables whatever the input.
                    return Err(HuffmanError::Eos);
                }
            }
        }
        if len > 7 || code != (1 << len) - 1 {
            return Err(HuffmanError::BadPadding);
        }
        Ok(())
    }

    #[test]
    fn the_table_decoder_agrees_with_the_bitwise_one() {
        // xorshift64: fixed inputs, a failure names a reproducible case.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut rng = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..20_000 {
            let len = (rng() % 24) as usize;
            let mut input: Vec<u8> = (0..len).map(|_| rng() as u8).collect();
            if case % 2 == 0 {
                // Half the cases are valid encodings, perhaps cut short.
                let text: Vec<u8> = input
                    .iter()
                    .map(|b| b"abc/.-0123XYZ~\x00\xff"[usize::from(*b) % 16])
                    .collect();
                input.clear();
                encode(&text, &mut input);
                let cut = (rng() as usize) % (input.len() + 1);
                input.truncate(if case % 4 == 0 { cut } else { input.len() });
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let max = (rng() % 40) as usize;
            assert_eq!(
                decode(&input, &mut a, max),
                decode_bitwise(&input, &mut b, max),
                "{input:02x?}"
            );
            assert_eq!(a, b, "{input:02x?}");
        }
    }

    #[test]
    fn the_code_is_canonical() {
        let mut order: Vec<usize> = (0..257).collect();
        order.sort_by_key(|&s| (CODES[s].1, s));
        let mut expect = 0u32;
        for w in order.windows(2) {
            let (a, b) = (CODES[w[0]], CODES[w[1]]);
            assert_eq!(a.0, expect);
            expect = (a.0 + 1) << (b.1 - a.1);
        }
        assert_eq!(CODES[256], (0x3fff_ffff, 30));
    }

    #[test]
    fn every_octet_round_trips_alone_and_together() {
        let all: Vec<u8> = (0..=255).collect();
        for s in all.chunks(1).chain([&all[..], b"", b"www.example.com"]) {
            let mut enc = Vec::new();
            encode(s, &mut enc);
            assert_eq!(enc.len(), encoded_len(s));
            let mut dec = Vec::new();
            decode(&enc, &mut dec, usize::MAX).unwrap();
            assert_eq!(dec, s);
        }
    }

    #[test]
    fn rfc7541_c4_1_authority() {
        let enc = [
            0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ];
        let mut dec = Vec::new();
        decode(&enc, &mut dec, 100).unwrap();
        assert_eq!(dec, b"www.example.com");
        let mut again = Vec::new();
        encode(b"www.example.com", &mut again);
        assert_eq!(again, enc);
    }

    #[test]
    fn padding_and_eos_rules() {
        // 'a' is 00011 (5 bits): three one-bits of padding are fine, zeros are not.
        let mut out = Vec::new();
        assert_eq!(decode(&[0b0001_1111], &mut out, 10), Ok(()));
        assert_eq!(out, b"a");
        assert_eq!(
            decode(&[0b0001_1000], &mut Vec::new(), 10),
            Err(HuffmanError::BadPadding)
        );
        // A whole octet of ones is padding longer than 7 bits.
        assert_eq!(
            decode(&[0b0001_1111, 0xff], &mut Vec::new(), 10),
            Err(HuffmanError::BadPadding)
        );
        // EOS itself (30 ones) in the string.
        assert_eq!(
            decode(&[0xff, 0xff, 0xff, 0xfc], &mut Vec::new(), 10),
            Err(HuffmanError::Eos)
        );
        // The cap.
        let mut enc = Vec::new();
        encode(b"aaaa", &mut enc);
        assert_eq!(decode(&enc, &mut Vec::new(), 3), Err(HuffmanError::TooLong));
    }
}
