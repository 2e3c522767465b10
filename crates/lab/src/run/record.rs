//! A measured repeat into its point's record: the load generator's report, the
//! server's CPU time and, when read, its own counters become the repeat's
//! figures ([`record_repeat`], [`record_tls`]); what cannot be measured is
//! recorded with its reason, never as a zero; what failed becomes a note.

use crate::metric::Metric;
use crate::store::results::{Figures, PointRecord};

/// The figures of repeat `r` into the point's record; `server` holds the
/// server's own rates when its counters were read.
pub(super) fn record_repeat(
    rec: &mut PointRecord,
    r: u32,
    report: &servelab_load::Report,
    cpu_s: Result<f64, String>,
    server: Option<Result<Figures, String>>,
) {
    if let Some(what) = failures(&report.counts, &report.errors) {
        rec.notes
            .push(format!("repeat {r}: {what}{}", error_classes(report)));
    }
    let mut m = Figures::new();
    let secs = report.duration_s.max(1e-9);
    // Without the server's counters, what the load generator saw: every ok
    // answer was served to the end, and no abandoned request can be seen.
    m.insert(Metric::Throughput, report.throughput.ok_per_s);
    m.insert(Metric::Goodput, report.throughput.ok_per_s);
    let refused = report.status.get("503").copied().unwrap_or(0);
    m.insert(Metric::DropRate, refused as f64 / secs);
    m.insert(Metric::TimeoutRate, report.counts.timeouts as f64 / secs);
    let unmeasurable = |rec: &mut PointRecord, m: &mut Figures, why: String| {
        for k in [Metric::Throughput, Metric::Badput, Metric::Abandoned] {
            m.remove(&k);
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: {why}"));
        }
    };
    match server {
        Some(Ok(f)) => {
            if !f.contains_key(&Metric::Badput) {
                rec.unmeasurable.entry(Metric::Badput).or_insert_with(|| {
                    "the server cancels abandoned requests and counts them with the few \
                     abandoned while being written, so what it finished for nobody is unknown"
                        .into()
                });
            }
            m.extend(f);
        }
        Some(Err(why)) => unmeasurable(rec, &mut m, why),
        // With client timeouts the server also finishes requests nobody waits
        // for; only its own counters see them.
        None if report.counts.timeouts > 0 => unmeasurable(
            rec,
            &mut m,
            "clients timed out, and only the server counts the requests it finished for them \
             (serve --status, with a duration-bound load)"
                .into(),
        ),
        None => {}
    }
    if report.counts.ok > 0 {
        m.insert(Metric::MeanMs, report.latency.mean / 1000.0);
        m.insert(Metric::AttemptMs, report.latency_uncorrected.mean / 1000.0);
        m.insert(Metric::P50Ms, report.latency.p50 as f64 / 1000.0);
        m.insert(Metric::P99Ms, report.latency.p99 as f64 / 1000.0);
    } else {
        // Under a collapse no user gets an answer: the load's times would be
        // those of its refusals (503s), not response times.
        for k in [
            Metric::MeanMs,
            Metric::AttemptMs,
            Metric::P50Ms,
            Metric::P99Ms,
        ] {
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: no request got a 2xx answer"));
        }
    }
    m.insert(Metric::TotalS, report.duration_s);
    m.insert(Metric::MbPerS, report.throughput.bytes_per_s / 1e6);
    // Failed requests only: a failed connect (counted in `errors` since
    // servelab-load/2) finishes no request and is said in the note.
    m.insert(Metric::Errors, report.counts.failed as f64);
    // U = server CPU s / window s, measured even in a collapse where no
    // request finished; D = server CPU s / finished requests, so U = X·D.
    match cpu_s {
        Ok(cpu_s) => {
            m.insert(Metric::CpuPct, cpu_s / secs * 100.0);
            if report.counts.completed > 0 {
                m.insert(Metric::CpuUs, cpu_s * 1e6 / report.counts.completed as f64);
            } else {
                rec.unmeasurable
                    .entry(Metric::CpuUs)
                    .or_insert_with(|| format!("repeat {r}: no request completed"));
            }
        }
        Err(why) => {
            for k in [Metric::CpuUs, Metric::CpuPct] {
                rec.unmeasurable
                    .entry(k)
                    .or_insert_with(|| format!("repeat {r}: {why}"));
            }
        }
    }
    rec.repeats.push(m);
}

/// The TLS figures of repeat `r` (its last repeat in `rec`): handshakes per
/// second, full and resumed, as the load generator completed them; the mean
/// and 99th percentile handshake time and the client's CPU per handshake
/// when a handshake completed, and otherwise unmeasurable (never 0: a
/// session that outlasts the window makes no handshake in it).
pub(super) fn record_tls(rec: &mut PointRecord, r: u32, report: &servelab_load::Report) {
    let secs = report.duration_s.max(1e-9);
    let c = &report.counts;
    let Some(m) = rec.repeats.last_mut() else {
        return;
    };
    m.insert(Metric::FullHandshakes, c.tls_full as f64 / secs);
    m.insert(Metric::ResumedHandshakes, c.tls_resumed as f64 / secs);
    let h = &report.tls_handshake;
    if h.count > 0 {
        m.insert(Metric::HandshakeMs, h.mean / 1000.0);
        m.insert(Metric::HandshakeP99Ms, h.p99 as f64 / 1000.0);
    }
    if let Some(us) = report.throughput.cpu_us_per_handshake {
        m.insert(Metric::ClientHandshakeUs, us);
    }
    for k in [
        Metric::HandshakeMs,
        Metric::HandshakeP99Ms,
        Metric::ClientHandshakeUs,
    ] {
        if !m.contains_key(&k) {
            rec.unmeasurable
                .entry(k)
                .or_insert_with(|| format!("repeat {r}: no TLS handshake completed"));
        }
    }
}

/// What failed in a repeat, in words, or `None` when nothing did: the requests
/// that ended in an error out of those that finished (`failed` of `completed`;
/// since servelab-load/2 a failed connect finishes no request), and the failed
/// connects apart, since each is retried for the same request.
pub(super) fn failures(
    counts: &servelab_load::Counts,
    errors: &servelab_load::Errors,
) -> Option<String> {
    let connects = errors.connect_refused + errors.connect_other;
    let mut parts = Vec::new();
    if counts.failed > 0 {
        parts.push(format!(
            "{} of {} finished requests failed",
            counts.failed, counts.completed
        ));
    }
    if connects > 0 {
        parts.push(format!(
            "{connects} connect{} failed (each retried for the same request)",
            if connects == 1 { "" } else { "s" }
        ));
    }
    if errors.tls_handshake > 0 {
        parts.push(format!(
            "{} TLS handshake{} failed",
            errors.tls_handshake,
            if errors.tls_handshake == 1 { "" } else { "s" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", and "))
}

/// The load generator's error classes that occurred, as ": class n, ...", or
/// nothing.
pub(super) fn error_classes(report: &servelab_load::Report) -> String {
    let v = serde_json::to_value(report.errors).unwrap_or_default();
    let parts: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, n)| n.as_u64().unwrap_or(0) > 0)
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_load::{Counts, Errors};

    /// Regression: with servelab-load/2 `errors` counts failed connects too, and
    /// the note "N of M requests failed" divided them by the finished requests
    /// (a run with 3 refused connects and 2 failed requests of 10 said "5 of 10").
    #[test]
    fn failed_requests_are_counted_out_of_finished_ones_and_connects_apart() {
        let counts = Counts {
            scheduled: 11,
            sent: 11,
            completed: 10,
            ok: 8,
            failed: 2,
            errors: 5,
            in_flight: 1,
            ..Counts::default()
        };
        let errors = Errors {
            connect_refused: 3,
            reset: 2,
            ..Errors::default()
        };
        assert_eq!(
            failures(&counts, &errors).unwrap(),
            "2 of 10 finished requests failed, and 3 connects failed (each retried for the same request)"
        );
        let only_connects = Counts {
            failed: 0,
            ok: 10,
            ..counts
        };
        let one = Errors {
            connect_other: 1,
            ..Errors::default()
        };
        assert_eq!(
            failures(&only_connects, &one).unwrap(),
            "1 connect failed (each retried for the same request)"
        );
        assert_eq!(failures(&only_connects, &Errors::default()), None);
    }
}
