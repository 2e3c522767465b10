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
/// not: the server refuses such a request as its HTTP/1.1 parser would. Most values are
/// visible ASCII throughout, which one pass eight octets at a time tells
/// ([`any_outside`]); a value with a space takes a second such pass, and only a value with
/// a control octet or one past 0x7e is gone through by octet. (By octet throughout, these
/// checks were a tenth of the instructions of a request to `serve`, `bench/callgrind.sh --h2`.)
pub(crate) fn check_value(value: &[u8]) -> Result<bool, &'static str> {
    if !any_outside(value, 0x21) {
        return Ok(false);
    }
    let control = if any_outside(value, 0x20) {
        control_octets(value)?
    } else {
        false
    };
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

/// `value` is visible ASCII (0x21 to 0x7e) throughout, as a pseudo-header's value must be
/// (and then a valid field value too).
pub(crate) fn all_visible(value: &[u8]) -> bool {
    !any_outside(value, 0x21)
}

const ONES: u64 = u64::from_le_bytes([1; 8]);
const HIGH: u64 = ONES * 0x80;

/// Some octet of `value` is below `low` (at most 0x80) or above 0x7e. Eight octets at a
/// time: the last word overlaps the one before it rather than being padded.
fn any_outside(value: &[u8], low: u8) -> bool {
    if value.len() < 8 {
        return value.iter().any(|&b| b < low || b > 0x7e);
    }
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("eight octets"));
    let mut flags = 0;
    let mut chunks = value.chunks_exact(8);
    for c in &mut chunks {
        flags |= outside(word(c), low);
    }
    if !chunks.remainder().is_empty() {
        flags |= outside(word(&value[value.len() - 8..]), low);
    }
    flags != 0
}

/// Non-zero when some octet of `x` is below `low` or above 0x7e. Below: the borrow of
/// `x - low` reaches an octet's top bit only where that octet is below `low` or a lower octet
/// borrowed, which it does only when it is below `low` itself, and an octet of 0x80 or more
/// neither passes (`!x` masks it) nor borrows; so the test is exact as a yes or no. Above:
/// with the top bits cleared (no octet carries into the next), adding 1 sets an octet's top
/// bit exactly where it is 0x7f; octets of 0x80 and up had it already.
fn outside(x: u64, low: u8) -> u64 {
    let below = x.wrapping_sub(ONES * u64::from(low)) & !x;
    let above = ((x & !HIGH) + ONES) | x;
    (below | above) & HIGH
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
                    for other in [b'a', b' ', 0x80] {
                        let mut v = vec![other; len];
                        v[at] = b;
                        let visible = v.iter().all(u8::is_ascii_graphic);
                        assert_eq!(all_visible(&v), visible, "{v:?}");
                        let outside = v.iter().any(|&c| !(0x20..=0x7e).contains(&c));
                        assert_eq!(any_outside(&v, 0x20), outside, "{v:?}");
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
        }
        assert_eq!(checked, 300 * 256 * 3);
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
