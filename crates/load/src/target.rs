//! Targets: the URLs a run requests, their weights, and their request bytes.
//!
//! Every request a run sends is built once, here, before the run starts: the event
//! loop then writes the same bytes again and again and never formats or allocates
//! per request. Each target has two variants, one that keeps the connection alive
//! and one with `Connection: close` for the last request of a session, so that the
//! server (as with ab without `-k`) closes first and keeps the TIME_WAIT state.
//!
//! A URL file (`--urls FILE`) has one URL per line, optionally followed by a weight
//! (a positive number, default 1) and a request body (`@FILE`, a path relative
//! to the URL file's directory), in either order; blank lines and lines starting
//! with `#` are skipped. A request picks its target at random, in proportion to
//! the weights. A body (`--body`, or a URL's own) is sent with
//! `Content-Length`; it is read once, before the run, and bounded
//! ([`MAX_BODY`] each, [`MAX_BODIES`] together).

use std::io::Read as _;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::Rng;

use crate::error::LoadError;
use crate::h2_head::H2Head;
use crate::protocol::Protocol;
use crate::tls::{Pin, TlsOptions, TlsTarget, client_config_pinned, server_name};

/// The largest request body, in bytes: far above what a load test posts, and
/// low enough that a mistaken `--body /dev/zero` stops at once.
pub const MAX_BODY: u64 = 64 * 1024 * 1024;
/// The most bytes all the bodies of a run may hold together (a URL file may
/// give each URL its own).
pub const MAX_BODIES: u64 = 256 * 1024 * 1024;

/// The HTTP method of every request of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    /// `GET`: the response carries a body.
    #[default]
    Get,
    /// `HEAD`: the response has a head only, whatever its `Content-Length` says.
    Head,
    /// `POST`, with a body (or `Content-Length: 0`); not sent again after a close.
    Post,
    /// `PUT`, with a body (or `Content-Length: 0`).
    Put,
    /// `PATCH`, with a body (or `Content-Length: 0`); not sent again after a close.
    Patch,
    /// `DELETE`, with a body if one is given.
    Delete,
}

impl Method {
    /// Every method, in the order of `--help`.
    pub const ALL: [Method; 6] = [
        Method::Get,
        Method::Head,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ];

    /// The method's token.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether a request with this method may be sent again when its
    /// connection closed before any answer (RFC 9110, 9.2.2: the intended
    /// effect of several identical requests is that of one).
    pub fn idempotent(self) -> bool {
        match self {
            Method::Get | Method::Head | Method::Put | Method::Delete => true,
            Method::Post | Method::Patch => false,
        }
    }

    /// Whether a request with this method may carry a body here. GET and HEAD
    /// may not: content in them has no defined meaning (RFC 9110, 9.3.1) and
    /// servers refuse it or, worse, read it as the next request.
    pub fn takes_body(self) -> bool {
        !matches!(self, Method::Get | Method::Head)
    }

    /// Whether an empty body is still announced with `Content-Length: 0`
    /// (RFC 9110, 8.6: a user agent should, for methods that expect content).
    fn expects_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

impl std::str::FromStr for Method {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, LoadError> {
        Method::ALL
            .into_iter()
            .find(|m| m.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                LoadError::Spec(format!(
                    "unsupported method `{s}` (GET, HEAD, POST, PUT, PATCH or DELETE)"
                ))
            })
    }
}

/// Reads a request body: `@-` (or `-`) is standard input, `@FILE` or `FILE` a
/// file; refused above [`MAX_BODY`].
pub fn read_body(arg: &str) -> Result<Arc<[u8]>, LoadError> {
    let name = arg.strip_prefix('@').unwrap_or(arg);
    if name == "-" {
        return read_bounded(std::io::stdin().lock(), "standard input", None);
    }
    let path = PathBuf::from(name);
    let file = std::fs::File::open(&path).map_err(|source| LoadError::File {
        path: path.clone(),
        source,
    })?;
    read_bounded(file, name, Some(&path))
}

/// Reads at most [`MAX_BODY`] bytes, and refuses a source with more.
fn read_bounded(
    r: impl std::io::Read,
    name: &str,
    path: Option<&Path>,
) -> Result<Arc<[u8]>, LoadError> {
    let mut buf = Vec::new();
    r.take(MAX_BODY + 1)
        .read_to_end(&mut buf)
        .map_err(|source| LoadError::File {
            path: path.map_or_else(|| PathBuf::from("-"), Path::to_path_buf),
            source,
        })?;
    if buf.len() as u64 > MAX_BODY {
        return Err(LoadError::Body(format!(
            "{name}: more than {} MiB, the most a request body may have",
            MAX_BODY >> 20
        )));
    }
    Ok(buf.into())
}

/// One URL to request, with its weight and, optionally, its own body.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The URL as written.
    pub url: String,
    /// The relative weight (positive).
    pub weight: f64,
    /// This URL's request body, instead of the run's ([`LoadSpec::body`](crate::LoadSpec::body)).
    pub body: Option<Arc<[u8]>>,
}

impl Target {
    /// A target of weight 1, without a body of its own.
    pub fn new(url: impl Into<String>) -> Target {
        Target {
            url: url.into(),
            weight: 1.0,
            body: None,
        }
    }
}

/// Reads a `--urls` file: `URL [WEIGHT] [@BODY]` per line. A body file is
/// read relative to the URL file's directory; one read serves every line
/// that names it.
pub fn read_url_file(path: &Path) -> Result<Vec<Target>, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::File {
        path: path.to_path_buf(),
        source,
    })?;
    let lines = parse_url_list(&text).map_err(|(line, why)| LoadError::UrlFile {
        path: path.to_path_buf(),
        line,
        why,
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut read: Vec<(PathBuf, Arc<[u8]>)> = Vec::new();
    let mut total = 0u64;
    let mut out = Vec::with_capacity(lines.len());
    for (mut target, body) in lines {
        if let Some(b) = body {
            let p = dir.join(b);
            let bytes = match read.iter().find(|(q, _)| *q == p) {
                Some((_, bytes)) => Arc::clone(bytes),
                None => {
                    let bytes = read_body(&p.to_string_lossy())?;
                    total += bytes.len() as u64;
                    if total > MAX_BODIES {
                        return Err(LoadError::Body(format!(
                            "{}: the bodies of the URL file hold more than {} MiB together",
                            path.display(),
                            MAX_BODIES >> 20
                        )));
                    }
                    read.push((p, Arc::clone(&bytes)));
                    bytes
                }
            };
            target.body = Some(bytes);
        }
        out.push(target);
    }
    Ok(out)
}

/// A line of a URL file: the target, and its body file (not read yet).
type UrlLine = (Target, Option<String>);

/// Parses the text of a URL file; errors carry the 1-based line number.
pub(crate) fn parse_url_list(text: &str) -> Result<Vec<UrlLine>, (usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let url = words.next().unwrap_or_default();
        let (mut weight, mut body) = (None, None);
        for w in words {
            if let Some(file) = w.strip_prefix('@') {
                if body.is_some() || file.is_empty() {
                    return Err((i + 1, format!("`{w}`: one body file, as @FILE")));
                }
                body = Some(file.to_string());
            } else if weight.is_some() {
                return Err((i + 1, format!("unexpected `{w}` after the weight")));
            } else {
                match w.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 => weight = Some(x),
                    _ => return Err((i + 1, format!("weight `{w}` is not a positive number"))),
                }
            }
        }
        parse_url(url).map_err(|e| (i + 1, e.to_string()))?;
        let target = Target {
            url: url.to_string(),
            weight: weight.unwrap_or(1.0),
            body: None,
        };
        out.push((target, body));
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
    /// Port (default 80, or 443 for `https`).
    pub port: u16,
    /// `https://`: the connection speaks TLS.
    pub tls: bool,
    /// The `Host` header value (`host` or `host:port`), without a login.
    pub authority: String,
    /// A login written in the URL (`user:password@`), sent as Basic auth.
    pub login: Option<crate::login::Login>,
    /// Path and query, starting with `/`.
    pub path: String,
}

/// Splits `http[s]://host[:port][/path]`.
pub(crate) fn parse_url(url: &str) -> Result<ParsedUrl, LoadError> {
    let bad = |why: &str| LoadError::Url {
        url: crate::login::redact(url),
        why: why.to_string(),
    };
    let (rest, tls) = if let Some(r) = url.strip_prefix("http://") {
        (r, false)
    } else if let Some(r) = url.strip_prefix("https://") {
        (r, true)
    } else {
        return Err(bad("expected http://host[:port]/path or https://..."));
    };
    let default_port = if tls { 443 } else { 80 };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (login, authority) = crate::login::split(authority).map_err(|why| bad(&why))?;
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
            None if after.is_empty() => default_port,
            None => return Err(bad("junk after `]`")),
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().map_err(|_| bad("bad port"))?),
            None => (authority.to_string(), default_port),
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    Ok(ParsedUrl {
        host,
        port,
        tls,
        authority: authority.to_string(),
        login,
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
    /// Request head that keeps the connection alive.
    pub keep_alive: Vec<u8>,
    /// Request head with `Connection: close`, for the last request of a session.
    pub close: Vec<u8>,
    /// The request body that follows either head (empty: none).
    pub body: Arc<[u8]>,
    /// Whether responses carry no body (HEAD).
    pub head: bool,
    /// `https://`: the TLS configuration and server name of its connections.
    pub tls: Option<TlsTarget>,
    /// The same request for HTTP/2 (`--h2`).
    pub h2: H2Head,
}

/// Resolves the targets and builds their requests; `headers` are `Name: value`;
/// `body` is the run's body, for targets without one of their own.
pub(crate) fn prepare(
    targets: &[Target],
    method: Method,
    headers: &[String],
    body: Option<&Arc<[u8]>>,
    tls: &TlsOptions,
    pin: Option<Pin>,
    protocol: Protocol,
) -> Result<Vec<Prepared>, LoadError> {
    let mut extra = String::new();
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut has_host = false;
    let mut has_authorization = false;
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
        // The framing is servelab's: a body's length is known, and a wrong
        // header would make the server read the next request as a body.
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
            return Err(LoadError::FramingHeader(h.clone()));
        }
        has_host |= name.eq_ignore_ascii_case("host");
        has_authorization |= name.eq_ignore_ascii_case("authorization");
        extra.push_str(name);
        extra.push_str(": ");
        extra.push_str(value.trim());
        extra.push_str("\r\n");
        pairs.push((name.to_string(), value.trim().to_string()));
    }
    let mut out: Vec<Prepared> = Vec::with_capacity(targets.len());
    // Built once, for the first https target: every connection of the run
    // shares it, and with it the session cache.
    let mut config = None;
    for t in targets {
        let u = parse_url(&t.url)?;
        let addrs = resolve(&u.host, u.port)?;
        let tls = if u.tls {
            let config = match &config {
                Some(c) => Arc::clone(c),
                None => Arc::clone(config.insert(client_config_pinned(tls, pin, protocol)?)),
            };
            let name = server_name(&u.host)?;
            Some(TlsTarget { config, name })
        } else {
            None
        };
        // A connection carries requests for another target only to the same
        // addresses, in the same scheme, under the same TLS server name.
        let same_tls = |p: &Prepared| match (&p.tls, &tls) {
            (None, None) => true,
            (Some(a), Some(b)) => a.name == b.name,
            _ => false,
        };
        let server = out
            .iter()
            .find(|p| p.addrs == addrs && same_tls(p))
            .map_or(out.len(), |p| p.server);
        let host_line = if has_host {
            String::new()
        } else {
            format!("Host: {}\r\n", u.authority)
        };
        // A login in the URL, unless -H gave the Authorization header itself.
        let login_line = match &u.login {
            Some(l) if !has_authorization => l.header(),
            _ => String::new(),
        };
        let body: Arc<[u8]> = t.body.as_ref().or(body).cloned().unwrap_or_default();
        let length = if !body.is_empty() || method.expects_body() {
            format!("Content-Length: {}\r\n", body.len())
        } else {
            String::new()
        };
        let head = format!(
            "{} {} HTTP/1.1\r\n{host_line}{login_line}{extra}{length}",
            method.as_str(),
            u.path
        );
        let h2 = H2Head::build(
            method.as_str(),
            u.tls,
            &u.authority,
            &u.path,
            &pairs,
            u.login
                .as_ref()
                .filter(|_| !has_authorization)
                .map(|l| l.value()),
            (!body.is_empty() || method.expects_body()).then_some(body.len()),
        )?;
        out.push(Prepared {
            addrs,
            server,
            keep_alive: format!("{head}\r\n").into_bytes(),
            close: format!("{head}Connection: close\r\n\r\n").into_bytes(),
            body,
            head: method == Method::Head,
            tls,
            h2,
        });
    }
    // An HTTP/2 connection carries any of the run's requests, so they must
    // all go to one server (a rule of this generator, not of HTTP/2).
    if protocol.is_h2() && out.iter().any(|p| p.server != 0) {
        return Err(LoadError::Spec(
            "--h2 needs every URL on one server (same scheme, host and port)".to_string(),
        ));
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
        let u = parse_url("https://localhost/x").unwrap();
        assert_eq!((u.port, u.tls), (443, true));
        let u = parse_url("https://[::1]:8443/").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.tls), ("::1", 8443, true));
        assert!(!parse_url("http://a/").unwrap().tls);
        for bad in ["ftp://x/", "http:///", "http://x:port/", "http://x/a b"] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
        // A login leaves the host and the Host header (issue 30).
        let u = parse_url("http://alice:s3cret@127.0.0.1:9/x").unwrap();
        assert_eq!(
            (u.host.as_str(), u.authority.as_str()),
            ("127.0.0.1", "127.0.0.1:9")
        );
        assert!(u.login.is_some());
        let e = parse_url("http://alice:s3cret@/x").unwrap_err().to_string();
        assert!(!e.contains("s3cret") && e.contains("alice:***@"), "{e}");
    }

    #[test]
    fn a_login_in_the_url_is_sent_as_basic_auth() {
        let t = [Target::new("http://alice:s3cret@127.0.0.1:1/x")];
        let p = prepare(
            &t,
            Method::Get,
            &[],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        let head = String::from_utf8(p[0].keep_alive.clone()).unwrap();
        assert_eq!(
            head,
            "GET /x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nAuthorization: Basic YWxpY2U6czNjcmV0\r\n\r\n"
        );
        // -H Authorization wins over the URL's login.
        let h = ["Authorization: Bearer t".to_string()];
        let p = prepare(
            &t,
            Method::Get,
            &h,
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        let head = String::from_utf8(p[0].keep_alive.clone()).unwrap();
        assert!(
            !head.contains("Basic") && head.contains("Bearer t"),
            "{head}"
        );
    }

    #[test]
    fn url_file_with_weights_comments_and_errors() {
        let t = parse_url_list("# site\nhttp://a/ 3\n\nhttp://a/b\n").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].0.weight, 3.0);
        assert_eq!(t[1].0.weight, 1.0);
        // A body file, before or after the weight (the format grew compatibly).
        let t = parse_url_list("http://a/ @x.json\nhttp://a/ 2 @y\nhttp://a/ @z 5\n").unwrap();
        assert_eq!(t[0].1.as_deref(), Some("x.json"));
        assert_eq!((t[1].0.weight, t[1].1.as_deref()), (2.0, Some("y")));
        assert_eq!((t[2].0.weight, t[2].1.as_deref()), (5.0, Some("z")));
        assert!(parse_url_list("http://a/ @x @y").is_err());
        assert!(parse_url_list("http://a/ @").is_err());
        assert!(parse_url_list("http://a/ 1 2").is_err());
        assert_eq!(parse_url_list("http://a/ -1").unwrap_err().0, 1);
        assert_eq!(parse_url_list("http://a/\nnope").unwrap_err().0, 2);
        assert!(parse_url_list("# nothing\n").is_err());
    }

    #[test]
    fn request_bytes_are_prebuilt() {
        let t = [Target::new("http://127.0.0.1:1/x")];
        let p = prepare(
            &t,
            Method::Get,
            &["X-A: 1".to_string()],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert_eq!(
            p[0].keep_alive,
            b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-A: 1\r\n\r\n"
        );
        assert!(p[0].close.ends_with(b"Connection: close\r\n\r\n"));
        let p = prepare(
            &t,
            Method::Head,
            &["Host: h".to_string()],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert_eq!(p[0].keep_alive, b"HEAD /x HTTP/1.1\r\nHost: h\r\n\r\n");
        assert!(
            prepare(
                &t,
                Method::Get,
                &["nocolon".to_string()],
                None,
                &TlsOptions::default(),
                None,
                Protocol::Http1
            )
            .is_err()
        );
        assert!(
            prepare(
                &t,
                Method::Get,
                &["A: b\r\nC: d".to_string()],
                None,
                &TlsOptions::default(),
                None,
                Protocol::Http1
            )
            .is_err()
        );
        // A body is framed by its length; a framing header of the user's is refused.
        let body: Arc<[u8]> = Arc::from(&b"{\"a\":1}"[..]);
        let p = prepare(
            &t,
            Method::Post,
            &[],
            Some(&body),
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert_eq!(
            p[0].keep_alive,
            b"POST /x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 7\r\n\r\n"
        );
        assert_eq!(&p[0].body[..], b"{\"a\":1}");
        let p = prepare(
            &t,
            Method::Put,
            &[],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert!(p[0].keep_alive.ends_with(b"Content-Length: 0\r\n\r\n"));
        let p = prepare(
            &t,
            Method::Delete,
            &[],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert!(!p[0].keep_alive.windows(7).any(|w| w == b"Content"));
        let own = [Target {
            body: Some(Arc::from(&b"xy"[..])),
            ..Target::new("http://127.0.0.1:1/x")
        }];
        let p = prepare(
            &own,
            Method::Post,
            &[],
            Some(&body),
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        assert_eq!(&p[0].body[..], b"xy", "a URL's own body wins");
        let e = prepare(
            &t,
            Method::Post,
            &["Content-Length: 3".into()],
            Some(&body),
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        );
        assert!(matches!(e, Err(LoadError::FramingHeader(_))));
    }

    #[test]
    fn methods_parse_and_know_whether_they_repeat() {
        for m in Method::ALL {
            assert_eq!(m.as_str().to_lowercase().parse::<Method>().unwrap(), m);
        }
        assert!(Method::Get.idempotent() && Method::Put.idempotent());
        assert!(!Method::Post.idempotent() && !Method::Patch.idempotent());
        assert!(!Method::Head.takes_body() && Method::Delete.takes_body());
        assert!("TRACE".parse::<Method>().is_err());
    }

    #[test]
    fn bodies_are_read_from_files_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("b.bin");
        std::fs::write(&f, b"hello").unwrap();
        assert_eq!(&read_body(f.to_str().unwrap()).unwrap()[..], b"hello");
        assert_eq!(
            &read_body(&format!("@{}", f.display())).unwrap()[..],
            b"hello"
        );
        let big = std::fs::File::create(dir.path().join("big")).unwrap();
        big.set_len(MAX_BODY + 1).unwrap();
        let e = read_body(dir.path().join("big").to_str().unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "request body {}: more than 64 MiB, the most a request body may have",
                dir.path().join("big").display()
            )
        );
        assert!(read_body(dir.path().join("missing").to_str().unwrap()).is_err());
        // A URL file's bodies are relative to it.
        std::fs::write(dir.path().join("urls"), "http://127.0.0.1:1/a @b.bin\n").unwrap();
        let t = read_url_file(&dir.path().join("urls")).unwrap();
        assert_eq!(t[0].body.as_deref(), Some(&b"hello"[..]));
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
        let p = prepare(
            &t,
            Method::Get,
            &[],
            None,
            &TlsOptions::default(),
            None,
            Protocol::Http1,
        )
        .unwrap();
        let servers: Vec<usize> = p.iter().map(|p| p.server).collect();
        assert_eq!(servers, vec![0, 1, 0]);
    }

    #[test]
    fn picker_follows_weights() {
        let t = [
            Target {
                weight: 3.0,
                ..Target::new("a")
            },
            Target::new("b"),
        ];
        let p = Picker::new(&t);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
        let n = 40_000;
        let a = (0..n).filter(|_| p.pick(&mut rng) == 0).count();
        let share = a as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }
}
