//! What the parts of a figure's drawing share: its sizes and fonts, the y
//! axis' range and ticks, and an axis ticked only where the data says. Apart
//! from `draw.rs` so that the plot, the bars and the legend, which `draw.rs`
//! calls, can use them without naming it back.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use super::figure::Figure;
use super::ticks;

pub(super) type DrawResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Width of every figure, in SVG pixels.
pub(super) const WIDTH: u32 = 960;
/// Font sizes as plotters takes them (÷ 1.24 in the SVG): 16 px ticks and legend,
/// 17 px axis labels, 19 px title.
pub(super) const TICK: u32 = 20;
pub(super) const DESC: u32 = 21;
/// Pixels per character of 16 px sans-serif text, rounded up, to lay text out.
pub(super) const CHAR: u32 = 9;
/// Height of a line of 16 px text.
pub(super) const LINE: u32 = 22;

/// The font family of every text.
pub(super) const FONT: &str = "sans-serif";

/// The saturation population every series agrees on, if any.
pub(super) fn saturation(fig: &Figure) -> Option<f64> {
    let n: Vec<f64> = fig.series.iter().filter_map(|s| s.saturation).collect();
    let first = *n.first()?;
    n.iter().all(|m| (m - first).abs() < 1e-9).then_some(first)
}

pub(super) fn min_max(v: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut it = v.filter(|x| x.is_finite());
    let first = it.next()?;
    Some(it.fold((first, first), |(a, b), x| (a.min(x), b.max(x))))
}

/// The y range and its ticks, from the data's smallest and largest values.
pub(super) fn y_axis(lo: f64, hi: f64, log: bool) -> (f64, f64, Vec<f64>) {
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

pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// A linear axis over `lo..hi` (log axes are linear in log10 of the value) with
/// ticks and grid lines only at `ticks`, none in between.
#[derive(Debug, Clone)]
pub(super) struct Ticked {
    /// The axis' low end.
    pub(super) lo: f64,
    /// The axis' high end.
    pub(super) hi: f64,
    /// Where ticks and grid lines go.
    pub(super) ticks: Vec<f64>,
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
