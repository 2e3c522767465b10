//! `Range: bytes=...` (RFC 9110 14.1.2 and 14.2): which parts of a file to send.
//!
//! Decisions, each a place where servers have been exploited:
//! - Any syntax error, a unit other than `bytes`, or more than [`MAX_RANGES`] range specs makes
//!   the whole header ignored ([`RangeSet::Whole`], a plain 200), as RFC 9110 14.2 permits. A
//!   cap on the count bounds the work and the multipart framing a single request can demand.
//! - Numbers saturate at `u64::MAX` instead of overflowing, and every bound is clamped to the
//!   file: a `last-pos` past the end means "to the end", a suffix longer than the file means
//!   "the whole file". nginx's CVE-2017-7529 was an integer overflow on exactly these values.
//! - Ranges are kept in request order unless two of them overlap; then all are sorted and
//!   merged (RFC 9110 14.2 lets a server coalesce). Sending the same bytes many times over is
//!   the amplification behind Apache's CVE-2011-3192; after merging, the bytes sent never
//!   exceed the file length.
//! - A zero-length file has no byte to send, so every range set on it is unsatisfiable (416
//!   `bytes */0`) when syntactically valid.
//!
//! No heap: [`Ranges`] is an inline array.

/// The most range specs a `Range` header may hold before we ignore it and send the whole file.
pub const MAX_RANGES: usize = 16;

/// An inclusive byte range inside a file: `start..=end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ByteRange {
    /// First byte.
    pub start: u64,
    /// Last byte, inclusive.
    pub end: u64,
}

impl ByteRange {
    /// Number of bytes in the range (0 if `end < start`, which `parse_range` never produces).
    pub fn len(&self) -> u64 {
        if self.end < self.start {
            0
        } else {
            (self.end - self.start).saturating_add(1)
        }
    }

    /// True when the range holds no byte (never for ranges from `parse_range`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Up to [`MAX_RANGES`] satisfiable ranges, stored inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ranges {
    items: [ByteRange; MAX_RANGES],
    count: u8,
}

impl Ranges {
    /// The ranges, in the order they will be sent.
    pub fn as_slice(&self) -> &[ByteRange] {
        &self.items[..usize::from(self.count)]
    }

    /// Total bytes over all ranges (saturating).
    pub fn total_len(&self) -> u64 {
        self.as_slice()
            .iter()
            .fold(0u64, |acc, r| acc.saturating_add(r.len()))
    }

    fn push(&mut self, r: ByteRange) {
        // parse_range counts specs before pushing, so this never overflows the array.
        if usize::from(self.count) < MAX_RANGES {
            self.items[usize::from(self.count)] = r;
            self.count += 1;
        }
    }

    /// If any two ranges overlap, sorts them by start and merges overlapping or adjacent ones.
    fn coalesce_if_overlapping(&mut self) {
        let n = usize::from(self.count);
        let items = &mut self.items[..n];
        let overlaps = (0..n).any(|i| {
            (i + 1..n).any(|j| items[i].start <= items[j].end && items[j].start <= items[i].end)
        });
        if !overlaps {
            return;
        }
        items.sort_unstable_by_key(|r| (r.start, r.end));
        let mut merged = Ranges::default();
        let mut current = items[0];
        for r in &items[1..] {
            if r.start <= current.end.saturating_add(1) {
                current.end = current.end.max(r.end);
            } else {
                merged.push(current);
                current = *r;
            }
        }
        merged.push(current);
        *self = merged;
    }
}

/// What to send for a request with a `Range` header.
// The inline `Ranges` (264 bytes) makes this enum large; boxing it would put a heap
// allocation on every range request, which is what the inline array exists to avoid.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeSet {
    /// Ignore the header and send the whole file with 200 (no header, invalid, unknown unit,
    /// too many ranges).
    Whole,
    /// Send these ranges: one gives a 206 with `Content-Range`, several a 206
    /// `multipart/byteranges` (see `Multipart`).
    Ranges(Ranges),
    /// Valid, but no range overlaps the file: 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Interprets a `Range` header value for a file of `len` bytes. See the module docs.
pub fn parse_range(header: &str, len: u64) -> RangeSet {
    let Some((unit, set)) = header.split_once('=') else {
        return RangeSet::Whole;
    };
    if !unit.eq_ignore_ascii_case("bytes") {
        return RangeSet::Whole;
    }
    let mut ranges = Ranges::default();
    let mut specs = 0usize;
    for spec in set.split(',') {
        let spec = spec.trim_matches([' ', '\t']);
        if spec.is_empty() {
            continue; // empty list elements are allowed (RFC 9110 5.6.1)
        }
        specs += 1;
        if specs > MAX_RANGES {
            return RangeSet::Whole;
        }
        let Some((first, last)) = spec.split_once('-') else {
            return RangeSet::Whole;
        };
        if first.is_empty() {
            // suffix-range: the last `n` bytes.
            let Some(n) = number(last) else {
                return RangeSet::Whole;
            };
            if n == 0 || len == 0 {
                continue; // unsatisfiable
            }
            ranges.push(ByteRange {
                start: len - n.min(len),
                end: len - 1,
            });
        } else {
            let Some(first) = number(first) else {
                return RangeSet::Whole;
            };
            let last = if last.is_empty() {
                None
            } else {
                match number(last) {
                    Some(l) if l >= first => Some(l),
                    // Invalid: last-pos before first-pos, or not a number.
                    _ => return RangeSet::Whole,
                }
            };
            if first >= len {
                continue; // unsatisfiable
            }
            ranges.push(ByteRange {
                start: first,
                end: last.map_or(len - 1, |l| l.min(len - 1)),
            });
        }
    }
    if specs == 0 {
        return RangeSet::Whole; // "bytes=" or "bytes=,": the grammar needs one spec
    }
    if ranges.count == 0 {
        return RangeSet::Unsatisfiable;
    }
    ranges.coalesce_if_overlapping();
    RangeSet::Ranges(ranges)
}

/// 1*DIGIT, saturating at `u64::MAX` (a position that large is past any file anyway).
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(s.bytes().fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(header: &str, len: u64) -> Vec<(u64, u64)> {
        match parse_range(header, len) {
            RangeSet::Ranges(r) => r.as_slice().iter().map(|r| (r.start, r.end)).collect(),
            other => panic!("{header:?} on {len}: {other:?}"),
        }
    }

    #[test]
    fn single_ranges() {
        assert_eq!(ranges("bytes=0-99", 1000), [(0, 99)]);
        assert_eq!(ranges("bytes=100-", 1000), [(100, 999)]);
        assert_eq!(ranges("bytes=-500", 1000), [(500, 999)]);
        assert_eq!(ranges("bytes=0-0", 1000), [(0, 0)]);
        assert_eq!(ranges("bytes=999-999", 1000), [(999, 999)]);
        assert_eq!(ranges("bytes=500-5000", 1000), [(500, 999)]); // clamped
        assert_eq!(ranges("bytes=-5000", 1000), [(0, 999)]); // suffix longer than file
        assert_eq!(ranges("BYTES=1-2", 1000), [(1, 2)]); // unit is case-insensitive
        assert_eq!(ranges("bytes=0-", 1), [(0, 0)]);
    }

    #[test]
    fn lists_keep_request_order_without_overlap() {
        assert_eq!(
            ranges("bytes=500-599, 0-99,  ,-10", 1000),
            [(500, 599), (0, 99), (990, 999)]
        );
        // Unsatisfiable members are dropped when another one is satisfiable.
        assert_eq!(ranges("bytes=5000-,0-1", 1000), [(0, 1)]);
        assert_eq!(ranges("bytes=-0,0-1", 1000), [(0, 1)]);
    }

    #[test]
    fn overlapping_ranges_are_sorted_and_merged() {
        assert_eq!(ranges("bytes=50-150,0-99", 1000), [(0, 150)]);
        assert_eq!(ranges("bytes=0-1,0-1,0-1", 1000), [(0, 1)]);
        assert_eq!(
            ranges("bytes=200-299,0-10,250-400", 1000),
            [(0, 10), (200, 400)]
        );
        assert_eq!(ranges("bytes=0-9,10-19,5-6", 1000), [(0, 19)]); // adjacent after sorting
        // Apache-killer shape: many overlapping ranges collapse to the file, once.
        let killer = format!("bytes=0-,{}", vec!["5-"; 15].join(","));
        assert_eq!(ranges(&killer, 1000), [(0, 999)]);
    }

    #[test]
    fn invalid_or_ignored_headers_serve_the_whole_file() {
        for h in [
            "",
            "bytes",
            "bytes=",
            "bytes=,",
            "bytes=abc",
            "bytes=1-0",
            "bytes=5-4",
            "bytes=--5",
            "bytes=1-2-3",
            "bytes=0x10-",
            "bytes= 1 -2",
            "bytes=+1-2",
            "bytes=-",
            "items=0-1",
            "bytes =0-1",
            "bytes=0-1,x",
            "bytes=1-a",
            "bytes=-1-",
        ] {
            assert_eq!(parse_range(h, 1000), RangeSet::Whole, "{h:?}");
        }
        // 16 ranges are served, 17 are ignored (documented cap).
        let n = |k: usize| {
            (0..k)
                .map(|i| format!("{}-{}", i * 10, i * 10 + 1))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert!(matches!(
            parse_range(&format!("bytes={}", n(16)), 1000),
            RangeSet::Ranges(r) if r.as_slice().len() == 16
        ));
        assert_eq!(
            parse_range(&format!("bytes={}", n(17)), 1000),
            RangeSet::Whole
        );
    }

    #[test]
    fn unsatisfiable() {
        assert_eq!(parse_range("bytes=1000-", 1000), RangeSet::Unsatisfiable);
        assert_eq!(
            parse_range("bytes=1000-2000", 1000),
            RangeSet::Unsatisfiable
        );
        assert_eq!(parse_range("bytes=-0", 1000), RangeSet::Unsatisfiable);
        assert_eq!(
            parse_range("bytes=5000-,2000-", 1000),
            RangeSet::Unsatisfiable
        );
        // Zero-length file: nothing can be sent.
        assert_eq!(parse_range("bytes=0-", 0), RangeSet::Unsatisfiable);
        assert_eq!(parse_range("bytes=-5", 0), RangeSet::Unsatisfiable);
        assert_eq!(parse_range("bytes=x", 0), RangeSet::Whole);
    }

    #[test]
    fn huge_numbers_saturate_and_clamp() {
        let max = u64::MAX;
        assert_eq!(
            ranges("bytes=0-99999999999999999999999999999", 1000),
            [(0, 999)]
        );
        assert_eq!(
            ranges("bytes=-99999999999999999999999999999", 1000),
            [(0, 999)]
        );
        assert_eq!(
            parse_range("bytes=99999999999999999999999999999-", 1000),
            RangeSet::Unsatisfiable
        );
        assert_eq!(
            ranges(&format!("bytes={}-", max - 1), max),
            [(max - 1, max - 1)]
        );
        assert_eq!(ranges(&format!("bytes=-{max}"), max), [(0, max - 1)]);
        assert_eq!(ranges(&format!("bytes=0-{max}"), max), [(0, max - 1)]);
        let whole = ByteRange { start: 0, end: max };
        assert_eq!(whole.len(), max); // saturates instead of wrapping to 0
        assert_eq!(ByteRange { start: 5, end: 4 }.len(), 0);
    }

    /// Regression test named after nginx CVE-2017-7529: a suffix range larger than the file
    /// combined with a second range made nginx's size sum overflow and leak memory from the
    /// cache (the public exploit sends `bytes=-<len + n>,-9223372036854<...>`). Every range we
    /// produce must lie inside the file and the total must not exceed the file length.
    #[test]
    fn cve_2017_7529_overflowing_suffix_ranges() {
        let len = 612u64;
        for h in [
            "bytes=-17208,-9223372036854758792",
            "bytes=-9223372036854775808,-9223372036854775808",
            "bytes=-18446744073709551615,-18446744073709551615",
            "bytes=-18446744073709551616,0-",
            "bytes=0-18446744073709551615,-612",
        ] {
            match parse_range(h, len) {
                RangeSet::Ranges(r) => {
                    for br in r.as_slice() {
                        assert!(br.start <= br.end && br.end < len, "{h}: {br:?}");
                    }
                    assert!(r.total_len() <= len, "{h}");
                }
                other => panic!("{h}: {other:?}"),
            }
        }
    }

    #[test]
    fn generated_headers_stay_in_bounds() {
        let mut next = crate::test_rng::xorshift(0x2545_F491_4F6C_DD1D);
        let numbers = [
            "0",
            "1",
            "5",
            "99",
            "100",
            "101",
            "18446744073709551615",
            "9999999999999999999999",
        ];
        for _ in 0..5000 {
            let len = [0u64, 1, 100, 101, u64::MAX][(next() % 5) as usize];
            let mut h = String::from("bytes=");
            for i in 0..(next() % 6) {
                if i > 0 {
                    h.push(',');
                }
                let a = numbers[(next() % 8) as usize];
                let b = numbers[(next() % 8) as usize];
                match next() % 3 {
                    0 => h.push_str(&format!("{a}-{b}")),
                    1 => h.push_str(&format!("{a}-")),
                    _ => h.push_str(&format!("-{b}")),
                }
            }
            if let RangeSet::Ranges(r) = parse_range(&h, len) {
                assert!(!r.as_slice().is_empty());
                for br in r.as_slice() {
                    assert!(br.start <= br.end && br.end < len, "{h} on {len}: {br:?}");
                }
                assert!(r.total_len() <= len.saturating_mul(MAX_RANGES as u64));
            }
        }
    }
}
