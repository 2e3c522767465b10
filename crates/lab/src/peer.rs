//! Peer servers (nginx, lighttpd, h2o) for side-by-side comparisons: the command
//! and the generated configuration of each (one worker, no access log, sendfile,
//! keep-alive without limit); and Apache httpd with each of its MPMs, as a
//! server to predict (configured in [`crate::apache`]).
//!
//! A peer that is not installed is reported as unavailable; the lab never installs
//! anything itself.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use crate::apache::Mpm;

/// A peer server the lab knows how to configure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// nginx, one worker process.
    Nginx,
    /// lighttpd.
    Lighttpd,
    /// h2o, one thread.
    H2o,
    /// Apache httpd, mpm_event with 4 threads and a CPU-burning Lua handler.
    ApacheEvent,
    /// Apache httpd, mpm_worker with 4 threads.
    ApacheWorker,
    /// Apache httpd, mpm_prefork with 4 processes.
    ApachePrefork,
}

impl Peer {
    /// Every peer.
    pub const ALL: &'static [Peer] = &[
        Peer::Nginx,
        Peer::Lighttpd,
        Peer::H2o,
        Peer::ApacheEvent,
        Peer::ApacheWorker,
        Peer::ApachePrefork,
    ];

    /// Its name in experiment files.
    pub fn name(self) -> &'static str {
        match self {
            Peer::Nginx => "nginx",
            Peer::Lighttpd => "lighttpd",
            Peer::H2o => "h2o",
            Peer::ApacheEvent => "apache-event",
            Peer::ApacheWorker => "apache-worker",
            Peer::ApachePrefork => "apache-prefork",
        }
    }

    /// Its executable's name.
    pub fn executable(self) -> &'static str {
        match self {
            Peer::ApacheEvent | Peer::ApacheWorker | Peer::ApachePrefork => "apache2",
            p => p.name(),
        }
    }
}

impl fmt::Display for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Peer {
    type Err = String;
    fn from_str(s: &str) -> Result<Peer, String> {
        Peer::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Peer::ALL.iter().map(|p| p.name()).collect();
                format!("unknown peer `{s}` (known: {})", known.join(", "))
            })
    }
}

impl<'de> Deserialize<'de> for Peer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Peer, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Finds the peer's executable on PATH (and in the sbin directories, where
/// Debian puts nginx and apache2).
pub fn find(peer: Peer) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(peer.executable()))
        .find(|p| p.is_file())
}

/// Writes the peer's configuration into `dir` and returns its command line.
pub fn command(
    peer: Peer,
    exe: &Path,
    root: &Path,
    port: u16,
    dir: &Path,
) -> std::io::Result<Vec<OsString>> {
    let apache = |mpm| crate::apache::command(mpm, exe, root, port, dir);
    let (root, dir_s, exe_s) = (root.display(), dir.display(), exe.as_os_str().to_owned());
    match peer {
        Peer::Nginx => {
            let conf = dir.join("nginx.conf");
            std::fs::write(
                &conf,
                format!(
                    "worker_processes 1; daemon off; master_process off;\n\
                     error_log {dir_s}/nginx-error.log; pid {dir_s}/nginx.pid;\n\
                     events {{ worker_connections 8192; }}\n\
                     http {{ access_log off; sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_requests 1000000;\n\
                     open_file_cache max=1000 inactive=60s; open_file_cache_valid 60s;\n\
                     types {{ text/plain txt; text/html html; application/octet-stream bin; }}\n\
                     client_body_temp_path {dir_s}; proxy_temp_path {dir_s}; fastcgi_temp_path {dir_s}; uwsgi_temp_path {dir_s}; scgi_temp_path {dir_s};\n\
                     server {{ listen 127.0.0.1:{port}; root {root}; }} }}\n"
                ),
            )?;
            Ok(vec![
                exe_s,
                "-c".into(),
                conf.into_os_string(),
                "-p".into(),
                dir.as_os_str().to_owned(),
            ])
        }
        Peer::Lighttpd => {
            let conf = dir.join("lighttpd.conf");
            std::fs::write(
                &conf,
                format!(
                    "server.document-root = \"{root}\"\nserver.port = {port}\nserver.bind = \"127.0.0.1\"\n\
                     server.max-keep-alive-requests = 1000000\nserver.max-fds = 16384\n\
                     mimetype.assign = (\".txt\" => \"text/plain\", \".html\" => \"text/html\", \".bin\" => \"application/octet-stream\")\n\
                     index-file.names = (\"index.html\")\n"
                ),
            )?;
            Ok(vec![exe_s, "-D".into(), "-f".into(), conf.into_os_string()])
        }
        Peer::H2o => {
            let conf = dir.join("h2o.conf");
            std::fs::write(
                &conf,
                format!(
                    "listen:\n  host: 127.0.0.1\n  port: {port}\nnum-threads: 1\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: {root}\n"
                ),
            )?;
            Ok(vec![exe_s, "-c".into(), conf.into_os_string()])
        }
        Peer::ApacheEvent => apache(Mpm::Event),
        Peer::ApacheWorker => apache(Mpm::Worker),
        Peer::ApachePrefork => apache(Mpm::Prefork),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_gets_a_config_naming_root_and_port() {
        let dir = tempfile::tempdir().unwrap();
        for &peer in Peer::ALL {
            let name = peer.name();
            let cmd = command(
                peer,
                Path::new("/bin/x"),
                Path::new("/srv/www"),
                4321,
                dir.path(),
            )
            .unwrap();
            assert_eq!(cmd[0], "/bin/x");
            let conf = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .find(|t| {
                    t.contains(if name == "nginx" {
                        "worker_processes"
                    } else if name == "h2o" {
                        "num-threads"
                    } else if name.starts_with("apache") {
                        "ServerRoot"
                    } else {
                        "server.port"
                    })
                })
                .unwrap();
            assert!(
                conf.contains("4321") && conf.contains("/srv/www"),
                "{name}: {conf}"
            );
        }
        assert!("apache".parse::<Peer>().unwrap_err().contains("nginx"));
    }
}
