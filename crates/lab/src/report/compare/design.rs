//! How A and B were measured, and whether they can be compared: an
//! interleaved pair or two separate runs, what differs between them besides
//! the change (protocol, machine, placement), and the refusal of two runs with
//! no point in common.

use super::row::key;
use crate::error::{LabError, Result};
use crate::metric;
use crate::store::results::{Alternation, Interleaved, RunResults, Status};

/// A's record of the interleaved pair that A and B form, when `servelab lab
/// ab` measured them together (either way round); `None` for separate runs.
pub fn pair<'r>(a: &'r RunResults, b: &RunResults) -> Option<&'r Interleaved> {
    let ia = a.protocol.as_ref()?.interleaved.as_ref()?;
    let ib = b.protocol.as_ref()?.interleaved.as_ref()?;
    ia.pairs_with(ib).then_some(ia)
}

/// One line on how A and B were measured, and so what a mark can mean.
pub fn design(a: &RunResults, b: &RunResults) -> String {
    if a == b {
        return "design: one run compared with itself".into();
    }
    match pair(a, b) {
        Some(i) => {
            let led_by_a = i
                .first
                .iter()
                .filter(|s| **s == crate::store::results::Side::A)
                .count();
            match i.by {
                Alternation::Repeat => format!(
                    "design: an interleaved pair (servelab lab ab, pair {}): ABBA by repeat, both \
                     servers alive: at every point A's server and B's ran side by side and their \
                     repeats alternated A B, B A, ... (A first at {led_by_a} of {} points), so \
                     drift slower than a repeat and what one side's load leaves behind hit both \
                     alike; the test is Welch's t on each side's interleaved repeats",
                    i.pair,
                    i.first.len()
                ),
                Alternation::Point => format!(
                    "design: an interleaved pair (servelab lab ab, pair {}): every point was \
                     measured with A and B back to back, each on a fresh server, in ABBA order by \
                     point (A first at {led_by_a} of {} points), so drift slower than a point hits \
                     both alike; the test is Welch's t on each side's back-to-back repeats",
                    i.pair,
                    i.first.len()
                ),
            }
        }
        None => "design: two separate runs: the repeats of each sample the noise within it, not \
                 the drift of the machine between them, so a mark is a change of the build or of \
                 the machine (`servelab lab ab` tells them apart)"
            .into(),
    }
}

/// Why the two runs may differ for reasons other than the change compared: one
/// line each, empty when none.
pub fn warnings(a: &RunResults, b: &RunResults) -> Vec<String> {
    let mut out = Vec::new();
    if a == b {
        out.push(
            "A and B are the same run: every difference is zero, and this says nothing about noise"
                .into(),
        );
        return out;
    }
    if a.experiment != b.experiment {
        out.push(
            "different experiments; only points with the same server and axis values match".into(),
        );
    }
    if a.quick != b.quick {
        let q = |r: &RunResults| if r.quick { "--quick" } else { "full" };
        out.push(format!(
            "different protocols: A is a {} run and B a {} one (windows, warm-up and repeats differ)",
            q(a),
            q(b)
        ));
    } else if let (Some(pa), Some(pb)) = (&a.protocol, &b.protocol)
        && !same_protocol(pa, pb)
    {
        out.push(format!(
            "different protocols: A measured windows of {} s with {}..{} repeats, B {} s with {}..{}",
            metric::fmt(pa.window_s),
            pa.min_repeats,
            pa.max_repeats,
            metric::fmt(pb.window_s),
            pb.min_repeats,
            pb.max_repeats
        ));
    }
    if a.protocol.is_none() != b.protocol.is_none() {
        out.push("one run records its protocol and the other does not".into());
    }
    if (a.schema == crate::store::results::SCHEMA_V3)
        != (b.schema == crate::store::results::SCHEMA_V3)
    {
        out.push(format!(
            "response times differ in kind: {} was written as {} (mean_ms, p50_ms and p99_ms \
             over every started request, those unfinished at a window's end counted to it, \
             which biases them low), the other over finished requests only",
            if a.schema == crate::store::results::SCHEMA_V3 {
                "A"
            } else {
                "B"
            },
            crate::store::results::SCHEMA_V3
        ));
    }
    if pair(a, b).is_none() {
        let interleaved =
            |r: &RunResults| r.protocol.as_ref().is_some_and(|p| p.interleaved.is_some());
        for (name, r) in [("A", a), ("B", b)] {
            if interleaved(r) {
                out.push(format!(
                    "{name} is one side of an interleaved pair, but not of a pair with the other \
                     run: compare the two sides of one `lab ab` directory to have its design"
                ));
            }
        }
    }
    if a.machine.cpu_model != b.machine.cpu_model || a.machine.cores != b.machine.cores {
        out.push(format!(
            "different machines ({} x{} vs {} x{})",
            a.machine.cpu_model, a.machine.cores, b.machine.cpu_model, b.machine.cores
        ));
    }
    if a.placement != b.placement {
        out.push(format!(
            "different CPU placement (A: {}; B: {})",
            a.placement, b.placement
        ));
    }
    out
}

/// Whether two protocols are the same but for the pair each run belongs to.
fn same_protocol(a: &crate::protocol::Protocol, b: &crate::protocol::Protocol) -> bool {
    let bare = |p: &crate::protocol::Protocol| crate::protocol::Protocol {
        interleaved: None,
        ..p.clone()
    };
    bare(a) == bare(b)
}

/// The points (server and axis values) with figures in both runs.
pub fn common(a: &RunResults, b: &RunResults) -> Vec<String> {
    let ok = |r: &RunResults| -> Vec<String> {
        r.points
            .iter()
            .filter(|p| p.status == Status::Ok)
            .map(key)
            .collect()
    };
    let in_b = ok(b);
    let mut out: Vec<String> = ok(a).into_iter().filter(|k| in_b.contains(k)).collect();
    out.dedup();
    out
}

/// Refuses two runs that have no point in common.
pub fn check(a: &RunResults, b: &RunResults, a_name: &str, b_name: &str) -> Result<()> {
    if !common(a, b).is_empty() {
        return Ok(());
    }
    let why = if a.experiment == b.experiment {
        format!(
            "no point has figures in both (A: {} of {} points ok, B: {} of {})",
            a.points.iter().filter(|p| p.status == Status::Ok).count(),
            a.points.len(),
            b.points.iter().filter(|p| p.status == Status::Ok).count(),
            b.points.len()
        )
    } else {
        format!(
            "they are runs of different experiments ({} and {}) and share no server and axis values",
            a.experiment, b.experiment
        )
    };
    Err(LabError::Other(format!(
        "nothing to compare between {a_name} and {b_name}: {why}"
    )))
}
