//! The cache of compressed bodies: bounded in bytes and in entries, least
//! recently used out first.
//!
//! A key names one version of one file in one coding: device and inode, size and
//! mtime to the nanosecond (what the file cache compares to notice a change),
//! the `Content-Type` (two hard links with different extensions share an inode
//! but not a type) and the coding. A changed file has a new key, so its old body
//! can never be found for it: it simply ages out.
//!
//! Recency is a counter stamped on every hit. Eviction looks for the smallest
//! stamp by scanning every entry: O(entries), at most [`MAX_ENTRIES`], but paid
//! only on an insert, which follows a compression that costs far more (tens of
//! microseconds at least); a hit stays one hash lookup.

use std::hash::BuildHasher;
use std::sync::Arc;
use std::time::SystemTime;

use hashbrown::hash_table::HashTable;
use servelab_http::encoding::Coding;

use super::Encoded;

/// Most bytes of compressed bodies kept (per process: see `compress.rs`).
/// 32 MiB holds a typical site's text compressed three ways many times over;
/// with prefork it is held once per worker process.
pub(crate) const MAX_BYTES: usize = 32 * 1024 * 1024;
/// Most entries kept, whatever their size.
pub(crate) const MAX_ENTRIES: usize = 1024;
/// What an entry costs besides its body: the key, the head fields, the
/// allocation headers; counted so that a thousand tiny bodies are not free.
const ENTRY_OVERHEAD: usize = 256;

/// One version of one file in one coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub(crate) ino: (u64, u64),
    pub(crate) len: u64,
    pub(crate) mtime: SystemTime,
    pub(crate) content_type: &'static str,
    pub(crate) coding: Coding,
}

#[derive(Debug)]
struct Slot {
    key: Key,
    body: Arc<Encoded>,
    /// [`Store::tick`] at the last hit or the insert.
    used: u64,
}

/// The bounded map from [`Key`] to compressed body.
#[derive(Default)]
pub(crate) struct Store {
    table: HashTable<Slot>,
    hasher: foldhash::fast::RandomState,
    /// Bytes counted against [`MAX_BYTES`].
    bytes: usize,
    tick: u64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("entries", &self.table.len())
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

fn cost(body: &Encoded) -> usize {
    usize::try_from(body.len).unwrap_or(usize::MAX) + ENTRY_OVERHEAD
}

impl Store {
    /// The body for `key`, marked as just used.
    pub(crate) fn get(&mut self, key: &Key) -> Option<Arc<Encoded>> {
        let hash = self.hasher.hash_one(key);
        self.tick += 1;
        let tick = self.tick;
        let slot = self.table.find_mut(hash, |s| s.key == *key)?;
        slot.used = tick;
        Some(Arc::clone(&slot.body))
    }

    /// Keeps `body` for `key` (replacing one already there: two workers that
    /// missed at once made the same bytes), evicting the least recently used
    /// until both bounds hold. A body larger than [`MAX_BYTES`] is not kept.
    pub(crate) fn insert(&mut self, key: Key, body: Arc<Encoded>) {
        let cost = cost(&body);
        if cost > MAX_BYTES {
            return;
        }
        self.remove(&key);
        while self.table.len() >= MAX_ENTRIES || self.bytes + cost > MAX_BYTES {
            if !self.evict_oldest() {
                break;
            }
        }
        self.tick += 1;
        self.bytes += cost;
        let hasher = &self.hasher;
        self.table.insert_unique(
            hasher.hash_one(key),
            Slot {
                key,
                body,
                used: self.tick,
            },
            |s| hasher.hash_one(s.key),
        );
    }

    fn remove(&mut self, key: &Key) {
        let hash = self.hasher.hash_one(key);
        if let Ok(entry) = self.table.find_entry(hash, |s| s.key == *key) {
            let (slot, _) = entry.remove();
            self.bytes -= cost(&slot.body);
        }
    }

    /// Drops the least recently used entry; false when there is none.
    fn evict_oldest(&mut self) -> bool {
        let Some(oldest) = self.table.iter().min_by_key(|s| s.used).map(|s| s.key) else {
            return false;
        };
        self.remove(&oldest);
        true
    }

    /// Entries and bytes held (for tests).
    #[cfg(test)]
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.table.len(), self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::content::compress::Stored;

    fn key(n: u64, coding: Coding) -> Key {
        Key {
            ino: (1, n),
            len: 10,
            mtime: UNIX_EPOCH + Duration::from_nanos(n),
            content_type: "text/plain",
            coding,
        }
    }

    fn body(len: usize) -> Arc<Encoded> {
        Arc::new(Encoded::new(
            Coding::Gzip,
            Stored::Inline(vec![0; len].into_boxed_slice()),
            "text/plain",
            &[b'x'; 29],
            servelab_http::conditional::ETag::new(1, UNIX_EPOCH),
        ))
    }

    #[test]
    fn finds_by_the_whole_key() {
        let mut s = Store::default();
        s.insert(key(1, Coding::Gzip), body(5));
        assert!(s.get(&key(1, Coding::Gzip)).is_some());
        assert!(s.get(&key(1, Coding::Br)).is_none());
        assert!(s.get(&key(2, Coding::Gzip)).is_none());
        let mut other_type = key(1, Coding::Gzip);
        other_type.content_type = "text/html";
        assert!(s.get(&other_type).is_none());
        let mut changed = key(1, Coding::Gzip);
        changed.mtime += Duration::from_nanos(1);
        assert!(s.get(&changed).is_none(), "a new mtime is a new version");
        // Inserting the same key again replaces, and counts once.
        s.insert(key(1, Coding::Gzip), body(5));
        assert_eq!(s.size(), (1, 5 + ENTRY_OVERHEAD));
    }

    #[test]
    fn entries_are_bounded_and_the_least_recently_used_goes() {
        let mut s = Store::default();
        for n in 0..MAX_ENTRIES as u64 {
            s.insert(key(n, Coding::Gzip), body(1));
        }
        // Entry 0 was used last: entry 1 is now the oldest.
        assert!(s.get(&key(0, Coding::Gzip)).is_some());
        s.insert(key(9999, Coding::Gzip), body(1));
        assert_eq!(s.size().0, MAX_ENTRIES);
        assert!(s.get(&key(0, Coding::Gzip)).is_some());
        assert!(s.get(&key(1, Coding::Gzip)).is_none());
        assert!(s.get(&key(2, Coding::Gzip)).is_some());
    }

    #[test]
    fn bytes_are_bounded() {
        let mut s = Store::default();
        let big = MAX_BYTES / 3;
        for n in 0..10 {
            s.insert(key(n, Coding::Gzip), body(big));
            assert!(s.size().1 <= MAX_BYTES, "{n}: {:?}", s.size());
        }
        assert_eq!(s.size().0, 2);
        assert!(s.get(&key(9, Coding::Gzip)).is_some());
        assert!(s.get(&key(8, Coding::Gzip)).is_some());
        // Too large to keep at all.
        s.insert(key(77, Coding::Gzip), body(MAX_BYTES));
        assert!(s.get(&key(77, Coding::Gzip)).is_none());
        assert_eq!(s.size().0, 2);
    }
}
