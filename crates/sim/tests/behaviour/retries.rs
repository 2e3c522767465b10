//! The words `servelab load` and `servelab serve` use, in the model: a rejected or
//! timed-out user waits `retry_wait` and retries, R_user counts all of it, and a
//! cancelled request stops taking the server's time.

use servelab_sim::{
    Affinity, Dist, Length, Model, OnAbandon, OnFull, Policy, RunSpec, Warmup, run_models,
};

use crate::{seed_offset, spec};

fn horizon(reps: u32, seconds: f64, seed: u64) -> RunSpec {
    RunSpec {
        reps,
        length: Length::Horizon(seconds),
        warmup: Warmup::Fixed(seconds / 10.0),
        seed: seed + seed_offset(),
    }
}

#[test]
fn user_response_time_counts_rejections_and_retry_waits() {
    // Deterministic: 2 users who never think, 1 thread, no buffer, service 1 s, a
    // rejected user retries every 0.25 s. From t = 0 the users take turns: the one
    // served sends again the instant it is answered, and is rejected because the
    // other's retry, scheduled earlier for the same instant, took the thread. So each
    // request waits one full service while retrying 4 times: R_attempt = 1 s,
    // R_user = 2 s, X = 1/s, 4 rejections a second, no timeouts.
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
    let s = servelab_sim::run_point(&m, &horizon(2, 1000.0, 71))
        .unwrap()
        .sim
        .unwrap();
    let near = |what: &str, got: f64, want: f64| {
        assert!(
            (got - want).abs() <= 2e-3 * want,
            "{what}: {got}, expected {want}"
        );
    };
    near("R_attempt", s.attempt_response_time.mean, 1.0);
    near("R_user", s.user_response_time.mean, 2.0);
    near("X", s.throughput.mean, 1.0);
    near("rejections/s", s.drop_rate.mean, 4.0);
    assert_eq!(s.timeout_rate.mean, 0.0);
}

/// Without retries a user's response time is its one attempt's; the two differ only
/// by the users still waiting at the end of the run, which R_user counts (to the
/// end, lower bounds) and R_attempt, a per-answer figure, does not.
#[test]
fn without_retries_user_and_attempt_response_times_are_the_same() {
    let s = servelab_sim::run_point(&crate::seed_model(150), &spec(3, 2000, 72))
        .unwrap()
        .sim
        .unwrap();
    assert!(s.users_waiting_at_end.mean > 0.0);
    let (user, attempt) = (s.user_response_time.mean, s.attempt_response_time.mean);
    assert!(
        (user / attempt - 1.0).abs() < 0.02,
        "{user} against {attempt}"
    );
}

#[test]
fn rejected_users_learn_at_once_and_silent_drops_wait_for_the_timeout() {
    // A small buffer past saturation, timeouts of 30 s + exp 5 s, far longer than the
    // wait of an admitted request (at most 9 requests on 4 cores at 0.2 s). Silent:
    // every drop becomes a timeout. Reject: nobody times out, and the users, answered
    // at once, spend far less time per request.
    let base = Model {
        buffer: 5,
        timeout: Some(Dist::exp(5.0).shifted(30.0)),
        retry_wait: Dist::exp(1.0),
        ..crate::seed_model(300)
    };
    let models = [
        base.clone(),
        Model {
            on_full: OnFull::Reject,
            ..base
        },
    ];
    let p = run_models(&models, &horizon(4, 2000.0, 73)).unwrap();
    let (silent, reject) = (p[0].sim.unwrap(), p[1].sim.unwrap());
    assert!(silent.drop_rate.mean > 1.0, "{:?}", silent.drop_rate);
    assert!(
        silent.timeout_rate.mean >= 0.95 * silent.drop_rate.mean,
        "every silent drop times out: {silent:?}"
    );
    assert!(reject.drop_rate.mean > 1.0, "{:?}", reject.drop_rate);
    assert_eq!(reject.timeout_rate.mean, 0.0, "{reject:?}");
    assert_eq!(reject.badput.mean, 0.0);
    assert!(
        reject.user_response_time.hi() < silent.user_response_time.lo(),
        "reject {:?} silent {:?}",
        reject.user_response_time,
        silent.user_response_time
    );
    for s in [silent, reject] {
        assert!(s.user_response_time.mean > s.attempt_response_time.mean);
    }
}

#[test]
fn a_cancelled_request_frees_its_core() {
    // Deterministic: one user, service 1 s, timeout 0.5 s, no retry, think 1 s. The
    // user always gives up at 0.5 s and sends again 1.5 s after its last send.
    // Finish: the core works the whole second, as badput (U = 1/1.5). Cancel: the
    // core stops at the timeout (U = 0.5/1.5) and nothing completes.
    let base = Model {
        users: 1,
        cores: 1,
        think: Dist::constant(1.0),
        service: Dist::constant(1.0),
        timeout: Some(Dist::constant(0.5)),
        retries: Some(0),
        ..Model::default()
    };
    let models = [
        base.clone(),
        Model {
            on_abandon: OnAbandon::Cancel,
            ..base
        },
    ];
    let p = run_models(&models, &horizon(2, 3000.0, 74)).unwrap();
    let (finish, cancel) = (p[0].sim.unwrap(), p[1].sim.unwrap());
    let near = |what: &str, got: f64, want: f64| {
        assert!(
            (got - want).abs() <= 2e-3 * want.max(1e-9),
            "{what}: {got}, expected {want}"
        );
    };
    near("finish U", finish.utilisation.mean, 1.0 / 1.5);
    near("finish badput", finish.badput.mean, 1.0 / 1.5);
    assert_eq!(finish.cancel_rate.mean, 0.0);
    near("cancel U", cancel.utilisation.mean, 0.5 / 1.5);
    near("cancel rate", cancel.cancel_rate.mean, 1.0 / 1.5);
    assert_eq!(cancel.throughput.mean, 0.0);
    assert_eq!(cancel.goodput.n, 2);
}

#[test]
fn cancelling_avoids_the_badput_collapse() {
    // Past saturation with timeouts shorter than the queueing delay: with finish, the
    // cores serve requests nobody waits for and goodput collapses; with cancel, every
    // completion is goodput. Run on every placement and policy, so that a cancel finds
    // requests in the buffer, ready in a run queue, running, and being switched to.
    for (affinity, policy, k) in [
        (Affinity::Pinned, Policy::Fcfs, 1),
        (Affinity::Pinned, Policy::RoundRobin, 4),
        (Affinity::Shared, Policy::RoundRobin, 4),
    ] {
        let base = Model {
            users: 400,
            threads_per_core: k,
            affinity,
            policy,
            quantum: 0.05,
            context_switch: 0.002,
            buffer: 200,
            service: Dist::exp(0.2),
            think: Dist::exp(7.0),
            timeout: Some(Dist::exp(1.0).shifted(2.0)),
            retry_wait: Dist::exp(0.5),
            ..Model::default()
        };
        let models = [
            base.clone(),
            Model {
                on_abandon: OnAbandon::Cancel,
                ..base
            },
        ];
        let p = run_models(&models, &horizon(3, 500.0, 75)).unwrap();
        let (finish, cancel) = (p[0].sim.unwrap(), p[1].sim.unwrap());
        let what = format!("{affinity} {policy} k={k}");
        assert!(finish.badput.lo() > 1.0, "{what}: {:?}", finish.badput);
        assert_eq!(cancel.badput.mean, 0.0, "{what}");
        assert!(
            cancel.cancel_rate.lo() > 1.0,
            "{what}: {:?}",
            cancel.cancel_rate
        );
        assert_eq!(cancel.goodput.mean, cancel.throughput.mean, "{what}");
        assert!(
            cancel.goodput.lo() > finish.goodput.hi(),
            "{what}: cancel {:?} finish {:?}",
            cancel.goodput,
            finish.goodput
        );
    }
}
