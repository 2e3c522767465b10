//! Delays that are not CPU: a response time at one user far above the
//! server's CPU per request says that a request waits for something, and
//! what the gap looks like names the likely cause.
//!
//! Why it matters: the fit adds the gap to every response time as a constant
//! delay outside the server. That is right for a network's round trip; it is
//! wrong for a wait that changes with the load. The common one has a
//! signature: about 40 ms per response (Linux's smallest delayed ACK,
//! `TCP_DELACK_MIN`), from Nagle's algorithm holding a server's second small
//! write until the client's delayed ACK of the first. Other traffic carries
//! the ACKs sooner as the load grows, so the wait shrinks, and a constant
//! predicts R 43% too high at moderate load (issue 27). A sleep or an
//! upstream (a database, another service) is a wait whose own queue the
//! model does not have either. Below the knee, where that wait is most of the
//! response time, the prediction is then not to be trusted, and the report
//! says so first.

use serde::Serialize;

/// A gap at least this share of the response time at one user, and at
/// least [`MIN_GAP_S`], is "far above" the CPU: half the time is spent
/// elsewhere (the threshold the fit already used to warn).
const GAP_SHARE: f64 = 0.5;
/// Smaller gaps are a loopback round trip and the client's own work.
const MIN_GAP_S: f64 = 0.002;
/// The band of the delayed-ACK signature: 40 ms, give or take the demand's
/// own spread and a scheduler's tick.
const DELAYED_ACK_S: std::ops::RangeInclusive<f64> = 0.030..=0.050;

/// What a request likely waits for besides the server's CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayCause {
    /// About 40 ms per response: Nagle's algorithm and the client's delayed
    /// ACK, a server that writes a response in two small writes.
    DelayedAck,
    /// Another wait: a sleep, an upstream (a database, a service), or a CPU
    /// that other work holds.
    Wait,
}

/// A response time at one user far above the CPU per request.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NonCpuDelay {
    /// The likely cause.
    pub cause: DelayCause,
    /// Response time at one user minus the CPU per request, seconds.
    pub gap_s: f64,
    /// The CPU per request, seconds.
    pub cpu_s: f64,
    /// The response time at one user, seconds.
    pub response_s: f64,
}

impl NonCpuDelay {
    /// The gap between `response_s` at one user and `cpu_s` per request,
    /// when it is far above the CPU.
    pub(crate) fn of(cpu_s: f64, response_s: f64) -> Option<NonCpuDelay> {
        let gap_s = response_s - cpu_s;
        if !(gap_s >= MIN_GAP_S && gap_s >= GAP_SHARE * response_s) {
            return None;
        }
        let cause = if DELAYED_ACK_S.contains(&gap_s) {
            DelayCause::DelayedAck
        } else {
            DelayCause::Wait
        };
        Some(NonCpuDelay {
            cause,
            gap_s,
            cpu_s,
            response_s,
        })
    }

    /// The likely cause in words.
    pub fn cause_in_words(&self) -> &'static str {
        match self.cause {
            DelayCause::DelayedAck => {
                "the ~40 ms signature of Nagle's algorithm and the client's delayed ACK (a \
                 response written in two small writes; TCP_NODELAY on the server removes it), \
                 or on a busy machine a CPU that other work holds"
            }
            DelayCause::Wait => {
                "a wait that is not the server's CPU: a sleep, an upstream (a database, another \
                 service), or a CPU that other work holds"
            }
        }
    }

    /// What a reader must know before the figures.
    pub fn warning(&self, knee_users: f64) -> String {
        format!(
            "the response time at one user ({:.2} ms) is far above the CPU per request ({:.2} \
             ms): {:.2} ms are spent waiting, likely {}. The model adds that gap to every \
             response time as a constant, which such a wait is not (the delayed-ACK wait \
             shrinks as other traffic carries the ACKs; a sleep's or an upstream's has its own \
             queue): the prediction below N* = {knee_users:.1} users is not to be trusted.",
            self.response_s * 1e3,
            self.cpu_s * 1e3,
            self.gap_s * 1e3,
            self.cause_in_words()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forty_millisecond_gap_is_named_delayed_ack_and_others_a_wait() {
        let nagle = NonCpuDelay::of(0.0005, 0.0408).expect("a gap of 40.3 ms");
        assert_eq!(nagle.cause, DelayCause::DelayedAck);
        assert!((nagle.gap_s - 0.0403).abs() < 1e-12);
        assert!(nagle.warning(3.0).contains("not to be trusted"));
        assert!(nagle.warning(3.0).contains("delayed ACK"));
        // 100 ms of sleep beside 5 ms of CPU.
        let sleep = NonCpuDelay::of(0.005, 0.105).expect("a gap of 100 ms");
        assert_eq!(sleep.cause, DelayCause::Wait);
        assert!(sleep.warning(2.0).contains("upstream"));
        // A CPU-bound server: 5 ms of CPU in 5.6 ms.
        assert_eq!(NonCpuDelay::of(0.005, 0.0056), None);
        // A tiny request: 20 µs of CPU in 150 µs is a loopback round trip.
        assert_eq!(NonCpuDelay::of(0.000_02, 0.000_15), None);
    }
}
