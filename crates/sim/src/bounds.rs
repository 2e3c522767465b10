//! Asymptotic bounds of the closed system (Denning and Buzen's operational laws).
//!
//! With N users, mean service S on c cores and mean think Z:
//! `X(N) <= min(N/(S+Z), c/S)` and `R(N) >= max(S, N*S/c - Z)`, meeting at the
//! saturation point `N* = c(S+Z)/S`. They need means only, so they are printed for
//! every configuration. S is the mean demand of a request
//! ([`Model::mean_demand`]): with sessions, a connection's first request's extra
//! demand spread over the session's requests, so `session = 1` with an extra `d`
//! bounds X by `c/(S+d)`, and one connection for the whole run by `c/S`.
//!
//! Seed 002 wrote `M* = c + c*Z/S = 4 + 4*5*6 = 124` and saw saturation near 120-125
//! users. Its formula is this one (`c(S+Z)/S = c + c*Z/S`), but with Z = 6 s, whereas
//! its think time, uniform on 4..10 s, has mean 7 s: the correct knee is
//! `4 * (0.2 + 7) / 0.2 = 144`. The measured curve bends earlier than N* because near
//! the knee queueing already adds delay (the exact solution shows it), and the real
//! server had overheads the model leaves out.
//!
//! Scope: the X bound holds for goodput in every model, and for throughput unless
//! timeouts re-send requests while abandoned ones still run. The R bound holds with no
//! drops and no timeouts; a finite buffer caps R near `K*S/c`, and timeouts censor
//! slow requests out of the mean, so either can push R below `N*S/c - Z`.
//!
//! Held workers ([`crate::model::Connections::Held`]): a connection holds its worker
//! for its requests' service and, between two of them, for the idle time until the
//! next request or the keep-alive timeout, whichever comes first. Each request then
//! holds a worker for at least `S + g`, with `g = min(Z_min, T_ka) * (1 - 1/m)`:
//! `Z_min` the least think time, `T_ka` the keep-alive timeout, and `m` the most
//! requests a connection carries (the server's limit or the client's session),
//! since at most one request in `m` closes its connection. So
//! `X <= W / (S + g)` too (W workers), and `R >= N/X_max - Z`. Without timeouts
//! (a timed-out client closes its connection early). Where the model behaves as a
//! per-request one ([`crate::model::Model::per_request`]), its bounds are those.

use serde::Serialize;

use crate::model::Model;

/// The asymptotic bounds at one population.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Bounds {
    /// Upper bound on throughput, min(N/(S+Z), c/S), per second.
    pub throughput_max: f64,
    /// Lower bound on response time, max(S, N*S/c - Z), in seconds.
    pub response_time_min: f64,
    /// Saturation population N* = c(S+Z)/S.
    pub saturation_users: f64,
}

/// The bounds of a model (means of its distributions only).
pub fn bounds(m: &Model) -> Bounds {
    let Some(free) = m.per_request() else {
        return held_bounds(m);
    };
    let m = &free;
    let (s, z, c, n) = (
        m.mean_demand(),
        m.think.mean(),
        f64::from(m.cores),
        f64::from(m.users),
    );
    Bounds {
        throughput_max: (n / (s + z)).min(c / s),
        response_time_min: s.max(n * s / c - z),
        saturation_users: c * (s + z) / s,
    }
}

/// The bounds of a model whose connections hold workers across think times (see
/// the module doc).
fn held_bounds(m: &Model) -> Bounds {
    let h = m.connections.held().copied().unwrap_or_default();
    let (s, z, c, n, w) = (
        m.mean_demand(),
        m.think.mean(),
        f64::from(m.cores),
        f64::from(m.users),
        m.workers() as f64,
    );
    let most = match (h.max_requests, m.session) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let continuing = most.map_or(1.0, |k| 1.0 - 1.0 / f64::from(k.max(1)));
    let idle = m
        .think
        .min()
        .min(h.keepalive_timeout.unwrap_or(f64::INFINITY))
        * continuing;
    let throughput_max = (n / (s + z)).min(c / s).min(w / (s + idle));
    Bounds {
        throughput_max,
        response_time_min: s.max(n / throughput_max - z),
        saturation_users: c * (s + z) / s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_dist::Dist;

    #[test]
    fn seed_002_knee_is_144_not_124() {
        let m = Model {
            users: 144,
            ..Model::default()
        };
        let b = bounds(&m);
        assert!((b.saturation_users - 144.0).abs() < 1e-9);
        // Both bounds meet at N*.
        assert!((b.throughput_max - 20.0).abs() < 1e-9);
        assert!((b.response_time_min - 0.2).abs() < 1e-9);
        // The seed's own arithmetic used Z = 6 s.
        let six = Model {
            think: Dist::exp(6.0),
            ..m
        };
        assert!((bounds(&six).saturation_users - 124.0).abs() < 1e-9);
    }

    #[test]
    fn bounds_are_the_two_asymptotes() {
        let b = bounds(&Model {
            users: 10,
            ..Model::default()
        });
        assert!((b.throughput_max - 10.0 / 7.2).abs() < 1e-12);
        assert_eq!(b.response_time_min, 0.2);
        let b = bounds(&Model {
            users: 300,
            ..Model::default()
        });
        assert_eq!(b.throughput_max, 20.0);
        assert!((b.response_time_min - (300.0 * 0.2 / 4.0 - 7.0)).abs() < 1e-12);
    }

    /// Six workers held across think times of at least 4 s, kept alive 5 s, no limit:
    /// each request holds its worker S + 4 s at least, so X <= 6/4.2 whatever the
    /// cores; with a 1 s keep-alive, 6/1.2; with one request per connection the
    /// per-request bounds.
    #[test]
    fn held_workers_bound_throughput_by_their_holding_time() {
        use crate::model::{Connections, HeldWorkers};
        let held = |ka: f64, max: Option<u32>| Model {
            users: 50,
            cores: 2,
            threads_per_core: 3,
            connections: Connections::Held(HeldWorkers {
                keepalive_timeout: Some(ka),
                max_requests: max,
                backlog: 511,
            }),
            ..Model::default()
        };
        let b = bounds(&held(5.0, None));
        assert!((b.throughput_max - 6.0 / 4.2).abs() < 1e-12, "{b:?}");
        assert!((b.response_time_min - (50.0 / b.throughput_max - 7.0)).abs() < 1e-9);
        let b = bounds(&held(1.0, None));
        assert!((b.throughput_max - 6.0 / 1.2).abs() < 1e-12, "{b:?}");
        // Two requests per connection: every other request closes it.
        let b = bounds(&held(5.0, Some(2)));
        assert!((b.throughput_max - 6.0 / 2.2).abs() < 1e-12, "{b:?}");
        let one = bounds(&held(5.0, Some(1)));
        let free = bounds(
            &Model {
                buffer: 511,
                ..held(5.0, Some(1))
            }
            .per_request()
            .unwrap(),
        );
        assert_eq!(one, free);
        assert!(
            (one.throughput_max - 50.0 / 7.2).abs() < 1e-12,
            "N/(S+Z): {one:?}"
        );
    }
}
