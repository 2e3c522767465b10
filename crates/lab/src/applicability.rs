//! Where a prediction applies: the one rule that decides, point by point,
//! whether the model's prediction is drawn in a figure and scored in the
//! accuracy table.
//!
//! A model predicts the server it describes, measured as it assumes. Scoring
//! it anywhere else measures the mismatch, not the model: `tls` scored one
//! FCFS loop on the thread, pool and prefork engines, whose threads the
//! kernel time-slices, and at 24 points where the load generator, not the
//! server, was the bottleneck. So a prediction is withheld at a point when
//!
//! - the experiment says which servers the model describes
//!   (`[predict.applies] servers`) and the point's server is not one of them,
//!   with the experiment's `because` as the reason; or
//! - the point failed the client check: its figures are the client's, and no
//!   model of the server can be judged against them.
//!
//! The prediction stays in `results.json` (it was computed); the report says
//! where it was withheld and why, so that a reader sees every point.

use crate::experiment::Experiment;
use crate::protocol::CheckKind;
use crate::results::PointRecord;

/// Why the prediction does not apply at `p`, or `None` where it does.
pub fn why_not(exp: &Experiment, p: &PointRecord) -> Option<String> {
    if let Some(a) = exp.predict.as_ref().and_then(|m| m.applies.as_ref()) {
        let server = p.server.as_deref().unwrap_or("");
        if !a.servers.iter().any(|s| s.get_ref() == server) {
            let described: Vec<&str> = a.servers.iter().map(|s| s.get_ref().as_str()).collect();
            return Some(format!(
                "the model describes {} only: {}",
                described.join(", "),
                a.because
            ));
        }
    }
    if p.checks
        .iter()
        .any(|c| c.kind == CheckKind::Client && !c.passed)
    {
        return Some(
            "the load generator was the bottleneck (client check failed): \
             the figures are the client's, not the modelled server's"
                .into(),
        );
    }
    None
}

/// The points of `points` with a prediction that does not apply, each with its
/// reason: (label, reason).
pub fn withheld<'a>(
    exp: &Experiment,
    points: impl IntoIterator<Item = &'a PointRecord>,
) -> Vec<(String, String)> {
    points
        .into_iter()
        .filter(|p| !p.predicted.is_empty() || !p.exact.is_empty())
        .filter_map(|p| Some((p.label(), why_not(exp, p)?)))
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::Check;
    use crate::results::{Stat, Status};
    use std::collections::BTreeMap;

    pub(crate) fn experiment(applies: &str) -> Experiment {
        let text = format!(
            "name = \"t\"\ntitle = \"t\"\nquestion = \"q\"\n\
             [[axis]]\nname = \"users\"\nlabel = \"users\"\nvalues = [1, 2, 4]\n\
             [[server]]\nlabel = \"epoll\"\nengine = \"epoll\"\n\
             [[server]]\nlabel = \"thread\"\nengine = \"thread\"\n\
             [load]\nusers = \"{{users}}\"\npath = \"/\"\n\
             [predict]\nusers = \"{{users}}\"\nservice = \"8us\"\nthink = \"0\"\n{applies}"
        );
        toml::from_str(&text).unwrap()
    }

    pub(crate) fn point(server: &str, client_ok: bool) -> PointRecord {
        PointRecord {
            index: 0,
            server: Some(server.into()),
            vars: vec![("users".into(), crate::experiment::Scalar::Int(2))],
            status: Status::Ok,
            reason: None,
            command: None,
            repeats: vec![],
            windows: vec![],
            stopped: None,
            checks: vec![Check {
                kind: CheckKind::Client,
                passed: client_ok,
                detail: "load generator CPU 99%".into(),
            }],
            summary: BTreeMap::new(),
            unmeasurable: BTreeMap::new(),
            predicted: BTreeMap::from([(crate::metric::Metric::Throughput, Stat::exact(1.0))]),
            exact: BTreeMap::new(),
            notes: vec![],
        }
    }

    const ONE_LOOP: &str = "[predict.applies]\nservers = [\"epoll\"]\n\
                            because = \"it is one FCFS loop on one core\"\n";

    #[test]
    fn a_server_the_model_does_not_describe_is_withheld_with_the_reason() {
        let exp = experiment(ONE_LOOP);
        assert_eq!(why_not(&exp, &point("epoll", true)), None);
        let why = why_not(&exp, &point("thread", true)).unwrap();
        assert_eq!(
            why,
            "the model describes epoll only: it is one FCFS loop on one core"
        );
        // Without [predict.applies], the model describes every server.
        assert_eq!(why_not(&experiment(""), &point("thread", true)), None);
    }

    #[test]
    fn a_client_bound_point_is_withheld() {
        let exp = experiment("");
        let why = why_not(&exp, &point("epoll", false)).unwrap();
        assert!(why.contains("client check failed"), "{why}");
        let w = withheld(&exp, &[point("epoll", false), point("epoll", true)]);
        assert_eq!(w.len(), 1);
    }
}
