//! An [`Estimate`]: a mean with its Student-t interval over independent replications;
//! and the statistics behind it and behind the warm-up cut (MSER-5, quantiles).
//!
//! Replications are independent (separate random streams), so their means are i.i.d.
//! and the t interval with R-1 degrees of freedom is the textbook one. Within one
//! replication, observations are autocorrelated, which is why no interval is ever
//! computed from them directly.

use serde::Serialize;

/// A point estimate with its 95% confidence interval over replications.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Mean over the replications that produced a value.
    pub mean: f64,
    /// Half width of the 95% Student-t interval; NaN (JSON `null`) with fewer than two
    /// values.
    pub half_width: f64,
    /// Sample standard deviation across replications.
    pub std_dev: f64,
    /// Number of replications that produced a value (a replication with no good
    /// completion has no response time).
    pub n: u32,
}

impl Estimate {
    /// The estimate from one value per replication; non-finite values are skipped.
    pub fn from_samples(samples: &[f64]) -> Estimate {
        let vals = samples.iter().copied().filter(|v| v.is_finite());
        let n = vals.clone().count();
        if n == 0 {
            return Estimate {
                mean: f64::NAN,
                half_width: f64::NAN,
                std_dev: f64::NAN,
                n: 0,
            };
        }
        let mean = vals.clone().sum::<f64>() / n as f64;
        if n == 1 {
            return Estimate {
                mean,
                half_width: f64::NAN,
                std_dev: f64::NAN,
                n: 1,
            };
        }
        let var = vals.map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        let std_dev = var.sqrt();
        let half_width = t_975(n as u32 - 1) * std_dev / (n as f64).sqrt();
        Estimate {
            mean,
            half_width,
            std_dev,
            n: n as u32,
        }
    }

    /// Lower end of the interval.
    pub fn lo(&self) -> f64 {
        self.mean - self.half_width
    }

    /// Upper end of the interval.
    pub fn hi(&self) -> f64 {
        self.mean + self.half_width
    }

    /// True when `value` lies inside the 95% interval.
    pub fn covers(&self, value: f64) -> bool {
        self.lo() <= value && value <= self.hi()
    }

    /// Half width of the two-sided interval at confidence `level` (0.95 gives
    /// `half_width`). For several comparisons at once, a family-wise level `L` over `m`
    /// intervals needs `level = 1 - (1 - L)/m` each (Bonferroni).
    pub fn half_width_at(&self, level: f64) -> f64 {
        if self.n < 2 {
            return f64::NAN;
        }
        t_quantile(0.5 + level / 2.0, self.n - 1) * self.std_dev / f64::from(self.n).sqrt()
    }
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom (two-sided 95%).
///
/// Tabulated to 9 digits up to 30 degrees of freedom; beyond, the Cornish-Fisher
/// expansion around the normal quantile, accurate to better than 1e-6 there.
pub fn t_975(df: u32) -> f64 {
    const TABLE: [f64; 30] = [
        12.706204736,
        4.302652730,
        3.182446305,
        2.776445105,
        2.570581836,
        2.446911851,
        2.364624252,
        2.306004135,
        2.262157163,
        2.228138852,
        2.200985160,
        2.178812830,
        2.160368656,
        2.144786688,
        2.131449546,
        2.119905299,
        2.109815578,
        2.100922040,
        2.093024054,
        2.085963447,
        2.079613845,
        2.073873068,
        2.068657610,
        2.063898562,
        2.059538553,
        2.055529439,
        2.051830516,
        2.048407142,
        2.045229642,
        2.042272456,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z: f64 = 1.959963984540054;
            let v = f64::from(df);
            let g1 = (z.powi(3) + z) / 4.0;
            let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
            let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
            let g4 = (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5)
                - 1920.0 * z.powi(3)
                - 945.0 * z)
                / 92160.0;
            z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
        }
    }
}

/// The `p` quantile of Student's t with `df` degrees of freedom, for any `p` in (0, 1);
/// NaN for `df = 0` or `p` outside (0, 1). The distribution is
/// [`servelab_dist::student`], shared with the lab.
pub fn t_quantile(p: f64, df: u32) -> f64 {
    if df == 0 || !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    servelab_dist::student::t_quantile(p, f64::from(df))
}

/// MSER-5: how many leading batches of 5 observations to delete.
///
/// The series is cut into `m` batches of 5 (a trailing partial batch is ignored) with
/// means `z_j`; the truncation `d` in `0..=m/2` minimises
/// `sum_{j>=d} (z_j - mean_d)^2 / (m - d)^2` (White, 1997). The search stops at half
/// the run because a minimum later than that means the run is too short to tell
/// transient from noise. Returns `d`, so `5 * d` observations are deleted.
pub fn mser5(series: &[f64]) -> usize {
    const BATCH: usize = 5;
    let m = series.len() / BATCH;
    if m < 2 {
        return 0;
    }
    let z: Vec<f64> = series
        .chunks_exact(BATCH)
        .map(|c| c.iter().sum::<f64>() / BATCH as f64)
        .collect();
    mser(&z)
}

/// MSER on a series that is already batched (one value per batch): the truncation
/// `d` in `0..=m/2` minimising `sum_{j>=d} (z_j - mean_d)^2 / (m - d)^2`.
pub fn mser(z: &[f64]) -> usize {
    let m = z.len();
    if m < 2 {
        return 0;
    }
    // Suffix sums from the end, so every candidate d costs O(1). Centre on the overall
    // mean first to keep the sum of squares well conditioned.
    let centre = z.iter().sum::<f64>() / m as f64;
    let (mut s1, mut s2) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    let mut stats = vec![(0.0, 0.0); m];
    for j in (0..m).rev() {
        let x = z[j] - centre;
        s1 += x;
        s2 += x * x;
        stats[j] = (s1, s2);
    }
    for (d, &(s1, s2)) in stats.iter().enumerate().take(m / 2 + 1) {
        let k = (m - d) as f64;
        let score = (s2 - s1 * s1 / k).max(0.0) / (k * k);
        if score < best.0 {
            best = (score, d);
        }
    }
    best.1
}

/// The `q`-quantile (0..=1) of `values` by the nearest-rank rule, reordering the slice
/// in place (linear time, no full sort). NaN for an empty slice.
pub fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f64::total_cmp);
    *v
}

/// Several quantiles at once (`qs` ascending), nearest-rank, reordering `values`.
/// Each selection only searches the part above the previous rank, so three quantiles
/// cost little more than one.
pub fn quantiles<const N: usize>(values: &mut [f64], qs: [f64; N]) -> [f64; N] {
    let mut out = [f64::NAN; N];
    if values.is_empty() {
        return out;
    }
    let len = values.len();
    let mut from = 0;
    for (o, q) in out.iter_mut().zip(qs) {
        let rank = ((q * len as f64).ceil() as usize).clamp(1, len) - 1;
        debug_assert!(rank >= from, "quantiles must be ascending");
        let rank = rank.max(from);
        let (_, v, _) = values[from..].select_nth_unstable_by(rank - from, f64::total_cmp);
        *o = *v;
        from = rank;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_matches_hand_computation() {
        // mean 3, s = sqrt(2.5), t(4) = 2.776445105: hw = 2.776445105 * sqrt(2.5/5).
        let e = Estimate::from_samples(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.mean, 3.0);
        assert!((e.std_dev - 2.5f64.sqrt()).abs() < 1e-12);
        assert!(
            (e.half_width - 1.963_243_4).abs() < 1e-6,
            "{}",
            e.half_width
        );
        assert!(e.covers(1.1) && !e.covers(1.0));
        let one = Estimate::from_samples(&[4.0, f64::NAN]);
        assert_eq!((one.mean, one.n), (4.0, 1));
        assert!(one.half_width.is_nan());
        assert_eq!(Estimate::from_samples(&[]).n, 0);
    }

    #[test]
    fn t_quantiles_are_continuous_past_the_table() {
        assert!((t_975(30) - 2.042272456).abs() < 1e-9);
        assert!((t_975(31) - 2.039513446).abs() < 1e-6, "{}", t_975(31));
        assert!((t_975(120) - 1.979930405).abs() < 1e-6);
        assert!((t_975(100_000) - 1.96).abs() < 1e-3);
    }

    #[test]
    fn general_t_quantile_agrees_with_the_table_and_known_values() {
        for df in [1, 2, 5, 9, 30, 31, 120] {
            assert!((t_quantile(0.975, df) - t_975(df)).abs() < 1e-6, "df {df}");
        }
        // t(0.995, 9) = 3.249835542, t(0.9995, 9) = 4.780912586, t(0.95, 1) = 6.313751515.
        assert!((t_quantile(0.995, 9) - 3.249_835_542).abs() < 1e-6);
        assert!((t_quantile(0.9995, 9) - 4.780_912_586).abs() < 1e-6);
        assert!((t_quantile(0.95, 1) - 6.313_751_515).abs() < 1e-6);
        assert!((t_quantile(0.025, 4) + 2.776_445_105).abs() < 1e-6);
        assert!(t_quantile(1.0, 4).is_nan());
        let e = Estimate::from_samples(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert!((e.half_width_at(0.95) - e.half_width).abs() < 1e-6);
        assert!(e.half_width_at(0.99) > e.half_width);
    }

    #[test]
    fn mser5_matches_hand_computation() {
        // Batch means 10, 1, 1, 2 (m = 4, d in 0..=2):
        //   d=0: mean 3.5, SS 57,   57/16  = 3.5625
        //   d=1: mean 4/3, SS 2/3,  (2/3)/9 = 0.0741  <- minimum
        //   d=2: mean 1.5, SS 0.5,  0.5/4  = 0.125
        let mut s = vec![10.0; 5];
        s.extend([1.0; 10]);
        s.extend([2.0; 5]);
        s.push(99.0); // partial batch: ignored
        assert_eq!(mser5(&s), 1);
        // A stationary series needs no deletion.
        assert_eq!(
            mser5(&[1.0, 2.0, 3.0, 4.0, 5.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
            0
        );
        assert_eq!(mser5(&[1.0; 7]), 0);
    }

    #[test]
    fn quantile_uses_nearest_rank() {
        let mut v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(quantile(&mut v, 0.5), 50.0);
        assert_eq!(quantile(&mut v, 0.99), 99.0);
        assert_eq!(quantile(&mut v, 1.0), 100.0);
        assert_eq!(quantile(&mut v, 0.0), 1.0);
        assert!(quantile(&mut [], 0.5).is_nan());
        let mut w: Vec<f64> = (1..=1000)
            .map(|i| f64::from((i * 7919) % 1000 + 1))
            .collect();
        assert_eq!(quantiles(&mut w, [0.5, 0.9, 0.99]), [500.0, 900.0, 990.0]);
        assert!(quantiles(&mut [], [0.5])[0].is_nan());
    }
}
