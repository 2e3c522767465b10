//! Same seed, same output, whatever the number of parallel jobs (OS threads).

use servelab_sim::{Dist, Model, Sweep, report, run_models_on};

use crate::spec;

#[test]
fn same_seed_same_json_on_one_or_two_threads() {
    let sweep = Sweep {
        base: Model {
            timeout: Some(Dist::exp(5.0).shifted(5.0)),
            ..Model::default()
        },
        users: vec![20, 150, 300],
    };
    let s = spec(4, 1000, 51);
    let one = report::to_json(&run_models_on(&sweep.models(), &s, 1).unwrap(), Some(&s));
    let two = report::to_json(&run_models_on(&sweep.models(), &s, 2).unwrap(), Some(&s));
    let again = report::to_json(&run_models_on(&sweep.models(), &s, 2).unwrap(), Some(&s));
    assert_eq!(one, two);
    assert_eq!(two, again);
    let other = spec(4, 1000, 52);
    let different = report::to_json(
        &run_models_on(&sweep.models(), &other, 2).unwrap(),
        Some(&other),
    );
    assert_ne!(
        one.replace("\"seed\": 51", ""),
        different.replace("\"seed\": 52", "")
    );
}

#[test]
fn trace_is_reproducible_and_readable() {
    let m = Model {
        users: 5,
        cores: 1,
        buffer: 1,
        think: Dist::exp(0.3),
        ..Model::default()
    };
    let s = spec(1, 30, 53);
    let mut a = Vec::new();
    let mut b = Vec::new();
    servelab_sim::trace_replication(&m, &s, &mut a).unwrap();
    servelab_sim::trace_replication(&m, &s, &mut b).unwrap();
    assert_eq!(a, b);
    let text = String::from_utf8(a).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("time\tevent\tuser\tcore\tthread\tbuffer\tin_system\tcores_running")
    );
    let mut last = 0.0;
    for line in lines {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), 8, "{line}");
        let t: f64 = fields[0].parse().unwrap();
        assert!(t >= last, "time goes forward: {line}");
        last = t;
        assert!(
            fields[5].parse::<u32>().unwrap() <= 1,
            "buffer never exceeds B: {line}"
        );
    }
}
