//! Validity checks on every measured point: laws a correct measurement must
//! obey, and the conditions under which a figure means what its label says.
//! A point that fails one is flagged in the report's tables and figures, and
//! kept: dropping it would hide the problem the check found.
//!
//! - Little's law for closed users over the repeats pooled: N·T is every
//!   second of every user, in finished requests and their connects (X·(R + C),
//!   C outside R), in measured thinks ((thinks/s)·Z) or at the windows' ends
//!   (unfinished requests' ages, first and cut thinks), within
//!   [`LITTLE_TOLERANCE`]; the check prints the terms, which give its figure.
//!   A miss means the users were not all busy (a load generator that falls
//!   behind) or a latency or think not measured as it ran.
//! - The client is not the bottleneck: its threads' CPU over the window.
//! - Errors, and requests unfinished when the window ended beyond what
//!   Little's law expects in flight (X·(R + C), at most N closed users).
//! - The window is the protocol's (a `--quick` point is shorter, and says so).
//! - The machine was quiet: processes other than the server and the lab took
//!   at most [`OTHERS_SHARE`] of one CPU in each window
//!   ([`crate::process::others`]).
//! - Server CPU per request is what it claims to be (`cpu_per_request`): it
//!   agrees with the utilisation law over the repeats (U/X, the ratio of the
//!   means, inside the interval of the per-repeat figure), it is not below the
//!   CPU the server was told to burn (`--work`), and it is spread over answers
//!   that are the requests served, not over refusals.

use crate::protocol::{FULL_WINDOW, Window};

/// Largest relative miss of Little's law that passes.
pub const LITTLE_TOLERANCE: f64 = 0.05;
/// Share of the window the load generator's threads may spend on CPU before
/// the client, not the server, may be what limits the rate.
pub const CLIENT_BUSY: f64 = 0.90;
/// Share of one CPU, over a window, that other processes may use before the
/// window is not the server's alone. On an idle machine the figure read 0–1%
/// (`lab run connections --quick`); beside one busy loop, 16–30%; a compiler
/// or a copy of a build directory takes tens of percent.
pub const OTHERS_SHARE: f64 = 0.10;

// The check's record is part of what a run stores (`results` holds it), so it
// lives with the protocol; this module computes checks.
pub use crate::protocol::{Check, CheckKind};

/// The users' time in a window (or windows pooled), user-seconds by where it
/// went: Little's law for closed users says it adds up to N·T.
///
/// Each term is its own measurement: the finished requests' count and mean
/// response time (X and R), the connects (C, outside R for a user that opens a
/// connection per request: 8 users, `--session 1`, X·R gave 7.15 users and
/// X·(R + C) 8.29), the thinks measured as Z, and what lies at the window's
/// ends: the requests unfinished there (their ages) and the thinks that are no
/// draw of Z (each user's first, a residual, and those cut by the end). Each
/// window starts its users afresh, so those ends are no rounding error: at 1
/// worker and 32 users without think (`handlers`), 32 requests 0.7 s old on
/// average are 2.2 of the 32 users.
///
/// A run stored before `servelab-lab/4` has no ages and no first or cut
/// thinks: its R holds the unfinished requests' ages, and its first and cut
/// thinks are estimated as half a mean think per user thinking at the end,
/// the estimate that made 48 of the 49 points with think time of the
/// reference runs miss by −0.2% to −5.6%: exponential first and cut thinks
/// average a whole mean each, and the first was not counted at all.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct UserTime {
    window_s: f64,
    completed: u64,
    /// Finished requests' response times, added.
    requests_s: f64,
    connect_s: f64,
    thinks: f64,
    /// Measured thinks, added.
    think_s: f64,
    /// First and cut thinks, added.
    think_uncounted_s: f64,
    unfinished: u64,
    /// Ages of the unfinished requests, added.
    unfinished_s: f64,
    /// A run stored before the ages were kept apart.
    estimated: bool,
}

impl UserTime {
    fn of(w: &Window) -> Option<UserTime> {
        if w.window_s <= 0.0 || w.scheduled == 0 {
            return None;
        }
        let mut t = UserTime {
            window_s: w.window_s,
            completed: w.completed,
            connect_s: w.connect_total_s,
            unfinished: w.unfinished,
            ..UserTime::default()
        };
        match w.unfinished_age_s {
            Some(ages) => {
                t.requests_s = w.completed as f64 * w.mean_response_s;
                t.unfinished_s = ages;
                t.thinks = w.thinks.unwrap_or(0) as f64;
                t.think_s = t.thinks * w.think_s;
                t.think_uncounted_s = w.think_uncounted_s.unwrap_or(0.0);
            }
            None => {
                // The old mean over every started request: its total is
                // the finished and unfinished requests' time together.
                t.requests_s = w.scheduled as f64 * w.mean_response_s;
                let thinking_at_end =
                    f64::from(w.users).min(w.completed as f64) - w.unfinished as f64;
                t.thinks = w.completed as f64 - 0.5 * thinking_at_end.max(0.0);
                t.think_s = t.thinks * w.think_s;
                t.estimated = true;
            }
        }
        Some(t)
    }

    fn add(&mut self, o: &UserTime) {
        self.window_s += o.window_s;
        self.completed += o.completed;
        self.requests_s += o.requests_s;
        self.connect_s += o.connect_s;
        self.thinks += o.thinks;
        self.think_s += o.think_s;
        self.think_uncounted_s += o.think_uncounted_s;
        self.unfinished += o.unfinished;
        self.unfinished_s += o.unfinished_s;
        self.estimated |= o.estimated;
    }

    /// Users busy in finished requests and their connects: X·(R + C).
    fn in_requests(&self) -> f64 {
        (self.requests_s + self.connect_s) / self.window_s
    }

    /// Users thinking measured thinks: (thinks per second)·Z.
    fn thinking(&self) -> f64 {
        self.think_s / self.window_s
    }

    /// Users at the window's ends: unfinished requests and first and cut thinks.
    fn at_ends(&self) -> f64 {
        (self.unfinished_s + self.think_uncounted_s) / self.window_s
    }

    /// The users Little's law gives.
    fn users(&self) -> f64 {
        self.in_requests() + self.thinking() + self.at_ends()
    }
}

/// Mean connect time per finished request, seconds (C in X·(R + C + Z)).
fn connect_per_request(w: &Window) -> f64 {
    w.connect_total_s / w.completed.max(1) as f64
}

/// What Little's law expects in flight at the end of a window, and the
/// variance of that count: X·(R + C) requests, at most one per closed user
/// (with open arrivals, no cap and a Poisson variance).
/// Each user is busy (waiting or connecting) a share p = (R + C)/(R + C + Z)
/// of its time, so the count at one instant is binomial(N, p).
fn expected_in_flight(w: &Window) -> (f64, f64) {
    if w.window_s <= 0.0 {
        return (0.0, 0.0);
    }
    let busy = w.mean_response_s + connect_per_request(w);
    let x = w.completed as f64 / w.window_s;
    if w.users == 0 {
        // Open arrivals (`predict`'s open steps): λ·R in flight, no user
        // count to cap it, and a Poisson count's variance. Capping at the
        // zero users flagged every open step that ended with one in flight.
        let mean = x * busy;
        return (mean, mean);
    }
    let n = f64::from(w.users);
    let mean = (x * busy).min(n);
    let p = if n > 0.0 { mean / n } else { 0.0 };
    (mean, n * p * (1.0 - p))
}

/// The unfinished check: requests in flight when the windows ended against
/// what Little's law expects there (a saturated closed loop always has about
/// N in flight, which is no fault), plus 5% and three standard deviations of
/// the count; more than that means requests stuck or a client that fell behind.
fn unfinished_check(windows: &[Window]) -> Check {
    let unfinished: u64 = windows.iter().map(|w| w.unfinished).sum();
    let (mut expected, mut var) = (0.0, 0.0);
    for w in windows {
        let (m, v) = expected_in_flight(w);
        expected += m;
        var += v;
    }
    let allowed = expected * (1.0 + LITTLE_TOLERANCE) + 3.0 * var.sqrt() + 1.0;
    let passed = unfinished as f64 <= allowed;
    Check {
        kind: CheckKind::Unfinished,
        passed,
        detail: format!(
            "{unfinished} requests unfinished at the ends of {} windows; Little's law expects \
             {expected:.1} in flight (X·(R+C), at most N per window), allowed up to {allowed:.1}{} \
             (their latency counts to the end of the window)",
            windows.len(),
            if passed {
                ""
            } else {
                ": requests stuck, or a client that fell behind"
            }
        ),
    }
}

/// Little's law over the repeats pooled, N = X·(R + C) + (thinks/s)·Z + the
/// window's ends (see [`UserTime`]), with the worst repeat named. It prints
/// the pooled terms, which give its figure. Every term is measured, and N is
/// the users the load was told to run, so a client that falls behind (time
/// in none of the terms), a latency not measured from the intended start or
/// a think not measured as taken makes it miss. A run stored before
/// `servelab-lab/4` used the asked mean think: its check allows the sampling
/// error of random thinks (two standard errors for a CV of 1) on top.
fn littles_law(windows: &[Window]) -> Option<Check> {
    let times: Vec<(usize, UserTime)> = windows
        .iter()
        .enumerate()
        .filter_map(|(i, w)| UserTime::of(w).map(|t| (i, t)))
        .collect();
    let users = f64::from(windows.first()?.users);
    if users <= 0.0 {
        return None;
    }
    let mut pooled = UserTime::default();
    for (_, t) in &times {
        pooled.add(t);
    }
    let (worst_i, worst_miss) = times
        .iter()
        .map(|(i, t)| (*i, t.users() / users - 1.0))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))?;
    let n = pooled.users();
    let miss = n / users - 1.0;
    let per = |total: f64, count: f64| if count > 0.0 { total / count } else { 0.0 };
    let completed = pooled.completed as f64;
    let (x, r, c) = (
        completed / pooled.window_s,
        per(pooled.requests_s, completed),
        per(pooled.connect_s, completed),
    );
    let z = per(pooled.think_s, pooled.thinks);
    let sampling = if pooled.estimated && z > 0.0 {
        2.0 * (z / (r + z)) / completed.max(1.0).sqrt()
    } else {
        0.0
    };
    let allowed = LITTLE_TOLERANCE + sampling;
    let passed = miss.abs() <= allowed;
    // A user that opens a connection for nearly every request spends the
    // connect and close outside R: the check then measures that time.
    let conns: u64 = windows.iter().map(|w| w.connections).sum();
    let why = if !passed && miss < 0.0 && conns * 2 >= pooled.completed {
        "; about one connection per request: the client's own close and turn between \
         requests are in none of R, C and Z"
    } else if !passed && miss < 0.0 {
        "; the users' time is not all accounted for: a client that fell behind, or a \
         latency not measured from the intended start"
    } else {
        ""
    };
    let ends = if pooled.estimated {
        " (a run stored before servelab-lab/4: R holds the unfinished requests' ages, and the \
         first and cut thinks are estimated at half a mean think per user thinking at the end)"
            .to_string()
    } else {
        format!(
            " ({} requests unfinished, {:.2} ms old on average; {:.3} s in first and cut thinks)",
            pooled.unfinished,
            per(pooled.unfinished_s, pooled.unfinished as f64) * 1e3,
            pooled.think_uncounted_s
        )
    };
    Some(Check {
        kind: CheckKind::LittlesLaw,
        passed,
        detail: format!(
            "N = {users} users; Little's law gives {n:.2} ({:+.1}%, allowed ±{:.1}%) over {} \
             repeats ({:.1} s), {:+.1}% in the worst ({}): X·(R+C) = {x:.2}/s × ({:.3} + {:.3}) \
             ms = {:.2} in finished requests and their connects (C outside R), + {:.2}/s × Z = \
             {:.2} ms = {:.2} thinking, + {:.2} at the windows' ends{ends}{why}",
            miss * 100.0,
            allowed * 100.0,
            times.len(),
            pooled.window_s,
            worst_miss * 100.0,
            worst_i + 1,
            r * 1e3,
            c * 1e3,
            pooled.in_requests(),
            pooled.thinks / pooled.window_s,
            z * 1e3,
            pooled.thinking(),
            pooled.at_ends(),
        ),
    })
}

/// The checks of a point from its repeats' windows; `quick` says the run was
/// `--quick` (its windows are short on purpose).
pub fn of_point(windows: &[Window], quick: bool) -> Vec<Check> {
    if windows.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(c) = littles_law(windows) {
        out.push(c);
    }
    let busy = windows
        .iter()
        .map(|w| w.client_cpu_s / (w.window_s * f64::from(w.client_threads.max(1))))
        .fold(0.0, f64::max);
    let conns: u64 = windows.iter().map(|w| w.connections).max().unwrap_or(0);
    out.push(Check {
        kind: CheckKind::Client,
        passed: busy <= CLIENT_BUSY,
        detail: format!(
            "load generator on CPU {:.0}% of the window ({} thread{}), {conns} connections opened{}",
            busy * 100.0,
            windows[0].client_threads,
            if windows[0].client_threads == 1 { "" } else { "s" },
            if busy > CLIENT_BUSY {
                ": the client may be what limits the rate"
            } else {
                ""
            }
        ),
    });
    if let Some(c) = quiet_machine(windows) {
        out.push(c);
    }
    let failed: u64 = windows.iter().map(|w| w.failed).sum();
    let completed: u64 = windows.iter().map(|w| w.completed).sum();
    let timeouts: u64 = windows.iter().map(|w| w.timeouts).sum();
    out.push(Check {
        kind: CheckKind::Errors,
        passed: failed == 0,
        detail: format!(
            "{failed} of {completed} finished requests failed; {timeouts} attempts timed out"
        ),
    });
    out.push(unfinished_check(windows));
    let shortest = windows
        .iter()
        .map(|w| w.window_s)
        .fold(f64::INFINITY, f64::min);
    let full = FULL_WINDOW.as_secs_f64();
    out.push(Check {
        kind: CheckKind::Window,
        // The load generator's clock stops a hair before the nominal window.
        passed: shortest >= full * 0.99,
        detail: if quick {
            format!("--quick: windows of {shortest:.2} s, below the protocol's {full:.0} s")
        } else {
            format!("shortest window {shortest:.2} s (the protocol asks for {full:.0} s)")
        },
    });
    out
}

/// Whether other processes left the windows to the server and the lab: the
/// largest share of one CPU they took in a window, against [`OTHERS_SHARE`].
/// `None` when a window did not measure it (an older file).
fn quiet_machine(windows: &[Window]) -> Option<Check> {
    let mut worst = (0.0_f64, 0_usize);
    for (i, w) in windows.iter().enumerate() {
        let share = w.others_cpu_s? / w.window_s;
        if share >= worst.0 {
            worst = (share, i + 1);
        }
    }
    let (share, repeat) = worst;
    Some(Check {
        kind: CheckKind::Machine,
        passed: share <= OTHERS_SHARE,
        detail: format!(
            "other processes used {:.0}% of a CPU in the busiest window (repeat {repeat}; \
             allowed {:.0}%){}",
            share * 100.0,
            OTHERS_SHARE * 100.0,
            if share > OTHERS_SHARE {
                ": the server or the client lost CPU to them"
            } else {
                ""
            }
        ),
    })
}

/// Share of the answers that must be 2xx for CPU per request to be the CPU
/// of a request served: below it the figure is mostly the cost of refusals
/// (overload-cpu's finish policy divided its CPU by 503s).
const SERVED_SHARE: f64 = 0.95;
/// How far under the `--work` burn's mean CPU per request may fall before it
/// is implausible: the burn is measured by the thread's own CPU clock, so only
/// the clock's granularity and the draws' spread take it below.
const WORK_FLOOR_SHARE: f64 = 0.95;

/// The CPU-per-request check of a measured point: `work_mean_us` is the mean
/// CPU the server burns per request by `--work`, when it was given one.
/// `None` when the point measured no CPU per request.
///
/// Three ways the figure can be wrong, each said with its terms:
/// - the mean of the repeats' CPU per request against U/X, the mean CPU share
///   over the mean rate of finished requests: a repeat that finished few
///   requests weighs as much as the others in the first, and the two then part
///   (overload-cpu, finish at 45 users: 57,564 ± 24,407 µs against U/X 21.0 ms);
/// - under the burn the server was told to do: the CPU was not all measured;
/// - over answers that are mostly not 2xx.
pub(crate) fn cpu_per_request(
    p: &crate::store::results::PointRecord,
    work_mean_us: Option<f64>,
) -> Option<Check> {
    use crate::metric::Metric;
    let d = p.summary.get(&Metric::CpuUs)?;
    let mut problems = Vec::new();
    let mut terms = Vec::new();
    // U and X as the report gives them: the mean CPU share, and the mean
    // throughput (the server's own count where it has one, which includes
    // requests finished for clients that left), else finished requests per
    // second of window.
    let share = p.summary.get(&Metric::CpuPct).map(|u| u.mean / 100.0);
    let rate = p
        .summary
        .get(&Metric::Throughput)
        .map(|x| x.mean)
        .or_else(|| {
            let (sum, n) = p
                .windows
                .iter()
                .filter(|w| w.window_s > 0.0)
                .fold((0.0, 0usize), |(s, n), w| {
                    (s + w.completed as f64 / w.window_s, n + 1)
                });
            (n > 0).then(|| sum / n as f64)
        });
    if let (Some(share), Some(rate)) = (share, rate.filter(|r| *r > 0.0)) {
        let ux_us = share / rate * 1e6;
        let lo = d.ci95_lo.min(d.mean);
        let hi = d.ci95_hi.max(d.mean);
        // A relative slack of 1% for the rounding of shares and rates.
        let agrees = ux_us >= lo * 0.99 && ux_us <= hi * 1.01;
        terms.push(format!(
            "{} µs per request (mean of {} repeats, 95% interval {}..{}) against U/X = {:.1}% / {:.1}/s = {} µs",
            crate::metric::fmt(d.mean),
            d.n,
            crate::metric::fmt(lo),
            crate::metric::fmt(hi),
            share * 100.0,
            rate,
            crate::metric::fmt(ux_us)
        ));
        if !agrees {
            problems.push(
                "the repeats disagree with the utilisation law (a repeat that finished few requests \
                 weighs as much as the others): quote U/X"
                    .to_string(),
            );
        }
    }
    if let Some(work) = work_mean_us.filter(|w| *w > 0.0) {
        terms.push(format!(
            "--work burns {} µs on average",
            crate::metric::fmt(work)
        ));
        if d.mean < work * WORK_FLOOR_SHARE {
            problems.push(format!(
                "below the CPU the server was told to burn ({:.1}% of it): not all of the server's CPU was measured",
                d.mean / work * 100.0
            ));
        }
    }
    let ok: u64 = p.windows.iter().map(|w| w.ok).sum();
    let completed: u64 = p.windows.iter().map(|w| w.completed).sum();
    if completed > 0 {
        let served = ok as f64 / completed as f64;
        terms.push(format!("{ok} of {completed} answers 2xx"));
        if served < SERVED_SHARE {
            problems.push(format!(
                "{:.1}% of the answers were not 2xx: the figure is spread over refusals, not requests served",
                (1.0 - served) * 100.0
            ));
        }
    }
    Some(Check {
        kind: CheckKind::Cpu,
        passed: problems.is_empty(),
        detail: if problems.is_empty() {
            terms.join("; ")
        } else {
            format!("{}: {}", terms.join("; "), problems.join("; "))
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(users: u32, completed: u64, r_ms: f64, z_ms: f64) -> Window {
        Window {
            window_s: 10.0,
            users,
            think_s: z_ms / 1e3,
            scheduled: completed + u64::from(users.min(1)),
            completed,
            ok: completed,
            failed: 0,
            timeouts: 0,
            unfinished: u64::from(users.min(1)),
            connections: u64::from(users),
            connect_total_s: 0.0,
            mean_response_s: r_ms / 1e3,
            unfinished_age_s: Some(0.0),
            thinks: (z_ms > 0.0).then_some(completed),
            think_uncounted_s: (z_ms > 0.0).then_some(0.0),
            client_cpu_s: 1.0,
            client_threads: 1,
            others_cpu_s: None,
            series: vec![],
        }
    }

    /// A point of `repeats` (CPU µs per request, CPU share %, completed, ok)
    /// over 10 s windows, its throughput `ok / 10 s` unless `x` says otherwise.
    fn cpu_point(
        repeats: &[(f64, f64, u64, u64)],
        x: Option<f64>,
    ) -> crate::store::results::PointRecord {
        use crate::metric::Metric;
        let mut p = crate::store::results::tests::empty_point();
        for &(us, pct, completed, ok) in repeats {
            p.repeats.push(crate::store::results::Figures::from([
                (Metric::CpuUs, us),
                (Metric::CpuPct, pct),
                (Metric::Throughput, x.unwrap_or(ok as f64 / 10.0)),
            ]));
            let mut w = window(8, completed, 1.0, 0.0);
            w.ok = ok;
            p.windows.push(w);
        }
        p.summarise();
        p
    }

    #[test]
    fn cpu_per_request_is_checked_against_u_over_x_its_floor_and_refusals() {
        // 2 ms per request at 400/s is 80% of a CPU, in all three repeats.
        let good = cpu_point(&[(2000.0, 80.0, 4000, 4000); 3], None);
        let c = cpu_per_request(&good, Some(1900.0)).unwrap();
        assert!(c.passed, "{c:?}");
        assert!(
            c.detail.contains("U/X = 80.0% / 400.0/s = 2000 µs"),
            "{}",
            c.detail
        );

        // overload-cpu's finish at 45 users: the server finished 47.6/s, most
        // for clients that had left, and CPU per client-completed request read
        // 57 ms against U/X = 21 ms.
        let skewed = cpu_point(
            &[
                (55_000.0, 100.0, 182, 182),
                (57_000.0, 100.0, 175, 175),
                (59_000.0, 100.0, 169, 169),
            ],
            Some(47.6),
        );
        let c = cpu_per_request(&skewed, None).unwrap();
        assert!(!c.passed && c.detail.contains("utilisation law"), "{c:?}");

        // A 20 ms burn measured at 18.3 ms.
        let short = cpu_point(&[(18_300.0, 91.5, 500, 500); 3], None);
        let c = cpu_per_request(&short, Some(20_000.0)).unwrap();
        assert!(!c.passed && c.detail.contains("told to burn"), "{c:?}");

        // CPU divided by 503s.
        let refused = cpu_point(&[(500.0, 50.0, 10_000, 2_000); 3], Some(1000.0));
        let c = cpu_per_request(&refused, None).unwrap();
        assert!(
            !c.passed && c.detail.contains("80.0% of the answers were not 2xx"),
            "{c:?}"
        );

        // No CPU figure, no check.
        assert!(cpu_per_request(&crate::store::results::tests::empty_point(), None).is_none());
    }

    /// A window as a run stored before servelab-lab/4 has it: no ages, no
    /// first or cut thinks, the asked think.
    fn legacy(mut w: Window) -> Window {
        w.unfinished_age_s = None;
        w.thinks = None;
        w.think_uncounted_s = None;
        w
    }

    /// The figure and the three terms a Little's law check prints.
    fn little_terms(detail: &str) -> (f64, [f64; 3]) {
        let num = |after: &str, before: &str| -> f64 {
            let i = detail
                .find(before)
                .unwrap_or_else(|| panic!("{before}: {detail}"));
            let head = &detail[..i];
            let j = head
                .rfind(after)
                .unwrap_or_else(|| panic!("{after}: {detail}"))
                + after.len();
            head[j..]
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("{e}: {detail}"))
        };
        (
            num("gives", " ("),
            [
                num("ms =", " in finished requests"),
                num("ms =", " thinking"),
                num("+", " at the windows' ends"),
            ],
        )
    }

    /// Regression (issue 31): `handlers`, 1 worker, 32 users, no think,
    /// printed "X = 24.8/s, R = 1142.72 ms ... gives 32.00 (−0.0%)" where
    /// 24.8 × 1.1427 = 28.3: its R was the mean over every started request,
    /// the 32 unfinished ones counted to the window's end, and its N the
    /// started requests' time, which adds up to N·T whatever the server did.
    /// Now the terms are the finished requests' X and R and the unfinished
    /// requests' ages, printed so that they give the figure, and a point whose
    /// terms do not add up fails.
    #[test]
    fn littles_law_prints_terms_that_give_its_figure_and_fails_on_inconsistent_ones() {
        // 248 finished at R = 1,200 ms (the first 32 of a fresh window wait
        // less), 32 unfinished 700 ms old on average: 297.6 + 22.4 = 320
        // user-seconds in 10 s.
        let mut w = window(32, 248, 1200.0, 0.0);
        w.unfinished = 32;
        w.scheduled = 280;
        w.unfinished_age_s = Some(32.0 * 0.7);
        let c = of_point(&[w.clone(), w.clone(), w.clone()], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(l.passed, "{l:?}");
        assert!(
            l.detail
                .contains("X·(R+C) = 24.80/s × (1200.000 + 0.000) ms = 29.76"),
            "{l:?}"
        );
        assert!(l.detail.contains("+ 2.24 at the windows' ends"), "{l:?}");
        assert!(
            l.detail.contains("96 requests unfinished, 700.00 ms old"),
            "{l:?}"
        );
        let (n, terms) = little_terms(&l.detail);
        assert!((terms.iter().sum::<f64>() - n).abs() < 0.015, "{l:?}");

        // The same point's terms as issue 31 read them, with the ages left
        // out: X·R = 24.8 × 1.14272 = 28.3 of 32 users, -11.4%. It fails.
        w.mean_response_s = 1.142_72;
        w.unfinished_age_s = Some(0.0);
        let c = of_point(&[w], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(!l.passed, "{l:?}");
        assert!(l.detail.contains("gives 28.34 (-11.4%"), "{l:?}");
        assert!(l.detail.contains("not all accounted for"), "{l:?}");
        let (n, terms) = little_terms(&l.detail);
        assert!((terms.iter().sum::<f64>() - n).abs() < 0.015, "{l:?}");
    }

    /// Regression (issue 31): the points with think time in the reference
    /// runs missed Little's law the same way (48 of 49 by −0.2% to −5.6%).
    /// The first think of each user (a residual) was in no term, and a think
    /// cut by the end counted half a mean think, where an exponential one
    /// averages a whole one. With load's measured first and cut thinks the
    /// users' time adds up; left out, they fail the check as they should.
    #[test]
    fn littles_law_counts_the_first_and_cut_thinks() {
        // 60 users, R = 10 ms, Z = 990 ms, 10 s: 600 cycles a window would be
        // 60 users exactly; a fresh window finishes 540 requests after each
        // user's first think (mean 990 ms, 59.4 s) and 540 - 60 + 1 measured
        // thinks before the end, 59 thinks cut (on average 990 ms in, 58.4 s)
        // and 1 request unfinished (5 ms old).
        let mut w = window(60, 540, 10.0, 990.0);
        w.unfinished = 1;
        w.scheduled = 541;
        w.unfinished_age_s = Some(0.005);
        w.thinks = Some(481);
        let rest = 600.0 - 5.4 - 481.0 * 0.99 - 0.005;
        w.think_uncounted_s = Some(rest);
        let c = of_point(&[w.clone()], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(l.passed && l.detail.contains("gives 60.00 (+0.0%"), "{l:?}");
        // Without the first and cut thinks: the users' time falls short by a
        // fifth, and the check says so.
        w.think_uncounted_s = Some(0.0);
        let c = of_point(&[w], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(!l.passed, "{l:?}");
    }

    fn kind(checks: &[Check], k: CheckKind) -> &Check {
        checks.iter().find(|c| c.kind == k).unwrap()
    }

    #[test]
    fn littles_law_passes_a_consistent_point_and_flags_a_busy_client() {
        // 32 users, R = 10 ms, Z = 0: X = 3200/s, 32000 in 10 s.
        let ok = of_point(&[window(32, 32_000, 10.0, 0.0)], false);
        assert!(kind(&ok, CheckKind::LittlesLaw).passed, "{ok:?}");
        assert!(kind(&ok, CheckKind::Window).passed);
        // The handlers bug of issue 15: 32 users, R = 790 ms, but X·R says 20
        // (the users were not all waiting: the client fell behind).
        let bad = of_point(&[window(32, 253, 790.0, 0.0)], false);
        let c = kind(&bad, CheckKind::LittlesLaw);
        assert!(!c.passed && c.detail.contains("N = 32"), "{c:?}");
        // Regression: 1 user thinking exp 100 ms drew 80 thinks a window, whose
        // mean is off by 11% by chance; a repeat 15% short passed nowhere. Pooled
        // over 5 repeats with the sampling allowance, it passes. (A run stored
        // before servelab-lab/4, checked with the asked mean think.)
        let mut one: Vec<Window> = (0..5).map(|_| legacy(window(1, 80, 21.0, 100.0))).collect();
        one[2].completed = 68;
        one[2].scheduled = 69;
        let c = of_point(&one, false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(l.passed, "{l:?}");
        assert!(l.detail.contains("in the worst (3)"), "{l:?}");
        // With think time: 6 users, R = 20 ms, Z = 40 ms -> X = 100/s.
        let think = of_point(&[window(6, 1000, 20.0, 40.0)], false);
        assert!(kind(&think, CheckKind::LittlesLaw).passed, "{think:?}");
    }

    #[test]
    fn a_window_shared_with_another_process_is_flagged_and_an_unmeasured_one_is_not_judged() {
        let quiet = |others: Option<f64>| {
            let mut w = window(10, 100_000, 1.0, 0.0);
            w.others_cpu_s = others;
            w
        };
        let c = of_point(&[quiet(Some(0.1)), quiet(Some(0.5))], false);
        let m = kind(&c, CheckKind::Machine);
        assert!(m.passed, "{m:?}");
        assert!(
            m.detail.contains("5% of a CPU") && m.detail.contains("repeat 2"),
            "{m:?}"
        );
        let c = of_point(
            &[quiet(Some(0.1)), quiet(Some(2.5)), quiet(Some(0.0))],
            false,
        );
        let m = kind(&c, CheckKind::Machine);
        assert!(!m.passed, "{m:?}");
        assert!(
            m.detail.contains("25% of a CPU") && m.detail.contains("repeat 2"),
            "{m:?}"
        );
        let c = of_point(&[quiet(Some(0.1)), quiet(None)], false);
        assert!(c.iter().all(|c| c.kind != CheckKind::Machine), "{c:?}");
    }

    #[test]
    fn a_busy_client_errors_unfinished_and_quick_windows_are_flagged() {
        let mut w = window(8, 10_000, 8.0, 0.0);
        w.client_cpu_s = 9.7;
        w.failed = 3;
        w.unfinished = 500;
        let c = of_point(&[w.clone()], true);
        assert!(!kind(&c, CheckKind::Client).passed);
        assert!(
            kind(&c, CheckKind::Client)
                .detail
                .contains("may be what limits")
        );
        assert!(!kind(&c, CheckKind::Errors).passed);
        assert!(!kind(&c, CheckKind::Unfinished).passed);
        w.window_s = 0.25;
        let c = of_point(&[w], true);
        let win = kind(&c, CheckKind::Window);
        assert!(!win.passed && win.detail.starts_with("--quick"), "{win:?}");
        assert!(of_point(&[], false).is_empty());
    }

    #[test]
    fn open_arrivals_expect_lambda_r_in_flight_with_no_user_cap() {
        // 70/s for 2 s with R = 10 ms: 0.7 in flight per window, 3.5 over 5.
        let mut w = window(0, 140, 10.0, 0.0);
        w.window_s = 2.0;
        w.unfinished = 1;
        let (m, v) = expected_in_flight(&w);
        assert!((m - 0.7).abs() < 0.05 && (v - m).abs() < 1e-12, "{m} {v}");
        let mut five = vec![w; 5];
        five[0].unfinished = 3;
        let u = unfinished_check(&five);
        assert!(u.passed, "{u:?}");
    }

    /// Regression: a saturated closed loop has about N requests in flight when
    /// any window ends, and the unfinished check flagged every such point (63
    /// users with R = 1 s finish 630 a window and leave 63 unfinished: 10%).
    #[test]
    fn unfinished_requests_are_checked_against_littles_law_in_flight() {
        let saturated = |unfinished| {
            let mut w = window(63, 630, 1000.0, 0.0);
            w.unfinished = unfinished;
            w.scheduled = 630 + unfinished;
            vec![w.clone(), w.clone(), w]
        };
        let c = of_point(&saturated(63), false);
        let u = kind(&c, CheckKind::Unfinished);
        assert!(u.passed, "{u:?}");
        assert!(u.detail.contains("expects 189.0 in flight"), "{u:?}");
        // More in flight than users could hold: stuck requests, flagged.
        let c = of_point(&saturated(100), false);
        let u = kind(&c, CheckKind::Unfinished);
        assert!(!u.passed && u.detail.contains("stuck"), "{u:?}");
        // Users mostly thinking: 60 users, R = 10 ms, Z = 990 ms give X = 60/s
        // and 0.6 in flight; 2 is chance, 12 is not.
        let thinking = |unfinished| {
            let mut w = window(60, 600, 10.0, 990.0);
            w.unfinished = unfinished;
            of_point(&[w], false)
        };
        assert!(kind(&thinking(2), CheckKind::Unfinished).passed);
        assert!(!kind(&thinking(12), CheckKind::Unfinished).passed);
    }

    /// Regression: connection-per-request points with no think time missed
    /// Little's law by 13-24% because the connect is outside R. Figures from a
    /// run of 8 users with `--session 1` (X = 17,575/s, R = 0.407 ms, connect
    /// 0.0645 ms per request): X·R gives 7.15, X·(R + C) 8.29.
    #[test]
    fn littles_law_counts_the_connect_time_of_a_connection_per_request() {
        let mut w = window(8, 175_750, 0.407, 0.0);
        w.connections = 175_750;
        w.connect_total_s = 0.0645e-3 * 175_750.0;
        let c = of_point(&[w.clone()], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(l.passed, "{l:?}");
        assert!(
            l.detail
                .contains("× (0.407 + 0.065) ms = 8.29 in finished requests and their connects"),
            "{l:?}"
        );
        // Without the connect time the same point misses by 11%, and the
        // message says what is missing.
        w.connect_total_s = 0.0;
        let c = of_point(&[w], false);
        let l = kind(&c, CheckKind::LittlesLaw);
        assert!(
            !l.passed && l.detail.contains("one connection per request"),
            "{l:?}"
        );
    }
}
