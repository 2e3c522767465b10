//! A per-worker cache of open files, their metadata and small bodies.
//!
//! Without it every request costs `openat2`, `fstat`, `read` and `close` on top
//! of the socket's read and write: four of six syscalls. With it a hot file
//! costs none, and a small body is copied from memory behind the head.
//!
//! Freshness: an entry is trusted for [`REVALIDATE`] (one second, like nginx's
//! `open_file_cache_valid`), then the path is opened and `fstat`ed again and the
//! entry kept only if device, inode, size and mtime (to the nanosecond) all
//! match. So a changed, replaced or deleted file is noticed within a second, at
//! the price of at most one `openat2` + `fstat` + `close` per file per second.
//! inotify would notice at once but needs a watch per directory, a descriptor
//! per worker and a read in every event loop; for a lab server a one-second
//! window is the simpler honest bound. Permissions are rechecked at the same
//! moment (the reopen fails with 403 then).
//!
//! The cache belongs to one worker (no lock, no sharing). It holds at most
//! [`MAX_ENTRIES`] descriptors and is simply emptied when full: the working set
//! of a static site is small, and a scan over a huge tree should not pin
//! thousands of descriptors.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use servelab_http::conditional::ETag;

use crate::files::{FileError, Opened, Root};

/// How long an entry is served without looking at the file system again.
pub(crate) const REVALIDATE: Duration = Duration::from_secs(1);
/// Most entries (and so descriptors) one worker keeps.
pub(crate) const MAX_ENTRIES: usize = 256;
/// Bodies up to this size are kept in memory and sent behind the head in one
/// write; larger ones go by `sendfile` from the cached descriptor.
pub(crate) const INLINE_BODY: u64 = 16 * 1024;

/// One cached path.
#[derive(Debug)]
pub(crate) enum Entry {
    /// A directory (the handler serves its `index.html` or redirects).
    Dir { checked: Instant },
    /// A regular file.
    File(CachedFile),
}

/// A regular file and everything its response head needs.
#[derive(Debug)]
pub(crate) struct CachedFile {
    /// Shared with responses in flight, so an evicted entry's descriptor stays
    /// open until the last `sendfile` from it is done.
    pub(crate) file: Arc<File>,
    pub(crate) len: u64,
    pub(crate) mtime: SystemTime,
    pub(crate) etag: ETag,
    pub(crate) last_modified: [u8; 29],
    /// The whole body when it is at most [`INLINE_BODY`] bytes.
    pub(crate) bytes: Option<Box<[u8]>>,
    ino: (u64, u64),
    checked: Instant,
}

/// A worker's open-file cache.
#[derive(Debug, Default)]
pub(crate) struct FileCache {
    map: HashMap<Box<str>, Entry>,
}

impl FileCache {
    /// What `rel` names now, at most [`REVALIDATE`] old.
    pub(crate) fn open(&mut self, root: &Root, rel: &str) -> Result<&Entry, FileError> {
        let now = Instant::now();
        // Two lookups instead of one because a borrow returned from the first
        // would outlive the insert below (a known borrow-checker limitation).
        let fresh = match self.map.get(rel) {
            Some(Entry::Dir { checked }) => now.duration_since(*checked) < REVALIDATE,
            Some(Entry::File(f)) => now.duration_since(f.checked) < REVALIDATE,
            None => false,
        };
        if !fresh {
            self.refresh(root, rel, now)?;
        }
        Ok(self.map.get(rel).expect("refreshed above"))
    }

    fn refresh(&mut self, root: &Root, rel: &str, now: Instant) -> Result<(), FileError> {
        let opened = match root.open_path(rel) {
            Ok(o) => o,
            Err(e) => {
                self.map.remove(rel);
                return Err(e);
            }
        };
        let entry = match opened {
            Opened::Dir => Entry::Dir { checked: now },
            Opened::File(f) => {
                let ino = f.ino;
                if let Some(Entry::File(old)) = self.map.get_mut(rel)
                    && old.ino == ino
                    && old.len == f.len
                    && old.mtime == f.mtime
                {
                    // Unchanged: keep the old descriptor and bytes, drop the new one.
                    old.checked = now;
                    return Ok(());
                }
                let bytes = if f.len <= INLINE_BODY {
                    let mut buf = vec![0; f.len as usize].into_boxed_slice();
                    // A file that shrank under us is read again at the next
                    // check; until then it is served by sendfile, which comes
                    // up short and closes the connection (as without a cache).
                    f.file.read_exact_at(&mut buf, 0).ok().map(|()| buf)
                } else {
                    None
                };
                Entry::File(CachedFile {
                    etag: ETag::new(f.len, f.mtime),
                    last_modified: servelab_http::date::fmt_http_date(f.mtime),
                    file: Arc::new(f.file),
                    len: f.len,
                    mtime: f.mtime,
                    bytes,
                    ino,
                    checked: now,
                })
            }
        };
        if self.map.len() >= MAX_ENTRIES && !self.map.contains_key(rel) {
            self.map.clear();
        }
        match self.map.get_mut(rel) {
            Some(slot) => *slot = entry,
            None => {
                self.map.insert(rel.into(), entry);
            }
        }
        Ok(())
    }

    /// Makes every entry due for a check (tests use it instead of waiting).
    #[cfg(test)]
    pub(crate) fn expire(&mut self) {
        let long_ago = Instant::now() - REVALIDATE * 2;
        for e in self.map.values_mut() {
            match e {
                Entry::Dir { checked } => *checked = long_ago,
                Entry::File(f) => f.checked = long_ago,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(e: &Entry) -> &CachedFile {
        match e {
            Entry::File(f) => f,
            Entry::Dir { .. } => panic!("expected a file"),
        }
    }

    #[test]
    fn notices_changed_replaced_and_deleted_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.txt");
        std::fs::write(&p, "one").unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        assert_eq!(
            file(cache.open(&root, "a.txt").unwrap()).bytes.as_deref(),
            Some(&b"one"[..])
        );
        assert!(matches!(cache.open(&root, "d").unwrap(), Entry::Dir { .. }));

        // Within the window the cached bytes are served, as documented.
        std::fs::write(&p, "two!").unwrap();
        assert_eq!(file(cache.open(&root, "a.txt").unwrap()).len, 3);
        cache.expire();
        let f = file(cache.open(&root, "a.txt").unwrap());
        assert_eq!(f.bytes.as_deref(), Some(&b"two!"[..]));
        assert_eq!(f.len, 4);

        // Replaced by rename with the same size: a new inode.
        let tmp = dir.path().join("tmp");
        std::fs::write(&tmp, "TWO!").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        cache.expire();
        assert_eq!(
            file(cache.open(&root, "a.txt").unwrap()).bytes.as_deref(),
            Some(&b"TWO!"[..])
        );

        std::fs::remove_file(&p).unwrap();
        cache.expire();
        assert!(matches!(
            cache.open(&root, "a.txt"),
            Err(FileError::NotFound)
        ));
    }

    #[test]
    fn unchanged_file_keeps_its_descriptor_and_large_ones_have_no_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![7u8; 100_000]).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let first = Arc::clone(&file(cache.open(&root, "big").unwrap()).file);
        assert!(file(cache.open(&root, "big").unwrap()).bytes.is_none());
        cache.expire();
        let again = &file(cache.open(&root, "big").unwrap()).file;
        assert!(Arc::ptr_eq(&first, again));
    }

    #[test]
    fn stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_ENTRIES + 10 {
            std::fs::write(dir.path().join(i.to_string()), "x").unwrap();
        }
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        for i in 0..MAX_ENTRIES + 10 {
            cache.open(&root, &i.to_string()).unwrap();
            assert!(cache.map.len() <= MAX_ENTRIES);
        }
    }
}
