//! HPACK prefixed integers (RFC 7541 §5.1).
//!
//! The RFC leaves the size unbounded; every integer HPACK carries (an index, a string length,
//! a table size) is meaningful only below 2^32, so more than five continuation octets, or a
//! value past `u32`, is refused: without the cap, a peer could send an endless run of 0x80
//! octets and keep the decoder shifting.

/// Why an integer is refused (a COMPRESSION_ERROR for the connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntegerError {
    /// The block ends inside the integer.
    Truncated,
    /// The value does not fit in 32 bits.
    Overflow,
}

/// Decodes the integer whose first octet is `buf[0]`, with a `prefix`-bit prefix (1..=8).
/// Returns the value and the octets taken.
pub fn decode(buf: &[u8], prefix: u8) -> Result<(u32, usize), IntegerError> {
    let mask: u8 = if prefix >= 8 { 0xff } else { (1 << prefix) - 1 };
    let first = buf.first().ok_or(IntegerError::Truncated)? & mask;
    if first < mask {
        return Ok((u32::from(first), 1));
    }
    let mut value = u64::from(mask);
    for (i, &b) in buf[1..].iter().enumerate().take(5) {
        value += u64::from(b & 0x7f) << (7 * i);
        if value > u64::from(u32::MAX) {
            return Err(IntegerError::Overflow);
        }
        if b & 0x80 == 0 {
            return Ok((value as u32, i + 2));
        }
    }
    if buf.len() > 6 {
        Err(IntegerError::Overflow)
    } else {
        Err(IntegerError::Truncated)
    }
}

/// Appends `value` with a `prefix`-bit prefix; `high` holds the bits above the prefix in the
/// first octet (the representation's pattern).
pub fn encode(value: u32, prefix: u8, high: u8, out: &mut Vec<u8>) {
    let mask: u32 = if prefix >= 8 { 0xff } else { (1 << prefix) - 1 };
    if value < mask {
        out.push(high | value as u8);
        return;
    }
    out.push(high | mask as u8);
    let mut rest = value - mask;
    while rest >= 0x80 {
        out.push((rest as u8 & 0x7f) | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7541_c1_examples() {
        // C.1.1: 10 in a 5-bit prefix; C.1.2: 1337 in a 5-bit prefix; C.1.3: 42 at an
        // octet boundary.
        assert_eq!(decode(&[0b0000_1010], 5), Ok((10, 1)));
        assert_eq!(
            decode(&[0b0001_1111, 0b1001_1010, 0b0000_1010], 5),
            Ok((1337, 3))
        );
        assert_eq!(decode(&[42], 8), Ok((42, 1)));
        let mut out = Vec::new();
        encode(1337, 5, 0b1110_0000, &mut out);
        assert_eq!(out, [0b1111_1111, 0b1001_1010, 0b0000_1010]);
    }

    #[test]
    fn round_trip_at_every_prefix_and_the_edges() {
        for prefix in 1..=8 {
            for v in [
                0,
                1,
                30,
                31,
                126,
                127,
                128,
                255,
                256,
                16_384,
                1 << 28,
                u32::MAX,
            ] {
                let mut out = Vec::new();
                encode(v, prefix, 0, &mut out);
                assert_eq!(decode(&out, prefix), Ok((v, out.len())), "{v} in {prefix}");
            }
        }
    }

    #[test]
    fn endless_and_oversized_integers_are_refused() {
        assert_eq!(decode(&[0x1f, 0x80, 0x80], 5), Err(IntegerError::Truncated));
        assert_eq!(decode(&[0x1f; 1], 5), Err(IntegerError::Truncated));
        assert_eq!(
            decode(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0x7f], 5),
            Err(IntegerError::Overflow)
        );
        let mut endless = vec![0x1f];
        endless.extend([0x80; 100]);
        assert_eq!(decode(&endless, 5), Err(IntegerError::Overflow));
        assert_eq!(decode(&[], 5), Err(IntegerError::Truncated));
    }
}
