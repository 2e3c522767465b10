//! The user's percentiles (`user_pNN`): R_user from the end of thinking to the
//! answer, timeouts, rejections, retry waits and retries included, beside the
//! attempt's (`attempt_pNN`). What `servelab load`'s p50 and p99 measure.

use servelab_sim::{Dist, Estimate, Length, Model, OnFull, RunSpec, Warmup};

use crate::{seed_model, seed_offset, spec};

/// Seed 002's curiosity 1 shape past saturation: timeouts of 5 s + exp 5 s with
/// unbounded retries, capacity 16/s, 300 users.
fn overloaded() -> Model {
    Model {
        users: 300,
        service: Dist::exp(0.25),
        think: Dist::uniform(4.0, 10.0),
        timeout: Some(Dist::exp(5.0).shifted(5.0)),
        ..Model::default()
    }
}

#[test]
fn without_retries_user_percentiles_are_the_attempt_percentiles() {
    // Nobody retries: every answered user's R_user is its one attempt's R, rounded
    // the same way into the same buckets, so the two are equal, not merely close.
    // MSER-5 cuts a warm-up here, so this also checks that the user histogram is cut
    // where the attempt one is (the run again to the cut subtracts both).
    let p = servelab_sim::run_point(&seed_model(150), &spec(3, 2000, 91)).unwrap();
    let deleted = p.warmup.unwrap().mean_deleted;
    assert!(deleted > 0.0, "no warm-up cut to check: {deleted}");
    let s = p.sim.unwrap();
    assert_eq!(s.timeout_rate.mean, 0.0);
    assert_eq!(s.user_p50, s.attempt_p50);
    assert_eq!(s.user_p90, s.attempt_p90);
    assert_eq!(s.user_p99, s.attempt_p99);
    assert!(s.user_p99.mean > s.user_p50.mean, "{:?}", s.user_p99);
}

#[test]
fn timeouts_and_retries_lengthen_the_users_tail_not_the_attempts() {
    // Every answered user waited at least as long as its last attempt, so each
    // order statistic of R_user is at least that of R_attempt. Past saturation a
    // user whose first attempt timed out waited 5 s or more before the retry that
    // got the answer; with timeouts firing on more than 1% of users, the user's p99
    // is beyond the attempt's by more than the interval of either.
    let s = servelab_sim::run_point(&overloaded(), &spec(4, 4000, 92))
        .unwrap()
        .sim
        .unwrap();
    assert!(s.timeout_rate.lo() > 1.0, "{:?}", s.timeout_rate);
    let pairs: [(&str, Estimate, Estimate); 3] = [
        ("p50", s.user_p50, s.attempt_p50),
        ("p90", s.user_p90, s.attempt_p90),
        ("p99", s.user_p99, s.attempt_p99),
    ];
    for (what, user, attempt) in pairs {
        assert!(
            user.mean >= attempt.mean,
            "{what}: {user:?} below {attempt:?}"
        );
    }
    assert!(
        s.user_p99.lo() > s.attempt_p99.hi() + 5.0,
        "user p99 {:?}, attempt p99 {:?}",
        s.user_p99,
        s.attempt_p99
    );
    // The mean user time is the mean of what the histogram holds plus the users
    // still waiting (lower bounds); it lies inside the distribution, not past it.
    assert!(s.user_response_time.mean > s.attempt_response_time.mean);
    assert!(
        s.user_response_time.mean < s.user_p99.mean,
        "mean {:?} past p99 {:?}",
        s.user_response_time,
        s.user_p99
    );
}

#[test]
fn a_user_who_retries_four_times_waits_two_services() {
    // Deterministic (as in `retries`): 2 users, 1 thread, no buffer, service 1 s,
    // rejected users retry every 0.25 s. Every answer takes 1 s for its attempt and
    // 2 s for its user, so every percentile is that, within a bucket (0.05%).
    let m = Model {
        users: 2,
        cores: 1,
        buffer: 0,
        think: Dist::ZERO,
        service: Dist::constant(1.0),
        on_full: OnFull::Reject,
        retry_wait: Dist::constant(0.25),
        ..Model::default()
    };
    let run = RunSpec {
        reps: 2,
        length: Length::Horizon(500.0),
        warmup: Warmup::Fixed(50.0),
        seed: 93 + seed_offset(),
    };
    let s = servelab_sim::run_point(&m, &run).unwrap().sim.unwrap();
    let near = |what: &str, got: f64, want: f64| {
        assert!(
            (got - want).abs() <= 5e-4 * want,
            "{what}: {got}, expected {want}"
        );
    };
    for (what, e) in [
        ("attempt p50", s.attempt_p50),
        ("attempt p99", s.attempt_p99),
    ] {
        near(what, e.mean, 1.0);
    }
    for (what, e) in [("user p50", s.user_p50), ("user p99", s.user_p99)] {
        near(what, e.mean, 2.0);
    }
}

/// Nearest-rank quantile of sorted values.
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let k = ((q * sorted.len() as f64).ceil() as usize).max(1);
    sorted[k - 1]
}

#[test]
fn user_percentiles_match_the_trace() {
    // The trace says when each user's response period began (`send`, not `retry`)
    // and when it was answered (`done`): the R_user of every kept answer, read from
    // outside the engine. Its nearest-rank percentiles are the simulator's, within
    // the histogram's bucket (0.05%) and the trace's microsecond rounding.
    let m = Model {
        users: 30,
        cores: 1,
        buffer: 2,
        service: Dist::exp(0.1),
        think: Dist::exp(1.0),
        timeout: Some(Dist::constant(0.8)),
        retry_wait: Dist::constant(0.1),
        ..Model::default()
    };
    let run = RunSpec {
        reps: 1,
        length: Length::Horizon(400.0),
        warmup: Warmup::Fixed(40.0),
        seed: 94 + seed_offset(),
    };
    let mut trace = Vec::new();
    servelab_sim::trace_replication(&m, &run, &mut trace).unwrap();
    let text = String::from_utf8(trace).unwrap();
    let mut start = vec![f64::NAN; m.users as usize];
    let (mut kept, mut user_rt) = (false, Vec::new());
    let mut retries = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let t: f64 = f[0].parse().unwrap();
        match f[1] {
            "warmup_end" => kept = true,
            "send" => start[f[2].parse::<usize>().unwrap()] = t,
            "retry" => retries += 1,
            "done" if kept => user_rt.push(t - start[f[2].parse::<usize>().unwrap()]),
            _ => {}
        }
    }
    assert!(retries > 100, "retries must fire: {retries}");
    assert!(user_rt.len() > 1000, "{} answers", user_rt.len());
    user_rt.sort_by(f64::total_cmp);
    let s = servelab_sim::run_point(&m, &run).unwrap().sim.unwrap();
    for (q, got) in [(0.5, s.user_p50), (0.9, s.user_p90), (0.99, s.user_p99)] {
        let want = nearest_rank(&user_rt, q);
        assert!(
            (got.mean - want).abs() <= 6e-4 * want + 2e-6,
            "user p{}: sim {} against the trace's {want}",
            100.0 * q,
            got.mean
        );
    }
    assert!(s.user_p99.mean > s.attempt_p99.mean, "{s:?}");
}
