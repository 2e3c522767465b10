//! The checks of an experiment that do not depend on a point: names, labels,
//! the kind of experiment, references between fields (a plot's axis, a
//! conclusion's servers), and whether a metric is one this kind of experiment
//! records. Run by [`Experiment::parse`]; the templated fields are checked by
//! planning, point by point ([`Experiment::plan`]).

use std::collections::BTreeSet;

use toml::Spanned;

use super::schema::{ConclusionKind, Experiment, Source};
use super::template::FieldError;
use crate::metric::Metric;

/// Checks `exp`; the first problem found, with its span.
pub(crate) fn experiment(exp: &Experiment) -> Result<(), FieldError> {
    name(exp)?;
    axes(exp)?;
    kind(exp)?;
    let labels = servers(exp)?;
    let metric = |m: &Spanned<Metric>| {
        if m.get_ref().recorded_by(exp.is_simulated()) {
            Ok(())
        } else {
            let kind = if exp.is_simulated() {
                "a simulated"
            } else {
                "a measured"
            };
            Err((
                m.span(),
                format!(
                    "{kind} experiment does not record `{}` (it records: {})",
                    m.get_ref(),
                    Metric::names(exp.is_simulated()).join(", ")
                ),
            ))
        }
    };
    let filter = |t: &Option<Spanned<toml::Table>>| {
        if let Some(t) = t {
            for k in t.get_ref().keys() {
                if exp.axis(k).is_none() {
                    return Err((t.span(), format!("`{k}` is not an axis")));
                }
            }
        }
        Ok(())
    };
    let server = |s: &Spanned<String>| {
        if labels.contains(s.get_ref()) {
            Ok(())
        } else {
            Err((s.span(), format!("no server labelled `{}`", s.get_ref())))
        }
    };
    if let Some(a) = exp.predict.as_ref().and_then(|m| m.applies.as_ref()) {
        for s in &a.servers {
            server(s)?;
        }
    }
    for plot in &exp.plots {
        let Some(axis) = exp.axis(plot.x.get_ref()) else {
            return Err((
                plot.x.span(),
                format!("`{}` is not an axis", plot.x.get_ref()),
            ));
        };
        // A text axis is drawn as categories (grouped bars named by its
        // values); it cannot carry a line or a log scale.
        if axis.log && axis.values.get_ref().iter().any(|v| v.as_f64().is_none()) {
            return Err((
                plot.x.span(),
                format!(
                    "axis `{}` is not numeric, it cannot have a log scale",
                    plot.x.get_ref()
                ),
            ));
        }
        metric(&plot.y)?;
        filter(&plot.filter)?;
        if let Some(r) = &plot.relative_to
            && r.get_ref() != "first"
        {
            server(r)?;
        }
    }
    skip(exp)?;
    protocol(exp)?;
    if let Some(h) = &exp.headline {
        metric(h)?;
    }
    if let Some(c) = &exp.conclusion {
        metric(&c.metric)?;
        filter(&c.at)?;
        match c.kind.get_ref() {
            ConclusionKind::Ratio => match (&c.a, &c.b) {
                (Some(a), Some(b)) => {
                    server(a)?;
                    server(b)?;
                }
                _ => {
                    return Err((
                        c.kind.span(),
                        "a `ratio` conclusion needs `a` and `b`".into(),
                    ));
                }
            },
            ConclusionKind::Scaling => match &c.x {
                Some(x) if exp.axis(x.get_ref()).is_some() => {}
                Some(x) => return Err((x.span(), format!("`{}` is not an axis", x.get_ref()))),
                None => return Err((c.kind.span(), "a `scaling` conclusion needs `x`".into())),
            },
            ConclusionKind::Best => {}
            ConclusionKind::Model if exp.predict.is_some() || exp.simulate.is_some() => {}
            ConclusionKind::Model => {
                return Err((c.kind.span(), "a `model` conclusion needs [predict]".into()));
            }
            ConclusionKind::Prediction if exp.predict.is_some() && exp.accuracy.is_some() => {}
            ConclusionKind::Prediction => {
                return Err((
                    c.kind.span(),
                    "a `prediction` conclusion needs [predict] and [accuracy]".into(),
                ));
            }
        }
    }
    for c in &exp.claims {
        if let Some(m) = &c.metric {
            metric(m)?;
        }
        if let Some(x) = &c.x
            && exp.axis(x.get_ref()).is_none()
        {
            return Err((x.span(), format!("`{}` is not an axis", x.get_ref())));
        }
        for t in [&c.a, &c.b, &c.at].into_iter().flatten() {
            for (k, v) in t.get_ref() {
                if k == "server" {
                    let label = match v {
                        toml::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    if !labels.contains(&label) {
                        return Err((t.span(), format!("no server labelled `{label}`")));
                    }
                } else if exp.axis(k).is_none() {
                    return Err((t.span(), format!("`{k}` is not an axis")));
                }
            }
        }
        use super::schema::ClaimTest;
        let needs = match c.test.get_ref() {
            ClaimTest::Compare => {
                c.metric.is_none() || c.expect.is_none() || c.a.is_none() || c.b.is_none()
            }
            ClaimTest::Trend => c.metric.is_none() || c.expect.is_none() || c.x.is_none(),
            ClaimTest::Untestable => c.reason.is_none(),
            ClaimTest::Prediction => exp.accuracy.is_none(),
        };
        if needs {
            return Err((
                c.test.span(),
                "a `compare` claim needs metric, a, b and expect; a `trend` needs metric, x and \
                 expect; a `prediction` one [predict] and [accuracy]; an `untestable` one its \
                 reason"
                    .into(),
            ));
        }
    }
    if let Some(a) = &exp.accuracy {
        for m in a
            .metrics
            .iter()
            .chain(a.targets.iter().flat_map(|t| &t.metrics))
        {
            metric(m)?;
        }
        if exp.predict.is_none() {
            let span = a.metrics.first().map_or(exp.name.span(), |m| m.span());
            return Err((
                span,
                "[accuracy] compares with [predict], which is missing".into(),
            ));
        }
    }
    Ok(())
}

/// Repeats and precision: a full run takes at least three repeats, and a
/// precision target is a percentage that can be reached.
fn protocol(exp: &Experiment) -> Result<(), FieldError> {
    use crate::protocol::MIN_REPEATS;
    if let Some(r) = &exp.repeats
        && *r.get_ref() < MIN_REPEATS
    {
        return Err((
            r.span(),
            format!(
                "a full run takes at least {MIN_REPEATS} repeats per point (one is an anecdote); \
                 fewer only under [quick] or with --repeats"
            ),
        ));
    }
    if let (Some(max), Some(min)) = (&exp.max_repeats, &exp.repeats)
        && max.get_ref() < min.get_ref()
    {
        return Err((
            max.span(),
            format!(
                "max_repeats {} is below repeats {}",
                max.get_ref(),
                min.get_ref()
            ),
        ));
    }
    if let Some(p) = &exp.precision_pct
        && !(p.get_ref().is_finite() && *p.get_ref() > 0.0 && *p.get_ref() < 100.0)
    {
        return Err((
            p.span(),
            format!("precision_pct {} must be a percentage above 0", p.get_ref()),
        ));
    }
    Ok(())
}

/// The name is the results directory's prefix.
fn name(exp: &Experiment) -> Result<(), FieldError> {
    let name = exp.name.get_ref();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err((
            exp.name.span(),
            format!("name `{name}` may hold only a-z, 0-9, - and _"),
        ));
    }
    Ok(())
}

fn axes(exp: &Experiment) -> Result<(), FieldError> {
    let mut names = BTreeSet::new();
    for a in &exp.axes {
        let n = a.name.get_ref();
        if n == "tmp" || !names.insert(n.clone()) {
            return Err((
                a.name.span(),
                format!("axis name `{n}` is reserved or used twice"),
            ));
        }
        if a.values.get_ref().is_empty() {
            return Err((a.values.span(), "an axis needs at least one value".into()));
        }
        if let Some(q) = &a.quick
            && q.get_ref().is_empty()
        {
            return Err((q.span(), "quick values may not be empty".into()));
        }
        if a.display_divisor
            .is_some_and(|d| !(d.is_finite() && d > 0.0))
        {
            return Err((a.name.span(), "display_divisor must be positive".into()));
        }
    }
    Ok(())
}

/// Each `skip` names axes and values they have, and leaves a point to run.
fn skip(exp: &Experiment) -> Result<(), FieldError> {
    for t in &exp.skip {
        for (k, wanted) in t.get_ref() {
            let Some(axis) = exp.axis(k) else {
                return Err((t.span(), format!("skip: `{k}` is not an axis")));
            };
            let values = super::template::listed(wanted);
            for w in values {
                if !axis
                    .values
                    .get_ref()
                    .iter()
                    .any(|v| super::template::same_value(v, w))
                {
                    return Err((t.span(), format!("skip: axis `{k}` has no value {w}")));
                }
            }
        }
    }
    Ok(())
}

/// Simulated (`[simulate]`, no servers) or measured (servers and `[load]`).
fn kind(exp: &Experiment) -> Result<(), FieldError> {
    match (&exp.simulate, exp.servers.is_empty()) {
        (Some(s), false) => Err((
            s.users.span(),
            "[simulate] experiments have no [[server]]".into(),
        )),
        (None, true) => Err((
            exp.name.span(),
            "a measured experiment needs at least one [[server]]".into(),
        )),
        (None, false) if exp.load.is_none() => {
            Err((exp.name.span(), "a measured experiment needs [load]".into()))
        }
        _ => Ok(()),
    }
}

/// Labels are unique and each server is an engine or a peer; returns the labels.
fn servers(exp: &Experiment) -> Result<BTreeSet<String>, FieldError> {
    let mut labels = BTreeSet::new();
    for s in &exp.servers {
        if !labels.insert(s.label.get_ref().clone()) {
            return Err((
                s.label.span(),
                format!("server label `{}` used twice", s.label.get_ref()),
            ));
        }
        if s.engine.is_some() == s.peer.is_some() {
            return Err((
                s.label.span(),
                "a server needs exactly one of `engine` and `peer`".into(),
            ));
        }
    }
    Ok(labels)
}

// Here rather than in `schema.rs`, so that the types do not name their check:
// reading an experiment is deserialising it and then checking it.
impl Experiment {
    /// Reads an experiment and checks what does not depend on a point (names,
    /// references between fields, metrics); `file` names it in error messages.
    /// The templated fields are checked when it is planned ([`Experiment::plan`]).
    pub fn parse(text: &str, file: &str) -> crate::error::Result<Experiment> {
        let source = Source {
            file: file.to_string(),
            text: text.to_string(),
        };
        let mut exp: Experiment = toml::from_str(text).map_err(|e| {
            let msg = e.message().trim().to_string();
            source.error_at(e.span().unwrap_or(0..0), msg)
        })?;
        exp.source = source;
        experiment(&exp).map_err(|(span, m)| exp.source.error_at(span, m))?;
        Ok(exp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
title = "T"
question = "Q?"
[[axis]]
name = "users"
label = "users"
values = [1, 2, 4]
[[server]]
label = "pool"
engine = "pool"
[load]
users = "{users}"
duration = "10s"
path = "/a.bin"
[[plot]]
title = "X"
x = "users"
y = "throughput"
"#;

    fn err(text: &str) -> String {
        Experiment::parse(text, "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let e = err(&GOOD.replace("duration = \"10s\"", "duration = = \"10s\""));
        assert!(e.starts_with("t.toml:14:"), "{e}");
    }

    #[test]
    fn an_unknown_metric_names_its_line_and_the_known_ones() {
        let e = err(&GOOD.replace("\"throughput\"", "\"thruput\""));
        assert!(
            e.starts_with("t.toml:19:5: unknown metric `thruput` (known: throughput, mean_ms"),
            "{e}"
        );
        let e = err(&GOOD.replace("\"throughput\"", "\"utilisation\""));
        assert!(
            e.starts_with("t.toml:19:5: a measured experiment does not record `utilisation`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_field_or_conclusion_kind_is_an_error() {
        assert!(err(&GOOD.replace("path =", "pth =")).contains("pth"));
        let e = err(
            &(GOOD.to_string() + "[conclusion]\nkind = \"fastest\"\nmetric = \"throughput\"\n")
        );
        assert!(
            e.starts_with("t.toml:21:8: unknown variant `fastest`"),
            "{e}"
        );
        let e = err(&(GOOD.to_string()
            + "[conclusion]\nkind = \"ratio\"\nmetric = \"throughput\"\na = \"pool\"\nb = \"serial\"\n"));
        assert!(e.contains("no server labelled `serial`"), "{e}");
    }

    #[test]
    fn a_prediction_applies_only_to_servers_the_experiment_has() {
        let predict = "[predict]\nusers = \"{users}\"\nservice = \"8us\"\nthink = \"0\"\n\
                       [predict.applies]\nbecause = \"one loop\"\nservers = ";
        let e = err(&format!("{GOOD}{predict}[\"epoll\"]\n"));
        assert!(e.contains("no server labelled `epoll`"), "{e}");
        assert!(Experiment::parse(&format!("{GOOD}{predict}[\"pool\"]\n"), "t.toml").is_ok());
    }
}
