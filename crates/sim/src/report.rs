//! Output: the text table on stdout, CSV, and JSON.
//!
//! # JSON schema (`--json FILE`)
//!
//! ```text
//! { "schema": "servelab-sim/2",
//!   "run": RunSpec | null,          // null for --analytic
//!   "points": [PointResult, ...] }  // one per sweep point, in sweep order
//! ```
//! [`PointResult`] serialises its fields by name: `users`, `model` (every parameter,
//! distributions as their text syntax), `reps`, `warmup` (method, mean deleted
//! completions, window), `sim` (each metric as `{mean, half_width, std_dev, n}`),
//! `exact` (or null) and `not_exact_because`, `bounds`, `diff`. Non-finite numbers
//! (an interval from one replication) are `null`.
//!
//! Schema 2 (from 1): `sim.response_time` became `sim.attempt_response_time`
//! (R_attempt, unchanged in meaning) beside the new `sim.user_response_time` (R_user:
//! from the end of thinking to the answer, timeouts and retries included), the
//! percentiles `response_pNN` became `attempt_pNN`, `sim.cancel_rate` is new, the
//! model gained `retry_wait`, `on_full` and `on_abandon`, and warm-up `mser5` now
//! means MSER-5 on the replication average (`mser5_each` is the old per-replication
//! cut).
//!
//! # CSV (`--csv FILE`)
//!
//! One header line, then one row per point; every simulated metric as `NAME_mean`
//! and `NAME_hw` (95% half width), then `exact_*`, `bound_*` and `diff_*` columns.
//! Missing values are empty cells.

use std::fmt::Write as _;

use serde::Serialize;

use crate::model::{OnAbandon, OnFull};
use crate::result::{Metrics, PointResult};
use crate::spec::{Length, RunSpec, Warmup};
use crate::stats::Estimate;

/// Identifies the JSON layout; bumped on incompatible change.
pub const SCHEMA: &str = "servelab-sim/2";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    run: Option<&'a RunSpec>,
    points: &'a [PointResult],
}

/// The JSON document of a sweep (pretty-printed).
pub fn to_json(points: &[PointResult], spec: Option<&RunSpec>) -> String {
    serde_json::to_string_pretty(&Document {
        schema: SCHEMA,
        run: spec,
        points,
    })
    .expect("plain data always serialises")
}

type Getter = fn(&Metrics) -> Estimate;

const SIM_COLUMNS: [(&str, Getter); 17] = [
    ("throughput", |m| m.throughput),
    ("goodput", |m| m.goodput),
    ("badput", |m| m.badput),
    ("attempt_response_time", |m| m.attempt_response_time),
    ("user_response_time", |m| m.user_response_time),
    ("attempt_p50", |m| m.attempt_p50),
    ("attempt_p90", |m| m.attempt_p90),
    ("attempt_p99", |m| m.attempt_p99),
    ("utilisation", |m| m.utilisation),
    ("switch_fraction", |m| m.switch_fraction),
    ("drop_rate", |m| m.drop_rate),
    ("drop_fraction", |m| m.drop_fraction),
    ("timeout_rate", |m| m.timeout_rate),
    ("give_up_rate", |m| m.give_up_rate),
    ("cancel_rate", |m| m.cancel_rate),
    ("mean_buffer", |m| m.mean_buffer),
    ("mean_in_system", |m| m.mean_in_system),
];

fn cell(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v}"),
        _ => String::new(),
    }
}

/// The CSV text of a sweep.
pub fn to_csv(points: &[PointResult]) -> String {
    let mut out = String::from("index,users,reps,warmup_deleted");
    for (name, _) in SIM_COLUMNS {
        let _ = write!(out, ",{name}_mean,{name}_hw");
    }
    out.push_str(
        ",exact_throughput,exact_response_time,exact_utilisation,exact_mean_in_system,exact_mean_buffer,\
         exact_drop_rate,exact_drop_fraction,bound_throughput_max,bound_response_time_min,saturation_users,\
         diff_throughput_rel,diff_response_time_rel,diff_covered\n",
    );
    for p in points {
        let _ = write!(
            out,
            "{},{},{},{}",
            p.index,
            p.users,
            p.reps,
            cell(p.warmup.map(|w| w.mean_deleted))
        );
        for (_, get) in SIM_COLUMNS {
            let e = p.sim.as_ref().map(get);
            let _ = write!(
                out,
                ",{},{}",
                cell(e.map(|e| e.mean)),
                cell(e.map(|e| e.half_width))
            );
        }
        let x = p.exact;
        let cells = [
            cell(x.map(|x| x.throughput)),
            cell(x.map(|x| x.response_time)),
            cell(x.map(|x| x.utilisation)),
            cell(x.map(|x| x.mean_in_system)),
            cell(x.map(|x| x.mean_buffer)),
            cell(x.map(|x| x.drop_rate)),
            cell(x.map(|x| x.drop_fraction)),
            cell(Some(p.bounds.throughput_max)),
            cell(Some(p.bounds.response_time_min)),
            cell(Some(p.bounds.saturation_users)),
            cell(p.diff.map(|d| d.throughput_rel)),
            cell(p.diff.map(|d| d.response_time_rel)),
            p.diff.map(|d| d.covered.to_string()).unwrap_or_default(),
        ];
        for c in cells {
            out.push(',');
            out.push_str(&c);
        }
        out.push('\n');
    }
    out
}

fn num(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else if v.abs() >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn pm(e: &Estimate) -> String {
    if e.n == 0 {
        "-".into()
    } else if e.half_width.is_finite() {
        format!("{}±{}", num(e.mean), num(e.half_width))
    } else {
        num(e.mean)
    }
}

fn pct(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{:+.1}%", 100.0 * v),
        _ => "-".into(),
    }
}

/// The header lines: the model, the run, and the saturation point.
pub fn header(points: &[PointResult], spec: Option<&RunSpec>) -> String {
    let Some(first) = points.first() else {
        return "no points\n".into();
    };
    let m = &first.model;
    let mut out = format!(
        "model: c={} cores, k={} threads/core ({}), buffer B={} (K=c*k+B={}), policy {}{}\n\
         service {}, think {}, timeout {}{}\n\
         full buffer: {}; abandoned requests: {}{}\n",
        m.cores,
        m.threads_per_core,
        m.affinity,
        m.buffer,
        m.capacity(),
        m.policy,
        if m.policy == crate::model::Policy::RoundRobin {
            format!(
                " (quantum {}s, context switch {}s)",
                m.quantum, m.context_switch
            )
        } else {
            String::new()
        },
        m.service,
        m.think,
        m.timeout
            .as_ref()
            .map_or("none".to_string(), |t| t.to_string()),
        match (&m.timeout, m.retries) {
            (Some(_), Some(r)) => format!(", at most {r} retries"),
            (Some(_), None) => ", unbounded retries".to_string(),
            _ => String::new(),
        },
        match m.on_full {
            OnFull::Reject => "reject at once (503)",
            OnFull::Silent => "drop silently",
        },
        match m.on_abandon {
            OnAbandon::Finish => "finished (badput)",
            OnAbandon::Cancel => "cancelled",
        },
        if m.timeout.is_some() || m.on_full == OnFull::Reject {
            format!("; retry wait {}", m.retry_wait)
        } else {
            String::new()
        },
    );
    if let Some(s) = spec {
        let length = match s.length {
            Length::Requests(r) => format!("{} requests", r.div_ceil(5) * 5),
            Length::Horizon(h) => format!("{h} s of simulated time"),
        };
        let (deleted, kept) = points
            .iter()
            .filter_map(|p| p.warmup)
            .fold((0.0, 0.0), |(d, k), w| {
                (d + w.mean_deleted, k + w.mean_kept + w.mean_deleted)
            });
        let share = if kept > 0.0 {
            100.0 * deleted / kept
        } else {
            0.0
        };
        let warm = match s.warmup {
            Warmup::Mser5 => {
                format!("MSER-5 on the replication average (deleted {share:.1}% of completions)")
            }
            Warmup::Mser5Each => {
                format!("MSER-5 per replication (deleted {share:.1}% of completions on average)")
            }
            Warmup::Fixed(w) => format!("fixed, first {w} s deleted"),
        };
        let _ = writeln!(
            out,
            "run: {} replications x {length} per point, warm-up {warm}, seed {}; ± is the 95% Student-t half width",
            s.reps, s.seed
        );
    }
    let _ = writeln!(
        out,
        "R_att: from the send of the attempt that got the answer; R_user: from the end of \
         thinking to the answer, timeouts and retries included\n\
         bounds: X <= min(N/(S+Z), c/S), R >= max(S, N*S/c - Z); saturation N* = c(S+Z)/S = {:.1}",
        first.bounds.saturation_users
    );
    match &first.not_exact_because {
        None => {
            out.push_str("exact: machine-repairman birth-death chain with cap K (product-form)\n")
        }
        Some(why) => {
            let _ = writeln!(out, "exact: none ({why}); bounds only");
        }
    }
    out
}

fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:>w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The comparison table: one row per point, simulation beside exact and bounds.
pub fn table(points: &[PointResult], spec: Option<&RunSpec>) -> String {
    let cancels = points
        .iter()
        .any(|p| p.model.on_abandon == OnAbandon::Cancel);
    let mut head = [
        "N",
        "X sim/s",
        "X exact",
        "dX",
        "X max",
        "R_att s",
        "R exact",
        "dR",
        "R min",
        "R_user s",
        "U sim",
        "U exact",
        "drop/s",
        "tmo/s",
        "good/s",
        "bad/s",
        "p99_att s",
    ]
    .map(String::from)
    .to_vec();
    if cancels {
        head.insert(16, "cancel/s".into());
    }
    let mut rows = vec![head];
    for p in points {
        let e = p.exact;
        let opt = |v: Option<f64>| v.map_or("-".to_string(), num);
        let Some(s) = &p.sim else { continue };
        let mut row = vec![
            p.users.to_string(),
            pm(&s.throughput),
            opt(e.map(|e| e.throughput)),
            pct(p.diff.map(|d| d.throughput_rel)),
            num(p.bounds.throughput_max),
            pm(&s.attempt_response_time),
            opt(e.map(|e| e.response_time)),
            pct(p.diff.map(|d| d.response_time_rel)),
            num(p.bounds.response_time_min),
            pm(&s.user_response_time),
            pm(&s.utilisation),
            opt(e.map(|e| e.utilisation)),
            num(s.drop_rate.mean),
            num(s.timeout_rate.mean),
            num(s.goodput.mean),
            num(s.badput.mean),
            num(s.attempt_p99.mean),
        ];
        if cancels {
            row.insert(16, num(s.cancel_rate.mean));
        }
        rows.push(row);
    }
    let mut out = header(points, spec);
    out.push('\n');
    out.push_str(&render(&rows));
    out
}

/// The analytic table (`--analytic`): exact solution and bounds only.
pub fn analytic_table(points: &[PointResult]) -> String {
    let mut rows = vec![
        [
            "N",
            "X exact/s",
            "X max",
            "R exact s",
            "R min",
            "U exact",
            "L exact",
            "buffer",
            "drop/s",
            "drop %",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for p in points {
        let e = p.exact;
        let opt =
            |f: fn(&crate::exact::Exact) -> f64| e.as_ref().map_or("-".to_string(), |e| num(f(e)));
        rows.push(vec![
            p.users.to_string(),
            opt(|e| e.throughput),
            num(p.bounds.throughput_max),
            opt(|e| e.response_time),
            num(p.bounds.response_time_min),
            opt(|e| e.utilisation),
            opt(|e| e.mean_in_system),
            opt(|e| e.mean_buffer),
            opt(|e| e.drop_rate),
            opt(|e| 100.0 * e.drop_fraction),
        ]);
    }
    let mut out = header(points, None);
    out.push('\n');
    out.push_str(&render(&rows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::sweep::Sweep;

    fn points() -> (Vec<PointResult>, RunSpec) {
        let spec = RunSpec {
            reps: 3,
            length: Length::Requests(500),
            warmup: Warmup::Mser5,
            seed: 5,
        };
        let sweep = Sweep {
            base: Model::default(),
            users: vec![10, 200],
        };
        (sweep.run(&spec).unwrap(), spec)
    }

    #[test]
    fn csv_has_one_row_per_point_and_equal_widths() {
        let (p, _) = points();
        let csv = to_csv(&p);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3);
        let width = lines[0].split(',').count();
        assert!(lines.iter().all(|l| l.split(',').count() == width));
        assert!(
            lines[0].starts_with("index,users,reps,warmup_deleted,throughput_mean,throughput_hw")
        );
        assert!(lines[2].starts_with("1,200,3,"));
    }

    #[test]
    fn json_parses_back_with_the_schema_tag() {
        let (p, spec) = points();
        let v: serde_json::Value = serde_json::from_str(&to_json(&p, Some(&spec))).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["points"][1]["users"], 200);
        assert_eq!(v["points"][0]["model"]["service"], "exp:0.2s");
        assert!(v["points"][0]["sim"]["throughput"]["half_width"].is_number());
        assert!(v["points"][0]["exact"]["throughput"].is_number());
        assert_eq!(v["run"]["reps"], 3);
    }

    #[test]
    fn table_names_reps_warmup_and_knee() {
        let (p, spec) = points();
        let t = table(&p, Some(&spec));
        assert!(t.contains("3 replications x 500 requests"), "{t}");
        assert!(t.contains("MSER-5"));
        assert!(t.contains("N* = c(S+Z)/S = 144.0"));
        assert_eq!(
            t.lines()
                .filter(|l| l.trim_start().starts_with("200 "))
                .count(),
            1,
            "{t}"
        );
        let a = analytic_table(
            &Sweep {
                base: Model::default(),
                users: vec![1, 144],
            }
            .analytic()
            .unwrap(),
        );
        assert!(a.contains("X exact/s"));
    }
}
