//! The errors of the load generator.
//!
//! Only mistakes that stop a run before or after it are errors here: a bad flag,
//! an unreadable URL file, an unresolvable host, a JSON file that is not a report.
//! What goes wrong with single requests during a run (refused connections, resets,
//! timeouts, garbled responses) is not an error of the run: it is counted by class
//! in the [`Report`](crate::Report).

use std::path::PathBuf;

/// Why a run could not start, or a report could not be read, written or merged.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A DIST or duration did not parse; the run does not start.
    #[error("bad duration or distribution `{input}`: {why}")]
    Dist {
        /// What the user wrote.
        input: String,
        /// What is wrong with it.
        why: String,
    },
    /// A URL is not an `http://host[:port]/path` URL; the run does not start.
    #[error("bad URL `{url}`: {why}")]
    Url {
        /// The URL as written.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// A line of a `--urls` file is malformed; the run does not start.
    #[error("{path}:{line}: {why}")]
    UrlFile {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with the line.
        why: String,
    },
    /// The host of a URL did not resolve to an IPv4 or IPv6 address.
    #[error("cannot resolve `{host}`: {why}")]
    Resolve {
        /// The host as written.
        host: String,
        /// The resolver's answer.
        why: String,
    },
    /// A threshold (`--fail-if`) or share (`--max-error-rate`) does not parse,
    /// or could never decide anything; the run does not start.
    #[error("bad threshold `{input}`: {why}")]
    Threshold {
        /// What the user wrote.
        input: String,
        /// What is wrong with it.
        why: String,
    },
    /// A header given with `--header` is not `Name: value`.
    #[error("bad header `{0}`: expected `Name: value`")]
    Header(String),
    /// A header given with `--header` frames the request (`Content-Length`,
    /// `Transfer-Encoding`), which servelab does itself; the run does not start.
    #[error(
        "header `{0}`: servelab frames each request itself (Content-Length from --body); drop it"
    )]
    FramingHeader(String),
    /// A request body is too large (or the bodies together are); the run does
    /// not start.
    #[error("request body {0}")]
    Body(String),
    /// The combination of settings makes no sense (zero users, no targets...).
    #[error("invalid load specification: {0}")]
    Spec(String),
    /// A file could not be read or written (the OS error is the source, which
    /// `{:#}` prints after the path).
    #[error("{path}")]
    File {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A JSON report did not parse, or has another schema version.
    #[error("{path}: not a servelab load report: {why}")]
    Report {
        /// The file (or `-` for an in-memory report).
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A TLS setting is unusable (`--cacert` not a certificate, `--cert`
    /// without `--key`, a key that does not match); the run does not start.
    #[error("{0}")]
    Tls(String),
    /// Reports given to `merge` cannot be merged (different histogram settings).
    #[error("cannot merge reports: {0}")]
    Merge(String),
    /// The event loop could not start or failed (epoll, thread spawn); the run
    /// stops. The OS error is the source.
    #[error("event loop")]
    Io(#[from] std::io::Error),
}

/// A DIST or duration that does not parse is [`LoadError::Dist`]: the run does not
/// start.
impl From<servelab_dist::DistError> for LoadError {
    fn from(e: servelab_dist::DistError) -> LoadError {
        use servelab_dist::DistError;
        let (DistError::BadDist { input, why } | DistError::BadDuration { input, why }) = e;
        LoadError::Dist { input, why }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use servelab_dist::Dist;

    #[test]
    fn a_bad_dist_is_a_load_error_naming_the_input() {
        let err: LoadError = "uniform:9s..1s".parse::<Dist>().unwrap_err().into();
        assert!(err.to_string().contains("`uniform:9s..1s`"), "{err}");
        assert!(matches!(err, LoadError::Dist { .. }));
    }
}
