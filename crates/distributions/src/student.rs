//! Student's t distribution: its distribution function and quantiles for any
//! real number of degrees of freedom.
//!
//! One home for it because two crates need it: the simulator's confidence
//! intervals over replications (whole degrees of freedom) and the lab's Welch
//! test, whose Welch–Satterthwaite degrees of freedom are not whole numbers, so a
//! table cannot serve. The distribution function is the regularized incomplete
//! beta function, evaluated by its continued fraction (modified Lentz, as in
//! Numerical Recipes); the quantile is found by bisection on it, to about 1e-12
//! relative. No crate in the workspace's dependency set offers it without pulling
//! in a linear-algebra stack, and it is sixty lines.

/// P(T <= t) for Student's t with `df` degrees of freedom (df > 0, real).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return f64::NAN;
    }
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1).
pub fn t_quantile(p: f64, df: f64) -> f64 {
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
        // df = 1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/pi.
        for t in [-3.0, -0.5, 0.0, 0.7, 10.0] {
            let c = 0.5 + f64::atan(t) / std::f64::consts::PI;
            assert!(close(t_cdf(t, 1.0), c, 1e-10), "{t}");
            assert!(close(t_cdf(t, 4.5) + t_cdf(-t, 4.5), 1.0, 1e-12));
        }
    }
}
