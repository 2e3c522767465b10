//! Generated inputs for the tests that compare a fast checker with a plain one.

/// Marsaglia's xorshift64: a fixed seed gives the same inputs every run,
/// so a failure names a reproducible case. `seed` must not be zero.
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Makes 1 to `max_edits` random edits to `buf`: a byte of `bytes` written over,
/// inserted, or a byte removed.
pub(crate) fn mutate(
    buf: &mut Vec<u8>,
    next: &mut impl FnMut() -> u64,
    bytes: &[u8],
    max_edits: u64,
) {
    for _ in 0..(1 + next() % max_edits) {
        let pos = (next() as usize) % (buf.len() + 1);
        let byte = bytes[(next() as usize) % bytes.len()];
        match next() % 3 {
            0 if pos < buf.len() => buf[pos] = byte,
            1 => buf.insert(pos, byte),
            _ if pos < buf.len() => {
                buf.remove(pos);
            }
            _ => {}
        }
    }
}
