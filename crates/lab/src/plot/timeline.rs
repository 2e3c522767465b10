//! A point's timeline: requests finished in each second of each measured
//! window, one series per repeat. A warm-up that never ended, a collapse, a
//! stall or an end-of-window cut-off is plain on a timeline and invisible in a
//! mean, so the report draws one for every point that failed a check.

use super::figure::{Figure, Series};
use crate::results::PointRecord;

/// Most timelines in a report: beyond it, the table of figures names the rest.
pub(crate) const MOST: usize = 8;

/// The timeline of a point, or `None` when no window lasted two seconds.
pub(crate) fn timeline(p: &PointRecord) -> Option<Figure> {
    if p.windows.iter().all(|w| w.series.len() < 2) {
        return None;
    }
    let mut series: Vec<Series> = p
        .windows
        .iter()
        .enumerate()
        .map(|(i, w)| Series {
            label: format!("repeat {}, finished", i + 1),
            points: w
                .series
                .iter()
                .map(|s| {
                    let y = s.completed as f64;
                    (s.t as f64 + 0.5, y, y, y)
                })
                .collect(),
            ..Series::default()
        })
        .collect();
    // Errors and timeouts of all repeats, summed per second, when there are any.
    let mut failed: Vec<(f64, f64, f64, f64)> = Vec::new();
    for w in &p.windows {
        for s in &w.series {
            let y = (s.errors + s.timeouts) as f64;
            match failed.iter_mut().find(|f| f.0 == s.t as f64 + 0.5) {
                Some(f) => (f.1, f.2, f.3) = (f.1 + y, f.2 + y, f.3 + y),
                None => failed.push((s.t as f64 + 0.5, y, y, y)),
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
    Some(Figure {
        title: format!("Timeline: {}", p.label()),
        x_label: "time in the measured window (s)".into(),
        y_label: "per second".into(),
        series,
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
            client_cpu_s: 0.0,
            client_threads: 1,
            series,
        };
        let mut p = PointRecord {
            server: Some("pool".into()),
            ..crate::results::tests::empty_point()
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
    }
}
