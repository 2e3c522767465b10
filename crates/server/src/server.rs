//! Starting, running and stopping a server.
//!
//! [`Server::bind`] does everything that can fail for a user's reason (root,
//! address, log file) before any thread starts, so `servelab serve` can report it
//! in one line. [`Server::run_until_signal`] is what the binary calls;
//! [`Server::spawn`] is what tests and the lab call.

use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use socket2::{Domain, Protocol, Socket, Type};

use crate::config::Config;
use crate::driver::evloop;
use crate::driver::policy::SocketTimeouts;
use crate::engine::Engine;
use crate::error::ServerError;
use crate::runtime::shared::Shared;
use crate::runtime::stats::Stats;

/// Pending connections the kernel may hold for us (capped by `net.core.somaxconn`).
const BACKLOG: i32 = 4096;

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    site: Arc<Shared>,
    /// One per address of `Config::addrs`, in that order; every engine serves all.
    listeners: Vec<TcpListener>,
    addrs: Vec<SocketAddr>,
}

impl Server {
    /// Checks the configuration, opens the root and the log, and binds every address.
    pub fn bind(config: Config) -> Result<Server, ServerError> {
        if config.addrs.is_empty() {
            return Err(ServerError::Config("no address to listen on".into()));
        }
        if config.addrs.len() as u64 > crate::driver::evloop::MAX_LISTENERS {
            return Err(ServerError::Config(format!(
                "at most {} addresses",
                crate::driver::evloop::MAX_LISTENERS
            )));
        }
        config
            .engine
            .available()
            .map_err(|e| ServerError::Config(e.to_string()))?;
        let config = with_hsts(config)?;
        let wanted = config.addrs.clone();
        let site = Shared::new(config)?;
        let mut listeners = Vec::with_capacity(wanted.len());
        let mut addrs = Vec::with_capacity(wanted.len());
        for addr in wanted {
            let listener = listen(addr, &site).map_err(|source| ServerError::bind(addr, source))?;
            addrs.push(listener.local_addr().unwrap_or(addr));
            listeners.push(listener);
        }
        Ok(Server {
            site: Arc::new(site),
            listeners,
            addrs,
        })
    }

    /// The first address actually bound (the port is known here when 0 was
    /// asked for); see [`Server::local_addrs`] for all of them.
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address bound, in the order of `Config::addrs`.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The root being served, as an absolute path.
    pub fn root(&self) -> &Path {
        self.site.root.path()
    }

    /// The engine.
    pub fn engine(&self) -> Engine {
        self.site.config.engine
    }

    /// The live counters.
    pub fn stats(&self) -> Arc<Stats> {
        self.site.stats.clone()
    }

    /// With TLS, the SHA-256 fingerprint of the certificate served
    /// (`AB:CD:...`); `None` for plain HTTP.
    pub fn tls_fingerprint(&self) -> Option<&str> {
        self.site.tls.as_ref().map(|t| t.fingerprint.as_str())
    }

    /// Runs on the calling thread until [`Running::shutdown`]-style wake-up.
    pub fn run(self) -> Result<(), ServerError> {
        let result = crate::engines::run(self.site.config.engine, &self.listeners, &self.site);
        drop(self.listeners);
        self.site.log.close();
        result
    }

    /// Runs until SIGINT or SIGTERM, then shuts down gracefully; SIGHUP reopens
    /// the access log.
    pub fn run_until_signal(self) -> Result<(), ServerError> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        for sig in [SIGINT, SIGTERM] {
            let fd = self
                .site
                .shutdown
                .wake_writer()
                .map_err(ServerError::io("creating the signal pipe"))?;
            // The flag first, then the pipe: signal-hook runs a signal's actions
            // in the order they were registered, and a loop woken by the pipe
            // must already see shutdown requested, or it waits out its timer.
            signal_hook::flag::register(sig, self.site.shutdown.signal_flag())
                .map_err(ServerError::io("installing a signal handler"))?;
            signal_hook::low_level::pipe::register(sig, fd)
                .map_err(ServerError::io("installing a signal handler"))?;
        }
        let reopen = self
            .site
            .log
            .reopen_flag()
            .unwrap_or_else(|| Arc::new(std::sync::atomic::AtomicBool::new(false)));
        signal_hook::flag::register(SIGHUP, reopen)
            .map_err(ServerError::io("installing a signal handler"))?;
        self.run()
    }

    /// Runs on a background thread.
    pub fn spawn(self) -> Running {
        let addrs = self.addrs.clone();
        let site = self.site.clone();
        let thread = std::thread::Builder::new()
            .name("servelab-server".into())
            .spawn(move || self.run())
            .expect("spawning the server thread");
        Running {
            addrs,
            site,
            thread,
        }
    }
}

/// A server running on a background thread.
#[derive(Debug)]
pub struct Running {
    addrs: Vec<SocketAddr>,
    site: Arc<Shared>,
    thread: JoinHandle<Result<(), ServerError>>,
}

impl Running {
    /// The (first) address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addrs[0]
    }

    /// Every address the server listens on.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The live counters.
    pub fn stats(&self) -> Arc<Stats> {
        self.site.stats.clone()
    }

    /// Shuts down gracefully (as SIGTERM does) and waits for the server to finish.
    pub fn shutdown(self) -> Result<(), ServerError> {
        self.site.shutdown.trigger();
        self.thread
            .join()
            .unwrap_or_else(|_| Err(ServerError::Config("the server thread panicked".into())))
    }
}

/// `--hsts` as the `--header` field it stands for. Refused without TLS:
/// browsers ignore the field over plain HTTP (RFC 6797 8.1), so a site that
/// asked for it would believe itself protected and be not. (A plain server
/// behind a TLS proxy that wants the field sends it with `--header`.)
fn with_hsts(mut config: Config) -> Result<Config, ServerError> {
    let Some(age) = config.hsts else {
        return Ok(config);
    };
    if config.tls.is_none() {
        return Err(ServerError::Config(
            "--hsts needs HTTPS (--tls-cert and --tls-key, or --tls-self-signed): browsers \
             ignore Strict-Transport-Security over plain HTTP"
                .into(),
        ));
    }
    let name = "strict-transport-security";
    if config
        .headers
        .iter()
        .any(|h| h.name().eq_ignore_ascii_case(name))
    {
        return Err(ServerError::Config(
            "--hsts and --header Strict-Transport-Security: give one of them".into(),
        ));
    }
    let field = format!("Strict-Transport-Security: max-age={age}")
        .parse()
        .map_err(|e| ServerError::Config(format!("--hsts: {e}")))?;
    config.headers.push(field);
    Ok(config)
}

fn listen(addr: SocketAddr, site: &Shared) -> std::io::Result<TcpListener> {
    let socket = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.cloexec(),
        Some(Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    if let SocketAddr::V6(v6) = addr
        && v6.ip().is_unspecified()
    {
        // `[::]` and `:PORT` mean every interface, IPv4 included, whatever
        // the system's `net.ipv6.bindv6only` default.
        socket.set_only_v6(false)?;
    }
    // Accepted sockets inherit these from the listener, which saves three
    // setsockopt calls per connection (see driver/blocking.rs).
    socket.set_tcp_nodelay(true)?;
    let timeouts = SocketTimeouts::of(&site.config);
    socket.set_read_timeout(Some(timeouts.read))?;
    socket.set_write_timeout(Some(timeouts.write))?;
    if site.config.engine.defers_accept() {
        // Set before `listen`, so that no connection is taken undeferred:
        // the event loop dates a connection that comes without bytes back
        // by the deferral (see "Deadlines" in `driver::policy`).
        evloop::defer_accept(&socket)?;
    }
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hsts_becomes_a_header_with_tls_and_is_refused_without() {
        let mut c = Config::new("www");
        c.hsts = Some(600);
        let e = with_hsts(c.clone()).unwrap_err().to_string();
        assert!(e.contains("--hsts needs HTTPS"), "{e}");
        c.tls = Some(crate::tls::TlsSource::SelfSigned);
        let fields: Vec<String> = with_hsts(c.clone())
            .unwrap()
            .headers
            .iter()
            .map(|h| format!("{}: {}", h.name(), h.value()))
            .collect();
        assert_eq!(fields, ["Strict-Transport-Security: max-age=600"]);
        c.headers = vec!["strict-transport-security: max-age=1".parse().unwrap()];
        let e = with_hsts(c.clone()).unwrap_err().to_string();
        assert!(e.contains("give one of them"), "{e}");
        c.hsts = None;
        assert_eq!(
            with_hsts(c).unwrap().headers.len(),
            1,
            "--header alone is kept"
        );
    }
}
