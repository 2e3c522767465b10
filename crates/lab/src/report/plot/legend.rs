//! The legend, drawn below the plot so that it covers no data: one entry per
//! series, and per prediction, with a sample of how it is drawn and a label that
//! says what it is ("(measured)", "(simulated, 95% band)", "(exact)").

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::bars::bar_series;
use super::canvas::{CHAR, DrawResult, FONT, LINE, TICK, WIDTH, saturation};
use super::figure::Figure;
use super::style::{EXACT, Marker, Style};
use super::ticks;

/// What a legend entry shows before its label.
pub(super) enum Sample {
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

/// The legend's entries, in the order series are drawn.
pub(super) fn entries(fig: &Figure) -> Vec<(Sample, String)> {
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
        // Predictions are drawn over their bars alike (grey band, black dash):
        // one entry says so.
        if fig.series.iter().any(|s| !s.predicted.is_empty()) {
            out.push((
                Sample::Simulated(BLACK),
                "prediction over each bar (simulated, 95% band)".into(),
            ));
        }
        return out;
    }
    for (i, s) in fig.series.iter().enumerate() {
        let style = fig.style(i);
        // A series with only a prediction (no point measured) has no measured
        // entry: the legend would name a line the figure does not draw.
        if !s.points.is_empty() {
            out.push((
                Sample::Measured(style, s.points.len() >= 3),
                format!("{} {kind}", s.label),
            ));
        }
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
pub(super) fn grid(legend: &[(Sample, String)]) -> (u32, u32) {
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

pub(super) fn draw<DB: DrawingBackend>(
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
                    super::style::SIMULATED_DASH.0,
                    super::style::SIMULATED_DASH.1,
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
    for s in kind.strokes() {
        let moved: Vec<(i32, i32)> = s.iter().map(|(x, y)| (at.0 + x, at.1 + y)).collect();
        area.draw(&PathElement::new(moved, color.stroke_width(2)))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::figure::Series;

    /// Regression: a series with no measured point still got a "(measured)"
    /// entry beside its prediction.
    #[test]
    fn a_series_without_measured_points_has_no_measured_entry() {
        let fig = Figure {
            series: vec![
                Series {
                    label: "epoll".into(),
                    points: vec![(1.0, 2.0, 1.5, 2.5)],
                    ..Series::default()
                },
                Series {
                    label: "pool".into(),
                    predicted: vec![(1.0, 2.0, 1.5, 2.5)],
                    ..Series::default()
                },
            ],
            ..Figure::default()
        };
        let labels: Vec<String> = entries(&fig).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            labels,
            ["epoll (measured)", "pool (simulated, 95% band)"],
            "{labels:?}"
        );
    }

    /// Regression: `timeslice` (two thread counts, so bars) was titled
    /// "measured against round robin" and drew no prediction.
    #[test]
    fn a_bar_figure_with_a_prediction_says_it_draws_one() {
        let mut fig = Figure {
            categorical: true,
            series: vec![Series {
                label: "event".into(),
                points: vec![(1.0, 83.0, 79.0, 87.0), (8.0, 87.0, 84.0, 90.0)],
                ..Series::default()
            }],
            ..Figure::default()
        };
        assert_eq!(entries(&fig).len(), 1);
        fig.series[0].predicted = vec![(1.0, 84.7, 84.0, 85.4), (8.0, 88.2, 87.5, 88.9)];
        let labels: Vec<String> = entries(&fig).into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            labels,
            [
                "event (measured)",
                "prediction over each bar (simulated, 95% band)"
            ]
        );
        // Laid out as the bars are, one prediction per bar.
        let p = super::super::bars::predicted_series(&fig);
        assert_eq!(p[0].1, [Some((84.7, 84.0, 85.4)), Some((88.2, 87.5, 88.9))]);
    }
}
