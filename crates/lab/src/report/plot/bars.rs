//! A category x axis (engines, or keep-alive against a connection per request):
//! grouped bars with 95% interval bars, never lines across two points, and a
//! prediction drawn over the bar it predicts (grey band, black dashed mean).

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{DESC, DrawResult, FONT, TICK, Ticked, WIDTH, min_max, y_axis};

/// The colour of the mark of a missing bar.
const GREY_TEXT: RGBColor = RGBColor(0x66, 0x66, 0x66);
use super::figure::Figure;
use super::lines::error_bars;
use super::style::{GRID, SIMULATED_DASH, Style};
use super::ticks;

/// A bar: (mean, 95% interval low, high).
pub(super) type Bar = (f64, f64, f64);

/// The bar series of a category figure: (legend label, value per group), where a
/// value is (mean, 95% interval low, high). With several series, groups are the series
/// (servers) and bars the x values; with one, groups are the x values.
pub(super) fn bar_series(fig: &Figure) -> Vec<(String, Vec<Option<Bar>>)> {
    laid_out(fig, |s| &s.points)
}

/// The simulator's predictions of a category figure, laid out as
/// [`bar_series`] lays out its bars: a prediction is drawn over the bar it
/// predicts.
pub(super) fn predicted_series(fig: &Figure) -> Vec<(String, Vec<Option<Bar>>)> {
    laid_out(fig, |s| &s.predicted)
}

/// Series `values` of `fig` in the bars' layout.
fn laid_out(
    fig: &Figure,
    values_of: impl Fn(&super::figure::Series) -> &Vec<(f64, f64, f64, f64)>,
) -> Vec<(String, Vec<Option<Bar>>)> {
    let xs = category_values(fig);
    let name = |x: f64| {
        fig.x_names
            .iter()
            .find(|(v, _)| (v - x).abs() < 1e-9)
            .map_or_else(|| ticks::label(x), |(_, n)| n.clone())
    };
    let short_label = fig
        .x_label
        .split(" (")
        .next()
        .unwrap_or(&fig.x_label)
        .to_string();
    if fig.series.len() == 1 {
        let s = &fig.series[0];
        let values = xs
            .iter()
            .map(|x| {
                values_of(s)
                    .iter()
                    .find(|p| p.0 == *x)
                    .map(|p| (p.1, p.2, p.3))
            })
            .collect();
        return vec![(s.label.clone(), values)];
    }
    xs.iter()
        .map(|x| {
            let values = fig
                .series
                .iter()
                .map(|s| {
                    values_of(s)
                        .iter()
                        .find(|p| p.0 == *x)
                        .map(|p| (p.1, p.2, p.3))
                })
                .collect();
            (format!("{short_label} = {}", name(*x)), values)
        })
        .collect()
}

/// The x values present in a category figure, in axis order.
pub(super) fn category_values(fig: &Figure) -> Vec<f64> {
    let mut xs: Vec<f64> = fig
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// The group names of a category figure.
pub(super) fn groups(fig: &Figure) -> Vec<String> {
    if fig.series.len() == 1 {
        category_values(fig)
            .iter()
            .map(|x| {
                fig.x_names
                    .iter()
                    .find(|(v, _)| (v - x).abs() < 1e-9)
                    .map_or_else(|| ticks::label(*x), |(_, n)| n.clone())
            })
            .collect()
    } else {
        fig.series.iter().map(|s| s.label.clone()).collect()
    }
}

/// Largest ratio of bar heights drawn on a linear axis.
const LOG_SPAN: f64 = 20.0;

/// Whether bars go on a log axis: asked for, or heights spanning more than
/// [`LOG_SPAN`] (all positive).
fn use_log(fig: &Figure, series: &[(String, Vec<Option<Bar>>)]) -> bool {
    let means: Vec<f64> = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().map(|b| b.0))
        .collect();
    let positive = !means.is_empty() && means.iter().all(|m| *m > 0.0);
    let span = min_max(means.iter().copied()).map_or(1.0, |(a, b)| b / a);
    positive && (fig.log_y || span > LOG_SPAN)
}

/// A category x axis: grouped bars with 95% interval bars.
pub(super) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let (mut series, mut predicted) = (bar_series(fig), predicted_series(fig));
    // As on a line figure: values that are all at or above zero draw no
    // interval below it (a few noisy repeats' symmetric t interval).
    let means = || {
        series
            .iter()
            .chain(&predicted)
            .flat_map(|(_, v)| v.iter().flatten().map(|b| b.0))
    };
    if means().all(|m| !m.is_finite() || m >= 0.0) {
        for (_, v) in series.iter_mut().chain(predicted.iter_mut()) {
            for b in v.iter_mut().flatten() {
                b.1 = b.1.max(0.0);
            }
        }
    }
    let groups = groups(fig);
    let n = groups.len().max(1);
    let values = series
        .iter()
        .chain(&predicted)
        .flat_map(|(_, v)| v.iter().flatten().flat_map(|(m, lo, hi)| [*m, *lo, *hi]));
    let (ya, yb) = min_max(values).unwrap_or((0.0, 1.0));
    // Bars whose heights span more than LOG_SPAN on a linear axis leave the
    // small ones unreadable (engines: fork's 640 us over 6 us bars): a log
    // axis then, with bars from its bottom.
    let log = use_log(fig, &series);
    let ty = |y: f64| if log { y.max(1e-12).log10() } else { y };
    let (y0, y1, y_ticks) = if log {
        let positive = series
            .iter()
            .chain(&predicted)
            .flat_map(|(_, v)| v.iter().flatten().flat_map(|(m, lo, hi)| [*m, *lo, *hi]))
            .filter(|y| *y > 0.0);
        let (pa, pb) = min_max(positive).unwrap_or((1.0, 10.0));
        y_axis(pa, pb, true)
    } else {
        y_axis(ya.min(0.0), yb, false)
    };
    let base = if log { y0 } else { y0.max(0.0) };
    let x_ticks: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let fmt_x = |v: &f64| {
        let i = (v - 0.5).round();
        if i >= 0.0 {
            groups.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let fmt_y = |v: &f64| ticks::label(if log { 10f64.powf(*v) } else { *v });
    let y_desc = if log {
        format!("{} (log scale)", fig.y_label)
    } else {
        fig.y_label.clone()
    };
    let x_desc = if fig.series.len() == 1 {
        fig.x_label.clone()
    } else {
        "server".to_string()
    };
    let mut chart = ChartBuilder::on(area)
        .margin_left(12)
        .margin_right(28)
        .margin_top(10)
        .x_label_area_size(64)
        .y_label_area_size(100)
        .build_cartesian_2d(
            Ticked {
                lo: 0.0,
                hi: n as f64,
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
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc.as_str())
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .label_style((FONT, TICK))
        .axis_desc_style((FONT, DESC))
        .bold_line_style(GRID)
        .max_light_lines(0)
        .draw()?;
    let k = series.len().max(1) as f64;
    // At most 90 px a bar (the plot is about WIDTH - 140 px wide), centred in its
    // group: one bar alone would otherwise fill the plot and read as a block.
    let group_px = f64::from(WIDTH - 140) / n as f64;
    let width = (0.8 / k).min(90.0 / group_px);
    let start = (1.0 - width * k) / 2.0;
    for (j, (_, values)) in series.iter().enumerate() {
        let color = Style::nth(j).color;
        for (g, v) in values.iter().enumerate() {
            let a = g as f64 + start + width * j as f64;
            let b = a + width;
            let Some((mean, lo, hi)) = *v else {
                // A missing bar is marked where it would stand, so that it does
                // not read as 0; the figure's note says why it is missing.
                chart.draw_series([Text::new(
                    "n/a",
                    ((a + b) / 2.0, base),
                    (FONT, TICK)
                        .into_font()
                        .color(&GREY_TEXT)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )])?;
                continue;
            };
            chart.draw_series([
                Rectangle::new([(a, base), (b, ty(mean))], color.filled()),
                Rectangle::new([(a, base), (b, ty(mean))], BLACK.stroke_width(1)),
            ])?;
            // On a log axis an interval reaching 0 or below is cut at the
            // axis' bottom.
            let lo = if log && lo <= 0.0 { 10f64.powf(y0) } else { lo };
            let points = [((a + b) / 2.0, mean, lo, hi)];
            error_bars(&mut chart, &points, BLACK, &|x| x, &ty)?;
        }
    }
    // The prediction over the bar it predicts: its 95% band in grey and its
    // mean as a black dashed line across the bar, a little wider than it so
    // that a mean at the bar's top still shows.
    for (j, (_, values)) in predicted.iter().enumerate() {
        for (g, v) in values.iter().enumerate() {
            let Some((mean, lo, hi)) = *v else { continue };
            let a = g as f64 + start + width * j as f64 - width * 0.1;
            let b = a + width * 1.2;
            let lo = if log && lo <= 0.0 { 10f64.powf(y0) } else { lo };
            chart.draw_series([Rectangle::new(
                [(a, ty(lo)), (b, ty(hi))],
                BLACK.mix(0.25).filled(),
            )])?;
            chart.draw_series([DashedPathElement::new(
                vec![(a, ty(mean)), (b, ty(mean))],
                SIMULATED_DASH.0 + 2,
                SIMULATED_DASH.1,
                BLACK.stroke_width(3),
            )])?;
        }
    }
    Ok(())
}
