//! Think times keep their word (issue 27): the mean think the users took,
//! measured from the end of an answer to the start of the next request, is
//! the mean they drew, at 1, 20 and 200 users against `servelab serve`.
//!
//! The loop wakes for a think with a timerfd, to the nanosecond: on a quiet
//! machine the measured mean lands within a few microseconds of the drawn one
//! (the figures are in the closing note). The bound here is 200 us, ten
//! times the target, plus what the machine itself adds to a sleep during the
//! run: a probe thread sleeps 10 ms again and again beside the run, and its mean
//! oversleep is the allowance. On a shared machine whose cores are all busy a
//! plain 10 ms sleep overslept by 431 us on average (median 108 us), which no
//! client can undo; the whole-millisecond `epoll_wait` of old added about
//! 500 us to every think on top of that, which the bound still catches.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use servelab_load::{Dist, LoadSpec, Target, Workload};
use servelab_server::{Config, Server};

/// Largest mean overshoot of the measured think over the drawn one, us.
const BOUND_US: f64 = 200.0;

fn mean_think_at(users: u32, think: &str, requests: u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1k.txt"), vec![b'x'; 1024]).unwrap();
    let running = Server::bind(Config::new(dir.path())).unwrap().spawn();
    let mut spec = LoadSpec::new(vec![Target::new(format!(
        "http://{}/1k.txt",
        running.local_addr()
    ))]);
    let think: Dist = think.parse().unwrap();
    spec.workload = Workload::Closed {
        users,
        session: None,
        think,
    };
    spec.requests = Some(requests);
    spec.threads = 1;
    spec.duration = Some(Duration::from_secs(60)); // safety net only
    let stop = Arc::new(AtomicBool::new(false));
    let probe = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || oversleep_us(&stop))
    };
    let r = servelab_load::run(&spec).unwrap();
    stop.store(true, Ordering::Relaxed);
    let noise = probe.join().unwrap();
    let _ = running.shutdown();
    assert_eq!(r.counts.ok, requests);
    let t = r.think.expect("a closed run with a think time reports it");
    // Every request but each user's first follows a measured think.
    assert_eq!(t.count, requests - u64::from(users), "{t:?}");
    // A constant think: every draw is the asked mean.
    assert!((t.drawn_mean_us - t.asked_mean_us).abs() < 1e-3, "{t:?}");
    let over = t.measured_mean_us - t.asked_mean_us;
    eprintln!(
        "{users} users, think {think}: asked {:.1} us, measured {:.1} us ({over:+.1} us); \
         a 10 ms sleep overslept {noise:.1} us meanwhile",
        t.asked_mean_us, t.measured_mean_us
    );
    // Never short: the timer does not fire early.
    assert!(over >= 0.0, "{t:?}");
    assert!(
        over < BOUND_US + noise,
        "{users} users: {over:.1} us over (a sleep overslept {noise:.1} us): {t:?}"
    );
}

/// Sleeps 10 ms at a time until `stop`; returns the mean oversleep, us.
fn oversleep_us(stop: &AtomicBool) -> f64 {
    let (mut n, mut total) = (0u32, Duration::ZERO);
    while !stop.load(Ordering::Relaxed) {
        let t = Instant::now();
        std::thread::sleep(Duration::from_millis(10));
        total += t.elapsed().saturating_sub(Duration::from_millis(10));
        n += 1;
    }
    total.as_secs_f64() * 1e6 / f64::from(n.max(1))
}

#[test]
fn one_user_thinks_what_it_drew() {
    mean_think_at(1, "const:10ms", 150);
}

#[test]
fn twenty_users_think_what_they_drew() {
    mean_think_at(20, "const:10ms", 1_500);
}

#[test]
fn two_hundred_users_think_what_they_drew() {
    // 1,000 requests/s: a debug build's loop and the in-process server must
    // not be what delays the thinks.
    mean_think_at(200, "const:200ms", 2_400);
}
