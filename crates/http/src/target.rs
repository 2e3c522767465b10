//! The request target and the authority: which forms of RFC 9112 3.2 we accept, and what a
//! valid `Host` looks like.
//!
//! origin-form (`/path?query`) is what clients send to servers. absolute-form
//! (`http://host/path`) is for proxies, but RFC 9112 3.2.2 requires servers to accept it; its
//! authority then overrides `Host`. asterisk-form (`*`) is only meaningful with OPTIONS and
//! authority-form (`host:port`) only with CONNECT; anywhere else they are refused with 400,
//! because a later stage that expects a path would misread them. In every form the target is
//! ASCII: a raw byte above 0x7F makes the request-line invalid (RFC 9112 3), so it is 400.
//!
//! An authority (`Host`, or the one in an absolute-form target) is `host [":" port]` of
//! RFC 3986 3.2.2-3.2.3: the host a reg-name or IPv4 address (unreserved, sub-delims and
//! percent-encoded octets) or an IP literal in brackets (an IPv6 address, or IPvFuture), and
//! the port digits only. RFC 9112 3.2 makes an invalid `Host` a 400.

use crate::error::RequestError;

/// Splits the request target into (target, authority) by form (RFC 9112 3.2).
///
/// The origin-form that nearly every request sends is answered here, small enough to be
/// inlined into the parser; every other target, and every error, goes to [`other_forms`].
#[inline]
pub(crate) fn classify_target<'a>(
    method: &str,
    target: &'a str,
) -> Result<(&'a str, Option<&'a str>), RequestError> {
    if target.starts_with('/') && method != "CONNECT" && target.is_ascii() {
        return Ok((target, None));
    }
    other_forms(method, target)
}

/// [`classify_target`] for every target but an ASCII origin-form one with a method other
/// than CONNECT (for which it gives `Ok((target, None))` too).
fn other_forms<'a>(
    method: &str,
    target: &'a str,
) -> Result<(&'a str, Option<&'a str>), RequestError> {
    if !target.is_ascii() {
        return Err(RequestError::InvalidTarget("raw byte above 0x7F"));
    }
    if method == "CONNECT" {
        // authority-form, and only with CONNECT (RFC 9112 3.2.3): host ":" port.
        let Some((host, port)) = target.rsplit_once(':') else {
            return Err(RequestError::InvalidTarget("CONNECT needs host:port"));
        };
        if host.is_empty() || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(RequestError::InvalidTarget("CONNECT needs host:port"));
        }
        validate_host(target.as_bytes())
            .map_err(|_| RequestError::InvalidTarget("bad CONNECT authority"))?;
        return Ok((target, None));
    }
    if target.starts_with('/') {
        return Ok((target, None));
    }
    if target == "*" {
        return if method == "OPTIONS" {
            Ok((target, None))
        } else {
            Err(RequestError::InvalidTarget("'*' is only for OPTIONS"))
        };
    }
    // absolute-form (RFC 9112 3.2.2), which servers must accept although clients send it only
    // to proxies.
    let rest = strip_prefix_ignore_case(target, "http://")
        .or_else(|| strip_prefix_ignore_case(target, "https://"))
        .ok_or(RequestError::InvalidTarget(
            "not origin-form or absolute-form",
        ))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.contains('@') {
        // RFC 9110 4.2.4: userinfo is deprecated and a favourite of phishing; treat as error.
        return Err(RequestError::InvalidTarget("userinfo in target"));
    }
    // RFC 9110 4.2.1: an http URI with an empty host MUST be rejected (`http:///`, `http://:80/`).
    if validate_host(authority.as_bytes())?.is_empty() {
        return Err(RequestError::InvalidHost("empty host"));
    }
    // "http://h" and "http://h?q" have an empty path, which means "/". We cannot build "/?q"
    // without allocating, and a static server ignores queries, so the query is dropped.
    let path = if path.starts_with('/') { path } else { "/" };
    Ok((path, Some(authority)))
}

/// RFC 3986 `unreserved / sub-delims`: the bytes allowed raw in every URI
/// component this crate checks or writes (hosts, paths, queries).
pub(crate) fn is_unreserved_or_sub_delim(b: u8) -> bool {
    REG_NAME[usize::from(b)]
}

/// [`is_unreserved_or_sub_delim`] as a table, built at compile time from the RFC's list, so
/// that a host is checked with one load per byte instead of a chain of comparisons.
static REG_NAME: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
            );
        b += 1;
    }
    table
};

pub(crate) fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &s[prefix.len()..])
}

/// Checks an authority, `host[:port]` without userinfo (see the module docs), and returns its
/// host. An empty host is allowed here: RFC 9112 3.2 sends `Host:` empty for targets with no
/// authority; the absolute form refuses it itself. Every byte it accepts is ASCII.
///
/// It works on bytes, so that a `Host` value (bytes, as httparse leaves it) needs no UTF-8
/// check first: the grammar below admits only ASCII, and the check cost more than this one.
/// A reg-name (every `Host` a client sends but an IP literal) is checked in one pass over the
/// bytes, a table lookup each, up to the `:` before the port: this runs for every request.
pub(crate) fn validate_host(authority: &[u8]) -> Result<&[u8], RequestError> {
    let b = authority;
    if b.first() == Some(&b'[') {
        return validate_ip_literal_authority(authority);
    }
    // RFC 3986 reg-name (which also covers IPv4address): unreserved, sub-delims and
    // pct-encoded octets (`%` and two hex digits).
    // A run of table bytes is skipped by a loop that does nothing else (`position`); only the
    // byte that stops it, rare but for the `:` before the port, goes through the `match`.
    let mut i = 0;
    loop {
        i += b[i..]
            .iter()
            .position(|&c| !REG_NAME[usize::from(c)])
            .unwrap_or(b.len() - i);
        match b.get(i) {
            None | Some(b':') => break,
            Some(b'%')
                if b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                i += 3;
            }
            Some(_) => return Err(RequestError::InvalidHost("character not allowed in host")),
        }
    }
    let (host, port) = authority.split_at(i);
    check_port(port)?;
    Ok(host)
}

/// Checks a `Host` field value with [`validate_host`] and returns it whole. A value that is
/// not UTF-8 is refused as "not ASCII", as it was when the value was converted to `&str`
/// before the check; only the error path pays for telling the two apart.
#[inline]
pub(crate) fn validate_host_field(value: &[u8]) -> Result<&[u8], RequestError> {
    match validate_host(value) {
        Ok(_) => Ok(value),
        Err(_) if std::str::from_utf8(value).is_err() => {
            Err(RequestError::InvalidHost("not ASCII"))
        }
        Err(e) => Err(e),
    }
}

/// `authority` starts with `[`: an IP literal, then an optional port. Rare, so plain code, and
/// `#[cold]` so that it stays out of line: inlined (with std's IPv6 parser), it made
/// [`validate_host`] save and restore six registers on every call.
#[cold]
fn validate_ip_literal_authority(authority: &[u8]) -> Result<&[u8], RequestError> {
    let rest = &authority[1..];
    let Some(close) = rest.iter().position(|&b| b == b']') else {
        return Err(RequestError::InvalidHost("unterminated IP literal"));
    };
    if !is_ip_literal(&rest[..close]) {
        return Err(RequestError::InvalidHost("invalid IP literal"));
    }
    let after = &rest[close + 1..];
    if !after.is_empty() && !after.starts_with(b":") {
        return Err(RequestError::InvalidHost("junk after IP literal"));
    }
    check_port(after)?;
    Ok(&authority[..close + 2])
}

/// `port` is empty or `:` and the port. RFC 3986 3.2.3: port = *DIGIT (empty allowed: `host:`
/// means the default port).
fn check_port(port: &[u8]) -> Result<(), RequestError> {
    match port.split_first() {
        Some((_colon, digits)) if !digits.iter().all(u8::is_ascii_digit) => {
            Err(RequestError::InvalidHost("port is not digits"))
        }
        _ => Ok(()),
    }
}

/// The inside of RFC 3986's IP-literal: an IPv6address (std's parser takes exactly its text
/// forms, embedded IPv4 included) or IPvFuture, `v` 1*HEXDIG `.` 1*(unreserved / sub-delims /
/// `:`). Zone identifiers (RFC 6874) have no place in a `Host` and are refused.
fn is_ip_literal(inside: &[u8]) -> bool {
    if let Some(future) = inside
        .strip_prefix(b"v")
        .or_else(|| inside.strip_prefix(b"V"))
    {
        let Some(dot) = future.iter().position(|&b| b == b'.') else {
            return false;
        };
        let (version, rest) = (&future[..dot], &future[dot + 1..]);
        return !version.is_empty()
            && version.iter().all(u8::is_ascii_hexdigit)
            && !rest.is_empty()
            && rest
                .iter()
                .all(|&b| is_unreserved_or_sub_delim(b) || b == b':');
    }
    // std parses an address from `&str` only; a non-ASCII byte is no address anyway.
    std::str::from_utf8(inside).is_ok_and(|s| s.parse::<std::net::Ipv6Addr>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every ASCII byte in every position of short authorities, and around `%`, `:` and the
    /// port of realistic ones: the scan gives the plain reference's answer each time.
    #[test]
    fn validate_host_agrees_with_the_reference_around_each_byte() {
        let mut cases: Vec<String> = Vec::new();
        for c in 0u8..128 {
            let c = char::from(c);
            for template in [
                "#", "a#", "#a", "a#b", "%#", "%4#", "%#4", "a%4#:1", "h:#", "h:1#",
            ] {
                cases.push(template.replace('#', &c.to_string()));
            }
        }
        for s in [
            "",
            ":",
            "a:",
            ":80",
            "127.0.0.1:8080",
            "example.com",
            "ex%41mple",
            "ex%4",
            "ex%",
            "%41%42:1",
            "a b",
            "[::1]:80",
            "[::1",
            "h:8x",
            "h:",
            "UPPER.case-_~!$&'()*+,;=",
        ] {
            cases.push(s.to_owned());
        }
        let mut ok = 0;
        for case in &cases {
            let new = validate_host(case.as_bytes());
            assert_eq!(
                new,
                reference_validate_host(case).map(str::as_bytes),
                "{case:?}"
            );
            ok += usize::from(new.is_ok());
        }
        // Both answers occur, so the comparison means something.
        assert!(
            ok > 100 && ok < cases.len() - 100,
            "{ok} of {}",
            cases.len()
        );
    }

    /// The byte lists as RFC 3986 writes them: the reference for the tables above.
    fn reference_unreserved_or_sub_delim(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&b)
    }

    /// `validate_host` as it was before the one-pass check (split at the first `:`, then
    /// check the host, then the port): the reference the new one is compared with.
    fn reference_validate_host(authority: &str) -> Result<&str, RequestError> {
        let (host, port) = match authority.strip_prefix('[') {
            Some(rest) => {
                let Some(close) = rest.find(']') else {
                    return Err(RequestError::InvalidHost("unterminated IP literal"));
                };
                if !is_ip_literal(&rest.as_bytes()[..close]) {
                    return Err(RequestError::InvalidHost("invalid IP literal"));
                }
                let after = &rest[close + 1..];
                let port = match after.strip_prefix(':') {
                    Some(port) => Some(port),
                    None if after.is_empty() => None,
                    None => return Err(RequestError::InvalidHost("junk after IP literal")),
                };
                (&authority[..close + 2], port)
            }
            None => {
                let (host, port) = match authority.split_once(':') {
                    Some((host, port)) => (host, Some(port)),
                    None => (authority, None),
                };
                let b = host.as_bytes();
                let mut i = 0;
                while i < b.len() {
                    if b[i] == b'%' {
                        if !(b.len() > i + 2
                            && b[i + 1].is_ascii_hexdigit()
                            && b[i + 2].is_ascii_hexdigit())
                        {
                            return Err(RequestError::InvalidHost("character not allowed in host"));
                        }
                        i += 3;
                    } else if reference_unreserved_or_sub_delim(b[i]) {
                        i += 1;
                    } else {
                        return Err(RequestError::InvalidHost("character not allowed in host"));
                    }
                }
                (host, port)
            }
        };
        if port.is_some_and(|p| !p.bytes().all(|b| b.is_ascii_digit())) {
            return Err(RequestError::InvalidHost("port is not digits"));
        }
        Ok(host)
    }

    #[test]
    fn the_byte_table_is_the_rfc_list() {
        for b in 0..=255u8 {
            assert_eq!(
                is_unreserved_or_sub_delim(b),
                reference_unreserved_or_sub_delim(b),
                "{b:#04x}"
            );
        }
    }

    #[test]
    fn one_pass_host_check_equals_the_reference() {
        let mut checked = 0;
        let mut same = |a: &str| {
            assert_eq!(
                validate_host(a.as_bytes()),
                reference_validate_host(a).map(str::as_bytes),
                "{a:?}"
            );
            checked += 1;
        };
        // Every byte value (as a char) alone, in the host, in the port, after an IP literal.
        for c in (0..=255u8).map(char::from) {
            for a in [
                format!("{c}"),
                format!("a{c}b"),
                format!("a{c}:80"),
                format!("a:8{c}"),
                format!("a%{c}0"),
                format!("a%0{c}"),
                format!("[::1]{c}"),
                format!("[::1]:{c}"),
            ] {
                same(&a);
            }
        }
        // Generated authorities over an alphabet biased towards the bytes that matter.
        let alphabet: &[&str] = &[
            "a", "Z", "0", "9", ".", "-", "~", "!", "=", ":", ":", "%", "%4", "%4f", "%g1", "[",
            "]", "::1", "v1.x", "@", "/", " ", "\u{e9}", "\t", "80",
        ];
        let mut next = crate::test_rng::xorshift(0x2545_F491_4F6C_DD1D);
        let (mut ok, mut bad) = (0, 0);
        for _ in 0..50_000 {
            let mut a = String::new();
            for _ in 0..(next() % 7) {
                a.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            match reference_validate_host(&a) {
                Ok(_) => ok += 1,
                Err(_) => bad += 1,
            }
            same(&a);
        }
        // Both answers were generated often, so the comparison covers both.
        assert!(ok > 5_000 && bad > 5_000, "{ok} {bad}");
        assert!(checked > 50_000);
    }

    /// `validate_host_field` checks the bytes of a `Host` value; before, the value was first
    /// converted to `&str` (refused as "not ASCII" when not UTF-8) and then checked. Over every
    /// byte value in every position of short values, and over generated values with bytes above
    /// 0x7F (valid UTF-8 or not), both give the same answer.
    #[test]
    fn host_field_check_equals_utf8_then_reference() {
        fn old(v: &[u8]) -> Result<&[u8], RequestError> {
            std::str::from_utf8(v)
                .map_err(|_| RequestError::InvalidHost("not ASCII"))
                .and_then(reference_validate_host)
                .map(|_| v)
        }
        let mut values: Vec<Vec<u8>> = Vec::new();
        for c in 0..=255u8 {
            for template in [
                &b"#"[..],
                b"a#b",
                b"a#:80",
                b"a:8#",
                b"%#0",
                b"%0#",
                b"[::1]#",
                b"[::#]",
                b"[v1.#]",
            ] {
                values.push(
                    template
                        .iter()
                        .map(|&b| if b == b'#' { c } else { b })
                        .collect(),
                );
            }
        }
        let alphabet: &[&[u8]] = &[
            b"a",
            b"0",
            b".",
            b":",
            b"%",
            b"%4",
            b"%4f",
            b"[",
            b"]",
            b"::1",
            b"v1.x",
            b"80",
            b"\xc3\xa9",
            b"\xc3",
            b"\xa9",
            b"\xff",
            b"\xe2\x82\xac",
            b" ",
        ];
        let mut next = crate::test_rng::xorshift(0x5DEE_CE66_D1CE_4E5B);
        for _ in 0..30_000 {
            let mut v = Vec::new();
            for _ in 0..(next() % 6) {
                v.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            values.push(v);
        }
        let mut seen = [0u32; 3];
        for v in &values {
            let new = validate_host_field(v);
            assert_eq!(new, old(v), "{:?}", String::from_utf8_lossy(v));
            let not_utf8 = new == Err(RequestError::InvalidHost("not ASCII"));
            seen[if new.is_ok() {
                0
            } else if not_utf8 {
                1
            } else {
                2
            }] += 1;
        }
        // Accepted, refused as not UTF-8, and refused otherwise: each occurs often.
        assert!(seen.iter().all(|&n| n > 1_000), "{seen:?}");
    }

    /// `classify_target` answers ASCII origin-form targets itself and leaves the rest to
    /// `other_forms`, the whole function as it was: over every byte value in several places of
    /// several targets, with each method form, both give the same answer.
    #[test]
    fn origin_form_shortcut_equals_the_full_classification() {
        let mut seen = [0u32; 2];
        for method in [
            "GET", "HEAD", "CONNECT", "OPTIONS", "POST", "get", "CONNECTX",
        ] {
            for c in (0..=255u8).map(char::from) {
                for t in [
                    format!("{c}"),
                    format!("/{c}"),
                    format!("/a{c}b?q"),
                    format!("{c}/a"),
                    format!("*{c}"),
                    format!("h{c}:443"),
                    format!("http://h{c}/p"),
                    format!("/caf\u{e9}{c}"),
                ] {
                    let new = classify_target(method, &t);
                    assert_eq!(new, other_forms(method, &t), "{method} {t:?}");
                    seen[usize::from(new.is_ok())] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 1_000), "{seen:?}");
    }
}
