//! HTTPS on every engine: the behaviour tests' core scenarios over TLS
//! (rustls as the client, a certificate made by rcgen for the test), and
//! the bad inputs a TLS port meets: garbage, a truncated ClientHello, plain
//! HTTP. After each, the server still serves, and `/-/status` counts what
//! happened.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use servelab_server::{Engine, Running, StatusDocument, TlsSource};

use crate::support::{Resp, big_bytes, connect, fixture, parse_one, start};

/// A certificate for 127.0.0.1 written as PEM files in `dir`, and a client
/// configuration that trusts it.
pub fn pki(dir: &Path) -> (TlsSource, Arc<ClientConfig>) {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let mut roots = RootCertStore::empty();
    roots
        .add(CertificateDer::from(made.cert.der().to_vec()))
        .unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.alpn_protocols = vec![b"http/1.1".to_vec()];
    (TlsSource::Files { cert, key }, Arc::new(client))
}

/// A TLS connection to `addr`.
pub fn tls_connect(
    addr: SocketAddr,
    client: &Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    tls_over(connect(addr), client)
}

/// A TLS client session over an already connected socket.
fn tls_over(
    tcp: TcpStream,
    client: &Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = ClientConnection::new(client.clone(), name).unwrap();
    StreamOwned::new(conn, tcp)
}

/// Sends `req` over a fresh TLS connection and reads until the server's
/// close_notify.
fn tls_exchange(addr: SocketAddr, client: &Arc<ClientConfig>, req: &[u8]) -> Vec<u8> {
    let mut s = tls_connect(addr, client);
    s.write_all(req).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out)
        .expect("a clean TLS end (close_notify) after the response");
    assert_eq!(
        s.conn.alpn_protocol(),
        Some(&b"http/1.1"[..]),
        "ALPN http/1.1"
    );
    out
}

fn tls_get(addr: SocketAddr, client: &Arc<ClientConfig>, req: &str) -> Resp {
    let raw = tls_exchange(addr, client, req.as_bytes());
    let (resp, used) = parse_one(&raw, req.starts_with("HEAD "));
    assert_eq!(used, raw.len(), "extra bytes after the response");
    resp
}

fn status(addr: SocketAddr, client: &Arc<ClientConfig>) -> StatusDocument {
    let r = tls_get(
        addr,
        client,
        "GET /-/status HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
    );
    serde_json::from_slice(&r.body).unwrap()
}

/// Sends raw bytes (not TLS) and reads what comes back until the close.
fn raw(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut s = connect(addr);
    s.write_all(bytes).unwrap();
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn tls_server(engine: Engine, root: &Path, source: &TlsSource) -> Running {
    start(root, engine, |c| {
        c.tls = Some(source.clone());
        c.status = true;
        c.read_timeout = Duration::from_secs(5);
    })
}

#[test]
fn every_engine_serves_https() {
    for engine in Engine::here() {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = tls_server(engine, dir.path(), &source);
        let addr = server.local_addr();
        let close = "Host: t\r\nConnection: close\r\n\r\n";

        let r = tls_get(
            addr,
            &client,
            &format!("GET /hello.txt HTTP/1.1\r\n{close}"),
        );
        assert_eq!(
            (r.status, &r.body[..]),
            (200, &b"hello, world\n"[..]),
            "{engine}"
        );

        let r = tls_get(
            addr,
            &client,
            &format!("HEAD /hello.txt HTTP/1.1\r\n{close}"),
        );
        assert_eq!(r.status, 200, "{engine}");
        assert_eq!(r.header("content-length"), Some("13"), "{engine}");
        assert!(r.body.is_empty(), "{engine}");

        let r = tls_get(
            addr,
            &client,
            &format!("GET /missing.txt HTTP/1.1\r\n{close}"),
        );
        assert_eq!(r.status, 404, "{engine}");

        let r = tls_get(
            addr,
            &client,
            "GET /hello.txt HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n",
        );
        assert_eq!(r.status, 400, "{engine}");

        // Larger than a TLS record and than a socket buffer, byte-exact.
        let r = tls_get(addr, &client, &format!("GET /big.bin HTTP/1.1\r\n{close}"));
        assert_eq!(r.status, 200, "{engine}");
        assert!(r.body == big_bytes(), "{engine}: 1 MiB body differs");

        // Keep-alive: several requests on one TLS connection.
        let mut s = tls_connect(addr, &client);
        for path in ["/hello.txt", "/1k.txt", "/big.bin"] {
            s.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
                .unwrap();
            let want = if path == "/big.bin" { 1024 * 1024 } else { 0 };
            let raw = read_response(&mut s, want);
            let (resp, _) = parse_one(&raw, false);
            assert_eq!(resp.status, 200, "{engine} {path}");
            if path == "/big.bin" {
                assert!(
                    resp.body == big_bytes(),
                    "{engine}: kept-alive 1 MiB differs"
                );
            }
        }
        drop(s);

        // Garbage instead of a ClientHello: an alert or a close, never a
        // response; then the server still serves.
        let out = raw(
            addr,
            b"\x16\x03\x01\x00\x05hello garbage that is not TLS\r\n\r\n",
        );
        assert!(!out.starts_with(b"HTTP/"), "{engine}: {out:?}");
        // A ClientHello cut short, then the client's close.
        raw(addr, &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]);
        // Plain HTTP on the TLS port: a 400 that says so, and a close.
        let out = raw(addr, format!("GET / HTTP/1.1\r\n{close}").as_bytes());
        assert!(out.starts_with(b"HTTP/1.1 400 "), "{engine}: {out:?}");
        let r = tls_get(
            addr,
            &client,
            &format!("GET /hello.txt HTTP/1.1\r\n{close}"),
        );
        assert_eq!(r.status, 200, "{engine}: serves after bad input");

        let doc = status(addr, &client);
        assert_eq!(doc.tls.failed, 3, "{engine}: {:?}", doc.tls);
        // Every connection resumed but the first: the client keeps the
        // server's tickets.
        assert_eq!(doc.tls.full, 1, "{engine}: {:?}", doc.tls);
        assert_eq!(doc.tls.resumed, 7, "{engine}: {:?}", doc.tls);
        let metrics = tls_get(
            addr,
            &client,
            &format!("GET /-/metrics HTTP/1.1\r\n{close}"),
        );
        let text = String::from_utf8(metrics.body).unwrap();
        assert!(
            text.contains("servelab_tls_handshakes_total{kind=\"failed\"} 3\n"),
            "{engine}: {text}"
        );
        assert!(
            text.contains("servelab_tls_handshake_seconds_count 9\n"),
            "{engine}: {text}"
        );
        server.shutdown().unwrap();
    }
}

/// The handshake runs on the first head's deadline: a ClientHello that
/// stops half-way is cut off at `--read-timeout` (here 300 ms; the client
/// waits up to 10 s), counted as a failed handshake, on every engine.
#[test]
fn a_stalled_handshake_ends_at_the_read_timeout() {
    for engine in Engine::here() {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = start(dir.path(), engine, |c| {
            c.tls = Some(source.clone());
            c.status = true;
            c.read_timeout = Duration::from_millis(300);
        });
        let addr = server.local_addr();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let mut hello = Vec::new();
        ClientConnection::new(client.clone(), name)
            .unwrap()
            .write_tls(&mut hello)
            .unwrap();
        let mut s = connect(addr);
        s.write_all(&hello[..hello.len() / 2]).unwrap();
        let mut out = Vec::new();
        match s.read_to_end(&mut out) {
            Ok(_) => assert!(!out.starts_with(b"HTTP/"), "{engine}: {out:?}"),
            Err(e) => assert_eq!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset,
                "{engine}: {e}"
            ),
        }
        let doc = status(addr, &client);
        assert_eq!(doc.tls.failed, 1, "{engine}: {:?}", doc.tls);
        server.shutdown().unwrap();
    }
}

/// Regression: an event loop took the `EAGAIN` of a TLS read that had
/// consumed the ClientHello for a connection that came with nothing, and
/// dated it back by the accept deferral (a second), so with a read timeout
/// under a second a client slower than the loop with the rest of its
/// handshake was closed mid-handshake (seen as a broken pipe).
#[test]
fn a_handshake_slower_than_the_loop_is_served() {
    for engine in Engine::here() {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = start(dir.path(), engine, |c| {
            c.tls = Some(source.clone());
            c.read_timeout = Duration::from_millis(600);
        });
        let mut s = tls_connect(server.local_addr(), &client);
        // The ClientHello alone, then a pause before the client's Finished.
        s.conn.write_tls(&mut s.sock).unwrap();
        std::thread::sleep(Duration::from_millis(150));
        s.write_all(b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            .unwrap_or_else(|e| panic!("{engine}: {e}"));
        let mut out = Vec::new();
        s.read_to_end(&mut out)
            .unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert!(out.starts_with(b"HTTP/1.1 200"), "{engine}");
        server.shutdown().unwrap();
    }
}

/// The random of TLS 1.3's HelloRetryRequest, a fixed value (RFC 8446
/// 4.1.3): a ServerHello that carries it was not drawn from the RNG.
const HELLO_RETRY_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// Sends a ClientHello on a fresh connection and returns the 32-byte
/// random of the server's ServerHello (bytes 11..43: record header 5,
/// handshake type 1, length 3, version 2).
fn server_random(addr: SocketAddr, client: &Arc<ClientConfig>) -> [u8; 32] {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut hello = Vec::new();
    ClientConnection::new(client.clone(), name)
        .unwrap()
        .write_tls(&mut hello)
        .unwrap();
    let mut s = connect(addr);
    s.write_all(&hello).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < 43 {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed before the ServerHello: {got:?}");
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!((got[0], got[5]), (0x16, 2), "not a ServerHello: {got:?}");
    got[11..43].try_into().unwrap()
}

/// Every connection's ServerHello random is its own, on every engine. A
/// regression guard for `fork`: its children are copies of one parent, and
/// aws-lc re-seeds a child's RNG at its first use after the fork (its cost
/// is in `engines/fork.rs`). A speed-up that skipped the re-seed, or drew
/// the randomness before the fork, would hand sibling children the same
/// random, the same key share and the same nonces.
#[test]
fn each_connection_draws_its_own_server_random() {
    for engine in Engine::here() {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = tls_server(engine, dir.path(), &source);
        let addr = server.local_addr();
        let randoms: Vec<[u8; 32]> = (0..6).map(|_| server_random(addr, &client)).collect();
        for (i, r) in randoms.iter().enumerate() {
            assert_ne!(
                *r, HELLO_RETRY_RANDOM,
                "{engine}: a HelloRetryRequest (the client's key share is not the server's group)"
            );
            assert!(
                !randoms[..i].contains(r),
                "{engine}: connection {i} repeats an earlier server random {r:02x?}"
            );
        }
        server.shutdown().unwrap();
    }
}

/// Reads one response from a kept-alive stream: the head, then its
/// Content-Length (at least `body_hint` bytes are expected).
fn read_response(s: &mut impl Read, body_hint: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body_hint + 512);
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "connection closed mid-response");
        out.extend_from_slice(&buf[..n]);
        let Some(end) = out.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&out[..end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .map_or(0, |v| v.trim().parse().unwrap());
        if out.len() >= end + 4 + len {
            return out;
        }
    }
}

/// The server's fingerprint is the certificate's SHA-256.
#[test]
fn self_signed_certificate_is_for_localhost_and_loopback() {
    let dir = fixture();
    let server = servelab_server::Server::bind({
        let mut c = servelab_server::Config::new(dir.path());
        c.tls = Some(TlsSource::SelfSigned);
        c
    })
    .unwrap();
    let fingerprint = server.tls_fingerprint().unwrap().to_string();
    assert_eq!(fingerprint.split(':').count(), 32, "{fingerprint}");
    // A client that pins nothing but checks the name 127.0.0.1 against the
    // certificate: it must list that address.
    let running = server.spawn();
    let mut s = connect(running.local_addr());
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let client = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Capture))
        .with_no_client_auth();
    let mut conn = ClientConnection::new(Arc::new(client), name).unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut s).unwrap();
    }
    let chain = conn.peer_certificates().unwrap();
    let der = chain[0].as_ref();
    for san in [
        &b"localhost"[..],
        &[127, 0, 0, 1][..],
        &std::net::Ipv6Addr::LOCALHOST.octets()[..],
    ] {
        assert!(
            der.windows(san.len()).any(|w| w == san),
            "SAN {san:?} missing"
        );
    }
    running.shutdown().unwrap();
}

/// Accepts any certificate: the test inspects it itself.
#[derive(Debug, Default)]
struct Capture;

impl rustls::client::danger::ServerCertVerifier for Capture {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        rustls::crypto::aws_lc_rs::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A client that reads large responses slowly, through a small receive
/// window, gets each whole and with a clean TLS end on every engine: the
/// close waits (bounded) for room for the `close_notify` in every driver. The
/// full-socket case itself is pinned, deterministically, by the unit test in
/// `driver/wire.rs` (CI once saw the alert lost on a busy machine); here files of
/// several sizes put the last record at different points of the socket's fill.
#[test]
fn a_slow_reader_of_a_large_response_gets_a_clean_tls_end() {
    for engine in Engine::here() {
        let dir = fixture();
        let sizes: Vec<usize> = (0..6).map(|k| 256 * 1024 + k * 6 * 1024).collect();
        for (k, &size) in sizes.iter().enumerate() {
            std::fs::write(dir.path().join(format!("slow{k}.bin")), pattern(size)).unwrap();
        }
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = tls_server(engine, dir.path(), &source);
        let addr = server.local_addr();
        for (k, &size) in sizes.iter().enumerate() {
            // A small receive window keeps the server's socket full to the end.
            let sock =
                socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
            sock.set_recv_buffer_size(8 * 1024).unwrap();
            sock.connect(&addr.into()).unwrap();
            let tcp: TcpStream = sock.into();
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut s = tls_over(tcp, &client);
            let req = format!("GET /slow{k}.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
            s.write_all(req.as_bytes()).unwrap();
            let mut out = Vec::new();
            let mut piece = [0u8; 2048];
            loop {
                match s.read(&mut piece) {
                    Ok(0) => break,
                    Ok(n) => out.extend_from_slice(&piece[..n]),
                    Err(e) => panic!("{engine}, {size} bytes: after {} read: {e}", out.len()),
                }
                // Slower than the server: its socket stays full.
                std::thread::sleep(Duration::from_micros(200));
            }
            let (resp, used) = parse_one(&out, false);
            assert_eq!((resp.status, used), (200, out.len()), "{engine}");
            assert!(resp.body == pattern(size), "{engine}: {size} bytes differ");
        }
    }
}

/// `len` bytes of a pattern that shows a shifted or lost piece.
fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

/// Sends `bytes` over TLS with ALPN offering only `alpn` and reads what
/// comes back until the server closes (cleanly or not); also gives what ALPN
/// chose.
fn alpn_exchange(
    addr: SocketAddr,
    client: &Arc<ClientConfig>,
    alpn: &[u8],
    bytes: &[u8],
) -> (Option<Vec<u8>>, Vec<u8>) {
    let mut config = (**client).clone();
    config.alpn_protocols = vec![alpn.to_vec()];
    let mut s = tls_connect(addr, &Arc::new(config));
    s.sock
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    s.write_all(bytes).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    (s.conn.alpn_protocol().map(<[u8]>::to_vec), out)
}

/// The error code of the first GOAWAY among HTTP/2 `frames`.
fn goaway_code(mut frames: &[u8]) -> Option<u32> {
    while frames.len() >= 9 {
        let len =
            usize::from(frames[0]) << 16 | usize::from(frames[1]) << 8 | usize::from(frames[2]);
        let payload = frames.get(9..9 + len)?;
        if frames[3] == 0x7 {
            return payload
                .get(4..8)
                .map(|c| u32::from_be_bytes(c.try_into().unwrap()));
        }
        frames = &frames[9 + len..];
    }
    None
}

#[test]
fn alpn_decides_the_protocol_whatever_the_first_bytes_say() {
    // RFC 9113 §3.3: after ALPN chose h2 the client must send the preface;
    // HTTP/1.1 instead is a connection error (GOAWAY PROTOCOL_ERROR), not a
    // request to answer. After ALPN chose http/1.1 the preface is an
    // HTTP/1.1 request (for version 2.0), answered in HTTP/1.1.
    for engine in Engine::here().filter(|e| e.carries_http2()) {
        let dir = fixture();
        let certs = tempfile::tempdir().unwrap();
        let (source, client) = pki(certs.path());
        let server = tls_server(engine, dir.path(), &source);
        let addr = server.local_addr();

        let get = b"GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        let (chosen, out) = alpn_exchange(addr, &client, b"h2", get);
        assert_eq!(chosen.as_deref(), Some(&b"h2"[..]), "{engine}");
        assert!(
            !out.starts_with(b"HTTP/1.1"),
            "{engine}: served HTTP/1.1 after ALPN h2"
        );
        assert_eq!(goaway_code(&out), Some(0x1), "{engine}: {out:?}");

        let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
        let (chosen, out) = alpn_exchange(addr, &client, b"http/1.1", preface);
        assert_eq!(chosen.as_deref(), Some(&b"http/1.1"[..]), "{engine}");
        assert!(
            out.starts_with(b"HTTP/1.1 4") || out.starts_with(b"HTTP/1.1 5"),
            "{engine}: {:?}",
            String::from_utf8_lossy(&out)
        );

        // And the server goes on serving.
        let r = tls_get(
            addr,
            &client,
            "GET /hello.txt HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        );
        assert_eq!(r.status, 200, "{engine}");
    }
}
