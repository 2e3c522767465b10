//! The statistics the lab's protocol rests on: the Student-t distribution (for
//! the 95% interval of a mean over a few repeats) and Welch's t-test (for "is B
//! different from A" when the two runs' spreads differ).
//!
//! Why not min..max or "the ranges do not overlap": with 3 repeats, the range is
//! not an interval of anything, and disjoint ranges are neither necessary nor
//! sufficient for a difference (Jain, ch. 13; Le Boudec, ch. 2). The t quantile
//! is computed, not tabled, because Welch's degrees of freedom are not whole
//! numbers: the t CDF is the regularized incomplete beta function (Numerical
//! Recipes' continued fraction), and its quantile is found by bisection.
//!
//! Imports nothing from the lab, so every other module may use it.

/// Two-sided confidence level of every interval and test of the lab.
pub(crate) const CONFIDENCE: f64 = 0.95;

/// Mean, sample standard deviation and count of some values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    /// How many values.
    pub n: u32,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (n - 1 in the denominator); 0 for one value.
    pub sd: f64,
}

impl Sample {
    /// The sample of the finite values among `values`; `None` when there are none.
    pub(crate) fn of(values: &[f64]) -> Option<Sample> {
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
    pub(crate) fn half_width(&self) -> Option<f64> {
        (self.n >= 2).then(|| {
            t_quantile(0.5 + CONFIDENCE / 2.0, f64::from(self.n - 1)) * self.sd
                / f64::from(self.n).sqrt()
        })
    }

    /// The half-width relative to the mean (0.02 is ±2%); `None` below 2 values
    /// or for a zero mean.
    pub(crate) fn relative_half_width(&self) -> Option<f64> {
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

/// P(T <= t) for Student's t with `df` degrees of freedom (df > 0, real).
pub(crate) fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // The CDF rises monotonically: bisect on [0, hi] with hi doubled until it
    // brackets p (df = 1 at 0.975 is 12.7; at 0.9995, 636.6).
    let mut hi = 1.0;
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the
    // symmetry I_x(a,b) = 1 - I_{1-x}(b,a) otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let floor = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / floor(1.0 - qab * x / qap);
    let mut h = d;
    // One Lentz step with coefficient `aa`: the factor it multiplies h by.
    let mut step = |aa: f64| {
        d = 1.0 / floor(1.0 + aa * d);
        c = floor(1.0 + aa / c);
        d * c
    };
    for m in 1..500 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        h *= step(m * (b - m) * x / ((qam + m2) * (a + m2)));
        let del = step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)));
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x)Γ(1-x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1.0)
    }

    /// The two-sided 95% quantiles every statistics table prints.
    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, q) in [
            (1.0, 12.706_205),
            (2.0, 4.302_653),
            (3.0, 3.182_446),
            (4.0, 2.776_445),
            (9.0, 2.262_157),
            (29.0, 2.045_230),
            (1000.0, 1.962_339),
        ] {
            let t = t_quantile(0.975, df);
            assert!(close(t, q, 1e-5), "df {df}: {t} against {q}");
        }
        assert!(close(t_quantile(0.995, 5.0), 4.032_143, 1e-5));
        assert!(close(t_quantile(0.025, 3.0), -3.182_446, 1e-5));
        assert_eq!(t_quantile(0.5, 7.0), 0.0);
    }

    #[test]
    fn the_cdf_of_t_is_symmetric_and_matches_cauchy_at_one_degree() {
        // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π.
        for t in [-3.0, -0.5, 0.0, 0.7, 10.0] {
            let c = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(t_cdf(t, 1.0), c, 1e-10), "{t}");
            assert!(close(t_cdf(t, 4.5) + t_cdf(-t, 4.5), 1.0, 1e-12));
        }
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
