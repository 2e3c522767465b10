//! A per-worker cache of open files, their metadata and small bodies.
//!
//! Without it every request costs `openat2`, `fstat`, `read` and `close` on top
//! of the socket's read and write: four of six syscalls. With it a hot file
//! costs none, and a small body is copied from memory behind the head. The
//! fields of its `200` that depend only on the file (`Content-Type`,
//! `Last-Modified`, `ETag`, `Accept-Ranges`) are encoded once, into the entry
//! (`servelab_http::FileFields`), and a hit is one hash and one probe.
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
//! Precompressed siblings (`X.br`, `X.zst`, `X.gz`, see `servelab_http::encoding`)
//! are looked for when `X` itself is opened or revalidated, and kept inside
//! `X`'s entry with their own descriptor, validators and small body. So a file
//! without siblings costs nothing more per request once cached (the three
//! failed `openat2` happen at most once per [`REVALIDATE`] per file, never per
//! request), and one with siblings costs no extra lookup either: the handler
//! picks the representation from the entry it already holds. A sibling that
//! appears, changes or disappears is noticed at `X`'s next revalidation.
//!
//! The cache belongs to one worker (no lock, no sharing). It holds at most
//! [`MAX_ENTRIES`] descriptors and is simply emptied when full: the working set
//! of a static site is small, and a scan over a huge tree should not pin
//! thousands of descriptors.

use std::fs::File;
use std::hash::BuildHasher;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use hashbrown::hash_table::HashTable;
use servelab_http::FileFields;
use servelab_http::conditional::ETag;
use servelab_http::encoding::{Available, Coding};

use crate::content::files::{FileError, OpenFile, Opened, Root};

/// How long an entry is served without looking at the file system again.
pub(crate) const REVALIDATE: Duration = Duration::from_secs(1);
/// Most entries (and so descriptors) one worker keeps.
pub(crate) const MAX_ENTRIES: usize = 256;
/// Bodies up to this size are kept in memory and sent behind the head in one
/// write; larger ones go by `sendfile` from the cached descriptor.
pub(crate) const INLINE_BODY: u64 = 16 * 1024;

/// One cached path.
// A directory's entry is as large as a file's: there are at most
// `MAX_ENTRIES` of them, and boxing the file would add a pointer to follow
// on every hit.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Entry {
    /// A directory (the handler serves its `index.html` or redirects).
    Dir {
        /// Trusted until then, see [`fresh_until`].
        fresh_until: Instant,
    },
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
    /// The `Content-Type` by the name asked for (for an encoded sibling, the
    /// name of the file it encodes), looked up once per entry, not per
    /// response.
    pub(crate) content_type: &'static str,
    /// `Content-Type`, `Last-Modified`, `ETag` and `Accept-Ranges` of its
    /// `200`, encoded once here rather than in every response.
    pub(crate) fields: FileFields,
    /// The whole body when it is at most [`INLINE_BODY`] bytes.
    pub(crate) bytes: Option<Box<[u8]>>,
    /// The precompressed siblings that exist, in `Coding::ENCODED` order
    /// (always empty for a sibling itself).
    pub(crate) encoded: [Option<Box<CachedFile>>; 3],
    /// Which of `encoded` are present, for `servelab_http::negotiate`.
    pub(crate) available: Available,
    /// Whether `--compress` would compress its type
    /// (`servelab_http::encoding::compressible`), decided once per entry.
    pub(crate) compressible: bool,
    /// Device and inode: with size and mtime, the version of the file that
    /// `compress.rs` keys its bodies by.
    pub(crate) ino: (u64, u64),
    /// Trusted until then, see [`fresh_until`].
    fresh_until: Instant,
}

impl CachedFile {
    fn new(f: OpenFile, rel: &str, coding: Coding, now: Instant) -> CachedFile {
        let bytes = if f.len <= INLINE_BODY {
            let mut buf = vec![0; f.len as usize].into_boxed_slice();
            // A file that shrank under us is read again at the next
            // check; until then it is served by sendfile, which comes
            // up short and closes the connection (as without a cache).
            f.file.read_exact_at(&mut buf, 0).ok().map(|()| buf)
        } else {
            None
        };
        let etag = match coding.token() {
            None => ETag::new(f.len, f.mtime),
            Some(token) => ETag::encoded(f.len, f.mtime, token),
        };
        let last_modified = servelab_http::date::fmt_http_date(f.mtime);
        let content_type = servelab_http::mime::content_type(rel);
        CachedFile {
            fields: FileFields::new(content_type, &last_modified, etag.as_str(), f.len),
            etag,
            last_modified,
            content_type,
            file: Arc::new(f.file),
            len: f.len,
            mtime: f.mtime,
            bytes,
            encoded: Default::default(),
            available: Available::NONE,
            compressible: coding == Coding::Identity
                && servelab_http::encoding::compressible(content_type),
            ino: f.ino,
            fresh_until: fresh_until(now),
        }
    }

    /// Same file, same size, same time to the nanosecond: keep what we have.
    fn unchanged(&self, f: &OpenFile) -> bool {
        self.ino == f.ino && self.len == f.len && self.mtime == f.mtime
    }

    /// The representation for `coding`: this file for identity, else the
    /// sibling (which must be in `available`).
    pub(crate) fn representation(&self, coding: Coding) -> Option<&CachedFile> {
        match Coding::ENCODED.iter().position(|&c| c == coding) {
            None => Some(self),
            Some(i) => self.encoded[i].as_deref(),
        }
    }
}

/// The end of the [`REVALIDATE`] window of an entry checked at `now`. Kept in
/// the entry, so that a hit costs one comparison of instants rather than a
/// subtraction (`duration_since` was 0.9% of a keep-alive request's
/// instructions under callgrind).
fn fresh_until(now: Instant) -> Instant {
    // An instant a second short of the end of time is never, but if it were,
    // the entry would simply be checked at every request.
    now.checked_add(REVALIDATE).unwrap_or(now)
}

/// Looks for `rel`'s precompressed siblings, keeping the unchanged ones of `old`.
fn probe_encoded(
    root: &Root,
    rel: &str,
    mut old: [Option<Box<CachedFile>>; 3],
    now: Instant,
) -> ([Option<Box<CachedFile>>; 3], Available) {
    let mut out: [Option<Box<CachedFile>>; 3] = Default::default();
    let mut available = Available::NONE;
    let mut name = String::with_capacity(rel.len() + 4);
    for (i, coding) in Coding::ENCODED.into_iter().enumerate() {
        name.clear();
        name.push_str(rel);
        name.push_str(coding.suffix());
        // Anything but a readable regular file (missing, a directory, no
        // permission) means: no such representation.
        let Ok(Opened::File(f)) = root.open_path(&name) else {
            continue;
        };
        out[i] = Some(match old[i].take() {
            Some(mut kept) if kept.unchanged(&f) => {
                kept.fresh_until = fresh_until(now);
                kept
            }
            _ => Box::new(CachedFile::new(f, rel, coding, now)),
        });
        available = available.with(coding);
    }
    (out, available)
}

/// A worker's open-file cache.
///
/// Hashed with foldhash, not SipHash: the keys are the paths of files and
/// directories that exist under the root (a failed open inserts nothing), so
/// a client cannot grow the table with chosen keys, and the hasher's seed is
/// random per process all the same. SipHash was 1% of a keep-alive request's
/// CPU on `reactor`.
///
/// A `hashbrown::HashTable` rather than a `HashMap` for its `find_entry` on a
/// borrowed key: a hit is one hash and one probe, and the slot found is then
/// refreshed or removed; a miss keeps the table to insert into. With
/// `HashMap` a hit took two lookups, since
/// a borrow returned from the first would outlive the insert after it (a
/// known borrow-checker limitation).
#[derive(Default)]
pub(crate) struct FileCache {
    table: HashTable<(Box<str>, Entry)>,
    hasher: foldhash::fast::RandomState,
}

impl std::fmt::Debug for FileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileCache")
            .field("entries", &self.table.len())
            .finish_non_exhaustive()
    }
}

impl FileCache {
    /// What `rel` names as of `now` (an instant the caller has read), at most
    /// [`REVALIDATE`] old.
    pub(crate) fn open(
        &mut self,
        root: &Root,
        rel: &str,
        now: Instant,
    ) -> Result<&Entry, FileError> {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(rel);
        // `find_entry`, not `entry`: a hit (almost every request) only probes,
        // while `entry` first reserves room for an insert and looks for a free
        // slot as it probes (20 instructions of a keep-alive request under
        // callgrind, 2026-11-26). A miss opens a file anyway.
        match self.table.find_entry(hash, |(key, _)| **key == *rel) {
            Ok(mut slot) => {
                let entry = &mut slot.get_mut().1;
                if now >= entry.fresh_until()
                    && let Err(e) = revalidate(entry, root, rel, now)
                {
                    slot.remove();
                    return Err(e);
                }
                Ok(&slot.into_mut().1)
            }
            Err(absent) => {
                let opened = root.open_path(rel)?;
                let entry = new_entry(opened, root, rel, Default::default(), now);
                let table = absent.into_table();
                if table.len() >= MAX_ENTRIES {
                    table.clear();
                }
                let slot = table.insert_unique(hash, (rel.into(), entry), |(key, _)| {
                    hasher.hash_one(&**key)
                });
                Ok(&slot.into_mut().1)
            }
        }
    }

    /// Makes every entry due for a check (tests use it instead of waiting).
    #[cfg(test)]
    pub(crate) fn expire(&mut self) {
        let now = Instant::now();
        for (_, e) in self.table.iter_mut() {
            match e {
                Entry::Dir { fresh_until } => *fresh_until = now,
                Entry::File(f) => f.fresh_until = now,
            }
        }
    }
}

impl Entry {
    fn fresh_until(&self) -> Instant {
        match self {
            Entry::Dir { fresh_until } => *fresh_until,
            Entry::File(f) => f.fresh_until,
        }
    }
}

/// Checks a cached path again, in place: an unchanged file keeps its
/// descriptor and bytes (the new descriptor is closed), anything else is made
/// anew. Either way the siblings are looked for again, the unchanged ones kept.
fn revalidate(entry: &mut Entry, root: &Root, rel: &str, now: Instant) -> Result<(), FileError> {
    let opened = root.open_path(rel)?;
    let old_encoded = match entry {
        Entry::File(old) => std::mem::take(&mut old.encoded),
        Entry::Dir { .. } => Default::default(),
    };
    if let (Opened::File(f), Entry::File(old)) = (&opened, &mut *entry)
        && old.unchanged(f)
    {
        (old.encoded, old.available) = probe_encoded(root, rel, old_encoded, now);
        old.fresh_until = fresh_until(now);
        return Ok(());
    }
    *entry = new_entry(opened, root, rel, old_encoded, now);
    Ok(())
}

/// The entry for what `rel` was just opened as; `old_encoded`: the siblings
/// cached before, kept if unchanged.
fn new_entry(
    opened: Opened,
    root: &Root,
    rel: &str,
    old_encoded: [Option<Box<CachedFile>>; 3],
    now: Instant,
) -> Entry {
    match opened {
        Opened::Dir => Entry::Dir {
            fresh_until: fresh_until(now),
        },
        Opened::File(f) => {
            let (encoded, available) = probe_encoded(root, rel, old_encoded, now);
            let mut file = CachedFile::new(f, rel, Coding::Identity, now);
            file.encoded = encoded;
            file.available = available;
            Entry::File(file)
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
            file(cache.open(&root, "a.txt", Instant::now()).unwrap())
                .bytes
                .as_deref(),
            Some(&b"one"[..])
        );
        assert!(matches!(
            cache.open(&root, "d", Instant::now()).unwrap(),
            Entry::Dir { .. }
        ));

        // Within the window the cached bytes are served, as documented.
        std::fs::write(&p, "two!").unwrap();
        assert_eq!(
            file(cache.open(&root, "a.txt", Instant::now()).unwrap()).len,
            3
        );
        cache.expire();
        let f = file(cache.open(&root, "a.txt", Instant::now()).unwrap());
        assert_eq!(f.bytes.as_deref(), Some(&b"two!"[..]));
        assert_eq!(f.len, 4);

        // Replaced by rename with the same size: a new inode.
        let tmp = dir.path().join("tmp");
        std::fs::write(&tmp, "TWO!").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        cache.expire();
        assert_eq!(
            file(cache.open(&root, "a.txt", Instant::now()).unwrap())
                .bytes
                .as_deref(),
            Some(&b"TWO!"[..])
        );

        std::fs::remove_file(&p).unwrap();
        cache.expire();
        assert!(matches!(
            cache.open(&root, "a.txt", Instant::now()),
            Err(FileError::NotFound)
        ));
    }

    #[test]
    fn unchanged_file_keeps_its_descriptor_and_large_ones_have_no_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![7u8; 100_000]).unwrap();
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let first = Arc::clone(&file(cache.open(&root, "big", Instant::now()).unwrap()).file);
        assert!(
            file(cache.open(&root, "big", Instant::now()).unwrap())
                .bytes
                .is_none()
        );
        cache.expire();
        let again = &file(cache.open(&root, "big", Instant::now()).unwrap()).file;
        assert!(Arc::ptr_eq(&first, again));
    }

    #[test]
    fn precompressed_siblings_are_found_kept_and_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("app.js"), "plain").unwrap();
        std::fs::write(p.join("app.js.gz"), "gzipped").unwrap();
        std::fs::create_dir(p.join("app.js.br")).unwrap(); // not a file: ignored
        std::fs::write(p.join("solo.txt"), "x").unwrap();
        let root = Root::open(p).unwrap();
        let mut cache = FileCache::default();

        let solo = file(cache.open(&root, "solo.txt", Instant::now()).unwrap());
        assert!(solo.available.is_empty());
        assert!(solo.representation(Coding::Gzip).is_none());

        let f = file(cache.open(&root, "app.js", Instant::now()).unwrap());
        assert_eq!(f.available, Available::NONE.with(Coding::Gzip));
        let gz = f.representation(Coding::Gzip).unwrap();
        assert_eq!(gz.bytes.as_deref(), Some(&b"gzipped"[..]));
        assert!(gz.etag.as_str().ends_with("-gzip\""));
        assert_ne!(gz.etag, f.etag);
        assert!(std::ptr::eq(f.representation(Coding::Identity).unwrap(), f));
        let gz_fd = Arc::clone(&gz.file);

        // A new sibling shows at the next check; the unchanged one is kept.
        std::fs::write(p.join("app.js.zst"), "zstd!").unwrap();
        cache.expire();
        let f = file(cache.open(&root, "app.js", Instant::now()).unwrap());
        assert!(f.available.has(Coding::Zstd) && f.available.has(Coding::Gzip));
        assert!(Arc::ptr_eq(
            &gz_fd,
            &f.representation(Coding::Gzip).unwrap().file
        ));

        // Removed siblings go, also when the plain file changes.
        std::fs::remove_file(p.join("app.js.gz")).unwrap();
        std::fs::write(p.join("app.js"), "plain, longer").unwrap();
        cache.expire();
        let f = file(cache.open(&root, "app.js", Instant::now()).unwrap());
        assert_eq!(f.available, Available::NONE.with(Coding::Zstd));
        assert_eq!(f.len, 13);
        assert!(f.representation(Coding::Gzip).is_none());
    }

    /// A hit is found where it was put, also after the table has grown: no
    /// second entry, the same descriptor.
    #[test]
    fn hits_find_their_entry_after_the_table_grows() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..100).map(|i| format!("d{i}/f.txt")).collect();
        for name in &names {
            std::fs::create_dir(dir.path().join(name.split('/').next().unwrap())).unwrap();
            std::fs::write(dir.path().join(name), name).unwrap();
        }
        let root = Root::open(dir.path()).unwrap();
        let mut cache = FileCache::default();
        let first: Vec<Arc<File>> = names
            .iter()
            .map(|n| Arc::clone(&file(cache.open(&root, n, Instant::now()).unwrap()).file))
            .collect();
        for (name, fd) in names.iter().zip(&first) {
            let f = file(cache.open(&root, name, Instant::now()).unwrap());
            assert!(Arc::ptr_eq(fd, &f.file), "{name}");
            assert_eq!(f.bytes.as_deref(), Some(name.as_bytes()));
        }
        assert_eq!(cache.table.len(), names.len());
        // A path that went away leaves the table.
        std::fs::remove_file(dir.path().join(&names[7])).unwrap();
        cache.expire();
        assert!(matches!(
            cache.open(&root, &names[7], Instant::now()),
            Err(FileError::NotFound)
        ));
        assert_eq!(cache.table.len(), names.len() - 1);
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
            cache.open(&root, &i.to_string(), Instant::now()).unwrap();
            assert!(cache.table.len() <= MAX_ENTRIES);
        }
    }
}
