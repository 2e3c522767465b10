//! The SVG of a [`Figure`]: a title with the figure's notes under it, the plot
//! (lines on a continuous x axis, grouped bars on a category), and the legend
//! below the plot, where it can cover no data.
//!
//! Sizes are chosen for the report's content column (about 960 px wide at 100%
//! zoom), where the SVG is shown at its own width: tick labels are 16 px, as large
//! as the page's body text. plotters writes a font size as the size given divided
//! by 1.24, hence the sizes of 20 and more below.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{CHAR, DESC, DrawResult, FONT, LINE, TICK, WIDTH};
use super::figure::{Figure, figure};
use super::style::{BANNER, GRID, WARN};
use super::{bars, legend, lines};
use crate::error::{LabError, Result};
use crate::experiment::{Experiment, PlotSpec};
use crate::store::results::RunResults;

/// Height of the plotting part (axes, ticks and their labels).
const PLOT_HEIGHT: u32 = 470;
/// The title's font size, as plotters takes it (19 px in the SVG).
const TITLE: u32 = 24;
/// The width of one of the title's bold letters, px (on average).
const TITLE_CHAR: u32 = 12;
/// The height of one line of the title, px.
const TITLE_LINE: u32 = 30;

impl Figure {
    /// The figure as an SVG document.
    pub fn svg(&self) -> Result<String> {
        document(self).map_err(|e| LabError::Other(format!("plot `{}`: {e}", self.title)))
    }
}

/// Draws a plot of a run as an SVG document.
pub fn svg(plot: &PlotSpec, exp: &Experiment, results: &RunResults) -> Result<String> {
    figure(plot, exp, results).svg()
}

/// Draws a figure into an SVG string.
fn document(fig: &Figure) -> DrawResult<String> {
    let legend = legend::entries(fig);
    // Bold text is wider: its lines are a tenth shorter.
    let banner: Vec<String> = fig
        .drawn_instead
        .iter()
        .flat_map(|n| wrap_to(n, (WIDTH - 32) as usize * 9 / 10 / CHAR as usize))
        .collect();
    let notes: Vec<String> = fig.notes.iter().flat_map(|n| wrap(n)).collect();
    // The title in lines that fit: its bold 24 px letters are about
    // TITLE_CHAR wide (one line of 93 ran off both edges of the figure).
    let title = wrap_to(&fig.title, ((WIDTH - 32) / TITLE_CHAR) as usize);
    let title_h = TITLE_LINE * title.len().max(1) as u32;
    // The banner: a framed box of its lines, with 6 px of padding and 8 below.
    let banner_h = if banner.is_empty() {
        0
    } else {
        LINE * banner.len() as u32 + 20
    };
    let head = title_h + 10 + banner_h + LINE * notes.len() as u32;
    let (cols, rows) = legend::grid(&legend);
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
        for (i, line) in title.iter().enumerate() {
            top.draw(&Text::new(
                line.clone(),
                (WIDTH as i32 / 2, 8 + (TITLE_LINE * i as u32) as i32),
                (FONT, TITLE)
                    .into_font()
                    .style(FontStyle::Bold)
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            ))?;
        }
        // What follows the title starts below its last line.
        let below = title_h as i32 + 6;
        if !banner.is_empty() {
            top.draw(&Rectangle::new(
                [(8, below), (WIDTH as i32 - 8, below + banner_h as i32 - 8)],
                BANNER.filled(),
            ))?;
            top.draw(&Rectangle::new(
                [(8, below), (WIDTH as i32 - 8, below + banner_h as i32 - 8)],
                WARN.stroke_width(2),
            ))?;
            for (i, n) in banner.iter().enumerate() {
                top.draw(&Text::new(
                    n.clone(),
                    (16, below + 6 + (LINE * i as u32) as i32),
                    (FONT, TICK).into_font().style(FontStyle::Bold).color(&WARN),
                ))?;
            }
        }
        for (i, n) in notes.iter().enumerate() {
            top.draw(&Text::new(
                n.clone(),
                (16, below + 4 + banner_h as i32 + (LINE * i as u32) as i32),
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
            bars::draw(&plot, fig)?;
        } else {
            lines::draw(&plot, fig)?;
        }
        legend::draw(&bottom, &legend, cols)?;
        root.present()?;
    }
    Ok(out)
}

/// Splits text into lines that fit the figure's width.
fn wrap(text: &str) -> Vec<String> {
    wrap_to(text, ((WIDTH - 32) / CHAR) as usize)
}

/// Splits text into lines of at most `most` characters (a longer word stays whole).
fn wrap_to(text: &str, most: usize) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::super::figure::Series;
    use super::super::style::{Style, hex};
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
        let svg = document(&fig).unwrap();
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

    /// Regression (issue 15): engines' CPU bars of 6 to 640 us on a linear
    /// axis left the small ones unreadable; a span over 20x gets a log axis.
    #[test]
    fn bars_spanning_more_than_twenty_times_get_a_log_axis() {
        let bars = |hi: f64| Figure {
            categorical: true,
            x_names: vec![(1.0, "1".into())],
            ..figure(vec![
                series("epoll", &[(1.0, 6.0)]),
                series("fork", &[(1.0, hi)]),
            ])
        };
        assert!(document(&bars(640.0)).unwrap().contains("(log scale)"));
        assert!(!document(&bars(60.0)).unwrap().contains("(log scale)"));
    }

    #[test]
    fn series_take_distinct_colours() {
        let fig = figure(vec![
            series("a", &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.0)]),
            series("b", &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.0)]),
        ]);
        let svg = document(&fig).unwrap();
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
        let svg = document(&fig).unwrap();
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
            longest(&document(&fig).unwrap()) > 100,
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
    /// The texts of the SVG's `<text>` elements.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                Some(
                    t.split_once('>')?
                        .1
                        .split_once("</text>")?
                        .0
                        .trim()
                        .to_string(),
                )
            })
            .collect()
    }

    #[test]
    fn an_interval_below_zero_of_a_quantity_that_cannot_be_negative_is_cut_at_zero() {
        // Three noisy repeats: a mean of 50 ms with a t interval of -80..180.
        let mut r = series("server", &[(1.0, 20.0), (4.0, 50.0), (8.0, 90.0)]);
        r.points[1] = (4.0, 50.0, -80.0, 180.0);
        let svg = document(&figure(vec![r])).unwrap();
        let negative: Vec<String> = texts(&svg)
            .into_iter()
            .filter(|t| t.starts_with('-') || t.starts_with('\u{2212}'))
            .collect();
        assert!(negative.is_empty(), "negative ticks {negative:?}");
        // Bars alike.
        let mut b = series("epoll", &[(1.0, 20.0), (4.0, 50.0)]);
        b.points[1] = (4.0, 50.0, -80.0, 180.0);
        let bars = Figure {
            categorical: true,
            x_names: vec![(1.0, "1".into()), (4.0, "4".into())],
            ..figure(vec![b, series("fork", &[(1.0, 30.0), (4.0, 40.0)])])
        };
        let svg = document(&bars).unwrap();
        assert!(
            !texts(&svg).iter().any(|t| t.starts_with('-')),
            "{:?}",
            texts(&svg)
        );
        // A difference in percent keeps its negative side.
        let d = series("change", &[(1.0, -20.0), (4.0, 5.0), (8.0, 10.0)]);
        let svg = document(&figure(vec![d])).unwrap();
        assert!(
            texts(&svg)
                .iter()
                .any(|t| t.starts_with('-') || t.starts_with('\u{2212}')),
            "{:?}",
            texts(&svg)
        );
    }
    #[test]
    fn a_long_title_is_wrapped_into_lines_that_fit() {
        let mut fig = figure(vec![series("a", &[(1.0, 1.0), (2.0, 2.0), (4.0, 3.0)])]);
        let title = "99th percentile of the user's response time (no target; predicted only \
                     where nobody retries)";
        fig.title = title.into();
        let svg = document(&fig).unwrap();
        // The title's lines are the SVG's first texts, in order.
        let t: Vec<String> = texts(&svg)
            .into_iter()
            .take(2)
            .map(|l| l.replace("&apos;", "'"))
            .collect();
        assert_eq!(t.join(" "), title, "{t:?}");
        assert!(
            t.iter().all(|l| l.len() as u32 * TITLE_CHAR <= WIDTH - 32),
            "{t:?}"
        );
    }
}
