//! A continuous x axis: a line through each series' means where the axis was
//! sampled densely enough to draw one ([`Figure::joined_runs`]), error bars from min to max, markers, the simulator's band and
//! the exact model's line under them, and the saturation population N*.

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::canvas::{Chart, DESC, DrawResult, FONT, TICK, Ticked, min_max, saturation, y_axis};
use super::figure::{Figure, Series};
use super::style::{EXACT, GRID, Marker};
use super::ticks;

/// A continuous x axis: lines through the means, 95% interval bars, predictions.
/// Whether every value the figure draws (measured means, predictions,
/// exact values) is at or above zero.
fn non_negative(fig: &Figure) -> bool {
    fig.series.iter().all(|s| {
        s.points
            .iter()
            .chain(&s.predicted)
            .map(|p| p.1)
            .chain(s.exact.iter().map(|p| p.1))
            .all(|v| !v.is_finite() || v >= 0.0)
    })
}

pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let tx = |x: f64| if fig.log_x { x.max(1e-12).log10() } else { x };
    // A figure whose values are all at or above zero (rates, times, CPU)
    // draws nothing below zero: an interval that reaches under it is the
    // symmetric t interval of a few noisy repeats, and an axis running to
    // "-30 ms" would tell a reader that a response time could be negative.
    // Relative figures (a difference in percent) keep their negative side.
    let floor = non_negative(fig).then_some(0.0);
    let ty = |y: f64| {
        let y = floor.map_or(y, |f| y.max(f));
        if fig.log_y { y.max(1e-12).log10() } else { y }
    };
    let xs: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.0)
                .chain(s.predicted.iter().map(|p| p.0))
        })
        .collect();
    let (xa, xb) = min_max(xs.iter().copied().map(tx)).unwrap_or((0.0, 1.0));
    let (x0, x1) = if xb - xa < 1e-9 {
        (xa - 0.5, xb + 0.5)
    } else {
        let pad = (xb - xa) * 0.05;
        (xa - pad, xb + pad)
    };
    let x_ticks = if fig.log_x {
        ticks::log(x0, x1, &xs)
    } else {
        ticks::at_data(x0, x1, &xs).unwrap_or_else(|| ticks::linear(x0, x1))
    };
    let ys = fig.series.iter().flat_map(|s| {
        s.points
            .iter()
            .flat_map(|p| [p.2, p.3])
            .chain(s.predicted.iter().flat_map(|p| [p.2, p.3]))
            .chain(s.exact.iter().map(|p| p.1))
    });
    let ys = ys.map(|y| floor.map_or(y, |f| y.max(f)));
    let (ya, yb) = min_max(ys.filter(|y| !fig.log_y || *y > 0.0)).unwrap_or((0.0, 1.0));
    let (y0, y1, y_ticks) = y_axis(ya, yb, fig.log_y);
    let fmt_x = |v: &f64| ticks::label(if fig.log_x { 10f64.powf(*v) } else { *v });
    let fmt_y = |v: &f64| ticks::label(if fig.log_y { 10f64.powf(*v) } else { *v });
    let mut chart = ChartBuilder::on(area)
        .margin_left(12)
        .margin_right(28)
        .margin_top(10)
        .x_label_area_size(64)
        .y_label_area_size(100)
        .build_cartesian_2d(
            Ticked {
                lo: x0,
                hi: x1,
                ticks: x_ticks,
            },
            Ticked {
                lo: y0,
                hi: y1,
                ticks: y_ticks,
            },
        )?;
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .label_style((FONT, TICK))
        .axis_desc_style((FONT, DESC))
        .bold_line_style(GRID)
        .max_light_lines(0)
        .draw()?;
    // N* under everything else: it marks a place on the axis, not data.
    if let Some(n) = saturation(fig).filter(|n| tx(*n) > x0 && tx(*n) < x1) {
        chart.draw_series(DashedLineSeries::new(
            [(tx(n), y0), (tx(n), y1)],
            5,
            4,
            RGBColor(110, 110, 110).stroke_width(2),
        ))?;
    }
    // Interval boxes of different series at the same x stand side by side.
    let dx = (x1 - x0) * 0.012;
    let boxed: Vec<usize> = (0..fig.series.len())
        .filter(|&i| !fig.series[i].predicted.is_empty())
        .collect();
    for (i, s) in fig.series.iter().enumerate() {
        let style = fig.style(i);
        let k = boxed.iter().position(|&j| j == i).unwrap_or(0) as f64;
        let shift = (k - (boxed.len().max(1) - 1) as f64 / 2.0) * 2.2 * dx;
        predictions(&mut chart, fig, s, style.color, &tx, &ty, dx, shift)?;
    }
    for (i, s) in fig.series.iter().enumerate() {
        let style = fig.style(i);
        for run in fig.joined_runs(i) {
            let line: Vec<(f64, f64)> = run.iter().map(|p| (tx(p.0), ty(p.1))).collect();
            match style.dash {
                None => {
                    chart.draw_series(LineSeries::new(line, style.color.stroke_width(2)))?;
                }
                Some((d, g)) => {
                    chart.draw_series(DashedLineSeries::new(
                        line,
                        d,
                        g,
                        style.color.stroke_width(2),
                    ))?;
                }
            }
        }
        error_bars(&mut chart, &s.points, style.color, &tx, &ty)?;
        let at: Vec<(f64, f64)> = s.points.iter().map(|p| (tx(p.0), ty(p.1))).collect();
        markers(&mut chart, style.marker, &at, style.color)?;
    }
    Ok(())
}

/// Draws a marker at each of `at` on a chart.
fn markers<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    kind: Marker,
    at: &[(f64, f64)],
    color: RGBColor,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let strokes = kind.strokes();
    chart.draw_series(at.iter().flat_map(|c| {
        strokes
            .iter()
            .map(move |s| EmptyElement::at(*c) + PathElement::new(s.clone(), color.stroke_width(2)))
    }))?;
    Ok(())
}

/// Vertical bars from min to max with 10 px caps.
pub(super) fn error_bars<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: &[(f64, f64, f64, f64)],
    color: RGBColor,
    tx: &dyn Fn(f64) -> f64,
    ty: &dyn Fn(f64) -> f64,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let style = color.stroke_width(2);
    let spread = || points.iter().filter(|p| p.3 > p.2);
    chart.draw_series(
        spread().map(|p| PathElement::new(vec![(tx(p.0), ty(p.2)), (tx(p.0), ty(p.3))], style)),
    )?;
    let cap = |x: f64, y: f64| {
        EmptyElement::at((tx(x), ty(y))) + PathElement::new(vec![(-5, 0), (5, 0)], style)
    };
    chart.draw_series(spread().map(|p| cap(p.0, p.2)))?;
    chart.draw_series(spread().map(|p| cap(p.0, p.3)))?;
    Ok(())
}

/// The simulator's band and mean, and the exact model's line: drawn under the
/// measured points. With fewer than three points, and wherever the axis was
/// sampled too sparsely to join the measured points ([`Figure::runs`]), the
/// band is an interval box at each point and the exact value a short black
/// dash, for the same reason the measured points are not joined there.
#[allow(clippy::too_many_arguments)]
fn predictions<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    fig: &Figure,
    s: &Series,
    color: RGBColor,
    tx: &dyn Fn(f64) -> f64,
    ty: &dyn Fn(f64) -> f64,
    dx: f64,
    shift: f64,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let sim_runs = if s.predicted.len() >= 3 {
        fig.runs(&s.predicted, |p| p.0)
    } else {
        s.predicted.iter().map(|p| vec![*p]).collect()
    };
    let mut boxes = Vec::new();
    for run in sim_runs {
        if run.len() < 2 {
            boxes.extend(run);
            continue;
        }
        let mut band: Vec<(f64, f64)> = run.iter().map(|p| (tx(p.0), ty(p.2))).collect();
        band.extend(run.iter().rev().map(|p| (tx(p.0), ty(p.3))));
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            color.mix(0.18).filled(),
        )))?;
        chart.draw_series(DashedLineSeries::new(
            run.iter().map(|p| (tx(p.0), ty(p.1))),
            super::style::SIMULATED_DASH.0,
            super::style::SIMULATED_DASH.1,
            color.stroke_width(2),
        ))?;
    }
    // A box over the 95% interval, `dx` either side of the point moved by
    // `shift`, and the mean across it.
    let x = |p: &(f64, f64, f64, f64)| tx(p.0) + shift;
    chart.draw_series(boxes.iter().map(|p| {
        Rectangle::new(
            [(x(p) - dx, ty(p.2)), (x(p) + dx, ty(p.3))],
            color.mix(0.3).filled(),
        )
    }))?;
    chart.draw_series(boxes.iter().map(|p| {
        PathElement::new(
            vec![(x(p) - dx, ty(p.1)), (x(p) + dx, ty(p.1))],
            color.stroke_width(2),
        )
    }))?;
    let exact_runs = if s.exact.len() >= 3 {
        fig.runs(&s.exact, |p| p.0)
    } else {
        s.exact.iter().map(|p| vec![*p]).collect()
    };
    // Wider than the simulator's boxes, so that both show where they agree.
    let half = 1.8 * dx + shift.abs();
    for run in exact_runs {
        if run.len() >= 2 {
            chart.draw_series(DashedLineSeries::new(
                run.iter().map(|p| (tx(p.0), ty(p.1))),
                2,
                3,
                EXACT.stroke_width(2),
            ))?;
        } else {
            chart.draw_series(run.iter().map(|p| {
                DashedPathElement::new(
                    vec![(tx(p.0) - half, ty(p.1)), (tx(p.0) + half, ty(p.1))],
                    2,
                    3,
                    EXACT.stroke_width(2),
                )
            }))?;
        }
    }
    Ok(())
}
