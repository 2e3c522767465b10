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
//! an intermediary cannot index them either), `:path`, and fields larger than a quarter
//! of the table, which would evict the rest for one use. `:path` is sent as a literal
//! without indexing (§6.2.2) because that is what the clients whose requests a server
//! meets do: nghttp2 (curl, h2load) never indexes it, nor does Chrome's encoder (it
//! indexes no pseudo-field but `:authority`). A path rarely repeats in real traffic, so
//! an indexed one evicts entries that would have been used again; and a load generator
//! that indexed it would ask the server to decode one octet where every real client
//! sends a literal, flattering the server it measures (`servelab load --h2` read nginx
//! 2–5% faster than h2load over h2c while it did, bench/results/2026-12-04/h2-default).
//!
//! Why a memo of the last block (`Memo`): a field's encoding depends only on the field
//! and the table, and a static file's responses repeat their fields in the same order, so
//! while the table is unchanged a field that stands where it stood in the block before is
//! copied from what it encoded to then, without the lookups in both tables (about 100
//! instructions a field). The bytes are the ones the lookups would give.

use crate::hpack::huffman;
use crate::hpack::integer;
use crate::hpack::table::{DynamicTable, ENTRY_OVERHEAD, STATIC, static_name};

/// The largest dynamic table this encoder keeps, octets in RFC 7541's measure (name +
/// value + 32 per entry): the dozen fields a static response repeats fit in it.
pub const MAX_TABLE: usize = 1024;

/// What the peer allows until its SETTINGS say otherwise (RFC 9113 §6.5.2).
const DEFAULT_PEER_TABLE: usize = 4096;

/// The most octets of names, values and encodings the [`Memo`] keeps: a response head's
/// worth. Fields past it are encoded each time.
const MEMO_MAX: usize = 2048;

/// A connection's HPACK encoder: the dynamic table the peer's decoder mirrors.
#[derive(Debug, Clone)]
pub struct Encoder {
    /// The table; its maximum is the smaller of [`MAX_TABLE`] and the peer's setting.
    table: DynamicTable,
    /// The next block opens with a size update announcing the table's maximum: at the
    /// first block, and after the peer changes SETTINGS_HEADER_TABLE_SIZE (§4.2).
    size_update: bool,
    /// Counts the table's changes (an entry added, its maximum set): an encoding made at
    /// one count holds at that count only.
    changes: u64,
    /// The place in the current block of the next field.
    at: usize,
    memo: Memo,
}

/// The fields of the last blocks, by their place in the block, with what each encoded to
/// (see the module docs). Every entry holds for the table at [`Memo::changes`]; an entry
/// is added only behind the ones before it, so the memo is a prefix of some block.
#[derive(Debug, Clone, Default)]
struct Memo {
    changes: u64,
    /// Each field's name, value and encoding, back to back.
    text: Vec<u8>,
    /// Where each field's name, value and encoding end in `text`.
    ends: Vec<[u32; 3]>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder {
            table: DynamicTable::new(MAX_TABLE.min(DEFAULT_PEER_TABLE)),
            size_update: true,
            changes: 0,
            at: 0,
            memo: Memo::default(),
        }
    }
}

/// Fields never indexed by an intermediary either (RFC 7541 §7.1.3): credentials.
const SENSITIVE: [&[u8]; 3] = [b"authorization", b"proxy-authorization", b"cookie"];

/// Fields sent without indexing (RFC 7541 §6.2.2) though not sensitive: the request's
/// path, as real clients send it (see the module docs).
const UNINDEXED: [&[u8]; 1] = [b":path"];

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
        self.changes += 1;
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
        self.at = 0;
        if std::mem::take(&mut self.size_update) {
            integer::encode(self.table.max() as u32, 5, 0x20, out);
        }
    }

    /// Appends one field.
    pub fn field(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        if !self.repeat(name, value, out) {
            self.field_afresh(name, value, out);
        }
    }

    /// Appends the field as the memo has it and says true, when the same field stood at
    /// this place in an earlier block and the table has not changed since; else false, and
    /// nothing is appended. A caller that would first check or rewrite the field (the
    /// connection lowercases names) asks this first, then [`Encoder::field_afresh`].
    pub fn repeat(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) -> bool {
        let m = &self.memo;
        if m.changes != self.changes {
            return false;
        }
        let Some(&[name_end, value_end, end]) = m.ends.get(self.at) else {
            return false;
        };
        let start = match self.at {
            0 => 0,
            i => m.ends[i - 1][2],
        };
        let span = |a: u32, b: u32| &m.text[a as usize..b as usize];
        if !same(span(start, name_end), name) || !same(span(name_end, value_end), value) {
            return false;
        }
        match span(value_end, end) {
            &[one] => out.push(one),
            bytes => out.extend_from_slice(bytes),
        }
        self.at += 1;
        true
    }

    /// Appends one field by looking it up in the tables (not in the memo), and keeps what it
    /// encoded to in the memo.
    pub fn field_afresh(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
        let from = out.len();
        let changes = self.changes;
        self.by_tables(name, value, out);
        let at = self.at;
        self.at += 1;
        let m = &mut self.memo;
        if m.changes != self.changes || self.changes != changes {
            // Encoded for another table: none of it holds. The next block fills it afresh
            // (this one's fields after an insertion would not stand at their place).
            m.changes = self.changes;
            m.text.clear();
            m.ends.clear();
            if self.changes != changes {
                return;
            }
        }
        if at > m.ends.len() {
            return;
        }
        m.ends.truncate(at);
        m.text.truncate(m.ends.last().map_or(0, |e| e[2] as usize));
        let encoded = &out[from..];
        if m.text.len() + name.len() + value.len() + encoded.len() > MEMO_MAX {
            return;
        }
        let mut end = |bytes: &[u8]| {
            m.text.extend_from_slice(bytes);
            m.text.len() as u32
        };
        let ends = [end(name), end(value), end(encoded)];
        m.ends.push(ends);
    }

    /// Encodes one field by the tables.
    fn by_tables(&mut self, name: &[u8], value: &[u8], out: &mut Vec<u8>) {
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
        if !sensitive && !UNINDEXED.contains(&name) && size <= self.table.max() / 4 {
            // Literal with incremental indexing (§6.2.1): the peer adds it too.
            integer::encode(name_index, 6, 0x40, out);
            if name_index == 0 {
                string(name, out);
            }
            string(value, out);
            self.table.insert(name, value);
            self.changes += 1;
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

/// `a == b`, without a call to `memcmp` for the short names and values of a head (the
/// call was about a third of a memo hit's instructions): up to 16 octets as two words that
/// may overlap.
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8"));
    match n {
        0..8 => a.iter().zip(b).all(|(x, y)| x == y),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
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
    use crate::hpack::decoder::Decoder;

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
    fn a_path_is_a_literal_without_indexing_every_time_as_real_clients_send_it() {
        let mut e = Encoder::new();
        let mut d = Decoder::new(4096, 1 << 20);
        let head: [(&[u8], &[u8]); 2] = [(b":method", b"GET"), (b":path", b"/1k.bin")];
        let mut blocks = [Vec::new(), Vec::new()];
        for block in &mut blocks {
            e.encode(head, block);
            assert_eq!(decode(&mut d, block).len(), 2);
        }
        // The second block: `:method GET` (static 2), then `:path` by its static name
        // (4) as a literal without indexing (0000 prefix, §6.2.2), value Huffman-coded.
        let second = &blocks[1];
        assert_eq!(&second[..2], &[0x82, 0x04], "{second:?}");
        assert_eq!(second[2] & 0x80, 0x80, "Huffman-coded: {second:?}");
        assert_eq!(d.table_size(), 0, "nothing was indexed");
        // A path in the static table is still its one index octet.
        let mut root = Vec::new();
        e.encode([(&b":path"[..], &b"/"[..])], &mut root);
        assert_eq!(root, [0x84]);
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

    /// The memo changes no byte: block after block (fields changed, added, dropped, a new
    /// `date`, credentials, a field too large to index, the peer's table shrinking), an
    /// encoder that copies from its memo gives what one that looks every field up gives,
    /// and the peer's decoder reads the fields back.
    #[test]
    fn the_memo_gives_the_bytes_the_tables_give() {
        let mut e = Encoder::new();
        let mut d = Decoder::new(4096, 1 << 20);
        let big = "b".repeat(300);
        let mut rng = 11u64;
        let (mut hits, mut misses) = (0, 0);
        for round in 0..400u32 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = rng >> 33;
            let date = format!("Fri, 04 Dec 2026 01:{:02}:00 GMT", round / 40);
            let etag = format!("\"{}\"", r % 3);
            let mut fields: Vec<(&[u8], &[u8])> = vec![
                (b":status", if r % 11 == 0 { b"404" } else { b"200" }),
                (b"server", b"servelab"),
                (b"date", date.as_bytes()),
                (b"content-type", b"text/plain"),
                (b"etag", etag.as_bytes()),
            ];
            if r % 5 == 0 {
                fields.push((b"set-cookie", b"a=b"));
                fields.push((b"authorization", b"Basic dTpw"));
            }
            if r % 7 == 0 {
                fields.insert(2, (b"x-big", big.as_bytes()));
            }
            if r % 13 == 0 {
                fields.pop();
            }
            if round == 200 {
                e.peer_table_size_changed(256);
                d.set_max_allowed(256);
            }
            let mut fresh = e.clone();
            fresh.memo = Memo::default();
            let mut want = Vec::new();
            fresh.encode(fields.iter().copied(), &mut want);
            let mut got = Vec::new();
            e.begin_block(&mut got);
            for &(n, v) in &fields {
                if e.repeat(n, v, &mut got) {
                    hits += 1;
                } else {
                    misses += 1;
                    e.field_afresh(n, v, &mut got);
                }
            }
            assert_eq!(got, want, "round {round}");
            let back: Vec<_> = fields
                .iter()
                .map(|(n, v)| (n.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(decode(&mut d, &got), back, "round {round}");
        }
        // Both ways were taken often (the mix changes some field in most blocks).
        assert!(
            hits > 500 && misses > 500,
            "{hits} from the memo, {misses} looked up"
        );
    }

    #[test]
    fn same_is_slice_equality() {
        let base: Vec<u8> = (0..40u8).collect();
        for n in 0..=40 {
            for at in 0..n {
                let a = &base[..n];
                let mut b = a.to_vec();
                assert!(same(a, &b));
                b[at] ^= 1;
                assert!(!same(a, &b), "{n} {at}");
            }
            assert!(!same(&base[..n], &base[..n.saturating_sub(1)]) || n == 0);
        }
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
