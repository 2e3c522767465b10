//! A point's timeline: requests finished in each second of each measured
//! window, one series per repeat. A warm-up that never ended, a collapse, a
//! stall or an end-of-window cut-off is plain on a timeline and invisible in a
//! mean, so the report draws one for every point that failed a check, and for
//! the knee and the collapse of every curve ([`key_points`]).

use super::figure::{Figure, Series};
use crate::metric::Metric;
use crate::store::results::{PointRecord, RunResults};

/// Most timelines in a report: beyond it, the table of figures names the rest.
pub(crate) const MOST: usize = 12;

/// Share of a curve's best rate under which its last point is a collapse.
const COLLAPSE_SHARE: f64 = 0.5;

/// Axes along which the offered load grows, so that a rate falling past its
/// best is a collapse. Along any other axis (file size, session length) a
/// falling request rate is the point of the experiment: 3.3 MB files are
/// served fewer times a second than 5 KB ones by a healthy server, and the
/// filesize report once captioned its healthy largest point "(collapse)".
const LOAD_AXES: &[&str] = &["users", "conns", "connections", "c", "clients", "rate"];

/// Shortest last bucket of a window that is drawn, seconds. A window of
/// 10.0004 s ends with a bucket of 0.4 ms; its few completions drawn as a
/// whole second's count plunged the line to about zero at the end of most
/// windows, a collapse that never happened. A bucket at least this long is
/// drawn as its count over its length; a shorter one is left out and the
/// figure says so.
const SHORTEST_BUCKET_S: f64 = 0.5;

/// Why a point's timeline is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The knee of its curve: the most power (rate over mean response time).
    Knee,
    /// Past its curve's best rate, the rate fell under half of it.
    Collapse,
}

impl Why {
    /// In words, for captions.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Why::Knee => "knee",
            Why::Collapse => "collapse",
        }
    }
}

/// The knee and the collapse of every curve of a run, by point index.
///
/// A curve is the points of one server that share every axis value but the
/// last numeric axis (its x: users, connections, size). Its rate is goodput
/// when measured, else throughput. The knee is the point of most power, rate
/// over mean response time (Kleinrock's power peaks where the queue starts to
/// grow); the collapse is the last point past the best rate when its rate is
/// under [`COLLAPSE_SHARE`] of the best. Curves of fewer than 3 points have
/// no knee to tell apart from their ends.
pub(crate) fn key_points(results: &RunResults) -> Vec<(usize, Why)> {
    let numeric = |p: &PointRecord, i: usize| p.vars.get(i).and_then(|(_, v)| v.as_f64());
    let Some(x_axis) = results.points.first().and_then(|p| {
        (0..p.vars.len())
            .rev()
            .find(|&i| results.points.iter().all(|q| numeric(q, i).is_some()))
    }) else {
        return Vec::new();
    };
    let rate = |p: &PointRecord| {
        p.summary
            .get(&Metric::Goodput)
            .or_else(|| p.summary.get(&Metric::Throughput))
            .map(|s| s.mean)
    };
    let key = |p: &PointRecord| {
        let mut k = vec![p.server.clone().unwrap_or_default()];
        k.extend(
            p.vars
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != x_axis)
                .map(|(_, (n, v))| format!("{n}={v}")),
        );
        k
    };
    let mut curves: Vec<(Vec<String>, Vec<&PointRecord>)> = Vec::new();
    for p in results.points.iter().filter(|p| rate(p).is_some()) {
        let k = key(p);
        match curves.iter_mut().find(|(c, _)| *c == k) {
            Some((_, ps)) => ps.push(p),
            None => curves.push((k, vec![p])),
        }
    }
    let x_is_load = results
        .points
        .first()
        .and_then(|p| p.vars.get(x_axis))
        .is_some_and(|(name, _)| LOAD_AXES.contains(&name.as_str()));
    let mut out = Vec::new();
    for (_, mut ps) in curves {
        if ps.len() < 3 {
            continue;
        }
        ps.sort_by(|a, b| {
            let (a, b) = (numeric(a, x_axis), numeric(b, x_axis));
            a.unwrap_or(0.0).total_cmp(&b.unwrap_or(0.0))
        });
        let power = |p: &PointRecord| {
            let r = p.summary.get(&Metric::MeanMs)?.mean;
            (r > 0.0).then(|| rate(p).unwrap_or(0.0) / r)
        };
        if let Some(knee) = ps
            .iter()
            .filter_map(|p| power(p).map(|w| (p.index, w)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
        {
            out.push((knee.0, Why::Knee));
        }
        let (best_at, best) = ps
            .iter()
            .enumerate()
            .map(|(i, p)| (i, rate(p).unwrap_or(0.0)))
            .fold((0, f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
        let last = ps[ps.len() - 1];
        if x_is_load && best_at + 1 < ps.len() && rate(last).unwrap_or(0.0) < COLLAPSE_SHARE * best
        {
            out.push((last.index, Why::Collapse));
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.dedup_by_key(|(i, _)| *i);
    out
}

/// How long the bucket of second `t` of a window of `window_s` seconds lasted:
/// one second, except the last, which ends with the window. `None` for a
/// bucket shorter than [`SHORTEST_BUCKET_S`] (or a window of unknown length:
/// then every bucket counts as a whole second, as the load generator wrote it).
fn bucket_len(t: u64, window_s: f64) -> Option<f64> {
    if window_s <= 0.0 {
        return Some(1.0);
    }
    let len = (window_s - t as f64).min(1.0);
    (len >= SHORTEST_BUCKET_S).then_some(len)
}

/// The timeline of a point, or `None` when no window lasted two seconds.
///
/// Each bucket is drawn as a rate over its own length, so the last, partial
/// second of a window is neither a plunge nor a spike; one too short to give a
/// rate is left out, and a note under the title says how many were.
pub(crate) fn timeline(p: &PointRecord) -> Option<Figure> {
    if p.windows.iter().all(|w| w.series.len() < 2) {
        return None;
    }
    let mut dropped = 0usize;
    let mut series: Vec<Series> = Vec::new();
    for (i, w) in p.windows.iter().enumerate() {
        let mut points = Vec::with_capacity(w.series.len());
        for s in &w.series {
            match bucket_len(s.t, w.window_s) {
                Some(len) => {
                    let y = s.completed as f64 / len;
                    points.push((s.t as f64 + len / 2.0, y, y, y));
                }
                None => dropped += 1,
            }
        }
        series.push(Series {
            label: format!("repeat {}, finished", i + 1),
            points,
            ..Series::default()
        });
    }
    // Errors and timeouts of all repeats, per second, when there are any.
    let mut failed: Vec<(f64, f64, f64, f64)> = Vec::new();
    for w in &p.windows {
        for s in &w.series {
            let Some(len) = bucket_len(s.t, w.window_s) else {
                continue;
            };
            let y = (s.errors + s.timeouts) as f64 / len;
            let x = s.t as f64 + len / 2.0;
            match failed.iter_mut().find(|f| f.0 == x) {
                Some(f) => (f.1, f.2, f.3) = (f.1 + y, f.2 + y, f.3 + y),
                None => failed.push((x, y, y, y)),
            }
        }
    }
    if failed.iter().any(|f| f.1 > 0.0) {
        failed.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series {
            label: "errors and timeouts, all repeats".into(),
            points: failed,
            ..Series::default()
        });
    }
    let notes = if dropped > 0 {
        vec![format!(
            "the last {dropped} bucket(s), shorter than {SHORTEST_BUCKET_S} s at a window's end, are left out; \
             the other partial ones are drawn as their count over their length"
        )]
    } else {
        Vec::new()
    };
    Some(Figure {
        title: format!("Timeline: {}", p.label()),
        x_label: "time in the measured window (s)".into(),
        y_label: "per second".into(),
        series,
        notes,
        ..Figure::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Window;

    #[test]
    fn a_timeline_has_a_series_per_repeat_and_errors_when_there_are_any() {
        let second = |t, completed, errors| servelab_load::Second {
            t,
            completed,
            ok: completed,
            errors,
            ..servelab_load::Second::default()
        };
        let window = |series| Window {
            window_s: 3.0,
            users: 1,
            think_s: 0.0,
            scheduled: 0,
            completed: 0,
            ok: 0,
            failed: 0,
            timeouts: 0,
            unfinished: 0,
            connections: 0,
            connect_total_s: 0.0,
            mean_response_s: 0.0,
            unfinished_age_s: Some(0.0),
            thinks: None,
            think_uncounted_s: None,
            client_cpu_s: 0.0,
            client_threads: 1,
            others_cpu_s: None,
            series,
        };
        let mut p = PointRecord {
            server: Some("pool".into()),
            ..crate::store::results::tests::empty_point()
        };
        assert!(timeline(&p).is_none());
        p.windows = vec![
            window(vec![second(0, 10, 0), second(1, 12, 0), second(2, 2, 0)]),
            window(vec![second(0, 11, 0), second(1, 0, 3)]),
        ];
        let f = timeline(&p).unwrap();
        assert_eq!(f.series.len(), 3);
        assert_eq!(f.series[0].points[2], (2.5, 2.0, 2.0, 2.0));
        assert_eq!(f.series[2].points[1].1, 3.0);
        assert!(f.svg().unwrap().contains("repeat 2, finished"));
        assert!(f.notes.is_empty(), "{:?}", f.notes);

        // Regression: a window of 10.0004 s ended with a 0.4 ms bucket of 3
        // completions, drawn as 3 per second: a plunge from 1,000/s to ~0.
        // And a window of 2.75 s ends with a bucket of 0.75 s: 600 in it is 800/s.
        p.windows = vec![
            Window {
                window_s: 10.0004,
                ..window(
                    (0..=10)
                        .map(|t| second(t, if t < 10 { 1000 } else { 3 }, 0))
                        .collect(),
                )
            },
            Window {
                window_s: 2.75,
                ..window(vec![
                    second(0, 800, 0),
                    second(1, 800, 0),
                    second(2, 600, 0),
                ])
            },
        ];
        let f = timeline(&p).unwrap();
        assert_eq!(
            f.series[0].points.len(),
            10,
            "the 0.4 ms bucket is left out"
        );
        assert!(f.series[0].points.iter().all(|pt| pt.1 == 1000.0));
        assert_eq!(f.series[1].points[2], (2.375, 800.0, 800.0, 800.0));
        assert_eq!(f.notes.len(), 1);
        assert!(f.notes[0].contains("the last 1 bucket(s)"), "{:?}", f.notes);
    }

    /// A point of a curve of `server` at `users` with this goodput and mean
    /// response time (ms).
    fn at(index: usize, server: &str, users: i64, goodput: f64, r_ms: Option<f64>) -> PointRecord {
        let stat = |mean| crate::store::results::Stat {
            n: 3,
            mean,
            sd: Some(0.0),
            ci95_lo: mean,
            ci95_hi: mean,
            median: None,
            min: None,
            max: None,
        };
        let mut p = PointRecord {
            index,
            server: Some(server.into()),
            vars: vec![("users".into(), crate::experiment::Scalar::Int(users))],
            ..crate::store::results::tests::empty_point()
        };
        p.summary.insert(Metric::Goodput, stat(goodput));
        if let Some(r) = r_ms {
            p.summary.insert(Metric::MeanMs, stat(r));
        }
        p
    }

    #[test]
    fn the_knee_and_the_collapse_of_each_curve_are_found() {
        let exp =
            crate::experiment::Experiment::parse(crate::report::plot::figure::tests::EXP, "t.toml")
                .unwrap();
        let mut r = crate::report::plot::figure::tests::quick_run(&exp);
        // finish: rises to 100/s, then collapses to 0 (no response time);
        // cancel: rises and holds. Power (rate / R) peaks at 40 users in
        // both: 90/10 against 20/5 and 100/40.
        r.points = vec![
            at(0, "finish", 10, 20.0, Some(5.0)),
            at(1, "finish", 40, 90.0, Some(10.0)),
            at(2, "finish", 80, 100.0, Some(40.0)),
            at(3, "finish", 160, 0.0, None),
            at(4, "cancel", 10, 20.0, Some(5.0)),
            at(5, "cancel", 40, 90.0, Some(10.0)),
            at(6, "cancel", 80, 100.0, Some(40.0)),
            at(7, "cancel", 160, 95.0, Some(90.0)),
            // A curve of two points has no knee to tell from its ends.
            at(8, "short", 10, 5.0, Some(1.0)),
            at(9, "short", 20, 1.0, Some(9.0)),
        ];
        assert_eq!(
            key_points(&r),
            vec![(1, Why::Knee), (3, Why::Collapse), (5, Why::Knee)]
        );

        // Along an axis that is not a load (file size), a rate that falls is
        // what bigger files do: a knee, but no collapse.
        for p in &mut r.points {
            p.vars[0].0 = "size".into();
        }
        assert_eq!(key_points(&r), vec![(1, Why::Knee), (5, Why::Knee)]);
    }
}
