//! The progress bar of a run: repeats of a measured run, points of a
//! simulated one; hidden when the output is no terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::experiment::Plan;

/// The bar for `plan`, shown on stderr when `show`.
pub(super) fn progress_bar(show: bool, plan: &Plan, simulated: bool) -> ProgressBar {
    let points = plan.points.len() as u64;
    let total = if simulated {
        points
    } else {
        points * u64::from(plan.repeats)
    };
    let bar = ProgressBar::with_draw_target(
        Some(total),
        if show {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} {unit} ETA {eta} {msg}",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar())
    .progress_chars("=> ");
    let unit = if simulated { "points" } else { "repeats" };
    bar.set_style(style.with_key(
        "unit",
        move |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = w.write_str(unit);
        },
    ));
    bar
}
