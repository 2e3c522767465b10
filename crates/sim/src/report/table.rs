//! The text table that `servelab sim` prints: a header that says what was run, one
//! row per point, and a note on every point that fails Little's law.
//!
//! A terminal is about 100 columns wide, and all 20 columns of a sweep past the
//! collapse took 164. By default ([`Columns::Fit`]) columns that hold nothing (an
//! exact value where no point has one) are left out, then the least important ones
//! until the table fits in [`FIT_WIDTH`] columns, and a last line says how many were
//! hidden; [`Columns::All`] (`--wide`) prints every column. Headers wrap at the same
//! width. The CSV and JSON always hold everything.

use std::fmt::Write as _;

use crate::estimate::Estimate;
use crate::model::{OnAbandon, OnFull, Policy};
use crate::result::{LittleCheck, PointResult};
use crate::spec::{Length, RunSpec, Warmup};

/// Widest line the default table prints.
pub const FIT_WIDTH: usize = 100;

/// Which columns the table shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Columns {
    /// The most important columns that fit in [`FIT_WIDTH`] (the default).
    #[default]
    Fit,
    /// Every column, however wide (`servelab sim --wide`).
    All,
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

/// Little's law column: the relative error, with `!` where the law fails.
fn little(l: Option<LittleCheck>) -> String {
    match l {
        Some(l) if !l.holds => format!("{}!", pct(Some(l.rel_error))),
        Some(l) => pct(Some(l.rel_error)),
        None => "-".into(),
    }
}

/// Appends `text` as lines of at most `width` characters, breaking at spaces;
/// continuation lines are indented by two.
fn wrap(out: &mut String, text: &str, width: usize) {
    let mut line = String::new();
    for word in text.split(' ') {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line = "  ".into();
        } else if len > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
}

/// The header lines: the model, the run, and the saturation point.
pub fn header(points: &[PointResult], spec: Option<&RunSpec>) -> String {
    let Some(first) = points.first() else {
        return "no points\n".into();
    };
    let m = &first.model;
    let queue = match m.connections.held() {
        None => format!("buffer B={} (K=c*k+B={})", m.buffer, m.capacity()),
        Some(h) => format!(
            "W=c*k={} workers held by connections, backlog {} (K=W+backlog={})",
            m.workers(),
            h.backlog,
            m.capacity()
        ),
    };
    let mut lines = vec![
        format!(
            "model: c={} cores, k={} threads/core ({}), {queue}, policy {}{}",
            m.cores,
            m.threads_per_core,
            m.affinity,
            m.policy,
            if m.policy == Policy::RoundRobin {
                format!(
                    " (quantum {}s, context switch {}s)",
                    m.quantum, m.context_switch
                )
            } else {
                String::new()
            },
        ),
        format!(
            "service {}, think {}, timeout {}{}",
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
        ),
        format!(
            "full {}: {}; abandoned requests: {}{}",
            if m.connections.held().is_some() {
                "backlog"
            } else {
                "buffer"
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
        ),
    ];
    if m.session.is_some() || !m.first_demand.is_zero() {
        lines.push(format!(
            "connections: {}; a connection's first request adds {} (mean demand per request \
             S = {:.6}s, used in the bounds)",
            m.session
                .map_or("one per user for the whole run".to_string(), |n| format!(
                    "{n} request{} each",
                    if n == 1 { "" } else { "s" }
                )),
            m.first_demand,
            m.mean_demand(),
        ));
    }
    if !m.idle_demand.is_zero() {
        lines.push(format!(
            "idle gap: a request started on a core idle for {} s or more adds {} (the bounds \
             keep the busy demand)",
            m.idle_gap, m.idle_demand
        ));
    }
    if let Some(h) = m.connections.held() {
        lines.push(format!(
            "held workers: a connection holds its worker from accept to close: after {} idle, \
             {}, or when the client closes or times out; the buffer has no effect",
            h.keepalive_timeout
                .map_or("no keep-alive timeout (never)".to_string(), |t| format!(
                    "{t}s"
                )),
            h.max_requests
                .map_or("no request limit".to_string(), |n| format!(
                    "after {n} request{}",
                    if n == 1 { "" } else { "s" }
                )),
        ));
    }
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
        lines.push(format!(
            "run: {} replications x {length} per point, warm-up {warm}, seed {}; ± is the 95% \
             Student-t half width",
            s.reps, s.seed
        ));
    }
    lines.push(
        "R_att: from the send of the attempt that got the answer; R_user: from the end of \
         thinking to the answer, timeouts and retries included, over the answers (users still \
         waiting at the end apart); Little: X(R+Z)/N - 1 over the users' cycles, \
         ! where the law fails"
            .into(),
    );
    if m.connections.held().is_some() && m.per_request().is_none() {
        lines.push(format!(
            "bounds: X <= min(N/(S+Z), c/S, W/(S+g)), g = min(least think, keep-alive) x \
             (1 - 1/requests per connection), R >= N/X_max - Z; saturation N* = c(S+Z)/S = {:.1}",
            first.bounds.saturation_users
        ));
    } else {
        lines.push(format!(
            "bounds: X <= min(N/(S+Z), c/S), R >= max(S, N*S/c - Z); saturation N* = c(S+Z)/S = {:.1}",
            first.bounds.saturation_users
        ));
    }
    lines.push(match &first.not_exact_because {
        None => "exact: machine-repairman birth-death chain with cap K (product-form)".into(),
        Some(why) => format!("exact: none ({why}); bounds only"),
    });
    if points
        .iter()
        .any(|p| p.exact.is_some() && p.model.starves_past_workers())
    {
        lines.push(
            "past W on connections that never close: the exact chain is that of the W users \
             that hold a worker; the other N - W wait at the backlog for good, in no mean"
                .into(),
        );
    }
    let mut out = String::new();
    for line in lines {
        wrap(&mut out, &line, FIT_WIDTH);
    }
    out
}

/// Right-aligned columns separated by two spaces.
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

/// Width of the widest line `render` would print for these columns.
fn width(cols: &[(usize, &str, Vec<String>)]) -> usize {
    let w: usize = cols
        .iter()
        .map(|(_, h, cells)| {
            cells
                .iter()
                .map(|c| c.chars().count())
                .chain([h.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .sum();
    w + 2 * cols.len().saturating_sub(1)
}

/// Lays out columns given as (priority, heading, cells): every column with
/// [`Columns::All`]; otherwise the columns with some value, dropping the highest
/// priority number first until the table fits. Returns the text and how many columns
/// were hidden.
fn layout(mut cols: Vec<(usize, &str, Vec<String>)>, which: Columns) -> (String, usize) {
    let all = cols.len();
    if which == Columns::Fit {
        cols.retain(|(_, _, cells)| cells.iter().any(|c| c != "-"));
        while width(&cols) > FIT_WIDTH && cols.len() > 1 {
            let last = (0..cols.len())
                .max_by_key(|&i| cols[i].0)
                .expect("more than one column");
            cols.remove(last);
        }
    }
    let rows = (0..=cols.first().map_or(0, |c| c.2.len()))
        .map(|r| {
            cols.iter()
                .map(|(_, h, cells)| {
                    if r == 0 {
                        h.to_string()
                    } else {
                        cells[r - 1].clone()
                    }
                })
                .collect()
        })
        .collect::<Vec<Vec<String>>>();
    (render(&rows), all - cols.len())
}

/// The comparison table: one row per point, simulation beside exact and bounds, then
/// a note on the points that fail Little's law.
pub fn table(points: &[PointResult], spec: Option<&RunSpec>, which: Columns) -> String {
    let sims: Vec<(&PointResult, &crate::result::Metrics)> = points
        .iter()
        .filter_map(|p| p.sim.as_ref().map(|s| (p, s)))
        .collect();
    let col = |f: &dyn Fn(&PointResult, &crate::result::Metrics) -> String| -> Vec<String> {
        sims.iter().map(|(p, s)| f(p, s)).collect()
    };
    let opt = |v: Option<f64>| v.map_or("-".to_string(), num);
    let cancels = points
        .iter()
        .any(|p| p.model.on_abandon == OnAbandon::Cancel);
    // Priority: a lower number is kept longer when the table must fit.
    let mut cols = vec![
        (0, "N", col(&|p, _| p.users.to_string())),
        (1, "X sim/s", col(&|_, s| pm(&s.throughput))),
        (
            6,
            "X exact",
            col(&|p, _| opt(p.exact.map(|e| e.throughput))),
        ),
        (4, "dX", col(&|p, _| pct(p.diff.map(|d| d.throughput_rel)))),
        (15, "X max", col(&|p, _| num(p.bounds.throughput_max))),
        (2, "R_att s", col(&|_, s| pm(&s.attempt_response_time))),
        (
            7,
            "R exact",
            col(&|p, _| opt(p.exact.map(|e| e.response_time))),
        ),
        (
            5,
            "dR",
            col(&|p, _| pct(p.diff.map(|d| d.response_time_rel))),
        ),
        (16, "R min", col(&|p, _| num(p.bounds.response_time_min))),
        (3, "R_user s", col(&|_, s| pm(&s.user_response_time))),
        (8, "U sim", col(&|_, s| pm(&s.utilisation))),
        (
            17,
            "U exact",
            col(&|p, _| opt(p.exact.map(|e| e.utilisation))),
        ),
        // Core time spent switching: only round robin pays it ("-" otherwise).
        (
            9,
            "switch",
            col(&|p, s| {
                if p.model.policy == Policy::RoundRobin {
                    num(s.switch_fraction.mean)
                } else {
                    "-".into()
                }
            }),
        ),
        (10, "drop/s", col(&|_, s| num(s.drop_rate.mean))),
        (11, "tmo/s", col(&|_, s| num(s.timeout_rate.mean))),
        (12, "good/s", col(&|_, s| num(s.goodput.mean))),
        (13, "bad/s", col(&|_, s| num(s.badput.mean))),
        (14, "p99_att s", col(&|_, s| num(s.attempt_p99.mean))),
        // The user's p99 (timeouts and retries included), what `servelab load`
        // reports as p99: kept longer than the attempt's.
        (13, "p99_user s", col(&|_, s| num(s.user_p99.mean))),
        (4, "Little", col(&|p, _| little(p.little))),
    ];
    if cancels {
        cols.insert(17, (13, "cancel/s", col(&|_, s| num(s.cancel_rate.mean))));
    }
    let all = cols.len();
    if which == Columns::Fit && points.iter().all(|p| p.model.timeout.is_none()) {
        // Without timeouts nobody times out, and every completion is goodput.
        cols.retain(|(_, h, _)| !matches!(*h, "tmo/s" | "good/s" | "bad/s"));
    }
    if which == Columns::Fit
        && sims
            .iter()
            .all(|(_, s)| s.user_p99.mean == s.attempt_p99.mean)
    {
        // Nobody retried: the user's p99 is the attempt's, bucket for bucket.
        cols.retain(|(_, h, _)| *h != "p99_user s");
    }
    let hidden = all - cols.len();
    let (text, more) = layout(cols, which);
    let hidden = hidden + more;
    let mut out = header(points, spec);
    out.push('\n');
    out.push_str(&text);
    let failed: Vec<String> = points
        .iter()
        .filter_map(|p| {
            let l = p.little.filter(|l| !l.holds)?;
            let (waiting, wait) = p.sim.map_or((f64::NAN, f64::NAN), |s| {
                (s.users_waiting_at_end.mean, s.users_wait_at_end.mean)
            });
            Some(format!(
                "N = {} (X(R+Z) = {}, {}; {} users still waiting at the end, for {} s so far)",
                p.users,
                num(l.predicted.mean),
                pct(Some(l.rel_error)),
                num(waiting),
                num(wait)
            ))
        })
        .collect();
    if !failed.is_empty() {
        wrap(
            &mut out,
            &format!(
                "warning: Little's law N = X(R+Z) fails by more than {:.0}% at {}. R_user is \
                 over the answers only: when many users are still waiting at the end, longer \
                 than R_user, the run is shorter than their response time and R_user is too \
                 low (a collapse): lengthen the run (--horizon, --requests); with held \
                 workers, users may be starved at the accept queue for good (more users than \
                 workers and kept-alive connections); otherwise the warm-up cut left a \
                 transient.",
                100.0 * LittleCheck::TOLERANCE,
                failed.join(", ")
            ),
            FIT_WIDTH,
        );
    }
    if hidden > 0 {
        let _ = writeln!(
            out,
            "({hidden} empty or less important columns hidden to fit {FIT_WIDTH} columns; \
             --wide shows them all)"
        );
    }
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
    use servelab_dist::Dist;

    use super::*;
    use crate::model::Model;
    use crate::sweep::Sweep;

    fn points(base: Model, users: Vec<u32>) -> (Vec<PointResult>, RunSpec) {
        let spec = RunSpec {
            reps: 3,
            length: Length::Requests(500),
            warmup: Warmup::Mser5,
            seed: 5,
        };
        (Sweep { base, users }.run(&spec).unwrap(), spec)
    }

    #[test]
    fn table_names_reps_warmup_and_knee() {
        let (p, spec) = points(Model::default(), vec![10, 200]);
        let t = table(&p, Some(&spec), Columns::Fit);
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

    /// Regression: `servelab sim` printed tables 164 columns wide (issue 19).
    #[test]
    fn the_default_table_fits_in_100_columns_and_wide_shows_all() {
        let m = Model {
            timeout: Some(Dist::exp(5.0).shifted(5.0)),
            service: Dist::exp(0.25),
            on_abandon: OnAbandon::Cancel,
            ..Model::default()
        };
        let (p, spec) = points(m, vec![1, 232, 348]);
        let fit = table(&p, Some(&spec), Columns::Fit);
        let widest = fit.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= FIT_WIDTH, "{widest} columns:\n{fit}");
        assert!(fit.contains("--wide shows them all"), "{fit}");
        let wide = table(&p, Some(&spec), Columns::All);
        let heads = wide
            .lines()
            .find(|l| l.trim_start().starts_with("N "))
            .unwrap();
        for h in [
            "X max",
            "R min",
            "U exact",
            "switch",
            "cancel/s",
            "p99_att s",
            "p99_user s",
            "Little",
        ] {
            assert!(heads.contains(h), "{h} missing from {heads}");
        }
        assert!(!wide.contains("--wide"), "{wide}");
    }
}
