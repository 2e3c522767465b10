//! Fuzzes `ChunkedDecoder`, which decides where a chunked request body ends and therefore
//! where the next request begins: the heart of request-smuggling defence.
//!
//! Properties: the decoder never claims more bytes than it was given; while the body is not
//! over it consumes everything; the data total never exceeds `max_total`; and the outcome
//! (error or not, where the body ends, the data total) is the same whether the bytes arrive
//! at once, split at two fuzzer-chosen points, or one byte at a time.
//!
//! Input layout: byte 0 picks `max_total`, bytes 1..=4 two split points, the rest the body.

#![no_main]

use libfuzzer_sys::fuzz_target;
use servelab_http::ChunkedDecoder;

/// (error?, consumed, done, total)
type Outcome = (bool, usize, bool, u64);

fn run(body: &[u8], max_total: u64, cuts: &[usize]) -> Outcome {
    let mut d = ChunkedDecoder::new(max_total);
    let mut pos = 0;
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(body.len())).collect();
    bounds.push(body.len());
    for end in bounds {
        if end < pos {
            continue;
        }
        let piece = &body[pos..end];
        match d.feed(piece) {
            Err(_) => return (true, 0, false, 0),
            Ok((n, done)) => {
                assert!(n <= piece.len(), "consumed {n} of {}", piece.len());
                assert!(d.total() <= max_total, "total over the limit");
                pos += n;
                if done {
                    return (false, pos, true, d.total());
                }
                assert_eq!(n, piece.len(), "stopped early without finishing the body");
            }
        }
    }
    (false, pos, false, d.total())
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 5 {
        return;
    }
    let max_total = match data[0] % 3 {
        0 => 1 << 20,
        1 => u64::from(data[0]),
        _ => u64::MAX,
    };
    let a = usize::from(u16::from_le_bytes([data[1], data[2]]));
    let b = usize::from(u16::from_le_bytes([data[3], data[4]]));
    let body = &data[5..];
    let whole = run(body, max_total, &[]);
    let (lo, hi) = (a.min(b), a.max(b));
    assert_eq!(run(body, max_total, &[lo, hi]), whole, "split at {lo},{hi}");
    if body.len() <= 4096 {
        let bytewise: Vec<usize> = (1..body.len()).collect();
        assert_eq!(run(body, max_total, &bytewise), whole, "byte at a time");
    }
});
