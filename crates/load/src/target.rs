//! Targets: the URLs a run requests, their weights, and their request bytes.
//!
//! Every request a run sends is built once, here, before the run starts: the event
//! loop then writes the same bytes again and again and never formats or allocates
//! per request. Each target has two variants, one that keeps the connection alive
//! and one with `Connection: close` for the last request of a session, so that the
//! server (as with ab without `-k`) closes first and keeps the TIME_WAIT state.
//!
//! A URL file (`--urls FILE`) has one URL per line, optionally followed by a weight
//! (a positive number, default 1); blank lines and lines starting with `#` are
//! skipped. A request picks its target at random, in proportion to the weights.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;

use rand::Rng;

use crate::error::LoadError;

/// The HTTP method of every request of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// `GET`: the response carries a body.
    #[default]
    Get,
    /// `HEAD`: the response has a head only, whatever its `Content-Length` says.
    Head,
}

impl std::str::FromStr for Method {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, LoadError> {
        match s.to_ascii_uppercase().as_str() {
            "GET" => Ok(Method::Get),
            "HEAD" => Ok(Method::Head),
            _ => Err(LoadError::Spec(format!(
                "unsupported method `{s}` (GET or HEAD)"
            ))),
        }
    }
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
        }
    }

    /// Whether a request with this method may be sent again when its
    /// connection closed before any answer (RFC 9110, 9.2.2: the intended
    /// effect of several identical requests is that of one).
    pub fn idempotent(self) -> bool {
        match self {
            Method::Get | Method::Head => true,
        }
    }
}

/// One URL to request, with its weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The URL as written.
    pub url: String,
    /// The relative weight (positive).
    pub weight: f64,
}

impl Target {
    /// A target of weight 1.
    pub fn new(url: impl Into<String>) -> Target {
        Target {
            url: url.into(),
            weight: 1.0,
        }
    }
}

/// Reads a `--urls` file: `URL [WEIGHT]` per line.
pub fn read_url_file(path: &Path) -> Result<Vec<Target>, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::File {
        path: path.to_path_buf(),
        source,
    })?;
    parse_url_list(&text).map_err(|(line, why)| LoadError::UrlFile {
        path: path.to_path_buf(),
        line,
        why,
    })
}

/// Parses the text of a URL file; errors carry the 1-based line number.
pub(crate) fn parse_url_list(text: &str) -> Result<Vec<Target>, (usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let url = words.next().unwrap_or_default();
        let weight = match words.next() {
            None => 1.0,
            Some(w) => match w.parse::<f64>() {
                Ok(x) if x.is_finite() && x > 0.0 => x,
                _ => return Err((i + 1, format!("weight `{w}` is not a positive number"))),
            },
        };
        if let Some(extra) = words.next() {
            return Err((i + 1, format!("unexpected `{extra}` after the weight")));
        }
        parse_url(url).map_err(|e| (i + 1, e.to_string()))?;
        out.push(Target {
            url: url.to_string(),
            weight,
        });
    }
    if out.is_empty() {
        return Err((0, "no URLs in the file".to_string()));
    }
    Ok(out)
}

/// A URL split into the parts a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedUrl {
    /// Host as written (name or address), for resolution.
    pub host: String,
    /// Port (default 80).
    pub port: u16,
    /// The `Host` header value (`host` or `host:port`).
    pub authority: String,
    /// Path and query, starting with `/`.
    pub path: String,
}

/// Splits `http://host[:port][/path]`.
pub(crate) fn parse_url(url: &str) -> Result<ParsedUrl, LoadError> {
    let bad = |why: &str| LoadError::Url {
        url: url.to_string(),
        why: why.to_string(),
    };
    let rest = if let Some(r) = url.strip_prefix("http://") {
        r
    } else if url.starts_with("https://") {
        return Err(bad("https is not supported; use http://"));
    } else {
        return Err(bad("expected http://host[:port]/path"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(bad("no host"));
    }
    if path.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(bad("the path has spaces or control characters"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed `[`"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().map_err(|_| bad("bad port"))?,
            None if after.is_empty() => 80,
            None => return Err(bad("junk after `]`")),
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().map_err(|_| bad("bad port"))?),
            None => (authority.to_string(), 80),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok(ParsedUrl {
        host,
        port,
        authority: authority.to_string(),
        path: path.to_string(),
    })
}

/// A target ready for the event loop: addresses and prebuilt request bytes.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// Where to connect: every address the host resolved to, tried in turn until
    /// one connects (IPv4 first, then the resolver's order).
    pub addrs: Vec<SocketAddr>,
    /// Targets with the same `server` have the same addresses, so a keep-alive
    /// connection opened for one can carry requests for the other.
    pub server: usize,
    /// Request bytes that keep the connection alive.
    pub keep_alive: Vec<u8>,
    /// Request bytes with `Connection: close`, for the last request of a session.
    pub close: Vec<u8>,
    /// Whether responses carry no body (HEAD).
    pub head: bool,
}

/// Resolves the targets and builds their requests; `headers` are `Name: value`.
pub(crate) fn prepare(
    targets: &[Target],
    method: Method,
    headers: &[String],
) -> Result<Vec<Prepared>, LoadError> {
    let mut extra = String::new();
    let mut has_host = false;
    for h in headers {
        let (name, value) = h
            .split_once(':')
            .ok_or_else(|| LoadError::Header(h.clone()))?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
            || value.bytes().any(|b| b == b'\r' || b == b'\n')
        {
            return Err(LoadError::Header(h.clone()));
        }
        has_host |= name.eq_ignore_ascii_case("host");
        extra.push_str(name);
        extra.push_str(": ");
        extra.push_str(value.trim());
        extra.push_str("\r\n");
    }
    let mut out: Vec<Prepared> = Vec::with_capacity(targets.len());
    for t in targets {
        let u = parse_url(&t.url)?;
        let addrs = resolve(&u.host, u.port)?;
        let server = out
            .iter()
            .find(|p| p.addrs == addrs)
            .map_or(out.len(), |p| p.server);
        let host_line = if has_host {
            String::new()
        } else {
            format!("Host: {}\r\n", u.authority)
        };
        let head = format!(
            "{} {} HTTP/1.1\r\n{host_line}{extra}",
            method.as_str(),
            u.path
        );
        out.push(Prepared {
            addrs,
            server,
            keep_alive: format!("{head}\r\n").into_bytes(),
            close: format!("{head}Connection: close\r\n\r\n").into_bytes(),
            head: method == Method::Head,
        });
    }
    Ok(out)
}

/// Every address of `host`, IPv4 first (servers in the lab bind 127.0.0.1, and
/// `localhost` may list ::1 first), duplicates removed, otherwise in the
/// resolver's order. The event loop tries them in turn, as curl does.
///
/// `localhost` and `*.localhost` are loopback by definition (RFC 6761, 6.3) and
/// resolve to both 127.0.0.1 and ::1 without asking the resolver, as curl does
/// since 7.78: many `/etc/hosts` files list only one of the two, and then a
/// server that listens on the other could not be reached by name.
fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, LoadError> {
    let mut addrs: Vec<SocketAddr> = Vec::new();
    let lower = host.to_ascii_lowercase();
    let loopback = lower == "localhost" || lower.ends_with(".localhost");
    let found: Vec<SocketAddr> = if loopback {
        vec![
            SocketAddr::from(([127, 0, 0, 1], port)),
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, port)),
        ]
    } else {
        (host, port)
            .to_socket_addrs()
            .map_err(|e| LoadError::Resolve {
                host: host.to_string(),
                why: e.to_string(),
            })?
            .collect()
    };
    for a in found {
        if !addrs.contains(&a) {
            addrs.push(a);
        }
    }
    // A stable sort keeps the resolver's order within each family.
    addrs.sort_by_key(|a| !a.is_ipv4());
    if addrs.is_empty() {
        return Err(LoadError::Resolve {
            host: host.to_string(),
            why: "no addresses".to_string(),
        });
    }
    Ok(addrs)
}

/// Picks a target index in proportion to the weights.
#[derive(Debug, Clone)]
pub(crate) struct Picker {
    /// Cumulative weights, normalised so that the last is 1.
    cumulative: Vec<f64>,
}

impl Picker {
    pub(crate) fn new(targets: &[Target]) -> Picker {
        let total: f64 = targets.iter().map(|t| t.weight).sum();
        let mut acc = 0.0;
        let cumulative = targets
            .iter()
            .map(|t| {
                acc += t.weight / total;
                acc
            })
            .collect();
        Picker { cumulative }
    }

    /// The index of the next request's target.
    #[inline]
    pub(crate) fn pick<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        if self.cumulative.len() <= 1 {
            return 0;
        }
        let x: f64 = rng.random();
        self.cumulative
            .iter()
            .position(|&c| x < c)
            .unwrap_or(self.cumulative.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn splits_urls() {
        let u = parse_url("http://127.0.0.1:8080/a/b?x=1").unwrap();
        assert_eq!(u.host, "127.0.0.1");
        assert_eq!(u.port, 8080);
        assert_eq!(u.authority, "127.0.0.1:8080");
        assert_eq!(u.path, "/a/b?x=1");
        let u = parse_url("http://localhost").unwrap();
        assert_eq!((u.port, u.path.as_str()), (80, "/"));
        let u = parse_url("http://[::1]:9/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 9));
        for bad in [
            "ftp://x/",
            "https://x/",
            "http:///",
            "http://x:port/",
            "http://x/a b",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn url_file_with_weights_comments_and_errors() {
        let t = parse_url_list("# site\nhttp://a/ 3\n\nhttp://a/b\n").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].weight, 3.0);
        assert_eq!(t[1].weight, 1.0);
        assert_eq!(parse_url_list("http://a/ -1").unwrap_err().0, 1);
        assert_eq!(parse_url_list("http://a/\nnope").unwrap_err().0, 2);
        assert!(parse_url_list("# nothing\n").is_err());
    }

    #[test]
    fn request_bytes_are_prebuilt() {
        let t = [Target::new("http://127.0.0.1:1/x")];
        let p = prepare(&t, Method::Get, &["X-A: 1".to_string()]).unwrap();
        assert_eq!(
            p[0].keep_alive,
            b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-A: 1\r\n\r\n"
        );
        assert!(p[0].close.ends_with(b"Connection: close\r\n\r\n"));
        let p = prepare(&t, Method::Head, &["Host: h".to_string()]).unwrap();
        assert_eq!(p[0].keep_alive, b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n");
        assert!(prepare(&t, Method::Get, &["nocolon".to_string()]).is_err());
        assert!(prepare(&t, Method::Get, &["A: b\r\nC: d".to_string()]).is_err());
    }

    #[test]
    fn localhost_resolves_to_every_address_ipv4_first() {
        let want: Vec<SocketAddr> =
            vec!["127.0.0.1:80".parse().unwrap(), "[::1]:80".parse().unwrap()];
        assert_eq!(resolve("localhost", 80).unwrap(), want);
        assert_eq!(resolve("app.LocalHost", 80).unwrap(), want);
        let literal = resolve("::1", 9).unwrap();
        assert_eq!(literal, vec!["[::1]:9".parse().unwrap()]);
    }

    #[test]
    fn targets_on_one_server_share_it() {
        let t = [
            Target::new("http://127.0.0.1:1/a"),
            Target::new("http://127.0.0.1:2/b"),
            Target::new("http://127.0.0.1:1/c"),
        ];
        let p = prepare(&t, Method::Get, &[]).unwrap();
        let servers: Vec<usize> = p.iter().map(|p| p.server).collect();
        assert_eq!(servers, vec![0, 1, 0]);
    }

    #[test]
    fn picker_follows_weights() {
        let t = [
            Target {
                url: "a".into(),
                weight: 3.0,
            },
            Target {
                url: "b".into(),
                weight: 1.0,
            },
        ];
        let p = Picker::new(&t);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let n = 40_000;
        let a = (0..n).filter(|_| p.pick(&mut rng) == 0).count();
        let share = a as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }
}
