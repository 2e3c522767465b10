//! Peer servers (nginx, lighttpd, h2o) for side-by-side comparisons: the command
//! and the generated configuration of each (one worker, no access log, sendfile,
//! keep-alive without limit); and Apache httpd with each of its MPMs, as a
//! server to predict (configured in [`crate::process::apache`]).
//!
//! A peer that is not installed is reported as unavailable; the lab never installs
//! anything itself.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Deserializer};

use crate::process::apache::Mpm;

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

    /// Whether the lab can configure it to serve HTTPS (`tls = true`).
    pub fn serves_tls(self) -> bool {
        matches!(self, Peer::Nginx | Peer::Lighttpd | Peer::H2o)
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

/// The TLS 1.3 suite and key exchange group every TLS peer is held to, as
/// `bench/peers.py` holds them, so that peers and servelab are compared on
/// the same cryptography (the load generator offers both).
const TLS_SUITE: &str = "TLS_AES_128_GCM_SHA256";
const TLS_GROUP: &str = "X25519";

/// Where the run's one certificate and key are (PEM), under the run's
/// temporary directory: (certificate, key).
pub fn certificate_paths(tmp: &Path) -> (PathBuf, PathBuf) {
    let dir = tmp.join("tls");
    (dir.join("cert.pem"), dir.join("key.pem"))
}

/// Makes the run's certificate unless it exists: ECDSA P-256 (rcgen's
/// default, the key of `serve --tls-self-signed`), self-signed, for
/// localhost, 127.0.0.1 and ::1. The key is world-readable because h2o and
/// nginx workers may run as another user; it protects nothing but a run.
pub fn certificate(tmp: &Path) -> std::io::Result<(PathBuf, PathBuf)> {
    let (cert, key) = certificate_paths(tmp);
    if cert.is_file() && key.is_file() {
        return Ok((cert, key));
    }
    let names = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    let made = rcgen::generate_simple_self_signed(names).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(cert.parent().unwrap_or(tmp))?;
    std::fs::write(&cert, made.cert.pem())?;
    std::fs::write(&key, made.signing_key.serialize_pem())?;
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    Ok((cert, key))
}

/// Writes the peer's configuration into `dir` and returns its command line;
/// with `tls` (certificate, key) it serves HTTPS only, TLS 1.3 with
/// `TLS_AES_128_GCM_SHA256` and X25519, resumption on (tickets and a cache),
/// and nginx and h2o offer HTTP/2 (ALPN `h2`) beside HTTP/1.1.
pub fn command(
    peer: Peer,
    exe: &Path,
    root: &Path,
    port: u16,
    dir: &Path,
    tls: Option<&(PathBuf, PathBuf)>,
) -> std::io::Result<Vec<OsString>> {
    let apache = |mpm| crate::process::apache::command(mpm, exe, root, port, dir);
    let (root, dir_s, exe_s) = (root.display(), dir.display(), exe.as_os_str().to_owned());
    let tls = tls.map(|(c, k)| (c.display(), k.display()));
    match peer {
        Peer::Nginx => {
            let listen = match &tls {
                None => format!("listen 127.0.0.1:{port};"),
                // `http2` offers h2 beside http/1.1 by ALPN, as h2o does over
                // TLS and servelab's HTTP/2 engines do: a client that offers
                // http/1.1 alone (load without --h2) is served HTTP/1.1.
                Some((cert, key)) => format!(
                    "listen 127.0.0.1:{port} ssl http2; ssl_certificate {cert}; ssl_certificate_key {key};\n\
                     ssl_protocols TLSv1.3; ssl_conf_command Ciphersuites {TLS_SUITE}; \
                     ssl_ecdh_curve {TLS_GROUP};\n\
                     ssl_session_cache shared:SSL:10m; ssl_session_tickets on;"
                ),
            };
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
                     server {{ {listen} root {root}; }} }}\n"
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
            let ssl = match &tls {
                None => String::new(),
                Some((cert, key)) => format!(
                    "server.modules += (\"mod_openssl\")\nssl.engine = \"enable\"\n\
                     ssl.pemfile = \"{cert}\"\nssl.privkey = \"{key}\"\n\
                     ssl.openssl.ssl-conf-cmd = (\"MinProtocol\" => \"TLSv1.3\", \
                     \"Ciphersuites\" => \"{TLS_SUITE}\", \"Groups\" => \"{TLS_GROUP}\")\n"
                ),
            };
            std::fs::write(
                &conf,
                format!(
                    "server.document-root = \"{root}\"\nserver.port = {port}\nserver.bind = \"127.0.0.1\"\n\
                     server.max-keep-alive-requests = 1000000\nserver.max-fds = 16384\n\
                     mimetype.assign = (\".txt\" => \"text/plain\", \".html\" => \"text/html\", \".bin\" => \"application/octet-stream\")\n\
                     index-file.names = (\"index.html\")\n{ssl}"
                ),
            )?;
            Ok(vec![exe_s, "-D".into(), "-f".into(), conf.into_os_string()])
        }
        Peer::H2o => {
            let conf = dir.join("h2o.conf");
            let ssl = match &tls {
                None => String::new(),
                Some((cert, key)) => format!(
                    "\n  ssl:\n    certificate-file: {cert}\n    key-file: {key}\n    \
                     minimum-version: TLSv1.3"
                ),
            };
            std::fs::write(
                &conf,
                format!(
                    "listen:\n  host: 127.0.0.1\n  port: {port}{ssl}\nnum-threads: 1\nhosts:\n  default:\n    paths:\n      /:\n        file.dir: {root}\n"
                ),
            )?;
            let h2o = vec![exe_s, "-c".into(), conf.into_os_string()];
            if tls.is_none() {
                return Ok(h2o);
            }
            // h2o 2.2 has no setting for TLS 1.3 suites or groups: they come
            // from the OpenSSL configuration that libssl reads at start, given
            // by `env` (which execs h2o: the same process is measured).
            let cnf = dir.join("openssl.cnf");
            std::fs::write(
                &cnf,
                format!(
                    "openssl_conf = lab\n[lab]\nssl_conf = lab_ssl\n[lab_ssl]\n\
                     system_default = lab_tls\n[lab_tls]\nMinProtocol = TLSv1.3\n\
                     Ciphersuites = {TLS_SUITE}\nGroups = {TLS_GROUP}\n"
                ),
            )?;
            let mut env: Vec<OsString> = vec![
                "/usr/bin/env".into(),
                format!("OPENSSL_CONF={}", cnf.display()).into(),
            ];
            env.extend(h2o);
            Ok(env)
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
                None,
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

    #[test]
    fn tls_peers_get_the_runs_one_certificate_and_suite() {
        let tmp = tempfile::tempdir().unwrap();
        let pair = certificate(tmp.path()).unwrap();
        let pem = std::fs::read_to_string(&pair.0).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"), "{pem}");
        let key = std::fs::read_to_string(&pair.1).unwrap();
        assert!(key.contains("PRIVATE KEY-----"), "{key}");
        // Made once per run: the second point gets the same one.
        assert_eq!(certificate(tmp.path()).unwrap(), pair);
        assert_eq!(std::fs::read_to_string(&pair.0).unwrap(), pem);
        for (peer, marker) in [
            (Peer::Nginx, "ssl_certificate "),
            (Peer::Lighttpd, "ssl.pemfile"),
            (Peer::H2o, "certificate-file"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let cmd = command(
                peer,
                Path::new("/bin/x"),
                Path::new("/srv/www"),
                4321,
                dir.path(),
                Some(&pair),
            )
            .unwrap();
            let confs: String = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap())
                .collect();
            assert!(
                confs.contains(marker) && confs.contains(&pair.0.display().to_string()),
                "{peer}: {confs}"
            );
            assert!(confs.contains(TLS_SUITE), "{peer}: {confs}");
            // nginx offers HTTP/2 by ALPN beside HTTP/1.1, as h2o does by default.
            assert_eq!(
                confs.contains("ssl http2;"),
                peer == Peer::Nginx,
                "{peer}: {confs}"
            );
            // h2o takes its suite from an OpenSSL configuration in its environment.
            assert_eq!(cmd[0] == "/usr/bin/env", peer == Peer::H2o, "{cmd:?}");
        }
        assert!(!Peer::ApacheEvent.serves_tls() && Peer::Nginx.serves_tls());
    }
}
