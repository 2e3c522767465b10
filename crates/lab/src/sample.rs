//! A sample of repeats ([`Sample`]) and the statistics the lab's protocol rests on: the Student-t distribution (for
//! the 95% interval of a mean over a few repeats) and Welch's t-test (for "is B
//! different from A" when the two runs' spreads differ).
//!
//! Why not min..max or "the ranges do not overlap": with 3 repeats, the range is
//! not an interval of anything, and disjoint ranges are neither necessary nor
//! sufficient for a difference (Jain, ch. 13; Le Boudec, ch. 2). The t quantile
//! is computed, not tabled, because Welch's degrees of freedom are not whole
//! numbers; the distribution itself lives in `servelab_dist::student`, shared
//! with the simulator.
//!
//! Imports nothing from the lab, so every other module may use it.

/// Two-sided confidence level of every interval and test of the lab.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// Mean, sample standard deviation and count of some values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// How many values.
    pub n: u32,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
}

impl Sample {
    /// The sample of the finite values among `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Sample> {
        let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = if v.len() < 2 {
            0.0
        } else {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
        };
        Some(Sample {
            n: v.len() as u32,
            mean,
            sd,
        })
    }

    /// Half-width of the mean's 95% Student-t interval; `None` below 2 values.
    pub fn half_width(&self) -> Option<f64> {
        (self.n >= 2).then(|| {
            t_quantile(0.5 + CONFIDENCE / 2.0, f64::from(self.n - 1)) * self.sd
                / f64::from(self.n).sqrt()
        })
    }

    /// The half-width relative to the mean (0.02 is ±2%); `None` below 2 values
    /// or for a zero mean.
    pub fn relative_half_width(&self) -> Option<f64> {
        let h = self.half_width()?;
        (self.mean != 0.0).then(|| h / self.mean.abs())
    }
}

/// Welch's t-test of two means at 95%, and the size of the difference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Welch {
    /// B's mean minus A's.
    pub diff: f64,
    /// Half-width of the 95% interval of `diff`.
    pub half_width: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

impl Welch {
    /// The test of `b` against `a`; `None` when either has fewer than 2 values
    /// (a single repeat has no spread to test against).
    pub(crate) fn test(a: &Sample, b: &Sample) -> Option<Welch> {
        if a.n < 2 || b.n < 2 {
            return None;
        }
        let (va, vb) = (a.sd.powi(2) / f64::from(a.n), b.sd.powi(2) / f64::from(b.n));
        let diff = b.mean - a.mean;
        let se = (va + vb).sqrt();
        if se == 0.0 {
            // Identical repeats on both sides: any difference is exact.
            return Some(Welch {
                diff,
                half_width: 0.0,
                df: f64::from(a.n + b.n - 2),
                p: if diff == 0.0 { 1.0 } else { 0.0 },
            });
        }
        let df =
            (va + vb).powi(2) / (va.powi(2) / f64::from(a.n - 1) + vb.powi(2) / f64::from(b.n - 1));
        let t = diff / se;
        Some(Welch {
            diff,
            half_width: t_quantile(0.5 + CONFIDENCE / 2.0, df) * se,
            df,
            p: 2.0 * (1.0 - t_cdf(t.abs(), df)),
        })
    }

    /// Whether the difference is significant at 95%.
    pub(crate) fn significant(&self) -> bool {
        self.p < 1.0 - CONFIDENCE
    }
}

pub(crate) use servelab_dist::student::{t_cdf, t_quantile};

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    #[test]
    fn a_sample_has_mean_sd_and_a_student_t_half_width() {
        let s = Sample::of(&[10.0, 12.0, 14.0, f64::NAN]).unwrap();
        assert_eq!((s.n, s.mean, s.sd), (3, 12.0, 2.0));
        // t(0.975, 2) * 2 / sqrt(3)
        let h = s.half_width().unwrap();
        assert!(close(h, 4.302_653 * 2.0 / 3f64.sqrt(), 1e-6), "{h}");
        assert!(close(s.relative_half_width().unwrap(), h / 12.0, 1e-12));
        assert_eq!(Sample::of(&[5.0]).unwrap().half_width(), None);
        assert!(Sample::of(&[]).is_none());
    }

    /// Welch's test on textbook data: a clear difference is found, noise is not.
    #[test]
    fn welch_finds_a_difference_and_not_noise() {
        let a = Sample::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
        let b = Sample::of(&[110.0, 108.0, 112.0, 111.0, 109.0]).unwrap();
        let w = Welch::test(&a, &b).unwrap();
        assert!(w.significant(), "{w:?}");
        assert_eq!(w.diff, 10.0);
        assert!(w.diff - w.half_width > 0.0);
        let c = Sample::of(&[101.0, 99.0, 100.5, 98.5, 101.0]).unwrap();
        let w = Welch::test(&a, &c).unwrap();
        assert!(!w.significant(), "{w:?}");
        assert!(w.p > 0.5);
        // Equal variances and sizes: Welch's df is 2(n-1) = 8.
        let w = Welch::test(&a, &Sample { mean: 0.0, ..a }).unwrap();
        assert!(close(w.df, 8.0, 1e-12), "{}", w.df);
        // A single repeat has nothing to test with.
        assert!(Welch::test(&a, &Sample::of(&[1.0]).unwrap()).is_none());
        // Comparing a sample with itself finds nothing.
        assert!(!Welch::test(&a, &a).unwrap().significant());
    }
}
