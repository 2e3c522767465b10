//! From request target to a safe relative file path: the one place that decides what part of
//! the disk a URL may name.
//!
//! [`resolve_target`] drops the query and fragment, percent-decodes, and normalises `.`, `..`
//! and empty segments like RFC 3986's remove_dot_segments, but refuses instead of clamping when
//! a `..` would climb above the root: a request that tries to leave the root is an attack or a
//! bug, and answering 400 makes it visible in the log. Decoding happens per segment and before
//! normalisation, so `%2e%2e` is exactly `..`. Encoded separators (`%2f`, `%5c`) are refused
//! rather than decoded, because after decoding they would create segments the normaliser never
//! saw. The result never contains a `.` or `..` segment, a backslash, a NUL or other control
//! character, and never starts with `/`; joining it to the root cannot leave the root
//! lexically. (Symlinks are the server's business: it canonicalises and checks the prefix.)
//!
//! No allocation beyond the growth of the caller's `String`, which the server reuses. Most
//! targets (`/`, `/index.html`, `/a/b.css?v=2`) are already normalised and need no decoding:
//! one table-driven pass recognises them and copies the path once; everything else takes the
//! general, segment-by-segment way.
//!
//! ```
//! use servelab_http::{resolve_target, PathKind};
//! let mut out = String::new();
//! assert_eq!(resolve_target("/docs/./a%20b/../index.html?x=1", &mut out), Ok(PathKind::File));
//! assert_eq!(out, "docs/index.html");
//! assert!(resolve_target("/%2e%2e/etc/passwd", &mut out).is_err());
//! ```

use crate::status::Status;

/// What the target names, syntactically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathKind {
    /// The path did not end with a separator: a file, or a directory that needs a 301 to the
    /// slashed URL (see [`append_location`]).
    File,
    /// The path ended with `/` (or a dot segment, or was `/`): serve the directory's index.
    Dir,
}

/// Why a target cannot name a file under the root. The server answers 400 (see
/// [`PathError::status`]) and may keep the connection: the request itself was well framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The target does not start with `/` (e.g. `*`, or an authority).
    #[error("request target is not an absolute path")]
    NotAbsolute,
    /// A `%` not followed by two hex digits.
    #[error("bad percent-escape")]
    BadEscape,
    /// `%2f` or `%5c`: an encoded slash or backslash.
    #[error("encoded path separator")]
    EncodedSeparator,
    /// A raw backslash, which some systems and clients treat as a separator.
    #[error("backslash in path")]
    Backslash,
    /// A NUL or other control character, raw or decoded.
    #[error("control character in path")]
    ControlChar,
    /// The decoded bytes are not UTF-8 (including overlong forms such as `%c0%ae`).
    #[error("path is not valid UTF-8")]
    InvalidUtf8,
    /// A `..` segment would climb above the root.
    #[error("path climbs above the root")]
    AboveRoot,
}

impl PathError {
    /// The status to answer with: always 400.
    pub fn status(&self) -> Status {
        Status::BAD_REQUEST
    }
}

/// Resolves a request target (`/a/b?q`) into `out` as a normalised relative path (`a/b`).
/// `out` is cleared first; on error its content is unspecified.
pub fn resolve_target(target: &str, out: &mut String) -> Result<PathKind, PathError> {
    out.clear();
    if let Some((path, kind)) = already_plain(target) {
        out.push_str(path);
        return Ok(kind);
    }
    resolve_general(target, out)
}

/// The bytes that may appear in a path that is already normalised and needs no decoding:
/// printable ASCII but for `%` (an escape), the backslash (refused), `/` and `.` (which make segments,
/// checked by [`already_plain`]), `?` and `#` (which end the path).
static PLAIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0x21;
    while b < 0x7f {
        table[b] = !matches!(b as u8, b'%' | b'\\' | b'/' | b'.' | b'?' | b'#');
        b += 1;
    }
    table
};

/// The fast path, for what nearly every request sends (`/`, `/index.html`, `/docs/a.css?v=2`):
/// a path that decoding and normalising would leave as it is. One pass over the bytes, a table
/// lookup each, then one copy. It gives up (`None`) on anything [`resolve_general`] might
/// change or refuse: a `%`, a backslash, a control or non-ASCII byte, an empty segment (`//`)
/// but a final one, and a segment starting with `.` (which covers `.` and `..`; a dotfile,
/// rare, goes the general way too). Returns the path without its leading `/`, trailing `/`,
/// query and fragment.
fn already_plain(target: &str) -> Option<(&str, PathKind)> {
    let b = target.as_bytes();
    if b.first() != Some(&b'/') {
        return None;
    }
    let mut end = b.len();
    // At the start of a segment: just after a `/`.
    let mut fresh = true;
    for (i, &c) in b.iter().enumerate().skip(1) {
        if PLAIN[usize::from(c)] {
            fresh = false;
        } else if c == b'/' || c == b'.' {
            if fresh {
                return None;
            }
            fresh = c == b'/';
        } else if c == b'?' || c == b'#' {
            end = i;
            break;
        } else {
            return None;
        }
    }
    let path = &target[1..end];
    Some(match path.strip_suffix('/') {
        Some(dir) => (dir, PathKind::Dir),
        None if path.is_empty() => (path, PathKind::Dir),
        None => (path, PathKind::File),
    })
}

/// Every target: percent-decoding and dot-segment removal, segment by segment.
fn resolve_general(target: &str, out: &mut String) -> Result<PathKind, PathError> {
    let path = match target.find(['?', '#']) {
        Some(i) => &target[..i],
        None => target,
    };
    let Some(path) = path.strip_prefix('/') else {
        return Err(PathError::NotAbsolute);
    };
    let mut kind = PathKind::Dir;
    for raw in path.split('/') {
        let seg_start = out.len();
        if seg_start > 0 {
            out.push('/');
        }
        let content = out.len();
        decode_segment(raw, out)?;
        match &out[content..] {
            "" | "." => {
                out.truncate(seg_start);
                kind = PathKind::Dir;
            }
            ".." => {
                if seg_start == 0 {
                    return Err(PathError::AboveRoot);
                }
                let parent = out[..seg_start].rfind('/').unwrap_or(0);
                out.truncate(parent);
                kind = PathKind::Dir;
            }
            _ => kind = PathKind::File,
        }
    }
    Ok(kind)
}

/// Percent-decodes one segment onto `out`, refusing what `resolve_target` documents.
fn decode_segment(raw: &str, out: &mut String) -> Result<(), PathError> {
    let bytes = raw.as_bytes();
    // Bytes of a multi-byte UTF-8 character still being decoded from escapes.
    let mut pending = [0u8; 4];
    let mut npending = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) else {
                return Err(PathError::BadEscape);
            };
            let b = h << 4 | l;
            i += 3;
            match b {
                b'/' | b'\\' => return Err(PathError::EncodedSeparator),
                0..=0x1f | 0x7f => return Err(PathError::ControlChar),
                0x20..=0x7e => {
                    if npending > 0 {
                        return Err(PathError::InvalidUtf8);
                    }
                    out.push(char::from(b));
                }
                0x80..=0xff => {
                    pending[npending] = b;
                    npending += 1;
                    match std::str::from_utf8(&pending[..npending]) {
                        Ok(s) => {
                            if s.chars().any(char::is_control) {
                                return Err(PathError::ControlChar);
                            }
                            out.push_str(s);
                            npending = 0;
                        }
                        Err(e) if e.error_len().is_some() || npending == 4 => {
                            return Err(PathError::InvalidUtf8);
                        }
                        Err(_) => {}
                    }
                }
            }
        } else {
            if npending > 0 {
                return Err(PathError::InvalidUtf8);
            }
            let end = raw[i..].find('%').map_or(raw.len(), |j| i + j);
            let run = &raw[i..end];
            if run.contains('\\') {
                return Err(PathError::Backslash);
            }
            if run.chars().any(char::is_control) {
                return Err(PathError::ControlChar);
            }
            out.push_str(run);
            i = end;
        }
    }
    if npending > 0 {
        return Err(PathError::InvalidUtf8);
    }
    Ok(())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Appends to `out` the `Location` for the 301 that adds a directory's trailing slash: the path
/// exactly as the client sent it (escapes kept), then `/`, then the query if any. Leading
/// slashes are collapsed to one and a backslash is escaped, so `//evil.example` or
/// `/\evil.example` cannot become an off-site redirect; bytes not allowed in a URI are
/// percent-encoded.
pub fn append_location(target_path: &str, out: &mut String) {
    let (path, query) = match target_path.find('?') {
        Some(i) => target_path.split_at(i),
        None => (target_path, ""),
    };
    let path = path.split('#').next().unwrap_or("");
    let query = query.split('#').next().unwrap_or("");
    let path = path.trim_start_matches('/');
    out.push('/');
    encode_uri(path, out);
    if !path.is_empty() && !path.ends_with('/') {
        out.push('/');
    }
    encode_uri(query, out);
}

/// Percent-encodes what RFC 3986 does not allow raw in a path or query; `%` is kept because the
/// input is already an encoded target.
fn encode_uri(s: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in s.as_bytes() {
        let keep = crate::target::is_unreserved_or_sub_delim(b)
            || matches!(b, b':' | b'@' | b'/' | b'?' | b'%');
        if keep {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(t: &str) -> Result<(String, PathKind), PathError> {
        let mut out = String::from("garbage from last time");
        resolve_target(t, &mut out).map(|k| (out, k))
    }

    fn ok(t: &str, want: &str, kind: PathKind) {
        assert_eq!(resolve(t), Ok((want.to_string(), kind)), "{t}");
    }

    #[test]
    fn plain_paths() {
        ok("/", "", PathKind::Dir);
        ok("/index.html", "index.html", PathKind::File);
        ok("/docs/", "docs", PathKind::Dir);
        ok("/docs", "docs", PathKind::File);
        ok("/a/b/c.txt?x=1&y=/../..", "a/b/c.txt", PathKind::File);
        ok("/a/b#frag/../..", "a/b", PathKind::File);
        ok("/?q", "", PathKind::Dir);
        ok("/...", "...", PathKind::File);
        ok("/.hidden", ".hidden", PathKind::File);
        ok("/caf%C3%A9.txt", "café.txt", PathKind::File);
        ok("/café.txt", "café.txt", PathKind::File);
        ok("/a%20b", "a b", PathKind::File);
        ok("/%41%62c", "Abc", PathKind::File);
    }

    #[test]
    fn dot_segments_are_normalised() {
        ok("/a/./b", "a/b", PathKind::File);
        ok("/a/../b", "b", PathKind::File);
        ok("/a/b/..", "a", PathKind::Dir);
        ok("/a/.", "a", PathKind::Dir);
        ok("/a/%2e%2e/b", "b", PathKind::File);
        ok("/a/%2E%2e/", "", PathKind::Dir);
        ok("/a/b/../../c", "c", PathKind::File);
        ok("//etc//passwd", "etc/passwd", PathKind::File);
        ok("/a//b///", "a/b", PathKind::Dir);
    }

    #[test]
    fn traversal_forms_are_refused() {
        assert_eq!(resolve("/.."), Err(PathError::AboveRoot));
        assert_eq!(resolve("/../etc/passwd"), Err(PathError::AboveRoot));
        assert_eq!(resolve("/a/../../etc/passwd"), Err(PathError::AboveRoot));
        assert_eq!(resolve("/%2e%2e/etc/passwd"), Err(PathError::AboveRoot));
        assert_eq!(resolve("/%2E%2e/"), Err(PathError::AboveRoot));
        assert_eq!(resolve("/.%2e/x"), Err(PathError::AboveRoot));
        assert_eq!(resolve("/..%2fetc"), Err(PathError::EncodedSeparator));
        assert_eq!(resolve("/..%2Fetc"), Err(PathError::EncodedSeparator));
        assert_eq!(resolve("/a%2fb"), Err(PathError::EncodedSeparator));
        assert_eq!(resolve("/..%5cetc"), Err(PathError::EncodedSeparator));
        assert_eq!(resolve("/..\\etc"), Err(PathError::Backslash));
        assert_eq!(resolve("/a\\b"), Err(PathError::Backslash));
        assert_eq!(resolve("/a%00.html"), Err(PathError::ControlChar));
        assert_eq!(resolve("/a%0d%0aX"), Err(PathError::ControlChar));
        assert_eq!(resolve("/a%7f"), Err(PathError::ControlChar));
        assert_eq!(resolve("/a\0b"), Err(PathError::ControlChar));
        assert_eq!(resolve("/a%C2%85"), Err(PathError::ControlChar)); // U+0085 NEL
        // Overlong UTF-8 encodings of '.' and '/': the classic IIS traversal.
        assert_eq!(resolve("/%c0%ae%c0%ae/x"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%c0%af"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%e0%80%ae"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%ff"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%C3"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%C3x"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%C3%41"), Err(PathError::InvalidUtf8));
        assert_eq!(resolve("/%"), Err(PathError::BadEscape));
        assert_eq!(resolve("/%2"), Err(PathError::BadEscape));
        assert_eq!(resolve("/%g0"), Err(PathError::BadEscape));
        assert_eq!(resolve("/%%30"), Err(PathError::BadEscape));
        assert_eq!(resolve(""), Err(PathError::NotAbsolute));
        assert_eq!(resolve("*"), Err(PathError::NotAbsolute));
        assert_eq!(resolve("etc/passwd"), Err(PathError::NotAbsolute));
        assert_eq!(resolve("?/x"), Err(PathError::NotAbsolute));
        assert_eq!(PathError::AboveRoot.status(), Status::BAD_REQUEST);
    }

    /// The invariants every successful resolution must keep.
    fn check_invariants(target: &str, out: &str) {
        assert!(!out.starts_with('/'), "{target:?} -> {out:?}");
        assert!(!out.contains('\\'), "{target:?} -> {out:?}");
        assert!(!out.chars().any(char::is_control), "{target:?} -> {out:?}");
        for seg in out.split('/') {
            if out.is_empty() {
                break;
            }
            assert!(
                !seg.is_empty() && seg != "." && seg != "..",
                "{target:?} -> {out:?}"
            );
        }
    }

    #[test]
    fn property_generated_targets_never_escape() {
        // Deterministic xorshift so the test is repeatable; the alphabet is biased towards the
        // characters that matter for traversal.
        let alphabet: &[&str] = &[
            "/", "/", ".", ".", "..", "%2e", "%2E", "%2f", "%5c", "%5C", "\\", "%00", "%", "a",
            "b", "%c0", "%ae", "%C3%A9", "é", "?", "#", "%0", "%41", "..%2f", "//", "%20",
        ];
        let mut next = crate::test_rng::xorshift(0x9E37_79B9_7F4A_7C15);
        let mut out = String::new();
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut target = String::from("/");
            for _ in 0..(next() % 12) {
                target.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            match resolve_target(&target, &mut out) {
                Ok(_) => {
                    accepted += 1;
                    check_invariants(&target, &out);
                    // Resolution is idempotent: the output, as a path, resolves to itself.
                    let again = format!("/{out}");
                    if !out.contains('%') && !out.contains('?') && !out.contains('#') {
                        let mut out2 = String::new();
                        resolve_target(&again, &mut out2).unwrap();
                        assert_eq!(out2, out);
                    }
                }
                Err(_) => refused += 1,
            }
        }
        // Both branches were exercised, so the invariant checks ran on many inputs.
        assert!(accepted > 1000 && refused > 1000, "{accepted} {refused}");
    }

    /// The fast path must agree with the general one wherever it answers, and answer for the
    /// plain paths it exists for.
    fn same_as_general(target: &str) -> bool {
        let mut general = String::new();
        let want = resolve_general(target, &mut general);
        match already_plain(target) {
            Some((path, kind)) => {
                assert_eq!(
                    Ok((path, kind)),
                    want.map(|k| (general.as_str(), k)),
                    "{target:?}"
                );
                true
            }
            None => false,
        }
    }

    #[test]
    fn fast_path_equals_the_general_one_for_every_byte() {
        for c in (0..=0x7fu8)
            .map(char::from)
            .chain(['\u{85}', '\u{e9}', '\u{fffd}'])
        {
            for t in [
                format!("/{c}"),
                format!("/a{c}"),
                format!("/a{c}b"),
                format!("/{c}b/"),
                format!("/a/{c}{c}/b"),
                format!("/a{c}?q{c}"),
            ] {
                same_as_general(&t);
                let mut out = String::new();
                let mut general = String::new();
                assert_eq!(
                    resolve_target(&t, &mut out),
                    resolve_general(&t, &mut general),
                    "{t:?}"
                );
                assert_eq!(out, general, "{t:?}");
            }
        }
        for plain in [
            "/",
            "/index.html",
            "/a/b.c/d",
            "/docs/",
            "/a?x=/../..",
            "/a.b#x/./",
            "/?q",
        ] {
            assert!(same_as_general(plain), "{plain:?} took the general path");
        }
        for not in [
            "//a",
            "/a//b",
            "/./a",
            "/a/..",
            "/.git",
            "/a%20b",
            "/a\\b",
            "/caf\u{e9}",
            "",
        ] {
            assert!(!same_as_general(not), "{not:?} took the fast path");
        }
    }

    #[test]
    fn fast_path_equals_the_general_one_on_generated_targets() {
        let alphabet: &[&str] = &[
            "/", "/", "a", "b.c", ".", "..", "%2e", "%41", "?", "#", "\\", "-", "~", "é", " ",
        ];
        let mut next = crate::test_rng::xorshift(0xA076_1D64_78BD_642F);
        let mut fast = 0;
        for round in 0..20_000 {
            let mut target = String::from(if round % 8 == 0 { "" } else { "/" });
            for _ in 0..(next() % 8) {
                target.push_str(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            if same_as_general(&target) {
                fast += 1;
            }
        }
        assert!(fast > 2_000, "{fast}");
    }

    fn location(t: &str) -> String {
        let mut out = String::new();
        append_location(t, &mut out);
        out
    }

    #[test]
    fn location_adds_the_slash_before_the_query() {
        assert_eq!(location("/docs"), "/docs/");
        assert_eq!(location("/docs?x=1&y=2"), "/docs/?x=1&y=2");
        assert_eq!(location("/a%20b"), "/a%20b/");
        assert_eq!(location("/docs/"), "/docs/");
        assert_eq!(location(""), "/");
        assert_eq!(location("/caf\u{e9}"), "/caf%C3%A9/");
        assert_eq!(location("/a b\"<>"), "/a%20b%22%3C%3E/");
    }

    #[test]
    fn location_cannot_redirect_off_site() {
        // "//evil.example/" would be a protocol-relative URL to another host.
        assert_eq!(location("//evil.example"), "/evil.example/");
        assert_eq!(location("///evil.example"), "/evil.example/");
        assert_eq!(location("/\\evil.example"), "/%5Cevil.example/");
        assert_eq!(location("/a\r\nSet-Cookie: x"), "/a%0D%0ASet-Cookie:%20x/");
    }
}
