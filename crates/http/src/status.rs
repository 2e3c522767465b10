//! Response status codes: the handful servelab sends, their reason phrases, and the small HTML
//! page that goes with each error.
//!
//! `Status` is a plain `u16` newtype rather than an enum so that the access log and the load
//! generator can carry any code they see; the constants cover what this server emits. The error
//! pages are `const` strings built by a macro, so answering an error never formats or allocates.

/// An HTTP status code (RFC 9110 section 15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Status(u16);

/// Builds a complete, tiny HTML page for an error status at compile time.
macro_rules! error_page {
    ($code:literal, $reason:literal, $text:literal) => {
        concat!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>",
            $code,
            " ",
            $reason,
            "</title></head>\n<body><h1>",
            $code,
            " ",
            $reason,
            "</h1><p>",
            $text,
            "</p><hr><p>servelab</p></body></html>\n"
        )
    };
}

impl Status {
    /// 200 OK.
    pub const OK: Status = Status(200);
    /// 206 Partial Content: a `Range` request served.
    pub const PARTIAL_CONTENT: Status = Status(206);
    /// 301 Moved Permanently: a directory requested without its trailing slash.
    pub const MOVED_PERMANENTLY: Status = Status(301);
    /// 304 Not Modified: a conditional GET whose validator matched.
    pub const NOT_MODIFIED: Status = Status(304);
    /// 400 Bad Request.
    pub const BAD_REQUEST: Status = Status(400);
    /// 401 Unauthorized: `--auth` is on and the request has no valid credentials.
    pub const UNAUTHORIZED: Status = Status(401);
    /// 403 Forbidden: the file exists but cannot be read.
    pub const FORBIDDEN: Status = Status(403);
    /// 404 Not Found.
    pub const NOT_FOUND: Status = Status(404);
    /// 405 Method Not Allowed: a registered method other than GET and HEAD.
    pub const METHOD_NOT_ALLOWED: Status = Status(405);
    /// 406 Not Acceptable: `Accept-Encoding` refuses identity and no
    /// precompressed file it accepts exists.
    pub const NOT_ACCEPTABLE: Status = Status(406);
    /// 408 Request Timeout: the head did not arrive within the read timeout.
    pub const REQUEST_TIMEOUT: Status = Status(408);
    /// 412 Precondition Failed: `If-Match` or `If-Unmodified-Since` failed.
    pub const PRECONDITION_FAILED: Status = Status(412);
    /// 413 Content Too Large (RFC 9110's new name for Payload Too Large).
    pub const PAYLOAD_TOO_LARGE: Status = Status(413);
    /// 414 URI Too Long: the request line exceeds the limit.
    pub const URI_TOO_LONG: Status = Status(414);
    /// 416 Range Not Satisfiable.
    pub const RANGE_NOT_SATISFIABLE: Status = Status(416);
    /// 431 Request Header Fields Too Large (RFC 6585).
    pub const REQUEST_HEADER_FIELDS_TOO_LARGE: Status = Status(431);
    /// 500 Internal Server Error.
    pub const INTERNAL_SERVER_ERROR: Status = Status(500);
    /// 501 Not Implemented: an unknown method or transfer coding.
    pub const NOT_IMPLEMENTED: Status = Status(501);
    /// 503 Service Unavailable: the accept queue is full.
    pub const SERVICE_UNAVAILABLE: Status = Status(503);
    /// 505 HTTP Version Not Supported.
    pub const HTTP_VERSION_NOT_SUPPORTED: Status = Status(505);

    /// A status from its numeric code, `None` outside 100..=999 (RFC 9110 15: three digits).
    pub const fn new(code: u16) -> Option<Status> {
        if code >= 100 && code <= 999 {
            Some(Status(code))
        } else {
            None
        }
    }

    /// The numeric code, e.g. 404.
    pub const fn code(self) -> u16 {
        self.0
    }

    /// The class digit: 2 for 2xx, 4 for 4xx, ...
    pub const fn class(self) -> u8 {
        (self.0 / 100) as u8
    }

    /// The reason phrase from RFC 9110 (clients must ignore it; humans read it in logs).
    pub const fn reason(self) -> &'static str {
        match self.0 {
            100 => "Continue",
            200 => "OK",
            204 => "No Content",
            206 => "Partial Content",
            301 => "Moved Permanently",
            302 => "Found",
            304 => "Not Modified",
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            406 => "Not Acceptable",
            408 => "Request Timeout",
            411 => "Length Required",
            412 => "Precondition Failed",
            413 => "Content Too Large",
            414 => "URI Too Long",
            416 => "Range Not Satisfiable",
            431 => "Request Header Fields Too Large",
            500 => "Internal Server Error",
            501 => "Not Implemented",
            503 => "Service Unavailable",
            505 => "HTTP Version Not Supported",
            _ => match self.class() {
                1 => "Informational",
                2 => "Success",
                3 => "Redirection",
                4 => "Client Error",
                _ => "Server Error",
            },
        }
    }

    /// A small complete HTML page for a 4xx/5xx answer (served as `text/html; charset=utf-8`).
    /// For other statuses it returns an empty string: they carry no generated body.
    pub const fn error_body(self) -> &'static str {
        match self.0 {
            400 => error_page!(
                "400",
                "Bad Request",
                "The server could not understand this request."
            ),
            401 => error_page!(
                "401",
                "Unauthorized",
                "This server asks for a user name and password."
            ),
            403 => error_page!(
                "403",
                "Forbidden",
                "You do not have permission to read this resource."
            ),
            404 => error_page!(
                "404",
                "Not Found",
                "The requested resource was not found on this server."
            ),
            405 => error_page!(
                "405",
                "Method Not Allowed",
                "This server only answers GET and HEAD."
            ),
            406 => error_page!(
                "406",
                "Not Acceptable",
                "No representation of this resource matches the request's Accept-Encoding."
            ),
            408 => error_page!(
                "408",
                "Request Timeout",
                "The request did not arrive in time."
            ),
            412 => error_page!(
                "412",
                "Precondition Failed",
                "The resource does not match the request's If-Match or If-Unmodified-Since."
            ),
            413 => error_page!(
                "413",
                "Content Too Large",
                "The request body is larger than this server accepts."
            ),
            414 => error_page!(
                "414",
                "URI Too Long",
                "The request line is longer than this server accepts."
            ),
            416 => error_page!(
                "416",
                "Range Not Satisfiable",
                "None of the requested ranges overlap the resource."
            ),
            431 => error_page!(
                "431",
                "Request Header Fields Too Large",
                "The request header block is larger than this server accepts."
            ),
            500 => error_page!(
                "500",
                "Internal Server Error",
                "The server failed while answering this request."
            ),
            501 => error_page!(
                "501",
                "Not Implemented",
                "The server does not implement what this request needs."
            ),
            503 => error_page!(
                "503",
                "Service Unavailable",
                "The server is too busy right now; please retry shortly."
            ),
            505 => error_page!(
                "505",
                "HTTP Version Not Supported",
                "This server speaks HTTP/1.0 and HTTP/1.1."
            ),
            _ => match self.class() {
                4 => error_page!("4xx", "Client Error", "The request was refused."),
                5 => error_page!("5xx", "Server Error", "The server could not answer."),
                _ => "",
            },
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.0, self.reason())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Status; 19] = [
        Status::OK,
        Status::PARTIAL_CONTENT,
        Status::MOVED_PERMANENTLY,
        Status::NOT_MODIFIED,
        Status::BAD_REQUEST,
        Status::FORBIDDEN,
        Status::NOT_FOUND,
        Status::METHOD_NOT_ALLOWED,
        Status::NOT_ACCEPTABLE,
        Status::REQUEST_TIMEOUT,
        Status::PRECONDITION_FAILED,
        Status::PAYLOAD_TOO_LARGE,
        Status::URI_TOO_LONG,
        Status::RANGE_NOT_SATISFIABLE,
        Status::REQUEST_HEADER_FIELDS_TOO_LARGE,
        Status::INTERNAL_SERVER_ERROR,
        Status::NOT_IMPLEMENTED,
        Status::SERVICE_UNAVAILABLE,
        Status::HTTP_VERSION_NOT_SUPPORTED,
    ];

    #[test]
    fn codes_classes_and_reasons() {
        assert_eq!(Status::OK.code(), 200);
        assert_eq!(Status::OK.class(), 2);
        assert_eq!(Status::NOT_FOUND.reason(), "Not Found");
        assert_eq!(Status::HTTP_VERSION_NOT_SUPPORTED.class(), 5);
        assert_eq!(Status::new(99), None);
        assert_eq!(Status::new(1000), None);
        assert_eq!(Status::new(418).unwrap().reason(), "Client Error");
        assert_eq!(
            Status::RANGE_NOT_SATISFIABLE.to_string(),
            "416 Range Not Satisfiable"
        );
        for s in ALL {
            assert!(!s.reason().is_empty());
            // Reason phrases must be safe to put on the status line.
            assert!(
                s.reason()
                    .bytes()
                    .all(|b| b == b' ' || b.is_ascii_graphic())
            );
        }
    }

    #[test]
    fn every_error_status_has_a_complete_page_naming_it() {
        for s in ALL {
            let body = s.error_body();
            if s.class() >= 4 {
                assert!(body.starts_with("<!DOCTYPE html>"), "{s}");
                assert!(
                    body.contains(&format!("{} {}", s.code(), s.reason())),
                    "{s}"
                );
                assert!(body.trim_end().ends_with("</html>"));
            } else {
                assert_eq!(body, "");
            }
        }
        assert!(Status::new(499).unwrap().error_body().contains("<html"));
    }
}
