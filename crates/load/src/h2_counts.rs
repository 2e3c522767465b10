//! HTTP/2's own counts: streams apart from connections (`--h2`).
//!
//! A request is counted once in [`Counts`](crate::Counts) whatever the
//! protocol; these say what happened to the streams that carried them, so a
//! reader can tell a refused stream (sent again, no error) from a reset one
//! (an error of class `reset`), and see the server's GOAWAYs and its
//! concurrency limit.

use serde::{Deserialize, Serialize};

/// What the streams of an HTTP/2 run did. All counts add over threads and
/// segments; `server_max_streams` takes the lowest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct H2Counts {
    /// Streams opened (HEADERS sent): one per attempt that reached a connection.
    pub streams_opened: u64,
    /// Streams that ended with a whole response (ok or not).
    pub streams_completed: u64,
    /// Streams the server reset with RST_STREAM (not REFUSED_STREAM): the
    /// request failed with class `reset`.
    pub streams_reset: u64,
    /// Streams the server refused (RST_STREAM REFUSED_STREAM, or above the
    /// last stream of its GOAWAY): not processed, so sent again once (an
    /// attempt, no error); a second refusal is an error of class `reset`.
    pub streams_refused: u64,
    /// Streams the client reset with CANCEL because the attempt timed out.
    pub streams_cancelled: u64,
    /// GOAWAY frames received.
    pub goaways: u64,
    /// Requests that waited at their connection for a stream: the server's
    /// SETTINGS_MAX_CONCURRENT_STREAMS was below `--streams`, or the
    /// connection was still being made or was draining after a GOAWAY. Their
    /// latency includes the wait.
    pub waited_for_stream: u64,
    /// The lowest SETTINGS_MAX_CONCURRENT_STREAMS a server announced (`null`:
    /// none announced a limit).
    pub server_max_streams: Option<u32>,
}

impl H2Counts {
    pub(crate) fn add(&mut self, o: &H2Counts) {
        self.streams_opened += o.streams_opened;
        self.streams_completed += o.streams_completed;
        self.streams_reset += o.streams_reset;
        self.streams_refused += o.streams_refused;
        self.streams_cancelled += o.streams_cancelled;
        self.goaways += o.goaways;
        self.waited_for_stream += o.waited_for_stream;
        self.server_max_streams = match (self.server_max_streams, o.server_max_streams) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_and_the_limit_takes_the_lowest() {
        let mut a = H2Counts {
            streams_opened: 3,
            server_max_streams: Some(100),
            ..H2Counts::default()
        };
        let b = H2Counts {
            streams_opened: 2,
            goaways: 1,
            server_max_streams: Some(4),
            ..H2Counts::default()
        };
        a.add(&b);
        assert_eq!((a.streams_opened, a.goaways), (5, 1));
        assert_eq!(a.server_max_streams, Some(4));
        a.add(&H2Counts::default());
        assert_eq!(a.server_max_streams, Some(4));
    }
}
