//! Which response statuses count as ok: `--expect-status 200-399` (the
//! default), `200,304`, `200-299,404`.
//!
//! A redirect or a `304 Not Modified` is a server doing its job: wrk counts only
//! statuses above 399 as errors, and k6 expects 200 to 399. So does servelab by
//! default; a run that must see exactly one status says so. Any other valid
//! response is an error of class `unexpected_status`.
//!
//! The set is a bitmap of the 600 codes 0 to 599, so that the check on the hot
//! path is one shift and one mask, and the spec stays `Copy`.

use std::fmt;
use std::str::FromStr;

use crate::error::LoadError;

/// Words in the bitmap: 10 x 64 = 640 bits, for codes 0 to 599.
const WORDS: usize = 10;
/// The lowest and highest status a response can carry (RFC 9110, 15).
const CODES: std::ops::RangeInclusive<u16> = 100..=599;

/// A set of expected status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectStatus {
    bits: [u64; WORDS],
}

impl Default for ExpectStatus {
    /// 200 to 399: success and redirection, as k6 expects.
    fn default() -> ExpectStatus {
        let mut e = ExpectStatus { bits: [0; WORDS] };
        e.insert_range(200, 399);
        e
    }
}

impl ExpectStatus {
    fn insert_range(&mut self, lo: u16, hi: u16) {
        for code in lo..=hi {
            self.bits[usize::from(code / 64)] |= 1 << (code % 64);
        }
    }

    /// Whether a response with this status is ok.
    #[inline]
    pub fn contains(&self, status: u16) -> bool {
        let word = usize::from(status / 64);
        word < WORDS && self.bits[word] & (1 << (status % 64)) != 0
    }
}

impl FromStr for ExpectStatus {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<ExpectStatus, LoadError> {
        let bad = |why: String| LoadError::Spec(format!("--expect-status `{s}`: {why}"));
        let code = |t: &str| -> Result<u16, LoadError> {
            match t.trim().parse::<u16>() {
                Ok(c) if CODES.contains(&c) => Ok(c),
                _ => Err(bad(format!(
                    "`{}` is not a status code (100 to 599)",
                    t.trim()
                ))),
            }
        };
        let mut e = ExpectStatus { bits: [0; WORDS] };
        for item in s.split(',') {
            let (lo, hi) = match item.split_once('-') {
                Some((a, b)) => (code(a)?, code(b)?),
                None => (code(item)?, code(item)?),
            };
            if lo > hi {
                return Err(bad(format!("the range `{}` runs backwards", item.trim())));
            }
            e.insert_range(lo, hi);
        }
        Ok(e)
    }
}

/// The canonical form: sorted ranges, `200-399` or `200,304`.
impl fmt::Display for ExpectStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut code = *CODES.start();
        while code <= *CODES.end() {
            if !self.contains(code) {
                code += 1;
                continue;
            }
            let lo = code;
            while code < *CODES.end() && self.contains(code + 1) {
                code += 1;
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if lo == code {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{code}")?;
            }
            code += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_success_and_redirection() {
        let e = ExpectStatus::default();
        assert!(e.contains(200) && e.contains(301) && e.contains(304) && e.contains(399));
        assert!(!e.contains(199) && !e.contains(400) && !e.contains(500));
        assert!(!e.contains(0) && !e.contains(u16::MAX));
        assert_eq!(e.to_string(), "200-399");
    }

    #[test]
    fn lists_and_ranges_parse_and_print_canonically() {
        let e: ExpectStatus = "304, 200".parse().unwrap();
        assert!(e.contains(200) && e.contains(304) && !e.contains(301));
        assert_eq!(e.to_string(), "200,304");
        let e: ExpectStatus = "200-299,404,201".parse().unwrap();
        assert_eq!(e.to_string(), "200-299,404");
        assert_eq!("599".parse::<ExpectStatus>().unwrap().to_string(), "599");
    }

    #[test]
    fn bad_lists_name_the_flag_and_the_item() {
        for (bad, says) in [
            ("2xx", "`2xx` is not a status code"),
            ("200-", "`` is not a status code"),
            ("600", "`600`"),
            ("99", "`99`"),
            ("399-200", "runs backwards"),
            ("", "is not a status code"),
        ] {
            let e = bad.parse::<ExpectStatus>().unwrap_err().to_string();
            assert!(
                e.contains("--expect-status") && e.contains(says),
                "{bad}: {e}"
            );
        }
    }
}
