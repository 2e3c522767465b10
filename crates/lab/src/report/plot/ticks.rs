//! Where an axis gets its ticks, and how a tick is labelled.
//!
//! A log axis is ticked at the data's own values when there are few enough of them
//! to label without overlap (users 1, 2, 4, 8, 16, 32 are labelled exactly so),
//! and otherwise at 1-2-5 steps of each decade that the data span. A linear axis
//! takes 1-2-5 steps too. Labels are the tick's value to three significant
//! figures, so no tick reads "5.01" because of rounding in the logarithm.

/// The most ticks an axis gets; more would not fit their labels.
const MOST: usize = 10;

/// Ticks at the data's own values on a linear axis over `lo..hi`, when there
/// are 2 to 10 of them and their labels would not overlap.
pub fn at_data(lo: f64, hi: f64, data: &[f64]) -> Option<Vec<f64>> {
    let mut at: Vec<f64> = data.iter().copied().filter(|v| v.is_finite()).collect();
    at.sort_by(f64::total_cmp);
    at.dedup();
    let apart = at.windows(2).all(|w| w[1] - w[0] >= (hi - lo) * 0.06);
    ((2..=MOST).contains(&at.len()) && apart).then_some(at)
}

/// Ticks, as log10 values, for a log axis spanning log10 values `lo..hi` that
/// holds the data values `data` (in the value's own units).
pub fn log(lo: f64, hi: f64, data: &[f64]) -> Vec<f64> {
    let mut at: Vec<f64> = data.iter().copied().filter(|v| *v > 0.0).collect();
    at.sort_by(f64::total_cmp);
    at.dedup_by(|a, b| (*a / *b - 1.0).abs() < 1e-9);
    let logs: Vec<f64> = at.iter().map(|v| v.log10()).collect();
    // Labels need about 6% of the axis each to stay apart.
    let apart = logs.windows(2).all(|w| w[1] - w[0] >= (hi - lo) * 0.06);
    if (2..=MOST).contains(&logs.len()) && apart {
        return logs;
    }
    for mantissas in [
        &[1.0][..],
        &[1.0, 2.0, 5.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    ] {
        let ticks = decades(lo, hi, mantissas);
        if ticks.len() >= 3 && ticks.len() <= MOST {
            return ticks;
        }
    }
    // Less than a decade with few values: the ends of the data.
    logs.first()
        .into_iter()
        .chain(logs.last().filter(|_| logs.len() > 1))
        .copied()
        .collect()
}

/// `m * 10^k` for every mantissa `m` and decade `k` whose log10 lies in `lo..=hi`.
fn decades(lo: f64, hi: f64, mantissas: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    let first = lo.floor() as i32;
    let last = hi.ceil() as i32;
    for k in first..=last {
        for m in mantissas {
            let v = (m * 10f64.powi(k)).log10();
            if v >= lo - 1e-9 && v <= hi + 1e-9 {
                out.push(v);
            }
        }
    }
    out
}

/// Ticks for a linear axis over `lo..hi`: multiples of 1, 2 or 5 times a power of
/// ten, about six of them.
pub fn linear(lo: f64, hi: f64) -> Vec<f64> {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return vec![lo];
    }
    let raw = span / 6.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|s| span / s <= 8.0)
        .unwrap_or(10.0 * p);
    let mut out = Vec::new();
    let mut k = (lo / step).ceil();
    while k * step <= hi + step * 1e-9 {
        // Round away the float error of k * step, so 0.30000000000000004 is 0.3.
        out.push(round3(k * step));
        k += 1.0;
    }
    out
}

/// `v` to three significant figures (exact for whole numbers up to 1e15).
fn round3(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return v;
    }
    let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

/// The label of a tick at value `v`: three significant figures at most, no
/// trailing zeros ("5", "0.2", "3300", "1.5").
pub fn label(v: f64) -> String {
    let r = round3(v);
    if r.abs() >= 1e15 || (r != 0.0 && r.abs() < 1e-6) {
        return format!("{r:e}");
    }
    // Rust prints the shortest text that reads back as the same float.
    let s = format!("{r}");
    if s == "-0" { "0".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(ticks: &[f64]) -> Vec<String> {
        ticks.iter().map(|t| label(10f64.powf(*t))).collect()
    }

    #[test]
    fn a_log_axis_is_ticked_at_the_datas_values() {
        let data = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
        let t = log(-0.1, 32f64.log10() + 0.1, &data);
        assert_eq!(values(&t), ["1", "2", "4", "8", "16", "32"]);
        let data = [5.0, 50.0, 200.0, 1000.0, 3300.0];
        let t = log(0.6, 3.6, &data);
        assert_eq!(values(&t), ["5", "50", "200", "1000", "3300"]);
    }

    #[test]
    fn a_log_axis_of_continuous_values_gets_decade_ticks() {
        // Response times from 0.3 to 700 ms: too many values to label each.
        let data: Vec<f64> = (0..40).map(|i| 0.3 * 1.2f64.powi(i)).collect();
        let t = log(0.3f64.log10(), 700f64.log10(), &data);
        assert_eq!(values(&t), ["1", "10", "100"]);
        // Within one decade: 1-2-5 gives too few, so every integer mantissa.
        let data: Vec<f64> = (0..30).map(|i| 2.0 + 0.2 * f64::from(i)).collect();
        let t = log(2f64.log10(), 8f64.log10(), &data);
        assert_eq!(values(&t), ["2", "3", "4", "5", "6", "7", "8"]);
        assert!(values(&t).iter().all(|l| !l.contains('.')));
    }

    #[test]
    fn crowded_data_values_give_way_to_decades() {
        // 1, 2, 3, 4, 5 and 8 on an axis from 1 to 1000 would overlap near 1..5.
        let data = [1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 1000.0];
        let t = log(0.0, 3.0, &data);
        assert_eq!(values(&t), ["1", "10", "100", "1000"]);
    }

    #[test]
    fn a_linear_axis_with_few_values_is_ticked_at_them() {
        assert_eq!(at_data(7.0, 25.0, &[8.0, 24.0, 8.0]), Some(vec![8.0, 24.0]));
        // 1, 2 and 4 would overlap on an axis to 48.
        let users = [1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0];
        assert_eq!(at_data(0.0, 50.0, &users), None);
    }

    #[test]
    fn linear_ticks_are_round() {
        let t: Vec<String> = linear(0.0, 1234.0).iter().map(|v| label(*v)).collect();
        assert_eq!(t, ["0", "200", "400", "600", "800", "1000", "1200"]);
        let t: Vec<String> = linear(0.0, 0.9).iter().map(|v| label(*v)).collect();
        assert_eq!(t, ["0", "0.2", "0.4", "0.6", "0.8"]);
    }

    #[test]
    fn labels_keep_three_figures_without_trailing_zeros() {
        assert_eq!(label(5.000000001), "5");
        assert_eq!(label(10f64.powf(5f64.log10())), "5");
        assert_eq!(label(0.30000000000000004), "0.3");
        assert_eq!(label(3300.0), "3300");
        assert_eq!(label(1.25), "1.25");
        assert_eq!(label(123456.0), "123456");
    }
}
