//! The two speed figures of issue 5.
//!
//! - `closed_n50_one_thread`: the SimPy comparison model (N = 50, c = 4, S = 0.1 s exp,
//!   Z = 1 s exp, FCFS), one replication of 200,000 requests on one OS thread (`--jobs 1`).
//!   Criterion reports requests/s; SimPy 4.1 does about 94,000 on this machine, the
//!   target is 50x that (4.7 M/s). The time includes MSER-5, percentiles and metrics.
//! - `seed_002_sweep_all_cores`: 33 user counts (1..800:25) x 10 replications x 20,000
//!   requests of seed 002's model (with its 50 s + exp 5 s timeouts), on every
//!   core; target under 10 s.
//!
//! Run with `cargo bench -p servelab-sim`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use servelab_sim::{Dist, Length, Model, RunSpec, Sweep, Warmup, parse_users, run_models_on};

fn closed_n50(c: &mut Criterion) {
    let model = Model {
        users: 50,
        cores: 4,
        service: Dist::exp(0.1),
        think: Dist::exp(1.0),
        ..Model::default()
    };
    let requests = 200_000;
    let spec = RunSpec {
        reps: 1,
        length: Length::Requests(requests),
        warmup: Warmup::Mser5,
        seed: 1,
    };
    let mut g = c.benchmark_group("speed");
    g.throughput(Throughput::Elements(requests));
    g.sample_size(20);
    g.bench_function("closed_n50_one_thread", |b| {
        b.iter(|| black_box(run_models_on(std::slice::from_ref(&model), &spec, 1).unwrap()))
    });
    g.finish();
}

fn seed_002_sweep(c: &mut Criterion) {
    let sweep = Sweep {
        base: Model {
            timeout: Some("50s+exp:5s".parse().unwrap()),
            ..Model::default()
        },
        users: parse_users("1..800:25").unwrap(),
    };
    let spec = RunSpec::default(); // 10 reps x 20,000 requests, MSER-5
    let mut g = c.benchmark_group("speed");
    g.throughput(Throughput::Elements(33 * 10 * 20_000));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("seed_002_sweep_all_cores", |b| {
        b.iter(|| black_box(run_models_on(&sweep.models(), &spec, 0).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, closed_n50, seed_002_sweep);
criterion_main!(benches);
