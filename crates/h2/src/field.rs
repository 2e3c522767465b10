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

/// A field value: no NUL, CR or LF, no whitespace at either end (§8.2.1).
pub(crate) fn check_value(value: &[u8]) -> Result<(), &'static str> {
    if value.iter().any(|&b| b == 0 || b == b'\r' || b == b'\n') {
        return Err("NUL, CR or LF in a field value");
    }
    if value
        .first()
        .into_iter()
        .chain(value.last())
        .any(|&b| b == b' ' || b == b'\t')
    {
        return Err("whitespace around a field value");
    }
    Ok(())
}

/// A regular (not pseudo) field's name, checked: a lowercase token, not connection-specific,
/// `te` only as `trailers`.
pub(crate) fn regular_name(name: &[u8], value: &[u8]) -> Result<String, &'static str> {
    if name.is_empty() || !name.iter().all(|&b| is_lower_token(b)) {
        return Err("field name not a lowercase token");
    }
    if CONNECTION_SPECIFIC.contains(&name) {
        return Err("connection-specific field");
    }
    if name == b"te" && value != b"trailers" {
        return Err("te other than trailers");
    }
    // A token is ASCII (checked above), so nothing is lost.
    Ok(String::from_utf8_lossy(name).into_owned())
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
        assert!(check_value(b"\ta").is_err());
    }
}
