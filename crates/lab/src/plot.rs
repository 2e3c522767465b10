//! The report's plots: inline SVG drawn with `plotters`, one per `[[plot]]`.
//!
//! Each server (and each value of the axes that are not on the x axis) is a
//! series: a line through the medians with an error bar from the smallest to the
//! largest repeat. Predictions are overlaid where the experiment has them: the
//! simulator's mean as a dashed line inside a shaded 95% interval band, and the
//! exact model as a dotted line. Log axes are drawn as log10 of the value with
//! tick labels in the value's own units, which keeps one code path for both scales.

use std::collections::BTreeMap;

use plotters::prelude::*;

use crate::error::{LabError, Result};
use crate::experiment::{Experiment, PlotSpec};
use crate::metric::{self, Metric};
use crate::results::{PointRecord, RunResults, Status};

/// One series of a plot: (x, median, min, max) sorted by x, and predictions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Measured (or simulated) points.
    pub points: Vec<(f64, f64, f64, f64)>,
    /// Simulator prediction (x, mean, lo, hi).
    pub predicted: Vec<(f64, f64, f64, f64)>,
    /// Exact model (x, value).
    pub exact: Vec<(f64, f64)>,
    /// The model's saturation population N*, when x is the number of users.
    pub saturation: Option<f64>,
}

/// Builds the series of a plot from a run.
pub fn series(plot: &PlotSpec, exp: &Experiment, results: &RunResults) -> Vec<Series> {
    let x_axis = plot.x.get_ref();
    let div = exp
        .axis(x_axis)
        .and_then(|a| a.display_divisor)
        .unwrap_or(1.0);
    let metric = *plot.y.get_ref();
    let keep = |r: &PointRecord| {
        r.status == Status::Ok
            && plot.filter.as_ref().is_none_or(|f| {
                f.get_ref().iter().all(|(k, v)| {
                    r.var(k).is_some_and(|rv| {
                        let want = match v {
                            toml::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        rv.to_string() == want
                            || rv
                                .as_f64()
                                .zip(want.parse::<f64>().ok())
                                .is_some_and(|(a, b)| a == b)
                    })
                })
            })
    };
    let key = |r: &PointRecord| {
        let mut parts: Vec<String> = r.server.iter().cloned().collect();
        for (n, v) in &r.vars {
            let filtered = plot
                .filter
                .as_ref()
                .is_some_and(|f| f.get_ref().contains_key(n));
            if n != x_axis && !filtered {
                parts.push(format!("{n}={v}"));
            }
        }
        if parts.is_empty() {
            metric.to_string()
        } else {
            parts.join(", ")
        }
    };
    let relative = plot.relative_to.as_ref().map(|r| r.get_ref().as_str());
    let mut by_key: BTreeMap<(usize, String), Series> = BTreeMap::new();
    for r in results.points.iter().filter(|r| keep(r)) {
        let Some(x) = r.var(x_axis).and_then(|v| v.as_f64()) else {
            continue;
        };
        let Some(s) = r.summary.get(&metric) else {
            continue;
        };
        let mut scale = 1.0;
        if let Some(server) = relative.filter(|s| *s != "first") {
            // The reference server at the same axis values.
            let Some(base) = results
                .points
                .iter()
                .find(|b| {
                    b.status == Status::Ok
                        && b.server.as_deref() == Some(server)
                        && b.vars == r.vars
                })
                .and_then(|b| b.summary.get(&metric))
            else {
                continue;
            };
            if base.median <= 0.0 {
                continue;
            }
            scale = 1.0 / base.median;
        }
        let k = key(r);
        // Series keep the order in which their first point appears in the run.
        let order = by_key
            .keys()
            .find(|(_, n)| *n == k)
            .map_or(by_key.len(), |(o, _)| *o);
        let e = by_key.entry((order, k.clone())).or_insert_with(|| Series {
            label: k,
            ..Series::default()
        });
        let x = x / div;
        e.points
            .push((x, s.median * scale, s.min * scale, s.max * scale));
        if relative.is_none() && plot.predicted != Some(false) {
            if let Some(p) = r.predicted.get(&metric) {
                e.predicted.push((x, p.median, p.min, p.max));
            }
            if let Some(v) = r.exact.get(&metric) {
                e.exact.push((x, *v));
            }
            if x_axis == "users" {
                e.saturation = r.exact.get(&Metric::SaturationUsers).copied();
            }
        }
    }
    let mut out: Vec<Series> = by_key.into_values().collect();
    for s in &mut out {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.predicted.sort_by(|a, b| a.0.total_cmp(&b.0));
        s.exact.sort_by(|a, b| a.0.total_cmp(&b.0));
        if relative == Some("first")
            && let Some(&(_, base, _, _)) = s.points.first()
            && base > 0.0
        {
            for p in &mut s.points {
                *p = (p.0, p.1 / base, p.2 / base, p.3 / base);
            }
        }
    }
    out
}

/// The y-axis label of a plot.
pub fn y_label(plot: &PlotSpec) -> String {
    match plot.relative_to.as_ref().map(|r| r.get_ref().as_str()) {
        Some("first") => format!(
            "{} relative to the first point (x)",
            plot.y.get_ref().label()
        ),
        Some(server) => format!("{} relative to {server} (x)", plot.y.get_ref().label()),
        None => plot.y.get_ref().axis_label(),
    }
}

/// The x-axis label of a plot.
pub fn x_label(plot: &PlotSpec, exp: &Experiment) -> String {
    match exp.axis(plot.x.get_ref()) {
        Some(a) => match &a.unit {
            Some(u) => format!("{} ({u})", a.label),
            None => a.label.clone(),
        },
        None => plot.x.get_ref().clone(),
    }
}

/// Draws a plot as an SVG document.
pub fn svg(plot: &PlotSpec, exp: &Experiment, results: &RunResults) -> Result<String> {
    let series = series(plot, exp, results);
    let log_x = exp.axis(plot.x.get_ref()).is_some_and(|a| a.log);
    draw(
        &plot.title,
        &x_label(plot, exp),
        &y_label(plot),
        &series,
        log_x,
        plot.log_y,
    )
    .map_err(|e| LabError::Other(format!("plot `{}`: {e}", plot.title)))
}

type DrawResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Draws series into an SVG string.
pub fn draw(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    log_x: bool,
    log_y: bool,
) -> DrawResult<String> {
    let tx = |x: f64| if log_x { x.max(1e-12).log10() } else { x };
    let ty = |y: f64| if log_y { y.max(1e-12).log10() } else { y };
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.0)
                .chain(s.predicted.iter().map(|p| p.0))
        })
        .map(tx)
        .collect();
    let ys: Vec<f64> = series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .flat_map(|p| [p.2, p.3])
                .chain(s.predicted.iter().flat_map(|p| [p.2, p.3]))
                .chain(s.exact.iter().map(|p| p.1))
        })
        .filter(|y| y.is_finite())
        .map(ty)
        .collect();
    let (mut x0, mut x1) = min_max(&xs).unwrap_or((0.0, 1.0));
    if x1 - x0 < 1e-9 {
        x0 -= 0.5;
        x1 += 0.5;
    } else {
        let pad = (x1 - x0) * 0.04;
        x0 -= pad;
        x1 += pad;
    }
    let (y_lo, y_hi) = min_max(&ys).unwrap_or((0.0, 1.0));
    let (y0, y1) = if log_y {
        (y_lo - 0.1, y_hi + 0.1)
    } else {
        let lo = if y_lo >= 0.0 { 0.0 } else { y_lo * 1.1 };
        let hi = if y_hi <= 0.0 { 1.0 } else { y_hi * 1.1 };
        (lo, if hi - lo < 1e-12 { lo + 1.0 } else { hi })
    };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 440)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(72)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let fx = |v: &f64| {
            if log_x {
                log_tick(*v)
            } else {
                metric::fmt_tick(*v)
            }
        };
        let fy = |v: &f64| {
            if log_y {
                log_tick(*v)
            } else {
                metric::fmt_tick(*v)
            }
        };
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            if !s.predicted.is_empty() {
                let mut band: Vec<(f64, f64)> =
                    s.predicted.iter().map(|p| (tx(p.0), ty(p.2))).collect();
                band.extend(s.predicted.iter().rev().map(|p| (tx(p.0), ty(p.3))));
                chart.draw_series(std::iter::once(Polygon::new(
                    band,
                    color.mix(0.15).filled(),
                )))?;
                chart
                    .draw_series(DashedLineSeries::new(
                        s.predicted.iter().map(|p| (tx(p.0), ty(p.1))),
                        6,
                        4,
                        color.stroke_width(2),
                    ))?
                    .label(format!("{} (simulated, 95% band)", s.label))
                    .legend(move |(x, y)| dashes(x, y, 6, color.stroke_width(2)));
            }
            if !s.exact.is_empty() {
                chart
                    .draw_series(DashedLineSeries::new(
                        s.exact.iter().map(|p| (tx(p.0), ty(p.1))),
                        2,
                        3,
                        BLACK.stroke_width(1),
                    ))?
                    .label(format!("{} (exact model)", s.label))
                    .legend(|(x, y)| dashes(x, y, 2, BLACK.stroke_width(1)));
            }
            chart
                .draw_series(LineSeries::new(
                    s.points.iter().map(|p| (tx(p.0), ty(p.1))),
                    color.stroke_width(2),
                ))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
            // Error bars (min..max over repeats) as a vertical stroke with caps; the
            // caps are a fixed fraction of the x range so they read the same on
            // linear and log axes.
            let cap = (x1 - x0) * 0.008;
            chart.draw_series(s.points.iter().filter(|p| p.3 > p.2).flat_map(|p| {
                let (x, lo, hi) = (tx(p.0), ty(p.2), ty(p.3));
                [
                    PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], color.stroke_width(1)),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], color.stroke_width(1)),
                ]
            }))?;
            chart.draw_series(
                s.points
                    .iter()
                    .map(|p| Circle::new((tx(p.0), ty(p.1)), 3, color.filled())),
            )?;
        }
        // N*, where the model saturates, when every series agrees on it.
        let nstar: Vec<f64> = series.iter().filter_map(|s| s.saturation).collect();
        if let Some(&n) = nstar.first()
            && nstar.iter().all(|m| (m - n).abs() < 1e-9)
            && tx(n) > x0
            && tx(n) < x1
        {
            chart
                .draw_series(DashedLineSeries::new(
                    [(tx(n), y0), (tx(n), y1)],
                    4,
                    4,
                    RGBColor(120, 120, 120).stroke_width(1),
                ))?
                .label(format!("saturation N* = {}", metric::fmt(n)))
                .legend(|(x, y)| dashes(x, y, 4, RGBColor(120, 120, 120).stroke_width(1)));
        }
        if !series.is_empty() {
            let position = quietest_corner(series, &tx, &ty, (x0, x1), (y0, y1));
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .label_font(("sans-serif", 12))
                .position(position)
                .draw()?;
        }
        root.present()?;
    }
    Ok(out)
}

/// A legend sample of dashes `dash` pixels long.
fn dashes(
    x: i32,
    y: i32,
    dash: i32,
    style: ShapeStyle,
) -> plotters::element::DashedPathElement<std::vec::IntoIter<(i32, i32)>, i32> {
    plotters::element::DashedPathElement::new(vec![(x, y), (x + 18, y)], dash, dash, style)
}

/// The label of a tick at log10 value `v` on a log axis: the value when it is
/// near 1, 2 or 5 times a power of ten, else nothing (ticks fall at even steps of
/// the logarithm, and 1.58 or 3.98 would only clutter the axis).
fn log_tick(v: f64) -> String {
    let value = 10f64.powf(v);
    let mantissa = value / 10f64.powf(v.floor());
    if [1.0, 2.0, 5.0, 10.0]
        .iter()
        .any(|m| (mantissa / m - 1.0).abs() < 0.03)
    {
        metric::fmt_tick(metric::fmt(value).parse().unwrap_or(value))
    } else {
        String::new()
    }
}

/// The corner of the plot with the fewest data points, for the legend.
fn quietest_corner(
    series: &[Series],
    tx: &dyn Fn(f64) -> f64,
    ty: &dyn Fn(f64) -> f64,
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> SeriesLabelPosition {
    // Upper right, upper left, lower right, lower left.
    let mut counts = [0usize; 4];
    for s in series {
        let pts = s
            .points
            .iter()
            .map(|p| (p.0, p.1))
            .chain(s.predicted.iter().map(|p| (p.0, p.1)));
        for (x, y) in pts {
            let fx = (tx(x) - x0) / (x1 - x0);
            let fy = (ty(y) - y0) / (y1 - y0);
            let right = fx > 0.5;
            // The legend covers about the top or the bottom 40% of the plot.
            if fy > 0.6 {
                counts[if right { 0 } else { 1 }] += 1;
            } else if fy < 0.4 {
                counts[if right { 2 } else { 3 }] += 1;
            }
        }
    }
    match (0..4).min_by_key(|&i| (counts[i], i)).unwrap_or(0) {
        0 => SeriesLabelPosition::UpperRight,
        1 => SeriesLabelPosition::UpperLeft,
        2 => SeriesLabelPosition::LowerRight,
        _ => SeriesLabelPosition::LowerLeft,
    }
}

fn min_max(v: &[f64]) -> Option<(f64, f64)> {
    let mut it = v.iter().copied().filter(|x| x.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), x| (a.min(x), b.max(x))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draw_labels_both_axes_and_every_series() {
        let s = vec![
            Series {
                label: "pool".into(),
                points: vec![(1.0, 10.0, 9.0, 11.0), (10.0, 20.0, 18.0, 21.0)],
                predicted: vec![(1.0, 10.5, 10.0, 11.0), (10.0, 19.0, 18.0, 20.0)],
                exact: vec![(1.0, 10.2), (10.0, 19.5)],
                saturation: Some(5.0),
            },
            Series {
                label: "serial".into(),
                points: vec![(1.0, 5.0, 5.0, 5.0)],
                ..Series::default()
            },
        ];
        let svg = draw(
            "T",
            "users (count)",
            "throughput (requests/s)",
            &s,
            true,
            false,
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for needle in [
            "users (count)",
            "throughput (requests/s)",
            "pool (exact model)",
            "serial",
            "pool (simulated",
            "N* = 5.00",
        ] {
            assert!(svg.contains(needle), "missing {needle}");
        }
    }

    #[test]
    fn log_ticks_keep_only_round_values() {
        assert_eq!(log_tick(0.0), "1");
        assert_eq!(log_tick(2.0), "100");
        assert_eq!(log_tick(std::f64::consts::LOG10_2), "2");
        assert_eq!(log_tick(0.2), "");
        assert_eq!(log_tick(5000f64.log10()), "5000");
    }

    #[test]
    fn an_empty_plot_still_draws() {
        let svg = draw("empty", "x", "y", &[], false, false).unwrap();
        assert!(svg.contains("empty"));
    }
}
