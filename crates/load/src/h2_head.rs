//! A target's HTTP/2 request, prebuilt: the pseudo-fields and the regular
//! fields that `servelab_h2::ClientConn::send_request` encodes.
//!
//! The same inputs as the HTTP/1.1 head of [`crate::target`] (method, URL,
//! `-H` headers, a login, the body's length), in HTTP/2's form: `Host` becomes
//! `:authority`, names are lowercase, and a login is an `authorization`
//! field. The fields are borrowed into an array on the stack for each
//! request ([`H2Head::with_head`]), so sending allocates nothing.

use servelab_h2::RequestHead;

use crate::error::LoadError;

/// The most regular fields an HTTP/2 request carries (the `-H` headers, a
/// login, `content-length`): the stack array of [`H2Head::with_head`].
pub(crate) const MAX_FIELDS: usize = 32;

/// One target's HTTP/2 request.
#[derive(Debug, Clone)]
pub(crate) struct H2Head {
    pub method: &'static str,
    pub scheme: &'static str,
    pub authority: String,
    pub path: String,
    /// Regular fields, names lowercase, in order.
    pub fields: Vec<(String, Vec<u8>)>,
}

impl H2Head {
    /// Builds the request from the URL's parts and the `-H` headers
    /// (`(name, value)`, checked by the caller). A `Host` header becomes the
    /// authority; `login` is the `Authorization` value of a URL's login, used
    /// unless `-H` gave one; `length` is the `content-length` to send, if any.
    pub(crate) fn build(
        method: &'static str,
        tls: bool,
        authority: &str,
        path: &str,
        headers: &[(String, String)],
        login: Option<String>,
        length: Option<usize>,
    ) -> Result<H2Head, LoadError> {
        let mut head = H2Head {
            method,
            scheme: if tls { "https" } else { "http" },
            authority: authority.to_string(),
            path: path.to_string(),
            fields: Vec::new(),
        };
        for (name, value) in headers {
            let name = name.to_ascii_lowercase();
            if name == "host" {
                head.authority = value.clone();
                continue;
            }
            head.fields.push((name, value.clone().into_bytes()));
        }
        if let Some(v) = login {
            head.fields
                .push(("authorization".to_string(), v.into_bytes()));
        }
        if let Some(n) = length {
            head.fields
                .push(("content-length".to_string(), n.to_string().into_bytes()));
        }
        if head.fields.len() > MAX_FIELDS {
            return Err(LoadError::Spec(format!(
                "--h2 sends at most {MAX_FIELDS} header fields per request, not {}",
                head.fields.len()
            )));
        }
        Ok(head)
    }

    /// Calls `f` with the request's pseudo-fields and its fields, borrowed
    /// (no allocation).
    #[inline]
    pub(crate) fn with_head<T>(&self, f: impl FnOnce(RequestHead<'_>, &[(&str, &[u8])]) -> T) -> T {
        let mut fields: [(&str, &[u8]); MAX_FIELDS] = [("", &[]); MAX_FIELDS];
        for (slot, (n, v)) in fields.iter_mut().zip(&self.fields) {
            *slot = (n.as_str(), v.as_slice());
        }
        let head = RequestHead {
            method: self.method,
            scheme: self.scheme,
            authority: &self.authority,
            path: &self.path,
        };
        f(head, &fields[..self.fields.len()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_becomes_the_authority_and_names_are_lowercase() {
        let h = H2Head::build(
            "POST",
            false,
            "127.0.0.1:8080",
            "/x?y=1",
            &[
                ("Host".to_string(), "example".to_string()),
                ("X-Trace".to_string(), "1".to_string()),
            ],
            Some("Basic YWxpY2U6czNjcmV0".to_string()),
            Some(5),
        )
        .unwrap();
        h.with_head(|head, fields| {
            assert_eq!(
                (head.method, head.scheme, head.authority, head.path),
                ("POST", "http", "example", "/x?y=1")
            );
            assert_eq!(
                fields,
                &[
                    ("x-trace", &b"1"[..]),
                    ("authorization", b"Basic YWxpY2U6czNjcmV0"),
                    ("content-length", b"5"),
                ]
            );
        });
        let many: Vec<(String, String)> = (0..MAX_FIELDS + 1)
            .map(|i| (format!("x-{i}"), "v".to_string()))
            .collect();
        assert!(H2Head::build("GET", true, "h", "/", &many, None, None).is_err());
    }
}
