//! The SVG of a [`Figure`]: a title with the figure's notes under it, the plot
//! (lines on a continuous x axis, grouped bars on a category), and the legend
//! below the plot, where it can cover no data.
//!
//! Sizes are chosen for the report's content column (about 960 px wide at 100%
//! zoom), where the SVG is shown at its own width: tick labels are 16 px, as large
//! as the page's body text. plotters writes a font size as the size given divided
//! by 1.24, hence the sizes of 20 and more below.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{EXACT, GRID, Marker, Style, WARN};
use super::{Figure, Series, ticks};

type DrawResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Width of every figure, in SVG pixels.
pub const WIDTH: u32 = 960;
/// Height of the plotting part (axes, ticks and their labels).
const PLOT_HEIGHT: u32 = 470;
/// Font sizes as plotters takes them (÷ 1.24 in the SVG): 16 px ticks and legend,
/// 17 px axis labels, 19 px title.
const TICK: u32 = 20;
const DESC: u32 = 21;
const TITLE: u32 = 24;
/// Pixels per character of 16 px sans-serif text, rounded up, to lay text out.
const CHAR: u32 = 9;
/// Height of a line of 16 px text.
const LINE: u32 = 22;

const FONT: &str = "sans-serif";

/// What a legend entry shows before its label.
enum Sample {
    /// A measured series: its line (unless drawn as points only) and marker.
    Measured(Style, bool),
    /// A simulated prediction: band and mean line.
    Simulated(RGBColor),
    /// The exact model's dotted line.
    Exact,
    /// A bar of this colour.
    Bar(RGBColor),
    /// A grey dashed reference line.
    Reference,
}

/// Draws a figure into an SVG string.
pub fn svg(fig: &Figure) -> DrawResult<String> {
    let legend = legend(fig);
    let notes: Vec<String> = fig.notes.iter().flat_map(|n| wrap(n)).collect();
    let head = 40 + LINE * notes.len() as u32;
    let (cols, rows) = legend_grid(&legend);
    let foot = if legend.is_empty() {
        0
    } else {
        16 + LINE * rows
    };
    let body = if fig.empty.is_some() {
        160
    } else {
        PLOT_HEIGHT
    };
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (WIDTH, head + body + foot)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, rest) = root.split_vertically(head);
        let (plot, bottom) = rest.split_vertically(body);
        top.draw(&Text::new(
            fig.title.clone(),
            (WIDTH as i32 / 2, 8),
            (FONT, TITLE)
                .into_font()
                .style(FontStyle::Bold)
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
        for (i, n) in notes.iter().enumerate() {
            top.draw(&Text::new(
                n.clone(),
                (16, 40 + (LINE * i as u32) as i32),
                (FONT, TICK).into_font().color(&WARN),
            ))?;
        }
        if let Some(why) = &fig.empty {
            plot.draw(&Rectangle::new(
                [(16, 8), (WIDTH as i32 - 16, body as i32 - 8)],
                GRID.stroke_width(2),
            ))?;
            let lines = wrap(why);
            for (i, l) in lines.iter().enumerate() {
                plot.draw(&Text::new(
                    l.clone(),
                    (
                        WIDTH as i32 / 2,
                        (body / 2) as i32
                            + (LINE as i32) * (2 * i as i32 - lines.len() as i32 + 1) / 2,
                    ),
                    (FONT, DESC)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        } else if fig.categorical {
            bars(&plot, fig)?;
        } else {
            lines(&plot, fig)?;
        }
        draw_legend(&bottom, &legend, cols)?;
        root.present()?;
    }
    Ok(out)
}

/// Splits text into lines that fit the figure's width.
fn wrap(text: &str) -> Vec<String> {
    let most = ((WIDTH - 32) / CHAR) as usize;
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > most {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// The legend's entries, in the order series are drawn.
fn legend(fig: &Figure) -> Vec<(Sample, String)> {
    let mut out = Vec::new();
    if fig.empty.is_some() {
        return out;
    }
    let kind = if fig.simulated {
        "(simulated, 95% interval)"
    } else {
        "(measured)"
    };
    if fig.categorical {
        for (i, (label, _)) in bar_series(fig).iter().enumerate() {
            out.push((Sample::Bar(Style::nth(i).color), format!("{label} {kind}")));
        }
        return out;
    }
    for (i, s) in fig.series.iter().enumerate() {
        let style = fig.style(i);
        out.push((
            Sample::Measured(style, s.points.len() >= 3),
            format!("{} {kind}", s.label),
        ));
        if !s.predicted.is_empty() {
            out.push((
                Sample::Simulated(style.color),
                format!("{} (simulated, 95% band)", s.label),
            ));
        }
        if !s.exact.is_empty() {
            out.push((Sample::Exact, format!("{} (exact)", s.label)));
        }
    }
    if let Some(n) = saturation(fig) {
        out.push((
            Sample::Reference,
            format!("saturation N* = {} (exact)", ticks::label(n)),
        ));
    }
    out
}

/// Columns and rows of the legend.
fn legend_grid(legend: &[(Sample, String)]) -> (u32, u32) {
    if legend.is_empty() {
        return (1, 0);
    }
    let widest = legend
        .iter()
        .map(|(_, l)| l.len() as u32)
        .max()
        .unwrap_or(1);
    let col = 56 + CHAR * widest;
    let cols = ((WIDTH - 32) / col).clamp(1, 3).min(legend.len() as u32);
    (cols, (legend.len() as u32).div_ceil(cols))
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    legend: &[(Sample, String)],
    cols: u32,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    if legend.is_empty() {
        return Ok(());
    }
    let col_w = ((WIDTH - 32) / cols) as i32;
    for (i, (sample, label)) in legend.iter().enumerate() {
        let (c, r) = (i as u32 % cols, i as u32 / cols);
        let x = 16 + col_w * c as i32;
        let y = 8 + (LINE * r) as i32 + LINE as i32 / 2;
        match sample {
            Sample::Measured(style, joined) => {
                if *joined {
                    let line = vec![(x, y), (x + 40, y)];
                    match style.dash {
                        None => area.draw(&PathElement::new(line, style.color.stroke_width(2)))?,
                        Some((d, g)) => area.draw(&DashedPathElement::new(
                            line,
                            d,
                            g,
                            style.color.stroke_width(2),
                        ))?,
                    }
                }
                marker_at(area, style.marker, (x + 20, y), style.color)?;
            }
            Sample::Simulated(color) => {
                area.draw(&Rectangle::new(
                    [(x, y - 7), (x + 40, y + 7)],
                    color.mix(0.25).filled(),
                ))?;
                area.draw(&DashedPathElement::new(
                    vec![(x, y), (x + 40, y)],
                    8,
                    4,
                    color.stroke_width(2),
                ))?;
            }
            Sample::Exact => area.draw(&DashedPathElement::new(
                vec![(x, y), (x + 40, y)],
                2,
                3,
                EXACT.stroke_width(2),
            ))?,
            Sample::Bar(color) => {
                area.draw(&Rectangle::new(
                    [(x + 8, y - 8), (x + 32, y + 8)],
                    color.filled(),
                ))?;
                area.draw(&Rectangle::new(
                    [(x + 8, y - 8), (x + 32, y + 8)],
                    BLACK.stroke_width(1),
                ))?;
            }
            Sample::Reference => area.draw(&DashedPathElement::new(
                vec![(x, y), (x + 40, y)],
                5,
                4,
                RGBColor(110, 110, 110).stroke_width(2),
            ))?,
        }
        area.draw(&Text::new(
            label.clone(),
            (x + 50, y),
            (FONT, TICK)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// The strokes of a marker around (0, 0), about 12 px across. Circles are
/// 16-gons: at this size they look the same.
fn strokes(kind: Marker) -> Vec<Vec<(i32, i32)>> {
    let closed = |mut v: Vec<(i32, i32)>| {
        v.push(v[0]);
        vec![v]
    };
    match kind {
        Marker::Circle => closed(
            (0..16)
                .map(|i| {
                    let a = f64::from(i) * std::f64::consts::PI / 8.0;
                    (
                        (6.0 * a.cos()).round() as i32,
                        (6.0 * a.sin()).round() as i32,
                    )
                })
                .collect(),
        ),
        Marker::Square => closed(vec![(-5, -5), (5, -5), (5, 5), (-5, 5)]),
        Marker::TriangleUp => closed(vec![(0, -7), (7, 5), (-7, 5)]),
        Marker::TriangleDown => closed(vec![(0, 7), (7, -5), (-7, -5)]),
        Marker::Diamond => closed(vec![(0, -7), (7, 0), (0, 7), (-7, 0)]),
        Marker::Cross => vec![vec![(-5, -5), (5, 5)], vec![(-5, 5), (5, -5)]],
        Marker::Plus => vec![vec![(-7, 0), (7, 0)], vec![(0, -7), (0, 7)]],
    }
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
    let strokes = strokes(kind);
    chart.draw_series(at.iter().flat_map(|c| {
        strokes
            .iter()
            .map(move |s| EmptyElement::at(*c) + PathElement::new(s.clone(), color.stroke_width(2)))
    }))?;
    Ok(())
}

/// Draws one marker at pixel `at` of a drawing area (the legend).
fn marker_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    kind: Marker,
    at: (i32, i32),
    color: RGBColor,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    for s in strokes(kind) {
        let moved: Vec<(i32, i32)> = s.iter().map(|(x, y)| (at.0 + x, at.1 + y)).collect();
        area.draw(&PathElement::new(moved, color.stroke_width(2)))?;
    }
    Ok(())
}

/// The saturation population every series agrees on, if any.
fn saturation(fig: &Figure) -> Option<f64> {
    let n: Vec<f64> = fig.series.iter().filter_map(|s| s.saturation).collect();
    let first = *n.first()?;
    n.iter().all(|m| (m - first).abs() < 1e-9).then_some(first)
}

fn min_max(v: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut it = v.filter(|x| x.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), x| (a.min(x), b.max(x))))
}

/// The y range and its ticks, from the data's smallest and largest values.
fn y_axis(lo: f64, hi: f64, log: bool) -> (f64, f64, Vec<f64>) {
    if log {
        let (lo, hi) = (lo.max(1e-12).log10(), hi.max(1e-12).log10());
        let pad = ((hi - lo) * 0.06).max(0.05);
        let (y0, y1) = (lo - pad, hi + pad);
        (y0, y1, ticks::log(y0, y1, &[]))
    } else {
        let y0 = if lo >= 0.0 { 0.0 } else { lo * 1.1 };
        let y1 = if hi <= 0.0 { 1.0 } else { hi * 1.08 };
        let y1 = if y1 - y0 < 1e-12 { y0 + 1.0 } else { y1 };
        (y0, y1, ticks::linear(y0, y1))
    }
}

/// A continuous x axis: lines through the medians, error bars, predictions.
fn lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let tx = |x: f64| if fig.log_x { x.max(1e-12).log10() } else { x };
    let ty = |y: f64| if fig.log_y { y.max(1e-12).log10() } else { y };
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
        predictions(&mut chart, s, style.color, &tx, &ty, dx, shift)?;
    }
    for (i, s) in fig.series.iter().enumerate() {
        let style = fig.style(i);
        let line: Vec<(f64, f64)> = s.points.iter().map(|p| (tx(p.0), ty(p.1))).collect();
        if line.len() >= 3 {
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

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// A linear axis over `lo..hi` (log axes are linear in log10 of the value) with
/// ticks and grid lines only at `ticks`, none in between.
#[derive(Debug, Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        limit.0 + (f * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// Vertical bars from min to max with 10 px caps.
fn error_bars<DB: DrawingBackend>(
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
/// measured points. With fewer than three points, the band is an interval bar at
/// each point and the exact value a short black dash, for the same reason the
/// measured points are not joined.
fn predictions<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
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
    if s.predicted.len() >= 3 {
        let mut band: Vec<(f64, f64)> = s.predicted.iter().map(|p| (tx(p.0), ty(p.2))).collect();
        band.extend(s.predicted.iter().rev().map(|p| (tx(p.0), ty(p.3))));
        chart.draw_series(std::iter::once(Polygon::new(
            band,
            color.mix(0.18).filled(),
        )))?;
        chart.draw_series(DashedLineSeries::new(
            s.predicted.iter().map(|p| (tx(p.0), ty(p.1))),
            8,
            4,
            color.stroke_width(2),
        ))?;
    } else {
        // A box over the 95% interval, `dx` either side of the point moved by
        // `shift`, and the mean across it.
        let x = |p: &(f64, f64, f64, f64)| tx(p.0) + shift;
        chart.draw_series(s.predicted.iter().map(|p| {
            Rectangle::new(
                [(x(p) - dx, ty(p.2)), (x(p) + dx, ty(p.3))],
                color.mix(0.3).filled(),
            )
        }))?;
        chart.draw_series(s.predicted.iter().map(|p| {
            PathElement::new(
                vec![(x(p) - dx, ty(p.1)), (x(p) + dx, ty(p.1))],
                color.stroke_width(2),
            )
        }))?;
    }
    if s.exact.len() >= 3 {
        chart.draw_series(DashedLineSeries::new(
            s.exact.iter().map(|p| (tx(p.0), ty(p.1))),
            2,
            3,
            EXACT.stroke_width(2),
        ))?;
    } else {
        // Wider than the simulator's boxes, so that both show where they agree.
        let half = 1.8 * dx + shift.abs();
        chart.draw_series(s.exact.iter().map(|p| {
            DashedPathElement::new(
                vec![(tx(p.0) - half, ty(p.1)), (tx(p.0) + half, ty(p.1))],
                2,
                3,
                EXACT.stroke_width(2),
            )
        }))?;
    }
    Ok(())
}

/// A bar: (median, min, max).
type Bar = (f64, f64, f64);

/// The bar series of a category figure: (legend label, value per group), where a
/// value is (median, min, max). With several series, groups are the series
/// (servers) and bars the x values; with one, groups are the x values.
fn bar_series(fig: &Figure) -> Vec<(String, Vec<Option<Bar>>)> {
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
            .map(|x| s.points.iter().find(|p| p.0 == *x).map(|p| (p.1, p.2, p.3)))
            .collect();
        return vec![(s.label.clone(), values)];
    }
    xs.iter()
        .map(|x| {
            let values = fig
                .series
                .iter()
                .map(|s| s.points.iter().find(|p| p.0 == *x).map(|p| (p.1, p.2, p.3)))
                .collect();
            (format!("{short_label} = {}", name(*x)), values)
        })
        .collect()
}

/// The x values present in a category figure, in axis order.
fn category_values(fig: &Figure) -> Vec<f64> {
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
fn groups(fig: &Figure) -> Vec<String> {
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

/// A category x axis: grouped bars with error bars from min to max.
fn bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    fig: &Figure,
) -> DrawResult<()>
where
    DB::ErrorType: 'static,
{
    let series = bar_series(fig);
    let groups = groups(fig);
    let n = groups.len().max(1);
    let values = series
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().flat_map(|(m, lo, hi)| [*m, *lo, *hi]));
    let (ya, yb) = min_max(values).unwrap_or((0.0, 1.0));
    let (y0, y1, y_ticks) = y_axis(ya.min(0.0), yb, false);
    let x_ticks: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
    let fmt_x = |v: &f64| {
        let i = (v - 0.5).round();
        if i >= 0.0 {
            groups.get(i as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let fmt_y = |v: &f64| ticks::label(*v);
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
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .label_style((FONT, TICK))
        .axis_desc_style((FONT, DESC))
        .bold_line_style(GRID)
        .max_light_lines(0)
        .draw()?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (j, (_, values)) in series.iter().enumerate() {
        let color = Style::nth(j).color;
        for (g, v) in values.iter().enumerate() {
            let Some((median, lo, hi)) = *v else {
                continue;
            };
            let a = g as f64 + 0.1 + width * j as f64;
            let b = a + width;
            chart.draw_series([
                Rectangle::new([(a, y0.max(0.0)), (b, median)], color.filled()),
                Rectangle::new([(a, y0.max(0.0)), (b, median)], BLACK.stroke_width(1)),
            ])?;
            let points = [((a + b) / 2.0, median, lo, hi)];
            error_bars(&mut chart, &points, BLACK, &|x| x, &|y| y)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::style::hex;
    use super::*;

    fn series(label: &str, points: &[(f64, f64)]) -> Series {
        Series {
            label: label.into(),
            points: points
                .iter()
                .map(|&(x, y)| (x, y, y * 0.9, y * 1.1))
                .collect(),
            ..Series::default()
        }
    }

    fn figure(series: Vec<Series>) -> Figure {
        Figure {
            title: "T".into(),
            x_label: "users (count)".into(),
            y_label: "throughput (requests/s)".into(),
            log_x: true,
            series,
            ..Figure::default()
        }
    }

    #[test]
    fn the_legend_names_measured_simulated_and_exact_and_sits_below_the_plot() {
        let mut pool = series("pool", &[(1.0, 10.0), (2.0, 15.0), (10.0, 20.0)]);
        pool.predicted = vec![
            (1.0, 10.5, 10.0, 11.0),
            (2.0, 15.0, 14.0, 16.0),
            (10.0, 19.0, 18.0, 20.0),
        ];
        pool.exact = vec![(1.0, 10.2), (2.0, 15.1), (10.0, 19.5)];
        pool.saturation = Some(5.0);
        let fig = figure(vec![pool, series("serial", &[(1.0, 5.0), (10.0, 6.0)])]);
        let svg = svg(&fig).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for needle in [
            "users (count)",
            "throughput (requests/s)",
            "pool (measured)",
            "pool (simulated, 95% band)",
            "pool (exact)",
            "serial (measured)",
            "N* = 5 (exact)",
        ] {
            assert!(svg.contains(needle), "missing {needle}");
        }
        // Every legend label is drawn below the plotting area's bottom edge.
        let height: i32 = svg
            .split("height=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        for label in ["pool (measured)", "serial (measured)"] {
            let at = svg.find(&format!(">\n{label}\n<")).unwrap();
            let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
            let y: f64 = tag
                .split(" y=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let plot_bottom = (40 + PLOT_HEIGHT) as f64;
            assert!(y > plot_bottom && y < f64::from(height), "{label} at y={y}");
        }
    }

    #[test]
    fn series_take_distinct_colours() {
        let fig = figure(vec![
            series("a", &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.0)]),
            series("b", &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.0)]),
        ]);
        let svg = svg(&fig).unwrap();
        for i in 0..2 {
            let c = hex(Style::nth(i).color);
            assert!(svg.contains(&c), "series {i} colour {c} missing");
        }
    }

    #[test]
    fn two_points_are_not_joined() {
        let mut two = series("a", &[(1.0, 1.0), (8.0, 2.0)]);
        // No spread, so no error bars, which are polylines too.
        for p in &mut two.points {
            (p.2, p.3) = (p.1, p.1);
        }
        let fig = figure(vec![two]);
        let svg = svg(&fig).unwrap();
        // plotters draws a line series as a polyline in the series' colour;
        // markers are polylines too, but none spans more than 14 px.
        let longest = |svg: &str| {
            let colour = format!("stroke=\"{}\"", hex(Style::nth(0).color));
            svg.split("<polyline")
                .skip(1)
                .filter(|p| p.split("/>").next().unwrap().contains(&colour))
                .map(|p| {
                    let pts = p
                        .split("points=\"")
                        .nth(1)
                        .unwrap()
                        .split('"')
                        .next()
                        .unwrap();
                    let xs: Vec<i32> = pts
                        .split_whitespace()
                        .map(|xy| xy.split(',').next().unwrap().parse().unwrap())
                        .collect();
                    xs.iter().max().unwrap() - xs.iter().min().unwrap()
                })
                .max()
                .unwrap_or(0)
        };
        assert!(longest(&svg) <= 14, "two points drawn as a line");
        let fig = figure(vec![series("a", &[(1.0, 1.0), (2.0, 2.0), (8.0, 2.5)])]);
        assert!(
            longest(&super::svg(&fig).unwrap()) > 100,
            "three points are joined"
        );
    }

    #[test]
    fn long_notes_wrap_within_the_width() {
        let text = "word ".repeat(80);
        let lines = wrap(&text);
        assert!(lines.len() > 2);
        assert!(lines.iter().all(|l| l.len() as u32 * CHAR <= WIDTH - 32));
    }
}
