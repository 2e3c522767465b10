//! Little's law over one run closes on the report's own terms (schema 5): every
//! second of every closed user is in a finished request (`latency`), a think
//! (`think.measured_total_s` and `think.uncounted_total_s`: each user's first,
//! a residual, and the thinks cut by the end) or a request unfinished at the
//! end (`unfinished_age`), so N·T equals their sum up to the loop's own turns
//! and the histograms' 3 significant digits. Under schema 4 the unfinished
//! ages were mixed into the latency's mean and the first and cut thinks were
//! in no field, so a reader had to guess them (the lab guessed half a think
//! per user, and every point with think time missed by −1% to −6%).
//!
//! No timing is asserted: the identity holds however slow the machine, since
//! a late loop lengthens a latency or a think, both counted.

use std::time::Duration;

use servelab_load::Report;

use crate::support::{Behavior, TinyServer, closed};

/// Users' seconds in the report's terms, and N·T.
pub fn accounted(r: &Report) -> (f64, f64, String) {
    let t = r.think.expect("a closed run with a think time reports it");
    let finished = r.counts.completed as f64 * r.latency.mean / 1e6;
    let unfinished = r.unfinished_age.count as f64 * r.unfinished_age.mean / 1e6;
    let sum = finished + t.measured_total_s + t.uncounted_total_s + unfinished;
    let n_t = f64::from(r.run.users.unwrap()) * r.duration_s;
    let terms = format!(
        "finished {finished:.4} s ({} x {:.1} us), thinks {:.4} s ({}), uncounted thinks {:.4} s \
         ({}), unfinished {unfinished:.4} s ({}), connect {:.4} s; N·T {n_t:.4} s",
        r.counts.completed,
        r.latency.mean,
        t.measured_total_s,
        t.count,
        t.uncounted_total_s,
        t.uncounted,
        r.unfinished_age.count,
        r.connect.mean * r.connect.count as f64 / 1e6
    );
    (sum, n_t, terms)
}

#[test]
fn littles_law_closes_on_the_reports_terms_with_unfinished_requests_and_cut_thinks() {
    // 8 users, a 30 ms answer on a thread each, exponential thinks of 20 ms:
    // about 160 requests a second, and at the end of 1.2 s some users wait for
    // an answer and the others are in a think.
    let server = TinyServer::start(Behavior::Delay(Duration::from_millis(30)));
    let mut spec = closed(&server.url(), 8, None, u64::MAX);
    spec.requests = None;
    spec.duration = Some(Duration::from_millis(1200));
    if let servelab_load::Workload::Closed { think, .. } = &mut spec.workload {
        *think = "exp:20ms".parse().unwrap();
    }
    let r = servelab_load::run(&spec).unwrap();
    let (sum, n_t, terms) = accounted(&r);
    eprintln!("{terms}");
    assert!(r.counts.completed > 50, "{:?}", r.counts);
    let t = r.think.unwrap();
    // Each user's first think is uncounted, and so is any think cut by the end.
    assert!(t.uncounted >= 8, "{t:?}");
    assert_eq!(
        r.unfinished_age.count,
        r.counts.in_flight + r.counts.never_sent
    );
    assert!(
        (sum / n_t - 1.0).abs() < 0.01,
        "the users' time is not all accounted for: {terms}"
    );
}
