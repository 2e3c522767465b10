//! Dotfiles: which resolved paths are hidden unless the operator says `--dotfiles serve`.
//!
//! A name starting with `.` is, by Unix convention, not meant to be seen: `.git/`, `.env`,
//! `.htpasswd`, editor swap files. Serving a site from a working copy would publish them, and
//! `.git/` alone gives away the whole history. So any path with such a segment, at any depth,
//! is answered 404 as if it did not exist (403 would confirm that it does), and listings leave
//! these names out.
//!
//! The one exception is `/.well-known/` at the top of the site (RFC 8615), where ACME
//! challenges, `security.txt` and `openid-configuration` live. Only that first segment is
//! exempt: `/.well-known/.secret` and `/sub/.well-known/x` are still hidden.
//!
//! ```
//! use servelab_http::dotfile::is_hidden;
//! assert!(is_hidden(".git/config"));
//! assert!(is_hidden("docs/.env"));
//! assert!(!is_hidden(".well-known/security.txt"));
//! assert!(!is_hidden("docs/a.b/index.html"));
//! ```

/// The top-level directory RFC 8615 reserves for site-wide metadata.
pub const WELL_KNOWN: &str = ".well-known";

/// True when `path` (as [`crate::resolve_target`] gives it: relative, normalised, no `.` or
/// `..` segments) has a segment starting with `.`, other than a leading `.well-known`.
pub fn is_hidden(path: &str) -> bool {
    let rest = match path.strip_prefix(WELL_KNOWN) {
        Some("") => return false,
        Some(r) if r.starts_with('/') => &r[1..],
        _ => path,
    };
    // A segment starts with `.` when the path does, or a `.` follows a `/`: one pass over
    // the bytes, without splitting (this runs for every request).
    rest.starts_with('.') || rest.as_bytes().windows(2).any(|w| w == b"/.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::resolve_target;

    #[test]
    fn hidden_at_any_depth() {
        for p in [
            ".env",
            ".git",
            ".git/HEAD",
            "a/.htpasswd",
            "a/b/.c/d",
            ".well-knownx/a",
        ] {
            assert!(is_hidden(p), "{p}");
        }
        for p in ["", "a", "a.b", "a/b.c/d", "index.html", "x./y", "a/b..c"] {
            assert!(!is_hidden(p), "{p}");
        }
    }

    /// Regression guard for the one-pass check: it must agree with splitting into segments.
    #[test]
    fn one_pass_equals_splitting() {
        let reference = |path: &str| {
            let rest = match path.strip_prefix(WELL_KNOWN) {
                Some("") => return false,
                Some(r) if r.starts_with('/') => &r[1..],
                _ => path,
            };
            rest.split('/').any(|seg| seg.starts_with('.'))
        };
        let parts = ["", "a", ".", "/", ".well-known", "b.c", "..", "x"];
        let mut hidden = 0;
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in parts {
                        let path = format!("{a}{b}{c}{d}");
                        assert_eq!(is_hidden(&path), reference(&path), "{path:?}");
                        hidden += usize::from(reference(&path));
                    }
                }
            }
        }
        assert!(hidden > 100 && hidden < 4000, "{hidden}");
    }

    #[test]
    fn well_known_only_at_the_top_and_not_below() {
        assert!(!is_hidden(".well-known"));
        assert!(!is_hidden(".well-known/acme-challenge/token"));
        assert!(is_hidden(".well-known/.secret"));
        assert!(is_hidden("sub/.well-known/x"));
    }

    #[test]
    fn encoded_dots_are_caught_after_decoding() {
        let mut p = String::new();
        resolve_target("/%2egit/config", &mut p).unwrap();
        assert!(is_hidden(&p));
        resolve_target("/a/./%2Eenv", &mut p).unwrap();
        assert!(is_hidden(&p));
        resolve_target("/.well-known/../.git/", &mut p).unwrap();
        assert!(is_hidden(&p));
    }
}
