//! Held workers in the model: when the probes found that connections hold
//! workers, the fitted model's c·k threads become the server's W workers,
//! each held by a connection from accept until it closes (the simulator's
//! `Connections::Held`), with the keep-alive timeout and the request limit
//! the probes measured.
//!
//! Why k = W/c: the simulator's held workers are its c·k threads, and the
//! CPU stays c cores, so W workers on c cores are k = W/c threads per core
//! sharing a core in turn (round robin) when k > 1; the threads-per-core fit
//! of the staircase is then overridden, and its note says so. A W that c does
//! not divide is rounded to the nearest multiple, and said.

use servelab_sim::{Connections, HeldWorkers, Policy};

use crate::architecture::{Architecture, KeepAlive, MaxRequests};
use crate::fit::Fit;

/// Makes `fit` hold workers as `arch` found them; the note says what was
/// set, `None` when connections do not hold workers.
pub(crate) fn apply(fit: &mut Fit, arch: &Architecture) -> Option<String> {
    let w = arch.held_workers()?;
    let c = fit.cores.max(1);
    let k = ((f64::from(w) / f64::from(c)).round() as u32).max(1);
    let keepalive_timeout = match arch.keepalive {
        KeepAlive::Closes { after_s } => Some(after_s),
        // Longer than the wait: longer than any think the validation uses.
        _ => None,
    };
    let max_requests = match arch.max_requests {
        Some(MaxRequests::Closes { after }) => u32::try_from(after).ok(),
        _ => None,
    };
    let was = fit.threads_per_core;
    fit.threads_per_core = k;
    fit.policy = if k == 1 {
        Policy::Fcfs
    } else {
        Policy::RoundRobin
    };
    fit.connections = Connections::Held(HeldWorkers {
        keepalive_timeout,
        max_requests,
        ..HeldWorkers::default()
    });
    let rounded = if c * k == w {
        String::new()
    } else {
        format!(
            " (W = {w} is not a multiple of c = {c}: the model has {})",
            c * k
        )
    };
    let note = format!(
        "held workers: the probes found W = {w} workers held by connections, so the model's \
         c·k threads are those workers, k = {k} per core{rounded}, each held from accept to \
         close (keep-alive timeout {}, {}; listen backlog {} assumed){}",
        keepalive_timeout.map_or("longer than the probe's wait: never".into(), |t| format!(
            "{t:.2} s"
        )),
        max_requests.map_or("no request limit seen".into(), |n| format!(
            "at most {n} requests per connection"
        )),
        HeldWorkers::default().backlog,
        if was == k {
            String::new()
        } else {
            format!("; the staircase's threads-per-core fit ({was}) is overridden")
        }
    );
    fit.notes.push(note.clone());
    Some(note)
}

/// A fit of one 5 ms core from two closed steps (1 user at 190/s, 2 at
/// 199/s): the fixture of the held model's and the forecast's tests.
#[cfg(test)]
pub(crate) fn one_core() -> Fit {
    use crate::staircase::{Repeat, closed_step};
    let step = |users: u32, x: f64, r_ms: f64| {
        let r = Repeat {
            completed_per_s: x,
            goodput: x,
            mean_ms: Some(r_ms),
            stdev_ms: Some(r_ms),
            p50_ms: Some(r_ms),
            p99_ms: Some(r_ms * 4.6),
            cpu_ms: Some(5.0),
            ..Default::default()
        };
        closed_step(users, vec![r; 3])
    };
    crate::fit::fit(&[step(1, 190.0, 5.2), step(2, 199.0, 10.0)], true).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::architecture::Workers;
    use crate::staircase::Load;
    use servelab_dist::Dist;

    fn arch(workers: Workers, keepalive: KeepAlive, max: Option<MaxRequests>) -> Architecture {
        Architecture {
            workers,
            keepalive,
            max_requests: max,
            answer_ms: Some(5.0),
            answer_wait_ms: 250.0,
            how: vec![],
            probe_s: 3.0,
        }
    }

    #[test]
    fn four_held_workers_on_one_core_are_four_threads_held_by_connections() {
        let mut f = one_core();
        assert_eq!(f.cores, 1);
        let a = arch(
            Workers::Held { workers: 4 },
            KeepAlive::Closes { after_s: 2.0 },
            Some(MaxRequests::Closes { after: 100 }),
        );
        let note = apply(&mut f, &a).expect("held");
        assert!(note.contains("W = 4") && note.contains("k = 4"), "{note}");
        assert_eq!(f.threads_per_core, 4);
        assert_eq!(f.policy, Policy::RoundRobin);
        let h = *f.connections.held().expect("held connections");
        assert_eq!(h.keepalive_timeout, Some(2.0));
        assert_eq!(h.max_requests, Some(100));
        let load = Load {
            users: 8,
            rate: None,
            think: Dist::exp(0.02),
            timeout: None,
            retries: None,
        };
        assert_eq!(f.model(&load).connections, f.connections);
        let cmd = f.sim_command("8", &load);
        assert!(
            cmd.contains("--threads-per-core 4 ")
                && cmd.contains(
                    "--hold-workers --keepalive-timeout 2000ms --max-requests-per-conn 100"
                ),
            "{cmd}"
        );
    }

    #[test]
    fn free_connections_leave_the_fit_alone_and_a_long_keepalive_never_closes() {
        let mut f = one_core();
        let before = f.clone();
        let free = arch(
            Workers::NotHeld { held: 256 },
            KeepAlive::Closes { after_s: 5.0 },
            None,
        );
        assert_eq!(apply(&mut f, &free), None);
        assert_eq!(f, before);
        let long = arch(
            Workers::Held { workers: 6 },
            KeepAlive::LongerThan { wait_s: 30.0 },
            Some(MaxRequests::AtLeast { answered: 400 }),
        );
        apply(&mut f, &long).expect("held");
        let h = *f.connections.held().unwrap();
        assert_eq!((h.keepalive_timeout, h.max_requests), (None, None));
        let load = Load {
            users: 8,
            rate: None,
            think: Dist::ZERO,
            timeout: None,
            retries: None,
        };
        assert!(
            f.sim_command("8", &load)
                .contains("--hold-workers --keepalive-timeout none"),
            "{}",
            f.sim_command("8", &load)
        );
        // Six workers on one core: six threads.
        assert_eq!(f.threads_per_core, 6);
    }
}
