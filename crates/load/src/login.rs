//! A login written in a URL, `http://alice:s3cret@host/`, as curl, wrk, k6 and
//! oha take it: sent as `Authorization: Basic …` (RFC 7617), never in the
//! `Host` header, and never shown: the report and every message carry the URL
//! with the password replaced by `***` ([`redact`]).
//!
//! The user and password are percent-decoded (RFC 3986, 3.2.1), so a password
//! with `@` or `:` in it is written `%40` or `%3A`.

use base64::Engine as _;

/// A user and password from a URL's userinfo, decoded.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Login {
    user: String,
    password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Login({:?}, ***)", self.user)
    }
}

impl Login {
    /// The `Authorization` header line, CRLF included.
    pub(crate) fn header(&self) -> String {
        format!("Authorization: {}\r\n", self.value())
    }

    /// The `Authorization` field's value, `Basic …` (HTTP/2 sends it as a field).
    pub(crate) fn value(&self) -> String {
        let pair = format!("{}:{}", self.user, self.password);
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        )
    }
}

/// Splits `user:password@host:port` into the login and `host:port`; a URL's
/// authority without `@` has no login. The last `@` ends the userinfo (a
/// password may hold an unescaped `@`, as curl allows).
pub(crate) fn split(authority: &str) -> Result<(Option<Login>, &str), String> {
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return Ok((None, authority));
    };
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    let user = percent_decode(user).ok_or("the user name has a bad %-escape")?;
    let password = percent_decode(password).ok_or("the password has a bad %-escape")?;
    if user.is_empty() {
        return Err("a login without a user name (write user:password@host)".to_string());
    }
    Ok((Some(Login { user, password }), host))
}

/// The URL with the password of its login replaced by `***` (the user name
/// stays: it says whose login it was); unchanged without a login.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_string();
    };
    let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
    format!("{scheme}://{user}:***@{host}{tail}")
}

/// Decodes `%XX` escapes; `None` for a broken escape or bytes that are not
/// UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_becomes_a_basic_header_and_leaves_the_host() {
        let (login, host) = split("alice:s3cret@127.0.0.1:8080").unwrap();
        assert_eq!(host, "127.0.0.1:8080");
        // base64("alice:s3cret")
        assert_eq!(
            login.unwrap().header(),
            "Authorization: Basic YWxpY2U6czNjcmV0\r\n"
        );
        let (login, host) = split("a%40b:p%3Aw@h").unwrap();
        assert_eq!(host, "h");
        let l = login.unwrap();
        assert_eq!((l.user.as_str(), l.password.as_str()), ("a@b", "p:w"));
        assert!(
            !format!("{l:?}").contains("p:w"),
            "Debug hides the password"
        );
        assert_eq!(split("h:80").unwrap(), (None, "h:80"));
        assert!(split("%zz:p@h").is_err());
        assert!(split(":p@h").is_err());
    }

    #[test]
    fn redaction_keeps_the_user_and_hides_the_password() {
        assert_eq!(
            redact("http://alice:s3cret@127.0.0.1:9/x?y@z"),
            "http://alice:***@127.0.0.1:9/x?y@z"
        );
        assert_eq!(redact("https://bob@h/"), "https://bob:***@h/");
        assert_eq!(redact("http://h/a@b"), "http://h/a@b");
        assert_eq!(redact("not a url"), "not a url");
    }
}
