//! Request bodies: `--method POST|PUT|PATCH|DELETE` with `--body`, or a body
//! per URL in `--urls`; each arrives whole, framed by its `Content-Length`.

use std::sync::Arc;

use crate::support::{Behavior, TinyServer, closed};
use servelab_load::{Method, Target};

fn body(n: usize) -> Arc<[u8]> {
    (0..n).map(|i| (i % 251) as u8).collect::<Vec<u8>>().into()
}

#[test]
fn a_post_body_arrives_whole_on_every_request() {
    let server = TinyServer::start(Behavior::Ok(2));
    let mut spec = closed(&server.url(), 2, None, 20);
    spec.method = Method::Post;
    spec.body = Some(body(1000));
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!((r.counts.ok, r.counts.errors), (20, 0), "{:?}", r.errors);
    let seen = server.bodies.lock().unwrap();
    assert_eq!(seen.len(), 20);
    for (method, b) in seen.iter() {
        assert_eq!((method.as_str(), &b[..]), ("POST", &body(1000)[..]));
    }
    assert_eq!(r.run.method, "POST");
    assert_eq!(r.run.body_bytes, vec![1000]);
}

#[test]
fn a_body_larger_than_the_socket_buffer_arrives_whole() {
    // 3 MiB: more than one send, so the rest of the body goes out on EPOLLOUT.
    let server = TinyServer::start(Behavior::Ok(2));
    let mut spec = closed(&server.url(), 1, Some(2), 3);
    spec.method = Method::Put;
    spec.body = Some(body(3 << 20));
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!((r.counts.ok, r.counts.errors), (3, 0), "{:?}", r.errors);
    let seen = server.bodies.lock().unwrap();
    assert!(
        seen.iter()
            .all(|(m, b)| m == "PUT" && b[..] == body(3 << 20)[..])
    );
    assert_eq!(seen.len(), 3);
}

#[test]
fn each_url_of_a_url_file_carries_its_own_body() {
    let server = TinyServer::start(Behavior::Ok(2));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), b"{\"a\":1}").unwrap();
    std::fs::write(dir.path().join("b.json"), b"{\"b\":22}").unwrap();
    let base = format!("http://{}", server.addr);
    std::fs::write(
        dir.path().join("urls"),
        format!("{base}/a @a.json\n{base}/b 1 @b.json\n{base}/c\n"),
    )
    .unwrap();
    let mut spec = closed(&server.url(), 3, None, 60);
    spec.targets = servelab_load::read_url_file(&dir.path().join("urls")).unwrap();
    spec.method = Method::Patch;
    spec.body = Some(Arc::from(&b"default"[..]));
    let r = servelab_load::run(&spec).unwrap();
    assert_eq!(r.counts.ok, 60, "{:?}", r.errors);
    assert_eq!(r.run.body_bytes, vec![7, 8, 7]);
    let paths = server.paths.lock().unwrap();
    let seen = server.bodies.lock().unwrap();
    assert_eq!(paths.len(), 60);
    for (path, (_, b)) in paths.iter().zip(seen.iter()) {
        let want: &[u8] = match path.as_str() {
            "/a" => b"{\"a\":1}",
            "/b" => b"{\"b\":22}",
            _ => b"default",
        };
        assert_eq!(&b[..], want, "{path}");
    }
}

#[test]
fn a_post_lost_to_a_keep_alive_close_is_not_sent_again_but_a_put_is() {
    // RFC 9112 9.3.1: only idempotent requests are retried automatically.
    for (method, retried) in [(Method::Post, false), (Method::Put, true)] {
        let server = TinyServer::start(Behavior::CloseReused);
        let mut spec = closed(&server.url(), 1, None, 4);
        spec.method = method;
        spec.body = Some(body(10));
        let r = servelab_load::run(&spec).unwrap();
        if retried {
            assert_eq!((r.counts.ok, r.counts.close_retries), (4, 3), "{method:?}");
        } else {
            assert_eq!(r.counts.close_retries, 0, "{method:?}");
            assert_eq!(
                r.errors.closed + r.errors.reset,
                2,
                "{method:?}: {:?}",
                r.errors
            );
        }
    }
}

#[test]
fn a_body_needs_a_method_that_takes_one() {
    let mut spec = closed("http://127.0.0.1:1/", 1, None, 1);
    spec.body = Some(body(3));
    let e = servelab_load::run(&spec).unwrap_err().to_string();
    assert!(
        e.contains("needs --method POST, PUT, PATCH or DELETE, not GET"),
        "{e}"
    );
    let mut spec = closed("http://127.0.0.1:1/", 1, None, 1);
    spec.method = Method::Head;
    spec.targets = vec![Target {
        body: Some(body(3)),
        ..Target::new("http://127.0.0.1:1/")
    }];
    assert!(servelab_load::run(&spec).is_err());
}
