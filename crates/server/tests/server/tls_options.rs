//! The TLS choices a deployment makes beyond the certificate: the server's
//! cipher-suite order (testssl: "Has server cipher order?"), `--hsts`, and the
//! certificate that `--tls-self-signed-cert` writes for clients to trust. A
//! rustls client speaks to a real server on port 0.

use std::io::{Read, Write};
use std::sync::Arc;

use rustls::crypto::aws_lc_rs::cipher_suite::*;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::{ClientConfig, RootCertStore, SupportedCipherSuite};
use servelab_server::{Engine, TlsSource};

use crate::support::*;
use crate::tls::{pki, tls_connect};

/// `client` offering only `suites`, in that order of preference.
fn preferring(
    client: &ClientConfig,
    roots: RootCertStore,
    suites: &[SupportedCipherSuite],
) -> Arc<ClientConfig> {
    let mut provider = rustls::crypto::aws_lc_rs::default_provider();
    provider.cipher_suites = suites.to_vec();
    let mut c = ClientConfig::builder_with_provider(Arc::new(provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = client.alpn_protocols.clone();
    Arc::new(c)
}

fn roots_of(pem: &std::path::Path) -> RootCertStore {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(pem).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    roots
}

/// A GET of `/hello.txt` over TLS; the head and the suite agreed.
fn get_over(
    addr: std::net::SocketAddr,
    client: &Arc<ClientConfig>,
) -> (String, SupportedCipherSuite) {
    let mut s = tls_connect(addr, client);
    s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let suite = s.conn.negotiated_cipher_suite().unwrap();
    (String::from_utf8_lossy(&out).into_owned(), suite)
}

/// Regression (testssl: "Has server cipher order? no"): the server took the
/// client's first choice. Now a client that lists ChaCha20 first, then
/// AES-128, then AES-256 gets the server's first choice, AES-256-GCM, in
/// TLS 1.3 and in TLS 1.2.
#[test]
fn the_server_chooses_the_suite_by_its_own_order() {
    let dir = fixture();
    let (source, client) = pki(dir.path());
    let TlsSource::Files { cert, .. } = &source else {
        unreachable!()
    };
    let server = start(dir.path(), Engine::default(), |c| {
        c.tls = Some(source.clone())
    });
    for (offer, expected) in [
        (
            [
                TLS13_CHACHA20_POLY1305_SHA256,
                TLS13_AES_128_GCM_SHA256,
                TLS13_AES_256_GCM_SHA384,
            ],
            TLS13_AES_256_GCM_SHA384,
        ),
        (
            [
                TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
                TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            ],
            TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        ),
    ] {
        let c = preferring(&client, roots_of(cert), &offer);
        let (resp, suite) = get_over(server.local_addr(), &c);
        assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
        assert_eq!(suite.suite(), expected.suite(), "offered {offer:?}");
    }
    server.shutdown().unwrap();
}

/// `--hsts` (here `Config::hsts`) puts `Strict-Transport-Security` on the
/// HTTPS responses of every engine, next to the site's own `--header`s.
#[test]
fn hsts_is_on_the_wire_over_tls_on_every_engine() {
    for engine in Engine::here() {
        let dir = fixture();
        let (source, client) = pki(dir.path());
        let server = start(dir.path(), engine, |c| {
            c.tls = Some(source);
            c.hsts = Some(31_536_000);
            c.headers = vec!["Cache-Control: no-store".parse().unwrap()];
        });
        let (resp, _) = get_over(server.local_addr(), &client);
        server.shutdown().unwrap();
        let head = resp.split("\r\n\r\n").next().unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{engine}: {resp}");
        let fields: Vec<&str> = head.lines().collect();
        assert!(
            fields.contains(&"Strict-Transport-Security: max-age=31536000"),
            "{engine}: {head}"
        );
        assert!(
            fields.contains(&"Cache-Control: no-store"),
            "{engine}: {head}"
        );
    }
}

/// The file `--tls-self-signed-cert` writes, explanatory first line and
/// all, is a trust anchor for rustls as it is for curl.
#[test]
fn the_saved_self_signed_certificate_is_trusted_by_rustls() {
    let dir = fixture();
    let saved = dir.path().join("dev.pem");
    let server = start(dir.path(), Engine::default(), |c| {
        c.tls = Some(TlsSource::SelfSignedSaved {
            cert: saved.clone(),
        });
    });
    let (_, client) = pki(dir.path());
    let c = preferring(&client, roots_of(&saved), &[TLS13_AES_128_GCM_SHA256]);
    let (resp, _) = get_over(server.local_addr(), &c);
    server.shutdown().unwrap();
    assert!(resp.ends_with("\r\n\r\nhello, world\n"), "{resp}");
}
