//! The `multipart/byteranges` body of a 206 with several ranges (RFC 9110 14.6).
//!
//! [`Multipart`] plans the body: framing bytes (boundary lines and part headers) interleaved
//! with file ranges the server copies from disk. The plan is computed once, so the exact
//! `Content-Length` is known before the first byte is sent and HEAD can report it without
//! building anything else. This path is rare (browsers do not send multi-range requests; PDF
//! viewers and download managers do), so the plan allocates freely.
//!
//! Layout of the body, CRLF written `\r\n`:
//! ```text
//! --B\r\nContent-Type: CT\r\nContent-Range: bytes s-e/L\r\n\r\n<bytes s..=e>
//! \r\n--B\r\nContent-Type: CT\r\nContent-Range: bytes s-e/L\r\n\r\n<bytes s..=e>
//! \r\n--B--\r\n
//! ```

use crate::range::{ByteRange, Ranges};

/// One piece of a multipart body, in sending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Framing bytes to send as they are: a boundary line and part headers, or the final
    /// boundary.
    Bytes(Vec<u8>),
    /// Copy these bytes of the file.
    File(ByteRange),
}

/// A planned `multipart/byteranges` body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Multipart {
    parts: Vec<Part>,
    content_length: u64,
    content_type: String,
}

impl Multipart {
    /// Plans the body for `ranges` of a file of `len` bytes whose own type is `content_type`,
    /// separated by `boundary` (use [`Multipart::boundary`] for a valid one).
    pub fn new(ranges: &Ranges, len: u64, content_type: &str, boundary: &str) -> Self {
        let mut parts = Vec::with_capacity(ranges.as_slice().len() * 2 + 1);
        let mut total: u64 = 0;
        for (i, r) in ranges.as_slice().iter().enumerate() {
            let sep = if i == 0 { "" } else { "\r\n" };
            let head = format!(
                "{sep}--{boundary}\r\nContent-Type: {content_type}\r\nContent-Range: bytes {}-{}/{len}\r\n\r\n",
                r.start, r.end
            );
            total = total
                .saturating_add(head.len() as u64)
                .saturating_add(r.len());
            parts.push(Part::Bytes(head.into_bytes()));
            parts.push(Part::File(*r));
        }
        let tail = format!("\r\n--{boundary}--\r\n");
        total = total.saturating_add(tail.len() as u64);
        parts.push(Part::Bytes(tail.into_bytes()));
        Multipart {
            parts,
            content_length: total,
            content_type: format!("multipart/byteranges; boundary={boundary}"),
        }
    }

    /// A boundary derived from `seed` (e.g. the file's ETag hash or a counter): letters and
    /// digits only, so it is valid per RFC 2046 and needs no quoting. The server should vary
    /// the seed per file so that file content cannot contain the boundary by accident.
    pub fn boundary(seed: u64) -> String {
        format!("servelab{seed:016x}")
    }

    /// The exact body length: the value of `Content-Length`.
    pub fn content_length(&self) -> u64 {
        self.content_length
    }

    /// The response's `Content-Type`: `multipart/byteranges; boundary=...`.
    pub fn content_type(&self) -> &str {
        &self.content_type
    }

    /// The pieces to send, in order.
    pub fn parts(&self) -> impl Iterator<Item = Part> + '_ {
        self.parts.iter().cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range::{RangeSet, parse_range};

    fn ranges_of(header: &str, len: u64) -> Ranges {
        match parse_range(header, len) {
            RangeSet::Ranges(r) => r,
            other => panic!("{other:?}"),
        }
    }

    fn assemble(m: &Multipart, file: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        for part in m.parts() {
            match part {
                Part::Bytes(b) => body.extend_from_slice(&b),
                Part::File(r) => body.extend_from_slice(&file[r.start as usize..=r.end as usize]),
            }
        }
        body
    }

    #[test]
    fn framing_of_two_ranges() {
        let file: Vec<u8> = (0..100u8).map(|i| b'a' + i % 26).collect();
        let ranges = ranges_of("bytes=0-3,-2", 100);
        let m = Multipart::new(&ranges, 100, "text/plain; charset=utf-8", "XyZ");
        let body = assemble(&m, &file);
        assert_eq!(body.len() as u64, m.content_length());
        let expected = "--XyZ\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes 0-3/100\r\n\r\nabcd\
                        \r\n--XyZ\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Range: bytes 98-99/100\r\n\r\nuv\
                        \r\n--XyZ--\r\n";
        assert_eq!(String::from_utf8(body).unwrap(), expected);
        assert_eq!(m.content_type(), "multipart/byteranges; boundary=XyZ");
    }

    #[test]
    fn parsing_the_body_back_gives_the_ranges() {
        let file: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let ranges = ranges_of("bytes=4000-4099,0-0,2500-,-1", 5000);
        let boundary = Multipart::boundary(0xdead_beef);
        let m = Multipart::new(&ranges, 5000, "application/octet-stream", &boundary);
        let body = assemble(&m, &file);
        assert_eq!(body.len() as u64, m.content_length());
        // Split on the delimiter as a client would (the boundary cannot occur in this file).
        let delim = format!("--{boundary}");
        let text = body.as_slice();
        let mut found = Vec::new();
        let mut pos = 0;
        while let Some(i) = find(&text[pos..], delim.as_bytes()) {
            pos += i + delim.len();
            if text[pos..].starts_with(b"--") {
                assert_eq!(&text[pos..], b"--\r\n");
                break;
            }
            let head_end = pos + find(&text[pos..], b"\r\n\r\n").unwrap();
            let head = std::str::from_utf8(&text[pos..head_end]).unwrap();
            let cr = head.split("Content-Range: bytes ").nth(1).unwrap();
            let (se, total) = cr.split_once('/').unwrap();
            assert_eq!(total, "5000");
            let (s, e) = se.split_once('-').unwrap();
            let (s, e): (usize, usize) = (s.parse().unwrap(), e.parse().unwrap());
            let data = &text[head_end + 4..head_end + 4 + (e - s + 1)];
            assert_eq!(data, &file[s..=e]);
            found.push((s, e));
        }
        // Overlapping 4999 and 2500- were merged, so order is ascending.
        assert_eq!(found, [(0, 0), (2500, 4999)]);
    }

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    #[test]
    fn boundary_is_a_valid_token() {
        let b = Multipart::boundary(u64::MAX);
        assert!(b.len() <= 70 && b.bytes().all(|c| c.is_ascii_alphanumeric()));
    }
}
