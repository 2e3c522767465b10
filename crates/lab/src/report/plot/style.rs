//! How a series looks: colour, marker and dash, chosen together by the series'
//! place in the figure, so that two series that lie on top of each other still
//! differ in all three and both stay visible.
//!
//! The colours are Okabe and Ito's palette for colour-blind readers (Color
//! Universal Design, 2008) without its yellow, which is too faint on white for a
//! line, and without its black, which the exact model's line and the axes use.

use plotters::style::RGBColor;

/// Okabe–Ito: blue, vermillion, bluish green, reddish purple, orange, sky blue.
pub const PALETTE: [RGBColor; 6] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
];

/// The colour of the exact model's line (Okabe–Ito's black).
pub const EXACT: RGBColor = RGBColor(0, 0, 0);

/// Grey for the grid, frames and reference lines.
pub const GRID: RGBColor = RGBColor(0xDD, 0xDD, 0xDD);

/// The colour of text that warns the reader (a dark vermillion).
pub const WARN: RGBColor = RGBColor(0x9A, 0x3B, 0x00);

/// The background of a warning the reader must not miss (a pale vermillion).
pub const BANNER: RGBColor = RGBColor(0xFD, 0xEB, 0xDD);

/// A marker shape. Every marker is an outline without fill, so that two series
/// whose points fall on the same spot both stay visible, one shape inside or
/// across the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A circle.
    Circle,
    /// A square.
    Square,
    /// A triangle, point up.
    TriangleUp,
    /// A diamond.
    Diamond,
    /// A triangle, point down.
    TriangleDown,
    /// A diagonal cross (×).
    Cross,
    /// An upright cross (+).
    Plus,
}

impl Marker {
    /// The strokes of a marker around (0, 0), about 12 px across. Circles are
    /// 16-gons: at this size they look the same.
    pub fn strokes(self) -> Vec<Vec<(i32, i32)>> {
        let closed = |mut v: Vec<(i32, i32)>| {
            v.push(v[0]);
            vec![v]
        };
        match self {
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
}

/// Markers in the order series take them; seven, one more than the colours, so
/// that the seventh series differs from the first in marker.
const MARKERS: [Marker; 7] = [
    Marker::Circle,
    Marker::Square,
    Marker::TriangleUp,
    Marker::Diamond,
    Marker::TriangleDown,
    Marker::Cross,
    Marker::Plus,
];

/// Dash patterns (dash, gap) in pixels; `None` is a solid line. As many as the
/// colours, so the first six series differ in all three; past six, the marker
/// (seven of them) still tells series apart that share a colour and a dash.
///
/// Every measured dash is at least 7 px long, so that none reads like the
/// simulator's dotted line ([`SIMULATED_DASH`]) in the same colour.
/// Regression (issue 15): overload's measured and simulated "cancel" were both
/// orange and dashed.
const DASHES: [Option<(u32, u32)>; 6] = [
    None,
    Some((12, 5)),
    Some((7, 7)),
    Some((22, 5)),
    Some((16, 3)),
    Some((30, 8)),
];

/// The simulator's mean line: dots, a pattern no measured series uses.
pub const SIMULATED_DASH: (u32, u32) = (2, 4);

/// The look of one series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Line, marker and band colour.
    pub color: RGBColor,
    /// Marker at each measured point.
    pub marker: Marker,
    /// Dash pattern of the line through the points (`None`: solid).
    pub dash: Option<(u32, u32)>,
}

impl Style {
    /// The style of the `i`th series of a figure.
    pub fn nth(i: usize) -> Style {
        Style {
            color: PALETTE[i % PALETTE.len()],
            marker: MARKERS[i % MARKERS.len()],
            dash: DASHES[i % DASHES.len()],
        }
    }
}

/// `#RRGGBB`, as plotters writes a colour into SVG.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_series_differ_in_colour_marker_and_dash() {
        // Series 6 shares series 0's colour and dash, not its marker.
        assert_ne!(Style::nth(0).marker, Style::nth(6).marker);
        for i in 0..PALETTE.len() {
            for j in i + 1..PALETTE.len() {
                let (a, b) = (Style::nth(i), Style::nth(j));
                assert_ne!(a.color, b.color, "{i} {j}");
                assert_ne!(a.marker, b.marker, "{i} {j}");
                assert_ne!(a.dash, b.dash, "{i} {j}");
            }
        }
    }

    #[test]
    fn no_measured_series_shares_the_simulated_dash() {
        for i in 0..12 {
            let d = Style::nth(i).dash;
            assert_ne!(d, Some(SIMULATED_DASH), "{i}");
            assert!(d.is_none_or(|(dash, _)| dash >= 7), "{i}: {d:?}");
        }
    }

    #[test]
    fn no_colour_is_yellow_or_too_light_for_white() {
        for c in PALETTE {
            // Relative luminance (sRGB approximated by a 2.2 gamma) below 0.5,
            // which keeps a contrast of at least about 2:1 against white.
            let l = |v: u8| (f64::from(v) / 255.0).powf(2.2);
            let y = 0.2126 * l(c.0) + 0.7152 * l(c.1) + 0.0722 * l(c.2);
            assert!(y < 0.5, "{} too light: {y:.2}", hex(c));
        }
    }
}
