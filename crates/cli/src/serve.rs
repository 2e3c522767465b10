//! `servelab serve` and `servelab engines`: flags onto [`servelab_server::Config`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use servelab_dist::parse_duration;
use servelab_server::{Config, Dist, Engine, LogMode, LogTarget, Server};

/// Flags of `servelab serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Directory to serve [default: the bundled site `www/` of this repository].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Port to listen on (shorthand that replaces the port of --addr; 0 picks a free one).
    #[arg(long, short = 'p', value_name = "N")]
    port: Option<u16>,
    /// Concurrency engine (`servelab engines` lists them).
    #[arg(long, short = 'e', default_value_t = Engine::default())]
    engine: Engine,
    /// Worker threads or processes [default: the number of CPUs].
    #[arg(long, short = 'w', value_name = "N")]
    workers: Option<usize>,
    /// Accepted connections waiting for a pool worker; beyond it, 503.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    queue: usize,
    /// Connections served at once by the thread and fork engines; at the cap
    /// the server stops accepting until one ends (clients wait, not refused).
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_conns: usize,
    /// Serve the counters: GET /-/status (JSON) and GET /-/metrics (Prometheus).
    #[arg(long)]
    status: bool,
    /// Access log: a file, `-` for standard output, or `off`.
    #[arg(long, value_name = "PATH|-|off", default_value = "-")]
    log: String,
    /// Access-log writing: `sync` (one shared file under a lock) or `buffered`
    /// (per-worker buffers flushed at least once a second).
    #[arg(long, value_name = "MODE", default_value = "buffered")]
    log_mode: LogMode,
    /// Also log each connection's accept and close.
    #[arg(long)]
    log_connections: bool,
    /// A request head must arrive within this time (else 408).
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = parse_duration)]
    read_timeout: Duration,
    /// Idle time allowed between requests on a kept-alive connection.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_duration)]
    keepalive_timeout: Duration,
    /// A response that makes no progress for this long is abandoned.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    write_timeout: Duration,
    /// Close a connection after this many requests [default: unlimited].
    #[arg(long, value_name = "N")]
    max_requests_per_conn: Option<u64>,
    /// On SIGINT/SIGTERM, how long requests in flight may take to finish.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    grace: Duration,
    /// Hold each response back for DIST without holding a CPU (threads sleep,
    /// event loops park the connection on a timer): `40ms`, `const:5ms`,
    /// `exp:20ms`, `uniform:10ms..30ms`, `lognormal:20ms,2` (mean, CV) or shifted
    /// `5ms+exp:20ms`; plain numbers are seconds (the DIST of `servelab sim`).
    #[arg(long, value_name = "DIST")]
    delay: Option<Dist>,
    /// Burn DIST of CPU in the handler for each request (same syntax as --delay).
    #[arg(long, value_name = "DIST")]
    work: Option<Dist>,
    /// Seed of the --delay and --work draws (each worker has its own stream).
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,
}

/// Runs `servelab serve`.
pub(crate) fn run(args: Args) -> anyhow::Result<()> {
    let root = match args.root {
        Some(r) => r,
        None => {
            bundled_site().context("no --root given and the bundled site www/ was not found")?
        }
    };
    let mut config = Config::new(root);
    config.addr = args.addr;
    if let Some(port) = args.port {
        config.addr.set_port(port);
    }
    config.engine = args.engine;
    if let Some(w) = args.workers {
        anyhow::ensure!(w > 0, "--workers must be at least 1");
        config.workers = w;
    }
    config.queue = args.queue;
    config.max_conns = args.max_conns;
    config.status = args.status;
    config.log = match args.log.as_str() {
        "off" => LogTarget::Off,
        "-" => LogTarget::Stdout,
        path => LogTarget::File(path.into()),
    };
    config.log_mode = args.log_mode;
    config.log_connections = args.log_connections;
    config.read_timeout = args.read_timeout;
    config.keepalive_timeout = args.keepalive_timeout;
    config.write_timeout = args.write_timeout;
    config.max_requests_per_conn = args.max_requests_per_conn;
    config.grace = args.grace;
    config.delay = args.delay;
    config.work = args.work;
    config.seed = args.seed;
    let (workers, max_conns) = (config.workers, config.max_conns);
    let server = Server::bind(config)?;
    let engine = server.engine();
    let workers = if engine.uses_workers() {
        format!("{workers} workers")
    } else if matches!(engine, Engine::Thread | Engine::Fork) {
        format!("at most {max_conns} connections at once")
    } else {
        "1 worker".to_owned()
    };
    eprintln!(
        "servelab: serving {} on http://{} (engine {engine}, {workers})",
        server.root().display(),
        server.local_addr(),
    );
    server.run_until_signal()?;
    Ok(())
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
        println!("{:width$}  {}{default}", e.name(), e.describe());
    }
    Ok(())
}

/// The repository's `www/`: next to the executable's ancestors (a build in
/// `target/<profile>/`), else where the sources were when it was built.
fn bundled_site() -> Option<PathBuf> {
    let is_site = |p: &Path| p.join("index.html").is_file();
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1).take(4) {
            let candidate = dir.join("www");
            if is_site(&candidate) {
                return Some(candidate);
            }
        }
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../www");
    is_site(&built).then(|| built.canonicalize().unwrap_or(built))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `servelab serve LINE` through the binary's own parser.
    fn args(line: &str) -> Result<Args, clap::Error> {
        let words = ["servelab", "serve"]
            .into_iter()
            .chain(line.split_whitespace());
        match crate::Cli::try_parse_from(words)?.command {
            crate::Command::Serve(a) => Ok(a),
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
    fn durations() {
        assert_eq!(parse_duration("3s").unwrap(), Duration::from_secs(3));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("3 parsecs").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("-1s").is_err());
        // The shared parser also reads nanoseconds, which this one once did not.
        assert_eq!(parse_duration("10ns").unwrap(), Duration::from_nanos(10));
    }
}
