//! `--autoindex`: the response for a directory that has no `index.html`.
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
use crate::response::{Body, Persist, Response};
use crate::shared::{Local, Shared};

/// Most entries one listing reads (about 1 MiB of HTML at most).
pub(crate) const MAX_ENTRIES: usize = 5000;

/// Lists `path` (a checked relative directory path, `""` for the root), or says
/// why not with the status to answer (404 for a directory that vanished, 403,
/// 500).
pub(crate) fn respond(
    path: &str,
    site: &Shared,
    w: &mut Local,
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
    let mut head = ResponseHead::new(Status::OK, w.clock.http());
    head.content_type = Some("text/html; charset=utf-8");
    head.content_length = Some(html.len() as u64);
    persist.apply(&mut head);
    head.encode(out);
    crate::handler::add_fields(out, site, None, false);
    if !head_only {
        out.extend_from_slice(&html);
    }
    Ok(Response {
        status: Status::OK,
        body_len: if head_only { 0 } else { html.len() as u64 },
        body: Body::Empty,
    })
}
