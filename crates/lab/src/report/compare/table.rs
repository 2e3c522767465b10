//! The comparison as a plain-text table for the terminal (`lab compare`
//! without `--html`).

use std::fmt::Write as _;

use super::design::{design, warnings};
use super::drift::separate_shift;
use super::row::rows;
use super::tally;
use crate::metric;
use crate::store::results::{RunResults, Stat};

/// "2.5e4 ±1.2% (n=3)": the mean, its interval relative to it, and the repeats.
pub(crate) fn cell(s: Option<Stat>) -> String {
    s.map_or("-".into(), |s| {
        let rel = if s.mean != 0.0 && s.n >= 2 {
            format!(" ±{:.1}%", s.half_width() / s.mean.abs() * 100.0)
        } else {
            String::new()
        };
        format!("{}{rel} (n={})", metric::fmt(s.mean), s.n)
    })
}

/// A plain-text table for the terminal.
pub fn text(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "A: {a_name} ({}, {}, commit {})",
        a.experiment, a.started_utc, a.machine.git_commit
    );
    let _ = writeln!(
        t,
        "B: {b_name} ({}, {}, commit {})",
        b.experiment, b.started_utc, b.machine.git_commit
    );
    let _ = writeln!(t, "{}", design(a, b));
    for w in warnings(a, b) {
        let _ = writeln!(t, "warning: {w}");
    }
    let rows = rows(a, b);
    let w = rows.iter().map(|r| r.point.len()).max().unwrap_or(5).max(5);
    let _ = writeln!(
        t,
        "{:<w$}  {:<12} {:>22} {:>22} {:>7}  {:<16}",
        "point", "metric", "A mean ±95%", "B mean ±95%", "B/A", "B-A"
    );
    let tally = tally::Tally::of(a, b, &rows);
    for (r, &marked) in rows.iter().zip(&tally.marked) {
        let ratio = r.ratio().map_or("-".into(), |x| format!("{x:.2}"));
        let mark = if marked { " *" } else { "" };
        let _ = writeln!(
            t,
            "{:<w$}  {:<12} {:>22} {:>22} {:>7}  {:<16}{mark}",
            r.point,
            r.metric,
            cell(r.a),
            cell(r.b),
            ratio,
            r.effect().unwrap_or_else(|| "-".into())
        );
    }
    let _ = writeln!(
        t,
        "* different by Welch's t-test on the repeats, Holm-corrected across each point's \
         figures (95% per point). {}. B-A: the difference relative to A, with its 95% interval.",
        tally.sentence()
    );
    if let Some(shift) = separate_shift(a, b, &rows) {
        let _ = writeln!(t, "common shift: {shift}");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;
    use crate::metric::Metric;
    use crate::report::plot::figure::tests::{EXP, quick_run};
    use crate::store::results::{RunResults, Stat, Status};

    /// A run of `EXP` whose 4 measured points each have throughput, mean and
    /// 99th percentile response time and CPU per request from 3 repeats
    /// (16 figures), each scaled by `scale(point, metric)`.
    fn run(scale: impl Fn(usize, Metric) -> f64) -> RunResults {
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let mut r = quick_run(&exp);
        let mut k = 0;
        for p in r.points.iter_mut().filter(|p| p.status == Status::Ok) {
            p.summary.clear();
            for (m, base) in [
                (Metric::Throughput, 1000.0),
                (Metric::MeanMs, 2.0),
                (Metric::P99Ms, 9.0),
                (Metric::CpuUs, 30.0),
            ] {
                let x = base * scale(k, m);
                // 0.2% spread: any shift of a few percent is marked.
                p.summary
                    .insert(m, Stat::of(&[x * 0.998, x, x * 1.002]).unwrap());
            }
            k += 1;
        }
        assert_eq!(k, 4);
        r
    }

    /// B 5% slower everywhere: throughput 5% lower, times and CPU 5% higher.
    fn slower(_: usize, m: Metric) -> f64 {
        if m == Metric::Throughput { 0.95 } else { 1.05 }
    }

    #[test]
    fn sixteen_figures_all_five_percent_worse_are_named_as_one_shift() {
        let a = run(|_, _| 1.0);
        let b = run(slower);
        let rows = rows(&a, &b);
        assert_eq!(rows.iter().filter(|r| r.significant()).count(), 16);
        let shift = separate_shift(&a, &b, &rows).expect("a uniform shift is named");
        assert!(shift.worse);
        assert_eq!((shift.agree, shift.marked), (16, 16));
        let hi = shift.higher.as_ref().unwrap();
        assert_eq!(
            (hi.n, hi.metrics.as_slice()),
            (4, &[Metric::Throughput][..])
        );
        assert!((hi.median - 0.95).abs() < 1e-9, "{hi:?}");
        let lo = shift.lower.as_ref().unwrap();
        assert_eq!(lo.n, 12);
        assert!((lo.median - 1.05).abs() < 1e-9, "{lo:?}");
        let t = text(&a, &b, "A", "B");
        let line = t
            .lines()
            .find(|l| l.starts_with("common shift: "))
            .expect("the line is printed");
        assert!(
            line.starts_with("common shift: 16 of 16 marked figures say B is worse than A (throughput B/A median 0.950, 0.950..0.950 over 4 figures; mean_ms, p99_ms, cpu_us B/A median 1.050"),
            "{line}"
        );
        assert!(line.contains("`servelab lab ab"), "{line}");
        // Every mark stays: the line explains them, it does not hide them.
        assert_eq!(t.lines().filter(|l| l.ends_with(" *")).count(), 16);
    }

    #[test]
    fn marks_in_both_directions_or_too_few_are_no_common_shift() {
        let a = run(|_, _| 1.0);
        // Two points better, two worse.
        let b = run(|k, m| {
            if k % 2 == 0 {
                slower(k, m)
            } else {
                1.0 / slower(k, m)
            }
        });
        let marked = rows(&a, &b);
        assert_eq!(marked.iter().filter(|r| r.significant()).count(), 16);
        assert_eq!(separate_shift(&a, &b, &marked), None);
        assert!(!text(&a, &b, "A", "B").contains("common shift"));
        // Three marked figures are too few to call a pattern.
        let b = run(|k, m| {
            if k == 0 && m != Metric::CpuUs {
                slower(k, m)
            } else {
                1.0
            }
        });
        let marked = rows(&a, &b);
        assert_eq!(marked.iter().filter(|r| r.significant()).count(), 3);
        assert_eq!(separate_shift(&a, &b, &marked), None);
        // Twelve of sixteen (three in four) agreeing is a common shift.
        let b = run(|k, m| {
            if k == 0 {
                1.0 / slower(k, m)
            } else {
                slower(k, m)
            }
        });
        let shift = separate_shift(&a, &b, &rows(&a, &b)).unwrap();
        assert_eq!((shift.agree, shift.marked, shift.worse), (12, 16, true));
    }

    #[test]
    fn an_interleaved_pair_gets_no_common_shift_line() {
        use crate::store::results::{Alternation, Interleaved, Side};
        let mut a = run(|_, _| 1.0);
        let mut b = run(slower);
        let record = |side| Interleaved {
            side,
            pair: "p".into(),
            exe_a: "/a".into(),
            exe_b: "/b".into(),
            by: Alternation::Repeat,
            first: vec![Side::A, Side::B],
            started_s: vec![],
            repeat_started_s: vec![],
            server_pid: vec![],
        };
        let protocol = crate::protocol::Protocol {
            quick: true,
            window_s: 0.25,
            warmup_s: 0.1,
            min_repeats: 3,
            max_repeats: 3,
            precision: 0.02,
            headline: Metric::Throughput,
            interleaved: None,
        };
        a.protocol = Some(crate::protocol::Protocol {
            interleaved: Some(record(Side::A)),
            ..protocol.clone()
        });
        b.protocol = Some(crate::protocol::Protocol {
            interleaved: Some(record(Side::B)),
            ..protocol
        });
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("design: an interleaved pair")
                && t.contains("ABBA by repeat, both servers alive"),
            "{t}"
        );
        assert!(
            !t.contains("common shift") && !t.contains("different protocols"),
            "{t}"
        );
        // The same uniform change, now measured interleaved, is marked as a change.
        assert_eq!(t.lines().filter(|l| l.ends_with(" *")).count(), 16);
        // A pair of the first `lab ab` (by point) says so.
        for r in [&mut a, &mut b] {
            if let Some(i) = r.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
                i.by = Alternation::Point;
            }
        }
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("in ABBA order by point") && !t.contains("by repeat"),
            "{t}"
        );
        // Two sides of different pairs are separate runs.
        if let Some(i) = b.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
            i.pair = "q".into();
        }
        let t = text(&a, &b, "A", "B");
        assert!(
            t.contains("design: two separate runs") && t.contains("common shift"),
            "{t}"
        );
        assert!(t.contains("but not of a pair with the other run"), "{t}");
    }
}
