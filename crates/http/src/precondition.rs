//! The order in which conditional request fields apply (RFC 9110 13.2.2), for a GET or HEAD of
//! a representation that exists. Each single check is in [`crate::conditional`]; this file
//! only says which one wins.
//!
//! 1. `If-Match` present: when false, 412 Precondition Failed.
//! 2. Else `If-Unmodified-Since` present (and a valid date): when false, 412.
//! 3. `If-None-Match` present: when true, 304 Not Modified for GET/HEAD (412 for other
//!    methods, which this server never evaluates but the rule is kept whole).
//! 4. Else `If-Modified-Since` present, GET or HEAD: when the file is not newer, 304. A date in
//!    the future is ignored ([`crate::conditional::not_modified_since_at`]).
//! 5. `If-Range` (GET with `Range` only): when false, the range is ignored and the whole
//!    representation is sent.
//!
//! The validators passed in must be those of the representation actually selected: with
//! precompressed files each encoding has its own ETag (and file time), so `If-None-Match` with
//! the gzip tag gives 304 only when the gzip file would be sent again.
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use servelab_http::conditional::ETag;
//! use servelab_http::precondition::{Outcome, Preconditions, evaluate};
//! let mtime = UNIX_EPOCH + Duration::from_secs(1_000_000_000);
//! let etag = ETag::new(5, mtime);
//! let p = Preconditions { if_match: Some("\"other\""), ..Preconditions::default() };
//! assert_eq!(evaluate(&p, true, &etag, mtime, mtime), Outcome::PreconditionFailed);
//! ```

use std::time::SystemTime;

use crate::conditional::{self, ETag};
use crate::status::Status;

/// 412 Precondition Failed (RFC 9110 15.5.13).
pub const PRECONDITION_FAILED: Status = Status::PRECONDITION_FAILED;

/// The conditional fields of one request, each its first field line (`None` when absent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preconditions<'a> {
    /// `If-Match`.
    pub if_match: Option<&'a str>,
    /// `If-Unmodified-Since`.
    pub if_unmodified_since: Option<&'a str>,
    /// `If-None-Match`.
    pub if_none_match: Option<&'a str>,
    /// `If-Modified-Since`.
    pub if_modified_since: Option<&'a str>,
    /// `If-Range`.
    pub if_range: Option<&'a str>,
}

impl Preconditions<'_> {
    /// True when the request has no conditional field: the server can skip [`evaluate`].
    /// Inlined, so that a caller that builds the value only to ask this pays five
    /// comparisons, not a struct on the stack and a call.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.if_match.is_none()
            && self.if_unmodified_since.is_none()
            && self.if_none_match.is_none()
            && self.if_modified_since.is_none()
            && self.if_range.is_none()
    }
}

/// What the preconditions decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Serve the representation; `ranges` false means a `Range` field must be ignored
    /// (`If-Range` did not match).
    Serve {
        /// Whether a `Range` field may be honoured.
        ranges: bool,
    },
    /// 304 Not Modified, with the validators and no body.
    NotModified,
    /// 412 Precondition Failed.
    PreconditionFailed,
}

impl Outcome {
    /// The status this outcome answers with; `None` for [`Outcome::Serve`].
    pub fn status(self) -> Option<Status> {
        match self {
            Outcome::Serve { .. } => None,
            Outcome::NotModified => Some(Status::NOT_MODIFIED),
            Outcome::PreconditionFailed => Some(PRECONDITION_FAILED),
        }
    }
}

/// Evaluates `p` in RFC 9110 13.2.2 order against the selected representation's `etag` and
/// `mtime`. `get_or_head` is true for GET and HEAD; `now` is the server's clock, used to
/// ignore an `If-Modified-Since` in the future.
pub fn evaluate(
    p: &Preconditions<'_>,
    get_or_head: bool,
    etag: &ETag,
    mtime: SystemTime,
    now: SystemTime,
) -> Outcome {
    match (p.if_match, p.if_unmodified_since) {
        (Some(im), _) if !conditional::if_match(im, etag) => return Outcome::PreconditionFailed,
        (None, Some(ius)) if conditional::unmodified_since(ius, mtime) == Some(false) => {
            return Outcome::PreconditionFailed;
        }
        _ => {}
    }
    match (p.if_none_match, p.if_modified_since) {
        (Some(inm), _) if conditional::if_none_match(inm, etag) => {
            return if get_or_head {
                Outcome::NotModified
            } else {
                Outcome::PreconditionFailed
            };
        }
        (None, Some(ims)) if get_or_head && conditional::not_modified_since_at(ims, mtime, now) => {
            return Outcome::NotModified;
        }
        _ => {}
    }
    let ranges = p
        .if_range
        .is_none_or(|ir| conditional::if_range_matches(ir, etag, mtime));
    Outcome::Serve { ranges }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    const OLDER: &str = "Sun, 06 Nov 1994 08:49:36 GMT";
    const SAME: &str = "Sun, 06 Nov 1994 08:49:37 GMT";
    const NEWER: &str = "Sun, 06 Nov 1994 08:49:38 GMT";

    fn mtime() -> SystemTime {
        UNIX_EPOCH + Duration::new(784_111_777, 5)
    }

    fn eval(p: Preconditions<'_>, tag: &ETag) -> Outcome {
        let now = mtime() + Duration::from_secs(3600);
        evaluate(&p, true, tag, mtime(), now)
    }

    const SERVE: Outcome = Outcome::Serve { ranges: true };

    #[test]
    fn no_fields_serves() {
        let t = ETag::new(5, mtime());
        assert!(Preconditions::default().is_empty());
        assert_eq!(eval(Preconditions::default(), &t), SERVE);
    }

    #[test]
    fn if_match_first_and_it_hides_if_unmodified_since() {
        let t = ETag::new(5, mtime());
        let p = |im, ius| Preconditions {
            if_match: im,
            if_unmodified_since: ius,
            ..Preconditions::default()
        };
        assert_eq!(
            eval(p(Some("\"nope\""), None), &t),
            Outcome::PreconditionFailed
        );
        assert_eq!(eval(p(Some(t.as_str()), None), &t), SERVE);
        assert_eq!(eval(p(Some("*"), None), &t), SERVE);
        // RFC 9110 13.1.4: If-Unmodified-Since is ignored when If-Match is present.
        assert_eq!(eval(p(Some(t.as_str()), Some(OLDER)), &t), SERVE);
        assert_eq!(eval(p(None, Some(OLDER)), &t), Outcome::PreconditionFailed);
        assert_eq!(eval(p(None, Some(SAME)), &t), SERVE);
        assert_eq!(eval(p(None, Some(NEWER)), &t), SERVE);
        assert_eq!(eval(p(None, Some("not a date")), &t), SERVE);
    }

    #[test]
    fn a_failed_precondition_beats_not_modified() {
        let t = ETag::new(5, mtime());
        let p = Preconditions {
            if_match: Some("\"other\""),
            if_none_match: Some(t.as_str()),
            ..Preconditions::default()
        };
        assert_eq!(eval(p, &t), Outcome::PreconditionFailed);
        let p = Preconditions {
            if_unmodified_since: Some(OLDER),
            if_modified_since: Some(NEWER),
            ..Preconditions::default()
        };
        assert_eq!(eval(p, &t), Outcome::PreconditionFailed);
        // Passing preconditions then let the cache validators decide.
        let p = Preconditions {
            if_match: Some(t.as_str()),
            if_none_match: Some(t.as_str()),
            ..Preconditions::default()
        };
        assert_eq!(eval(p, &t), Outcome::NotModified);
    }

    #[test]
    fn if_none_match_hides_if_modified_since() {
        let t = ETag::new(5, mtime());
        let p = |inm, ims| Preconditions {
            if_none_match: inm,
            if_modified_since: ims,
            ..Preconditions::default()
        };
        assert_eq!(eval(p(Some(t.as_str()), None), &t), Outcome::NotModified);
        assert_eq!(eval(p(None, Some(SAME)), &t), Outcome::NotModified);
        assert_eq!(eval(p(None, Some(OLDER)), &t), SERVE);
        // A non-matching If-None-Match wins over a matching If-Modified-Since.
        assert_eq!(eval(p(Some("\"x\""), Some(NEWER)), &t), SERVE);
        // For other methods a matching If-None-Match is 412 and If-Modified-Since is not used.
        let now = mtime();
        assert_eq!(
            evaluate(&p(Some("*"), None), false, &t, mtime(), now),
            Outcome::PreconditionFailed
        );
        assert_eq!(
            evaluate(&p(None, Some(SAME)), false, &t, mtime(), now),
            SERVE
        );
    }

    #[test]
    fn if_modified_since_in_the_future_is_ignored() {
        let t = ETag::new(5, mtime());
        let p = Preconditions {
            if_modified_since: Some(NEWER),
            ..Preconditions::default()
        };
        // The server's clock says the date has not come yet.
        assert_eq!(evaluate(&p, true, &t, mtime(), mtime()), SERVE);
    }

    #[test]
    fn if_range_last() {
        let t = ETag::new(5, mtime());
        let p = |ir| Preconditions {
            if_range: Some(ir),
            ..Preconditions::default()
        };
        assert_eq!(eval(p(t.as_str()), &t), SERVE);
        assert_eq!(eval(p("\"x\""), &t), Outcome::Serve { ranges: false });
        assert_eq!(eval(p(SAME), &t), SERVE);
        assert_eq!(eval(p(NEWER), &t), Outcome::Serve { ranges: false });
        assert_eq!(
            Outcome::PreconditionFailed.status().map(Status::code),
            Some(412)
        );
        assert_eq!(Outcome::NotModified.status(), Some(Status::NOT_MODIFIED));
        assert_eq!(SERVE.status(), None);
    }
}
