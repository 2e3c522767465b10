//! `servelab lab compare A B`: two runs side by side (before and after a change).
//!
//! Points are matched by server and axis values; each metric shows A's mean,
//! B's mean, B/A and B − A with its 95% interval, and a change is marked only
//! when Welch's t-test on the two runs' repeats finds it at 95%, so that noise is
//! not read as progress. A point with one repeat on either side has no spread to
//! test against and is never marked. The comparison warns when the two runs
//! differ in protocol (`--quick` against full), machine or CPU placement, and
//! says so when a run is compared with itself.
//! Two runs with no point in common are refused ([`check`]): a table of dashes
//! would look like a comparison and be none. The HTML page draws both runs on the
//! same axes, one figure per plot of A's experiment.
//!
//! The design decides what a mark means. A pair that `servelab lab ab` measured
//! interleaved ([`pair`]) had both servers of every point alive side by side and
//! their repeats alternating in ABBA order (older pairs: A and B back to back,
//! alternating by point), so drift slower than a repeat hits both and Welch's t
//! on each side's repeats tests the change. Two separate runs also differ by
//! whatever the machine did between them, which their repeats do not sample;
//! when most marked figures move one way, a line under the table says so with
//! the common shift ([`drift`]), and that only an interleaved pair can tell it
//! from a change.
//!
//! Marks are counted by point, not by figure ([`tally`]): a point's figures
//! are tied by Little's law and the utilisation law, so Holm's procedure runs
//! over each point's figures, the tally says what chance allows for the number
//! of points, and points where the load generator was saturated stay out of it.
//!
//! Layout (each file imports only those above it):
//! - `row.rs`: one compared figure ([`Row`]) and the rows of two runs
//! - `design.rs`: how A and B were measured ([`pair`], [`design`]), the
//!   [`warnings`], and the refusal of runs with nothing in common ([`check`])
//! - [`drift`]: the common shift of separate runs
//! - [`tally`]: the marks by point
//! - `table.rs`: the plain-text table ([`text`])
//! - `page.rs`: the HTML page ([`html`], [`write_html`])

mod design;
pub mod drift;
mod page;
mod row;
mod table;
pub mod tally;

pub use design::{check, common, design, pair, warnings};
pub use drift::separate_shift;
pub use page::{html, write_html};
pub use row::{Row, rows};
pub use table::text;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;
    use crate::metric::Metric;
    use crate::store::results::Stat;
    use crate::store::results::Status;
    use page::{PAGE_START, both};

    /// `--html` never replaces a file that is not a comparison page, and
    /// replaces one that is.
    #[test]
    fn html_is_written_only_over_a_comparison_page() {
        let tmp = tempfile::tempdir().unwrap();
        let other = tmp.path().join("README.md");
        std::fs::write(&other, "# mine\n").unwrap();
        let page = format!("{PAGE_START}x and y</title></head></html>\n");
        let e = write_html(&other, &page).unwrap_err().to_string();
        assert!(
            e.ends_with("is not a comparison page; not overwritten"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "# mine\n");
        let fresh = tmp.path().join("c.html");
        write_html(&fresh, &page).unwrap();
        let again = page.replace("x and y", "x and z");
        write_html(&fresh, &again).unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), again);
    }

    #[test]
    fn only_a_difference_welchs_test_finds_is_significant() {
        let s = |v: &[f64]| Stat::of(v);
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[9.0, 10.0, 11.0]),
            b: s(&[19.0, 20.0, 21.0]),
        };
        assert!(r.significant());
        assert_eq!(r.ratio(), Some(2.0));
        assert_eq!(r.effect().unwrap(), "+100.0% ± 22.7%");
        // Regression (issue 15): a 1% change was marked because a 1-repeat run
        // fell outside a 3-repeat range; one repeat has no spread to test.
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[99.0, 100.0, 100.5]),
            b: s(&[101.0]),
        };
        assert!(!r.significant() && r.effect().is_none());
        // Overlapping noise is not a difference.
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: s(&[9.0, 10.0, 11.0]),
            b: s(&[10.0, 10.5, 12.0]),
        };
        assert!(!r.significant());
        let r = Row {
            point: "p".into(),
            metric: Metric::Throughput,
            a: None,
            b: s(&[1.0]),
        };
        assert_eq!(r.ratio(), None);
    }

    #[test]
    fn a_run_against_itself_or_a_quick_one_is_said() {
        use crate::report::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        let w = warnings(&a, &a);
        assert!(w[0].contains("the same run"), "{w:?}");
        let mut b = a.clone();
        b.quick = !a.quick;
        b.placement = "elsewhere".into();
        let w = warnings(&a, &b).join("\n");
        assert!(
            w.contains("different protocols") && w.contains("--quick"),
            "{w}"
        );
        assert!(w.contains("different CPU placement"), "{w}");
        // A run stored before servelab-lab/4 holds response times of another kind.
        let mut old = a.clone();
        old.schema = crate::store::results::SCHEMA_V3.into();
        let w = warnings(&old, &a).join("\n");
        assert!(
            w.contains("response times differ in kind: A was written as servelab-lab/3"),
            "{w}"
        );
    }

    #[test]
    fn runs_with_no_point_in_common_are_refused() {
        use crate::report::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        assert!(check(&a, &a, "A", "B").is_ok());
        assert!(!common(&a, &a).is_empty());
        let mut b = a.clone();
        for p in &mut b.points {
            p.status = Status::Failed;
        }
        let err = check(&a, &b, "runA", "runB").unwrap_err().to_string();
        assert!(
            err.contains("runA") && err.contains("no point has figures in both"),
            "{err}"
        );
        let mut c = a.clone();
        c.experiment = "other".into();
        for p in &mut c.points {
            p.vars[0].0 = "clients".into();
        }
        let err = check(&a, &c, "runA", "runC").unwrap_err().to_string();
        assert!(err.contains("different experiments (t and other)"), "{err}");
    }

    #[test]
    fn the_html_page_draws_both_runs_on_the_same_axes() {
        use crate::report::plot::figure::tests::{EXP, quick_run};
        let exp = Experiment::parse(EXP, "t.toml").unwrap();
        let a = quick_run(&exp);
        let page = html(&a, &a, "A", "B").unwrap();
        assert_eq!(page.matches("<svg").count(), exp.plots.len());
        for label in [
            "pool, client users = 8, A (measured)",
            "pool, client users = 8, B (measured)",
        ] {
            assert!(page.contains(label), "missing {label}");
        }
    }

    #[test]
    fn categories_of_both_runs_are_bars_in_one_group_per_server() {
        use crate::report::plot::figure::tests::{EXP, quick_run};
        let text = EXP.replace("values = [1, 8, 32]", "values = [1, 8]");
        let exp = Experiment::parse(&text, "t.toml").unwrap();
        let a = quick_run(&exp);
        let fig = both(&exp.plots[1], &exp, &a, &a);
        assert!(fig.categorical);
        // One group (pool, at workers 1 and 4) per series, and its bars
        // named by value and run.
        assert_eq!(fig.series.len(), 2);
        let svg = fig.svg().unwrap();
        for label in [
            "client users = 8, A (measured)",
            "client users = 1, B (measured)",
        ] {
            assert!(svg.contains(label), "missing {label}");
        }
    }
}
