//! Per-window counts of what hostile peers repeat: the floods of CVE-2019-9512..9518 and
//! rapid reset (CVE-2023-44487). Each count past its limit is GOAWAY ENHANCE_YOUR_CALM.
//!
//! Counting rather than timing keeps the connection free of clocks: the driver ends a window
//! with [`crate::ServerConn::tick`].

use crate::error::{ErrorCode, H2Error};
use crate::limits::Limits;

/// What is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Abuse {
    /// RST_STREAM from the peer on a stream still open.
    PeerReset,
    /// A stream we reset.
    LocalReset,
    /// A SETTINGS frame (not an ACK).
    Settings,
    /// A PING frame (not an ACK).
    Ping,
    /// A frame that carries nothing and ends nothing.
    Empty,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Guard {
    peer_resets: u32,
    local_resets: u32,
    settings: u32,
    pings: u32,
    empty: u32,
}

impl Guard {
    /// Counts one `what`; past its limit, the connection error to end with.
    pub(crate) fn count(&mut self, what: Abuse, limits: &Limits) -> Result<(), H2Error> {
        let (n, max, reason) = match what {
            Abuse::PeerReset => (
                &mut self.peer_resets,
                limits.max_peer_resets,
                "too many stream resets (rapid reset)",
            ),
            Abuse::LocalReset => (
                &mut self.local_resets,
                limits.max_local_resets,
                "too many stream errors",
            ),
            Abuse::Settings => (&mut self.settings, limits.max_settings, "SETTINGS flood"),
            Abuse::Ping => (&mut self.pings, limits.max_pings, "PING flood"),
            Abuse::Empty => (
                &mut self.empty,
                limits.max_empty_frames,
                "empty frame flood",
            ),
        };
        *n = n.saturating_add(1);
        if *n > max {
            Err(H2Error::conn(ErrorCode::EnhanceYourCalm, reason))
        } else {
            Ok(())
        }
    }

    /// A new window: every count starts again.
    pub(crate) fn tick(&mut self) {
        *self = Guard::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_inclusive_and_a_tick_resets_it() {
        let limits = Limits {
            max_pings: 2,
            ..Limits::default()
        };
        let mut g = Guard::default();
        assert!(g.count(Abuse::Ping, &limits).is_ok());
        assert!(g.count(Abuse::Ping, &limits).is_ok());
        assert_eq!(
            g.count(Abuse::Ping, &limits).unwrap_err().code(),
            ErrorCode::EnhanceYourCalm
        );
        g.tick();
        assert!(g.count(Abuse::Ping, &limits).is_ok());
        assert!(g.count(Abuse::Settings, &limits).is_ok());
    }
}
