//! Validators and conditional requests (RFC 9110 8.8 and 13): the `ETag` we send and the
//! `If-Match`, `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since` and `If-Range`
//! checks, each on its own. The order in which they apply is `crate::precondition`'s.
//!
//! The ETag is built from the file's size and modification time in nanoseconds, like nginx's
//! (`"<hex len>-<hex mtime ns>"`), so it needs no read of the content and changes whenever
//! either changes. It is strong: a file with the same size and mtime to the nanosecond is
//! assumed to have the same bytes. It lives in an inline array: no heap.
//!
//! A cache validator we cannot parse (`If-None-Match`, `If-Modified-Since`) is treated as
//! absent (send 200), the safe failure. `If-Match` is a precondition the client relies on, so a
//! list we cannot parse fails it (412); an `If-Unmodified-Since` that is not a date is ignored,
//! as RFC 9110 13.1.4 requires.

use std::time::{SystemTime, UNIX_EPOCH};

/// Longest ETag: two quotes, 16 hex digits of length, a dash, 32 hex digits of nanoseconds,
/// and a coding suffix of at most five bytes (`-zstd`).
const ETAG_CAP: usize = 56;
/// Longest coding suffix [`ETag::encoded`] accepts.
const SUFFIX_CAP: usize = 5;

/// A strong entity tag from size and mtime, quotes included.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ETag {
    buf: [u8; ETAG_CAP],
    len: u8,
}

impl ETag {
    /// The tag for a file of `len` bytes modified at `mtime` (times before 1970 count as 0).
    pub fn new(len: u64, mtime: SystemTime) -> ETag {
        let ns = mtime.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let mut tag = ETag {
            buf: [0; ETAG_CAP],
            len: 0,
        };
        tag.push(b'"');
        tag.push_hex(u128::from(len));
        tag.push(b'-');
        tag.push_hex(ns);
        tag.push(b'"');
        tag
    }

    /// The tag of a precompressed representation: [`ETag::new`] of the encoded file with the
    /// coding appended (`"1a2-17a2b3c4d5e6f00-gzip"`), so that it can never equal the plain
    /// file's tag even if both files share a size and a modification time. Codings longer
    /// than four bytes are cut to four.
    pub fn encoded(len: u64, mtime: SystemTime, coding: &str) -> ETag {
        let mut tag = ETag::new(len, mtime);
        tag.len -= 1; // the closing quote
        tag.push(b'-');
        for &b in coding.as_bytes().iter().take(SUFFIX_CAP - 1) {
            tag.push(b);
        }
        tag.push(b'"');
        tag
    }

    fn push(&mut self, b: u8) {
        self.buf[usize::from(self.len)] = b;
        self.len += 1;
    }

    fn push_hex(&mut self, v: u128) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let digits = if v == 0 {
            1
        } else {
            (128 - v.leading_zeros()).div_ceil(4)
        };
        for i in (0..digits).rev() {
            self.push(HEX[((v >> (i * 4)) & 15) as usize]);
        }
    }

    /// The tag as sent in the `ETag` header, e.g. `"400-17a2b3c4d5e6f00"`.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever pushed, so this cannot fail.
        std::str::from_utf8(&self.buf[..usize::from(self.len)]).unwrap_or("\"\"")
    }
}

impl std::fmt::Debug for ETag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ETag({})", self.as_str())
    }
}

/// Splits an `If-None-Match`/`If-Range` style list into (weak, opaque-tag with quotes) items;
/// `None` for the first malformed element, after which the caller stops.
fn entity_tags(header: &str) -> impl Iterator<Item = Option<(bool, &str)>> {
    let mut rest = header;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return None;
        }
        let (weak, tail) = match rest.strip_prefix("W/") {
            Some(t) => (true, t),
            None => (false, rest),
        };
        let parsed = tail.strip_prefix('"').and_then(|inner| {
            let end = inner.find('"')?;
            let opaque = &tail[..end + 2];
            let valid = opaque[1..opaque.len() - 1]
                .bytes()
                .all(|b| b == 0x21 || (0x23..=0x7e).contains(&b) || b >= 0x80);
            valid.then_some((opaque, &tail[end + 2..]))
        });
        match parsed {
            Some((opaque, after)) => {
                let after_trim = after.trim_start_matches([' ', '\t']);
                if !after_trim.is_empty() && !after_trim.starts_with(',') {
                    rest = "";
                    return Some(None);
                }
                rest = after;
                Some(Some((weak, opaque)))
            }
            None => {
                rest = "";
                Some(None)
            }
        }
    })
}

/// `If-None-Match` (RFC 9110 13.1.2): true when the header matches `etag` by weak comparison
/// (a `W/` prefix on either side is ignored), or is `*`. True means: answer 304 to GET/HEAD.
pub fn if_none_match(header: &str, etag: &ETag) -> bool {
    lists(header, etag, Comparison::Weak)
}

/// `If-Match` (RFC 9110 13.1.1): true when the header is `*` (we only evaluate it for a
/// representation that exists) or lists `etag` by strong comparison (a weak tag on either side
/// never matches). False means: answer 412. A malformed list is false from the malformed
/// element on.
pub fn if_match(header: &str, etag: &ETag) -> bool {
    lists(header, etag, Comparison::Strong)
}

/// How two entity tags are compared (RFC 9110 8.8.3.2).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Comparison {
    /// Opaque tags equal, `W/` ignored (`If-None-Match`).
    Weak,
    /// Opaque tags equal and neither weak (`If-Match`); our tags are strong.
    Strong,
}

/// Whether a field value of `*` or a list of entity tags names `etag`; the
/// list stops matching at its first malformed element.
fn lists(header: &str, etag: &ETag, how: Comparison) -> bool {
    let header = header.trim_matches([' ', '\t']);
    if header == "*" {
        return true;
    }
    let ours = etag.as_str();
    for item in entity_tags(header) {
        match item {
            Some((weak, opaque)) if opaque == ours && !(weak && how == Comparison::Strong) => {
                return true;
            }
            Some(_) => {}
            None => return false,
        }
    }
    false
}

/// `If-Unmodified-Since` (RFC 9110 13.1.4): `Some(false)` when the file was modified after
/// the given date (answer 412), `Some(true)` when not, `None` when the value is not one valid
/// HTTP-date and must be ignored. One-second granularity, as for `If-Modified-Since`.
pub fn unmodified_since(header: &str, mtime: SystemTime) -> Option<bool> {
    let since = httpdate::parse_http_date(header.trim_matches([' ', '\t'])).ok()?;
    Some(secs(mtime) <= secs(since))
}

/// `If-Modified-Since` (RFC 9110 13.1.3): true when the file has not been modified since the
/// given HTTP-date, compared at one-second granularity (HTTP dates have no fractions). An
/// invalid date gives false (serve the file).
pub fn not_modified_since(header: &str, mtime: SystemTime) -> bool {
    match httpdate::parse_http_date(header.trim_matches([' ', '\t'])) {
        Ok(since) => secs(mtime) <= secs(since),
        Err(_) => false,
    }
}

/// [`not_modified_since`] that also ignores a date later than `now` (the server's clock), as
/// RFC 7232 3.3 and RFC 2616 14.25 require: a client clock running ahead would otherwise get
/// 304 for a file modified after the request, until its date passes. Prefer this one.
pub fn not_modified_since_at(header: &str, mtime: SystemTime, now: SystemTime) -> bool {
    match httpdate::parse_http_date(header.trim_matches([' ', '\t'])) {
        Ok(since) if secs(since) <= secs(now) => secs(mtime) <= secs(since),
        _ => false,
    }
}

/// `If-Range` (RFC 9110 13.1.5): true when the `Range` header may be honoured. An entity tag
/// must match by strong comparison (a weak tag never does); a date must equal the file's
/// modification time to the second. Anything else: false, send the whole file.
pub fn if_range_matches(header: &str, etag: &ETag, mtime: SystemTime) -> bool {
    let header = header.trim_matches([' ', '\t']);
    if header.starts_with('"') || header.starts_with("W/") {
        let mut tags = entity_tags(header);
        return match (tags.next(), tags.next()) {
            (Some(Some((false, opaque))), None) => opaque == etag.as_str(),
            _ => false,
        };
    }
    match httpdate::parse_http_date(header) {
        Ok(date) => secs(date) == secs(mtime),
        Err(_) => false,
    }
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn mtime() -> SystemTime {
        // Sun, 06 Nov 1994 08:49:37 GMT plus 123456789 ns.
        UNIX_EPOCH + Duration::new(784_111_777, 123_456_789)
    }

    #[test]
    fn etag_format() {
        let t = ETag::new(1024, mtime());
        let ns = 784_111_777_123_456_789u128;
        assert_eq!(t.as_str(), format!("\"400-{ns:x}\""));
        assert_eq!(ETag::new(0, UNIX_EPOCH).as_str(), "\"0-0\"");
        assert_eq!(
            ETag::new(0, UNIX_EPOCH - Duration::from_secs(5)).as_str(),
            "\"0-0\""
        );
        // The latest time SystemTime holds on Linux is i64::MAX seconds.
        let big = ETag::new(
            u64::MAX,
            UNIX_EPOCH + Duration::new(i64::MAX as u64, 999_999_999),
        );
        assert!(big.as_str().len() <= ETAG_CAP);
        assert_eq!(big.as_str().len(), 2 + 16 + 1 + 24);
        assert!(big.as_str().starts_with("\"ffffffffffffffff-"));
        // Size and every nanosecond of mtime matter.
        assert_ne!(ETag::new(1, mtime()), ETag::new(2, mtime()));
        assert_ne!(
            ETag::new(1, mtime()),
            ETag::new(1, mtime() + Duration::from_nanos(1))
        );
        assert_eq!(format!("{t:?}"), format!("ETag({})", t.as_str()));
    }

    #[test]
    fn encoded_tags_differ_from_the_plain_one() {
        let plain = ETag::new(1024, mtime());
        let gz = ETag::encoded(1024, mtime(), "gzip");
        assert_eq!(
            gz.as_str(),
            format!("{}-gzip\"", &plain.as_str()[..plain.as_str().len() - 1])
        );
        assert_ne!(gz, plain);
        assert_ne!(gz, ETag::encoded(1024, mtime(), "br"));
        let big = ETag::encoded(
            u64::MAX,
            UNIX_EPOCH + Duration::new(i64::MAX as u64, 999_999_999),
            "zstd-and-more",
        );
        assert!(big.as_str().ends_with("-zstd\""));
        assert!(big.as_str().len() <= ETAG_CAP);
        // They round-trip through the validators like any strong tag.
        assert!(if_none_match(gz.as_str(), &gz));
        assert!(if_match(gz.as_str(), &gz));
        assert!(!if_match(gz.as_str(), &plain));
    }

    #[test]
    fn if_none_match_uses_weak_comparison() {
        let t = ETag::new(1024, mtime());
        let s = t.as_str();
        assert!(if_none_match(s, &t));
        assert!(if_none_match(&format!("W/{s}"), &t));
        assert!(if_none_match(&format!("\"x\", {s}"), &t));
        assert!(if_none_match(&format!("  \"x\" ,W/\"y\",{s} "), &t));
        assert!(if_none_match("*", &t));
        assert!(!if_none_match("\"x\"", &t));
        assert!(!if_none_match("", &t));
        assert!(!if_none_match(&s[1..s.len() - 1], &t)); // unquoted
        assert!(!if_none_match(&format!("w/{s}"), &t)); // W is case-sensitive
        assert!(!if_none_match(&format!("garbage {s}"), &t));
        assert!(!if_none_match(&format!("\"x\" junk, {s}"), &t));
        assert!(!if_none_match("\"unterminated", &t));
        assert!(!if_none_match("*, \"x\"", &t));
    }

    #[test]
    fn if_match_uses_strong_comparison() {
        let t = ETag::new(1024, mtime());
        let s = t.as_str();
        assert!(if_match(s, &t));
        assert!(if_match(" * ", &t));
        assert!(if_match(&format!("\"x\", {s}"), &t));
        assert!(!if_match(&format!("W/{s}"), &t));
        assert!(!if_match("\"x\"", &t));
        assert!(!if_match("", &t));
        assert!(!if_match(&s[1..s.len() - 1], &t)); // unquoted
        assert!(!if_match(&format!("junk, {s}"), &t));
        assert!(!if_match("*, \"x\"", &t));
    }

    #[test]
    fn if_unmodified_since_is_ignored_unless_one_date() {
        let m = mtime();
        assert_eq!(
            unmodified_since("Sun, 06 Nov 1994 08:49:37 GMT", m),
            Some(true)
        );
        assert_eq!(
            unmodified_since("Sun, 06 Nov 1994 08:49:38 GMT", m),
            Some(true)
        );
        assert_eq!(
            unmodified_since("Sun, 06 Nov 1994 08:49:36 GMT", m),
            Some(false)
        );
        assert_eq!(
            unmodified_since("Sunday, 06-Nov-94 08:49:36 GMT", m),
            Some(false)
        );
        assert_eq!(unmodified_since("yesterday", m), None);
        assert_eq!(
            unmodified_since(
                "Sun, 06 Nov 1994 08:49:36 GMT, Sun, 06 Nov 1994 08:49:38 GMT",
                m
            ),
            None
        );
    }

    #[test]
    fn if_modified_since_at_second_granularity() {
        let m = mtime();
        assert!(not_modified_since("Sun, 06 Nov 1994 08:49:37 GMT", m));
        assert!(not_modified_since("Sun, 06 Nov 1994 08:49:38 GMT", m));
        assert!(!not_modified_since("Sun, 06 Nov 1994 08:49:36 GMT", m));
        // The obsolete formats are accepted too (RFC 9110 5.6.7).
        assert!(not_modified_since("Sunday, 06-Nov-94 08:49:37 GMT", m));
        assert!(not_modified_since("Sun Nov  6 08:49:37 1994", m));
        assert!(!not_modified_since("yesterday", m));
        assert!(!not_modified_since("", m));
        assert!(!not_modified_since("Sun, 06 Nov 1994 08:49:37 GMT, x", m));
    }

    #[test]
    fn if_modified_since_in_the_future_is_ignored() {
        let m = mtime();
        let now = m + Duration::from_secs(60);
        assert!(not_modified_since_at(
            "Sun, 06 Nov 1994 08:49:37 GMT",
            m,
            now
        ));
        assert!(not_modified_since_at(
            "Sun, 06 Nov 1994 08:50:37 GMT",
            m,
            now
        ));
        assert!(!not_modified_since_at(
            "Sun, 06 Nov 1994 08:50:38 GMT",
            m,
            now
        ));
        assert!(!not_modified_since_at(
            "Sun, 06 Nov 1994 08:49:36 GMT",
            m,
            now
        ));
        assert!(!not_modified_since_at("nonsense", m, now));
    }

    #[test]
    fn if_range_is_strong_or_exact_date() {
        let m = mtime();
        let t = ETag::new(10, m);
        assert!(if_range_matches(t.as_str(), &t, m));
        assert!(!if_range_matches(&format!("W/{}", t.as_str()), &t, m));
        assert!(!if_range_matches("\"other\"", &t, m));
        assert!(!if_range_matches(&format!("{}, \"x\"", t.as_str()), &t, m));
        assert!(if_range_matches("Sun, 06 Nov 1994 08:49:37 GMT", &t, m));
        assert!(!if_range_matches("Sun, 06 Nov 1994 08:49:38 GMT", &t, m));
        assert!(!if_range_matches("Sun, 06 Nov 1994 08:49:36 GMT", &t, m));
        assert!(!if_range_matches("garbage", &t, m));
        assert!(!if_range_matches("", &t, m));
    }
}
