//! Fuzzes the HPACK decoder (and the Huffman code and encoder under it): the decoder sees
//! every header block a client sends, before any other check.
//!
//! Beyond "no panic":
//! - the dynamic table never grows past the size the decoder was allowed;
//! - a block that decodes `Ok` emitted a list within the list limit, and one refused with
//!   `ListTooLarge` emitted nothing past it;
//! - the decoder's work is linear: the fields emitted are at most one per block octet;
//! - encoding fields and decoding them gives the same fields (round trip through our own
//!   encoder, and so through the Huffman code);
//! - Huffman encoding any octets and decoding them gives the same octets.
//!
//! Input layout: byte 0 picks the table size (×16), byte 1 the list limit (×64), the rest is
//! a header block; the same rest, cut at 0x00 octets into (name, value) pairs, is the
//! round trip's input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use servelab_h2::hpack::{Decoder, Encoder, HpackError, huffman};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let max_table = usize::from(data[0]) * 16;
    let max_list = usize::from(data[1]) * 64;
    let block = &data[2..];

    let mut d = Decoder::new(max_table, max_list);
    // Twice: the second block sees the table the first one left.
    for _ in 0..2 {
        let mut list = 0usize;
        let mut fields = 0usize;
        let r = d.decode(block, |n, v| {
            list += n.len() + v.len() + 32;
            fields += 1;
        });
        assert!(
            d.table_size() <= max_table,
            "table {} > {max_table}",
            d.table_size()
        );
        assert!(
            fields <= block.len(),
            "{fields} fields from {} octets",
            block.len()
        );
        match r {
            Ok(()) | Err(HpackError::ListTooLarge) => assert!(list <= max_list),
            Err(HpackError::Compression(_)) => break,
        }
    }

    let pairs: Vec<&[u8]> = block.split(|&b| b == 0).collect();
    let fields: Vec<(&[u8], &[u8])> = pairs.chunks_exact(2).map(|c| (c[0], c[1])).collect();
    let mut e = Encoder::new();
    let mut out = Vec::new();
    e.encode(fields.iter().copied(), &mut out);
    let mut got = Vec::new();
    Decoder::new(4096, usize::MAX)
        .decode(&out, |n, v| got.push((n.to_vec(), v.to_vec())))
        .expect("our own block decodes");
    let want: Vec<(Vec<u8>, Vec<u8>)> = fields
        .iter()
        .map(|(n, v)| (n.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(got, want);

    let mut h = Vec::new();
    huffman::encode(block, &mut h);
    assert_eq!(h.len(), huffman::encoded_len(block));
    let mut back = Vec::new();
    huffman::decode(&h, &mut back, block.len()).expect("Huffman round trip");
    assert_eq!(back, block);
});
