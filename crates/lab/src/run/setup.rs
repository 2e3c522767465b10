//! What a run needs before its first point: the temporary directory with its
//! served files, the one plan, the CPU placement and the kernel's scheduler
//! figures; and what `results.json` records of them.

use crate::error::{LabError, Result};
use crate::experiment::{Experiment, Plan};
use crate::process::cpu::Placement;
use crate::store::machine::Machine;
use crate::store::results::{PointRecord, RunResults, SCHEMA};

use super::options::RunOptions;

/// What a run needs before its first point: the temporary directory, the
/// plan, the CPU placement and the kernel's scheduler figures.
pub(super) struct Setup {
    /// Served files, server logs, peer configurations; removed however the run ends.
    #[allow(
        dead_code,
        reason = "held so that the directory lives as long as the run"
    )]
    tmp: tempfile::TempDir,
    pub(super) plan: Plan,
    pub(super) placement: Placement,
    kernel: Option<crate::process::sched::KernelSched>,
    /// The machine and the checkout's commit, read once when the run starts:
    /// `results.json` is written after every point, and an edit made in the
    /// checkout while the run goes on says nothing about the binary running.
    machine: Machine,
}

impl Setup {
    /// Plans the experiment once, from its text and `opts` (the other sweep
    /// is only checked, so that a mistake in either is reported now), and
    /// places it on CPUs.
    pub(super) fn new(exp: &Experiment, opts: &RunOptions) -> Result<Setup> {
        let tmp = tempfile::Builder::new()
            .prefix(&format!(
                "servelab-lab-{}-{}-",
                exp.name(),
                std::process::id()
            ))
            .tempdir()
            .map_err(|e| LabError::io(std::env::temp_dir(), e))?;
        // Peers that drop privileges (h2o as root) must still read the files.
        let _ = std::fs::set_permissions(
            tmp.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
        let options = opts.plan_options();
        // The other sweep is planned only to report its mistakes now, not on the
        // next run (and before the kernel is measured, which takes a second);
        // that plan is dropped.
        exp.plan(
            &crate::experiment::PlanOptions {
                quick: !options.quick,
                ..options
            },
            tmp.path(),
        )?;
        let placement = if exp.is_simulated() {
            Placement {
                server: vec![],
                load: vec![],
            }
        } else {
            Placement::plan()
        };
        let kernel = exp.uses_kernel().then(|| {
            let cpu = placement.server.first().copied().unwrap_or_else(|| {
                crate::process::cpu::allowed_cpus()
                    .first()
                    .copied()
                    .unwrap_or(0)
            });
            crate::process::sched::KernelSched::detect(cpu)
        });
        // The one plan of the run: the experiment's text and the command
        // line's options, with the kernel's figures where its templates use them.
        let unmeasured = crate::process::sched::KernelSched::unmeasured();
        let plan = exp.plan_with(&options, tmp.path(), kernel.as_ref().unwrap_or(&unmeasured))?;
        Ok(Setup {
            machine: Machine::detect(&opts.version, opts.exe.parent()),
            tmp,
            plan,
            placement,
            kernel,
        })
    }

    /// What `results.json` holds for a run of this setup.
    pub(super) fn results(
        &self,
        exp: &Experiment,
        opts: &RunOptions,
        started_utc: String,
        duration_s: f64,
        interrupted: bool,
        points: Vec<PointRecord>,
    ) -> RunResults {
        RunResults {
            schema: SCHEMA.into(),
            experiment: exp.name().into(),
            source_file: exp.source.file.clone(),
            source: exp.source.text.clone(),
            command: opts.command.clone(),
            quick: opts.quick,
            repeats: self.plan.repeats,
            protocol: (!exp.is_simulated()).then(|| protocol_of(&self.plan)),
            started_utc,
            duration_s,
            machine: self.machine.clone(),
            placement: if exp.is_simulated() {
                "simulation only: no server or load generator".into()
            } else {
                self.placement.describe()
            },
            interrupted,
            kernel: self.kernel.clone(),
            points,
        }
    }
}

/// The protocol the plan's measured points follow, for `results.json`.
fn protocol_of(plan: &Plan) -> crate::protocol::Protocol {
    let loads = plan.points.iter().filter_map(|p| match &p.work {
        crate::experiment::Work::Measure(m) => Some(&m.load),
        crate::experiment::Work::Simulate(_) => None,
    });
    let (mut window, mut warmup) = (f64::INFINITY, f64::INFINITY);
    for l in loads {
        window = window.min(l.duration.as_secs_f64());
        warmup = warmup.min(l.warmup.as_secs_f64());
    }
    crate::protocol::Protocol {
        quick: plan.quick,
        window_s: if window.is_finite() { window } else { 0.0 },
        warmup_s: if warmup.is_finite() { warmup } else { 0.0 },
        min_repeats: plan.repeats,
        max_repeats: plan.max_repeats,
        precision: plan.precision,
        headline: plan.headline,
        interleaved: None,
    }
}

/// Creates the served files of the plan under `tmp/www`.
pub(super) fn write_files(plan: &Plan) -> Result<()> {
    let root = plan.tmp.join("www");
    std::fs::create_dir_all(&root).map_err(|e| LabError::io(&root, e))?;
    let index = root.join("index.html");
    std::fs::write(
        &index,
        "<!doctype html><title>servelab lab</title><p>lab root</p>\n",
    )
    .map_err(|e| LabError::io(&index, e))?;
    for f in &plan.files {
        let path = root.join(&f.name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| LabError::io(parent, e))?;
        }
        std::fs::write(&path, file_bytes(f.size)).map_err(|e| LabError::io(&path, e))?;
    }
    Ok(())
}

/// Printable, non-repeating-looking bytes (lines of 76), so compression or a
/// page-cache trick cannot make one size cheaper than another.
fn file_bytes(size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(size as usize);
    let mut x: u32 = 0x9e37_79b9;
    while (out.len() as u64) < size {
        if out.len() % 76 == 75 {
            out.push(b'\n');
        } else {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            out.push(b'a' + (x % 26) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_bytes_have_the_size_asked() {
        for n in [0, 1, 75, 76, 77, 5000] {
            assert_eq!(file_bytes(n).len() as u64, n);
        }
        assert!(file_bytes(200).iter().all(|b| b.is_ascii()));
    }
}
