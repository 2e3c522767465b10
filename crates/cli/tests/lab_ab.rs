//! `servelab lab ab` end to end, through the binary: a tiny experiment (three
//! points, quarter-second windows) measured with this binary on both sides,
//! the pair's directories and records, the ABBA order by repeat as it
//! happened with both servers of a point alive, a side whose server never
//! starts,
//! `lab compare` reading the two sides as a pair, and the mistakes that stop it
//! before anything runs.

use std::path::Path;
use std::process::{Command, Output};

use servelab_lab::results::{Alternation, Interleaved, RunResults, Side, Status};

fn servelab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_servelab"))
        .args(args)
        .output()
        .expect("run servelab")
}

/// Three measured points of one engine, each repeat a 0.25 s window (`--quick`).
const TINY: &str = r#"
name = "tiny-ab"
title = "Tiny A/B"
question = "Does lab ab measure both sides, interleaved?"
[[axis]]
name = "users"
label = "client users"
unit = "users"
values = [1, 2, 3]
quick = [1, 2, 3]
[[server]]
label = "pool"
engine = "pool"
[load]
users = "{users}"
path = "/"
[[plot]]
title = "Throughput"
x = "users"
y = "throughput"
"#;

fn interleaved(r: &RunResults) -> &Interleaved {
    r.protocol
        .as_ref()
        .and_then(|p| p.interleaved.as_ref())
        .expect("an interleaved run records its pair")
}

#[test]
fn the_same_binary_on_both_sides_gives_a_pair_that_compare_reads_as_one() {
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("tiny.toml");
    std::fs::write(&exp, TINY).unwrap();
    let out = tmp.path().join("pair");
    let me = env!("CARGO_BIN_EXE_servelab");
    let o = servelab(&[
        "lab",
        "ab",
        exp.to_str().unwrap(),
        "--a",
        me,
        "--b",
        me,
        "--quick",
        "--repeats",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("design: an interleaved pair")
            && stdout.contains("ABBA by repeat, both servers alive"),
        "{stdout}"
    );
    assert!(out.join("compare.html").is_file());
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("href=\"a/report.html\"") && index.contains("href=\"b/report.html\""),
        "{index}"
    );

    let (a, b) = (
        RunResults::read(&out.join("a")).unwrap(),
        RunResults::read(&out.join("b")).unwrap(),
    );
    for (side, r, dir) in [(Side::A, &a, "a"), (Side::B, &b, "b")] {
        let report = std::fs::read_to_string(out.join(dir).join("report.html")).unwrap();
        assert!(
            report.contains(&format!(
                "Side {} of an interleaved pair",
                dir.to_uppercase()
            )),
            "{dir}/report.html says which side of a pair it is"
        );
        assert_eq!(r.points.len(), 3);
        assert!(
            r.points
                .iter()
                .all(|p| p.status == Status::Ok && p.repeats.len() == 2)
        );
        assert_eq!(interleaved(r).side, side);
    }
    let (ia, ib) = (interleaved(&a), interleaved(&b));
    assert_eq!(ia.pair, ib.pair);
    assert_eq!(ia.exe_a, ib.exe_b, "the same binary on both sides");
    assert_eq!(ia.first, [Side::A, Side::B, Side::B], "ABBA order");
    assert_eq!(ia.first, ib.first);
    // The order as it happened: A began point 0 before B, B began points 1
    // and 2 before A, and each point after the one before it ended.
    let (sa, sb) = (&ia.started_s, &ib.started_s);
    assert!(
        sa[0] < sb[0] && sb[0] < sb[1] && sb[1] < sa[1],
        "{sa:?} {sb:?}"
    );
    assert!(sa[1] < sb[2] && sb[2] < sa[2], "{sa:?} {sb:?}");
    // By repeat, with both servers alive: at each point both sides' servers
    // start and warm up, then the repeats run leader, other, other, leader,
    // each side on its one server of the point, A's and B's distinct.
    assert_eq!((ia.by, ib.by), (Alternation::Repeat, Alternation::Repeat));
    for i in 0..3 {
        let (pa, pb) = (ia.server_pid[i], ib.server_pid[i]);
        assert!(
            pa.is_some() && pb.is_some() && pa != pb,
            "point {i}: {pa:?} {pb:?}"
        );
        let (ra, rb) = (&ia.repeat_started_s[i], &ib.repeat_started_s[i]);
        assert_eq!((ra.len(), rb.len()), (2, 2), "point {i}: {ra:?} {rb:?}");
        let (lead, other, lead_start, other_start) = match ia.first[i] {
            Side::A => (ra, rb, sa[i], sb[i]),
            Side::B => (rb, ra, sb[i], sa[i]),
        };
        assert!(
            lead_start < other_start
                && other_start < lead[0]
                && lead[0] < other[0]
                && other[0] < other[1]
                && other[1] < lead[1],
            "point {i}: servers {lead_start} {other_start}, repeats {lead:?} {other:?}"
        );
    }

    let o = servelab(&[
        "lab",
        "compare",
        out.join("a").to_str().unwrap(),
        out.join("b").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("design: an interleaved pair"), "{text}");
    assert!(!text.contains("different protocols"), "{text}");
    assert!(!text.contains("common shift"), "{text}");

    // The pair's directory is never overwritten without --force, and a side
    // of one pair compared with a separate run says it is not its pair.
    let o = servelab(&[
        "lab",
        "ab",
        exp.to_str().unwrap(),
        "--b",
        me,
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("already exists"), "{err}");
    let mut other = b.clone();
    if let Some(p) = other.protocol.as_mut().and_then(|p| p.interleaved.as_mut()) {
        p.pair.push_str("-another");
    }
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    other.write_json(&elsewhere).unwrap();
    let o = servelab(&[
        "lab",
        "compare",
        out.join("a").to_str().unwrap(),
        elsewhere.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("design: two separate runs"), "{text}");
    assert!(
        text.contains(
            "warning: A is one side of an interleaved pair, but not of a pair with the other run"
        ),
        "{text}"
    );
}

/// A side whose server never starts records its points as failed, and the
/// other side measures every point alone, saying so; the pair is still
/// written, and the run exits with status 2 since side B has no figures.
#[test]
fn a_side_whose_server_fails_is_recorded_and_the_other_measures_alone() {
    use std::os::unix::fs::PermissionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let exp = tmp.path().join("tiny.toml");
    std::fs::write(&exp, TINY).unwrap();
    // Answers --version as servelab does, and fails to serve.
    let broken = tmp.path().join("servelab-broken");
    std::fs::write(
        &broken,
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo servelab 0.0.0; exit 0; fi\n\
         echo 'cannot serve' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = tmp.path().join("pair");
    let o = servelab(&[
        "lab",
        "ab",
        exp.to_str().unwrap(),
        "--b",
        broken.to_str().unwrap(),
        "--quick",
        "--repeats",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let (a, b) = (
        RunResults::read(&out.join("a")).unwrap(),
        RunResults::read(&out.join("b")).unwrap(),
    );
    for (i, (pa, pb)) in a.points.iter().zip(&b.points).enumerate() {
        assert_eq!(pb.status, Status::Failed, "point {i}: {:?}", pb.reason);
        assert!(pb.repeats.is_empty());
        assert_eq!(pa.status, Status::Ok, "point {i}: {:?}", pa.reason);
        assert_eq!(pa.repeats.len(), 2, "point {i}");
        assert!(
            pa.notes
                .iter()
                .any(|n| n== "the other side of the pair did not start (failed): every repeat was measured without it"),
            "point {i}: {:?}",
            pa.notes
        );
    }
    let (ia, ib) = (interleaved(&a), interleaved(&b));
    assert!(ia.server_pid.iter().all(Option::is_some));
    assert!(ib.server_pid.iter().all(Option::is_none));
    assert!(ib.repeat_started_s.iter().all(Vec::is_empty));
}

#[test]
fn a_missing_or_non_executable_binary_stops_it_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pair");
    let missing = tmp.path().join("servelab-old");
    let o = servelab(&[
        "lab",
        "ab",
        "connections",
        "--b",
        missing.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("servelab: error: --b {}: no such file", missing.display())
    );
    let plain = tmp.path().join("plain");
    std::fs::write(&plain, "not a program").unwrap();
    let o = servelab(&[
        "lab",
        "ab",
        "connections",
        "--a",
        plain.to_str().unwrap(),
        "--b",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = servelab(&[
        "lab",
        "ab",
        "connections",
        "--a",
        plain.to_str().unwrap(),
        "--b",
        env!("CARGO_BIN_EXE_servelab"),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.ends_with("is not executable\n"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!Path::new(&out).exists(), "nothing ran, nothing was made");
    // A simulated experiment has no binary to compare.
    let o = servelab(&[
        "lab",
        "ab",
        "seed002",
        "--b",
        env!("CARGO_BIN_EXE_servelab"),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("seed002 is a simulated experiment"), "{err}");
    assert!(!Path::new(&out).exists(), "nothing ran, nothing was made");
}
