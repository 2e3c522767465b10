//! Finding the server's architecture from outside, before the staircase:
//! whether a kept-alive connection holds a worker, how many workers W there
//! are, the keep-alive timeout, and the most requests a connection may carry.
//!
//! Why: a server whose workers (threads or processes) are held by
//! connections, not requests (Apache's default `KeepAlive On`, servelab's
//! `pool` and `prefork`, gunicorn's gthread, Tomcat's bounded pool), makes a
//! user past the W-th wait for a connection to close, not for a CPU; a model
//! of requests queueing for CPUs predicts it badly past N = W, and a
//! staircase that never exceeds W cannot see the limit (issue 27).
//!
//! How, with idle connections as cheap probes:
//! 1. **Kept alive?** One connection sends requests back to back until the
//!    server closes it, at most [`MAX_REQUESTS_PROBE`] or a time bound: that
//!    is the most requests per connection, or a lower bound. A server that
//!    closes after the first answer keeps no connection, and a connection
//!    holds a worker for one request only.
//! 2. **Held workers.** Connections are opened one at a time, each sends one
//!    request and, once answered, stays open and idle (a connection-per-worker
//!    server has given it a worker by then). The first fresh connection whose
//!    request is not answered within a deadline (an HTTP answer: a listen
//!    backlog accepts a TCP connection the server has not taken) while k
//!    idle ones are open says that k connections hold all the workers: W = k,
//!    confirmed when a held connection closing (the server's keep-alive
//!    timeout, or the probe itself closing one) lets the fresh one through.
//!    Every fresh connection answered up to [`MAX_HELD`] (or the time bound)
//!    says that idle connections do not hold workers. A refusal (503, a
//!    reset) is the server's connection limit, and the scan stops there.
//! 3. **Keep-alive timeout.** The time from a held connection's last answer
//!    to the server closing it, watched up to [`KEEPALIVE_WAIT`] (or half the
//!    calibration budget); past that the answer is "longer than".

mod wire;

use std::time::{Duration, Instant};

use serde::Serialize;

use servelab_lab::Result;
use wire::{Answer, Conn, Target};

/// Most idle connections held: past every default worker count of the
/// servers seen (Apache prefork 150 is the largest a test here would meet
/// after a 256 bound halves), and few enough file descriptors for any client.
pub const MAX_HELD: u32 = 256;
/// Longest wait for a server to close an idle connection.
pub const KEEPALIVE_WAIT: Duration = Duration::from_secs(30);
/// Most requests sent on one connection to find the server's maximum.
pub const MAX_REQUESTS_PROBE: u64 = 1000;
/// Longest time of the held-connection scan: a small part of a calibration.
const SCAN_TIME: Duration = Duration::from_secs(10);
/// Longest time of the requests-per-connection probe (it loads the server
/// at one user, which the staircase measures anyway).
const REQUESTS_TIME: Duration = Duration::from_secs(2);
/// A fresh connection's deadline in answer times at one user, within
/// [`MIN_ANSWER_WAIT`]..=[`MAX_ANSWER_WAIT`]: a free worker answers in about
/// one answer time; twenty leave room for a busy machine.
const ANSWER_WAIT_FACTOR: u32 = 20;
const MIN_ANSWER_WAIT: Duration = Duration::from_millis(250);
const MAX_ANSWER_WAIT: Duration = Duration::from_secs(2);
/// How often the wait for a closed connection looks at the sockets.
const POLL: Duration = Duration::from_millis(5);
/// Time bound of a connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Whether connections hold workers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workers {
    /// A kept-alive connection holds a worker until it closes: `workers` of
    /// them are all there are. A server that stops accepting at a limit of
    /// connections (Apache's event MPM: ThreadsPerChild × (1 +
    /// AsyncRequestWorkerFactor)) is found the same way, with W its limit: a
    /// user past it waits for a connection to close just the same.
    Held {
        /// W.
        workers: u32,
    },
    /// `held` idle kept-alive connections were open and a fresh one was still
    /// answered: idle connections do not hold workers (or W > `held`).
    NotHeld {
        /// Idle connections held during the last answered request.
        held: u32,
    },
    /// The server closes every connection after its answer: a connection
    /// holds a worker for one request only.
    NotKeptAlive,
    /// The probes could not tell.
    Unknown {
        /// Why.
        why: String,
    },
}

/// The server's keep-alive timeout, as seen from an idle connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KeepAlive {
    /// The server closed an idle connection this long after its last answer.
    Closes {
        /// Seconds (to the probe's 5-20 ms poll and the server's own timer resolution).
        after_s: f64,
    },
    /// Not closed within the wait.
    LongerThan {
        /// The wait, seconds.
        wait_s: f64,
    },
    /// Connections are not kept alive.
    NotKeptAlive,
    /// Not measured.
    Unknown {
        /// Why.
        why: String,
    },
}

/// The most requests the server answers on one connection.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MaxRequests {
    /// The server closed the connection after this many answers.
    Closes {
        /// Answers on the connection.
        after: u64,
    },
    /// This many were answered and the connection stayed open (the probe's
    /// bound of requests or time).
    AtLeast {
        /// Answers on the connection.
        answered: u64,
    },
}

/// What the probes found, and how.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Architecture {
    /// Whether connections hold workers, and W.
    pub workers: Workers,
    /// The keep-alive timeout.
    pub keepalive: KeepAlive,
    /// The most requests per connection.
    pub max_requests: Option<MaxRequests>,
    /// The answer time of a request on a kept connection at one user, ms
    /// (the mean of the requests-per-connection probe).
    pub answer_ms: Option<f64>,
    /// The deadline a fresh connection was given, ms.
    pub answer_wait_ms: f64,
    /// How each finding was found: probe, connections, timings.
    pub how: Vec<String>,
    /// Time the probes took, seconds.
    pub probe_s: f64,
}

impl Architecture {
    /// W when connections hold workers.
    pub fn held_workers(&self) -> Option<u32> {
        match self.workers {
            Workers::Held { workers } => Some(workers),
            _ => None,
        }
    }

    /// The finding in one line.
    pub fn summary(&self) -> String {
        let w = match &self.workers {
            Workers::Held { workers } => {
                format!("connections hold workers: W = {workers}")
            }
            Workers::NotHeld { held } => format!(
                "connections do not hold workers: no limit up to {held} idle connections (a \
                 fresh one was still answered)"
            ),
            Workers::NotKeptAlive => {
                "connections are not kept alive (a worker is held for one request)".into()
            }
            Workers::Unknown { why } => {
                format!("whether connections hold workers: unknown ({why})")
            }
        };
        let k = match &self.keepalive {
            KeepAlive::Closes { after_s } => format!("keep-alive timeout {after_s:.2} s"),
            KeepAlive::LongerThan { wait_s } => {
                format!("keep-alive timeout longer than {wait_s:.0} s")
            }
            KeepAlive::NotKeptAlive => "no keep-alive".into(),
            KeepAlive::Unknown { why } => format!("keep-alive timeout unknown ({why})"),
        };
        let m = match &self.max_requests {
            Some(MaxRequests::Closes { after }) => {
                format!("; at most {after} requests per connection")
            }
            Some(MaxRequests::AtLeast { answered }) => {
                format!("; at least {answered} requests per connection")
            }
            None => String::new(),
        };
        format!("{w}; {k}{m}")
    }
}

/// Runs the probes against `url` within about `bound` (the keep-alive wait
/// takes at most half of it, the two scans [`SCAN_TIME`] each at most a
/// quarter); `step` hears one line per probe.
pub(crate) fn find(
    url: &str,
    port: u16,
    bound: Duration,
    step: &dyn Fn(String),
) -> Result<Architecture> {
    let target = Target::of(url, port)?;
    let start = Instant::now();
    let scan_time = SCAN_TIME.min(bound / 4);
    let keepalive_wait = KEEPALIVE_WAIT.min(bound / 2);
    let mut how = Vec::new();

    // 1. Kept alive, and the most requests per connection.
    let (max_requests, answer) = requests_per_connection(&target, REQUESTS_TIME.min(bound / 8));
    let answer_wait = answer
        .map_or(MAX_ANSWER_WAIT, |a| a * ANSWER_WAIT_FACTOR)
        .clamp(MIN_ANSWER_WAIT, MAX_ANSWER_WAIT);
    let mut arch = Architecture {
        workers: Workers::Unknown {
            why: "not probed".into(),
        },
        keepalive: KeepAlive::Unknown {
            why: "not probed".into(),
        },
        max_requests: None,
        answer_ms: answer.map(|a| a.as_secs_f64() * 1e3),
        answer_wait_ms: answer_wait.as_secs_f64() * 1e3,
        how: Vec::new(),
        probe_s: 0.0,
    };
    let scan_it = matches!(max_requests, RequestsFound::Found(_));
    match max_requests {
        RequestsFound::NotKept => {
            how.push(
                "requests per connection: the server closed the connection after its first \
                 answer: no keep-alive, so no connection holds a worker while idle"
                    .into(),
            );
            arch.workers = Workers::NotKeptAlive;
            arch.keepalive = KeepAlive::NotKeptAlive;
        }
        RequestsFound::Failed(why) => {
            how.push(format!("requests per connection: {why}"));
            arch.workers = Workers::Unknown { why: why.clone() };
            arch.keepalive = KeepAlive::Unknown { why };
        }
        RequestsFound::Found(m) => {
            how.push(match m {
                MaxRequests::Closes { after } => format!(
                    "requests per connection: the server closed one connection after {after} \
                     back-to-back requests"
                ),
                MaxRequests::AtLeast { answered } => format!(
                    "requests per connection: {answered} back-to-back requests answered on one \
                     connection, still open (bound {MAX_REQUESTS_PROBE} requests or {:.1} s)",
                    REQUESTS_TIME.min(bound / 8).as_secs_f64()
                ),
            });
            arch.max_requests = Some(m);
        }
    }
    step(format!("probes: {}", how.last().map_or("", String::as_str)));
    if !scan_it {
        arch.how = how;
        arch.probe_s = start.elapsed().as_secs_f64();
        return Ok(arch);
    }

    // 2. and 3. Held workers, and the keep-alive timeout.
    let scan = held_scan(&target, answer_wait, scan_time, keepalive_wait);
    how.extend(scan.how);
    arch.workers = scan.workers;
    arch.keepalive = scan.keepalive;
    arch.how = how;
    arch.probe_s = start.elapsed().as_secs_f64();
    step(format!(
        "probes: {} ({:.1} s)",
        arch.summary(),
        arch.probe_s
    ));
    Ok(arch)
}

/// What the requests-per-connection probe found.
enum RequestsFound {
    Found(MaxRequests),
    NotKept,
    Failed(String),
}

/// Sends requests back to back on one connection until the server closes
/// it, [`MAX_REQUESTS_PROBE`] are answered or `time` passes; also the mean
/// answer time.
fn requests_per_connection(target: &Target, time: Duration) -> (RequestsFound, Option<Duration>) {
    let mut conn = match target.connect(CONNECT_TIMEOUT) {
        Ok(c) => c,
        Err(e) => return (RequestsFound::Failed(format!("cannot connect: {e}")), None),
    };
    let end = Instant::now() + time;
    // The mean answer time, not the fastest: with a variable demand the
    // fastest of a hundred answers is a small fraction of a typical one.
    let mut total = Duration::ZERO;
    let mean = |total: Duration, n: u64| (n > 0).then(|| total / n.max(1) as u32);
    let mut answered = 0u64;
    while answered < MAX_REQUESTS_PROBE && Instant::now() < end {
        match conn.request(MAX_ANSWER_WAIT.max(time)) {
            Answer::Kept { latency } => {
                answered += 1;
                total += latency;
            }
            Answer::Closing { latency } => {
                answered += 1;
                total += latency;
                if answered == 1 {
                    return (RequestsFound::NotKept, mean(total, answered));
                }
                return (
                    RequestsFound::Found(MaxRequests::Closes { after: answered }),
                    mean(total, answered),
                );
            }
            Answer::Gone if answered > 0 => {
                // Closed between answers: also a maximum.
                return (
                    RequestsFound::Found(MaxRequests::Closes { after: answered }),
                    mean(total, answered),
                );
            }
            Answer::Gone => {
                return (
                    RequestsFound::Failed(
                        "the first request was not answered: the connection closed".into(),
                    ),
                    None,
                );
            }
            Answer::Refused { status } => {
                return (
                    RequestsFound::Failed(format!("a request was answered with {status}")),
                    mean(total, answered),
                );
            }
            Answer::Waiting => {
                return (
                    RequestsFound::Failed(format!(
                        "a request went unanswered for {:.1} s",
                        MAX_ANSWER_WAIT.max(time).as_secs_f64()
                    )),
                    mean(total, answered),
                );
            }
        }
    }
    (
        RequestsFound::Found(MaxRequests::AtLeast { answered }),
        mean(total, answered),
    )
}

/// What the held-connection scan found.
struct Scan {
    workers: Workers,
    keepalive: KeepAlive,
    how: Vec<String>,
}

/// Opens connections one at a time, each answered once and then held idle,
/// until a fresh one goes unanswered, [`MAX_HELD`] are held, or `time` passes;
/// then watches for the server to close an idle one (at most `wait` after its
/// answer).
fn held_scan(target: &Target, answer_wait: Duration, time: Duration, wait: Duration) -> Scan {
    let start = Instant::now();
    let mut held: Vec<Conn> = Vec::new();
    let mut how = Vec::new();
    // The first keep-alive close seen during the scan.
    let mut closed_after: Option<Duration> = None;
    // Fresh connections answered late just as the server closed an idle one:
    // a worker freed by that close may have answered them.
    let mut slow = 0u32;
    let mut freed_late = 0u32;
    let mut limit = None;
    let mut pending = None;
    while (held.len() as u32) < MAX_HELD && start.elapsed() < time {
        // Drop the ones the server has closed (its keep-alive timeout).
        held.retain(|c| {
            let closed = c.closed_by_server();
            if closed && closed_after.is_none() {
                closed_after = c.idle_since.map(|t| t.elapsed());
            }
            !closed
        });
        let mut c = match target.connect(CONNECT_TIMEOUT) {
            Ok(c) => c,
            Err(e) => {
                limit = Some(format!(
                    "connection {} could not connect: {e}",
                    held.len() + 1
                ));
                break;
            }
        };
        let Ok(sent) = c.send() else {
            limit = Some(format!(
                "connection {} was closed before its request",
                held.len() + 1
            ));
            break;
        };
        match c.await_answer(sent, sent + answer_wait) {
            Answer::Kept { latency } => {
                if latency > answer_wait / 2 {
                    slow += 1;
                    if let Some(i) = held.iter().position(Conn::closed_by_server) {
                        freed_late += 1;
                        let closed = held.remove(i);
                        closed_after = closed_after.or(closed.idle_since.map(|t| t.elapsed()));
                    }
                }
                held.push(c);
            }
            Answer::Closing { .. } => {
                limit = Some(format!(
                    "with {} idle connections open the server answered a fresh one and closed it",
                    held.len()
                ));
                break;
            }
            Answer::Refused { status } => {
                limit = Some(format!(
                    "with {} idle connections open a fresh one was answered {status}",
                    held.len()
                ));
                break;
            }
            Answer::Gone => {
                limit = Some(format!(
                    "with {} idle connections open a fresh one was closed without an answer",
                    held.len()
                ));
                break;
            }
            Answer::Waiting => {
                pending = Some((c, sent));
                break;
            }
        }
    }
    let n = held.len() as u32;
    if let Some(why) = limit {
        how.push(format!(
            "held connections: {why}: a connection limit, not a worker count"
        ));
        let keepalive = watch_keepalive(&mut held, closed_after, wait, &mut how);
        return Scan {
            workers: Workers::Unknown {
                why: format!("the server refused more than {n} connections"),
            },
            keepalive,
            how,
        };
    }
    let Some((mut fresh, sent)) = pending else {
        how.push(format!(
            "held connections: {n} connections each answered once and held idle, and every \
             fresh one was still answered within {:.0} ms ({slow} slower than half of it); \
             stopped at {} in {:.1} s",
            answer_wait.as_secs_f64() * 1e3,
            if n >= MAX_HELD {
                format!("the bound of {MAX_HELD}")
            } else {
                "the time bound".into()
            },
            start.elapsed().as_secs_f64()
        ));
        // Fresh connections answered late just as the server closed idle
        // ones may have waited for those closes, not been answered by a free
        // worker (a keep-alive timeout shorter than the deadline): then
        // nearly every fresh one past W waits so. A few are a busy machine's
        // late answers that met one of the closes the scan sees anyway once
        // it runs longer than the timeout.
        let workers = if freed_late >= 3 && freed_late * 4 > n {
            how.push(format!(
                "{freed_late} of {n} fresh connections were answered late just as the server \
                 closed an idle one: they may have waited for a held worker"
            ));
            Workers::Unknown {
                why: "the keep-alive timeout is shorter than the probe's deadline".into(),
            }
        } else {
            Workers::NotHeld { held: n }
        };
        let keepalive = watch_keepalive(&mut held, closed_after, wait, &mut how);
        return Scan {
            workers,
            keepalive,
            how,
        };
    };
    how.push(format!(
        "held connections: {n} connections each answered once and held idle; connection {} \
         was accepted but its request not answered within {:.0} ms",
        n + 1,
        answer_wait.as_secs_f64() * 1e3
    ));
    // Wait for the server to close a held connection (its keep-alive
    // timeout), which must let the fresh one through if it was held.
    let first_idle = held.iter().filter_map(|c| c.idle_since).min();
    let until = first_idle.map_or_else(Instant::now, |t| t + wait);
    let mut closed_at = None;
    let mut answered_early = None;
    while Instant::now() < until {
        let a = fresh.await_answer(sent, Instant::now() + POLL);
        // Looked at after the fresh one's read: a worker freed by a close
        // answers within the same poll, and the close must not be missed.
        if let Some(i) = held.iter().position(Conn::closed_by_server) {
            let c = held.remove(i);
            closed_at = Some(c.idle_since.map(|t| t.elapsed()));
            if a != Answer::Waiting {
                answered_early = Some(a);
            }
            break;
        }
        if a != Answer::Waiting {
            // Answered (or gone) with every held connection still open.
            how.push(format!(
                "the fresh connection was {} after {:.0} ms with all {n} still open: a slow \
                 answer, not a held worker",
                if matches!(a, Answer::Kept { .. } | Answer::Closing { .. }) {
                    "answered"
                } else {
                    "ended"
                },
                sent.elapsed().as_secs_f64() * 1e3
            ));
            let keepalive = watch_keepalive(&mut held, closed_after, wait, &mut how);
            return Scan {
                workers: Workers::Unknown {
                    why: format!("a fresh connection was answered late with {n} held, not refused"),
                },
                keepalive,
                how,
            };
        }
    }
    let (keepalive, freed_by) = match closed_at {
        Some(idle) => {
            let after = idle.or(closed_after).unwrap_or_default();
            how.push(format!(
                "keep-alive: the server closed a held connection {:.2} s after its answer",
                after.as_secs_f64()
            ));
            (
                KeepAlive::Closes {
                    after_s: after.as_secs_f64(),
                },
                "the server's close",
            )
        }
        None => {
            how.push(format!(
                "keep-alive: no held connection was closed by the server within {:.0} s; the \
                 probe closed one itself",
                wait.as_secs_f64()
            ));
            held.remove(0);
            (
                match closed_after {
                    Some(a) => KeepAlive::Closes {
                        after_s: a.as_secs_f64(),
                    },
                    None => KeepAlive::LongerThan {
                        wait_s: wait.as_secs_f64(),
                    },
                },
                "the probe's close",
            )
        }
    };
    let freed = Instant::now();
    let answer = answered_early.unwrap_or_else(|| fresh.await_answer(sent, freed + answer_wait));
    let workers = match answer {
        Answer::Kept { .. } | Answer::Closing { .. } => {
            how.push(format!(
                "workers: the fresh connection was answered {:.0} ms after {freed_by} of a held \
                 one: each of the {n} idle connections held a worker, W = {n} (or a connection \
                 slot: a server that stops accepting at a limit of {n} connections looks the \
                 same from outside, and queues a user the same way)",
                freed.elapsed().as_secs_f64() * 1e3
            ));
            Workers::Held { workers: n }
        }
        a => {
            how.push(format!(
                "workers: the fresh connection was still not answered ({a:?}) {:.0} ms after \
                 {freed_by} of a held one",
                freed.elapsed().as_secs_f64() * 1e3
            ));
            Workers::Unknown {
                why: format!(
                    "a fresh connection went unanswered with {n} held, and a held one closing did \
                     not free it"
                ),
            }
        }
    };
    Scan {
        workers,
        keepalive,
        how,
    }
}

/// The keep-alive timeout from idle connections: the first the server
/// closes, watched until `wait` after the oldest one's answer (or a close
/// already seen during the scan).
fn watch_keepalive(
    held: &mut [Conn],
    seen: Option<Duration>,
    wait: Duration,
    how: &mut Vec<String>,
) -> KeepAlive {
    if let Some(a) = seen {
        how.push(format!(
            "keep-alive: the server closed an idle connection {:.2} s after its answer, during \
             the scan",
            a.as_secs_f64()
        ));
        return KeepAlive::Closes {
            after_s: a.as_secs_f64(),
        };
    }
    let Some(oldest) = held.iter().filter_map(|c| c.idle_since).min() else {
        return KeepAlive::Unknown {
            why: "no idle connection to watch".into(),
        };
    };
    let until = oldest + wait;
    while Instant::now() < until {
        if let Some(c) = held.iter().find(|c| c.closed_by_server()) {
            let after = c.idle_since.map_or(Duration::ZERO, |t| t.elapsed());
            how.push(format!(
                "keep-alive: the server closed an idle connection {:.2} s after its answer \
                 ({} watched)",
                after.as_secs_f64(),
                held.len()
            ));
            return KeepAlive::Closes {
                after_s: after.as_secs_f64(),
            };
        }
        std::thread::sleep(
            POLL.max(Duration::from_millis(20))
                .min(until.saturating_duration_since(Instant::now())),
        );
    }
    how.push(format!(
        "keep-alive: {} idle connections still open {:.0} s after their answers",
        held.len(),
        wait.as_secs_f64()
    ));
    KeepAlive::LongerThan {
        wait_s: wait.as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    /// A server of `workers` threads, each serving one connection at a time
    /// until it has been idle for `keepalive` or has answered `max_requests`
    /// (then `Connection: close`): the connection-per-worker shape of Apache
    /// prefork or servelab's pool. Returns its URL and port; its threads end
    /// with the test binary.
    fn held_server(workers: u32, keepalive: Duration, max_requests: u64) -> (String, u16) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        for _ in 0..workers {
            let l = l.try_clone().unwrap();
            std::thread::spawn(move || {
                while let Ok((s, _)) = l.accept() {
                    serve(s, keepalive, max_requests);
                }
            });
        }
        (format!("http://127.0.0.1:{port}/"), port)
    }

    fn serve(mut s: TcpStream, keepalive: Duration, max_requests: u64) {
        s.set_read_timeout(Some(keepalive)).unwrap();
        let mut buf = Vec::new();
        let mut answered = 0;
        let mut chunk = [0u8; 4096];
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                answered += 1;
                let last = answered >= max_requests;
                let head = if last { "Connection: close\r\n" } else { "" };
                let _ = s.write_all(
                    format!("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n{head}\r\nok").as_bytes(),
                );
                if last {
                    return;
                }
            }
            match s.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    }

    #[test]
    fn three_workers_held_by_idle_connections_are_found_with_the_keepalive_timeout() {
        let (url, port) = held_server(3, Duration::from_millis(600), 50);
        let a = find(&url, port, Duration::from_secs(4), &|_| {}).unwrap();
        assert_eq!(a.workers, Workers::Held { workers: 3 }, "{:#?}", a.how);
        assert_eq!(a.held_workers(), Some(3));
        // The server closes at 0.6 s of idleness; the probe sees it to its
        // poll, on a machine that may be busy: only the kind is asserted
        // beside a generous bound.
        match a.keepalive {
            KeepAlive::Closes { after_s } => assert!((0.5..3.0).contains(&after_s), "{after_s}"),
            k => panic!("{k:?}: {:#?}", a.how),
        }
        assert_eq!(a.max_requests, Some(MaxRequests::Closes { after: 50 }));
        assert!(a.summary().contains("W = 3"), "{}", a.summary());
    }

    #[test]
    fn a_server_that_closes_after_each_answer_holds_no_idle_connection() {
        let (url, port) = held_server(2, Duration::from_secs(5), 1);
        let a = find(&url, port, Duration::from_secs(4), &|_| {}).unwrap();
        assert_eq!(a.workers, Workers::NotKeptAlive, "{:#?}", a.how);
        assert_eq!(a.keepalive, KeepAlive::NotKeptAlive);
        assert_eq!(a.held_workers(), None);
    }

    #[test]
    fn a_keepalive_longer_than_the_wait_is_said_so_and_w_still_found() {
        let (url, port) = held_server(2, Duration::from_secs(60), 1000);
        let a = find(&url, port, Duration::from_secs(2), &|_| {}).unwrap();
        assert_eq!(a.workers, Workers::Held { workers: 2 }, "{:#?}", a.how);
        assert_eq!(a.keepalive, KeepAlive::LongerThan { wait_s: 1.0 });
        assert!(
            a.how
                .iter()
                .any(|h| h.contains("the probe closed one itself"))
        );
    }
}
