//! Before any measurement: is the URL's server there, and does it answer
//! with success? A few requests from one user say so in one clear line,
//! rather than a staircase of failed steps.

use std::time::Duration;

use servelab_load::{LoadSpec, Target, Workload};

use servelab_lab::{LabError, Result};

/// Requests of the probe.
const PROBE_REQUESTS: u64 = 5;
/// The longest a probe request may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends a few requests to `url`; an error says why the URL cannot be measured.
pub(crate) fn probe(url: &str) -> Result<()> {
    let mut s = LoadSpec::new(vec![Target::new(url.to_string())]);
    s.workload = Workload::Closed {
        users: 1,
        session: None,
        think: servelab_dist::Dist::ZERO,
    };
    s.requests = Some(PROBE_REQUESTS);
    s.duration = None;
    s.timeout = Some(servelab_dist::Dist::constant(PROBE_TIMEOUT.as_secs_f64()));
    s.retries = Some(0);
    s.threads = 1;
    let report = servelab_load::run(&s).map_err(|e| LabError::Other(format!("{url}: {e}")))?;
    if report.unreachable || report.counts.completed == 0 {
        let why = report
            .connect_failure
            .map_or_else(|| "no answer".to_string(), |f| f.to_string());
        return Err(LabError::Other(format!("cannot reach {url}: {why}")));
    }
    if report.counts.ok == 0 {
        let statuses: Vec<String> = report
            .status
            .iter()
            .map(|(k, n)| format!("{n}× {k}"))
            .collect();
        let what = if statuses.is_empty() {
            format!(
                "{} failed, {} timed out",
                report.counts.failed, report.counts.timeouts
            )
        } else {
            statuses.join(", ")
        };
        return Err(LabError::Other(format!(
            "{url} answers with errors ({what}); predict needs a URL that succeeds"
        )));
    }
    Ok(())
}
