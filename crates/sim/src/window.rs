//! The kept window of one replication: recording completions, cutting the warm-up,
//! and turning cumulative counters into metrics, in memory that does not grow with
//! the number of completions (except the MSER-5 series, 16 bytes a batch of 5).
//!
//! The event loop keeps cumulative counters and time integrals ([`Cum`]). The window
//! streams every completion into:
//! - two HDR histograms of the good completions (3 significant digits), for the
//!   percentiles: one of the attempt's response time (R_attempt, from its send), one
//!   of the user's (R_user, from the end of thinking, with the timeouts, rejections,
//!   retry waits and retries before the answer: the quantity `servelab load`
//!   measures, and whose sum is `Cum::good_user_rt`);
//! - with an MSER-5 warm-up, the two batch series the cut is chosen on (one value
//!   each per batch of 5 completions), computed as the completions arrive.
//!
//! After the run, the cut `d` (in batches) is chosen over the replications of the
//! point (see `warmup`). Every metric is then the difference of the counters at the
//! end of the run and at the cut, and the percentiles come from each histogram of the
//! whole window minus the same histogram of the first `5 d` completions. Both are known at once
//! when `d` is 0 (and always with a fixed warm-up). Otherwise the replication is run
//! again from its seed up to its `5 d`-th kept completion (see [`Replication::close`]):
//! it is deterministic, so the second run reaches exactly the same state, and it
//! stops at the cut, which MSER keeps in the first half of the run.
//!
//! Before, the window stored every completion (4 bytes) and a snapshot of the
//! counters every 5 (24 bytes a completion): 20 M simulated requests held 560 MB.

use std::sync::Mutex;

use hdrhistogram::Histogram;

use crate::error::{Result, SimError};
use crate::model::Model;
use crate::spec::RunSpec;

/// Most completions one replication keeps with an MSER-5 warm-up (its batch series
/// holds 16 bytes per 5 completions: 320 MB here). A fixed warm-up keeps no series
/// and has no such limit.
pub(crate) const MAX_KEPT: u64 = 100_000_000;

/// Significant decimal digits of the response-time histograms: a percentile is the
/// middle of the histogram bucket that holds the nearest-rank value, within 0.05% of
/// it (1 part in 2,048).
const SIGFIG: u8 = 3;

/// Cumulative counters and time integrals at one instant.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cum {
    pub(crate) t: f64,
    /// Integral of the number of cores running a thread.
    pub(crate) busy: f64,
    /// Integral of the number of cores switching context.
    pub(crate) switching: f64,
    /// Integral of the buffer length.
    pub(crate) buffer: f64,
    /// Integral of the number of requests on the server.
    pub(crate) in_system: f64,
    pub(crate) arrivals: u64,
    pub(crate) completions: u64,
    pub(crate) good: u64,
    pub(crate) bad: u64,
    /// Sum of the response times (R_attempt) of good completions.
    pub(crate) good_rt: f64,
    /// Sum of the users' response times (R_user) of good completions.
    pub(crate) good_user_rt: f64,
    /// Users' response periods ended: answered, given up, or blocked and thinking
    /// again (one user cycle each, for Little's law).
    pub(crate) cycles: u64,
    /// Sum of the lengths of those periods (from the end of thinking to their end).
    pub(crate) cycle_rt: f64,
    /// Requests stopped because their user had gone (`OnAbandon::Cancel`).
    pub(crate) cancelled: u64,
    pub(crate) drops: u64,
    pub(crate) timeouts: u64,
    pub(crate) gave_up: u64,
}

/// The metrics of one replication after warm-up deletion. Rates are per second.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RepMetrics {
    pub(crate) throughput: f64,
    pub(crate) goodput: f64,
    pub(crate) badput: f64,
    pub(crate) attempt_response_time: f64,
    pub(crate) user_response_time: f64,
    /// User cycles (response periods ended) per second.
    pub(crate) cycle_rate: f64,
    /// Mean response period of a user, over the periods that ended in the window.
    pub(crate) cycle_time: f64,
    /// Users still waiting at the end of the run (left out of the means).
    pub(crate) waiting_at_end: f64,
    /// Their mean wait so far at the end of the run (NaN when nobody waits).
    pub(crate) wait_at_end: f64,
    /// Percentiles of R_attempt over the good completions.
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    /// Percentiles of R_user over the same completions.
    pub(crate) user_p50: f64,
    pub(crate) user_p90: f64,
    pub(crate) user_p99: f64,
    pub(crate) utilisation: f64,
    pub(crate) switch_fraction: f64,
    pub(crate) drop_rate: f64,
    pub(crate) drop_fraction: f64,
    pub(crate) timeout_rate: f64,
    pub(crate) give_up_rate: f64,
    pub(crate) cancel_rate: f64,
    pub(crate) mean_buffer: f64,
    pub(crate) mean_in_system: f64,
    pub(crate) duration: f64,
}

/// What one replication returns.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RepOutput {
    pub(crate) metrics: RepMetrics,
    /// Completions deleted as warm-up.
    pub(crate) warmup_deleted: u64,
    /// Simulated time at which the kept window starts.
    pub(crate) warmup_time: f64,
    /// Completions kept.
    pub(crate) kept: u64,
    /// Events processed (stale ones included), the second run to the cut excluded.
    pub(crate) events: u64,
}

/// One completion: its attempt's response time as an `f32`, negated for badput
/// (`-0.0` is negative too, so a zero response time keeps its flag), and its user's
/// response time, rounded the same way (meaningful for goodput only: a badput's user
/// has gone). The MSER-5 series is built from the rounded attempt values, as it was
/// when every completion was stored this way, so that the warm-up cut did not move
/// when the storage went. Both times go through the same rounding, so without
/// retries the two histograms are equal, bucket for bucket.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Obs {
    rt: f32,
    user: f32,
}

impl Obs {
    /// A completion whose attempt took `rt` and whose user waited `user_rt` in all.
    pub(crate) fn new(rt: f64, user_rt: f64, good: bool) -> Obs {
        let rt = rt as f32;
        Obs {
            rt: if good { rt } else { -rt },
            user: user_rt as f32,
        }
    }
    fn good(self) -> bool {
        !self.rt.is_sign_negative()
    }
    fn rt(self) -> f64 {
        f64::from(self.rt.abs())
    }
    fn user_rt(self) -> f64 {
        f64::from(self.user)
    }
}

/// Whole nanoseconds: far below the histograms' resolution at any scale the model
/// validates. Rounded by adding a half (`f64::round` is a library call: 2% of a run).
#[inline]
fn ns(seconds: f64) -> u64 {
    (seconds * 1e9 + 0.5) as u64
}

/// Records `ns` nanoseconds. The histogram grows to the largest value; `record`
/// fails only past what a u64 of nanoseconds holds (585 years), which then saturates.
#[inline]
fn record_ns(h: &mut Histogram<u64>, ns: u64) {
    if h.record(ns).is_err() {
        h.saturating_record(ns);
    }
}

/// The good completions' response times, nanoseconds: the attempt's and the user's.
/// Both are recorded for the same completions and cut at the same place.
#[derive(Debug)]
pub(crate) struct Hists {
    /// R_attempt of each good completion.
    pub(crate) attempt: Histogram<u64>,
    /// R_user of each good completion.
    pub(crate) user: Histogram<u64>,
}

impl Hists {
    fn new() -> Hists {
        Hists {
            attempt: histogram(),
            user: histogram(),
        }
    }

    fn is_empty(&self) -> bool {
        self.attempt.is_empty()
    }

    fn recycle(self) {
        recycle(self.attempt);
        recycle(self.user);
    }
}

/// Histograms of closed replications, for the next ones to reuse: a fresh one is
/// grown and zeroed page by page, which cost a sweep of short replications (seed 002's,
/// 330 of 20,000 requests) a third more system time. Emptied before reuse, so
/// results do not depend on it.
static SPARE: Mutex<Vec<Histogram<u64>>> = Mutex::new(Vec::new());

/// Most histograms [`SPARE`] keeps (a few hundred kilobytes each).
const SPARE_MAX: usize = 64;

/// An empty response-time histogram (nanoseconds, resized to the largest value).
fn histogram() -> Histogram<u64> {
    match SPARE.lock().ok().and_then(|mut s| s.pop()) {
        Some(mut h) => {
            h.reset();
            h
        }
        None => Histogram::new(SIGFIG).expect("3 significant digits are valid"),
    }
}

/// Nearest-rank quantiles (`qs` ascending) of a histogram of nanoseconds, in
/// seconds, each the middle of its bucket; NaN when it is empty. One pass over the
/// buckets for all of them (`value_at_quantile` would walk them once each).
fn quantiles<const N: usize>(h: &Histogram<u64>, qs: [f64; N]) -> [f64; N] {
    let mut out = [f64::NAN; N];
    let n = h.len();
    if n == 0 {
        return out;
    }
    let mut next = 0;
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        while next < N && seen >= ((qs[next] * n as f64).ceil() as u64).max(1) {
            out[next] = h.median_equivalent(v.value_iterated_to()) as f64 / 1e9;
            next += 1;
        }
        if next == N {
            break;
        }
    }
    out
}

/// Gives a histogram back for reuse.
fn recycle(h: Histogram<u64>) {
    if let Ok(mut spare) = SPARE.lock() {
        if spare.len() < SPARE_MAX {
            spare.push(h);
        }
    }
}

/// The two series the warm-up cut is computed on, one value per batch of 5
/// completions.
#[derive(Debug, Default)]
pub(crate) struct Series {
    /// Batch means of the response times (good and bad completions).
    pub(crate) rt: Vec<f64>,
    /// Time-average number of requests on the server during each batch (which shows
    /// transients of the state itself, drops and buffer, that response times hide
    /// behind a full buffer).
    pub(crate) occupancy: Vec<f64>,
}

/// Builds the [`Series`] as completions arrive.
#[derive(Debug, Default)]
struct Batcher {
    series: Series,
    /// Sum of the response times of the current batch so far.
    sum: f64,
    /// Time and occupancy integral at the end of the previous batch.
    last: (f64, f64),
    /// The previous batch's occupancy, repeated for a batch of zero length.
    occupancy: f64,
}

impl Batcher {
    /// A batcher for a window of `target` completions (`u64::MAX`: unknown).
    fn new(open: &Cum, target: u64) -> Batcher {
        // Reserve the whole series when its length is known: growing by doubling
        // left up to half of it unused, 20 MB of a 20 M-request run.
        let batches = if target == u64::MAX {
            0
        } else {
            (target.min(MAX_KEPT) / 5) as usize
        };
        Batcher {
            series: Series {
                rt: Vec::with_capacity(batches),
                occupancy: Vec::with_capacity(batches),
            },
            last: (open.t, open.in_system),
            ..Batcher::default()
        }
    }

    /// Adds completion number `n` (from 1) of the window; `now` includes it.
    #[inline]
    fn push(&mut self, o: Obs, n: u64, now: &Cum) {
        self.sum += o.rt();
        if n % 5 == 0 {
            self.series.rt.push(self.sum / 5.0);
            self.sum = 0.0;
            let dt = now.t - self.last.0;
            if dt > 0.0 {
                self.occupancy = (now.in_system - self.last.1) / dt;
            }
            self.series.occupancy.push(self.occupancy);
            self.last = (now.t, now.in_system);
        }
    }
}

/// The completions of one replication since its window opened, streamed.
#[derive(Debug)]
pub(crate) struct Window {
    target: u64,
    count: u64,
    open: Option<Cum>,
    hists: Hists,
    /// Whether to build the MSER-5 series (not for a fixed warm-up, nor for the run
    /// to a cut that is already chosen).
    batch: bool,
    batcher: Option<Batcher>,
}

impl Window {
    /// A window that will be full after `target` completions (`u64::MAX`: never),
    /// building the MSER-5 series when `batch`.
    pub(crate) fn new(target: u64, batch: bool) -> Window {
        Window {
            target,
            count: 0,
            open: None,
            hists: Hists::new(),
            batch,
            batcher: None,
        }
    }

    /// Starts recording with the counters as they are now.
    pub(crate) fn open(&mut self, now: Cum) {
        self.open = Some(now);
        if self.batch {
            self.batcher = Some(Batcher::new(&now, self.target));
        }
    }

    /// Records a completion (`now` includes it); true when the window is full.
    #[inline]
    pub(crate) fn record(&mut self, o: Obs, now: &Cum) -> Result<bool> {
        self.count += 1;
        if o.good() {
            record_ns(&mut self.hists.attempt, ns(o.rt()));
            record_ns(&mut self.hists.user, ns(o.user_rt()));
        }
        if let Some(b) = &mut self.batcher {
            if self.count > MAX_KEPT {
                return Err(SimError::InvalidRun(format!(
                    "a replication of more than {MAX_KEPT} completions with an MSER-5 warm-up \
                     would need gigabytes for its batch series; use more replications, a \
                     shorter horizon or a fixed warm-up"
                )));
            }
            b.push(o, self.count, now);
        }
        Ok(self.count >= self.target)
    }

    /// The run is over at `end`: a replication whose warm-up cut is still to be
    /// chosen (see `warmup`). `censored` is the number of users still waiting at
    /// `end` and the sum of their waits so far; `again` says how to run it again.
    pub(crate) fn finish(
        self,
        end: Cum,
        censored: (u64, f64),
        cores: u32,
        events: u64,
        again: Option<Again>,
    ) -> Replication {
        Replication {
            // A horizon shorter than the fixed warm-up: nothing kept.
            open: self.open.unwrap_or(end),
            count: self.count,
            hists: Some(self.hists),
            series: self.batcher.map(|b| b.series).unwrap_or_default(),
            end,
            censored,
            cores,
            events,
            again,
        }
    }
}

/// What it takes to run a replication again, to its warm-up cut.
#[derive(Clone, Debug)]
pub(crate) struct Again {
    pub(crate) model: Model,
    pub(crate) spec: RunSpec,
    pub(crate) point: usize,
    pub(crate) rep: u32,
}

/// A replication that has run, before its warm-up cut: the cut may depend on the
/// other replications of its point (see `warmup`).
#[derive(Debug)]
pub(crate) struct Replication {
    /// The counters when the window opened, and at its end.
    open: Cum,
    end: Cum,
    /// Completions recorded in the window.
    count: u64,
    /// Good response times of the whole window, nanoseconds (taken only when the
    /// replication is dropped, to be reused).
    hists: Option<Hists>,
    series: Series,
    censored: (u64, f64),
    cores: u32,
    events: u64,
    /// `None` for a run that cannot be repeated (a unit test's hand-made window).
    again: Option<Again>,
}

impl Drop for Replication {
    fn drop(&mut self) {
        if let Some(h) = self.hists.take() {
            h.recycle();
        }
    }
}

impl Replication {
    fn hists(&self) -> &Hists {
        self.hists.as_ref().expect("taken only on drop")
    }

    /// Number of whole batches of 5 completions recorded (0 with a fixed warm-up,
    /// which keeps no series).
    pub(crate) fn batches(&self) -> usize {
        self.series.rt.len()
    }

    /// The batch series of this replication (see [`Series`]).
    pub(crate) fn series(&self) -> &Series {
        &self.series
    }

    /// The counters and the histograms of the good response times at the end of the
    /// first `d` batches: runs the replication again up to there when `d > 0`.
    fn at_cut(&self, d: usize) -> Result<(Cum, Hists)> {
        if d == 0 {
            return Ok((self.open, Hists::new()));
        }
        let again = self.again.as_ref().ok_or_else(|| {
            SimError::InvalidRun("this replication cannot be run again to its cut".into())
        })?;
        let kept = 5 * d as u64;
        let prefix =
            crate::engine::run_to(&again.model, &again.spec, again.point, again.rep, kept)?;
        if prefix.count != kept {
            // Cannot happen while the loop is a pure function of the seed; a silent
            // mismatch would shift every metric, so it is an error.
            return Err(SimError::InvalidRun(format!(
                "the second run to the warm-up cut reached {} completions, not {kept}",
                prefix.count
            )));
        }
        Ok((prefix.end, prefix.hists))
    }

    /// Deletes the first `d` batches of 5 completions and computes the metrics of the
    /// rest, up to the end of the run.
    pub(crate) fn close(&self, d: usize) -> Result<RepOutput> {
        let (end, cores, events) = (self.end, self.cores, self.events);
        let d = d.min(self.batches());
        let (start, prefix) = self.at_cut(d)?;
        let cut = !prefix.is_empty();
        let kept = |whole: &Histogram<u64>, before: &Histogram<u64>| -> Result<[f64; 3]> {
            if !cut {
                return Ok(quantiles(whole, [0.50, 0.90, 0.99]));
            }
            let mut good = histogram();
            good.add(whole).map_err(|e| {
                SimError::InvalidRun(format!("cannot copy a response-time histogram: {e:?}"))
            })?;
            good.subtract(before).map_err(|e| {
                SimError::InvalidRun(format!(
                    "the second run to the warm-up cut did not repeat the first: {e:?}"
                ))
            })?;
            let p = quantiles(&good, [0.50, 0.90, 0.99]);
            recycle(good);
            Ok(p)
        };
        let [p50, p90, p99] = kept(&self.hists().attempt, &prefix.attempt)?;
        let [user_p50, user_p90, user_p99] = kept(&self.hists().user, &prefix.user)?;
        prefix.recycle();
        let dt = end.t - start.t;
        let core_time = dt * f64::from(cores);
        let per_s = |a: u64, b: u64| (a - b) as f64 / dt;
        let arrivals = end.arrivals - start.arrivals;
        let (censored_n, censored_rt) = self.censored;
        let metrics = RepMetrics {
            throughput: per_s(end.completions, start.completions),
            goodput: per_s(end.good, start.good),
            badput: per_s(end.bad, start.bad),
            attempt_response_time: (end.good_rt - start.good_rt) / (end.good - start.good) as f64,
            // From the answers in the window only, as R_attempt: without retries the
            // two sums are equal, answer for answer. Counting the users still waiting
            // at the end with their wait so far (the estimator before issue 27) mixed
            // N residual waits into the mean and read R_user 1.4% low at N = 348
            // (14.600 s against R_attempt's 14.813 s, 500 s runs); they are reported
            // apart, and the Little check on the completed cycles is what flags a run
            // shorter than its response times (see `LittleCheck`).
            user_response_time: (end.good_user_rt - start.good_user_rt)
                / (end.good - start.good) as f64,
            cycle_rate: per_s(end.cycles, start.cycles),
            cycle_time: (end.cycle_rt - start.cycle_rt) / (end.cycles - start.cycles) as f64,
            waiting_at_end: censored_n as f64,
            wait_at_end: censored_rt / censored_n as f64,
            p50,
            p90,
            p99,
            user_p50,
            user_p90,
            user_p99,
            utilisation: (end.busy - start.busy) / core_time,
            switch_fraction: (end.switching - start.switching) / core_time,
            drop_rate: per_s(end.drops, start.drops),
            drop_fraction: if arrivals > 0 {
                (end.drops - start.drops) as f64 / arrivals as f64
            } else {
                f64::NAN
            },
            timeout_rate: per_s(end.timeouts, start.timeouts),
            give_up_rate: per_s(end.gave_up, start.gave_up),
            cancel_rate: per_s(end.cancelled, start.cancelled),
            mean_buffer: (end.buffer - start.buffer) / dt,
            mean_in_system: (end.in_system - start.in_system) / dt,
            duration: dt,
        };
        Ok(RepOutput {
            metrics,
            warmup_deleted: 5 * d as u64,
            warmup_time: start.t,
            kept: self.count - 5 * d as u64,
            events,
        })
    }
}

/// A run stopped at its warm-up cut: the counters there and the histograms of the
/// good response times before it.
#[derive(Debug)]
pub(crate) struct Prefix {
    pub(crate) end: Cum,
    pub(crate) hists: Hists,
    /// Completions recorded: the cut, when the run repeated the first.
    pub(crate) count: u64,
}

impl Replication {
    /// The state of a run to a cut: its end and its histogram.
    pub(crate) fn into_prefix(mut self) -> Prefix {
        Prefix {
            end: self.end,
            hists: self.hists.take().expect("taken only here or on drop"),
            count: self.count,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cum(t: f64, completions: u64, in_system: f64) -> Cum {
        Cum {
            t,
            completions,
            good: completions,
            in_system,
            good_rt: completions as f64,
            ..Cum::default()
        }
    }

    #[test]
    fn observations_keep_their_flag() {
        assert!(Obs::new(0.0, 0.0, true).good());
        assert!(!Obs::new(0.0, 0.0, false).good());
        assert_eq!(Obs::new(1.5, 0.0, false).rt(), 1.5);
    }

    #[test]
    fn metrics_are_differences_of_snapshots() {
        // 10 completions of response time 1 over 10 s, 2 requests on the server on
        // average; no warm-up cut for a fixed warm-up.
        let mut w = Window::new(10, false);
        w.open(cum(0.0, 0, 0.0));
        for i in 1..=10u64 {
            let full = w
                .record(Obs::new(1.0, 1.0, true), &cum(i as f64, i, 2.0 * i as f64))
                .unwrap();
            assert_eq!(full, i == 10);
        }
        let out = w
            .finish(cum(10.0, 10, 20.0), (0, 0.0), 4, 99, None)
            .close(0)
            .unwrap();
        assert_eq!(out.metrics.throughput, 1.0);
        assert_eq!(out.metrics.attempt_response_time, 1.0);
        assert_eq!(out.metrics.mean_in_system, 2.0);
        // The middle of the bucket of 1 s: within 0.05%.
        assert!((out.metrics.p50 - 1.0).abs() < 5e-4, "{}", out.metrics.p50);
        assert_eq!((out.kept, out.events, out.warmup_deleted), (10, 99, 0));
    }

    #[test]
    fn quantiles_are_nearest_rank_in_one_pass() {
        let mut h = histogram();
        for ms in 1..=100u64 {
            h.record(ms * 1_000_000).unwrap();
        }
        let qs = [0.5, 0.9, 0.99, 1.0];
        let got = quantiles(&h, qs);
        for ((q, got), want) in qs.into_iter().zip(got).zip([0.050, 0.090, 0.099, 0.100]) {
            assert!((got / want - 1.0).abs() < 5e-4, "{got} against {want}");
            // The same bucket as the library's own nearest-rank walk.
            let lib = h.median_equivalent(h.value_at_quantile(q)) as f64 / 1e9;
            assert_eq!(got, lib);
        }
        assert!(quantiles(&histogram(), [0.5])[0].is_nan());
    }

    #[test]
    fn batch_series_are_built_as_completions_arrive() {
        // Response times 1..=10 in two batches; occupancy 2 in the first batch (over
        // 5 s), then a batch of zero length that repeats it.
        let mut w = Window::new(u64::MAX, true);
        w.open(cum(0.0, 0, 0.0));
        for i in 1..=10u64 {
            let t = (i as f64).min(5.0);
            w.record(Obs::new(i as f64, i as f64, true), &cum(t, i, 2.0 * t))
                .unwrap();
        }
        let r = w.finish(cum(5.0, 10, 10.0), (0, 0.0), 1, 0, None);
        assert_eq!(r.batches(), 2);
        assert_eq!(r.series().rt, [3.0, 8.0]);
        assert_eq!(r.series().occupancy, [2.0, 2.0]);
    }
}
