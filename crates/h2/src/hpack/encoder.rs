//! Fields to a header block (RFC 7541 §6), with a small dynamic table.
//!
//! Why a dynamic table after all: without one, every response's fields (`server`,
//! `content-type`, `content-length`, `etag`, `last-modified`, `date`, `accept-ranges`) were
//! looked up in the static table and Huffman-coded again, and encoding was 35% of the
//! instructions of an HTTP/2 request to `serve` (`bench/callgrind.sh --h2`: 25,486 per
//! request, 9,000 of them in the encoder). With the table a field sent before is one
//! index octet: no Huffman coding, and a smaller HEADERS frame to write (and to seal,
//! over TLS). The table is capped at [`MAX_TABLE`] octets in RFC 7541's measure, far
//! below the 4,096 a peer allows by default, so a connection holds about a kilobyte of it;
//! the cap is announced with a size update at the start of the first block (the peer's
//! decoder assumes its SETTINGS value until told, §4.2), and again whenever the peer's
//! SETTINGS_HEADER_TABLE_SIZE changes.
//!
//! What is indexed: every field but credentials (RFC 7541 §7.1.3: never indexed, so
//! an intermediary cannot index them either) and fields larger than a quarter of the
//! table, which would evict the rest for one use.

use crate::hpack::huffman;
use crate::hpack::integer;
use crate::hpack::table::{DynamicTable, ENTRY_OVERHEAD, STATIC, static_name};

/// The largest dynamic table this encoder keeps, octets in RFC 7541's measure (name +
/// value + 32 per entry): the dozen fields a static response repeats fit in it.
pub const MAX_TABLE: usize = 1024;

/// What the peer allows until its SETTINGS say otherwise (RFC 9113 §6.5.2).
const DEFAULT_PEER_TABLE: usize = 4096;

/// A connection's HPACK encoder: the dynamic table the peer's decoder mirrors.
#[derive(Debug, Clone)]
pub struct Encoder {
    /// The table; its maximum is the smaller of [`MAX_TABLE`] and the peer's setting.
    table: DynamicTable,
    /// The next block opens with a size update announcing the table's maximum: at the
    /// first block, and after the peer changes SETTINGS_HEADER_TABLE_SIZE (§4.2).
    size_update: bool,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            table: DynamicTable::new(MAX_TABLE.min(DEFAULT_PEER_TABLE)),
            size_update: true,
        }
    }
}

/// Fields never indexed by an intermediary either (RFC 7541 §7.1.3): credentials.
const SENSITIVE: [&[u8]; 3] = [b"authorization", b"proxy-authorization", b"cookie"];

impl Encoder {
    /// A new encoder.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE is now `size` (call on each SETTINGS that
    /// carries it): the table shrinks to fit, and the next block says so.
    pub fn peer_table_size_changed(&mut self, size: u32) {
        self.table
            .set_max(MAX_TABLE.min(usize::try_from(size).unwrap_or(usize::MAX)));
        self.size_update = true;
    }

    /// Appends the block for `fields` (names must be lowercase, as HTTP/2 requires; the
    /// caller guarantees it).
    pub fn encode<'f>(
        &mut self,
        fields: impl IntoIterator<Item = (&'f [u8], &'f [u8])>,
        out: &mut Vec<u8>,
    ) {
        self.begin_block(out);
        for (name, value) in fields {
            self.field(name, value, out);
        }
    }

    /// Starts a block: the pending table size update, if any, which must come before the
    /// first field. [`Encoder::encode`] calls it; a caller that adds fields one by one with
    /// [`Encoder::field`] calls it first.
    pub fn begin_block(&mut self, out: &mut Vec<u8>) {
        if std::mem::take(&mut self.size_update) {
            integer::encode(self.table.max() as u32, 5, 0x20, out);
        }
    }

    /// Appends one field.
    pub fn field(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        let stat = static_name(name);
        if let Some(first) = stat {
            // The few static entries with a value sit together under their name.
            for (i, &(n, v)) in STATIC.iter().enumerate().skip(first - 1) {
                if n != name {
                    break;
                }
                if v == value {
                    integer::encode(i as u32 + 1, 7, 0x80, out);
                    return;
                }
            }
        }
        let (full, named) = self.table.find(name, value);
        if let Some(i) = full {
            integer::encode(i as u32, 7, 0x80, out);
            return;
        }
        let name_index = stat.or(named).unwrap_or(0) as u32;
        let sensitive = SENSITIVE.contains(&name);
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if !sensitive && size <= self.table.max() / 4 {
            // Literal with incremental indexing (§6.2.1): the peer adds it too.
            integer::encode(name_index, 6, 0x40, out);
            if name_index == 0 {
                string(name, out);
            }
            string(value, out);
            self.table.insert(name, value);
            return;
        }
        // Without indexing (§6.2.2), or never indexed (§6.2.3) for credentials.
        integer::encode(name_index, 4, if sensitive { 0x10 } else { 0x00 }, out);
        if name_index == 0 {
            string(name, out);
        }
        string(value, out);
    }
}

/// A string literal, Huffman-coded when that is shorter.
fn string(s: &[u8], out: &mut Vec<u8>) {
    let h = huffman::encoded_len(s);
    if h < s.len() {
        integer::encode(h as u32, 7, 0x80, out);
        huffman::encode(s, out);
    } else {
        integer::encode(s.len() as u32, 7, 0, out);
        out.extend_from_slice(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hpack::Decoder;

    #[test]
    fn encoded_fields_decode_to_the_same_list() {
        let fields: Vec<(&[u8], &[u8])> = vec![
            (b":status", b"200"),
            (b":status", b"302"),
            (b"content-type", b"text/html; charset=utf-8"),
            (b"x-custom", b""),
            (b"authorization", b"Basic dTpw"),
            (b"content-length", b"1024"),
            (b"binary", &[0, 1, 2, 255]),
        ];
        let mut e = Encoder::new();
        let mut d = Decoder::new(4096, 1 << 20);
        for _ in 0..2 {
            let mut block = Vec::new();
            e.encode(fields.iter().copied(), &mut block);
            let mut got = Vec::new();
            d.decode(&block, |n, v| got.push((n.to_vec(), v.to_vec())))
                .unwrap();
            let want: Vec<_> = fields
                .iter()
                .map(|(n, v)| (n.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(got, want);
        }
        // Indexed: everything but the credentials and the two static hits.
        assert!(d.table_size() > 0);
    }

    /// Decodes `block` with `d`, giving the fields.
    fn decode(d: &mut Decoder, block: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut got = Vec::new();
        d.decode(block, |n, v| got.push((n.to_vec(), v.to_vec())))
            .unwrap();
        got
    }

    #[test]
    fn a_repeated_field_is_one_octet_the_second_time() {
        let mut e = Encoder::new();
        let mut d = Decoder::new(4096, 1 << 20);
        let head: [(&[u8], &[u8]); 3] = [
            (b":status", b"200"),
            (b"server", b"servelab"),
            (b"content-type", b"text/plain"),
        ];
        let mut first = Vec::new();
        e.encode(head, &mut first);
        let mut second = Vec::new();
        e.encode(head, &mut second);
        assert_eq!(second.len(), 3, "{second:?}");
        assert_eq!(decode(&mut d, &first), decode(&mut d, &second));
        // The first block announced the table's size, once.
        assert_eq!(first[0] & 0xe0, 0x20);
        assert_ne!(second[0] & 0xe0, 0x20);
    }

    #[test]
    fn the_peer_s_decoder_agrees_through_evictions_and_size_changes() {
        // Many distinct fields through a 1 KiB table: entries are evicted on both sides in
        // the same order, so every later index still names the same field.
        let mut e = Encoder::new();
        let mut d = Decoder::new(4096, 1 << 20);
        let mut rng = 7u64;
        for round in 0..400 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (rng >> 33) % 40;
            let name = format!("x-field-{}", k % 7);
            let value = format!("value-{k}-{}", "v".repeat((k % 5) as usize * 20));
            let fields: Vec<(&[u8], &[u8])> = vec![
                (b":status", b"200"),
                (name.as_bytes(), value.as_bytes()),
                (b"cookie", b"secret"),
                (b"date", b"Thu, 03 Dec 2026 15:00:00 GMT"),
            ];
            if round == 150 {
                // The peer shrinks its table: ours follows, and says so.
                e.peer_table_size_changed(200);
                d.set_max_allowed(200);
            }
            if round == 300 {
                e.peer_table_size_changed(0);
                d.set_max_allowed(0);
            }
            let mut block = Vec::new();
            e.encode(fields.iter().copied(), &mut block);
            let want: Vec<_> = fields
                .iter()
                .map(|(n, v)| (n.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(decode(&mut d, &block), want, "round {round}");
            assert!(d.table_size() <= MAX_TABLE);
        }
        assert_eq!(d.table_size(), 0, "a table of 0 holds nothing");
    }

    #[test]
    fn status_200_is_one_octet_and_credentials_are_never_indexed() {
        let mut e = Encoder::new();
        let mut out = Vec::new();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        // The size update of the first block (1024 in a 5-bit prefix), then the index.
        assert_eq!(out, [0x3f, 0xe1, 0x07, 0x88]);
        out.clear();
        e.field(b"authorization", b"x", &mut out);
        assert_eq!(
            out[0], 0x1f,
            "never-indexed, name index 23 past the 4-bit prefix"
        );
    }

    #[test]
    fn a_table_size_change_is_signalled_once() {
        let mut e = Encoder::new();
        e.peer_table_size_changed(0);
        let mut out = Vec::new();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        assert_eq!(out, [0x20, 0x88]);
        out.clear();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        assert_eq!(out, [0x88]);
    }
}
