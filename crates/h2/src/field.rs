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
/// not: the server refuses such a request as its HTTP/1.1 parser would. One pass over the
/// value for both: the rarer test runs only on a control octet.
pub(crate) fn check_value(value: &[u8]) -> Result<bool, &'static str> {
    let mut control = false;
    for &b in value {
        if b < 0x20 || b == 0x7f {
            if b == 0 || b == b'\r' || b == b'\n' {
                return Err("NUL, CR or LF in a field value");
            }
            control |= b != b'\t';
        }
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

/// tchar (RFC 9110 §5.6.2) without uppercase letters.
fn is_lower_token(b: u8) -> bool {
    matches!(b, b'a'..=b'z' | b'0'..=b'9') || b"!#$%&'*+-.^_`|~".contains(&b)
}

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
}
