//! The server's TLS configuration, made once at start: the certificate chain
//! and key from PEM files, or a self-signed certificate; TLS 1.3 and 1.2
//! only, ALPN `http/1.1`, session resumption on.
//!
//! The provider is aws-lc-rs, as for `servelab load`: it was chosen there by
//! measured handshake cost (`bench/tls-provider/README.md`). The workspace
//! builds aws-lc without its CPU Jitter Entropy seed source
//! (`.cargo/config.toml`): from it, the re-seed after each fork cost a
//! `fork` child about 10 ms (measured in `engines/fork.rs`).
//!
//! Resumption: stateless tickets (TLS 1.3 and 1.2) from a ticket key made
//! here, before any engine forks, so a `prefork` worker or a `fork` child
//! resumes a session that another process began; and a session-ID cache for
//! TLS 1.2 clients without tickets (per process). rustls rotates the ticket
//! key every 6 hours, in each process on its own: past the first rotation a
//! process engine resumes only the sessions that its own process began.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::ServerError;

/// Session-ID cache entries (TLS 1.2 resumption without tickets).
const SESSION_CACHE: usize = 4096;
/// Plaintext of the ticket made at start (see [`Tls::new`]): a real one
/// holds a session's secret and parameters, a few hundred bytes.
const WARM_TICKET: usize = 4096;

/// Where the server's certificate comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsSource {
    /// `--tls-cert FILE --tls-key FILE`: PEM files, the certificate file
    /// holding the chain (leaf first).
    Files {
        /// The certificate chain.
        cert: PathBuf,
        /// The private key (PKCS #8, PKCS #1 or SEC1).
        key: PathBuf,
    },
    /// `--tls-self-signed`: a certificate for `localhost`, `127.0.0.1` and
    /// `::1` (ECDSA P-256), made at start.
    SelfSigned,
}

/// The configuration every TLS connection of a server shares.
#[derive(Debug)]
pub(crate) struct Tls {
    pub(crate) config: Arc<ServerConfig>,
    /// SHA-256 of the leaf certificate (DER), as `AB:CD:...`.
    pub(crate) fingerprint: String,
}

impl Tls {
    /// Loads or makes the certificate and builds the configuration. A bad
    /// file is a [`ServerError::Tls`] naming it and what is wrong.
    pub(crate) fn new(source: &TlsSource) -> Result<Tls, ServerError> {
        let (chain, key) = match source {
            TlsSource::Files { cert, key } => (load_chain(cert)?, load_key(key)?),
            TlsSource::SelfSigned => self_signed()?,
        };
        let fingerprint = fingerprint(&chain[0]);
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| tls_error(format!("cannot use TLS 1.3 and 1.2: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| tls_error(key_mismatch(source, &e)))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config.ticketer = rustls::crypto::aws_lc_rs::Ticketer::new()
            .map_err(|e| tls_error(format!("cannot make a session-ticket key: {e}")))?;
        config.session_storage = rustls::server::ServerSessionMemoryCache::new(SESSION_CACHE);
        // The ticket key rejects a ticket longer than the longest it has
        // made itself: a count kept per process. A `fork` child or a
        // `prefork` worker that did not make the ticket would then refuse it
        // (a full handshake each time: measured, every connection after the
        // first). One ticket made here, before any fork, longer than any
        // real one, sets that bound for every process.
        let _ = config.ticketer.encrypt(&[0; WARM_TICKET]);
        Ok(Tls {
            config: Arc::new(config),
            fingerprint,
        })
    }
}

fn tls_error(message: String) -> ServerError {
    ServerError::Tls(message)
}

fn key_mismatch(source: &TlsSource, e: &rustls::Error) -> String {
    match source {
        TlsSource::Files { cert, key } => format!(
            "--tls-cert {} with --tls-key {}: {e} (is the key the certificate's?)",
            cert.display(),
            key.display()
        ),
        TlsSource::SelfSigned => format!("--tls-self-signed: {e}"),
    }
}

/// The chain in a PEM file, leaf first; at least one certificate.
fn load_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, ServerError> {
    let text = read(path, "--tls-cert")?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<_, _>>()
        .map_err(|e| {
            tls_error(format!(
                "--tls-cert {}: not a PEM certificate file: {e}",
                path.display()
            ))
        })?;
    if chain.is_empty() {
        return Err(tls_error(format!(
            "--tls-cert {}: no CERTIFICATE block in it (a PEM file with the chain, leaf first)",
            path.display()
        )));
    }
    Ok(chain)
}

/// The first private key in a PEM file.
fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, ServerError> {
    let text = read(path, "--tls-key")?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        tls_error(format!(
            "--tls-key {}: no usable PRIVATE KEY block in it: {e}",
            path.display()
        ))
    })
}

fn read(path: &Path, flag: &str) -> Result<Vec<u8>, ServerError> {
    std::fs::read(path).map_err(|e| tls_error(format!("{flag} {}: {e}", path.display())))
}

/// A certificate for `localhost`, `127.0.0.1` and `::1`, and its key.
fn self_signed() -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ServerError> {
    let names = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    let made = rcgen::generate_simple_self_signed(names)
        .map_err(|e| tls_error(format!("--tls-self-signed: {e}")))?;
    let key = PrivateKeyDer::try_from(made.signing_key.serialize_der())
        .map_err(|e| tls_error(format!("--tls-self-signed: {e}")))?;
    Ok((vec![made.cert.der().clone()], key))
}

/// SHA-256 of `cert` as colon-separated upper-case hex (as `openssl x509
/// -fingerprint -sha256` prints it).
pub(crate) fn fingerprint(cert: &CertificateDer<'_>) -> String {
    let provider: CryptoProvider = rustls::crypto::aws_lc_rs::default_provider();
    let digest = provider
        .cipher_suites
        .iter()
        .filter_map(|s| s.tls13())
        .map(|s| s.common.hash_provider)
        .find(|h| h.output_len() == 32)
        .map(|h| h.hash(cert.as_ref()).as_ref().to_vec())
        .unwrap_or_default();
    digest
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_signed_config_has_a_sha256_fingerprint_and_alpn() {
        let tls = Tls::new(&TlsSource::SelfSigned).unwrap();
        assert_eq!(tls.fingerprint.len(), 32 * 3 - 1, "{}", tls.fingerprint);
        assert_eq!(tls.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(tls.config.ticketer.enabled());
    }

    #[test]
    fn bad_files_are_named_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "hello\n").unwrap();
        let missing = dir.path().join("missing.pem");
        for (cert, key, says) in [
            (&missing, &junk, "missing.pem"),
            (&junk, &junk, "no CERTIFICATE block"),
        ] {
            let source = TlsSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            };
            let e = Tls::new(&source).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
