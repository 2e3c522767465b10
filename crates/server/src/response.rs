//! What answering a request produces, apart from the bytes already in the
//! output buffer: the [`Response`] (its status and announced length, for the
//! log and the counters) and the [`Body`] still to send with `sendfile(2)`; and
//! [`Persist`], what a response head says about the connection.
//!
//! Both producers of responses, [`crate::handler`] (the files) and
//! [`crate::status`] (the counters endpoints), build these; [`crate::conn`]
//! consumes them.

use std::collections::VecDeque;
use std::fs::File;
use std::sync::Arc;

use servelab_http::{Part, ResponseHead, Status};

/// A body still to be sent after the output buffer.
#[derive(Debug, Default)]
pub(crate) enum Body {
    /// Nothing (or everything is already in the output buffer).
    #[default]
    Empty,
    /// A byte range of a file.
    File {
        file: Arc<File>,
        offset: u64,
        remaining: u64,
    },
    /// A multipart/byteranges body: literal parts and file ranges in order.
    Parts {
        file: Arc<File>,
        parts: VecDeque<Part>,
        /// The file range being sent now: (offset, remaining).
        current: Option<(u64, u64)>,
    },
}

/// What [`respond`] decided.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: Status,
    /// Body bytes the head announced (for the log); 0 for HEAD and bodiless statuses.
    pub(crate) body_len: u64,
    pub(crate) body: Body,
}

/// How the head should speak about the connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Persist {
    /// The connection stays open after this response.
    pub(crate) keep_alive: bool,
    /// The client speaks HTTP/1.0 (so keep-alive must be said explicitly).
    pub(crate) http10: bool,
}

impl Persist {
    /// Sets the persistence fields of a response head.
    pub(crate) fn apply(self, head: &mut ResponseHead<'_>) {
        head.connection = if self.keep_alive {
            servelab_http::Connection::Default
        } else {
            servelab_http::Connection::Close
        };
        head.http10 = self.http10;
    }
}
