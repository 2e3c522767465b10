//! The run's TLS session store (`--tls-resume on`): the tickets and session
//! IDs that let a new connection resume instead of doing a full handshake.
//!
//! Why not rustls's `ClientSessionMemoryCache`: it keeps at most 8 TLS 1.3
//! tickets per server, and a ticket is single-use (RFC 8446, C.4). A run of
//! `-c 50 --session 1` has up to 50 connections handshaking at once, each
//! taking a ticket when it starts and getting its replacement only after its
//! own handshake, so most found the cache empty: against lighttpd, 884
//! resumed and 1,103 full handshakes in a 1 s round of `bench/peers.py
//! --scenario tls-resume`. This store keeps up to [`TICKETS_PER_SERVER`]
//! tickets per server, enough for every connection of a run to hold one.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Mutex;

use rustls::NamedGroup;
use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;

/// TLS 1.3 tickets kept per server name; the oldest goes first when full. A
/// run needs about one per connection that may open at once (10,000
/// connections is the most the load tests drive); a ticket with its session
/// secret and the server's certificate is about 1 KiB, so a server's tickets
/// stay within about 16 MiB.
pub(crate) const TICKETS_PER_SERVER: usize = 16_384;

/// Server names remembered; past it, one is forgotten to make room. A run
/// talks to a few hosts; the bound only caps the memory of a run over many.
pub(crate) const SERVERS: usize = 256;

#[derive(Default)]
struct ServerData {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    /// Oldest first.
    tls13: VecDeque<Tls13ClientSessionValue>,
}

/// Sessions and tickets, by server name, shared by every connection of a run.
pub(crate) struct SessionStore {
    servers: Mutex<HashMap<ServerName<'static>, ServerData>>,
}

impl fmt::Debug for SessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionStore").finish_non_exhaustive()
    }
}

impl SessionStore {
    pub(crate) fn new() -> SessionStore {
        SessionStore {
            servers: Mutex::new(HashMap::new()),
        }
    }

    /// Edits a server's entry, making it (and room for it) if needed.
    fn edit(&self, name: ServerName<'static>, f: impl FnOnce(&mut ServerData)) {
        // A poisoned lock means a thread panicked mid-edit; the data is
        // still a valid cache, so keep using it.
        let mut map = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        if !map.contains_key(&name) && map.len() >= SERVERS {
            if let Some(k) = map.keys().next().cloned() {
                map.remove(&k);
            }
        }
        f(map.entry(name).or_default());
    }

    fn read<T>(&self, name: &ServerName<'_>, f: impl FnOnce(&mut ServerData) -> T) -> Option<T> {
        let mut map = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        // The key's lifetime must match: an owned copy of the name (no
        // allocation for an IP address), once per handshake.
        map.get_mut(&name.to_owned()).map(f)
    }
}

impl ClientSessionStore for SessionStore {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.edit(name, |d| d.kx_hint = Some(group));
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.read(name, |d| d.kx_hint).flatten()
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(name, |d| d.tls12 = Some(value));
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.read(name, |d| d.tls12.clone()).flatten()
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.read(name, |d| d.tls12 = None);
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.edit(name, |d| {
            if d.tls13.len() >= TICKETS_PER_SERVER {
                d.tls13.pop_front();
            }
            d.tls13.push_back(value);
        });
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        // The newest: the least likely to have expired in a long run.
        self.read(name, |d| d.tls13.pop_back()).flatten()
    }
}
