//! Why a TLS handshake failed, by kind: counted in the report
//! ([`HandshakeFailures`]), and said in one line when no handshake of a run
//! ever succeeded ([`ConnectFailure`](crate::connect_failure::ConnectFailure)
//! of kind `tls`).
//!
//! The kinds are the ones a user acts on differently: a certificate from an
//! unknown issuer wants `--cacert` (or `--insecure`); a name mismatch wants
//! the right host in the URL; a plain-HTTP server wants `http://`.

use serde::{Deserialize, Serialize};

/// What kind of failure ended a TLS handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeFailureKind {
    /// The certificate chain does not lead to a trusted root (self-signed, or
    /// a private CA not given with `--cacert`).
    UnknownIssuer,
    /// The certificate is not valid for the URL's host.
    NameMismatch,
    /// The certificate has expired.
    Expired,
    /// The certificate is not valid yet (a clock, or a certificate, is wrong).
    NotYetValid,
    /// The certificate is unusable otherwise (bad encoding or signature,
    /// revoked, wrong purpose).
    BadCertificate,
    /// The server ended the handshake with an alert (it wants a client
    /// certificate, or shares no protocol version or cipher suite with us).
    Alert,
    /// The server's bytes are not TLS: a plain-HTTP server on an `https://` URL.
    NotTls,
    /// The server closed (or reset) the connection during the handshake.
    Closed,
    /// Anything else; the line says what rustls reported.
    Other,
}

impl HandshakeFailureKind {
    /// The kind of a rustls error met during the handshake.
    pub(crate) fn of(e: &rustls::Error) -> HandshakeFailureKind {
        use rustls::CertificateError as C;
        use rustls::Error as E;
        match e {
            E::InvalidCertificate(c) => match c {
                C::UnknownIssuer => HandshakeFailureKind::UnknownIssuer,
                C::NotValidForName | C::NotValidForNameContext { .. } => {
                    HandshakeFailureKind::NameMismatch
                }
                C::Expired | C::ExpiredContext { .. } => HandshakeFailureKind::Expired,
                C::NotValidYet | C::NotValidYetContext { .. } => HandshakeFailureKind::NotYetValid,
                _ => HandshakeFailureKind::BadCertificate,
            },
            E::AlertReceived(_) => HandshakeFailureKind::Alert,
            E::InvalidMessage(_) => HandshakeFailureKind::NotTls,
            _ => HandshakeFailureKind::Other,
        }
    }

    /// What to check, after the failure itself.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            HandshakeFailureKind::UnknownIssuer => {
                "the certificate's issuer is not trusted: pass --cacert FILE with the CA that \
                 signed it, or --insecure to skip verification"
            }
            HandshakeFailureKind::NameMismatch => {
                "the certificate is not valid for this host (name mismatch): use a host \
                 name it names, or --insecure to skip verification"
            }
            HandshakeFailureKind::Expired => {
                "the certificate has expired: renew it, or --insecure to skip verification"
            }
            HandshakeFailureKind::NotYetValid => {
                "the certificate is not valid yet: check both clocks, or --insecure to skip \
                 verification"
            }
            HandshakeFailureKind::BadCertificate => {
                "the certificate does not verify: check it (and --pin, if given), or pass \
                 --insecure to skip verification"
            }
            HandshakeFailureKind::Alert => {
                "the server refused the handshake: does it require a client certificate \
                 (--cert FILE --key FILE), or TLS versions other than 1.2 and 1.3?"
            }
            HandshakeFailureKind::NotTls => {
                "the server does not speak TLS: is it a plain-HTTP server? use http://"
            }
            HandshakeFailureKind::Closed => {
                "the server closed the connection during the handshake: is it a TLS server \
                 (a plain-HTTP server on an https:// URL closes like this)?"
            }
            HandshakeFailureKind::Other => "see the error above",
        }
    }
}

/// Failed TLS handshakes by kind. Each is one error that finishes no request
/// (as a failed connect is): the connection backs off and connects again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandshakeFailures {
    /// See [`HandshakeFailureKind::UnknownIssuer`].
    pub unknown_issuer: u64,
    /// See [`HandshakeFailureKind::NameMismatch`].
    pub name_mismatch: u64,
    /// See [`HandshakeFailureKind::Expired`].
    pub expired: u64,
    /// See [`HandshakeFailureKind::NotYetValid`].
    pub not_yet_valid: u64,
    /// See [`HandshakeFailureKind::BadCertificate`].
    pub bad_certificate: u64,
    /// See [`HandshakeFailureKind::Alert`].
    pub alert: u64,
    /// See [`HandshakeFailureKind::NotTls`].
    pub not_tls: u64,
    /// See [`HandshakeFailureKind::Closed`].
    pub closed: u64,
    /// See [`HandshakeFailureKind::Other`].
    pub other: u64,
}

impl HandshakeFailures {
    /// Sum of all kinds.
    pub fn total(&self) -> u64 {
        self.unknown_issuer
            + self.name_mismatch
            + self.expired
            + self.not_yet_valid
            + self.bad_certificate
            + self.alert
            + self.not_tls
            + self.closed
            + self.other
    }

    /// The kinds with their counts, in the order of the enum.
    pub(crate) fn by_kind(&self) -> [(&'static str, u64); 9] {
        [
            ("unknown issuer", self.unknown_issuer),
            ("name mismatch", self.name_mismatch),
            ("expired", self.expired),
            ("not yet valid", self.not_yet_valid),
            ("bad certificate", self.bad_certificate),
            ("alert", self.alert),
            ("not tls", self.not_tls),
            ("closed", self.closed),
            ("other", self.other),
        ]
    }

    pub(crate) fn add(&mut self, o: &HandshakeFailures) {
        self.unknown_issuer += o.unknown_issuer;
        self.name_mismatch += o.name_mismatch;
        self.expired += o.expired;
        self.not_yet_valid += o.not_yet_valid;
        self.bad_certificate += o.bad_certificate;
        self.alert += o.alert;
        self.not_tls += o.not_tls;
        self.closed += o.closed;
        self.other += o.other;
    }

    pub(crate) fn bump(&mut self, kind: HandshakeFailureKind) {
        *match kind {
            HandshakeFailureKind::UnknownIssuer => &mut self.unknown_issuer,
            HandshakeFailureKind::NameMismatch => &mut self.name_mismatch,
            HandshakeFailureKind::Expired => &mut self.expired,
            HandshakeFailureKind::NotYetValid => &mut self.not_yet_valid,
            HandshakeFailureKind::BadCertificate => &mut self.bad_certificate,
            HandshakeFailureKind::Alert => &mut self.alert,
            HandshakeFailureKind::NotTls => &mut self.not_tls,
            HandshakeFailureKind::Closed => &mut self.closed,
            HandshakeFailureKind::Other => &mut self.other,
        } += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::CertificateError as C;

    #[test]
    fn certificate_errors_map_to_what_the_user_acts_on() {
        let kind = |c| HandshakeFailureKind::of(&rustls::Error::InvalidCertificate(c));
        assert_eq!(kind(C::UnknownIssuer), HandshakeFailureKind::UnknownIssuer);
        assert_eq!(kind(C::NotValidForName), HandshakeFailureKind::NameMismatch);
        assert_eq!(kind(C::Expired), HandshakeFailureKind::Expired);
        assert_eq!(kind(C::BadSignature), HandshakeFailureKind::BadCertificate);
        assert!(
            HandshakeFailureKind::UnknownIssuer
                .advice()
                .contains("--insecure")
        );
        assert!(
            HandshakeFailureKind::UnknownIssuer
                .advice()
                .contains("--cacert")
        );
        let mut f = HandshakeFailures::default();
        f.bump(HandshakeFailureKind::NotTls);
        f.bump(HandshakeFailureKind::Expired);
        assert_eq!(f.total(), 2);
    }
}
