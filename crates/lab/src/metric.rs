//! The figures an experiment records at each point: their names (used in
//! experiment files), labels and units (used on plot axes and in tables).
//!
//! One table serves validation, plots and reports, so a metric that an experiment
//! file names is certain to have a label with a unit on the plot.

/// A metric: name in files, label on axes, unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric {
    /// Name used in experiment files and in results.
    pub name: &'static str,
    /// Axis label.
    pub label: &'static str,
    /// Unit (empty for ratios and counts).
    pub unit: &'static str,
    /// Recorded by measured experiments.
    pub measured: bool,
    /// Recorded by simulated experiments (and predictions).
    pub simulated: bool,
}

const fn m(
    name: &'static str,
    label: &'static str,
    unit: &'static str,
    measured: bool,
    simulated: bool,
) -> Metric {
    Metric {
        name,
        label,
        unit,
        measured,
        simulated,
    }
}

/// Every metric the lab knows.
pub const ALL: &[Metric] = &[
    m("throughput", "throughput", "requests/s", true, true),
    m("mean_ms", "mean response time", "ms", true, true),
    m("p50_ms", "median response time", "ms", true, true),
    m("p99_ms", "99th percentile response time", "ms", true, true),
    m("total_s", "total time", "s", true, false),
    m("mb_per_s", "transfer rate", "MB/s", true, false),
    m("cpu_us", "server CPU per request", "us", true, false),
    m("errors", "failed requests", "requests", true, false),
    m(
        "error_pct",
        "measured vs exact model throughput",
        "%",
        true,
        false,
    ),
    m("utilisation", "core utilisation", "%", false, true),
    m("drop_rate", "dropped requests", "requests/s", false, true),
    m("goodput", "goodput", "requests/s", false, true),
    m("timeout_rate", "timeouts", "requests/s", false, true),
    m(
        "switch_pct",
        "time spent switching context",
        "%",
        false,
        true,
    ),
];

/// Metric names valid for an experiment of this kind.
pub fn names(simulated: bool) -> Vec<&'static str> {
    ALL.iter()
        .filter(|m| if simulated { m.simulated } else { m.measured })
        .map(|m| m.name)
        .collect()
}

/// The metric called `name`.
pub fn get(name: &str) -> Option<&'static Metric> {
    ALL.iter().find(|m| m.name == name)
}

/// "label (unit)" for an axis.
pub fn axis_label(name: &str) -> String {
    match get(name) {
        Some(m) if m.unit.is_empty() => m.label.to_string(),
        Some(m) => format!("{} ({})", m.label, m.unit),
        None => name.to_string(),
    }
}

/// An axis value: whole numbers without decimals, others as [`fmt`].
pub fn fmt_value(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        fmt(v)
    }
}

/// A tick label: whole numbers plainly, others without trailing zeros.
pub fn fmt_tick(v: f64) -> String {
    let s = fmt_value(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A number with about three significant figures, for tables and sentences.
pub fn fmt(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_a_kind_and_a_unique_name() {
        for (i, a) in ALL.iter().enumerate() {
            assert!(a.measured || a.simulated, "{}", a.name);
            assert!(ALL[i + 1..].iter().all(|b| b.name != a.name), "{}", a.name);
        }
        assert!(names(true).contains(&"utilisation"));
        assert!(!names(false).contains(&"utilisation"));
    }

    #[test]
    fn numbers_keep_three_figures() {
        assert_eq!(fmt(1234.4), "1234");
        assert_eq!(fmt(12.34), "12.3");
        assert_eq!(fmt(1.234), "1.23");
        assert_eq!(fmt(0.01234), "0.012");
        assert_eq!(fmt_value(8.0), "8");
        assert_eq!(fmt_tick(2.50), "2.5");
        assert_eq!(fmt_tick(40.0), "40");
        assert_eq!(fmt_value(0.5), "0.500");
        assert_eq!(axis_label("throughput"), "throughput (requests/s)");
    }
}
