//! Every form in the crate's DIST table parses, has the documented mean, and
//! prints back to text that parses to the same value.

use std::time::Duration;

use servelab_dist::{Dist, DistError, parse_duration, parse_secs_f64};

#[test]
fn every_documented_form_parses_and_round_trips() {
    for (text, mean) in [
        ("40ms", 0.04),
        ("1s", 1.0),
        ("2.5", 2.5),
        ("const:1s", 1.0),
        ("exp:6s", 6.0),
        ("uniform:4s..10s", 7.0),
        ("lognormal:1s,2", 1.0),
        ("50s+exp:5s", 55.0),
        ("1m+uniform:0s..2m", 120.0),
    ] {
        let d: Dist = text.parse().unwrap();
        assert!((d.mean() - mean).abs() < 1e-12, "{text}: {}", d.mean());
        let back: Dist = d.to_string().parse().unwrap();
        assert_eq!(back, d, "{text} printed as {d}");
    }
}

#[test]
fn durations_agree_in_seconds_and_as_duration() {
    for text in ["40ms", "250us", "250µs", "10ns", "1.5", "2m", "1h", "1e-3s"] {
        let secs = parse_secs_f64(text).unwrap();
        assert_eq!(
            parse_duration(text).unwrap(),
            Duration::from_secs_f64(secs),
            "{text}"
        );
    }
}

#[test]
fn errors_name_the_input_and_never_panic() {
    for text in [
        "",
        "exp",
        "exp:",
        "uniform:..",
        "lognormal:,",
        "+",
        "1s++exp:1",
        "µs",
        "∞s",
    ] {
        let err = text.parse::<Dist>().unwrap_err();
        assert!(matches!(err, DistError::BadDist { .. }), "{text}: {err}");
        assert!(err.to_string().contains(&format!("`{text}`")), "{err}");
    }
}
