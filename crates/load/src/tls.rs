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
//! `--cacert FILE`, or one certificate by its SHA-256 fingerprint (`--pin`,
//! for `serve --tls-self-signed`), or none (`--insecure`). SNI is the URL's host, and none
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

/// The SHA-256 fingerprint of a certificate (of its DER bytes), as
/// `serve --tls-self-signed` and `openssl x509 -fingerprint -sha256` print it:
/// `AB:CD:…`, 32 bytes. Parsed with or without the colons, in either case.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Pin([u8; 32]);

impl std::fmt::Debug for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pin({self})")
    }
}

impl std::fmt::Display for Pin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let hex: Vec<String> = self.0.iter().map(|b| format!("{b:02X}")).collect();
        f.write_str(&hex.join(":"))
    }
}

impl std::str::FromStr for Pin {
    type Err = String;
    fn from_str(s: &str) -> Result<Pin, String> {
        let s = s.trim();
        let s = s
            .strip_prefix("sha256:")
            .or_else(|| s.strip_prefix("SHA256:"))
            .unwrap_or(s);
        let hex: String = s.chars().filter(|&c| c != ':').collect();
        if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "`{s}` is not a SHA-256 fingerprint: expected 64 hex digits, with or without \
                 colons (AB:CD:…, as serve --tls-self-signed prints it)"
            ));
        }
        if hex.len() != 64 {
            return Err(format!(
                "`{s}` has {} hex digits; a SHA-256 fingerprint has 64 (32 bytes)",
                hex.len()
            ));
        }
        let mut out = [0u8; 32];
        for (i, b) in out.iter_mut().enumerate() {
            *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
        }
        Ok(Pin(out))
    }
}

impl Pin {
    /// The fingerprint of a certificate, with the provider's SHA-256.
    fn of(provider: &CryptoProvider, cert: &CertificateDer<'_>) -> Option<Pin> {
        let h = provider
            .cipher_suites
            .iter()
            .filter_map(|s| s.tls13())
            .map(|s| s.common.hash_provider)
            .find(|h| h.output_len() == 32)?;
        h.hash(cert.as_ref()).as_ref().try_into().ok().map(Pin)
    }
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
    client_config_pinned(o, None, crate::protocol::Protocol::Http1)
}

/// [`client_config`], verifying the server by a pinned certificate
/// fingerprint (`--pin`, [`LoadSpec::tls_pin`](crate::LoadSpec::tls_pin))
/// when one is given, instead of a chain to a trusted CA.
pub(crate) fn client_config_pinned(
    o: &TlsOptions,
    pin: Option<Pin>,
    protocol: crate::protocol::Protocol,
) -> Result<Arc<ClientConfig>, LoadError> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| LoadError::Tls(format!("TLS setup: {e}")))?;
    let builder = if o.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider())))
    } else if let Some(pin) = pin {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Pinned {
                pin,
                provider: provider(),
            }))
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
    // One protocol offered, the run's: an `h2` run against a server that
    // only speaks HTTP/1.1 must fail (said in one line), not measure HTTP/1.1.
    config.alpn_protocols = vec![protocol.name().as_bytes().to_vec()];
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

/// `--pin`: the server's leaf certificate must have the pinned SHA-256
/// fingerprint; its name, dates and issuer are not checked (a pin names one
/// certificate, as curl's `--pinnedpubkey` names one key). The handshake's
/// signatures are still verified against that certificate's key, so the
/// server must hold its private key.
#[derive(Debug)]
struct Pinned {
    pin: Pin,
    provider: Arc<CryptoProvider>,
}

/// The error of a certificate that is not the pinned one. rustls shows it
/// with `Debug`, so `Debug` says it in words as `Display` does.
struct PinMismatch {
    pinned: Pin,
    found: Option<Pin>,
}

impl std::fmt::Debug for PinMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for PinMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.found {
            Some(found) => write!(
                f,
                "the server's certificate has SHA-256 fingerprint {found}, not the --pin {}",
                self.pinned
            ),
            None => write!(f, "cannot compute the certificate's SHA-256 fingerprint"),
        }
    }
}

impl std::error::Error for PinMismatch {}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let found = Pin::of(&self.provider, end_entity);
        if found == Some(self.pin) {
            return Ok(ServerCertVerified::assertion());
        }
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::Other(rustls::OtherError(Arc::new(PinMismatch {
                pinned: self.pin,
                found,
            }))),
        ))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        NoVerification(Arc::clone(&self.provider)).verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        NoVerification(Arc::clone(&self.provider)).verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_parse_with_or_without_colons_in_either_case() {
        let upper = "AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89";
        let pin: Pin = upper.parse().unwrap();
        assert_eq!(pin.to_string(), upper);
        assert_eq!(upper.to_lowercase().parse::<Pin>().unwrap(), pin);
        assert_eq!(upper.replace(':', "").parse::<Pin>().unwrap(), pin);
        assert!(
            upper[3..]
                .parse::<Pin>()
                .unwrap_err()
                .contains("62 hex digits")
        );
        assert!(
            "zz".parse::<Pin>()
                .unwrap_err()
                .contains("not a SHA-256 fingerprint")
        );
    }
}
