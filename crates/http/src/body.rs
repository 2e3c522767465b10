//! Request bodies in chunked framing (RFC 9112 7.1), decoded and thrown away.
//!
//! A static-file server has no use for a request body, but it must consume it exactly: bytes
//! left over would be parsed as the next request (the core of request smuggling), and a body
//! cut short would eat the next request. [`ChunkedDecoder`] is a byte-at-a-time state machine
//! with no I/O: feed it whatever arrived, it reports how much it consumed and whether the
//! body is over; the bytes after that belong to the next request.
//!
//! It is strict where laxness has been exploited: sizes are hex digits whose value fits in 64
//! bits (no overflow, no sign, no `0x`), every line ends in CRLF (no bare LF or CR), chunk
//! data must be followed by CRLF, and trailer lines may not start with whitespace. The bound
//! is on the value, not on the digits: `00000000000000001` is a valid size of 1 (RFC 9112 7.1
//! allows `1*HEXDIG`), and leading zeros after the first count towards the metadata bound
//! below, so an endless run of them ends too. Chunk extensions and trailers are
//! skipped but bounded ([`MAX_METADATA`] bytes in all), and the data total is bounded by the
//! `max_total` given to [`ChunkedDecoder::new`] (413 beyond it, checked as soon as a chunk
//! size is read, before its data arrives).

use crate::error::RequestError;

/// The most bytes of chunk extensions and trailer fields one body may carry.
pub const MAX_METADATA: u64 = 16 * 1024;

/// Where the decoder is inside the chunked body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading the hex digits of a chunk size.
    Size,
    /// After the size: optional whitespace before `;` (the BWS of RFC 9112 7.1.1).
    SizeWs,
    /// Inside chunk extensions, up to CR.
    Ext,
    /// Saw the CR ending the size line.
    SizeLf,
    /// Inside chunk data.
    Data,
    /// Expecting the CR after chunk data.
    DataCr,
    /// Expecting the LF after chunk data.
    DataLf,
    /// At the start of a trailer line or of the final empty line.
    TrailerStart,
    /// Inside a trailer line, up to CR.
    Trailer,
    /// Saw the CR ending a trailer line.
    TrailerLf,
    /// Saw the CR of the final empty line.
    EndLf,
    /// The body is over.
    Done,
}

/// A sans-IO decoder that validates and discards a chunked body.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    state: State,
    /// Size of the current chunk while reading its size line; bytes left while in `Data`.
    size: u64,
    digits: u8,
    total: u64,
    max_total: u64,
    metadata: u64,
}

impl ChunkedDecoder {
    /// A decoder that refuses bodies whose data adds up to more than `max_total` bytes.
    pub fn new(max_total: u64) -> Self {
        ChunkedDecoder {
            state: State::Size,
            size: 0,
            digits: 0,
            total: 0,
            max_total,
            metadata: 0,
        }
    }

    /// Total chunk-data bytes seen so far.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Consumes a prefix of `input`. Returns how many bytes belong to the body and whether the
    /// body ended; when it did, `input[consumed..]` is the start of the next request. An error
    /// means the connection must be answered (its status) and closed.
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, bool), RequestError> {
        let mut i = 0;
        while i < input.len() {
            let b = input[i];
            match self.state {
                State::Done => break,
                State::Data => {
                    let n = (input.len() - i).min(usize::try_from(self.size).unwrap_or(usize::MAX));
                    self.size -= n as u64;
                    i += n;
                    if self.size == 0 {
                        self.state = State::DataCr;
                    }
                    continue;
                }
                State::Size => match hex(b) {
                    Some(d) => {
                        if self.size > u64::MAX >> 4 {
                            return Err(RequestError::BadChunk("chunk size overflows"));
                        }
                        if self.digits > 0 && self.size == 0 {
                            self.meta(1)?; // a leading zero
                        }
                        self.size = self.size << 4 | u64::from(d);
                        self.digits = self.digits.saturating_add(1);
                    }
                    None if self.digits == 0 => {
                        return Err(RequestError::BadChunk("chunk size is not hex"));
                    }
                    None => match b {
                        b'\r' => self.state = State::SizeLf,
                        b';' => self.state = State::Ext,
                        b' ' | b'\t' => self.state = State::SizeWs,
                        _ => return Err(RequestError::BadChunk("bad byte after chunk size")),
                    },
                },
                State::SizeWs => match b {
                    b' ' | b'\t' => self.meta(1)?,
                    b';' => self.state = State::Ext,
                    _ => return Err(RequestError::BadChunk("whitespace after chunk size")),
                },
                State::Ext => match b {
                    b'\r' => self.state = State::SizeLf,
                    b'\t' | 0x20..=0x7e | 0x80..=0xff => self.meta(1)?,
                    _ => return Err(RequestError::BadChunk("control byte in chunk extension")),
                },
                State::SizeLf => {
                    if b != b'\n' {
                        return Err(RequestError::BadChunk("chunk size line without CRLF"));
                    }
                    self.total = self.total.saturating_add(self.size);
                    if self.total > self.max_total {
                        return Err(RequestError::PayloadTooLarge);
                    }
                    self.digits = 0;
                    self.state = if self.size == 0 {
                        State::TrailerStart
                    } else {
                        State::Data
                    };
                }
                State::DataCr => {
                    if b != b'\r' {
                        return Err(RequestError::BadChunk("chunk data longer than its size"));
                    }
                    self.state = State::DataLf;
                }
                State::DataLf => {
                    if b != b'\n' {
                        return Err(RequestError::BadChunk("chunk data without CRLF"));
                    }
                    self.state = State::Size;
                }
                State::TrailerStart => match b {
                    b'\r' => self.state = State::EndLf,
                    b' ' | b'\t' => return Err(RequestError::BadChunk("folded trailer line")),
                    0x21..=0x7e | 0x80..=0xff => {
                        self.meta(1)?;
                        self.state = State::Trailer;
                    }
                    _ => return Err(RequestError::BadChunk("control byte in trailer")),
                },
                State::Trailer => match b {
                    b'\r' => self.state = State::TrailerLf,
                    b'\t' | 0x20..=0x7e | 0x80..=0xff => self.meta(1)?,
                    _ => return Err(RequestError::BadChunk("control byte in trailer")),
                },
                State::TrailerLf => {
                    if b != b'\n' {
                        return Err(RequestError::BadChunk("trailer line without CRLF"));
                    }
                    self.state = State::TrailerStart;
                }
                State::EndLf => {
                    if b != b'\n' {
                        return Err(RequestError::BadChunk("chunked body without final CRLF"));
                    }
                    self.state = State::Done;
                    i += 1;
                    break;
                }
            }
            i += 1;
        }
        Ok((i, self.state == State::Done))
    }

    fn meta(&mut self, n: u64) -> Result<(), RequestError> {
        self.metadata += n;
        if self.metadata > MAX_METADATA {
            return Err(RequestError::BadChunk(
                "chunk extensions or trailers too long",
            ));
        }
        Ok(())
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: u64 = 1 << 20;

    /// Feeds the whole input at once and returns (consumed, done, data total).
    fn whole(input: &[u8]) -> Result<(usize, bool, u64), RequestError> {
        let mut d = ChunkedDecoder::new(LIMIT);
        d.feed(input).map(|(n, done)| (n, done, d.total()))
    }

    /// Feeds one byte at a time; must agree with `whole`.
    fn bytewise(input: &[u8]) -> Result<(usize, bool, u64), RequestError> {
        let mut d = ChunkedDecoder::new(LIMIT);
        let mut consumed = 0;
        for i in 0..input.len() {
            let (n, done) = d.feed(&input[i..=i])?;
            consumed += n;
            if done {
                return Ok((consumed, true, d.total()));
            }
            assert_eq!(n, 1);
        }
        Ok((consumed, false, d.total()))
    }

    fn both(input: &[u8]) -> Result<(usize, bool, u64), RequestError> {
        let a = whole(input);
        assert_eq!(a, bytewise(input), "{:?}", String::from_utf8_lossy(input));
        a
    }

    #[test]
    fn decodes_and_stops_at_the_next_request() {
        let body = b"5\r\nhello\r\n6;name=value\r\n world\r\n0\r\n\r\nGET / HTTP/1.1\r\n";
        let (n, done, total) = both(body).unwrap();
        assert!(done);
        assert_eq!(total, 11);
        assert_eq!(&body[n..], b"GET / HTTP/1.1\r\n");
    }

    #[test]
    fn trailers_extensions_and_hex() {
        let body = b"A\r\n0123456789\r\nff ; ext\r\n";
        assert_eq!(both(body), Ok((body.len(), false, 10 + 255)));
        let body = b"1\r\nx\r\n000 ;a=\"q\"\r\nX-Trailer: 1\r\nY: 2\r\n\r\n";
        assert_eq!(both(body), Ok((body.len(), true, 1)));
        let body = b"0\r\n\r\n";
        assert_eq!(both(body), Ok((5, true, 0)));
        // Incomplete input is fine: nothing is wrong yet.
        assert_eq!(both(b"5\r\nhel"), Ok((6, false, 5)));
        assert_eq!(both(b""), Ok((0, false, 0)));
    }

    #[test]
    fn feeding_after_done_consumes_nothing() {
        let mut d = ChunkedDecoder::new(LIMIT);
        assert_eq!(d.feed(b"0\r\n\r\n"), Ok((5, true)));
        assert_eq!(d.feed(b"more"), Ok((0, true)));
    }

    #[test]
    fn malformed_bodies_are_400() {
        for bad in [
            &b"x\r\n"[..],
            b"\r\n",
            b"-1\r\n",
            b"+1\r\n",
            b"0x5\r\nhello\r\n",
            b"5\nhello\r\n",      // bare LF after size
            b"5\r\nhello\n0\r\n", // bare LF after data
            b"5\r\nhelloX\r\n",   // data longer than size
            b"5\r\nhello\r0\r\n", // CR without LF
            b"5 x\r\n",           // junk after size
            b"5;ext\x00\r\n",     // NUL in extension
            b"5;ext\nhello",      // LF inside extension
            b"0\r\n X: folded\r\n\r\n",
            b"0\r\nX: a\x01\r\n\r\n",
            b"0\r\nX: 1\n\r\n",
            b"0\r\n\rX",
            b"10000000000000000\r\n", // 17 significant digits: overflow
            b"000000000000000010000000000000000\r\n",
        ] {
            let e = whole(bad).unwrap_err();
            assert_eq!(e.status().code(), 400, "{:?}", String::from_utf8_lossy(bad));
            assert_eq!(bytewise(bad).unwrap_err(), e);
        }
    }

    #[test]
    fn leading_zeros_do_not_count_towards_the_size() {
        // RFC 9112 7.1: chunk-size = 1*HEXDIG; the bound is on the value.
        let body = b"00000000000000001\r\nx\r\n0000000000000000000\r\n\r\nNEXT";
        assert_eq!(both(body), Ok((body.len() - 4, true, 1)));
        assert_eq!(
            both(b"0000ffffffffffffffff\r\n"),
            Err(RequestError::PayloadTooLarge)
        );
        // An endless run of zeros ends at the metadata bound.
        let zeros = vec![b'0'; MAX_METADATA as usize + 2];
        assert!(matches!(whole(&zeros), Err(RequestError::BadChunk(_))));
        assert_eq!(
            whole(&zeros[..MAX_METADATA as usize + 1]),
            Ok((MAX_METADATA as usize + 1, false, 0))
        );
    }

    #[test]
    fn size_limits() {
        // 16 hex digits are accepted syntactically (no overflow), then refused by the limit.
        assert_eq!(
            whole(b"ffffffffffffffff\r\n"),
            Err(RequestError::PayloadTooLarge)
        );
        // The limit applies to the sum over chunks, and exactly at it is fine.
        let mut d = ChunkedDecoder::new(10);
        assert_eq!(
            d.feed(b"5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n"),
            Ok((25, true))
        );
        let mut d = ChunkedDecoder::new(9);
        assert_eq!(
            d.feed(b"5\r\nhello\r\n5\r\n"),
            Err(RequestError::PayloadTooLarge)
        );
        // Extensions and trailers are bounded too.
        let mut long = b"1;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_METADATA as usize + 1));
        assert!(matches!(whole(&long), Err(RequestError::BadChunk(_))));
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..2000 {
            trailers.extend_from_slice(b"X-Long: 0123456789\r\n");
        }
        assert!(matches!(whole(&trailers), Err(RequestError::BadChunk(_))));
    }

    #[test]
    fn every_split_point_gives_the_same_result() {
        let body = b"3\r\nabc\r\n10;x=y\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\nNEXT";
        for split in 0..=body.len() {
            let mut d = ChunkedDecoder::new(LIMIT);
            let (a, done_a) = d.feed(&body[..split]).unwrap();
            let (consumed, done) = if done_a {
                (a, true)
            } else {
                assert_eq!(a, split);
                let (b, done_b) = d.feed(&body[split..]).unwrap();
                (a + b, done_b)
            };
            assert!(done);
            assert_eq!(&body[consumed..], b"NEXT", "split {split}");
            assert_eq!(d.total(), 19);
        }
    }
}
