//! The event trace (`--trace FILE`), as seed 002's `Trace.txt`: one line per event.
//!
//! The engine is generic over [`Tracer`], and the untraced runs use [`NoTrace`],
//! whose `ENABLED = false` lets the compiler delete every trace call from the hot
//! loop: tracing costs nothing unless asked for.
//!
//! Format: tab-separated, with a header line:
//! `time event user core thread buffer in_system cores_running`, where `-` marks a
//! field that does not apply (a drop has no core). Events: `send`, `retry`, `drop`
//! (a full buffer, silently), `reject` (a full buffer, answered at once), `buffer`
//! (waits for a thread), `ready` (has a thread, waits for its core), `run` (starts or
//! resumes on a core), `preempt`, `switch_end`, `done` (goodput), `badput` (an
//! abandoned request finished), `timeout`, `cancel` (an abandoned request stopped),
//! `give_up`, `warmup_end`; with held workers, `close` (the keep-alive timeout closed
//! an idle connection and freed its worker, in the `thread` field). With held workers
//! `buffer` is the listen backlog.

use std::io::{self, Write};

/// One line of the trace.
#[derive(Clone, Copy, Debug)]
pub struct TraceLine {
    /// Simulated time in seconds.
    pub time: f64,
    /// What happened.
    pub event: &'static str,
    /// The user concerned, if any.
    pub user: Option<u32>,
    /// The core concerned, if any.
    pub core: Option<u32>,
    /// The thread concerned, if any.
    pub thread: Option<u32>,
    /// Requests waiting in the shared buffer after the event.
    pub buffer: usize,
    /// Requests on the server (buffer and threads) after the event.
    pub in_system: usize,
    /// Cores running a thread after the event.
    pub cores_running: u32,
}

/// Receives every event of a traced replication.
pub trait Tracer {
    /// False for tracers that discard everything, so the engine skips building lines.
    const ENABLED: bool = true;
    /// Records one event.
    fn record(&mut self, line: &TraceLine) -> io::Result<()>;
}

/// The tracer of untraced runs: compiled out.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTrace;

impl Tracer for NoTrace {
    const ENABLED: bool = false;
    fn record(&mut self, _line: &TraceLine) -> io::Result<()> {
        Ok(())
    }
}

/// Writes the trace as tab-separated text.
#[derive(Debug)]
pub struct TextTrace<W: Write> {
    out: W,
    header_written: bool,
}

impl<W: Write> TextTrace<W> {
    /// A tracer writing to `out` (wrap files in a `BufWriter`).
    pub fn new(out: W) -> TextTrace<W> {
        TextTrace {
            out,
            header_written: false,
        }
    }

    /// Flushes and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn opt(v: Option<u32>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

impl<W: Write> Tracer for TextTrace<W> {
    fn record(&mut self, l: &TraceLine) -> io::Result<()> {
        if !self.header_written {
            writeln!(
                self.out,
                "time\tevent\tuser\tcore\tthread\tbuffer\tin_system\tcores_running"
            )?;
            self.header_written = true;
        }
        writeln!(
            self.out,
            "{:.6}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            l.time,
            l.event,
            opt(l.user),
            opt(l.core),
            opt(l.thread),
            l.buffer,
            l.in_system,
            l.cores_running
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_header_then_lines() {
        let mut t = TextTrace::new(Vec::new());
        let line = TraceLine {
            time: 1.5,
            event: "send",
            user: Some(3),
            core: None,
            thread: None,
            buffer: 0,
            in_system: 1,
            cores_running: 0,
        };
        t.record(&line).unwrap();
        let text = String::from_utf8(t.finish().unwrap()).unwrap();
        assert_eq!(
            text,
            "time\tevent\tuser\tcore\tthread\tbuffer\tin_system\tcores_running\n1.500000\tsend\t3\t-\t-\t0\t1\t0\n"
        );
    }
}
