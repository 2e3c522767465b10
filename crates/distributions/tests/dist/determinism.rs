//! Seeded sampling repeats exactly, in seconds and as `Duration`, so a run under
//! `--seed` is repeatable in the server, the load generator and the simulator.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use servelab_dist::Dist;

const FORMS: [&str; 5] = [
    "exp:0.2s",
    "uniform:4s..10s",
    "lognormal:1s,2",
    "50s+exp:5s",
    "40ms",
];

#[test]
fn same_seed_same_stream() {
    for text in FORMS {
        let d: Dist = text.parse().unwrap();
        let (mut a, mut b) = (Pcg64Mcg::seed_from_u64(9), Pcg64Mcg::seed_from_u64(9));
        for _ in 0..1000 {
            assert_eq!(
                d.sample(&mut a).to_bits(),
                d.sample(&mut b).to_bits(),
                "{text}"
            );
            assert_eq!(
                d.sample_duration(&mut a),
                d.sample_duration(&mut b),
                "{text}"
            );
            assert_eq!(
                d.sample_residual(&mut a).to_bits(),
                d.sample_residual(&mut b).to_bits(),
                "{text}"
            );
        }
    }
}

#[test]
fn different_seeds_differ_for_random_forms() {
    for text in &FORMS[..4] {
        let d: Dist = text.parse().unwrap();
        let (mut a, mut b) = (Pcg64Mcg::seed_from_u64(1), Pcg64Mcg::seed_from_u64(2));
        assert!(
            (0..10).any(|_| d.sample(&mut a) != d.sample(&mut b)),
            "{text}"
        );
    }
}

#[test]
fn samples_never_fall_below_the_minimum() {
    for text in FORMS {
        let d: Dist = text.parse().unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        assert!((0..10_000).all(|_| d.sample(&mut rng) >= d.min()), "{text}");
    }
}
