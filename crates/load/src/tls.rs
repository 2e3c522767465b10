//! HTTPS: the client's TLS settings ([`TlsOptions`]), the rustls configuration
//! built from them once per run, and the adapter through which a sans-I/O
//! `rustls::ClientConnection` moves ciphertext over the event loop's
//! non-blocking socket.
//!
//! Why rustls's sans-I/O connection: the event loop owns the socket and its
//! edge-triggered readiness; rustls only turns ciphertext into plaintext and
//! back. So the request and response code is the same for both schemes: the
//! prebuilt request bytes go into the connection's writer (one copy, which TLS
//! needs anyway: it encrypts into its own records), and the response parser
//! reads the decrypted bytes in place from rustls's buffer
//! ([`std::io::BufRead::fill_buf`]), with no copy into the loop's buffer.
//!
//! Why aws-lc-rs: a client+server handshake loop (bench/tls-provider) measured
//! it 9% cheaper than ring per full TLS 1.3 handshake with ECDSA P-256 on this
//! machine (257 against 281 us, 3 rounds), 12% per resumed one and 17% per
//! full TLS 1.2 one; and its aws-lc-sys builds with the C compiler alone (no
//! cmake, no clang), which CI has. Its one cost that ring lacks: seeding its
//! random generator takes about 20 ms of CPU once per process, paid before
//! the run starts (see [`client_config`]).
//!
//! Verification: the system's trust store (`rustls-native-certs`), or only
//! `--cacert FILE`, or none (`--insecure`). SNI is the URL's host, and none
//! for an IP literal (RFC 6066, 3). ALPN offers `http/1.1`; TLS 1.3 and 1.2.
//! Resumption (`--tls-resume on`, the default) keeps session tickets and IDs in
//! a [`SessionStore`] shared by every connection of the run.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::io::Errno;
use rustix::net::{RecvFlags, SendFlags};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::LoadError;
use crate::session_store::SessionStore;

/// The TLS settings of a run (used only by `https://` targets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// Do not verify the server's certificate (`--insecure`).
    pub insecure: bool,
    /// Trust only the certificates in this PEM file (`--cacert`); `None`: the
    /// system's trust store.
    pub cacert: Option<PathBuf>,
    /// A client certificate chain and its key, PEM (`--cert`, `--key`), for
    /// servers that require mutual TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// Resume sessions on reconnect (`--tls-resume on`); `false`: a full
    /// handshake on every new connection.
    pub resume: bool,
}

impl Default for TlsOptions {
    fn default() -> TlsOptions {
        TlsOptions {
            insecure: false,
            cacert: None,
            client_cert: None,
            resume: true,
        }
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

fn read_pem(path: &Path, flag: &str) -> Result<Vec<u8>, LoadError> {
    // A certificate file is a few KiB; a bound keeps a wrong path (a disk
    // image, /dev/zero) from being read whole.
    const MAX: u64 = 1 << 20;
    use std::io::Read as _;
    let f = std::fs::File::open(path)
        .map_err(|e| LoadError::Tls(format!("{flag} {}: cannot read it: {e}", path.display())))?;
    let mut out = Vec::new();
    f.take(MAX + 1)
        .read_to_end(&mut out)
        .map_err(|e| LoadError::Tls(format!("{flag} {}: cannot read it: {e}", path.display())))?;
    if out.len() as u64 > MAX {
        return Err(LoadError::Tls(format!(
            "{flag} {}: larger than 1 MiB, not a PEM file",
            path.display()
        )));
    }
    Ok(out)
}

fn certs(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, LoadError> {
    let pem = read_pem(path, flag)?;
    let certs: Vec<_> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| LoadError::Tls(format!("{flag} {}: bad PEM: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(LoadError::Tls(format!(
            "{flag} {}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it",
            path.display()
        )));
    }
    Ok(certs)
}

/// Builds the run's client configuration from its options: the one TLS
/// client of the workspace (the lab's status reader and drain use it too).
pub fn client_config(o: &TlsOptions) -> Result<Arc<ClientConfig>, LoadError> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| LoadError::Tls(format!("TLS setup: {e}")))?;
    let builder = if o.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else {
        let mut roots = RootCertStore::empty();
        match &o.cacert {
            Some(path) => {
                for c in certs(path, "--cacert")? {
                    roots.add(c).map_err(|e| {
                        LoadError::Tls(format!(
                            "--cacert {}: not a usable CA certificate: {e}",
                            path.display()
                        ))
                    })?;
                }
            }
            None => {
                // Certificates the system store cannot parse are skipped, as
                // curl does; an empty store fails every public host clearly.
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
            }
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match &o.client_cert {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = certs(cert, "--cert")?;
            let pem = read_pem(key, "--key")?;
            let key_der = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
                LoadError::Tls(format!("--key {}: no PEM private key: {e}", key.display()))
            })?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| LoadError::Tls(format!("--cert/--key: {e}")))?
        }
    };
    // aws-lc seeds its random generator once per process from CPU jitter
    // entropy: about 20 ms of CPU and 50-150 ms of wall time here (measured
    // with `servelab load -n 1 https://...` under /usr/bin/time: 0.02 s user
    // against 0.00 s for http://). Drawn now, before the run's clock starts,
    // it would otherwise land in the first handshake's time and CPU (one
    // handshake of a `-c 1 -n 1` run measured 73 ms and 21.6 ms of CPU).
    let _ = config.crypto_provider().secure_random.fill(&mut [0u8; 16]);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.resumption = if o.resume {
        rustls::client::Resumption::store(Arc::new(SessionStore::new()))
    } else {
        rustls::client::Resumption::disabled()
    };
    Ok(Arc::new(config))
}

/// The name a connection sends as SNI and verifies the certificate against:
/// the URL's host; an IP literal is verified as an address and sends no SNI
/// (rustls leaves it out for `ServerName::IpAddress`).
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, LoadError> {
    ServerName::try_from(host.to_string())
        .map_err(|e| LoadError::Tls(format!("`{host}` is not a TLS server name: {e}")))
}

/// What one `https://` target needs for its connections.
#[derive(Debug, Clone)]
pub(crate) struct TlsTarget {
    pub config: Arc<ClientConfig>,
    pub name: ServerName<'static>,
}

impl TlsTarget {
    /// A new client connection (its ClientHello queued, not yet sent).
    pub(crate) fn connect(&self) -> Result<rustls::ClientConnection, rustls::Error> {
        rustls::ClientConnection::new(Arc::clone(&self.config), self.name.clone())
    }
}

/// The event loop's non-blocking socket as rustls's byte source and sink:
/// `EAGAIN` becomes [`io::ErrorKind::WouldBlock`], which rustls passes on.
pub(crate) struct Wire<'a>(pub &'a OwnedFd);

impl io::Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match rustix::net::recv(self.0, &mut *buf, RecvFlags::empty()) {
                Ok((n, _)) => return Ok(n),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl io::Write for Wire<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            match rustix::net::send(self.0, buf, SendFlags::NOSIGNAL) {
                Ok(n) => return Ok(n),
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `--insecure`: accepts any certificate, but still checks that the server
/// holds its key (the handshake signature), so that the handshake's cost is
/// the one a verifying client pays, less the chain check.
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
