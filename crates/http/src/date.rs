//! Dates as HTTP and the access log write them, formatted by hand into fixed arrays.
//!
//! `Date` and `Last-Modified` use IMF-fixdate (RFC 9110 5.6.7, `Sun, 06 Nov 1994 08:49:37 GMT`,
//! always 29 bytes); the Combined Log Format uses `10/Oct/2000:13:55:36 +0000` (26 bytes, UTC
//! here). Both come from the same civil-from-days conversion (Howard Hinnant's algorithm),
//! written out so that formatting needs no allocation and no time-zone database. The server
//! formats once per second into an [`HttpDate`] and copies the bytes into every response.
//! Times before 1970 are clamped to the epoch and after 9999 to the end of 9999, the range
//! four-digit years can express.

use std::time::{SystemTime, UNIX_EPOCH};

const DAYS: [&[u8; 3]; 7] = [b"Thu", b"Fri", b"Sat", b"Sun", b"Mon", b"Tue", b"Wed"];
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];
/// 9999-12-31T23:59:59Z.
const MAX_SECS: u64 = 253_402_300_799;

/// A broken-down UTC time.
struct Civil {
    year: u32,
    month: u32, // 1..=12
    day: u32,   // 1..=31
    hour: u32,
    min: u32,
    sec: u32,
    weekday: usize, // 0 = Thursday, like 1970-01-01
}

fn civil(unix_secs: u64) -> Civil {
    let secs = unix_secs.min(MAX_SECS);
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Hinnant's civil_from_days, shifted so that the era starts on 0000-03-01. All values are
    // non-negative because we start at 1970.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March-based
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    Civil {
        year: year as u32,
        month: month as u32,
        day: day as u32,
        hour: (rem / 3600) as u32,
        min: (rem / 60 % 60) as u32,
        sec: (rem % 60) as u32,
        weekday: (days % 7) as usize,
    }
}

fn two(out: &mut [u8], v: u32) {
    out[0] = b'0' + (v / 10) as u8;
    out[1] = b'0' + (v % 10) as u8;
}

fn four(out: &mut [u8], v: u32) {
    two(&mut out[..2], v / 100);
    two(&mut out[2..4], v % 100);
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`, the
/// inverse of the conversion the formatters use), for parsers of absolute times.
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Formats seconds since the epoch as RFC 3339 in UTC, e.g. `2026-11-25T18:00:00Z`.
pub fn fmt_rfc3339(unix_secs: u64) -> [u8; 20] {
    let c = civil(unix_secs);
    let mut out = *b"1970-01-01T00:00:00Z";
    four(&mut out[..4], c.year);
    two(&mut out[5..7], c.month);
    two(&mut out[8..10], c.day);
    two(&mut out[11..13], c.hour);
    two(&mut out[14..16], c.min);
    two(&mut out[17..19], c.sec);
    out
}

/// Seconds since the Unix epoch, 0 for times before it.
pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Formats `t` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
pub fn fmt_http_date(t: SystemTime) -> [u8; 29] {
    let c = civil(unix_secs(t));
    let mut out = *b"Thu, 01 Jan 1970 00:00:00 GMT";
    out[..3].copy_from_slice(DAYS[c.weekday]);
    two(&mut out[5..7], c.day);
    out[8..11].copy_from_slice(MONTHS[c.month as usize - 1]);
    four(&mut out[12..16], c.year);
    two(&mut out[17..19], c.hour);
    two(&mut out[20..22], c.min);
    two(&mut out[23..25], c.sec);
    out
}

/// Formats Unix seconds as a Common Log Format date in UTC, e.g. `10/Oct/2000:13:55:36 +0000`.
pub fn fmt_clf_date(unix_secs: u64) -> [u8; 26] {
    let c = civil(unix_secs);
    let mut out = *b"01/Jan/1970:00:00:00 +0000";
    two(&mut out[0..2], c.day);
    out[3..6].copy_from_slice(MONTHS[c.month as usize - 1]);
    four(&mut out[7..11], c.year);
    two(&mut out[12..14], c.hour);
    two(&mut out[15..17], c.min);
    two(&mut out[18..20], c.sec);
    out
}

/// Both date formats for one second, refreshed when the second changes: the per-thread cache
/// a server keeps so that a response costs a copy, not a conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpDate {
    secs: u64,
    http: [u8; 29],
    clf: [u8; 26],
}

impl HttpDate {
    /// The formatted dates for `now`.
    pub fn new(now: SystemTime) -> Self {
        let secs = unix_secs(now);
        HttpDate {
            secs,
            http: fmt_http_date(now),
            clf: fmt_clf_date(secs),
        }
    }

    /// Moves the cache to `now`; returns true if the second changed (and so did the bytes).
    pub fn update(&mut self, now: SystemTime) -> bool {
        if unix_secs(now) == self.secs {
            return false;
        }
        *self = HttpDate::new(now);
        true
    }

    /// The cached second, as Unix seconds.
    pub fn unix_secs(&self) -> u64 {
        self.secs
    }

    /// The IMF-fixdate for the `Date` header.
    pub fn http(&self) -> &[u8; 29] {
        &self.http
    }

    /// The Common Log Format date.
    pub fn clf(&self) -> &[u8; 26] {
        &self.clf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn http(secs: u64) -> String {
        String::from_utf8(fmt_http_date(at(secs)).to_vec()).unwrap()
    }

    fn clf(secs: u64) -> String {
        String::from_utf8(fmt_clf_date(secs).to_vec()).unwrap()
    }

    #[test]
    fn known_vectors() {
        assert_eq!(http(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT"); // RFC 9110's example
        // Apache docs' example, 10/Oct/2000:13:55:36 -0700, in UTC.
        assert_eq!(clf(971_211_336), "10/Oct/2000:20:55:36 +0000");
        assert_eq!(http(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT"); // 400-year leap day
        assert_eq!(http(1_709_164_800), "Thu, 29 Feb 2024 00:00:00 GMT");
        assert_eq!(http(4_107_542_400), "Mon, 01 Mar 2100 00:00:00 GMT"); // 2100 is not leap: the day after 28 Feb
        assert_eq!(http(4_107_456_000), "Sun, 28 Feb 2100 00:00:00 GMT");
        assert_eq!(clf(1_704_067_199), "31/Dec/2023:23:59:59 +0000");
        assert_eq!(clf(1_704_067_200), "01/Jan/2024:00:00:00 +0000");
        assert_eq!(http(MAX_SECS), "Fri, 31 Dec 9999 23:59:59 GMT");
        assert_eq!(http(u64::MAX / 2), "Fri, 31 Dec 9999 23:59:59 GMT"); // clamped
        assert_eq!(
            fmt_http_date(UNIX_EPOCH - Duration::from_secs(10)),
            *b"Thu, 01 Jan 1970 00:00:00 GMT"
        );
    }

    #[test]
    fn agrees_with_httpdate_on_many_instants() {
        // Every day from 1970 to past 2100 at a varying time of day, plus leap-year edges.
        let mut secs = 0u64;
        while secs < 4_200_000_000 {
            let ours = http(secs);
            assert_eq!(ours, httpdate::fmt_http_date(at(secs)), "{secs}");
            // The CLF form shows the same civil time.
            let c = clf(secs);
            let (d, m, y) = (&ours[5..7], &ours[8..11], &ours[12..16]);
            assert_eq!(&c[..11], format!("{d}/{m}/{y}"), "{secs}");
            assert_eq!(&c[12..20], &ours[17..25]);
            secs += 86_400 + 3_607;
        }
    }

    #[test]
    fn cache_changes_once_per_second() {
        let mut d = HttpDate::new(at(1_000));
        assert!(!d.update(at(1_000) + Duration::from_millis(999)));
        assert!(d.update(at(1_001)));
        assert_eq!(d.unix_secs(), 1_001);
        assert_eq!(d.http(), &fmt_http_date(at(1_001)));
        assert_eq!(d.clf(), &fmt_clf_date(1_001));
    }

    #[test]
    fn rfc3339_and_days_from_civil_are_inverse() {
        assert_eq!(&fmt_rfc3339(0), b"1970-01-01T00:00:00Z");
        assert_eq!(&fmt_rfc3339(784_111_777), b"1994-11-06T08:49:37Z");
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2026, 11, 25), (2100, 3, 1)] {
            let secs = days_from_civil(y, m, d) as u64 * 86_400;
            let text = fmt_rfc3339(secs);
            assert_eq!(&text[..10], format!("{y:04}-{m:02}-{d:02}").as_bytes());
        }
        assert_eq!(days_from_civil(1969, 12, 31), -1);
    }
}
