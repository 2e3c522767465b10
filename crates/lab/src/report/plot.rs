//! The report's figures, one per `[[plot]]`: what a run has to show on a plot's
//! axes ([`Figure`]), and the SVG drawn from it with `plotters`.
//!
//! Each server (and each value of the axes that are neither on the x axis nor
//! filtered) is a series: the means over repeats with their 95% Student-t
//! interval as error bars. Predictions are overlaid where the experiment has
//! them: the simulator's mean (a dotted line in the series' colour) inside a
//! shaded 95% band, and the exact model as a dotted black line. A point that
//! failed a validity check is named in a note inside the figure. An x axis with at most two values in the experiment, or with values
//! that are not numbers, is a category: its figure is grouped bars, not lines
//! across two points.
//!
//! A figure tells the reader in words, inside the SVG, whatever the data alone
//! would let them misread: a filter this run has no point for (the figure is
//! drawn at the nearest values the run has, and says which), series with fewer
//! than three points (drawn as points, never joined by a straight line that would
//! hide a knee), servers and points not drawn, and why a figure has nothing to
//! draw.
//!
//! Layout:
//! - `figure`: [`Figure`] and [`Series`], built from a run
//! - `filter`: a plot's `where`, and the values drawn when the run lacks them
//! - `draw`: the SVG of a figure (title, notes, plot area), with `lines` for a
//!   continuous x axis, `bars` for a category and `legend` below the plot
//! - `canvas`: the sizes, fonts and y axis those share
//! - `timeline`: a point's requests per second through its windows
//! - [`ticks`]: tick positions and labels
//! - [`style`]: palette, markers and dashes

mod bars;
mod canvas;
mod draw;
pub(crate) mod figure;
mod filter;
mod legend;
mod lines;
pub mod style;
pub mod ticks;
pub(crate) mod timeline;

pub use draw::svg;
pub use figure::{Figure, Series, figure, series, x_label, y_label};
pub use style::{PALETTE, Style};
