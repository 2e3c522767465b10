//! Durations in the DIST syntax: `40ms`, `250us`, `1s`, `2m`, `1h`, or a plain
//! number of seconds (`2.5`).
//!
//! One parser for every flag and config field that takes a time (`--duration`,
//! `--timeout`, `--warmup`, the parts of a DIST), so that `1e-3s` or `250µs` means
//! the same thing to the server, the load generator and the simulator.
//!
//! [`parse_secs_f64`] returns `f64` seconds computed as `number * unit` (the simulator's
//! arithmetic, which its seeded results depend on); [`parse_duration`] is the same
//! value as a [`Duration`].

use std::time::Duration;

use crate::error::DistError;

/// The largest duration accepted, in seconds (about 31 years). Far beyond any run,
/// and small enough that every value converts to a [`Duration`] without overflow.
pub const MAX_SECS: f64 = 1e9;

/// Parses a duration: a non-negative number with an optional unit (`ns`, `us` or
/// `µs`, `ms`, `s`, `m` or `min`, `h`); a plain number is seconds. Returns seconds.
pub fn parse_secs_f64(text: &str) -> Result<f64, DistError> {
    let t = text.trim();
    let bad = |why: String| DistError::BadDuration {
        input: text.to_string(),
        why,
    };
    if t.is_empty() {
        return Err(bad("empty; expected e.g. 40ms, 1s or 2.5".into()));
    }
    // "1e-3s" keeps its exponent: the unit starts at the first letter that is not an
    // exponent marker. Non-ASCII letters count, so `µs` splits where it should.
    let split = t
        .find(|c: char| c.is_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    if num.trim().is_empty() {
        return Err(bad(
            "expected a number with an optional unit, e.g. 40ms, 1s or 2.5".into(),
        ));
    }
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(bad(format!(
                "unknown unit `{other}` (use ns, us, ms, s, m or h)"
            )));
        }
    };
    let num = num.trim();
    let value: f64 = num.parse().map_err(|_| {
        bad(format!(
            "`{num}` is not a number; expected e.g. 40ms, 1s or 2.5"
        ))
    })?;
    let secs = value * scale;
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad("a duration must be finite and non-negative".into()));
    }
    if secs > MAX_SECS {
        return Err(bad(format!("too large (the limit is {MAX_SECS} s)")));
    }
    Ok(secs)
}

/// Parses a duration like [`parse_secs_f64`] and returns it as a [`Duration`] (rounded
/// to the nanosecond).
pub fn parse_duration(text: &str) -> Result<Duration, DistError> {
    parse_secs_f64(text).map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_units() {
        assert_eq!(parse_secs_f64("40ms").unwrap(), 0.04);
        assert_eq!(parse_secs_f64("1s").unwrap(), 1.0);
        assert_eq!(parse_secs_f64("2.5").unwrap(), 2.5);
        assert_eq!(parse_secs_f64("2m").unwrap(), 120.0);
        assert_eq!(parse_secs_f64("2min").unwrap(), 120.0);
        assert_eq!(parse_secs_f64("1h").unwrap(), 3600.0);
        assert_eq!(parse_secs_f64("1e-3s").unwrap(), 1e-3);
        assert_eq!(parse_secs_f64("1e+3").unwrap(), 1e3);
        assert_eq!(parse_secs_f64(" 5 ms ").unwrap(), 5.0 * 1e-3);
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("250µs").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("10ns").unwrap(), Duration::from_nanos(10));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
    }

    #[test]
    fn bad_durations_are_errors_that_quote_the_input() {
        for s in [
            "",
            "-1s",
            "1parsec",
            "inf",
            "nan",
            "ms",
            "1e",
            "1..2s",
            "2e9",
            "3 parsecs",
        ] {
            let err = parse_secs_f64(s).unwrap_err();
            assert!(matches!(err, DistError::BadDuration { .. }), "{s}: {err}");
            assert!(err.to_string().contains(&format!("`{s}`")), "{err}");
        }
        assert!(
            parse_duration("5parsecs")
                .unwrap_err()
                .why()
                .contains("unknown unit")
        );
    }
}
