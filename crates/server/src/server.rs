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

use crate::shared::Shared;
use crate::{Config, Engine, ServerError, Stats};

/// Pending connections the kernel may hold for us (capped by `net.core.somaxconn`).
const BACKLOG: i32 = 4096;

/// A bound server, ready to run.
#[derive(Debug)]
pub struct Server {
    site: Arc<Shared>,
    listener: TcpListener,
}

impl Server {
    /// Checks the configuration, opens the root and the log, and binds the address.
    pub fn bind(config: Config) -> Result<Server, ServerError> {
        let addr = config.addr;
        let site = Shared::new(config)?;
        let listener = listen(addr, &site).map_err(|source| ServerError::Bind { addr, source })?;
        Ok(Server {
            site: Arc::new(site),
            listener,
        })
    }

    /// The address actually bound (the port is known here when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
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

    /// Runs on the calling thread until [`Running::shutdown`]-style wake-up.
    pub fn run(self) -> Result<(), ServerError> {
        let result = self.site.config.engine.run(&self.listener, &self.site);
        drop(self.listener);
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
            signal_hook::low_level::pipe::register(sig, fd)
                .map_err(ServerError::io("installing a signal handler"))?;
            signal_hook::flag::register(sig, self.site.shutdown.signal_flag())
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
        let addr = self.local_addr();
        let site = self.site.clone();
        let thread = std::thread::Builder::new()
            .name("servelab-server".into())
            .spawn(move || self.run())
            .expect("spawning the server thread");
        Running { addr, site, thread }
    }
}

/// A server running on a background thread.
#[derive(Debug)]
pub struct Running {
    addr: SocketAddr,
    site: Arc<Shared>,
    thread: JoinHandle<Result<(), ServerError>>,
}

impl Running {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
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

fn listen(addr: SocketAddr, site: &Shared) -> std::io::Result<TcpListener> {
    let socket = Socket::new(
        Domain::for_address(addr),
        Type::STREAM.cloexec(),
        Some(Protocol::TCP),
    )?;
    socket.set_reuse_address(true)?;
    // Accepted sockets inherit these from the listener, which saves three
    // setsockopt calls per connection (see blocking.rs).
    socket.set_tcp_nodelay(true)?;
    socket.set_read_timeout(Some(site.config.read_timeout))?;
    socket.set_write_timeout(Some(site.config.write_timeout))?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}
