//! A TLS server for the tests: rustls's `ServerConnection` over a std
//! `TcpStream`, a thread per connection, with certificates made by rcgen at
//! test time. It answers every request `200 OK` with 16 bytes (keep-alive, or
//! a close when asked), and counts handshakes, resumed ones apart, as the
//! server saw them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection, StreamOwned};

use crate::support::Acceptor;

/// A CA and a server certificate it signed, written as PEM files in a
/// temporary directory.
pub struct Pki {
    pub dir: tempfile::TempDir,
    ca: CertifiedIssuer<'static, KeyPair>,
    server_cert: CertificateDer<'static>,
    server_key: Vec<u8>,
}

impl Pki {
    /// A CA, and a server certificate for `names` (DNS names or IP addresses).
    pub fn new(names: &[&str]) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "servelab test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let cert = CertificateParams::new(names)
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        Pki {
            dir,
            server_cert: cert.der().clone(),
            server_key: key.serialize_der(),
            ca,
        }
    }

    pub fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A client certificate signed by the CA, written as `client.pem` and
    /// `client.key`.
    pub fn client_files(&self) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["client".to_string()])
            .unwrap()
            .signed_by(&key, &self.ca)
            .unwrap();
        let (c, k) = (
            self.dir.path().join("client.pem"),
            self.dir.path().join("client.key"),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c, k)
    }

    fn config(&self, client_auth: bool) -> Arc<ServerConfig> {
        self.server_config(client_auth, b"http/1.1")
    }

    /// The server's TLS configuration, offering the one ALPN protocol `alpn`.
    pub fn server_config(&self, client_auth: bool, alpn: &[u8]) -> Arc<ServerConfig> {
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.server_key.clone()));
        let builder = ServerConfig::builder();
        let builder = if client_auth {
            let mut roots = RootCertStore::empty();
            roots.add(self.ca.der().clone()).unwrap();
            builder.with_client_cert_verifier(
                WebPkiClientVerifier::builder(Arc::new(roots))
                    .build()
                    .unwrap(),
            )
        } else {
            builder.with_no_client_auth()
        };
        let mut config = builder
            .with_single_cert(vec![self.server_cert.clone()], key)
            .unwrap();
        config.alpn_protocols = vec![alpn.to_vec()];
        Arc::new(config)
    }
}

/// The TLS server: counts what it saw.
pub struct TlsServer {
    pub addr: SocketAddr,
    pub handshakes: Arc<AtomicU64>,
    pub resumed: Arc<AtomicU64>,
    pub requests: Arc<AtomicU64>,
    /// Whether every handshake negotiated ALPN `http/1.1`.
    pub alpn_ok: Arc<AtomicBool>,
    _acceptor: Acceptor,
}

impl TlsServer {
    /// Serves with the PKI's server certificate; `client_auth`: requires a
    /// client certificate signed by its CA.
    pub fn start(pki: &Pki, client_auth: bool) -> TlsServer {
        let config = pki.config(client_auth);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let handshakes = Arc::new(AtomicU64::new(0));
        let resumed = Arc::new(AtomicU64::new(0));
        let requests = Arc::new(AtomicU64::new(0));
        let alpn_ok = Arc::new(AtomicBool::new(true));
        let (h, r, q, a) = (
            handshakes.clone(),
            resumed.clone(),
            requests.clone(),
            alpn_ok.clone(),
        );
        let acceptor = Acceptor::start(listener, move |conn| {
            serve(conn, config.clone(), &h, &r, &q, &a);
        });
        TlsServer {
            addr,
            handshakes,
            resumed,
            requests,
            alpn_ok,
            _acceptor: acceptor,
        }
    }

    /// `https://HOST:PORT/file`.
    pub fn url(&self, host: &str) -> String {
        format!("https://{host}:{}/file", self.addr.port())
    }
}

fn serve(
    tcp: TcpStream,
    config: Arc<ServerConfig>,
    handshakes: &AtomicU64,
    resumed: &AtomicU64,
    requests: &AtomicU64,
    alpn_ok: &AtomicBool,
) {
    let _ = tcp.set_read_timeout(Some(std::time::Duration::from_secs(30)));
    let Ok(conn) = ServerConnection::new(config) else {
        return;
    };
    let mut tls = StreamOwned::new(conn, tcp);
    while tls.conn.is_handshaking() {
        if tls.conn.complete_io(&mut tls.sock).is_err() {
            return;
        }
    }
    handshakes.fetch_add(1, Ordering::SeqCst);
    if tls.conn.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
        resumed.fetch_add(1, Ordering::SeqCst);
    }
    if tls.conn.alpn_protocol() != Some(b"http/1.1") {
        alpn_ok.store(false, Ordering::SeqCst);
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        buf.drain(..end + 4);
        requests.fetch_add(1, Ordering::SeqCst);
        let close = head.contains("connection: close");
        let answer: &[u8] = if close {
            b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\nConnection: close\r\n\r\n0123456789abcdef"
        } else {
            b"HTTP/1.1 200 OK\r\nContent-Length: 16\r\n\r\n0123456789abcdef"
        };
        if tls.write_all(answer).and_then(|()| tls.flush()).is_err() {
            return;
        }
        if close {
            tls.conn.send_close_notify();
            let _ = tls.conn.complete_io(&mut tls.sock);
            return;
        }
    }
}
