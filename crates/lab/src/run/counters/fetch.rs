//! One `GET` to the point's server, over plain TCP or TLS, read to the close:
//! what the status reader and the drain send. The load generator has its own
//! client; this one is blocking and sends one request per connection
//! (`Connection: close`), which is all these two need.
//!
//! Over TLS it trusts what the load trusts ([`Trust`]), with rustls and the
//! same provider (aws-lc-rs). It never resumes a session: a reading every few
//! seconds is not worth a session store, and a full handshake is what the
//! server can least delay.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::experiment::Trust;

/// How to reach the server: plain TCP, or TLS with this configuration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Wire {
    tls: Option<Arc<ClientConfig>>,
}

impl Wire {
    /// Plain TCP.
    pub(crate) fn plain() -> Wire {
        Wire { tls: None }
    }

    /// TLS trusting `trust`; an unreadable certificate file is an error.
    pub(crate) fn tls(trust: &Trust) -> Result<Wire, String> {
        Ok(Wire {
            tls: Some(client_config(trust)?),
        })
    }

    /// Whether this wire speaks TLS.
    pub(crate) fn is_tls(&self) -> bool {
        self.tls.is_some()
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn client_config(trust: &Trust) -> Result<Arc<ClientConfig>, String> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| format!("TLS setup: {e}"))?;
    let builder = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider()))),
        Trust::CaCert(path) => {
            let mut roots = RootCertStore::empty();
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|i| i.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            for c in certs {
                roots
                    .add(c)
                    .map_err(|e| format!("{}: not a usable certificate: {e}", path.display()))?;
            }
            builder.with_root_certificates(roots)
        }
    };
    let mut config = builder.with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(config))
}

/// Sends `GET path` to `addr` and returns the whole response (head and body),
/// waiting until `deadline` at most.
pub(crate) fn get(
    wire: &Wire,
    addr: SocketAddr,
    path: &str,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let mut s = TcpStream::connect_timeout(&addr, left).map_err(|e| format!("connect: {e}"))?;
    let _ = s.set_read_timeout(Some(left));
    let _ = s.set_write_timeout(Some(left));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut out = Vec::new();
    match &wire.tls {
        None => {
            s.write_all(req.as_bytes())
                .map_err(|e| format!("send: {e}"))?;
            s.read_to_end(&mut out).map_err(|e| format!("read: {e}"))?;
        }
        Some(config) => {
            // The lab's servers answer on 127.0.0.1 or ::1, and their
            // certificates name both (`--tls-self-signed` does).
            let name = ServerName::IpAddress(addr.ip().into());
            let conn = rustls::ClientConnection::new(Arc::clone(config), name)
                .map_err(|e| format!("TLS: {e}"))?;
            let mut tls = rustls::StreamOwned::new(conn, s);
            tls.write_all(req.as_bytes())
                .and_then(|()| tls.flush())
                .map_err(|e| format!("TLS send: {e}"))?;
            match tls.read_to_end(&mut out) {
                Ok(_) => {}
                // A server that closes without close_notify has still sent
                // its whole answer (Connection: close).
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !out.is_empty() => {}
                Err(e) => return Err(format!("TLS read: {e}")),
            }
        }
    }
    Ok(out)
}

/// Accepts any certificate (`Trust::Insecure`), still checking the
/// handshake's signatures.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
