//! `--start-at TIME`: an absolute UTC time (RFC 3339) at which a run starts,
//! so that the segments of one run on several machines start together.
//!
//! The segments of a Kubernetes Indexed Job start when their pods are
//! scheduled and their image is pulled, seconds apart; a run split over them
//! is one run only if its segments load the server at the same time. Every
//! pod gets the same `--start-at`, waits for it, and records how late it
//! started ([`Report::start_lag_ms`](crate::Report::start_lag_ms)); a pod that
//! arrives after the time starts at once and says so in that lag.
//!
//! The parser takes what RFC 3339 (5.6) writes: `2026-11-25T18:00:00Z`, with
//! optional fractions of a second and a numeric offset (`+01:00`), `t`/`z` in
//! lower case, and a space in place of the `T`. It is small and exact: the
//! calendar is `servelab_http::date` (days from the civil date, and the RFC 3339
//! formatter), the same one the server's dates use, which spares the workspace a
//! date crate for one field.

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::LoadError;
use servelab_http::date::{days_from_civil, fmt_rfc3339};

/// The furthest ahead a start may be: a run that waits longer is a mistake
/// (a wrong date), not a plan.
pub const MAX_AHEAD: Duration = Duration::from_secs(24 * 3600);

/// A start time, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct StartAt(pub SystemTime);

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

impl FromStr for StartAt {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<StartAt, LoadError> {
        let bad = || {
            LoadError::Spec(format!(
                "--start-at `{s}`: expected an RFC 3339 time, e.g. 2026-11-25T18:00:00Z"
            ))
        };
        let b = s.trim().as_bytes();
        let num = |r: std::ops::Range<usize>| -> Result<u32, LoadError> {
            let part = b.get(r).ok_or_else(bad)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return Err(bad());
            }
            std::str::from_utf8(part)
                .map_err(|_| bad())?
                .parse()
                .map_err(|_| bad())
        };
        let sep = |i: usize, ok: &[u8]| b.get(i).is_some_and(|c| ok.contains(c));
        if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
            return Err(bad());
        }
        let (y, mo, d) = (i64::from(num(0..4)?), num(5..7)?, num(8..10)?);
        let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 {
            return Err(bad());
        }
        // 60 is a leap second; it is read as the next second's start.
        if sec > 60 {
            return Err(bad());
        }
        let mut i = 19;
        let mut nanos = 0u64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - start < 9 {
                    nanos = nanos * 10 + u64::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return Err(bad());
            }
            for _ in (i - start).min(9)..9 {
                nanos *= 10;
            }
        }
        let offset: i64 = match b.get(i..) {
            Some(b"Z" | b"z") => 0,
            Some([sign @ (b'+' | b'-'), ..]) if b.len() == i + 6 && b[i + 3] == b':' => {
                let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                if oh > 23 || om > 59 {
                    return Err(bad());
                }
                let o = i64::from(oh * 3600 + om * 60);
                if *sign == b'-' { -o } else { o }
            }
            _ => return Err(bad()),
        };
        let secs =
            days_from_civil(y, mo, d) * 86_400 + i64::from(h * 3600 + mi * 60 + sec) - offset;
        let secs = u64::try_from(secs).map_err(|_| bad())?;
        Ok(StartAt(
            UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_nanos(nanos),
        ))
    }
}

/// RFC 3339 in UTC, to the millisecond: `2026-11-25T18:00:00.000Z`.
impl fmt::Display for StartAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let since = self.0.duration_since(UNIX_EPOCH).unwrap_or_default();
        let text = fmt_rfc3339(since.as_secs());
        // "YYYY-MM-DDTHH:MM:SS" (ASCII digits), then the milliseconds and the zone.
        let seconds = std::str::from_utf8(&text[..19]).map_err(|_| fmt::Error)?;
        write!(f, "{seconds}.{:03}Z", since.subsec_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unix(s: &str) -> u64 {
        s.parse::<StartAt>()
            .unwrap()
            .0
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs()
    }

    #[test]
    fn reads_rfc_3339_as_date_does() {
        // The figures are `date -u -d TIME +%s`.
        assert_eq!(unix("2026-11-25T18:00:00Z"), 1_795_629_600);
        assert_eq!(unix("1970-01-01T00:00:00Z"), 0);
        assert_eq!(unix("2000-02-29T12:34:56z"), 951_827_696);
        assert_eq!(unix("2026-11-25 19:00:00+01:00"), 1_795_629_600);
        assert_eq!(unix("2026-11-25T17:30:00-00:30"), 1_795_629_600);
        let t: StartAt = "2026-11-25T18:00:00.25Z".parse().unwrap();
        assert_eq!(t.0.duration_since(UNIX_EPOCH).unwrap().subsec_millis(), 250);
        assert_eq!(t.to_string(), "2026-11-25T18:00:00.250Z");
        assert_eq!(
            "2024-12-31T23:59:59Z"
                .parse::<StartAt>()
                .unwrap()
                .to_string(),
            "2024-12-31T23:59:59.000Z"
        );
    }

    #[test]
    fn refuses_what_is_not_a_time() {
        for bad in [
            "18:00",
            "2026-11-25",
            "2026-11-25T18:00:00",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-11-25T24:00:00Z",
            "2026-11-25T18:00:00.Z",
            "2026-11-25T18:00:00+0100",
            "1969-12-31T23:59:59Z",
            "tomorrow",
        ] {
            let e = bad.parse::<StartAt>().unwrap_err().to_string();
            assert!(
                e.contains("--start-at") && e.contains("RFC 3339"),
                "{bad}: {e}"
            );
        }
    }
}
