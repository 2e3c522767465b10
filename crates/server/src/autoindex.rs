//! `--autoindex`: the response for a directory that has no `index.html`.
//!
//! The directory is read through `Root::list` (beneath the root, like every file)
//! and rendered by `servelab_http::listing`. It is read afresh for every request:
//! listings are for people browsing, not for the hot path, and a cached listing
//! would be stale in exactly the moments people look. At most [`MAX_ENTRIES`]
//! entries are read, so a directory of a million files costs a bounded amount of
//! memory and time per request; the page says how many were left out.

use servelab_http::listing::Listing;

use crate::config::Dotfiles;
use crate::response::{Persist, Response, small_ok};
use crate::shared::Shared;

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
    out: &mut Vec<u8>,
) -> Result<Response, crate::files::FileError> {
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
        &site.extra_headers,
        out,
    ))
}
