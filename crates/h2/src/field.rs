//! The field rules both directions share (RFC 9113 §8.2): values, regular field names, and
//! the connection-specific fields HTTP/2 leaves out.
//!
//! A message that breaks them is malformed: a stream error PROTOCOL_ERROR (§8.1.1).

/// Fields that only HTTP/1.1 connections carry (§8.2.2).
pub(crate) const CONNECTION_SPECIFIC: [&[u8]; 5] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
];

/// A field value: no NUL, CR or LF, no whitespace at either end (§8.2.1). `Ok(true)` when
/// it holds another control octet (not HTAB), which HTTP/2 allows and an HTTP/1.1 head does
/// not: the server refuses such a request as its HTTP/1.1 parser would. A first pass looks
/// eight octets at a time for any control octet ([`any_below`], about a fifth of the
/// instructions of a pass by octet, which was a tenth of a request's to `serve` under
/// `bench/callgrind.sh --h2`); only a value that has one is gone through by octet.
pub(crate) fn check_value(value: &[u8]) -> Result<bool, &'static str> {
    let mut control = false;
    if any_below(value, 0x20) || any_above(value, 0x7e) {
        control = control_octets(value)?;
    }
    if value
        .first()
        .into_iter()
        .chain(value.last())
        .any(|&b| b == b' ' || b == b'\t')
    {
        return Err("whitespace around a field value");
    }
    Ok(control)
}

/// `value` is visible ASCII (0x21 to 0x7e) throughout, as a pseudo-header's value must be.
pub(crate) fn all_visible(value: &[u8]) -> bool {
    !any_below(value, 0x21) && !any_above(value, 0x7e)
}

/// Eight octets as one word (the last word of a value padded with `pad`).
fn words(value: &[u8], pad: u8) -> impl Iterator<Item = u64> + '_ {
    let chunks = value.chunks_exact(8);
    let rest = chunks.remainder();
    let mut last = [pad; 8];
    last[..rest.len()].copy_from_slice(rest);
    chunks
        .map(|c| u64::from_le_bytes(c.try_into().expect("eight octets")))
        .chain((!rest.is_empty()).then(|| u64::from_le_bytes(last)))
}

const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGH: u64 = ONES * 0x80;
/// What pads a value's last word: an octet that neither test below flags.
const PAD: u8 = 0x40;

/// Some octet of `value` is below `n` (at most [`PAD`]): the borrow of `x - n` reaches an
/// octet's top bit only where that octet is below `n` or a lower octet borrowed, which it
/// does only when it is below `n` itself; an octet of 0x80 or more neither passes (its top
/// bit is masked by `!x`) nor borrows. So the word test is exact as a yes or no.
fn any_below(value: &[u8], n: u8) -> bool {
    debug_assert!(n <= PAD);
    words(value, PAD).any(|x| x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH != 0)
}

/// Some octet of `value` is above `n` (at least [`PAD`], below 0x80): with the top bits
/// cleared (so no octet carries into the next), adding `0x7f - n` sets an octet's top bit
/// exactly where it is above `n`; octets of 0x80 and up had it already.
fn any_above(value: &[u8], n: u8) -> bool {
    debug_assert!((PAD..0x80).contains(&n));
    words(value, PAD).any(|x| (((x & !HIGH) + ONES * u64::from(0x7f - n)) | x) & HIGH != 0)
}

/// The octet-by-octet rules for a value that holds an octet outside 0x20 to 0x7e: an error
/// for NUL, CR or LF, else whether it holds a control octet other than HTAB.
fn control_octets(value: &[u8]) -> Result<bool, &'static str> {
    let mut control = false;
    for &b in value {
        if b < 0x20 || b == 0x7f {
            if b == 0 || b == b'\r' || b == b'\n' {
                return Err("NUL, CR or LF in a field value");
            }
            control |= b != b'\t';
        }
    }
    Ok(control)
}

/// A regular (not pseudo) field's name, checked: a lowercase token, not connection-specific,
/// `te` only as `trailers`.
pub(crate) fn regular_name<'n>(name: &'n [u8], value: &[u8]) -> Result<&'n [u8], &'static str> {
    if name.is_empty() || !name.iter().all(|&b| is_lower_token(b)) {
        return Err("field name not a lowercase token");
    }
    if CONNECTION_SPECIFIC.contains(&name) {
        return Err("connection-specific field");
    }
    if name == b"te" && value != b"trailers" {
        return Err("te other than trailers");
    }
    Ok(name)
}

/// tchar (RFC 9110 §5.6.2) without uppercase letters: one load from [`LOWER_TOKEN`].
fn is_lower_token(b: u8) -> bool {
    LOWER_TOKEN[usize::from(b)]
}

/// Which octets are lowercase tchars (a test of ranges and a search of the symbols took 8
/// instructions an octet of `user-agent`).
static LOWER_TOKEN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'!' | b'#' | b'$' | b'%' | b'&')
            || matches!(
                c,
                b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
            );
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values() {
        assert!(regular_name(b"accept", b"*/*").is_ok());
        assert!(regular_name(b"Accept", b"*/*").is_err());
        assert!(regular_name(b"", b"").is_err());
        assert!(regular_name(b"upgrade", b"h2c").is_err());
        assert!(regular_name(b"te", b"trailers").is_ok());
        assert!(regular_name(b"te", b"gzip").is_err());
        assert!(check_value(b"a b").is_ok());
        assert!(check_value(b"").is_ok());
        assert!(check_value(b"a\0").is_err());
        assert_eq!(check_value(b"a\tb"), Ok(false));
        assert_eq!(check_value(b"a\x01b"), Ok(true));
        assert_eq!(check_value(b"a\x7fb"), Ok(true));
        assert!(check_value(b"\ta").is_err());
    }

    /// The word-at-a-time tests give what a test of each octet gives, for every octet at
    /// every place of values of every length up to three words, among ordinary octets.
    #[test]
    fn word_tests_agree_with_octet_tests() {
        let mut checked = 0;
        for len in 1..=24 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut v = vec![b'a'; len];
                    v[at] = b;
                    let visible = v.iter().all(u8::is_ascii_graphic);
                    assert_eq!(all_visible(&v), visible, "{v:?}");
                    let outside = v.iter().any(|&c| !(0x20..=0x7e).contains(&c));
                    assert_eq!(any_below(&v, 0x20) || any_above(&v, 0x7e), outside, "{v:?}");
                    let mut old = Ok(false);
                    for &c in &v {
                        if c < 0x20 || c == 0x7f {
                            if c == 0 || c == b'\r' || c == b'\n' {
                                old = Err(());
                                break;
                            }
                            old = old.map(|o| o | (c != b'\t'));
                        }
                    }
                    let ends = [v[0], v[len - 1]];
                    if old.is_ok() && ends.iter().any(|&c| c == b' ' || c == b'\t') {
                        old = Err(());
                    }
                    assert_eq!(check_value(&v).map_err(|_| ()), old, "{v:?}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 300 * 256);
        assert!(all_visible(b""));
        assert_eq!(check_value(b""), Ok(false));
    }

    #[test]
    fn lower_token_octets() {
        let want: Vec<u8> = (0..=255u8)
            .filter(|&b| {
                b.is_ascii_lowercase() || b.is_ascii_digit() || b"!#$%&'*+-.^_`|~".contains(&b)
            })
            .collect();
        let got: Vec<u8> = (0..=255u8).filter(|&b| is_lower_token(b)).collect();
        assert_eq!(got, want);
    }
}
