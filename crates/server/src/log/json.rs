//! `--log-format json`: one JSON object per line with the Combined Log Format's fields, for
//! Loki, Elastic and `jq`.
//!
//! ```text
//! {"time":"2000-10-10T13:55:36Z","remote":"127.0.0.1","method":"GET","target":"/a?b",
//!  "protocol":"HTTP/1.1","status":200,"bytes":13,"referer":null,"user_agent":"curl/8",
//!  "service_us":42}
//! ```
//! (one line in the log). A request that could not be parsed has `null` method, target and
//! protocol; an absent `Referer` or `User-Agent` is `null` (the combined format writes `-`);
//! `bytes` is the body length (the combined format's `-` is 0 here).
//!
//! Written by hand into the worker's line buffer, like the combined line, because serde_json
//! would need an owned value or a `Serialize` impl per line and a `String` per field; the
//! output is tested against serde_json's parser instead. Strings are escaped per RFC 8259:
//! `"` and `\` with a backslash, control characters as `\u00XX`. Every field comes from a
//! `&str` (the parser hands out UTF-8 only), so the line is valid UTF-8 and one line.
//!
//! `--log-connections` lines are objects too ([`connection`]):
//! `{"time":...,"conn":"close","peer":"127.0.0.1:40312","requests":2,"conn_us":812}`.
//!
//! Like the combined line (`line.rs`), it is written in two steps: [`request`] when the
//! response is decided, [`finish`] with the service time once it is completely written.

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};

use servelab_http::{RequestHead, Status, Version};

/// The request part of a line; `None` for a request that could not be parsed.
#[derive(Debug, Clone, Copy)]
struct Request<'a> {
    method: &'a str,
    target: &'a str,
    protocol: &'static str,
    referer: Option<&'a str>,
    user_agent: Option<&'a str>,
}

/// Appends a JSON line without its service time (`{"time":...,"user_agent":...`);
/// `req` is `None` for a request that could not be parsed. Returns where the
/// `status` and `bytes` values are in `out` (see [`status_and_bytes`]).
pub(crate) fn request(
    out: &mut Vec<u8>,
    ip: IpAddr,
    clf: &[u8; 26],
    req: Option<&RequestHead<'_>>,
    http2: bool,
    status: Status,
    bytes: u64,
) -> std::ops::Range<usize> {
    let req = req.map(|r| Request {
        method: r.method_str,
        target: r.target,
        protocol: match r.version {
            _ if http2 => "HTTP/2.0",
            Version::Http10 => "HTTP/1.0",
            Version::Http11 => "HTTP/1.1",
        },
        referer: r.referer,
        user_agent: r.user_agent,
    });
    head(out, ip, clf, req, status.code(), bytes)
}

/// Makes `line` the complete line: `start` (from [`request`]), the service time
/// in microseconds, the closing brace and the newline.
pub(crate) fn finish(line: &mut Vec<u8>, start: &[u8], micros: u64) {
    line.clear();
    line.extend_from_slice(start);
    tail(line, micros);
}

/// Makes `line` a `--log-connections` line:
/// `{"time":...,"conn":"open","peer":"127.0.0.1:9"}`, or with
/// `closed = Some((requests, micros))` `"conn":"close"` and `"requests"` and
/// `"conn_us"` after the peer.
pub(crate) fn connection(
    line: &mut Vec<u8>,
    peer: SocketAddr,
    clf: &[u8; 26],
    closed: Option<(u64, u128)>,
    tls: Option<bool>,
) {
    line.clear();
    line.extend_from_slice(b"{\"time\":\"");
    iso_from_clf(clf, line);
    let what = if closed.is_some() { "close" } else { "open" };
    // Writing to a Vec cannot fail; a socket address needs no escaping.
    let _ = write!(line, "\",\"conn\":\"{what}\",\"peer\":\"{peer}\"");
    if let Some((requests, us)) = closed {
        let _ = write!(line, ",\"requests\":{requests},\"conn_us\":{us}");
    }
    if let Some(resumed) = tls {
        let kind = if resumed { "resumed" } else { "full" };
        let _ = write!(line, ",\"tls\":\"{kind}\"");
    }
    line.extend_from_slice(b"}\n");
}

/// Appends everything up to the service time.
fn head(
    out: &mut Vec<u8>,
    ip: IpAddr,
    clf_date: &[u8; 26],
    req: Option<Request<'_>>,
    status: u16,
    bytes: u64,
) -> std::ops::Range<usize> {
    out.extend_from_slice(b"{\"time\":\"");
    iso_from_clf(clf_date, out);
    // Writing to a Vec cannot fail; an IP address needs no escaping.
    let _ = write!(out, "\",\"remote\":\"{ip}\",\"method\":");
    opt_str(out, req.map(|r| r.method));
    out.extend_from_slice(b",\"target\":");
    opt_str(out, req.map(|r| r.target));
    out.extend_from_slice(b",\"protocol\":");
    opt_str(out, req.map(|r| r.protocol));
    out.extend_from_slice(b",\"status\":");
    let at = out.len();
    status_and_bytes(out, status, bytes);
    let fields = at..out.len();
    out.extend_from_slice(b",\"referer\":");
    opt_str(out, req.and_then(|r| r.referer));
    out.extend_from_slice(b",\"user_agent\":");
    opt_str(out, req.and_then(|r| r.user_agent));
    fields
}

/// The values of `status` and `bytes`: `200,"bytes":13` (rewritten for a
/// request whose client left: 499 and the body bytes that did go out).
pub(crate) fn status_and_bytes(out: &mut Vec<u8>, status: u16, bytes: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(status).as_bytes());
    out.extend_from_slice(b",\"bytes\":");
    out.extend_from_slice(itoa::Buffer::new().format(bytes).as_bytes());
}

/// Appends the service time and ends the line.
fn tail(out: &mut Vec<u8>, service_us: u64) {
    out.extend_from_slice(b",\"service_us\":");
    out.extend_from_slice(itoa::Buffer::new().format(service_us).as_bytes());
    out.extend_from_slice(b"}\n");
}

fn opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => string(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// A JSON string literal (RFC 8259 7).
fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            // DEL is legal in JSON, but escaped it cannot upset a terminal.
            0..0x20 | 0x7f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// `10/Oct/2000:13:55:36 +0000` (always UTC here) to `2000-10-10T13:55:36Z`.
fn iso_from_clf(clf: &[u8; 26], out: &mut Vec<u8>) {
    const MONTHS: [&[u8; 3]; 12] = [
        b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov",
        b"Dec",
    ];
    let month = MONTHS.iter().position(|m| m[..] == clf[3..6]).unwrap_or(0) + 1;
    out.extend_from_slice(&clf[7..11]);
    out.push(b'-');
    out.push(b'0' + (month / 10) as u8);
    out.push(b'0' + (month % 10) as u8);
    out.push(b'-');
    out.extend_from_slice(&clf[0..2]);
    out.push(b'T');
    out.extend_from_slice(&clf[12..20]);
    out.push(b'Z');
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLF: &[u8; 26] = b"10/Oct/2000:13:55:36 +0000";

    fn line(req: Option<Request<'_>>, status: u16, bytes: u64, us: u64) -> Vec<u8> {
        let mut out = Vec::new();
        head(&mut out, "::1".parse().unwrap(), CLF, req, status, bytes);
        tail(&mut out, us);
        out
    }

    #[test]
    fn fields_parse_back_with_serde_json() {
        let out = line(
            Some(Request {
                method: "GET",
                target: "/a?b=1",
                protocol: "HTTP/1.1",
                referer: None,
                user_agent: Some("curl/8.5"),
            }),
            200,
            13,
            42,
        );
        assert!(out.ends_with(b"}\n"));
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["time"], "2000-10-10T13:55:36Z");
        assert_eq!(v["remote"], "::1");
        assert_eq!(v["method"], "GET");
        assert_eq!(v["target"], "/a?b=1");
        assert_eq!(v["protocol"], "HTTP/1.1");
        assert_eq!(v["status"], 200);
        assert_eq!(v["bytes"], 13);
        assert_eq!(v["referer"], serde_json::Value::Null);
        assert_eq!(v["user_agent"], "curl/8.5");
        assert_eq!(v["service_us"], 42);
        assert_eq!(v.as_object().unwrap().len(), 10);
    }

    #[test]
    fn hostile_strings_stay_one_valid_line() {
        let nasty = "a\"b\\c\nd\re\tf\u{1}g\u{7f}h é \u{2028} </script>";
        let out = line(
            Some(Request {
                method: "GET",
                target: nasty,
                protocol: "HTTP/1.0",
                referer: Some(nasty),
                user_agent: Some("\"}{\"status\":500"),
            }),
            404,
            0,
            7,
        );
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(!out.contains(&b'\r') && !out.contains(&0x7f));
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["target"], nasty);
        assert_eq!(v["referer"], nasty);
        assert_eq!(v["user_agent"], "\"}{\"status\":500");
        assert_eq!(v["status"], 404);
    }

    #[test]
    fn unparsed_request_has_nulls() {
        let v: serde_json::Value = serde_json::from_slice(&line(None, 400, 120, 1)).unwrap();
        for k in ["method", "target", "protocol", "referer", "user_agent"] {
            assert_eq!(v[k], serde_json::Value::Null, "{k}");
        }
        assert_eq!(v["bytes"], 120);
    }

    #[test]
    fn every_month_converts() {
        let months = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        for (i, m) in months.iter().enumerate() {
            let clf = format!("01/{m}/2026:00:00:00 +0000");
            let mut out = Vec::new();
            iso_from_clf(clf.as_bytes().try_into().unwrap(), &mut out);
            assert_eq!(out, format!("2026-{:02}-01T00:00:00Z", i + 1).as_bytes());
        }
    }
}
