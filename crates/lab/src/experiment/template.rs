//! Placeholders: `{AXIS}` becomes the point's value of that axis and `{tmp}` the
//! run's temporary directory, in any templated field of an experiment.
//! `{kernel_quantum}` and `{kernel_switch}` become the kernel scheduler's
//! effective slice and context-switch cost in seconds, as the run measured them
//! on the server's CPU (see [`crate::process::sched`]).
//!
//! A field that cannot be expanded or read is a [`FieldError`]: the byte span of
//! the field in the file and what is wrong, turned into `file:line:column:
//! message` by [`Source::error_at`](super::Source).

use std::ops::Range;

use super::schema::{Scalar, Template};

/// A problem with one field: its byte span in the file and the message.
pub(crate) type FieldError = (Range<usize>, String);

/// The substitutions of one point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vars<'a> {
    /// The point's axis values, in axis order.
    pub(crate) point: &'a [(String, Scalar)],
    /// The run's temporary directory.
    pub(crate) tmp: &'a str,
    /// The kernel's quantum and switch cost, seconds.
    pub(crate) kernel: (f64, f64),
}

/// Replaces `{AXIS}` and `{tmp}` in a templated field.
pub(crate) fn expand(t: &Template, vars: &Vars<'_>) -> Result<String, FieldError> {
    let text = t.get_ref().to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            return Err((t.span(), format!("unclosed `{{` in `{text}`")));
        };
        let key = &rest[open + 1..open + close];
        if key == "tmp" {
            out.push_str(vars.tmp);
        } else if key == "kernel_quantum" {
            out.push_str(&vars.kernel.0.to_string());
        } else if key == "kernel_switch" {
            out.push_str(&vars.kernel.1.to_string());
        } else if let Some((_, v)) = vars.point.iter().find(|(n, _)| n == key) {
            out.push_str(&v.to_string());
        } else {
            let known: Vec<&str> = vars.point.iter().map(|(n, _)| n.as_str()).collect();
            return Err((
                t.span(),
                format!(
                    "unknown placeholder `{{{key}}}` (axes: {}; and tmp, kernel_quantum, kernel_switch)",
                    known.join(", ")
                ),
            ));
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// A templated whole number.
pub(crate) fn parse_num<T: std::str::FromStr>(
    t: &Template,
    vars: &Vars<'_>,
    what: &str,
) -> Result<T, FieldError> {
    let text = expand(t, vars)?;
    text.trim().parse().map_err(|_| {
        (
            t.span(),
            format!("{what}: `{text}` is not a non-negative whole number"),
        )
    })
}

/// An optional templated whole number.
pub(crate) fn opt_num<T: std::str::FromStr>(
    t: &Option<Template>,
    vars: &Vars<'_>,
    what: &str,
) -> Result<Option<T>, FieldError> {
    t.as_ref().map(|t| parse_num(t, vars, what)).transpose()
}

/// A templated field read with `T`'s parser; the message names the field.
pub(crate) fn parse_with<T, E: std::fmt::Display>(
    t: &Template,
    vars: &Vars<'_>,
    what: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> Result<T, FieldError> {
    let text = expand(t, vars)?;
    parse(&text).map_err(|e| (t.span(), format!("{what}: {e}")))
}

/// The values a table gives a key: a list, or one value.
pub(crate) fn listed(w: &toml::Value) -> &[toml::Value] {
    match w {
        toml::Value::Array(a) => a.as_slice(),
        one => std::slice::from_ref(one),
    }
}

/// Whether an axis value is the value written in a table (numbers compare as
/// numbers, so `10` is `10.0` and `"10"`).
pub(crate) fn same_value(v: &Scalar, w: &toml::Value) -> bool {
    let text = match w {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    v.to_string() == text
        || v.as_f64()
            .zip(text.trim().parse::<f64>().ok())
            .is_some_and(|(a, b)| a == b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(text: &str) -> Template {
        #[derive(serde::Deserialize)]
        struct T {
            v: Template,
        }
        toml::from_str::<T>(&format!("v = \"{text}\"")).unwrap().v
    }

    #[test]
    fn placeholders_take_the_points_values_and_tmp() {
        let point = [("users".to_string(), Scalar::Int(8))];
        let vars = Vars {
            point: &point,
            tmp: "/t",
            kernel: (0.004, 5e-6),
        };
        assert_eq!(
            expand(&template("{tmp}/log-{users}"), &vars).unwrap(),
            "/t/log-8"
        );
        let (span, msg) = expand(&template("{user}"), &vars).unwrap_err();
        assert_eq!(span, 4..12);
        assert!(msg.contains("`{user}`") && msg.contains("users"), "{msg}");
        assert!(expand(&template("{users"), &vars).is_err());
        let n: u32 = parse_num(&template("{users}"), &vars, "users").unwrap();
        assert_eq!(n, 8);
        assert_eq!(
            expand(&template("{kernel_quantum}s/{kernel_switch}"), &vars).unwrap(),
            "0.004s/0.000005"
        );
    }
}
