//! The TLS keys of an experiment file (`[load] tls_resume`, `[predict]` and
//! `[simulate]` `session` and `first_demand`) are checked when the file is
//! planned, and reach the plan typed.

use std::path::Path;

use servelab_lab::builtin;
use servelab_lab::experiment::{PointTls, Trust, Work};

/// A measured experiment with one server given `args`, `tls_resume` in its
/// load (when given) and an axis `resume` of `values`.
fn measured(args: &str, resume: Option<&str>, values: &str) -> String {
    let resume = resume.map_or(String::new(), |r| format!("tls_resume = {r}\n"));
    format!(
        r#"name = "t"
title = "t"
question = "t?"
[[axis]]
name = "resume"
label = "resumption"
values = {values}
[[server]]
label = "epoll"
engine = "epoll"
args = {args}
[load]
users = 2
session = 1
{resume}path = "/x"
"#
    )
}

/// Loads and plans `text` (quick and full); the first point's TLS, or the
/// error as `bad.toml:LINE:COL: message`.
fn plan(text: &str) -> Result<Vec<Option<PointTls>>, String> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let strip = |e: &dyn std::fmt::Display| {
        e.to_string()
            .replace(&format!("{}/", tmp.path().display()), "")
    };
    let exp = builtin::load(path.to_str().unwrap()).map_err(|e| strip(&e))?;
    let mut out = Vec::new();
    for quick in [true, false] {
        let p = exp
            .plan(
                &servelab_lab::experiment::PlanOptions::sweep(quick),
                Path::new("/tmp/servelab-lab"),
            )
            .map_err(|e| strip(&e))?;
        if !quick {
            for point in p.points {
                let Work::Measure(m) = point.work else {
                    panic!("measured")
                };
                out.push(m.tls);
            }
        }
    }
    Ok(out)
}

#[test]
fn a_self_signed_server_is_loaded_insecure_with_the_planned_resumption() {
    let tls = plan(&measured(
        r#"["--tls-self-signed"]"#,
        Some(r#""{resume}""#),
        "[false, true]",
    ))
    .unwrap();
    assert_eq!(
        tls,
        [
            Some(PointTls {
                trust: Trust::Insecure,
                resume: false
            }),
            Some(PointTls {
                trust: Trust::Insecure,
                resume: true
            }),
        ]
    );
    // Without the key, sessions resume (as `load --tls-resume` does by default).
    let tls = plan(&measured(r#"["--tls-self-signed"]"#, None, "[1]")).unwrap();
    assert_eq!(tls[0].as_ref().map(|t| t.resume), Some(true));
}

#[test]
fn a_servers_certificate_file_is_what_the_load_trusts() {
    let tls = plan(&measured(
        r#"["--tls-cert", "/etc/c.pem", "--tls-key", "/etc/k.pem"]"#,
        Some("true"),
        "[1]",
    ))
    .unwrap();
    assert_eq!(
        tls[0].as_ref().map(|t| &t.trust),
        Some(&Trust::CaCert("/etc/c.pem".into()))
    );
    // A plain server is loaded over http.
    assert_eq!(plan(&measured("[]", None, "[1]")).unwrap(), [None]);
}

#[test]
fn tls_resume_is_checked_at_plan_time() {
    // Not a boolean, and only on the point whose axis value is wrong.
    let e = plan(&measured(
        r#"["--tls-self-signed"]"#,
        Some(r#""{resume}""#),
        r#"[true, "maybe"]"#,
    ))
    .unwrap_err();
    assert!(
        e.starts_with("bad.toml:15:14: tls_resume: expected true or false"),
        "{e}"
    );
    // For a server that does not serve TLS.
    let e = plan(&measured("[]", Some("false"), "[1]")).unwrap_err();
    assert!(
        e.starts_with("bad.toml:15:14: tls_resume: server `epoll` does not serve TLS"),
        "{e}"
    );
}

/// A simulated experiment with `session` and `first_demand` in `[simulate]`.
fn simulated(session: &str, first: &str) -> String {
    format!(
        r#"name = "s"
title = "s"
question = "s?"
[[axis]]
name = "session"
label = "session"
values = [1, 100]
[simulate]
users = 10
service = "1ms"
think = "0"
cores = 1
session = {session}
first_demand = {first}
[[plot]]
title = "x"
x = "session"
y = "throughput"
[conclusion]
kind = "best"
metric = "throughput"
"#
    )
}

#[test]
fn session_and_first_demand_reach_the_model_and_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("s.toml");
    std::fs::write(&path, simulated(r#""{session}""#, r#""const:4ms""#)).unwrap();
    let exp = builtin::load(path.to_str().unwrap()).unwrap();
    let p = exp
        .plan(
            &servelab_lab::experiment::PlanOptions::sweep(false),
            tmp.path(),
        )
        .unwrap();
    let models: Vec<_> = p
        .points
        .iter()
        .map(|pt| match &pt.work {
            Work::Simulate(m) => (m.model.session, m.model.first_demand.mean()),
            Work::Measure(_) => panic!("simulated"),
        })
        .collect();
    assert_eq!(models, [(Some(1), 0.004), (Some(100), 0.004)]);
    // `none` is one connection for the whole run.
    std::fs::write(&path, simulated(r#""none""#, r#""4ms""#)).unwrap();
    let exp = builtin::load(path.to_str().unwrap()).unwrap();
    let p = exp
        .plan(
            &servelab_lab::experiment::PlanOptions::sweep(false),
            tmp.path(),
        )
        .unwrap();
    assert!(matches!(&p.points[0].work, Work::Simulate(m) if m.model.session.is_none()));
    for (session, first, want) in [
        ("0", r#""4ms""#, "session must be at least 1"),
        (r#""x""#, r#""4ms""#, "session: invalid digit"),
        ("1", r#""fast""#, "first_demand:"),
    ] {
        std::fs::write(&path, simulated(session, first)).unwrap();
        let e = builtin::load(path.to_str().unwrap())
            .and_then(|exp| {
                exp.plan(
                    &servelab_lab::experiment::PlanOptions::sweep(false),
                    tmp.path(),
                )
                .map(drop)
            })
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{session} {first}: {e}");
    }
}

#[test]
fn a_tls_peer_trusts_the_runs_certificate_and_an_engine_may_not_say_tls() {
    let peer = |name: &str| {
        format!(
            r#"name = "p"
title = "p"
question = "p?"
[[server]]
label = "{name}"
peer = "{name}"
tls = true
[load]
users = 2
tls_resume = false
path = "/x"
"#
        )
    };
    let tls = plan(&peer("nginx")).unwrap();
    assert_eq!(
        tls,
        [Some(PointTls {
            trust: Trust::CaCert("/tmp/servelab-lab/tls/cert.pem".into()),
            resume: false
        })]
    );
    let e = plan(&peer("apache-event")).unwrap_err();
    assert!(
        e.starts_with("bad.toml:7:7: tls: the lab configures TLS for nginx, lighttpd and h2o"),
        "{e}"
    );
    let engine = peer("nginx").replace("peer = \"nginx\"", "engine = \"epoll\"");
    let e = plan(&engine).unwrap_err();
    assert!(e.contains("tls: only a peer takes `tls = true`"), "{e}");
}
