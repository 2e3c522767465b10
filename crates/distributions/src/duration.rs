//! Durations in the DIST syntax: `40ms`, `250us`, `1s`, `2m`, `1h`, a plain
//! number of seconds (`2.5`), or parts that add up (`1h30m`, `1m30s`).
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
/// `µs`, `ms`, `s`, `m` or `min`, `h`); a plain number is seconds. Several
/// parts, each with its unit and from the largest unit to the smallest, add up
/// (`1h30m`, `1m30s`, `2m 0.5s`, `1s250ms`), as humantime, Go and systemd write
/// them. Returns seconds.
pub fn parse_secs_f64(text: &str) -> Result<f64, DistError> {
    let t = text.trim();
    let bad = |why: String| DistError::BadDuration {
        input: text.to_string(),
        why,
    };
    if t.is_empty() {
        return Err(bad("empty; expected e.g. 40ms, 1s or 2.5".into()));
    }
    let parts = split_parts(t);
    let mut secs = 0.0;
    let mut previous: Option<(&str, f64)> = None;
    for (num, unit) in &parts {
        if parts.len() > 1 && unit.is_empty() {
            return Err(bad(format!(
                "`{num}` has no unit: in a compound duration every part has one (e.g. 1m30s)"
            )));
        }
        let part = parse_part(num, unit).map_err(bad)?;
        if let Some((before, scale)) = previous {
            if unit_scale(unit).is_some_and(|s| s >= scale) {
                return Err(bad(format!(
                    "`{unit}` after `{before}`: write the parts from the largest unit \
                     to the smallest (e.g. 1h30m)"
                )));
            }
        }
        previous = Some((unit, unit_scale(unit).unwrap_or(1.0)));
        // One part keeps `number * unit` exactly (the simulator's arithmetic).
        secs += part;
    }
    if !secs.is_finite() || secs < 0.0 {
        return Err(bad("a duration must be finite and non-negative".into()));
    }
    if secs > MAX_SECS {
        return Err(bad(format!("too large (the limit is {MAX_SECS} s)")));
    }
    Ok(secs)
}

/// Splits `1h30m` into `[("1", "h"), ("30", "m")]` and `2.5` into `[("2.5", "")]`.
///
/// A number runs to the first letter that is not an exponent marker (so `1e-3s`
/// keeps its exponent; non-ASCII letters count, so `µs` splits where it
/// should), and its unit to the next character that can start a number.
fn split_parts(t: &str) -> Vec<(&str, &str)> {
    let mut parts = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let unit_at = rest
            .find(|c: char| c.is_alphabetic() && c != 'e' && c != 'E')
            .unwrap_or(rest.len());
        let num_end = unit_at;
        let after = &rest[unit_at..];
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.' || c == '-' || c == '+')
            .unwrap_or(after.len());
        parts.push((rest[..num_end].trim(), after[..unit_len].trim()));
        rest = after[unit_len..].trim_start();
    }
    parts
}

/// The length of a unit in seconds; `None` for an unknown unit.
fn unit_scale(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "s" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    })
}

/// One part, `number * unit`, in seconds; the reason it is wrong otherwise.
fn parse_part(num: &str, unit: &str) -> Result<f64, String> {
    if num.is_empty() {
        return Err("expected a number with an optional unit, e.g. 40ms, 1s or 2.5".into());
    }
    let scale = unit_scale(unit)
        .ok_or_else(|| format!("unknown unit `{unit}` (use ns, us, ms, s, m or h)"))?;
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{num}` is not a number; expected e.g. 40ms, 1s or 2.5"))?;
    if value.is_sign_negative() && value != 0.0 {
        return Err("a duration must be finite and non-negative".into());
    }
    Ok(value * scale)
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
    fn compound_durations_add_their_parts() {
        assert_eq!(parse_secs_f64("1h30m").unwrap(), 5400.0);
        assert_eq!(parse_secs_f64("1m30s").unwrap(), 90.0);
        assert_eq!(parse_secs_f64("1h 30m 15s").unwrap(), 5415.0);
        assert_eq!(parse_secs_f64("2m0.5s").unwrap(), 120.5);
        assert_eq!(
            parse_duration("1s250ms").unwrap(),
            Duration::from_millis(1250)
        );
        assert_eq!(
            parse_duration("1ms500us").unwrap(),
            Duration::from_micros(1500)
        );
        assert_eq!(parse_duration("1min30s").unwrap(), Duration::from_secs(90));
        // One part is still `number * unit`, bit for bit.
        assert_eq!(parse_secs_f64("0.1s").unwrap(), 0.1);
        assert_eq!(parse_secs_f64("1.5s").unwrap(), 1.5);
    }

    #[test]
    fn bad_compound_durations_say_what_is_wrong() {
        let why = |s: &str| parse_secs_f64(s).unwrap_err().why().to_string();
        assert!(why("1m30").contains("no unit"), "{}", why("1m30"));
        assert!(why("30m1h").contains("largest unit"), "{}", why("30m1h"));
        assert!(why("1s1s").contains("largest unit"), "{}", why("1s1s"));
        assert!(why("1h-30m").contains("non-negative"), "{}", why("1h-30m"));
        assert!(
            why("1h30x").contains("unknown unit `x`"),
            "{}",
            why("1h30x")
        );
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
