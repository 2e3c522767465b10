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
//! - the model's CPU demand per request, its utilisation over its throughput
//!   (times its cores), lies further than `[predict.applies] cpu_within_pct`
//!   from the 95% interval of the CPU per request measured there (`tls` gave
//!   one 8 us demand to engines that spent 6.2 to 17.3 us); or
//! - the point failed the client check: its figures are the client's, and no
//!   model of the server can be judged against them.
//!
//! The prediction stays in `results.json` (it was computed); the report says
//! where it was withheld and why, so that a reader sees every point.

use crate::experiment::{Experiment, Scalar};
use crate::metric::{self, Metric};
use crate::protocol::CheckKind;
use crate::store::results::PointRecord;

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
    if let Some(why) = demand_differs(exp, p) {
        return Some(why);
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

/// Why the model's CPU demand per request is not the one measured at `p`,
/// when the experiment asks (`cpu_within_pct`) and both are known.
fn demand_differs(exp: &Experiment, p: &PointRecord) -> Option<String> {
    let model = exp.predict.as_ref()?;
    let within = model.applies.as_ref()?.cpu_within_pct?;
    let cores = match model.cores.as_ref().map(|c| c.get_ref()) {
        None => 1.0,
        Some(Scalar::Str(t)) => {
            let axis = t.strip_prefix('{')?.strip_suffix('}')?;
            p.var(axis)?.as_f64()?
        }
        Some(v) => v.as_f64()?,
    };
    let u = p.predicted.get(&Metric::Utilisation)?.mean / 100.0;
    let x = p.predicted.get(&Metric::Throughput)?.mean;
    let measured = p.summary.get(&Metric::CpuUs)?;
    if x <= 0.0 || !measured.mean.is_finite() {
        return None;
    }
    let demand = u * cores / x * 1e6;
    let slack = within / 100.0;
    let (lo, hi) = (
        measured.ci95_lo * (1.0 - slack),
        measured.ci95_hi * (1.0 + slack),
    );
    if (lo..=hi).contains(&demand) {
        return None;
    }
    Some(format!(
        "the model's CPU demand per request, {} us, lies more than {}% outside the {} to {} us measured here",
        metric::fmt(demand),
        metric::fmt_tick(within),
        metric::fmt(measured.ci95_lo),
        metric::fmt(measured.ci95_hi),
    ))
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
    use crate::metric::Metric;
    use crate::protocol::Check;
    use crate::store::results::Stat;
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
            server: Some(server.into()),
            vars: vec![("users".into(), crate::experiment::Scalar::Int(2))],
            checks: vec![Check {
                kind: CheckKind::Client,
                passed: client_ok,
                detail: "load generator CPU 99%".into(),
            }],
            predicted: BTreeMap::from([(Metric::Throughput, Stat::exact(1.0))]),
            ..crate::store::results::tests::empty_point()
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
    fn a_point_whose_measured_cpu_is_not_the_models_demand_is_withheld() {
        let exp = experiment(
            "[predict.applies]\nservers = [\"epoll\", \"thread\"]\nbecause = \"b\"\n\
             cpu_within_pct = 20\n",
        );
        let mut p = point("epoll", true);
        // 8 us a request: 80% busy at 100,000 requests/s on one core.
        p.predicted = BTreeMap::from([
            (Metric::Utilisation, Stat::exact(80.0)),
            (Metric::Throughput, Stat::exact(1e5)),
        ]);
        p.summary = BTreeMap::from([(Metric::CpuUs, Stat::interval(7.0, 0.5, 3))]);
        assert_eq!(why_not(&exp, &p), None, "8 us is within 20% of 6.5..7.5 us");
        p.summary = BTreeMap::from([(Metric::CpuUs, Stat::interval(17.3, 0.6, 3))]);
        let why = why_not(&exp, &p).unwrap();
        assert_eq!(
            why,
            "the model's CPU demand per request, 8.00 us, lies more than 20% outside the 16.7 to 17.9 us measured here"
        );
        // Not asked for: not checked.
        assert_eq!(why_not(&experiment(""), &p), None);
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
