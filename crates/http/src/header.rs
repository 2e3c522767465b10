//! Response header fields given by the operator (`--header 'Name: value'`), checked once at
//! start so that every response can copy them without a second look.
//!
//! A field is accepted when its name is a token and its value is field-content (RFC 9110 5.1,
//! 5.5: visible ASCII, obs-text, and spaces or tabs inside), and when the server can add it
//! without changing what the response means:
//! - framing and hop-by-hop fields are refused (`Content-Length`, `Transfer-Encoding`,
//!   `Connection`, `Keep-Alive`, `Upgrade`, `TE`, `Trailer`, `Proxy-Connection`): a second
//!   `Content-Length` or a `Transfer-Encoding` would make the message length ambiguous, which
//!   is how responses get smuggled;
//! - fields the server computes for each response are refused too (`Date`, `Server`,
//!   `Content-Type`, `Content-Encoding`, `Content-Range`, `ETag`, `Last-Modified`,
//!   `Location`, `Allow`, `Retry-After`, `Accept-Ranges`): a fixed second value would
//!   contradict the computed one.
//!
//! Everything else (`Cache-Control`, `Access-Control-*`, `Content-Security-Policy`, `Vary`,
//! ...) is added as given; the server encodes them once and copies the bytes into each head.
//!
//! ```
//! use servelab_http::header::ExtraHeader;
//! let h: ExtraHeader = "Cache-Control: max-age=60".parse().unwrap();
//! assert_eq!((h.name(), h.value()), ("Cache-Control", "max-age=60"));
//! assert!("Content-Length: 5".parse::<ExtraHeader>().is_err());
//! ```

use std::str::FromStr;

/// Why a `--header` value is refused. The server does not start; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// No `:` between a name and a value.
    #[error("expected 'Name: value'")]
    NoColon,
    /// The name is empty or has a character a token may not have (RFC 9110 5.6.2).
    #[error("invalid field name {0:?}")]
    BadName(String),
    /// The value has a control character (CR, LF, NUL, ...) or is empty.
    #[error("invalid value for {0}: control characters and empty values are not allowed")]
    BadValue(String),
    /// A framing or hop-by-hop field, which would change how the message is delimited.
    #[error("{0} frames the message or the connection; the server sets it")]
    Framing(String),
    /// A field the server computes for each response.
    #[error("{0} is set by the server for each response")]
    ServerSet(String),
}

/// Framing and hop-by-hop fields (RFC 9110 7.6.1, RFC 9112 6).
const FRAMING: &[&str] = &[
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-connection",
];

/// Fields `ResponseHead` and the handler compute per response.
const SERVER_SET: &[&str] = &[
    "date",
    "server",
    "content-type",
    "content-encoding",
    "content-range",
    "etag",
    "last-modified",
    "location",
    "allow",
    "retry-after",
    "accept-ranges",
];

/// One checked `Name: value` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtraHeader {
    name: String,
    value: String,
}

impl ExtraHeader {
    /// The field name as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value, without surrounding whitespace.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Appends `Name: value\r\n`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(self.value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

impl FromStr for ExtraHeader {
    type Err = HeaderError;

    fn from_str(s: &str) -> Result<ExtraHeader, HeaderError> {
        let (name, value) = s.split_once(':').ok_or(HeaderError::NoColon)?;
        if name.is_empty() || !name.bytes().all(is_tchar) {
            return Err(HeaderError::BadName(name.to_owned()));
        }
        let lower = name.to_ascii_lowercase();
        if FRAMING.contains(&lower.as_str()) {
            return Err(HeaderError::Framing(name.to_owned()));
        }
        if SERVER_SET.contains(&lower.as_str()) {
            return Err(HeaderError::ServerSet(name.to_owned()));
        }
        let value = value.trim_matches([' ', '\t']);
        let field_char = |b: u8| b == b'\t' || (b >= 0x20 && b != 0x7f);
        if value.is_empty() || !value.bytes().all(field_char) {
            return Err(HeaderError::BadValue(name.to_owned()));
        }
        Ok(ExtraHeader {
            name: name.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// `tchar` (RFC 9110 5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<ExtraHeader, HeaderError> {
        s.parse()
    }

    #[test]
    fn accepts_usual_headers() {
        let h = parse("Access-Control-Allow-Origin:  *  ").unwrap();
        assert_eq!((h.name(), h.value()), ("Access-Control-Allow-Origin", "*"));
        let h = parse("Content-Security-Policy: default-src 'self'; img-src *").unwrap();
        assert_eq!(h.value(), "default-src 'self'; img-src *");
        assert!(parse("X-Odd_Name!: a\tb").is_ok());
        assert!(parse("Vary: Origin").is_ok());
        assert!(parse("X-Note: caf\u{e9}").is_ok()); // obs-text
        let mut out = Vec::new();
        parse("Cache-Control: no-store").unwrap().encode(&mut out);
        assert_eq!(out, b"Cache-Control: no-store\r\n");
    }

    #[test]
    fn refuses_bad_syntax() {
        assert_eq!(parse("Cache-Control"), Err(HeaderError::NoColon));
        assert_eq!(parse(": x"), Err(HeaderError::BadName(String::new())));
        assert_eq!(
            parse("Cache Control: x"),
            Err(HeaderError::BadName("Cache Control".into()))
        );
        assert_eq!(parse("X-A : x"), Err(HeaderError::BadName("X-A ".into())));
        assert_eq!(
            parse("X-A: a\r\nX-B: b"),
            Err(HeaderError::BadValue("X-A".into()))
        );
        assert_eq!(parse("X-A: a\nb"), Err(HeaderError::BadValue("X-A".into())));
        assert_eq!(parse("X-A: \0"), Err(HeaderError::BadValue("X-A".into())));
        assert_eq!(parse("X-A:   "), Err(HeaderError::BadValue("X-A".into())));
    }

    #[test]
    fn refuses_framing_and_computed_fields_in_any_case() {
        for name in [
            "Content-Length",
            "transfer-encoding",
            "CONNECTION",
            "Keep-Alive",
            "TE",
        ] {
            let e = parse(&format!("{name}: 1")).unwrap_err();
            assert_eq!(e, HeaderError::Framing(name.into()));
            assert!(e.to_string().starts_with(name), "{e}");
        }
        for name in ["Date", "server", "Content-Type", "ETag", "Content-Encoding"] {
            assert_eq!(
                parse(&format!("{name}: 1")),
                Err(HeaderError::ServerSet(name.into()))
            );
        }
    }
}
