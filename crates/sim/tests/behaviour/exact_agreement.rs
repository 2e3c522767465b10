//! In product-form cases the simulated 95% intervals cover the exact solution.

use servelab_sim::{Affinity, Dist, Length, Model, RunSpec, Warmup, exact, run_models};

use crate::{Family, seed_model, seed_offset, spec};

#[test]
fn seed_002_server_matches_the_exact_chain_below_at_and_past_the_knee() {
    let family = Family::of(16);
    // N* = 4 (0.2 + 7) / 0.2 = 144.
    // 20,000 requests: shorter runs bias R low at the knee (see `Length::Requests`).
    let models: Vec<Model> = [1, 50, 144, 300].map(seed_model).to_vec();
    let points = run_models(&models, &spec(10, 20_000, 11)).unwrap();
    for (m, p) in models.iter().zip(&points) {
        let e = exact::solve(m).expect("product-form");
        let s = p.sim.as_ref().unwrap();
        let n = m.users;
        family.covers(&format!("N={n} X"), &s.throughput, e.throughput);
        family.covers(
            &format!("N={n} R"),
            &s.attempt_response_time,
            e.response_time,
        );
        family.covers(&format!("N={n} U"), &s.utilisation, e.utilisation);
        family.covers(&format!("N={n} L"), &s.mean_in_system, e.mean_in_system);
        assert_eq!(s.drop_rate.mean, 0.0);
    }
}

#[test]
fn finite_buffer_drops_match_the_truncated_chain() {
    let family = Family::of(10);
    // K = 4 + 10 = 14 requests at most; 120 users near the knee drop some arrivals,
    // 300 users far past it drop many. Blocked users go back to thinking.
    // A fixed horizon after a fixed warm-up: free of the stopping bias of short
    // request-count runs (see `Length::Requests`).
    let models: Vec<Model> = [120, 300]
        .map(|n| Model {
            buffer: 10,
            ..seed_model(n)
        })
        .to_vec();
    let horizon = RunSpec {
        reps: 10,
        length: Length::Horizon(1000.0),
        warmup: Warmup::Fixed(100.0),
        seed: 12 + seed_offset(),
    };
    let points = run_models(&models, &horizon).unwrap();
    for (m, p) in models.iter().zip(&points) {
        let e = exact::solve(m).unwrap();
        assert!(e.drop_rate > 0.1, "the case must actually drop: {e:?}");
        let s = p.sim.as_ref().unwrap();
        let n = m.users;
        family.covers(&format!("N={n} X"), &s.throughput, e.throughput);
        family.covers(
            &format!("N={n} R"),
            &s.attempt_response_time,
            e.response_time,
        );
        family.covers(&format!("N={n} drops/s"), &s.drop_rate, e.drop_rate);
        family.covers(
            &format!("N={n} drop fraction"),
            &s.drop_fraction,
            e.drop_fraction,
        );
        family.covers(&format!("N={n} buffer"), &s.mean_buffer, e.mean_buffer);
    }
}

#[test]
fn think_time_distribution_does_not_matter_only_its_mean() {
    let family = Family::of(9);
    // The think stage is an infinite server: insensitive (BCMP, Engset). Seed 002's
    // uniform 4..10 s think time against the chain with Z = 7, with and without drops.
    let models: Vec<Model> = [
        Model {
            think: Dist::uniform(4.0, 10.0),
            ..seed_model(144)
        },
        Model {
            think: Dist::uniform(4.0, 10.0),
            buffer: 10,
            ..seed_model(200)
        },
        Model {
            think: Dist::constant(6.0).shifted(1.0),
            buffer: 10,
            ..seed_model(200)
        },
    ]
    .to_vec();
    let points = run_models(&models, &spec(10, 20_000, 13)).unwrap();
    for (i, (m, p)) in models.iter().zip(&points).enumerate() {
        let e = exact::solve(m).unwrap();
        let s = p.sim.as_ref().unwrap();
        family.covers(&format!("case {i} X"), &s.throughput, e.throughput);
        family.covers(
            &format!("case {i} R"),
            &s.attempt_response_time,
            e.response_time,
        );
        family.covers(&format!("case {i} drops"), &s.drop_rate, e.drop_rate);
    }
}

#[test]
fn shared_run_queue_with_many_threads_per_core_is_exact() {
    let family = Family::of(3);
    // k = 4 threads per core with a global run queue: work-conserving, so the chain with
    // rate mu * min(n, c) and cap c*k + B applies.
    let m = Model {
        threads_per_core: 4,
        affinity: Affinity::Shared,
        buffer: 8,
        ..seed_model(160)
    };
    let e = exact::solve(&m).unwrap();
    let p = servelab_sim::run_point(&m, &spec(10, 20_000, 14)).unwrap();
    let s = p.sim.unwrap();
    family.covers("X", &s.throughput, e.throughput);
    family.covers("R", &s.attempt_response_time, e.response_time);
    family.covers("drops", &s.drop_rate, e.drop_rate);
}

#[test]
fn pinned_threads_with_k_above_one_are_slower_than_the_exact_chain() {
    // Why the exact model refuses pinned k > 1: a core can idle while its neighbour has
    // two ready threads. Least-loaded assignment keeps this rare, so the effect is a
    // few percent of throughput but clear in response time below the knee: with k = 8
    // and N = 120, about 0.378 s against the work-conserving exact 0.337 s (10 x 20,000
    // requests), some 7 standard errors apart.
    let pinned = Model {
        threads_per_core: 8,
        ..seed_model(120)
    };
    assert!(exact::solve(&pinned).is_none());
    let shared = Model {
        affinity: Affinity::Shared,
        ..pinned.clone()
    };
    let e = exact::solve(&shared).unwrap();
    let s = servelab_sim::run_point(&pinned, &spec(10, 20_000, 15))
        .unwrap()
        .sim
        .unwrap();
    assert!(
        s.attempt_response_time.lo() > e.response_time,
        "pinned {:?} vs exact {}",
        s.attempt_response_time,
        e.response_time
    );
}
