//! Agreement by construction: when the server under test *sleeps* a draw from
//! a distribution (`serve --delay`) and does no work, and the model is given
//! that distribution as its service time, the measured figures agree with the
//! model because the experiment was built so. Such agreement tests the
//! instruments (the load generator's clock, the checks, the pool's
//! bookkeeping), not whether the model describes a server: no CPU is shared,
//! no kernel schedules anything. `model`, `overload` and `handlers` are built
//! so; `model-cpu`, `overload-cpu` and `apache` burn CPU and are the model's
//! test on real work. Every page that quotes such agreement says so, in the
//! words of [`LABEL`].

use crate::experiment::Experiment;

/// The words every quote of such agreement carries.
pub const LABEL: &str = "by construction: a check of the instruments, not of the model";

/// Why `exp`'s agreement with its model is by construction, when it is: its
/// servelab servers all sleep (`--delay`) and none works (`--work`), and it
/// has a model to agree with (`[predict]`). The sentence names the sleep and
/// where the model is tested on real work.
pub fn note(exp: &Experiment) -> Option<String> {
    let model = exp.predict.as_ref()?;
    let mut delays = Vec::new();
    for s in &exp.servers {
        s.engine.as_ref()?;
        let args: Vec<String> = s.args.iter().map(|a| a.get_ref().to_string()).collect();
        if args
            .iter()
            .any(|a| a == "--work" || a.starts_with("--work="))
        {
            return None;
        }
        let delay = args
            .iter()
            .position(|a| a == "--delay")
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| {
                args.iter()
                    .find_map(|a| a.strip_prefix("--delay=").map(str::to_string))
            })?;
        if !delays.contains(&delay) {
            delays.push(delay);
        }
    }
    if delays.is_empty() {
        return None;
    }
    Some(format!(
        "Agreement with the model here is {LABEL}. The server sleeps a draw of --delay {} per \
         request and does no work, and the model is given that distribution as its service time \
         ({}); the model's accuracy on work a kernel schedules is in model-cpu, overload-cpu and \
         apache.",
        delays.join(", "),
        model.service.get_ref()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::builtin;

    #[test]
    fn sleeping_servers_agree_by_construction_and_working_ones_do_not() {
        for name in ["model", "overload", "handlers"] {
            let n = note(&builtin::load(name).unwrap());
            let n = n.unwrap_or_else(|| panic!("{name} sleeps: by construction"));
            assert!(n.contains(LABEL) && n.contains("--delay"), "{name}: {n}");
        }
        for name in [
            "model-cpu",
            "overload-cpu",
            "apache",
            "timeslice",
            "engines",
            "seed002",
        ] {
            assert_eq!(note(&builtin::load(name).unwrap()), None, "{name}");
        }
    }
}
