//! What `--addr` accepts, resolved to socket addresses once, at start.
//!
//! The forms users of other servers type:
//! - `127.0.0.1:8080`, `[::1]:8080`, `[::]:8080`: a literal address;
//! - `:8080`: every interface, IPv4 and IPv6 (Caddy and Go write it so). It is `[::]:8080`
//!   bound with `IPV6_V6ONLY` off, so one socket takes both families whatever the system's
//!   `bindv6only` default is (see `server.rs`);
//! - `localhost:8080`, `example.internal:8080`: a host name, resolved by the system resolver
//!   (`/etc/hosts`, DNS) when the server starts; each distinct address it gives is bound, so
//!   `localhost` answers on both `127.0.0.1` and `::1` where it names both.
//!
//! A port is required (a bare `localhost` is refused rather than guessed), and the flag may be
//! given more than once: every engine serves every listener.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::str::FromStr;

/// Why an `--addr` value is refused; the server does not start. The messages
/// do not repeat the value: clap's error line already quotes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddrError {
    /// No `:PORT` at the end.
    #[error("expected HOST:PORT, [IPV6]:PORT or :PORT")]
    NoPort(String),
    /// The port is not a number from 0 to 65535.
    #[error("the port must be a number from 0 to 65535")]
    BadPort(String),
    /// The host is empty inside brackets, or an unterminated or invalid IPv6 literal.
    #[error("invalid IPv6 address (write it in brackets: [::1]:8080)")]
    BadIpv6(String),
    /// The resolver found no address for the host name (the cause is its message).
    #[error("cannot resolve the host name: {reason}")]
    Unresolved {
        /// The value as given.
        addr: String,
        /// What the resolver said.
        reason: String,
    },
}

/// One `--addr` value and the addresses it stands for (at least one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenAddr {
    given: String,
    addrs: Vec<SocketAddr>,
}

impl ListenAddr {
    /// The addresses to bind, in the resolver's order, without duplicates.
    pub fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

impl fmt::Display for ListenAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.given)
    }
}

impl From<SocketAddr> for ListenAddr {
    fn from(a: SocketAddr) -> ListenAddr {
        ListenAddr {
            given: a.to_string(),
            addrs: vec![a],
        }
    }
}

impl FromStr for ListenAddr {
    type Err = AddrError;

    fn from_str(s: &str) -> Result<ListenAddr, AddrError> {
        let given = s.to_owned();
        let (host, port) = s
            .rsplit_once(':')
            .ok_or_else(|| AddrError::NoPort(given.clone()))?;
        // `[::1]` alone splits inside the literal: there is no port after the bracket.
        if host.starts_with('[') && !host.ends_with(']') {
            return Err(if s.ends_with(']') {
                AddrError::NoPort(given)
            } else {
                AddrError::BadIpv6(given)
            });
        }
        let port = parse_port(port).ok_or_else(|| AddrError::BadPort(given.clone()))?;
        let addrs = if host.is_empty() {
            vec![SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port)]
        } else if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let ip: Ipv6Addr = inner
                .parse()
                .map_err(|_| AddrError::BadIpv6(given.clone()))?;
            vec![SocketAddr::new(IpAddr::V6(ip), port)]
        } else if let Ok(ip) = host.parse::<IpAddr>() {
            if ip.is_ipv6() {
                // `::1:8080` is ambiguous; RFC 3986 wants brackets.
                return Err(AddrError::BadIpv6(given));
            }
            vec![SocketAddr::new(ip, port)]
        } else {
            resolve(host, port).map_err(|reason| AddrError::Unresolved {
                addr: given.clone(),
                reason,
            })?
        };
        Ok(ListenAddr { given, addrs })
    }
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse().ok()
}

fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let mut out: Vec<SocketAddr> = Vec::new();
    for a in (host, port).to_socket_addrs().map_err(|e| e.to_string())? {
        if !out.contains(&a) {
            out.push(a);
        }
    }
    if out.is_empty() {
        return Err("no address".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(s: &str) -> Vec<SocketAddr> {
        s.parse::<ListenAddr>().unwrap().addrs().to_vec()
    }

    #[test]
    fn literal_forms() {
        assert_eq!(addrs("127.0.0.1:8080"), ["127.0.0.1:8080".parse().unwrap()]);
        assert_eq!(addrs("[::1]:0"), ["[::1]:0".parse().unwrap()]);
        assert_eq!(addrs("[::]:8080"), ["[::]:8080".parse().unwrap()]);
        assert_eq!(addrs(":8080"), ["[::]:8080".parse().unwrap()]);
        assert_eq!(":8080".parse::<ListenAddr>().unwrap().to_string(), ":8080");
    }

    #[test]
    fn host_names_resolve() {
        let a = addrs("localhost:8080");
        assert!(!a.is_empty());
        assert!(
            a.iter().all(|a| a.ip().is_loopback() && a.port() == 8080),
            "{a:?}"
        );
    }

    #[test]
    fn refusals_name_the_value() {
        let err = |s: &str| s.parse::<ListenAddr>().unwrap_err();
        assert_eq!(err("localhost"), AddrError::NoPort("localhost".into()));
        assert_eq!(err("[::1]"), AddrError::NoPort("[::1]".into()));
        assert_eq!(
            err("localhost:http"),
            AddrError::BadPort("localhost:http".into())
        );
        assert_eq!(err(":65536"), AddrError::BadPort(":65536".into()));
        assert_eq!(err(":-1"), AddrError::BadPort(":-1".into()));
        assert_eq!(err("127.0.0.1:"), AddrError::BadPort("127.0.0.1:".into()));
        assert_eq!(err("[::1:80"), AddrError::BadIpv6("[::1:80".into()));
        assert_eq!(err("[nope]:80"), AddrError::BadIpv6("[nope]:80".into()));
        assert_eq!(err("::1:80"), AddrError::BadIpv6("::1:80".into()));
        // (An unresolvable name is not tried here: the lookup could leave the machine.)
    }
}
