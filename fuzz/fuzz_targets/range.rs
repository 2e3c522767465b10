//! Fuzzes `parse_range`, which turns a client's `Range` header into file offsets the server
//! will `sendfile` from.
//!
//! Every returned range must lie inside the file (`start <= end < len`), there are at most
//! `MAX_RANGES` of them, none is empty, and the bytes to send never exceed the file length
//! (overlaps are merged, the amplification defence). A zero-length file never yields ranges.
//! The answer must also not depend on the letter case of the unit or on blanks around specs.
//!
//! Input layout: bytes 0..8 are the file length (little-endian; byte 8 picks whether to use
//! it whole or reduced to a small length, where interesting edges live), the rest the header.

#![no_main]

use libfuzzer_sys::fuzz_target;
use servelab_http::{MAX_RANGES, RangeSet, parse_range};

fuzz_target!(|data: &[u8]| {
    if data.len() < 9 {
        return;
    }
    let raw = u64::from_le_bytes(data[..8].try_into().unwrap());
    let len = match data[8] % 4 {
        0 => raw,
        1 => raw % 1024,
        2 => raw % 16,
        _ => u64::MAX - raw % 16,
    };
    let header = String::from_utf8_lossy(&data[9..]);
    let answer = parse_range(&header, len);
    match answer {
        RangeSet::Whole | RangeSet::Unsatisfiable => {}
        RangeSet::Ranges(r) => {
            let rs = r.as_slice();
            assert!(len > 0, "ranges on an empty file");
            assert!(
                !rs.is_empty() && rs.len() <= MAX_RANGES,
                "{} ranges",
                rs.len()
            );
            for b in rs {
                assert!(b.start <= b.end && b.end < len, "{b:?} outside 0..{len}");
                assert!(!b.is_empty());
            }
            assert!(
                r.total_len() <= len,
                "{} bytes from a {len}-byte file",
                r.total_len()
            );
        }
    }
    if let Some((unit, rest)) = header.split_once('=') {
        let upper = format!("{}={rest}", unit.to_ascii_uppercase());
        assert_eq!(
            parse_range(&upper, len),
            answer,
            "unit case changed the answer"
        );
    }
});
