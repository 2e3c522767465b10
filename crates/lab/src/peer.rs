//! Peer servers (nginx, lighttpd, h2o) for side-by-side comparisons: the command
//! and the generated configuration of each, as `/work/shared/bench/peers.py` writes
//! them (one worker, no access log, sendfile, keep-alive without limit).
//!
//! A peer that is not installed is reported as unavailable; the lab never installs
//! anything itself.

use std::path::{Path, PathBuf};

/// Finds `name` on PATH (and in the sbin directories, where Debian puts nginx).
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Writes the peer's configuration into `dir` and returns its command line.
pub fn command(
    name: &str,
    exe: &Path,
    root: &Path,
    port: u16,
    dir: &Path,
) -> std::io::Result<Vec<String>> {
    let (root, dir_s, exe_s) = (root.display(), dir.display(), exe.display().to_string());
    match name {
        "nginx" => {
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
                conf.display().to_string(),
                "-p".into(),
                dir_s.to_string(),
            ])
        }
        "lighttpd" => {
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
            Ok(vec![
                exe_s,
                "-D".into(),
                "-f".into(),
                conf.display().to_string(),
            ])
        }
        "h2o" => {
            let conf = dir.join("h2o.conf");
            std::fs::write(
                &conf,
                format!(
                    "listen:\n  host: 127.0.0.1\n  port: {port}\nnum-threads: 1\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: {root}\n"
                ),
            )?;
            Ok(vec![exe_s, "-c".into(), conf.display().to_string()])
        }
        other => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("unknown peer {other}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_gets_a_config_naming_root_and_port() {
        let dir = tempfile::tempdir().unwrap();
        for name in crate::experiment::PEERS {
            let cmd = command(
                name,
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
        assert!(command("apache", Path::new("/x"), Path::new("/"), 1, dir.path()).is_err());
    }
}
