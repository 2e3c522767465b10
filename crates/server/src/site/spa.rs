//! `--spa`: a single-page application's routes all get `/index.html`.
//!
//! A client-side router (React Router, Vue Router, ...) puts routes such as
//! `/users/42` in the address bar; a reload or a shared link then asks the
//! server for a file that does not exist. With `--spa` a GET or HEAD of such a
//! route is answered with the root's `index.html` (200, its own ETag and
//! ranges), and the application's router takes it from there.
//!
//! But a missing asset must stay a 404: `/app.3f2a.js` answered with HTML makes
//! the browser report a syntax error in a script instead of a missing file, and
//! hides a broken deploy. The rule, as static-web-server and miniserve use it:
//! a path whose last segment has an extension (`name.ext`, the dot after its
//! first character) is an asset; anything else is a route. A route with a dot
//! in its last segment (`/v1.2`) therefore gets 404; that is the price of a
//! rule that needs no list of routes.
//!
//! Only what is missing falls back: an existing file, a directory's own
//! `index.html`, a listing (`--autoindex`) and the 301 for a directory named
//! without its slash come first. Dotfiles stay 404 (their rule comes before any
//! lookup), and so do other methods (405/501).

/// Whether a missing `path` (decoded, relative to the root, no leading slash)
/// is a route of the application rather than a missing asset.
pub(crate) fn is_route(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or("");
    // `.hidden` has no extension: its only dot is its first character.
    !last.char_indices().any(|(i, c)| c == '.' && i > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_have_no_extension_in_their_last_segment() {
        for route in [
            "",
            "users",
            "users/42",
            "a.b/c",
            "users/42/",
            "docs/v1/intro",
        ] {
            assert!(is_route(route), "{route}");
        }
        for asset in [
            "app.js",
            "assets/app.3f2a.js",
            "favicon.ico",
            "a/b.c/d.e",
            "v1.2",
        ] {
            assert!(!is_route(asset), "{asset}");
        }
        assert!(is_route("x/.hidden"), "a leading dot is not an extension");
    }
}
