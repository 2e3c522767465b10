//! Timeouts, retries and badput (seed 002's first curiosity experiment).

use servelab_sim::{Dist, Length, Model, RunSpec, Warmup, run_models};

use crate::{seed_offset, spec};

fn model(users: u32, min_timeout: f64) -> Model {
    Model {
        users,
        service: Dist::exp(0.25),
        think: Dist::uniform(4.0, 10.0),
        timeout: Some(Dist::exp(5.0).shifted(min_timeout)),
        ..Model::default()
    }
}

#[test]
fn shorter_timeouts_raise_badput_past_saturation() {
    // c = 4, S = 0.25 s: capacity 16/s, N* = 116. At 300 users R is about
    // 300/16 - 7 = 11.75 s: beyond a 5 s + exp 5 s timeout, well within 50 s + exp 5 s.
    let models = [model(300, 50.0), model(300, 5.0), model(50, 5.0)];
    let p = run_models(&models, &spec(6, 4000, 31)).unwrap();
    let (long, short, light) = (p[0].sim.unwrap(), p[1].sim.unwrap(), p[2].sim.unwrap());
    assert_eq!(long.badput.mean, 0.0, "{long:?}");
    assert!(short.badput.lo() > 1.0, "{:?}", short.badput);
    assert!(short.timeout_rate.lo() > 1.0);
    assert!(
        short.goodput.hi() < long.goodput.lo(),
        "badput displaces goodput"
    );
    // Throughput is still the server's capacity: the waste is inside it.
    assert!(
        (short.throughput.mean - 16.0).abs() < 0.5,
        "{:?}",
        short.throughput
    );
    // Before saturation nobody times out.
    assert_eq!(light.timeout_rate.mean, 0.0);
}

#[test]
fn dropped_requests_are_retried_after_the_timeout() {
    // A buffer of 5 in front of 4 threads with 200 users: many drops; each drop turns
    // into a timeout (no answer ever comes) and a retry. A long fixed window, so that
    // drops near its end whose timeouts fall outside it barely count.
    let m = Model {
        buffer: 5,
        ..model(200, 5.0)
    };
    let run = RunSpec {
        reps: 4,
        length: Length::Horizon(2000.0),
        warmup: Warmup::Fixed(100.0),
        seed: 32 + seed_offset(),
    };
    let s = servelab_sim::run_point(&m, &run).unwrap().sim.unwrap();
    assert!(s.drop_rate.mean > 1.0, "{:?}", s.drop_rate);
    assert!(
        s.timeout_rate.mean >= s.drop_rate.mean * 0.98,
        "every drop times out: {s:?}"
    );
    assert!(s.mean_in_system.mean <= 9.0);
}
