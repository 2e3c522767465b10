//! The kept window of one replication: recording completions, cutting the warm-up,
//! and turning cumulative counters into metrics, in memory that does not grow with
//! the number of completions (the MSER-5 series included: at most [`SERIES_MAX`]
//! batches, see [`Series`]).
//!
//! The event loop keeps cumulative counters and time integrals ([`Cum`]). The window
//! streams every completion into:
//! - two HDR histograms of the good completions (3 significant digits), for the
//!   percentiles: one of the attempt's response time (R_attempt, from its send), one
//!   of the user's (R_user, from the end of thinking, with the timeouts, rejections,
//!   retry waits and retries before the answer: the quantity `servelab load`
//!   measures, and whose sum is `Cum::good_user_rt`);
//! - with an MSER-5 warm-up, the two batch series the cut is chosen on (one value
//!   each per batch of 5 completions, coarsened to batches of 10, 20, ... when a long
//!   run fills [`SERIES_MAX`] of them), computed as the completions arrive.
//!
//! After the run, the cut `d` (in batches, then in completions) is chosen over the replications of the
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
//! Then the series alone grew with the run (16 bytes a batch of 5: 128 MB of peak RSS
//! at 20 M requests, and 200 M were refused); bounded, 200 M run in the same memory
//! as 2 M.

use std::sync::Mutex;

use hdrhistogram::Histogram;

use crate::error::{Result, SimError};
use crate::model::Model;
use crate::spec::{RunSpec, SERIES_MAX};

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

/// The two series the warm-up cut is computed on, one value per batch of `batch`
/// completions: 5 (MSER-5) until the run fills [`SERIES_MAX`] batches, then doubled at
/// each fill by merging adjacent pairs.
///
/// What coarsening does to the rule: MSER-5 on batches of 5 becomes MSER-b on
/// batches of b = 5 * 2^j, the same criterion (the squared standard error of the
/// truncated mean, bias included) on a coarser series whose batch means are exactly
/// the averages of the finer ones. The truncation point can only land on a multiple
/// of b completions, and MSER's usual overshoot (it also deletes a first kept batch
/// that happens to be far from the mean) is then in coarse batches: on a constructed
/// step transient the coarse cut is within two coarse batches of the exact series'
/// (`coarse_series_cut_within_two_batches_of_the_exact_one`, which gives the figures).
/// A transient shorter than one coarse batch is averaged into the first batch and
/// MSER may keep it: with `SERIES_MAX` = 8,192 (at least 4,096 batches after a
/// merge) and the cut searched over the first half, that is a transient shorter than
/// 1/4,096 of the run, whose bias on the run's mean is below that fraction of its
/// size. With only tens of batches the rule degrades (see the test), which is why
/// the bound is thousands.
#[derive(Debug)]
pub(crate) struct Series {
    /// Batch means of the response times (good and bad completions).
    pub(crate) rt: Vec<f64>,
    /// Time-average number of requests on the server during each batch (which shows
    /// transients of the state itself, drops and buffer, that response times hide
    /// behind a full buffer).
    pub(crate) occupancy: Vec<f64>,
    /// Simulated time each batch lasted, to merge occupancies by time.
    pub(crate) dt: Vec<f64>,
    /// Completions per batch.
    pub(crate) batch: u64,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            rt: Vec::new(),
            occupancy: Vec::new(),
            dt: Vec::new(),
            batch: 5,
        }
    }
}

impl Series {
    /// Merges adjacent batches in pairs (an odd last batch, half of a coarse one, is
    /// dropped) and doubles the batch size.
    fn halve(&mut self) {
        let pairs = self.rt.len() / 2;
        for i in 0..pairs {
            let (a, b) = (2 * i, 2 * i + 1);
            self.rt[i] = (self.rt[a] + self.rt[b]) / 2.0;
            let dt = self.dt[a] + self.dt[b];
            // A batch of zero length repeats its predecessor's occupancy: it weighs
            // nothing here.
            self.occupancy[i] = if dt > 0.0 {
                (self.occupancy[a] * self.dt[a] + self.occupancy[b] * self.dt[b]) / dt
            } else {
                self.occupancy[b]
            };
            self.dt[i] = dt;
        }
        self.rt.truncate(pairs);
        self.occupancy.truncate(pairs);
        self.dt.truncate(pairs);
        self.batch *= 2;
    }

    /// This series at batches of `batch` completions (a multiple of its own by a
    /// power of two), to average it with coarser ones.
    pub(crate) fn coarsened(&self, batch: u64) -> Series {
        let mut s = Series {
            rt: self.rt.clone(),
            occupancy: self.occupancy.clone(),
            dt: self.dt.clone(),
            batch: self.batch,
        };
        while s.batch < batch {
            s.halve();
        }
        s
    }

    /// Number of batches.
    pub(crate) fn len(&self) -> usize {
        self.rt.len()
    }

    /// Bytes held (the capacity, not the length).
    #[cfg(test)]
    fn bytes(&self) -> usize {
        8 * (self.rt.capacity() + self.occupancy.capacity() + self.dt.capacity())
    }
}

/// Builds the [`Series`] as completions arrive.
#[derive(Debug)]
struct Batcher {
    series: Series,
    /// Most batches before a merge (a power of two).
    max: usize,
    /// Sum of the response times of the current batch so far.
    sum: f64,
    /// Completions left to the end of the current batch (a countdown, not `n %
    /// batch`: no division per completion).
    left: u64,
    /// Time and occupancy integral at the end of the previous batch.
    last: (f64, f64),
    /// The previous batch's occupancy, repeated for a batch of zero length.
    occupancy: f64,
}

impl Batcher {
    /// A batcher for a window of `target` completions (`u64::MAX`: unknown) that
    /// holds at most `max` batches.
    fn new(open: &Cum, target: u64, max: usize) -> Batcher {
        // Reserve the whole series when its length is known: growing by doubling
        // left up to half of it unused.
        let batches = if target == u64::MAX {
            0
        } else {
            (target / 5).min(max as u64) as usize
        };
        Batcher {
            series: Series {
                rt: Vec::with_capacity(batches),
                occupancy: Vec::with_capacity(batches),
                dt: Vec::with_capacity(batches),
                batch: 5,
            },
            max,
            sum: 0.0,
            left: 5,
            last: (open.t, open.in_system),
            occupancy: 0.0,
        }
    }

    /// Adds completion number `n` (from 1) of the window; `now` includes it.
    #[inline]
    fn push(&mut self, o: Obs, n: u64, now: &Cum) {
        self.sum += o.rt();
        self.left -= 1;
        if self.left == 0 {
            let batch = self.series.batch;
            debug_assert_eq!(n % batch, 0);
            self.series.rt.push(self.sum / batch as f64);
            self.sum = 0.0;
            let dt = now.t - self.last.0;
            if dt > 0.0 {
                self.occupancy = (now.in_system - self.last.1) / dt;
            }
            self.series.occupancy.push(self.occupancy);
            self.series.dt.push(dt);
            self.last = (now.t, now.in_system);
            if self.series.len() == self.max {
                // At a boundary of the doubled batch too: `n` is `max * batch`.
                self.series.halve();
            }
            self.left = self.series.batch;
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
            self.batcher = Some(Batcher::new(&now, self.target, SERIES_MAX));
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
    /// The engine's run to `kept` completions (`engine::run_to`), handed over
    /// by the engine that made the replication, so that the window, which the
    /// engine uses, does not name the engine back.
    pub(crate) run_to: RunTo,
}

/// How a replication is run again up to a count of completions: (model, spec,
/// point, replication, completions) → the counters and histograms there.
pub(crate) type RunTo = fn(&Model, &RunSpec, usize, u32, u64) -> Result<Prefix>;

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

    /// Number of whole batches recorded (0 with a fixed warm-up, which keeps no
    /// series), of `series().batch` completions each.
    pub(crate) fn batches(&self) -> usize {
        self.series.len()
    }

    /// The batch series of this replication (see [`Series`]).
    pub(crate) fn series(&self) -> &Series {
        &self.series
    }

    /// The counters and the histograms of the good response times after the first
    /// `kept` completions: runs the replication again up to there when `kept > 0`.
    fn at_cut(&self, kept: u64) -> Result<(Cum, Hists)> {
        if kept == 0 {
            return Ok((self.open, Hists::new()));
        }
        let again = self.again.as_ref().ok_or_else(|| {
            SimError::InvalidRun("this replication cannot be run again to its cut".into())
        })?;
        let prefix = (again.run_to)(&again.model, &again.spec, again.point, again.rep, kept)?;
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

    /// Deletes the first `deleted` completions (a cut chosen on batches: at most the
    /// whole batches recorded) and computes the metrics of the rest, up to the end of
    /// the run.
    pub(crate) fn close(&self, deleted: u64) -> Result<RepOutput> {
        let (end, cores, events) = (self.end, self.cores, self.events);
        let d = deleted.min(self.batches() as u64 * self.series.batch);
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
            warmup_deleted: d,
            warmup_time: start.t,
            kept: self.count - d,
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

    /// Feeds `n` completions whose response times carry a transient over the first
    /// `transient` completions (`step`: 10 s then the steady 1 s; otherwise a ramp
    /// from 10 s down to 1 s) and exponential noise of mean 1 s, one per simulated
    /// second, into a batcher of at most `max` batches, with occupancy 2 throughout
    /// (the response times decide).
    fn transient_series(n: u64, transient: u64, step: bool, max: usize) -> Series {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(27);
        let mut b = Batcher::new(&cum(0.0, 0, 0.0), n, max);
        for i in 1..=n {
            let left = (1.0 - i as f64 / transient as f64).max(0.0);
            let extra = if step { 9.0 * left.ceil() } else { 9.0 * left };
            let rt = extra - rng.random::<f64>().ln();
            b.push(Obs::new(rt, rt, true), i, &cum(i as f64, i, 2.0 * i as f64));
        }
        b.series
    }

    /// MSER's cut in completions, as `warmup` computes it.
    fn cut(s: &Series) -> u64 {
        crate::estimate::mser(&s.rt).max(crate::estimate::mser(&s.occupancy)) as u64 * s.batch
    }

    /// The coarsened series (at most 1,024 batches here, so 625 batches of 320 at the
    /// end of 200,000 completions) finds the exact MSER-5 series' truncation point
    /// within two coarse batches, on a step transient of 32,000 completions (100
    /// coarse batches). Not within one: the exact series cut at 32,000 and the coarse
    /// one at 32,640. MSER deletes a kept batch whenever its squared deviation
    /// exceeds about twice the variance of the rest (about 16% of batches at the
    /// start of the steady state), so on any series it overshoots by a batch or two,
    /// and a coarse batch is 64 of the exact ones. A step of 30,000, inside a coarse
    /// batch: 30,000 against 30,400.
    ///
    /// On a ramp (the same 30,000 completions decaying linearly) the exact series cut
    /// at 28,115 and the coarse one at 30,400, the ramp's end rounded up to a batch:
    /// 7 coarse batches apart, 1.1% of the run, the faint end of the ramp drowning in
    /// the noise of batches of 5. With at most 64 batches (39 of 5,120) the ramp cut
    /// at 51,200: with tens of batches MSER's minimum wanders; `SERIES_MAX` keeps at
    /// least 4,096.
    #[test]
    fn coarse_series_cut_within_two_batches_of_the_exact_one() {
        let exact = transient_series(200_000, 32_000, true, usize::MAX);
        assert_eq!((exact.batch, exact.len()), (5, 40_000));
        let coarse = transient_series(200_000, 32_000, true, 1024);
        assert!(
            coarse.len() == 625 && coarse.batch == 320,
            "{} x {}",
            coarse.len(),
            coarse.batch
        );
        let (e, c) = (cut(&exact), cut(&coarse));
        assert!(e.abs_diff(32_000) <= 5, "the exact cut {e} misses the step");
        assert!(
            e.abs_diff(c) <= 2 * coarse.batch,
            "exact cut {e}, coarse cut {c} (batch {})",
            coarse.batch
        );
        // Merging is averaging: the coarse series' mean is the exact one's.
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!((mean(&coarse.rt) - mean(&exact.rt)).abs() < 1e-9);
        // The ramp: both cuts at its end, within 2% of the run.
        let exact = cut(&transient_series(200_000, 30_000, false, usize::MAX));
        let coarse = cut(&transient_series(200_000, 30_000, false, 1024));
        assert!(
            exact.abs_diff(coarse) <= 4_000 && exact > 25_000,
            "ramp: exact {exact}, coarse {coarse}"
        );
    }

    /// Regression (issue 27): the series grew with the run (128 MB of peak RSS at
    /// 20 M requests, 200 M refused); it now holds at most `SERIES_MAX` batches.
    #[test]
    fn the_series_is_bounded_however_long_the_run() {
        let s = transient_series(2_000_000, 1_000, true, SERIES_MAX);
        assert!(
            s.len() <= SERIES_MAX && s.len() >= SERIES_MAX / 2,
            "{}",
            s.len()
        );
        assert!(s.bytes() <= 24 * SERIES_MAX, "{} bytes", s.bytes());
        // A run short of the bound keeps MSER-5's batches of 5.
        assert_eq!(transient_series(40_000, 1_000, true, SERIES_MAX).batch, 5);
    }
}
