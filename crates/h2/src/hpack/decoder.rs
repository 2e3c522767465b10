//! Header block to fields (RFC 7541 §3, §6), within the limits of [`crate::hpack`].

use crate::hpack::huffman::{self, HuffmanError};
use crate::hpack::integer;
use crate::hpack::table::{DynamicTable, ENTRY_OVERHEAD};

/// The dynamic table's size before any size update (RFC 7541 §4.2, RFC 9113 §6.5.2).
const INITIAL_TABLE_SIZE: usize = 4_096;

/// Why a header block is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    /// The block is malformed or breaks a table rule: the two tables can no longer be kept in
    /// step, so this is a connection error COMPRESSION_ERROR (RFC 9113 §4.3); the decoder must
    /// not be used again.
    #[error("HPACK: {0}")]
    Compression(&'static str),
    /// The decoded list passed SETTINGS_MAX_HEADER_LIST_SIZE. The whole block was still
    /// decoded, so the table is in step and the connection can go on; the request is refused
    /// (the server answers 431).
    #[error("header list larger than SETTINGS_MAX_HEADER_LIST_SIZE")]
    ListTooLarge,
}

/// A connection's HPACK decoder (one per direction: it holds the peer encoder's table).
#[derive(Debug, Clone)]
pub struct Decoder {
    table: DynamicTable,
    /// The largest table size the peer may select: our SETTINGS_HEADER_TABLE_SIZE.
    max_allowed: usize,
    /// Set when `max_allowed` went below the table's size: the next block must open with a
    /// size update (RFC 7541 §4.2).
    update_required: bool,
    max_list: usize,
    name: Vec<u8>,
    value: Vec<u8>,
}

/// Where a field's name comes from.
enum Name {
    Indexed(usize),
    Literal,
}

impl Decoder {
    /// A decoder for a peer whose table may reach `max_table` octets (the
    /// SETTINGS_HEADER_TABLE_SIZE we advertise) and whose header lists are cut at `max_list`
    /// (our SETTINGS_MAX_HEADER_LIST_SIZE). Until the peer acknowledges our SETTINGS, call it
    /// with 4096 for the table; then [`Decoder::set_max_allowed`] with ours.
    pub fn new(max_table: usize, max_list: usize) -> Self {
        Decoder {
            // The table starts at the protocol's initial 4,096 octets (or less, if that is
            // all we allow): the peer's encoder assumes it until it sends a size update, so a
            // larger start here would evict later than the peer does, and the two tables
            // would drift apart.
            table: DynamicTable::new(max_table.min(INITIAL_TABLE_SIZE)),
            max_allowed: max_table,
            update_required: false,
            max_list,
            name: Vec::new(),
            value: Vec::new(),
        }
    }

    /// Our SETTINGS_HEADER_TABLE_SIZE took effect (the peer acknowledged it). A value below
    /// the table's current maximum obliges the peer to open its next block with a size
    /// update at or below it.
    pub fn set_max_allowed(&mut self, max: usize) {
        if max < self.table.max() {
            self.update_required = true;
        }
        self.max_allowed = max;
    }

    /// The dynamic table's size now, in RFC 7541's measure (for tests and metrics).
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// Decodes one complete header block (the HEADERS fragment and its CONTINUATIONs joined),
    /// calling `emit(name, value)` for each field in order.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut emit: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut list = 0usize;
        let mut fields_seen = false;
        let mut updates = 0;
        while at < block.len() {
            let b = block[at];
            if b & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3): only before the first field; two at most
                // (a shrink and a grow are all a peer can mean).
                let (size, n) = int(&block[at..], 5)?;
                at += n;
                updates += 1;
                if fields_seen || updates > 2 {
                    return Err(HpackError::Compression("size update after a field"));
                }
                let size = size as usize;
                if size > self.max_allowed {
                    return Err(HpackError::Compression("table size above our setting"));
                }
                self.table.set_max(size);
                self.update_required = false;
                continue;
            }
            if self.update_required {
                return Err(HpackError::Compression("missing table size update"));
            }
            fields_seen = true;
            let (name, index) = if b & 0x80 != 0 {
                // Indexed field (§6.1).
                let (i, n) = int(&block[at..], 7)?;
                at += n;
                let (name, value) = self.entry(i as usize)?;
                list = add(list, name.len() + value.len());
                if list <= self.max_list {
                    emit(name, value);
                }
                continue;
            } else if b & 0x40 != 0 {
                (self.name_of(block, &mut at, 6)?, true)
            } else {
                // Without indexing (0000) or never indexed (0001): same layout.
                (self.name_of(block, &mut at, 4)?, false)
            };
            string(block, &mut at, &mut self.value)?;
            let name: &[u8] = match name {
                Name::Indexed(i) => self.entry(i)?.0,
                Name::Literal => &self.name,
            };
            list = add(list, name.len() + self.value.len());
            if list <= self.max_list {
                emit(name, &self.value);
            }
            if index {
                let name = name.to_vec();
                self.table.insert(&name, &self.value);
            }
        }
        if self.update_required {
            return Err(HpackError::Compression("missing table size update"));
        }
        if list > self.max_list {
            return Err(HpackError::ListTooLarge);
        }
        Ok(())
    }

    fn entry(&self, i: usize) -> Result<(&[u8], &[u8]), HpackError> {
        self.table
            .get(i)
            .ok_or(HpackError::Compression("index out of the tables"))
    }

    /// The name part of a literal: an index (non-zero) or a literal string into `self.name`.
    fn name_of(&mut self, block: &[u8], at: &mut usize, prefix: u8) -> Result<Name, HpackError> {
        let (i, n) = int(&block[*at..], prefix)?;
        *at += n;
        if i == 0 {
            string(block, at, &mut self.name)?;
            Ok(Name::Literal)
        } else {
            self.entry(i as usize)?;
            Ok(Name::Indexed(i as usize))
        }
    }
}

/// A field's size in the RFC 9113 §6.5.2 measure, added without overflow.
fn add(list: usize, octets: usize) -> usize {
    list.saturating_add(octets + ENTRY_OVERHEAD)
}

fn int(buf: &[u8], prefix: u8) -> Result<(u32, usize), HpackError> {
    integer::decode(buf, prefix).map_err(|e| match e {
        integer::IntegerError::Truncated => HpackError::Compression("block ends inside an integer"),
        integer::IntegerError::Overflow => HpackError::Compression("integer beyond 32 bits"),
    })
}

/// Reads a string literal (§5.2) at `*at` into `out` (replacing it). Its length is bounded by
/// the block's, and a Huffman string decodes to at most 8/5 of it (the shortest code is 5
/// bits), so memory is bounded by the block size the connection allows.
fn string(block: &[u8], at: &mut usize, out: &mut Vec<u8>) -> Result<(), HpackError> {
    let huff = block
        .get(*at)
        .ok_or(HpackError::Compression("block ends before a string"))?
        & 0x80
        != 0;
    let (len, n) = int(&block[*at..], 7)?;
    let start = *at + n;
    let end = start
        .checked_add(len as usize)
        .filter(|&e| e <= block.len())
        .ok_or(HpackError::Compression("string longer than the block"))?;
    let raw = &block[start..end];
    *at = end;
    out.clear();
    if huff {
        huffman::decode(raw, out, raw.len() * 8 / 5 + 1).map_err(|e| match e {
            HuffmanError::Eos => HpackError::Compression("EOS in a Huffman string"),
            HuffmanError::BadPadding => HpackError::Compression("bad Huffman padding"),
            HuffmanError::TooLong => HpackError::Compression("Huffman string too long"),
        })?;
    } else {
        out.extend_from_slice(raw);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn fields(d: &mut Decoder, block: &[u8]) -> Vec<(String, String)> {
        let mut v = Vec::new();
        d.decode(block, |n, val| {
            v.push((
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(val.to_vec()).unwrap(),
            ))
        })
        .unwrap();
        v
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn rfc7541_c2_literals() {
        let mut d = Decoder::new(4096, 1 << 20);
        // C.2.1: literal with indexing, new name.
        let b = hex("400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572");
        assert_eq!(
            fields(&mut d, &b),
            pairs(&[("custom-key", "custom-header")])
        );
        assert_eq!(d.table_size(), 55);
        // C.2.2: without indexing, indexed name; C.2.3: never indexed; C.2.4: indexed.
        let mut d = Decoder::new(4096, 1 << 20);
        let b = hex("040c 2f73 616d 706c 652f 7061 7468");
        assert_eq!(fields(&mut d, &b), pairs(&[(":path", "/sample/path")]));
        let b = hex("1008 7061 7373 776f 7264 0673 6563 7265 74");
        assert_eq!(fields(&mut d, &b), pairs(&[("password", "secret")]));
        assert_eq!(fields(&mut d, &[0x82]), pairs(&[(":method", "GET")]));
        assert_eq!(d.table_size(), 0);
    }

    #[test]
    fn rfc7541_c3_and_c4_requests() {
        let first = pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ]);
        let mut second = first.clone();
        second.push(("cache-control".into(), "no-cache".into()));
        let third = pairs(&[
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ]);
        let plain = [
            "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
            "8286 84be 5808 6e6f 2d63 6163 6865",
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        ];
        let huff = [
            "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff",
            "8286 84be 5886 a8eb 1064 9cbf",
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        ];
        for blocks in [plain, huff] {
            let mut d = Decoder::new(4096, 1 << 20);
            for (b, want) in blocks.iter().zip([&first, &second, &third]) {
                assert_eq!(&fields(&mut d, &hex(b)), want);
            }
            assert_eq!(d.table_size(), 164);
        }
    }

    #[test]
    fn rfc7541_c5_responses_without_huffman() {
        // C.5 is C.6's three responses with plain strings; built from its layout: a
        // literal with incremental indexing and a static name index, then the length and
        // the octets.
        fn lit(out: &mut Vec<u8>, name_index: u8, value: &str) {
            out.push(0x40 | name_index);
            out.push(value.len() as u8);
            out.extend(value.as_bytes());
        }
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let loc = "https://www.example.com";
        let cookie = "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1";
        let mut b1 = Vec::new();
        lit(&mut b1, 8, "302");
        lit(&mut b1, 24, "private");
        lit(&mut b1, 33, date1);
        lit(&mut b1, 46, loc);
        assert_eq!(&b1[..5], hex("4803 3330 32"));
        let mut b3 = vec![0x88, 0xc1];
        lit(&mut b3, 33, "Mon, 21 Oct 2013 20:13:22 GMT");
        b3.push(0xc0);
        lit(&mut b3, 26, "gzip");
        lit(&mut b3, 55, cookie);
        let mut d = Decoder::new(256, 1 << 20);
        assert_eq!(
            fields(&mut d, &b1),
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc)
            ])
        );
        assert_eq!(d.table_size(), 222);
        assert_eq!(
            fields(&mut d, &[0x48, 0x03, b'3', b'0', b'7', 0xc1, 0xc0, 0xbf]),
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc)
            ])
        );
        assert_eq!(
            fields(&mut d, &b3),
            pairs(&[
                (":status", "200"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
                ("location", loc),
                ("content-encoding", "gzip"),
                ("set-cookie", cookie),
            ])
        );
        assert_eq!(d.table_size(), 215);
    }

    #[test]
    fn rfc7541_c6_responses_with_eviction() {
        let mut d = Decoder::new(256, 1 << 20);
        let date1 = "Mon, 21 Oct 2013 20:13:21 GMT";
        let loc = "https://www.example.com";
        let b1 = "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
                  2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3";
        assert_eq!(
            fields(&mut d, &hex(b1)),
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc)
            ])
        );
        assert_eq!(d.table_size(), 222);
        assert_eq!(
            fields(&mut d, &hex("4883 640e ffc1 c0bf")),
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", date1),
                ("location", loc)
            ])
        );
        assert_eq!(d.table_size(), 222);
        let b3 = "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
                  77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
                  9587 3160 65c0 03ed 4ee5 b106 3d50 07";
        assert_eq!(
            fields(&mut d, &hex(b3)),
            pairs(&[
                (":status", "200"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
                ("location", loc),
                ("content-encoding", "gzip"),
                (
                    "set-cookie",
                    "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
                ),
            ])
        );
        assert_eq!(d.table_size(), 215);
    }

    #[test]
    fn size_update_above_our_setting_is_a_compression_error() {
        // HPACK bomb, table side: the peer selects a table larger than we allow.
        let mut d = Decoder::new(4096, 1 << 20);
        let mut b = Vec::new();
        integer::encode(1 << 20, 5, 0x20, &mut b);
        assert!(matches!(
            d.decode(&b, |_, _| {}),
            Err(HpackError::Compression(_))
        ));
        // At or below: fine; after a field: refused.
        let mut d = Decoder::new(4096, 1 << 20);
        assert_eq!(d.decode(&[0x3f, 0xe1, 0x1f, 0x82], |_, _| {}), Ok(()));
        assert!(d.decode(&[0x82, 0x20], |_, _| {}).is_err());
    }

    #[test]
    fn a_larger_setting_starts_the_table_at_4096_until_the_peer_grows_it() {
        // Regression: the table started at our setting (8,192), so it evicted later than
        // the peer's encoder, which starts at 4,096 until it sends a size update.
        let mut d = Decoder::new(8_192, 1 << 20);
        let mut block = Vec::new();
        for i in 0..3u8 {
            block.extend([0x40, 0x01, b'a' + i]);
            integer::encode(2_000, 7, 0, &mut block);
            block.extend(std::iter::repeat_n(b'v', 2_000));
        }
        d.decode(&block, |_, _| {}).unwrap();
        assert!(d.table_size() <= 4_096, "{}", d.table_size());
        // Index 64 (the oldest of three) was evicted at 4,096.
        assert!(d.decode(&[0xc0], |_, _| {}).is_err());
        // After a size update to 8,192, three entries fit.
        let mut d = Decoder::new(8_192, 1 << 20);
        let mut grown = Vec::new();
        integer::encode(8_192, 5, 0x20, &mut grown);
        grown.extend(&block);
        d.decode(&grown, |_, _| {}).unwrap();
        assert_eq!(d.decode(&[0xc0], |_, _| {}), Ok(()));
    }

    #[test]
    fn a_lowered_setting_requires_a_size_update() {
        let mut d = Decoder::new(4096, 1 << 20);
        d.set_max_allowed(0);
        assert!(d.decode(&[0x82], |_, _| {}).is_err());
        let mut d = Decoder::new(4096, 1 << 20);
        d.set_max_allowed(0);
        assert_eq!(d.decode(&[0x20, 0x82], |_, _| {}), Ok(()));
        assert_eq!(d.decode(&[0x82], |_, _| {}), Ok(()));
    }

    #[test]
    fn hpack_bomb_stops_emitting_at_the_list_limit_and_keeps_the_table() {
        // One 4000-octet entry, then 1000 one-octet references to it: 4 MB decoded from 1 KB.
        let mut d = Decoder::new(4096, 16 << 10);
        let mut b = vec![0x40, 0x01, b'x'];
        integer::encode(3_950, 7, 0, &mut b);
        b.extend(std::iter::repeat_n(b'v', 3_950));
        b.extend(std::iter::repeat_n(0xbe, 1000)); // index 62
        let mut emitted = 0usize;
        let r = d.decode(&b, |n, v| emitted += n.len() + v.len() + 32);
        assert_eq!(r, Err(HpackError::ListTooLarge));
        assert!(emitted <= 16 << 10, "emitted {emitted}");
        // The table is intact: the next block can use the entry.
        let mut got = Vec::new();
        let mut small = Decoder::new(4096, 1 << 20);
        std::mem::swap(&mut small, &mut d);
        small
            .decode(&[0xbe], |n, v| got.push((n.to_vec(), v.len())))
            .unwrap();
        assert_eq!(got, [(b"x".to_vec(), 3_950)]);
    }

    #[test]
    fn malformed_blocks_are_compression_errors() {
        let mut d = Decoder::new(4096, 1 << 20);
        for bad in [
            &[0x80][..],                           // index 0
            &[0xbe],                               // empty dynamic table
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], // index overflow
            &[0x40, 0x05, b'a'],                   // string past the block
            &[0x40, 0x81, 0x00],                   // Huffman: bad padding
            &[0x04],                               // literal ends before its value
        ] {
            assert!(
                matches!(
                    Decoder::new(4096, 1 << 20).decode(bad, |_, _| {}),
                    Err(HpackError::Compression(_))
                ),
                "{bad:02x?}"
            );
        }
        assert_eq!(d.decode(&[], |_, _| {}), Ok(()));
    }
}
