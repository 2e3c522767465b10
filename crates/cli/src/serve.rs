//! `servelab serve` and `servelab engines`: the server crate's
//! [`ServeArgs`] onto its [`servelab_server::Config`], then run.

use anyhow::Context;
use servelab_server::{Engine, ServeArgs, Server, StartFailure, TlsSource};

/// Flags of `servelab serve`: the server crate's own, so that the lab checks
/// an experiment's server `args` with this very parser.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    serve: ServeArgs,
}

/// Runs `servelab serve`; a failure is also reported as a [`StartFailure`]
/// to the program that asked for one.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let result = serve(args);
    if let Err(err) = &result {
        StartFailure::of_error(err.as_ref()).report_if_asked();
    }
    result
}

fn serve(args: Args) -> anyhow::Result<()> {
    // No DIR: the current directory, as python's http.server, miniserve,
    // http-server and static-web-server serve.
    let config = args.serve.into_config(|| {
        std::env::current_dir().context("no DIR given and the current directory is unreadable")
    })?;
    let saved_cert = match &config.tls {
        Some(TlsSource::SelfSignedSaved { cert }) => Some(cert.clone()),
        _ => None,
    };
    let workers = config.engine.threads(config.workers, config.max_conns);
    let auth = config.auth.is_some();
    let server = Server::bind(config)?;
    let engine = server.engine();
    let scheme = if server.tls_fingerprint().is_some() {
        "https"
    } else {
        "http"
    };
    let addrs: Vec<String> = server
        .local_addrs()
        .iter()
        .map(|a| format!("{scheme}://{a}"))
        .collect();
    eprintln!(
        "servelab: serving {} on {} (engine {engine}, {workers})",
        server.root().display(),
        addrs.join(" and "),
    );
    if let Some(fingerprint) = server.tls_fingerprint() {
        eprintln!("servelab: TLS certificate SHA-256 fingerprint {fingerprint}");
    }
    if let Some(cert) = saved_cert {
        let port = server.local_addr().port();
        eprintln!(
            "servelab: certificate written to {0}; trust it with `curl --cacert {0} \
             https://localhost:{port}/`",
            cert.display()
        );
    }
    let plain = server.tls_fingerprint().is_none();
    if let Some(addr) = (auth && plain)
        .then(|| exposed(server.local_addrs()))
        .flatten()
    {
        eprintln!(
            "servelab: warning: --auth on {addr}, which is not a loopback address, without TLS: \
             Basic credentials are base64, not encrypted, and anyone on the network path can \
             read them; listen on 127.0.0.1 or put a TLS proxy in front"
        );
    }
    server.run_until_signal()?;
    Ok(())
}

/// The first address that other machines can reach (not loopback).
fn exposed(addrs: &[std::net::SocketAddr]) -> Option<std::net::SocketAddr> {
    addrs.iter().copied().find(|a| !a.ip().is_loopback())
}

/// Prints the engines, one line each.
pub(crate) fn list_engines() -> anyhow::Result<()> {
    let width = Engine::ALL
        .iter()
        .map(|e| e.name().len())
        .max()
        .unwrap_or(0);
    for &e in Engine::ALL {
        let default = if e == Engine::default() {
            " (default)"
        } else {
            ""
        };
        let http = if e.carries_http2() {
            "; HTTP/1.1 and HTTP/2"
        } else {
            "; HTTP/1.1 only (ALPN offers http/1.1 alone)"
        };
        // An engine this system refuses (io_uring switched off, or
        // refused by a seccomp profile) is listed with why, not left out:
        // a user who read about it must learn why it does not start here.
        let here = match e.available() {
            Ok(()) => String::new(),
            Err(u) => format!("; UNAVAILABLE here: {}", u.why),
        };
        println!("{:width$}  {}{http}{default}{here}", e.name(), e.describe());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use servelab_server::Dist;
    use std::time::Duration;

    /// `servelab serve LINE` through the binary's own parser.
    fn args(line: &str) -> Result<ServeArgs, clap::Error> {
        let words = ["servelab", "serve"]
            .into_iter()
            .chain(line.split_whitespace());
        match crate::Cli::try_parse_from(words)?.command {
            crate::Command::Serve(a) => Ok(a.serve),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn delay_and_work_take_every_dist_form() {
        let a = args("--delay 5ms+exp:20ms --work lognormal:1ms,2").unwrap();
        assert_eq!(a.delay.unwrap().mean(), 0.025);
        assert_eq!(a.work.unwrap().mean(), 0.001);
        let a = args("--delay 40ms").unwrap();
        assert_eq!(a.delay, Some(Dist::Const(Duration::from_millis(40))));
        let err = args("--delay exp:-1ms").unwrap_err().to_string();
        assert!(err.contains("exp:-1ms"), "{err}");
    }

    #[test]
    fn auth_off_loopback_is_found() {
        let loopback = [
            "127.0.0.1:8080".parse().unwrap(),
            "[::1]:8080".parse().unwrap(),
        ];
        assert_eq!(exposed(&loopback), None);
        let any: std::net::SocketAddr = "[::]:8080".parse().unwrap();
        assert_eq!(exposed(&[loopback[0], any]), Some(any));
        let lan: std::net::SocketAddr = "192.168.1.2:80".parse().unwrap();
        assert_eq!(exposed(&[lan]), Some(lan));
    }

    #[test]
    fn the_binary_and_the_server_crate_read_flags_alike() {
        let line = "--port 0 --engine pool --workers 3 --log off --grace 2s";
        let alone = ServeArgs::try_parse_from(line.split_whitespace()).unwrap();
        assert_eq!(args(line).unwrap(), alone);
    }
}
