//! `serve --compress`: text responses compressed on the fly, once per file
//! version, coding and process.
//!
//! What is compressed: a whole-file `200` (or its `HEAD`) of a type
//! `servelab_http::encoding::compressible` lists, of [`MIN_LEN`] to [`MAX_LEN`]
//! bytes, when `Accept-Encoding` prefers gzip, brotli or zstd
//! (`servelab_http::encoding::negotiate_compress`; a precompressed sibling on
//! disk wins on equal weights). Never a `Range` request: it gets the plain file
//! and the plain file's validators, since byte ranges of a compressed body are
//! ranges of a different representation that the client cannot resume into.
//! Every response for such a file says `Vary: Accept-Encoding`, the plain ones
//! too, so that a shared cache keeps the two apart.
//!
//! The ETag of a compressed body is the plain file's with the coding appended
//! (`"1a2-17a2…-gzip"`, as Apache's mod_deflate does and as the precompressed
//! siblings here do): RFC 9110 8.8.3 asks for a distinct tag per content coding.
//! It stays strong because the bytes are a function of the file's bytes
//! ([`codec`] is deterministic). It is known before compressing, but the
//! handler compresses (or finds the body) first all the same: the `Content-Length`
//! of a `HEAD` needs it, and a later 304 is a cache hit anyway.
//!
//! Layout:
//! - [`codec`]: the encoders and their levels;
//! - [`store`]: the bounded cache of compressed bodies;
//! - here: the size bounds, the compressed body ([`Encoded`]) and [`Compressor`],
//!   which finds or makes one.
//!
//! # One cache per server process, under a lock
//! The thread engines (thread, pool, async, reactor, event, epoll, serial)
//! share one [`Compressor`] under a mutex: `thread` makes a worker context per
//! connection, so a per-worker cache would compress a hot file again for every
//! connection, and N workers would hold N copies. The lock is held for a hash
//! lookup and an `Arc` clone on a hit, never while compressing. Two workers that
//! miss the same key at once both compress it (the same bytes), bounded by the
//! number of workers; an event loop cannot wait for another's result anyway.
//! Processes cannot share a Rust heap: each prefork worker fills its own copy
//! (the server starts it empty before forking, and no thread of the parent ever
//! takes its lock), and a `fork` child, made per connection, has only its own
//! connection to serve from it.
//!
//! A miss compresses in the worker, blocking its connections for that time (as
//! nginx's gzip does in its event loop, for every response). At the levels of
//! [`codec`], a 64 KiB HTML page cost 1.2 ms of CPU in gzip, 4.5 ms in brotli
//! and 0.7 ms in zstd (`bench/compress.sh`, 2026-11-28, 20 files, on a shared
//! 2-core machine); [`MAX_LEN`] bounds it.

mod codec;
mod store;

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use servelab_http::FileFields;
use servelab_http::conditional::ETag;
use servelab_http::encoding::Coding;

use crate::content::cache::{CachedFile, INLINE_BODY};
use store::{Key, Store};

/// Smallest body compressed: 1 KiB. Below it the body and its head (about 250
/// bytes) fit in one TCP segment (1,460 bytes on Ethernet) anyway, so
/// compressing saves no packet and no round trip, only CPU at both ends; nginx's
/// `gzip_min_length` is 20 and Caddy's `minimum_length` 512, both set for
/// proxied dynamic responses rather than cached static ones.
pub(crate) const MIN_LEN: u64 = 1024;
/// Largest file compressed: 2 MiB. A miss holds the file and its compressed
/// body in memory at once and blocks the worker while it compresses: brotli 5
/// took 4.5 ms of CPU for 64 KiB (see the module docs), so about 150 ms at
/// 2 MiB and 0.6 s at 8 MiB, every connection of that event loop waiting. A
/// larger text file (a big bundle) is better compressed offline: its `X.br` or
/// `X.gz` beside it is served as it is. Beyond the bound the plain file goes
/// by `sendfile` and costs neither.
pub(crate) const MAX_LEN: u64 = 2 * 1024 * 1024;

/// Whether `--compress` may compress this file for a request without `Range`:
/// its type and its size.
pub(crate) fn eligible(file: &CachedFile) -> bool {
    file.compressible && (MIN_LEN..=MAX_LEN).contains(&file.len)
}

/// A compressed body and the fields of its `200`.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub(crate) coding: Coding,
    /// The plain file's tag with the coding appended.
    pub(crate) etag: ETag,
    /// `Content-Type`, `Last-Modified`, `ETag` and `Content-Length`, encoded
    /// once; no `Accept-Ranges` (see `FileFields::new_unranged`).
    pub(crate) fields: FileFields,
    pub(crate) len: u64,
    pub(crate) body: Stored,
}

/// Where a compressed body is kept.
#[derive(Debug)]
pub(crate) enum Stored {
    /// Up to `cache::INLINE_BODY` bytes: copied behind the head, as small files are.
    Inline(Box<[u8]>),
    /// Larger: a sealed memfd, sent by `sendfile` like a file, so that a
    /// connection's output buffer never grows to hold a large body.
    File(Arc<File>),
}

impl Encoded {
    pub(crate) fn new(
        coding: Coding,
        body: Stored,
        content_type: &str,
        last_modified: &[u8; 29],
        etag: ETag,
    ) -> Encoded {
        let len = match &body {
            Stored::Inline(b) => b.len() as u64,
            Stored::File(f) => f.metadata().map_or(0, |m| m.len()),
        };
        Encoded {
            coding,
            fields: FileFields::new_unranged(content_type, last_modified, etag.as_str(), len),
            etag,
            len,
            body,
        }
    }
}

/// Finds or makes compressed bodies: one per server, see the module docs.
#[derive(Debug, Default)]
pub(crate) struct Compressor {
    store: Mutex<Store>,
}

impl Compressor {
    /// The body of `file` in `coding`, from the cache or compressed now; `None`
    /// when it cannot be made (the file changed while it was read, or a read
    /// failed): the caller sends the plain file, which the file cache will
    /// look at again.
    pub(crate) fn get(&self, file: &CachedFile, coding: Coding) -> Option<Arc<Encoded>> {
        let key = Key {
            ino: file.ino,
            len: file.len,
            mtime: file.mtime,
            content_type: file.content_type,
            coding,
        };
        if let Some(hit) = self.lock().get(&key) {
            return Some(hit);
        }
        let body = Arc::new(compress(file, coding)?);
        self.lock().insert(key, Arc::clone(&body));
        Some(body)
    }

    /// The store, also after a worker panicked while holding it (its state is
    /// a map and two counters, consistent between any two statements).
    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Reads and compresses `file`. The bytes are checked to be the version the
/// key names: after the read, the descriptor must still show the size and
/// mtime the entry was made with; a write during the read changes the mtime.
fn compress(file: &CachedFile, coding: Coding) -> Option<Encoded> {
    let token = coding.token()?;
    let read;
    let input: &[u8] = match &file.bytes {
        Some(bytes) => bytes,
        None => {
            let mut buf = vec![0; usize::try_from(file.len).ok()?];
            file.file.read_exact_at(&mut buf, 0).ok()?;
            let meta = file.file.metadata().ok()?;
            if meta.len() != file.len || meta.modified().ok()? != file.mtime {
                return None;
            }
            read = buf;
            &read
        }
    };
    let compressed = match codec::encode(coding, input) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("servelab: cannot compress with {token}: {e}");
            return None;
        }
    };
    let body = if compressed.len() as u64 <= INLINE_BODY {
        Stored::Inline(compressed.into_boxed_slice())
    } else {
        match sealed_memfd(&compressed) {
            Ok(f) => Stored::File(Arc::new(f)),
            // No memfd (an old kernel, a seccomp filter): the bytes are copied
            // behind the head instead, which works, with a larger output buffer.
            Err(_) => Stored::Inline(compressed.into_boxed_slice()),
        }
    };
    let etag = ETag::encoded(file.len, file.mtime, token);
    Some(Encoded::new(
        coding,
        body,
        file.content_type,
        &file.last_modified,
        etag,
    ))
}

/// An anonymous in-memory file holding `bytes`, sealed against any change, so
/// that a response in flight reads exactly what its head announced.
fn sealed_memfd(bytes: &[u8]) -> std::io::Result<File> {
    use rustix::fs::{MemfdFlags, SealFlags};
    let fd = rustix::fs::memfd_create(
        "servelab-compressed",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    let mut file = File::from(fd);
    file.write_all(bytes)?;
    rustix::fs::fcntl_add_seals(
        &file,
        SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE,
    )?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::codec::tests::{decode, text};
    use super::*;
    use crate::content::cache::{Entry, FileCache};
    use crate::content::files::Root;

    fn cached<'c>(cache: &'c mut FileCache, root: &Root, name: &str) -> &'c CachedFile {
        match cache.open(root, name, Instant::now()).unwrap() {
            Entry::File(f) => f,
            Entry::Dir { .. } => panic!("{name} is a file"),
        }
    }

    fn body_of(e: &Encoded) -> Vec<u8> {
        match &e.body {
            Stored::Inline(b) => b.to_vec(),
            Stored::File(f) => {
                let mut buf = vec![0; e.len as usize];
                f.read_exact_at(&mut buf, 0).unwrap();
                buf
            }
        }
    }

    #[test]
    fn compresses_once_and_decodes_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        // One body kept inline, one large enough for a memfd.
        let small = text(4_000);
        let large = text(300_000);
        std::fs::write(dir.path().join("s.html"), &small).unwrap();
        std::fs::write(dir.path().join("l.js"), &large).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let c = Compressor::default();
        for (name, plain) in [("s.html", &small), ("l.js", &large)] {
            let f = cached(&mut cache, &root, name);
            assert!(eligible(f), "{name}");
            for coding in Coding::ENCODED {
                let e = c.get(f, coding).unwrap();
                assert_eq!(decode(coding, &body_of(&e)), *plain, "{name} {coding:?}");
                assert_eq!(e.coding, coding);
                let tag = format!("-{}\"", coding.token().unwrap());
                assert!(e.etag.as_str().ends_with(&tag), "{:?}", e.etag);
                assert_eq!(
                    e.etag.as_str().strip_suffix(&tag),
                    f.etag.as_str().strip_suffix('"')
                );
                // The second time is the same body, not a new one.
                assert!(Arc::ptr_eq(&e, &c.get(f, coding).unwrap()));
            }
        }
        let f = cached(&mut cache, &root, "l.js");
        assert!(matches!(
            c.get(f, Coding::Gzip).unwrap().body,
            Stored::File(_)
        ));
        assert_eq!(c.lock().size().0, 6);
    }

    /// A file rewritten in place is compressed again from its new bytes: the key
    /// holds its size and mtime, so the old body cannot be found for it.
    #[test]
    fn a_changed_file_is_compressed_again() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        let one = text(50_000);
        std::fs::write(&p, &one).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let c = Compressor::default();
        let first = c
            .get(cached(&mut cache, &root, "a.txt"), Coding::Br)
            .unwrap();
        let mut two = one.clone();
        two[10..20].copy_from_slice(b"CHANGED!!!");
        std::fs::write(&p, &two).unwrap();
        cache.expire();
        let f = cached(&mut cache, &root, "a.txt");
        let second = c.get(f, Coding::Br).unwrap();
        assert_eq!(decode(Coding::Br, &body_of(&second)), two);
        assert_ne!(first.etag, second.etag);
    }

    /// The file cache still holds the old size and time (within its
    /// one-second window) while the file has changed: nothing is compressed
    /// under the old key.
    #[test]
    fn bytes_of_another_version_are_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, text(40_000)).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let c = Compressor::default();
        let f = cached(&mut cache, &root, "a.txt");
        std::fs::write(&p, text(40_001)).unwrap();
        assert!(c.get(f, Coding::Gzip).is_none());
        assert_eq!(c.lock().size().0, 0);
    }

    #[test]
    fn only_text_within_the_size_bounds_is_eligible() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("small.txt"), text(MIN_LEN as usize - 1)).unwrap();
        std::fs::write(p.join("min.txt"), text(MIN_LEN as usize)).unwrap();
        std::fs::write(p.join("pic.png"), text(5_000)).unwrap();
        std::fs::write(p.join("data.bin"), text(5_000)).unwrap();
        std::fs::write(p.join("d.json"), text(5_000)).unwrap();
        let big = File::create(p.join("huge.txt")).unwrap();
        big.set_len(MAX_LEN + 1).unwrap();
        let root = Root::open(p).unwrap();
        let mut cache = FileCache::default();
        for (name, want) in [
            ("small.txt", false),
            ("min.txt", true),
            ("pic.png", false),
            ("data.bin", false),
            ("d.json", true),
            ("huge.txt", false),
        ] {
            assert_eq!(eligible(cached(&mut cache, &root, name)), want, "{name}");
        }
    }
}
