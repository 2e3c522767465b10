//! The asymptotic bounds are never violated beyond the interval, for any scheduling
//! and any service distribution (they only use means).

use servelab_sim::{Dist, Model, Policy, bounds, run_models};

use crate::{Family, seed_model, spec};

#[test]
fn simulated_points_respect_the_bounds() {
    let mut models = Vec::new();
    for n in [10, 144, 400] {
        models.push(seed_model(n));
        models.push(Model {
            service: Dist::constant(0.2),
            ..seed_model(n)
        });
        models.push(Model {
            service: Dist::lognormal(0.2, 3.0),
            ..seed_model(n)
        });
        models.push(Model {
            threads_per_core: 4,
            policy: Policy::RoundRobin,
            quantum: 0.05,
            context_switch: 0.01,
            ..seed_model(n)
        });
    }
    // The bounds are tight at both ends (X = N/(S+Z) at light load, c/S past
    // saturation), where the check is a coverage test: 24 checks, one family.
    let family = Family::of(2 * models.len() as u32);
    let points = run_models(&models, &spec(5, 10_000, 41)).unwrap();
    for (m, p) in models.iter().zip(&points) {
        let b = bounds::bounds(m);
        let s = p.sim.unwrap();
        let ctx = format!("N={} service {} policy {}", m.users, m.service, m.policy);
        family.not_above(&format!("{ctx}: X"), &s.throughput, b.throughput_max);
        family.not_below(
            &format!("{ctx}: R"),
            &s.attempt_response_time,
            b.response_time_min,
        );
    }
}

#[test]
fn goodput_respects_the_throughput_bound_even_with_timeouts() {
    let m = Model {
        timeout: Some(Dist::exp(2.0).shifted(1.0)),
        ..seed_model(400)
    };
    let s = servelab_sim::run_point(&m, &spec(5, 2000, 42))
        .unwrap()
        .sim
        .unwrap();
    assert!(s.badput.mean > 0.0);
    Family::of(1).not_above("goodput", &s.goodput, bounds::bounds(&m).throughput_max);
}
