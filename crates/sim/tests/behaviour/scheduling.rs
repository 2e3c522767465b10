//! Round robin against FCFS, and the cost of context switches (seed 002's second
//! curiosity experiment).

use servelab_sim::{Affinity, Dist, Length, Model, Policy, RunSpec, Warmup, exact, run_models};

use crate::{Family, seed_model, seed_offset, spec};

#[test]
fn round_robin_with_tiny_quantum_and_free_switches_equals_fcfs_and_exact() {
    let family = Family::of(4);
    // Exponential service: the number in system does not depend on the order of
    // service, so mean response times agree (Little). Shared run queue, 2 cores x 4
    // threads, a quantum of a tenth of the mean service: plenty of preemptions.
    // (20,000 requests per replication: shorter runs near the knee are biased, see
    // `Length::Requests`.)
    let base = Model {
        cores: 2,
        threads_per_core: 4,
        affinity: Affinity::Shared,
        ..seed_model(70)
    };
    let fcfs = base.clone();
    let rr = Model {
        policy: Policy::RoundRobin,
        quantum: 0.02,
        context_switch: 0.0,
        ..base
    };
    let e = exact::solve(&fcfs).unwrap();
    assert_eq!(exact::solve(&rr), Some(e));
    let points = run_models(&[fcfs, rr], &spec(10, 20_000, 21)).unwrap();
    for (name, p) in ["fcfs", "rr"].iter().zip(&points) {
        let s = p.sim.as_ref().unwrap();
        family.covers(
            &format!("{name} R"),
            &s.attempt_response_time,
            e.response_time,
        );
        family.covers(&format!("{name} X"), &s.throughput, e.throughput);
        assert_eq!(s.switch_fraction.mean, 0.0);
    }
    // Same mean, different distribution: processor sharing spreads response times
    // (a short request no longer waits behind a long one, a long one is slowed by all).
    let (f, r) = (points[0].sim.unwrap(), points[1].sim.unwrap());
    assert!(
        r.attempt_p50.mean < f.attempt_p50.mean,
        "{:?} {:?}",
        r.attempt_p50,
        f.attempt_p50
    );
}

#[test]
fn context_switch_cost_lowers_throughput_and_utilisation() {
    // Seed 002, curiosity experiment 2: c = 4, k = 4 pinned, S = exp 0.25 s, past
    // saturation; a small quantum makes preemptions frequent.
    let model = |s: f64| Model {
        users: 300,
        threads_per_core: 4,
        service: Dist::exp(0.25),
        think: Dist::exp(7.0),
        policy: Policy::RoundRobin,
        quantum: 0.05,
        context_switch: s,
        ..Model::default()
    };
    let costs = [0.0, 0.01, 0.05];
    let models: Vec<Model> = costs.iter().map(|&s| model(s)).collect();
    let points = run_models(&models, &spec(6, 3000, 22)).unwrap();
    let sims: Vec<_> = points.iter().map(|p| p.sim.unwrap()).collect();
    for w in sims.windows(2) {
        assert!(
            w[1].throughput.hi() < w[0].throughput.lo(),
            "{:?} then {:?}",
            w[0].throughput,
            w[1].throughput
        );
        assert!(w[1].utilisation.hi() < w[0].utilisation.lo());
        assert!(w[1].switch_fraction.mean > w[0].switch_fraction.mean);
        assert!(w[1].attempt_response_time.mean > w[0].attempt_response_time.mean);
    }
    // Utilisation plus switching still fills the cores: switching is busy, not useful.
    let last = sims[2];
    assert!(
        (last.utilisation.mean + last.switch_fraction.mean - 1.0).abs() < 0.01,
        "{last:?}"
    );
}

#[test]
fn pinned_round_robin_and_fcfs_share_the_mean_response_time() {
    // Without an exact model (pinned, k = 4), the two policies still agree on the mean
    // with free switches: both intervals overlap.
    let base = Model {
        threads_per_core: 4,
        ..seed_model(140)
    };
    let rr = Model {
        policy: Policy::RoundRobin,
        quantum: 0.02,
        ..base.clone()
    };
    let p = run_models(&[base, rr], &spec(10, 20_000, 23)).unwrap();
    let (a, b) = (
        p[0].sim.unwrap().attempt_response_time,
        p[1].sim.unwrap().attempt_response_time,
    );
    assert!(a.lo() < b.hi() && b.lo() < a.hi(), "fcfs {a:?} rr {b:?}");
}

#[test]
fn round_robin_with_one_thread_per_core_never_switches() {
    // Seed 002's first configuration: k = 1, RR, quantum 0.5 s, switch 0.1 s. Each core
    // has one thread, which never waits for its core: no preemption, no switch cost, the
    // same numbers as FCFS (same seed, same random stream, so exactly the same).
    let fcfs = seed_model(200);
    let rr = Model {
        policy: Policy::RoundRobin,
        quantum: 0.5,
        context_switch: 0.1,
        ..fcfs.clone()
    };
    // Each as point 0, so both get the same random streams.
    let f = servelab_sim::run_point(&fcfs, &spec(3, 2000, 24)).unwrap();
    let r = servelab_sim::run_point(&rr, &spec(3, 2000, 24)).unwrap();
    assert!(r.exact.is_some());
    let (f, r) = (f.sim.unwrap(), r.sim.unwrap());
    assert_eq!(r.switch_fraction.mean, 0.0);
    assert_eq!(f.throughput, r.throughput);
    assert_eq!(f.attempt_response_time, r.attempt_response_time);
}

#[test]
fn round_robin_charges_no_switch_for_a_float_residue() {
    // Regression: the remaining work of a slice was a running difference of clock
    // readings, so a constant demand cut into quanta left a float residue (1e-13 s, or
    // `1.1 - 10 * 0.1` = 1e-16 s above a quantum) that paid one more context switch.
    // The case (4 cores x 4 threads, S = 1 s, q = 0.1 s, switch 0.01 s) gave
    // X = 3.644/s where 9 preemptions a request give c / (S + 9 * 0.01) = 3.670/s.
    // Saturated cores with constant demand: every request is preempted exactly
    // S/q - 1 times, so X = c / (S + (S/q - 1) cs) and U = S / (S + (S/q - 1) cs),
    // up to the edges of the window. Checked at several time scales and ratios.
    for (demand, quantum, switch) in [
        (1.0, 0.1, 0.01),
        (1.1, 0.1, 0.01),
        (0.7, 0.1, 0.02),
        (3e-3, 3e-4, 1e-5),
        (2100.0, 300.0, 7.0),
    ] {
        let m = Model {
            users: 60,
            cores: 4,
            threads_per_core: 4,
            buffer: 50,
            policy: Policy::RoundRobin,
            quantum,
            context_switch: switch,
            service: Dist::constant(demand),
            think: Dist::exp(2.0 * demand),
            ..Model::default()
        };
        let run = RunSpec {
            reps: 2,
            length: Length::Horizon(2000.0 * demand),
            warmup: Warmup::Fixed(200.0 * demand),
            seed: 25 + seed_offset(),
        };
        let s = servelab_sim::run_point(&m, &run).unwrap().sim.unwrap();
        let preemptions = (demand / quantum).round() - 1.0;
        let cycle = demand + preemptions * switch;
        let (x, u) = (4.0 / cycle, demand / cycle);
        let what = format!("S={demand} q={quantum} cs={switch}");
        assert!(
            (s.throughput.mean - x).abs() < 2e-3 * x,
            "{what}: X {:?}, {preemptions} preemptions a request give {x}",
            s.throughput
        );
        assert!(
            (s.utilisation.mean - u).abs() < 2e-3 * u,
            "{what}: U {:?}, {preemptions} preemptions a request give {u}",
            s.utilisation
        );
    }
}
