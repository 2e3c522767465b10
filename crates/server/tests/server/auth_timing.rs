//! `--auth` with bcrypt costs that differ between users: a wrong password
//! takes as long for an unknown user as for each known one, whichever user
//! the file lists first. Measured over the wire, since the time is what
//! tells an attacker which names exist.
//!
//! A timing assertion, allowed here because the effect is large and the
//! bound loose: cost 9 is 2^5 = 32 times the work of cost 4, and the bound
//! only asks that no user's median be more than 4 times another's.

use std::time::{Duration, Instant};

use base64::Engine as _;
use servelab_server::Engine;

use crate::support::*;

/// The cheap and the dear cost: 32 times apart.
const LOW: u32 = 4;
const HIGH: u32 = 9;
/// No median may exceed another by this factor (the bug gave about 30).
const BOUND: f64 = 4.0;
/// Requests per user; the median of them is compared.
const TRIES: usize = 5;

/// The median time of a wrong password for `user`, each try on a fresh connection.
fn wrong_password_time(addr: std::net::SocketAddr, user: &str) -> Duration {
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:wrong"));
    let req = format!(
        "GET / HTTP/1.1\r\nHost: t\r\nAuthorization: Basic {token}\r\nConnection: close\r\n\r\n"
    );
    let mut times: Vec<Duration> = (0..TRIES)
        .map(|_| {
            let t = Instant::now();
            let r = get(addr, &req);
            let took = t.elapsed();
            assert_eq!(r.status, 401, "{user}");
            took
        })
        .collect();
    times.sort();
    times[TRIES / 2]
}

/// Regression: the unknown user's dummy hash took the cost of the file's
/// first user, so alice (cost 4) and unknown users answered in ~1 ms and carl
/// (cost 9) in ~30 ms, or the other way round with carl on line 1.
#[test]
fn a_wrong_password_costs_the_same_for_known_and_unknown_users() {
    let alice = format!("alice:{}", bcrypt::hash("alice's", LOW).unwrap());
    let carl = format!("carl:{}", bcrypt::hash("carl's", HIGH).unwrap());
    for text in [format!("{alice}\n{carl}\n"), format!("{carl}\n{alice}\n")] {
        let dir = fixture();
        let users = dir.path().join(".users");
        std::fs::write(&users, &text).unwrap();
        let server = start(dir.path(), Engine::default(), |c| {
            c.auth = Some(users.clone());
        });
        let addr = server.local_addr();
        let times: Vec<(&str, Duration)> = ["alice", "carl", "nobody"]
            .into_iter()
            .map(|u| (u, wrong_password_time(addr, u)))
            .collect();
        eprintln!("wrong-password medians: {times:?}");
        let fastest = times.iter().map(|t| t.1).min().unwrap();
        let slowest = times.iter().map(|t| t.1).max().unwrap();
        assert!(
            slowest.as_secs_f64() < BOUND * fastest.as_secs_f64(),
            "the time of a wrong password tells users apart: {times:?} with\n{text}"
        );
        server.shutdown().unwrap();
    }
}
