//! `--autoindex`: the response for a directory that has no `index.html`, and
//! without the flag, the 404 that says the flag would list it ([`not_listed`]).
//!
//! The directory is read through `Root::list` (beneath the root, like every file)
//! and rendered by `servelab_http::listing`. It is read afresh for every request:
//! listings are for people browsing, not for the hot path, and a cached listing
//! would be stale in exactly the moments people look. At most [`MAX_ENTRIES`]
//! entries are read, so a directory of a million files costs a bounded amount of
//! memory and time per request; the page says how many were left out.

use servelab_http::listing::Listing;
use servelab_http::{ResponseHead, Status};

use crate::config::Dotfiles;
use crate::runtime::shared::Shared;
use crate::site::response::{Body, Out, Persist, Response, small_ok};

/// Most entries one listing reads (about 1 MiB of HTML at most).
pub(crate) const MAX_ENTRIES: usize = 5000;

/// Lists `path` (a checked relative directory path, `""` for the root), or says
/// why not with the status to answer (404 for a directory that vanished, 403,
/// 500).
pub(crate) fn respond(
    path: &str,
    site: &Shared,
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Result<Response, crate::content::files::FileError> {
    let dotfiles = site.config.dotfiles == Dotfiles::Serve;
    let mut listed = site.root.list(path, MAX_ENTRIES, dotfiles)?;
    let mut html = Vec::with_capacity(512 + 128 * listed.entries.len());
    Listing {
        dir: path,
        dotfiles,
        omitted: listed.omitted,
    }
    .render(&mut listed.entries, &mut html);
    Ok(small_ok(
        "text/html; charset=utf-8",
        &html,
        date,
        persist,
        head_only,
        site,
        out,
    ))
}

/// The page of [`not_listed`]: the plain 404 page's words, then what would list
/// the directory. It names no path: the client knows what it asked for, and
/// the server's own directories are none of its business.
pub(crate) const NOT_LISTED_PAGE: &str = concat!(
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<title>404 Not Found</title></head>\n<body><h1>404 Not Found</h1>",
    "<p>This directory has no index.html, and directory listings are off.</p>",
    "<p>To list it, start the server with <code>--autoindex</code>, ",
    "for example <code>servelab serve --autoindex</code>.</p>",
    "<hr><p>servelab</p></body></html>\n"
);

/// The 404 for a directory that exists but has no `index.html` while
/// `--autoindex` is off: a newcomer who serves a folder of files (as with
/// `python -m http.server`) learns from the page how to see them. A path that
/// does not exist keeps the plain 404, so the page tells only what a listing
/// would show anyway: that the directory exists. Cold and out of line: it must
/// not grow the request path that inlines `handler::respond`.
#[cold]
#[inline(never)]
pub(crate) fn not_listed(
    date: &[u8; 29],
    persist: Persist,
    head_only: bool,
    out: &mut impl Out,
) -> Response {
    let body = NOT_LISTED_PAGE.as_bytes();
    let mut head = ResponseHead::new(Status::NOT_FOUND, date);
    head.content_type = Some("text/html; charset=utf-8");
    head.content_length = Some(body.len() as u64);
    persist.apply(&mut head);
    out.head(&head);
    if !head_only {
        out.body(body);
    }
    Response {
        status: Status::NOT_FOUND,
        body_len: if head_only { 0 } else { body.len() as u64 },
        body: Body::Empty,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_not_listed_page_names_the_flag_and_no_path() {
        let date = b"Sun, 06 Nov 1994 08:49:37 GMT";
        let persist = Persist {
            keep_alive: false,
            http10: false,
        };
        let mut out = Vec::new();
        let r = not_listed(date, persist, false, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 404 Not Found\r\n"), "{text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(
            head.ends_with(&format!("Content-Length: {}", body.len())),
            "{head}"
        );
        assert!(body.contains("--autoindex") && body.contains("no index.html"));
        assert_eq!(
            (r.status, r.body_len),
            (Status::NOT_FOUND, body.len() as u64)
        );
        let mut out = Vec::new();
        let r = not_listed(date, persist, true, &mut out);
        assert!(out.ends_with(b"\r\n\r\n") && r.body_len == 0);
    }
}
