//! The machine a run happened on, recorded with every result so that two runs can
//! be compared knowingly: CPU model, cores, kernel, servelab version and commit.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Facts about the machine and the build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// servelab version.
    pub version: String,
    /// `git rev-parse HEAD` of the working directory (with `-dirty` when it has
    /// uncommitted changes outside `results/`, where runs are written), or
    /// `unknown`.
    pub git_commit: String,
}

impl Machine {
    /// Looks at this machine; `version` is the servelab version, `repo` a
    /// directory inside the checkout the binary was built from (its commit is
    /// recorded; the working directory's when `None`).
    pub fn detect(version: &str, repo: Option<&std::path::Path>) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name")
                    .and_then(|r| r.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        Machine {
            cpu_model,
            cores: crate::process::cpu::allowed_cpus().len(),
            kernel,
            version: version.to_string(),
            git_commit: git_commit(repo),
        }
    }
}

fn git_commit(repo: Option<&std::path::Path>) -> String {
    let out = |args: &[&str]| {
        let mut cmd = Command::new("git");
        if let Some(dir) = repo {
            cmd.current_dir(dir);
        }
        cmd.args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match out(&["rev-parse", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            // Runs write into `results/` (the reference runs are committed there),
            // so a change there says nothing about the code that ran: a run that
            // regenerates results/reference would otherwise call itself dirty.
            let dirty = out(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":/",
                ":(top,exclude)results",
            ])
            .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        _ => "unknown".into(),
    }
}

/// Seconds since the epoch as `(YYYY-MM-DDTHH:MM:SSZ, YYYYMMDD-HHMMSS)`, UTC.
pub fn utc_now() -> (String, String) {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

fn utc(secs: u64) -> (String, String) {
    let text = servelab_http::date::fmt_rfc3339(secs);
    let iso = String::from_utf8_lossy(&text).into_owned();
    // YYYYMMDD-HHMMSS, for directory names: the digits of the same time.
    let d: String = iso[..10].chars().filter(char::is_ascii_digit).collect();
    let t: String = iso[11..19].chars().filter(char::is_ascii_digit).collect();
    (iso, format!("{d}-{t}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_are_civil() {
        assert_eq!(utc(0).0, "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400).0, "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_316_645).1, "20261122-030405");
    }

    #[test]
    fn detect_fills_every_field() {
        let m = Machine::detect("9.9.9", None);
        assert!(m.cores >= 1);
        assert!(!m.kernel.is_empty() && !m.cpu_model.is_empty());
    }
}
