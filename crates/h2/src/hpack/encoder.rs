//! Fields to a header block (RFC 7541 §6), with no dynamic table.
//!
//! Why no dynamic table: it would cost every connection up to 4 KiB of state and a lookup
//! structure, to save the repeated response fields (`content-type`, `server`, `date`, a few
//! dozen octets per response), while the static table and Huffman coding already shrink the
//! fields a static-file server sends. Without it, the encoder holds one flag, and a peer's
//! small SETTINGS_HEADER_TABLE_SIZE costs nothing. A client with long repeated request
//! fields (`load --h2` with cookies) may want indexing later; this is where it would go.

use crate::hpack::huffman;
use crate::hpack::integer;
use crate::hpack::table::STATIC;

/// A connection's HPACK encoder (the peer's decoder holds the table it would fill; ours
/// keeps it empty).
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    /// The peer changed SETTINGS_HEADER_TABLE_SIZE: the next block opens with a size update
    /// (to 0, which is at or below any value), as RFC 7541 §4.2 requires.
    size_update: bool,
}

/// Fields never indexed by an intermediary either (RFC 7541 §7.1.3): credentials.
const SENSITIVE: [&[u8]; 3] = [b"authorization", b"proxy-authorization", b"cookie"];

impl Encoder {
    /// A new encoder.
    pub fn new() -> Self {
        Encoder::default()
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed (call on each SETTINGS that carries it).
    pub fn peer_table_size_changed(&mut self) {
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
            out.push(0x20);
        }
    }

    /// Appends one field.
    pub fn field(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        let mut name_index = 0;
        for (i, &(n, v)) in STATIC.iter().enumerate() {
            if n == name {
                if v == value {
                    integer::encode(i as u32 + 1, 7, 0x80, out);
                    return;
                }
                if name_index == 0 {
                    name_index = i as u32 + 1;
                }
            }
        }
        let pattern = if SENSITIVE.contains(&name) {
            0x10
        } else {
            0x00
        };
        integer::encode(name_index, 4, pattern, out);
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
        assert_eq!(d.table_size(), 0, "the encoder never indexes");
    }

    #[test]
    fn status_200_is_one_octet_and_credentials_are_never_indexed() {
        let mut e = Encoder::new();
        let mut out = Vec::new();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        assert_eq!(out, [0x88]);
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
        e.peer_table_size_changed();
        let mut out = Vec::new();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        assert_eq!(out, [0x20, 0x88]);
        out.clear();
        e.encode([(&b":status"[..], &b"200"[..])], &mut out);
        assert_eq!(out, [0x88]);
    }
}
