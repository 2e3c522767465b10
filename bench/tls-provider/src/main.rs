//! Times `N` client+server handshakes in memory for each rustls crypto provider
//! and prints the CPU per handshake (this thread's CPU clock: both ends run on
//! it, so the figure is client + server).

use std::sync::Arc;
use std::time::Duration;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

fn cpu() -> Duration {
    let mut t = libc_timespec();
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { clock_gettime(3, &mut t) }; // CLOCK_THREAD_CPUTIME_ID
    Duration::new(t.0 as u64, t.1 as u32)
}
#[repr(C)]
struct Ts(i64, i64);
fn libc_timespec() -> Ts {
    Ts(0, 0)
}
unsafe extern "C" {
    fn clock_gettime(clk: i32, ts: *mut Ts) -> i32;
}

fn pump(c: &mut ClientConnection, s: &mut ServerConnection) {
    let mut buf = Vec::new();
    loop {
        let mut moved = false;
        while c.wants_write() {
            buf.clear();
            c.write_tls(&mut buf).unwrap();
            s.read_tls(&mut &buf[..]).unwrap();
            s.process_new_packets().unwrap();
            moved = true;
        }
        while s.wants_write() {
            buf.clear();
            s.write_tls(&mut buf).unwrap();
            c.read_tls(&mut &buf[..]).unwrap();
            c.process_new_packets().unwrap();
            moved = true;
        }
        if !moved {
            break;
        }
    }
    assert!(!c.is_handshaking() && !s.is_handshaking());
}

fn run(name: &str, p: CryptoProvider, n: usize) {
    let p = Arc::new(p);
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".into()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let der: CertificateDer<'static> = cert.der().clone();
    let mut roots = RootCertStore::empty();
    roots.add(der.clone()).unwrap();
    for (label, versions) in [
        ("TLS1.3", &[&rustls::version::TLS13][..]),
        ("TLS1.2", &[&rustls::version::TLS12][..]),
    ] {
        let server = Arc::new(
            ServerConfig::builder_with_provider(p.clone())
                .with_protocol_versions(versions)
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(
                    vec![der.clone()],
                    PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
                )
                .unwrap(),
        );
        for resume in [false, true] {
            let mut cc = ClientConfig::builder_with_provider(p.clone())
                .with_protocol_versions(versions)
                .unwrap()
                .with_root_certificates(roots.clone())
                .with_no_client_auth();
            if !resume {
                cc.resumption = rustls::client::Resumption::disabled();
            }
            let cc = Arc::new(cc);
            let name_ = ServerName::try_from("localhost").unwrap();
            // Warm up (and prime the session cache).
            for _ in 0..50 {
                let mut c = ClientConnection::new(cc.clone(), name_.clone()).unwrap();
                let mut s = ServerConnection::new(server.clone()).unwrap();
                pump(&mut c, &mut s);
            }
            let t0 = cpu();
            for _ in 0..n {
                let mut c = ClientConnection::new(cc.clone(), name_.clone()).unwrap();
                let mut s = ServerConnection::new(server.clone()).unwrap();
                pump(&mut c, &mut s);
            }
            let per = (cpu() - t0) / n as u32;
            println!(
                "{name:8} {label} {:8} {:>7.1} us CPU per handshake (client+server, n={n})",
                if resume { "resumed" } else { "full" },
                per.as_secs_f64() * 1e6
            );
        }
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(2000, |s| s.parse().unwrap());
    for _ in 0..3 {
        run("ring", rustls::crypto::ring::default_provider(), n);
        run("aws-lc-rs", rustls::crypto::aws_lc_rs::default_provider(), n);
    }
}
