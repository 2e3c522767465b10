//! Output: the text table on stdout, CSV, and JSON.
//!
//! # JSON schema (`--json FILE`)
//!
//! ```text
//! { "schema": "servelab-sim/4",
//!   "run": RunSpec | null,          // null for --analytic
//!   "points": [PointResult, ...] }  // one per sweep point, in sweep order
//! ```
//! [`PointResult`] serialises its fields by name: `users`, `model` (every parameter,
//! distributions as their text syntax), `reps`, `warmup` (method, mean deleted
//! completions, window), `sim` (each metric as `{mean, half_width, std_dev, n}`),
//! `little` (Little's-law check), `exact` (or null) and `not_exact_because`, `bounds`,
//! `diff`. Non-finite numbers (an interval from one replication) are `null`. Every
//! field, with its unit, is listed in `docs/sim-model.md`.
//!
//! Schema 4 (from 3, issue 27): `sim.user_response_time` and `sim.user_cycle_time`
//! are over the periods that ended in the kept window (R_user equals R_attempt
//! without retries); the users still waiting at the end are left out of them and
//! reported apart, their number in `sim.users_waiting_at_end` and their mean wait so
//! far in the new `sim.users_wait_at_end` (CSV `users_wait_at_end_mean`/`_hw`, after
//! `users_waiting_at_end_hw`).
//!
//! Schema 3 (from 2): `sim.user_response_time` now counts the users still waiting at
//! the end of the run with their wait so far (lower bounds), as `servelab load` counts
//! unfinished requests; before, they were left out, which read R_user low past the
//! collapse. New: `sim.user_cycle_rate`, `sim.user_cycle_time`,
//! `sim.users_waiting_at_end` and the per-point `little` check. The percentiles come
//! from a histogram with 3 significant digits (see `Metrics::attempt_p50`).
//! Added later within schema 3, with defaults that leave earlier runs' meaning
//! unchanged: the model's `session` (requests per connection, `null`: one
//! connection per user) and `first_demand` (a connection's first request's
//! extra demand, `"0s"` by default).
//! Also added within schema 3, no existing field changed: `sim.user_p50`,
//! `sim.user_p90` and `sim.user_p99`, the percentiles of R_user (from the end of
//! thinking to the answer, timeouts and retries included) over the good
//! completions, beside the `attempt_pNN` ones, and their `user_pNN_mean`/`_hw` CSV
//! columns after `attempt_p99_hw`.
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
//! and `NAME_hw` (95% half width), then `exact_*`, `bound_*`, `diff_*` and `little_*`
//! columns.
//! Missing values are empty cells.

use std::fmt::Write as _;

use serde::Serialize;

use crate::estimate::Estimate;
use crate::result::{Metrics, PointResult};
use crate::spec::RunSpec;

mod table;

pub use table::{Columns, FIT_WIDTH, analytic_table, header, table};

/// Identifies the JSON layout; bumped on incompatible change.
pub const SCHEMA: &str = "servelab-sim/4";

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

const SIM_COLUMNS: [(&str, Getter); 24] = [
    ("throughput", |m| m.throughput),
    ("goodput", |m| m.goodput),
    ("badput", |m| m.badput),
    ("attempt_response_time", |m| m.attempt_response_time),
    ("user_response_time", |m| m.user_response_time),
    ("user_cycle_rate", |m| m.user_cycle_rate),
    ("user_cycle_time", |m| m.user_cycle_time),
    ("users_waiting_at_end", |m| m.users_waiting_at_end),
    ("users_wait_at_end", |m| m.users_wait_at_end),
    ("attempt_p50", |m| m.attempt_p50),
    ("attempt_p90", |m| m.attempt_p90),
    ("attempt_p99", |m| m.attempt_p99),
    ("user_p50", |m| m.user_p50),
    ("user_p90", |m| m.user_p90),
    ("user_p99", |m| m.user_p99),
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
         diff_throughput_rel,diff_response_time_rel,diff_covered,little_predicted_mean,little_predicted_hw,\
         little_rel_error,little_holds\n",
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
            cell(p.little.map(|l| l.predicted.mean)),
            cell(p.little.map(|l| l.predicted.half_width)),
            cell(p.little.map(|l| l.rel_error)),
            p.little.map(|l| l.holds.to_string()).unwrap_or_default(),
        ];
        for c in cells {
            out.push(',');
            out.push_str(&c);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::spec::{Length, Warmup};
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
        assert!(v["points"][0]["little"]["holds"].as_bool().unwrap());
        assert!(v["points"][0]["sim"]["users_waiting_at_end"]["mean"].is_number());
    }
}
