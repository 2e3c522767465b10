//! What an access-log line says: the Combined Log Format of a request, with its
//! service time in microseconds appended, and the `conn` lines of
//! `--log-connections`.
//!
//! A request line is assembled in two steps because its last field is known
//! only once the response is completely written: [`request`] appends
//! everything but the service time when the response is produced (the
//! connection keeps it), and [`finish`] completes it when the last byte is out.
//! Request fields are escaped ([`push_escaped`]) so a line stays one line and a
//! client cannot forge entries.

use std::net::{IpAddr, SocketAddr};

use servelab_http::{RequestHead, Status, Version};

/// Appends a Combined Log Format line without its service time: `ip - - [date]
/// "request" status bytes "referer" "user-agent"`. `req` is `None` for a
/// request that could not be parsed (logged as `"-"`). Returns where the
/// `status bytes` fields are in `l` (see [`status_and_bytes`]).
pub(crate) fn request(
    l: &mut Vec<u8>,
    ip: IpAddr,
    clf: &[u8; 26],
    req: Option<&RequestHead<'_>>,
    http2: bool,
    status: Status,
    bytes: u64,
) -> std::ops::Range<usize> {
    // Writing to a Vec cannot fail.
    let _ = std::io::Write::write_fmt(l, format_args!("{ip} - - ["));
    l.extend_from_slice(clf);
    l.extend_from_slice(b"] \"");
    match req {
        Some(r) => {
            push_escaped(l, r.method_str.as_bytes());
            l.push(b' ');
            push_escaped(l, r.target.as_bytes());
            l.extend_from_slice(match r.version {
                _ if http2 => b" HTTP/2.0",
                Version::Http10 => b" HTTP/1.0",
                Version::Http11 => b" HTTP/1.1",
            });
        }
        None => l.push(b'-'),
    }
    l.extend_from_slice(b"\" ");
    let fields = l.len();
    status_and_bytes(l, status.code(), bytes);
    let fields = fields..l.len();
    l.extend_from_slice(b" \"");
    push_escaped(l, req.and_then(|r| r.referer).unwrap_or("-").as_bytes());
    l.extend_from_slice(b"\" \"");
    push_escaped(l, req.and_then(|r| r.user_agent).unwrap_or("-").as_bytes());
    l.push(b'"');
    fields
}

/// The `status bytes` fields of a line; `-` for no bytes, as CLF has it
/// (rewritten for a request whose client left: 499 and the body bytes that
/// did go out).
pub(crate) fn status_and_bytes(l: &mut Vec<u8>, status: u16, bytes: u64) {
    l.extend_from_slice(itoa::Buffer::new().format(status).as_bytes());
    l.push(b' ');
    if bytes == 0 {
        l.push(b'-');
    } else {
        l.extend_from_slice(itoa::Buffer::new().format(bytes).as_bytes());
    }
}

/// nginx's status for a request whose client closed its connection before the
/// response was completely written.
pub(crate) const CLIENT_CLOSED: u16 = 499;

/// Makes `line` the complete line: `start` (from [`request`]), a space, the
/// service time in microseconds and the newline.
pub(crate) fn finish(line: &mut Vec<u8>, start: &[u8], micros: u64) {
    line.clear();
    line.extend_from_slice(start);
    line.push(b' ');
    line.extend_from_slice(itoa::Buffer::new().format(micros).as_bytes());
    line.push(b'\n');
}

/// Makes `line` a `--log-connections` line: `conn PEER open [date]`, or with
/// `closed = Some((requests, micros))` `conn PEER close [date] requests=N us=N`.
pub(crate) fn connection(
    line: &mut Vec<u8>,
    peer: SocketAddr,
    clf: &[u8; 26],
    closed: Option<(u64, u128)>,
    tls: Option<bool>,
) {
    line.clear();
    // Writing to a Vec cannot fail.
    let _ = std::io::Write::write_fmt(line, format_args!("conn {peer} "));
    line.extend_from_slice(if closed.is_some() {
        b"close ["
    } else {
        b"open ["
    });
    line.extend_from_slice(clf);
    line.push(b']');
    if let Some((requests, us)) = closed {
        let _ = std::io::Write::write_fmt(line, format_args!(" requests={requests} us={us}"));
    }
    if let Some(resumed) = tls {
        line.extend_from_slice(if resumed {
            b" tls=resumed"
        } else {
            b" tls=full"
        });
    }
    line.push(b'\n');
}

/// Copies a request field into a log line, escaping `"`, `\\` and bytes outside
/// printable ASCII as `\xHH` (Apache does the same), so a line stays one line and
/// a client cannot forge log entries.
fn push_escaped(out: &mut Vec<u8>, s: &[u8]) {
    for &b in s {
        match b {
            b'"' | b'\\' => {
                out.push(b'\\');
                out.push(b);
            }
            0x20..=0x7e => out.push(b),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'x',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: &[u8; 26] = b"10/Oct/2000:13:55:36 +0000";

    #[test]
    fn log_escaping_keeps_one_line() {
        let mut v = Vec::new();
        push_escaped(&mut v, b"a\"b\\c\nd\xff");
        assert_eq!(v, b"a\\\"b\\\\c\\x0ad\\xff");
    }

    #[test]
    fn unparsed_request_is_a_dash_and_time_comes_last() {
        let mut start = Vec::new();
        let clf = b"10/Oct/2000:13:55:36 +0000";
        request(
            &mut start,
            "127.0.0.1".parse().unwrap(),
            clf,
            None,
            false,
            Status::BAD_REQUEST,
            0,
        );
        let mut line = Vec::new();
        finish(&mut line, &start, 42);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"-\" 400 - \"-\" \"-\" 42\n"
        );
    }

    #[test]
    fn status_and_bytes_are_where_request_says() {
        let mut start = Vec::new();
        let fields = request(
            &mut start,
            "127.0.0.1".parse().unwrap(),
            D,
            None,
            false,
            Status::OK,
            1000,
        );
        assert_eq!(&start[fields.clone()], b"200 1000");
        let mut patched = start[..fields.start].to_vec();
        status_and_bytes(&mut patched, CLIENT_CLOSED, 0);
        patched.extend_from_slice(&start[fields.end..]);
        assert_eq!(
            patched,
            b"127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"-\" 499 - \"-\" \"-\""
        );
    }

    #[test]
    fn connection_lines() {
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let mut line = Vec::new();
        connection(&mut line, peer, D, None, None);
        assert_eq!(
            line,
            b"conn 127.0.0.1:9 open [10/Oct/2000:13:55:36 +0000]\n"
        );
        connection(&mut line, peer, D, Some((3, 17)), None);
        assert_eq!(
            line,
            b"conn 127.0.0.1:9 close [10/Oct/2000:13:55:36 +0000] requests=3 us=17\n"
        );
        connection(&mut line, peer, D, Some((3, 17)), Some(true));
        assert_eq!(
            line,
            b"conn 127.0.0.1:9 close [10/Oct/2000:13:55:36 +0000] requests=3 us=17 tls=resumed\n"
        );
    }
}
