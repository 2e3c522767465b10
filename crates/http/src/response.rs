//! The response head: a plain struct of the fields a static-file server sends, encoded straight
//! into the caller's buffer.
//!
//! `encode` appends bytes only (numbers through `itoa`, strings copied), so with a reused `Vec`
//! it does not allocate. The status line is always `HTTP/1.1`, also to 1.0 clients: RFC 9110 2.5
//! says a server sends its own highest version, and 1.0 clients accept it. Field values never
//! contain CR or LF: control bytes in a value are dropped, so even a careless caller cannot
//! split the response (header injection).
//!
//! [`FileFields`] is the fast path for the most common response, a whole file's `200`: the
//! fields that depend only on the file are encoded (and cleaned) once, when the server caches
//! it, and the status line, `Date` and `Server` once a second ([`OkStart`]), so each response
//! copies two blocks. It writes the same bytes as `encode`.
//!
//! ```
//! use servelab_http::{ResponseHead, Status};
//! let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
//! let mut head = ResponseHead::new(Status::OK, date);
//! head.content_length = Some(5);
//! let mut out = Vec::new();
//! head.encode(&mut out);
//! assert_eq!(out, b"HTTP/1.1 200 OK\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: servelab\r\nContent-Length: 5\r\n\r\n");
//! ```

use crate::date::HttpDate;
use crate::status::Status;

/// The interim response that invites the content of a request with `Expect: 100-continue`
/// (RFC 9110 15.2.1), sent only to HTTP/1.1 clients (15.2: never a 1xx to HTTP/1.0). It
/// carries no fields: `Date` is optional on 1xx responses (6.6.1), and a 1xx never has
/// content, so the final response simply follows it on the wire.
pub const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// What to say about the connection's persistence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Connection {
    /// The connection stays open and we say so: `Connection: keep-alive`. Needed for HTTP/1.0
    /// clients, which otherwise assume close (RFC 9112 9.3); harmless for 1.1 ones.
    KeepAlive,
    /// The server closes after this response: `Connection: close`.
    Close,
    /// The connection stays open by default rules: nothing for an HTTP/1.1 client, and
    /// `Connection: keep-alive` when `ResponseHead::http10` is set.
    #[default]
    Default,
}

/// The `Content-Range` field of a 206 or 416 (RFC 9110 14.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentRange {
    /// `bytes start-end/len` (end inclusive).
    Range {
        /// First byte sent.
        start: u64,
        /// Last byte sent, inclusive.
        end: u64,
        /// Length of the whole representation.
        len: u64,
    },
    /// `bytes */len`, sent with 416.
    Unsatisfied {
        /// Length of the whole representation.
        len: u64,
    },
}

/// A response head. Build it with [`ResponseHead::new`], set the fields that apply, `encode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseHead<'a> {
    /// The status.
    pub status: Status,
    /// The 29-byte IMF-fixdate for `Date` (cached once a second by the server; see `date`).
    pub date: &'a [u8],
    /// `Content-Length`; `None` only where the rules allow no length (304, or a body delimited
    /// by closing the connection).
    pub content_length: Option<u64>,
    /// `Content-Type`.
    pub content_type: Option<&'a str>,
    /// `Last-Modified`, an IMF-fixdate.
    pub last_modified: Option<&'a [u8]>,
    /// `ETag`, quotes included.
    pub etag: Option<&'a str>,
    /// `Content-Range` for 206 and 416.
    pub content_range: Option<ContentRange>,
    /// `Location`, for 301.
    pub location: Option<&'a str>,
    /// `Allow`, for 405.
    pub allow: Option<&'a str>,
    /// `Retry-After` in seconds, for 503.
    pub retry_after: Option<u32>,
    /// `Accept-Ranges: bytes`.
    pub accept_ranges: bool,
    /// Persistence; see [`Connection`].
    pub connection: Connection,
    /// The request was HTTP/1.0: a connection that stays open ([`Connection::Default`] or
    /// [`Connection::KeepAlive`]) must be announced with `Connection: keep-alive`.
    pub http10: bool,
}

impl<'a> ResponseHead<'a> {
    /// A head with the given status and date and every other field unset.
    pub fn new(status: Status, date: &'a [u8]) -> Self {
        ResponseHead {
            status,
            date,
            content_length: None,
            content_type: None,
            last_modified: None,
            etag: None,
            content_range: None,
            location: None,
            allow: None,
            retry_after: None,
            accept_ranges: false,
            connection: Connection::Default,
            http10: false,
        }
    }

    /// Appends the status line, `Date`, `Server: servelab`, the set fields, `Content-Length`
    /// and the empty line to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut num = itoa::Buffer::new();
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(num.format(self.status.code()).as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.status.reason().as_bytes());
        put_date(out, self.date);
        put_file_fields(
            out,
            self.content_type,
            self.last_modified,
            self.etag,
            self.accept_ranges,
        );
        match self.content_range {
            Some(ContentRange::Range { start, end, len }) => {
                out.extend_from_slice(b"Content-Range: bytes ");
                out.extend_from_slice(num.format(start).as_bytes());
                out.push(b'-');
                out.extend_from_slice(num.format(end).as_bytes());
                out.push(b'/');
                out.extend_from_slice(num.format(len).as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Some(ContentRange::Unsatisfied { len }) => {
                out.extend_from_slice(b"Content-Range: bytes */");
                out.extend_from_slice(num.format(len).as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            None => {}
        }
        if let Some(v) = self.location {
            field(out, b"Location: ", v.as_bytes());
        }
        if let Some(v) = self.allow {
            field(out, b"Allow: ", v.as_bytes());
        }
        if let Some(secs) = self.retry_after {
            field(out, b"Retry-After: ", num.format(secs).as_bytes());
        }
        put_end(out, self.connection, self.http10, self.content_length);
    }

    /// Gives each field [`ResponseHead::encode`] writes, in its order, as a lowercase name
    /// and a value, leaving out the status line and the connection fields: an HTTP/2 head
    /// (RFC 9113 §8.2.2 has no connection fields). Values are cleaned as `encode` cleans them.
    pub fn each_field(&self, mut f: impl FnMut(&'static str, &[u8])) {
        let mut num = itoa::Buffer::new();
        let mut clean = Vec::new();
        let mut put = |name: &'static str, value: &[u8]| {
            if is_clean(value) {
                f(name, value);
            } else {
                clean.clear();
                put_value(&mut clean, value);
                f(name, &clean);
            }
        };
        put("date", self.date);
        put("server", SERVER);
        if let Some(v) = self.content_type {
            put("content-type", v.as_bytes());
        }
        if let Some(v) = self.last_modified {
            put("last-modified", v);
        }
        if let Some(v) = self.etag {
            put("etag", v.as_bytes());
        }
        if self.accept_ranges {
            put("accept-ranges", b"bytes");
        }
        match self.content_range {
            Some(ContentRange::Range { start, end, len }) => {
                let mut v = Vec::with_capacity(48);
                v.extend_from_slice(b"bytes ");
                v.extend_from_slice(num.format(start).as_bytes());
                v.push(b'-');
                v.extend_from_slice(num.format(end).as_bytes());
                v.push(b'/');
                v.extend_from_slice(num.format(len).as_bytes());
                put("content-range", &v);
            }
            Some(ContentRange::Unsatisfied { len }) => {
                let mut v = b"bytes */".to_vec();
                v.extend_from_slice(num.format(len).as_bytes());
                put("content-range", &v);
            }
            None => {}
        }
        if let Some(v) = self.location {
            put("location", v.as_bytes());
        }
        if let Some(v) = self.allow {
            put("allow", v.as_bytes());
        }
        if let Some(secs) = self.retry_after {
            put("retry-after", num.format(secs).as_bytes());
        }
        if let Some(n) = self.content_length {
            put("content-length", num.format(n).as_bytes());
        }
    }
}

/// The start of every `200 OK`: the status line, `Date` and `Server`, which change only once
/// a second. A server keeps one beside its date strings and renews it with them, so that a
/// whole file's head is two block copies ([`FileFields::encode_ok`]).
///
/// It is made from an [`HttpDate`], whose `Date` value is always 29 clean bytes, so the block
/// has a fixed length and is copied without a loop or a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OkStart([u8; OkStart::LEN]);

impl OkStart {
    const STATUS: &[u8] = b"HTTP/1.1 200 OK\r\nDate: ";
    const SERVER: &[u8] = SERVER_FIELD;
    const LEN: usize = Self::STATUS.len() + 29 + Self::SERVER.len();

    /// The block for the second of `date`.
    pub fn new(date: &HttpDate) -> OkStart {
        let mut block = [0; OkStart::LEN];
        let (status, rest) = block.split_at_mut(Self::STATUS.len());
        let (value, server) = rest.split_at_mut(29);
        status.copy_from_slice(Self::STATUS);
        value.copy_from_slice(date.http());
        server.copy_from_slice(Self::SERVER);
        OkStart(block)
    }

    /// The bytes: `HTTP/1.1 200 OK`, `Date` and `Server`, each ending in CRLF.
    pub fn as_bytes(&self) -> &[u8; OkStart::LEN] {
        &self.0
    }

    /// The `Date` value in the block (29 bytes).
    pub fn date(&self) -> &[u8] {
        &self.0[Self::STATUS.len()..Self::STATUS.len() + 29]
    }
}

/// The fields of a file's `200 OK` that are the same in every response for it:
/// `Content-Type`, `Last-Modified`, `ETag`, `Accept-Ranges: bytes` and `Content-Length`,
/// encoded (and cleaned) once, when a server caches the file, so that a response copies
/// them as one block instead of checking each value again.
///
/// ```
/// use servelab_http::{Connection, FileFields, HttpDate, ResponseHead, Status};
/// use servelab_http::response::OkStart;
/// let now = HttpDate::new(std::time::SystemTime::UNIX_EPOCH);
/// let date = now.http();
/// let fields = FileFields::new("text/plain", date, "\"5-0\"", 5);
/// let mut fast = Vec::new();
/// fields.encode_ok(&OkStart::new(&now), Connection::Default, false, &mut fast);
/// let mut head = ResponseHead::new(Status::OK, date);
/// head.content_type = Some("text/plain");
/// head.last_modified = Some(date);
/// head.etag = Some("\"5-0\"");
/// head.accept_ranges = true;
/// head.content_length = Some(5);
/// let mut general = Vec::new();
/// head.encode(&mut general);
/// assert_eq!(fast, general);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFields {
    /// The four fields in the order [`ResponseHead::encode`] puts them, then
    /// `Content-Length` and the empty line that ends the head.
    rest: Box<[u8]>,
    /// Where `Content-Length` starts in `rest`: a connection field goes there.
    length_at: usize,
    /// Where the values of `Content-Type`, `Last-Modified`, `ETag` and `Content-Length`
    /// are in `rest` (cleaned), for [`FileFields::each_field`].
    values: [(u32, u32); 4],
    accept_ranges: bool,
}

impl FileFields {
    /// Encodes the fields of a file of `content_length` bytes.
    pub fn new(
        content_type: &str,
        last_modified: &[u8],
        etag: &str,
        content_length: u64,
    ) -> FileFields {
        FileFields::build(content_type, last_modified, etag, content_length, true)
    }

    /// The same without `Accept-Ranges: bytes`, for a representation that is never served in
    /// ranges: a body compressed on the fly (a `Range` request gets the plain file instead,
    /// and a client that saw `Accept-Ranges` on the compressed body could resume it with
    /// ranges of the other one; nginx's gzip filter drops the field for the same reason).
    pub fn new_unranged(
        content_type: &str,
        last_modified: &[u8],
        etag: &str,
        content_length: u64,
    ) -> FileFields {
        FileFields::build(content_type, last_modified, etag, content_length, false)
    }

    fn build(
        content_type: &str,
        last_modified: &[u8],
        etag: &str,
        content_length: u64,
        accept_ranges: bool,
    ) -> FileFields {
        let mut rest =
            Vec::with_capacity(content_type.len() + last_modified.len() + etag.len() + 100);
        // Each field written alone, to note where its value landed.
        let mut values = [(0u32, 0u32); 4];
        let mut value_of = |rest: &Vec<u8>, i: usize, from: usize| {
            // The value is what the field added, less its name and CRLF.
            values[i] = (from as u32, (rest.len() - 2) as u32);
        };
        let fields: [(&[u8], &[u8]); 3] = [
            (b"Content-Type: ", content_type.as_bytes()),
            (b"Last-Modified: ", last_modified),
            (b"ETag: ", etag.as_bytes()),
        ];
        for (i, (name, value)) in fields.into_iter().enumerate() {
            let from = rest.len() + name.len();
            field(&mut rest, name, value);
            value_of(&rest, i, from);
        }
        put_file_fields(&mut rest, None, None, None, accept_ranges);
        let length_at = rest.len();
        put_content_length(&mut rest, content_length);
        value_of(&rest, 3, length_at + b"Content-Length: ".len());
        rest.extend_from_slice(b"\r\n");
        FileFields {
            rest: rest.into_boxed_slice(),
            length_at,
            values,
            accept_ranges,
        }
    }

    /// Gives each field of the `200 OK` [`FileFields::encode_ok`] writes, for a response
    /// dated `date`, as [`ResponseHead::each_field`] does: an HTTP/2 head, with the values
    /// cleaned once when the file was cached.
    #[inline]
    pub fn each_field(&self, date: &[u8], mut f: impl FnMut(&'static str, &[u8])) {
        let value = |i: usize| {
            let (a, b) = self.values[i];
            &self.rest[a as usize..b as usize]
        };
        f("date", date);
        f("server", SERVER);
        f("content-type", value(0));
        f("last-modified", value(1));
        f("etag", value(2));
        if self.accept_ranges {
            f("accept-ranges", b"bytes");
        }
        f("content-length", value(3));
    }

    /// Appends the head of a `200 OK` that sends the whole file: the same bytes as
    /// [`ResponseHead::encode`] with these fields, the content length, the date of `start`,
    /// `connection` and `http10` set and nothing else. An HTTP/1.1 connection that stays
    /// open, the common case, says nothing about it: the head is then two block copies,
    /// inlined into the caller. A head that names the connection is written out of line, so
    /// that the common case needs no call and no stack frame of its own (the call's own
    /// instructions, the inline copy of the status line included, were 26 per keep-alive
    /// request under callgrind, 2026-11-26).
    #[inline]
    pub fn encode_ok(
        &self,
        start: &OkStart,
        connection: Connection,
        http10: bool,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(start.as_bytes());
        if connection == Connection::Default && !http10 {
            out.extend_from_slice(&self.rest);
        } else {
            self.put_with_connection(connection, http10, out);
        }
    }

    /// The fields after [`OkStart`] with the connection field before `Content-Length`.
    #[inline(never)]
    fn put_with_connection(&self, connection: Connection, http10: bool, out: &mut Vec<u8>) {
        let (fields, length) = self.rest.split_at(self.length_at);
        out.extend_from_slice(fields);
        put_connection(out, connection, http10);
        out.extend_from_slice(length);
    }
}

/// `Date` and `Server`, after the status line.
#[inline]
fn put_date(out: &mut Vec<u8>, date: &[u8]) {
    out.extend_from_slice(b"\r\nDate: ");
    put_value(out, date);
    out.extend_from_slice(SERVER_FIELD);
}

/// The end of the `Date` line and the `Server` line, which every response carries (and
/// [`OkStart`] keeps in its block).
const SERVER_FIELD: &[u8] = b"\r\nServer: servelab\r\n";
/// The `Server` value.
const SERVER: &[u8] = b"servelab";

/// The fields that describe the file, in their order on the wire.
fn put_file_fields(
    out: &mut Vec<u8>,
    content_type: Option<&str>,
    last_modified: Option<&[u8]>,
    etag: Option<&str>,
    accept_ranges: bool,
) {
    if let Some(v) = content_type {
        field(out, b"Content-Type: ", v.as_bytes());
    }
    if let Some(v) = last_modified {
        field(out, b"Last-Modified: ", v);
    }
    if let Some(v) = etag {
        field(out, b"ETag: ", v.as_bytes());
    }
    if accept_ranges {
        out.extend_from_slice(b"Accept-Ranges: bytes\r\n");
    }
}

/// The connection field, `Content-Length` and the empty line that ends the head.
fn put_end(out: &mut Vec<u8>, connection: Connection, http10: bool, content_length: Option<u64>) {
    put_connection(out, connection, http10);
    if let Some(n) = content_length {
        put_content_length(out, n);
    }
    out.extend_from_slice(b"\r\n");
}

/// What to say about the connection, if anything.
fn put_connection(out: &mut Vec<u8>, connection: Connection, http10: bool) {
    match connection {
        Connection::Close => out.extend_from_slice(b"Connection: close\r\n"),
        Connection::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
        Connection::Default if http10 => {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
        Connection::Default => {}
    }
}

fn put_content_length(out: &mut Vec<u8>, n: u64) {
    // A number has no byte to clean.
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    put_value(out, value);
    out.extend_from_slice(b"\r\n");
}

/// Copies a field value, dropping control bytes other than HTAB so that no value can end the
/// line early.
#[inline]
fn put_value(out: &mut Vec<u8>, value: &[u8]) {
    if is_clean(value) {
        out.extend_from_slice(value);
    } else {
        out.extend(value.iter().copied().filter(|&b| is_value_byte(b)));
    }
}

/// Whether `b` may stand in a field value as it is: HTAB, or not a control byte.
fn is_value_byte(b: u8) -> bool {
    (b == b'\t') | ((b >= 0x20) & (b != 0x7f))
}

/// Whether every byte of `value` is a [`is_value_byte`]. Values are short and almost always
/// clean, so every byte is looked at without an early exit, in folds the compiler vectorizes.
/// A fold over a slice of unknown length still ends in a loop byte by byte (`Date` and
/// `Server` cost 196 instructions per response under callgrind, 2026-11-26), so a value of 16
/// bytes or more is checked as whole 16-byte blocks, its tail as the last 16 bytes (which
/// overlap the block before).
#[inline]
fn is_clean(value: &[u8]) -> bool {
    fn fold(bytes: &[u8]) -> bool {
        bytes.iter().fold(true, |ok, &b| ok & is_value_byte(b))
    }
    let Some(last) = value.last_chunk::<16>() else {
        return fold(value);
    };
    let mut rest = value;
    while let Some((block, after)) = rest.split_first_chunk::<16>() {
        if !fold(block) {
            return false;
        }
        rest = after;
    }
    fold(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DATE: &[u8; 29] = b"Sun, 06 Nov 1994 08:49:37 GMT";

    /// The fields of an encoded head as `each_field` gives them: lowercase names, no status
    /// line, no connection field.
    fn lines(encoded: &[u8]) -> Vec<(String, Vec<u8>)> {
        let text = std::str::from_utf8(encoded).unwrap();
        let body = text.strip_suffix("\r\n\r\n").unwrap();
        body.split("\r\n")
            .skip(1)
            .map(|l| l.split_once(": ").unwrap())
            .filter(|(n, _)| !n.eq_ignore_ascii_case("connection"))
            .map(|(n, v)| (n.to_ascii_lowercase(), v.as_bytes().to_vec()))
            .collect()
    }

    fn fields(each: impl FnOnce(&mut dyn FnMut(&'static str, &[u8]))) -> Vec<(String, Vec<u8>)> {
        let mut got = Vec::new();
        each(&mut |n, v| got.push((n.to_owned(), v.to_vec())));
        got
    }

    /// An HTTP/2 head gets the fields an HTTP/1.1 head carries, values cleaned alike.
    #[test]
    fn each_field_is_what_encode_writes() {
        let mut heads = Vec::new();
        let mut head = ResponseHead::new(Status::PARTIAL_CONTENT, DATE);
        head.content_type = Some("text/plain\x01");
        head.last_modified = Some(DATE);
        head.etag = Some("\"e\"");
        head.accept_ranges = true;
        head.content_range = Some(ContentRange::Range {
            start: 1,
            end: 2,
            len: 10,
        });
        head.content_length = Some(2);
        head.connection = Connection::Close;
        heads.push(head);
        let mut head = ResponseHead::new(Status::RANGE_NOT_SATISFIABLE, DATE);
        head.content_range = Some(ContentRange::Unsatisfied { len: 10 });
        head.location = Some("/a/");
        head.allow = Some("GET, HEAD");
        head.retry_after = Some(1);
        head.http10 = true;
        heads.push(head);
        for head in heads {
            let mut out = Vec::new();
            head.encode(&mut out);
            let got = fields(|f| head.each_field(f));
            assert_eq!(got, lines(&out), "{}", String::from_utf8_lossy(&out));
        }
        let now = HttpDate::new(std::time::SystemTime::UNIX_EPOCH);
        for ranged in [true, false] {
            let f = if ranged {
                FileFields::new("text/html", DATE, "\"5-0\"", 5)
            } else {
                FileFields::new_unranged("text/html", DATE, "\"5-0\"", 5)
            };
            let start = OkStart::new(&now);
            let mut out = Vec::new();
            f.encode_ok(&start, Connection::Default, false, &mut out);
            let got = fields(|g| f.each_field(start.date(), g));
            assert_eq!(got, lines(&out), "{}", String::from_utf8_lossy(&out));
        }
    }

    fn encode(head: &ResponseHead<'_>) -> String {
        let mut out = Vec::new();
        head.encode(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn minimal_head() {
        let head = ResponseHead::new(Status::NOT_MODIFIED, DATE);
        assert_eq!(
            encode(&head),
            "HTTP/1.1 304 Not Modified\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nServer: servelab\r\n\r\n"
        );
    }

    #[test]
    fn every_field_in_order() {
        let mut head = ResponseHead::new(Status::PARTIAL_CONTENT, DATE);
        head.content_length = Some(100);
        head.content_type = Some("text/plain; charset=utf-8");
        head.last_modified = Some(DATE);
        head.etag = Some("\"1f-2a\"");
        head.content_range = Some(ContentRange::Range {
            start: 0,
            end: 99,
            len: u64::MAX,
        });
        head.location = Some("/docs/");
        head.allow = Some("GET, HEAD");
        head.retry_after = Some(1);
        head.accept_ranges = true;
        head.connection = Connection::Close;
        assert_eq!(
            encode(&head),
            "HTTP/1.1 206 Partial Content\r\n\
             Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
             Server: servelab\r\n\
             Content-Type: text/plain; charset=utf-8\r\n\
             Last-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\
             ETag: \"1f-2a\"\r\n\
             Accept-Ranges: bytes\r\n\
             Content-Range: bytes 0-99/18446744073709551615\r\n\
             Location: /docs/\r\n\
             Allow: GET, HEAD\r\n\
             Retry-After: 1\r\n\
             Connection: close\r\n\
             Content-Length: 100\r\n\r\n"
        );
    }

    #[test]
    fn unsatisfied_range() {
        let mut head = ResponseHead::new(Status::RANGE_NOT_SATISFIABLE, DATE);
        head.content_range = Some(ContentRange::Unsatisfied { len: 42 });
        head.content_length = Some(0);
        let s = encode(&head);
        assert!(s.starts_with("HTTP/1.1 416 Range Not Satisfiable\r\n"));
        assert!(s.contains("\r\nContent-Range: bytes */42\r\n"));
    }

    #[test]
    fn keep_alive_announcements() {
        let mut head = ResponseHead::new(Status::OK, DATE);
        // A 1.1 client: nothing by default, explicit when asked.
        assert!(!encode(&head).contains("Connection"));
        head.connection = Connection::KeepAlive;
        assert!(encode(&head).contains("\r\nConnection: keep-alive\r\n"));
        // A 1.0 client must be told whenever the connection stays open.
        head.http10 = true;
        assert!(encode(&head).contains("\r\nConnection: keep-alive\r\n"));
        head.connection = Connection::Default;
        assert!(encode(&head).contains("\r\nConnection: keep-alive\r\n"));
        head.connection = Connection::Close;
        let s = encode(&head);
        assert!(s.contains("\r\nConnection: close\r\n") && !s.contains("keep-alive"));
    }

    #[test]
    fn values_cannot_inject_lines() {
        let mut head = ResponseHead::new(Status::MOVED_PERMANENTLY, DATE);
        head.location = Some("/a\r\nSet-Cookie: x=1\0/");
        let s = encode(&head);
        assert!(s.contains("\r\nLocation: /aSet-Cookie: x=1/\r\n"));
        assert_eq!(s.matches("\r\n").count(), 5);
        // DEL goes too; a tab stays.
        head.location = Some("/a\x7f\tb");
        assert!(encode(&head).contains("\r\nLocation: /a\tb\r\n"));
    }

    /// `FileFields::encode_ok` must write what `ResponseHead::encode` writes for the same
    /// 200, byte for byte: over every persistence, lengths of every digit count, and values
    /// with bytes that must be dropped (the fast path cleans them once, at `new`).
    #[test]
    fn file_fields_encode_the_same_head_as_encode() {
        let types = [
            "text/plain; charset=utf-8",
            "application/octet-stream",
            "a\r\nb\x7fc\td",
        ];
        let times: [&[u8]; 2] = [DATE, b"Mon, 07 Nov 1994 0\n:49:37 GMT"];
        let etags = ["\"1f-2a\"", "\"1f-2a-gzip\"", "\"x\0y\""];
        // `OkStart` takes its date from an `HttpDate`, whose bytes are always clean.
        let dates = [0, 784_111_777, 4_102_444_799].map(|secs| {
            HttpDate::new(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        });
        let connections = [
            Connection::Default,
            Connection::KeepAlive,
            Connection::Close,
        ];
        let lengths = [0, 1, 9, 10, 1024, 99_999, u64::MAX];
        let mut cases = 0;
        for ct in types {
            for lm in times {
                for etag in etags {
                    for (len, ranged) in lengths.into_iter().flat_map(|l| [(l, true), (l, false)]) {
                        let fields = if ranged {
                            FileFields::new(ct, lm, etag, len)
                        } else {
                            FileFields::new_unranged(ct, lm, etag, len)
                        };
                        for date in dates {
                            for connection in connections {
                                for http10 in [false, true] {
                                    let mut head = ResponseHead::new(Status::OK, date.http());
                                    head.content_type = Some(ct);
                                    head.last_modified = Some(lm);
                                    head.etag = Some(etag);
                                    head.accept_ranges = ranged;
                                    head.content_length = Some(len);
                                    head.connection = connection;
                                    head.http10 = http10;
                                    let mut fast = b"before".to_vec();
                                    let start = OkStart::new(&date);
                                    fields.encode_ok(&start, connection, http10, &mut fast);
                                    assert_eq!(
                                        String::from_utf8(fast[6..].to_vec()).unwrap(),
                                        encode(&head)
                                    );
                                    assert!(fast.starts_with(b"before"));
                                    cases += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 3 * 2 * 3 * 2 * 3 * 3 * 7 * 2);
    }

    /// `OkStart` is how `encode` starts a `200`, for dates across the whole range of
    /// `HttpDate` (every day of the week and month, single- and double-digit fields).
    #[test]
    fn ok_start_is_the_start_of_every_200() {
        for secs in (0..4_102_444_800u64).step_by(86_400 * 3 + 3_661) {
            let date = HttpDate::new(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs));
            let whole = encode(&ResponseHead::new(Status::OK, date.http()));
            let start = OkStart::new(&date);
            assert_eq!(
                String::from_utf8_lossy(start.as_bytes()),
                whole.strip_suffix("\r\n").unwrap(),
                "{secs}"
            );
        }
    }

    /// The block-wise check against the byte-wise rule: every byte value at every position
    /// of values from 0 to 40 bytes long (one, two and three blocks, with and without a tail).
    #[test]
    fn is_clean_agrees_with_the_byte_rule() {
        for len in 0..=40 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut value = vec![b'a'; len];
                    value[at] = b;
                    assert_eq!(is_clean(&value), is_value_byte(b), "{len} {at} {b}");
                }
            }
            assert!(is_clean(&vec![b'a'; len]));
        }
        assert!(!is_value_byte(b'\r') && !is_value_byte(0x7f) && is_value_byte(0x80));
    }

    #[test]
    fn appends_without_clearing() {
        let mut out = b"previous".to_vec();
        ResponseHead::new(Status::OK, DATE).encode(&mut out);
        assert!(out.starts_with(b"previousHTTP/1.1 200 OK\r\n"));
    }
}
