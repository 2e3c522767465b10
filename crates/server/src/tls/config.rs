//! The server's TLS configuration, made once at start: the certificate chain
//! and key from PEM files, or a self-signed certificate; TLS 1.3 and 1.2
//! only, ALPN `http/1.1`, session resumption on, and the suite chosen by the
//! server's order (the provider's, AES-256-GCM first; SECURITY.md says why).
//! Key files that cannot be used are said in plain words: an encrypted key
//! with the `openssl` command that decrypts it, a key of another certificate
//! as such, with both paths.
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

use crate::error::ServerError;

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
    /// `--tls-self-signed-cert FILE`: as [`TlsSource::SelfSigned`], and the
    /// certificate (not its key) is written to `FILE` as PEM, for clients
    /// to trust (`curl --cacert FILE`). A file that exists is replaced only
    /// if servelab wrote it (its first line says so); any other is
    /// refused, so a typo never overwrites someone's file.
    SelfSignedSaved {
        /// Where the certificate goes.
        cert: PathBuf,
    },
}

/// The first line of a certificate file that `--tls-self-signed-cert`
/// wrote: PEM's explanatory text (RFC 7468 section 2), which PEM readers
/// (OpenSSL, hence curl; rustls) skip, and which tells servelab that it may
/// replace the file at its next start.
pub(crate) const SAVED_MARK: &str = "servelab --tls-self-signed-cert: a certificate for localhost, \
                              127.0.0.1 and ::1, replaced at each start";

/// The configuration every TLS connection of a server shares.
#[derive(Debug)]
pub(crate) struct Tls {
    pub(crate) config: Arc<ServerConfig>,
    /// SHA-256 of the leaf certificate (DER), as `AB:CD:...`.
    pub(crate) fingerprint: String,
}

impl Tls {
    /// Loads or makes the certificate and builds the configuration; ALPN
    /// offers `h2` before `http/1.1` when the engine carries HTTP/2
    /// (`http2`). A bad file is a [`ServerError::Tls`] naming it and what is
    /// wrong.
    pub(crate) fn new(source: &TlsSource, http2: bool) -> Result<Tls, ServerError> {
        let (chain, key) = match source {
            TlsSource::Files { cert, key } => (load_chain(cert)?, load_key(key)?),
            TlsSource::SelfSigned => self_signed()?,
            TlsSource::SelfSignedSaved { cert } => {
                let (chain, key) = self_signed()?;
                save(cert, &chain[0])?;
                (chain, key)
            }
        };
        let fingerprint = fingerprint(&chain[0]);
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| tls_error(format!("cannot use TLS 1.3 and 1.2: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| tls_error(key_mismatch(source, &e)))?;
        // The suite is the server's first choice among the client's, not the
        // client's: see SECURITY.md (TLS) for the order and why.
        config.ignore_client_order = true;
        // ALPN: the server's order wins (rustls picks our first protocol the
        // client offers), so a client that offers both gets HTTP/2.
        config.alpn_protocols = if http2 {
            vec![b"h2".to_vec(), b"http/1.1".to_vec()]
        } else {
            vec![b"http/1.1".to_vec()]
        };
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
    use rustls::{Error, InconsistentKeys};
    match source {
        TlsSource::Files { cert, key } => match e {
            Error::InconsistentKeys(InconsistentKeys::KeyMismatch) => format!(
                "--tls-key {}: the key does not belong to the certificate in --tls-cert {} \
                 (give the key that was made with that certificate)",
                key.display(),
                cert.display()
            ),
            e => format!(
                "--tls-cert {} with --tls-key {}: {e} (is the key the certificate's?)",
                cert.display(),
                key.display()
            ),
        },
        TlsSource::SelfSigned | TlsSource::SelfSignedSaved { .. } => {
            format!("--tls-self-signed: {e}")
        }
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
    if encrypted(&text) {
        return Err(tls_error(format!(
            "--tls-key {0}: the private key is encrypted (protected by a passphrase), which \
             servelab cannot read; write a decrypted copy with `openssl pkey -in {0} -out \
             key-plain.pem` (it asks for the passphrase), keep it readable only by the server's \
             user, and give that",
            path.display()
        )));
    }
    PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        let why = match e {
            rustls::pki_types::pem::Error::NoItemsFound => "no PRIVATE KEY block in it".to_owned(),
            e => format!("not a readable PEM key file: {e}"),
        };
        tls_error(format!(
            "--tls-key {}: {why} (PEM: PKCS #8, PKCS #1 or SEC1)",
            path.display()
        ))
    })
}

/// Whether a PEM file holds an encrypted key: PKCS #8's `ENCRYPTED PRIVATE
/// KEY` block, or OpenSSL's legacy encryption of a PKCS #1 or SEC1 block
/// (RFC 1421's `Proc-Type: 4,ENCRYPTED` header inside it). Neither parses
/// as a key: the first is skipped as an unknown block ("no items found"),
/// the second fails on its header (a base64 error on the `-` of `Proc-Type`).
fn encrypted(pem: &[u8]) -> bool {
    let has = |needle: &[u8]| pem.windows(needle.len()).any(|w| w == needle);
    has(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || has(b"Proc-Type: 4,ENCRYPTED")
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

/// Writes `cert` as PEM to `path` after [`SAVED_MARK`]: a new file, or in
/// place of one that servelab wrote before (through a temporary file and a
/// rename, so a client never reads half a certificate); any other file that
/// exists is refused.
fn save(path: &Path, cert: &CertificateDer<'_>) -> Result<(), ServerError> {
    use std::io::Write;
    let fail = |why: String| tls_error(format!("--tls-self-signed-cert {}: {why}", path.display()));
    let pem = format!("{SAVED_MARK}\n{}", pem("CERTIFICATE", cert.as_ref()));
    let new = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path);
    match new {
        Ok(mut file) => {
            return file
                .write_all(pem.as_bytes())
                .map_err(|e| fail(e.to_string()));
        }
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(fail(e.to_string())),
        Err(_) => {}
    }
    let mut start = Vec::with_capacity(SAVED_MARK.len());
    let ours = std::fs::File::open(path)
        .and_then(|f| {
            use std::io::Read;
            f.take(SAVED_MARK.len() as u64).read_to_end(&mut start)
        })
        .is_ok_and(|_| start == SAVED_MARK.as_bytes());
    if !ours {
        return Err(fail(
            "the file exists and servelab did not write it; name a new file, or remove this one"
                .to_owned(),
        ));
    }
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    let written = std::fs::write(&temp, pem).and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(fail(e.to_string()));
    }
    Ok(())
}

/// `der` as a PEM block of `label`, 64 base64 characters a line (RFC 7468).
fn pem(label: &str, der: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
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
        let tls = Tls::new(&TlsSource::SelfSigned, false).unwrap();
        assert_eq!(tls.fingerprint.len(), 32 * 3 - 1, "{}", tls.fingerprint);
        assert_eq!(tls.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(tls.config.ticketer.enabled());
        let h2 = Tls::new(&TlsSource::SelfSigned, true).unwrap();
        let offered = [b"h2".to_vec(), b"http/1.1".to_vec()];
        assert_eq!(h2.config.alpn_protocols, offered, "h2 first");
    }

    /// The server picks the suite (testssl's "server cipher order"), in
    /// aws-lc-rs's order, which SECURITY.md states: AES-256-GCM first.
    #[test]
    fn the_server_orders_the_suites_aes_256_first() {
        let tls = Tls::new(&TlsSource::SelfSigned, false).unwrap();
        assert!(tls.config.ignore_client_order);
        let names: Vec<String> = tls
            .config
            .crypto_provider()
            .cipher_suites
            .iter()
            .map(|s| format!("{:?}", s.suite()))
            .collect();
        assert_eq!(
            names[..3],
            [
                "TLS13_AES_256_GCM_SHA384",
                "TLS13_AES_128_GCM_SHA256",
                "TLS13_CHACHA20_POLY1305_SHA256"
            ],
            "{names:?}"
        );
    }

    #[test]
    fn an_encrypted_key_and_a_foreign_key_are_said_plainly() {
        let dir = tempfile::tempdir().unwrap();
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let other = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let cert = dir.path().join("cert.pem");
        std::fs::write(&cert, made.cert.pem()).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let pkcs8 = write(
            "enc.pem",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIHsMFcG\n-----END ENCRYPTED PRIVATE KEY-----\n",
        );
        let legacy = write(
            "legacy.pem",
            "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,83\n\n\
             MHcC\n-----END EC PRIVATE KEY-----\n",
        );
        for key in [pkcs8, legacy] {
            let source = TlsSource::Files {
                cert: cert.clone(),
                key: key.clone(),
            };
            let e = Tls::new(&source, false).unwrap_err().to_string();
            assert!(e.contains("the private key is encrypted"), "{e}");
            assert!(
                e.contains(&format!(
                    "openssl pkey -in {} -out key-plain.pem",
                    key.display()
                )),
                "{e}"
            );
        }
        let foreign = write("foreign.pem", &other.signing_key.serialize_pem());
        let source = TlsSource::Files {
            cert: cert.clone(),
            key: foreign.clone(),
        };
        let e = Tls::new(&source, false).unwrap_err().to_string();
        assert!(
            e.contains("the key does not belong to the certificate"),
            "{e}"
        );
        assert!(e.contains(&*cert.to_string_lossy()) && e.contains(&*foreign.to_string_lossy()));
        let own = write("own.pem", &made.signing_key.serialize_pem());
        assert!(Tls::new(&TlsSource::Files { cert, key: own }, false).is_ok());
    }

    #[test]
    fn the_saved_certificate_replaces_only_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.pem");
        let saved = TlsSource::SelfSignedSaved { cert: path.clone() };
        let first = Tls::new(&saved, false).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(SAVED_MARK), "{text}");
        let certs: Vec<CertificateDer<'_>> = CertificateDer::pem_slice_iter(text.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(certs.len(), 1);
        assert_eq!(
            fingerprint(&certs[0]),
            first.fingerprint,
            "the certificate served"
        );
        let second = Tls::new(&saved, false).unwrap();
        let again = std::fs::read_to_string(&path).unwrap();
        let certs: Vec<CertificateDer<'_>> = CertificateDer::pem_slice_iter(again.as_bytes())
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(fingerprint(&certs[0]), second.fingerprint, "replaced");
        assert_ne!(first.fingerprint, second.fingerprint);
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file left behind");

        let foreign = dir.path().join("foreign.pem");
        std::fs::write(&foreign, "-----BEGIN CERTIFICATE-----\n").unwrap();
        let e = Tls::new(
            &TlsSource::SelfSignedSaved {
                cert: foreign.clone(),
            },
            false,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("servelab did not write it"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&foreign).unwrap(),
            "-----BEGIN CERTIFICATE-----\n"
        );
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
            let e = Tls::new(&source, false).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
