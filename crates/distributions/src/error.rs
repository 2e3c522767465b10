//! The error type of the DIST and duration parsers.
//!
//! Both variants carry the text as the user typed it, so that a command-line front
//! end can print one line (`bad distribution "exp:-2s": ...`) and exit, and a config
//! reader can point at the field. Nothing in this crate panics on bad input.

use thiserror::Error;

/// A DIST or duration string that does not parse. Nothing is sampled; the caller
/// reports the message and stops.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DistError {
    /// A duration (`40ms`, `1s`, `2.5`) did not parse: bad number, unknown unit,
    /// negative, not finite or absurdly large.
    #[error("bad duration `{input}`: {why}")]
    BadDuration {
        /// The text as given.
        input: String,
        /// What is wrong with it, and what is expected instead.
        why: String,
    },
    /// A distribution (`exp:6s`, `uniform:4s..10s`, `50s+exp:5s`) did not parse or
    /// has impossible parameters.
    #[error("bad distribution `{input}`: {why}")]
    BadDist {
        /// The text as given (the whole DIST, not the fragment that failed).
        input: String,
        /// What is wrong with it, and what is expected instead.
        why: String,
    },
}

impl DistError {
    /// The reason alone, without the input (used to re-attach a fragment's reason
    /// to the whole DIST it came from).
    pub fn why(&self) -> &str {
        match self {
            DistError::BadDuration { why, .. } | DistError::BadDist { why, .. } => why,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_quote_the_input_and_say_why() {
        let e = DistError::BadDist {
            input: "exp:-1s".into(),
            why: "must be positive".into(),
        };
        assert_eq!(
            e.to_string(),
            "bad distribution `exp:-1s`: must be positive"
        );
        assert_eq!(e.why(), "must be positive");
        let e = DistError::BadDuration {
            input: "5parsecs".into(),
            why: "unknown unit".into(),
        };
        assert_eq!(e.to_string(), "bad duration `5parsecs`: unknown unit");
    }
}
