//! The HPACK static table (RFC 7541 Appendix A) and the dynamic table (§2.3.2, §4).
//!
//! The dynamic table is bounded by its maximum size in RFC 7541's own measure (name + value +
//! 32 per entry), which the decoder caps at the SETTINGS_HEADER_TABLE_SIZE we advertised; the
//! 32 octets of overhead per entry also bound the number of entries (128 at 4 KiB), so
//! neither many tiny entries nor one large one can grow it.

use std::collections::VecDeque;

/// RFC 7541 Appendix A, index 1 first.
pub static STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// RFC 7541's per-entry overhead (§4.1).
pub const ENTRY_OVERHEAD: usize = 32;

/// One dynamic entry: name and value.
type Entry = (Box<[u8]>, Box<[u8]>);

/// The dynamic table: newest entry first (index 62 in the combined index space).
#[derive(Debug, Clone)]
pub struct DynamicTable {
    entries: VecDeque<Entry>,
    size: usize,
    max: usize,
}

impl DynamicTable {
    /// An empty table of maximum size `max`.
    pub fn new(max: usize) -> Self {
        DynamicTable {
            entries: VecDeque::new(),
            size: 0,
            max,
        }
    }

    /// The current size in RFC 7541's measure.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The maximum size.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets the maximum size, evicting the oldest entries until the table fits (§4.3).
    pub fn set_max(&mut self, max: usize) {
        self.max = max;
        self.evict_to(max);
    }

    /// Adds an entry, evicting as needed; an entry larger than the whole table empties it and
    /// is not added (§4.4).
    pub fn insert(&mut self, name: &[u8], value: &[u8]) {
        let size = name.len() + value.len() + ENTRY_OVERHEAD;
        if size > self.max {
            self.entries.clear();
            self.size = 0;
            return;
        }
        self.evict_to(self.max - size);
        self.entries.push_front((name.into(), value.into()));
        self.size += size;
    }

    /// The combined indices (62 for the newest) of the newest entry that is
    /// `name` with `value`, and of the newest one that has `name`.
    pub fn find(&self, name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
        let mut named = None;
        for (i, (n, v)) in self.entries.iter().enumerate() {
            if &n[..] == name {
                if &v[..] == value {
                    return (Some(i + 62), named.or(Some(i + 62)));
                }
                named.get_or_insert(i + 62);
            }
        }
        (None, named)
    }

    /// The entry at combined index `index` (1-based; 1..=61 static, then dynamic).
    pub fn get(&self, index: usize) -> Option<(&[u8], &[u8])> {
        match index {
            0 => None,
            1..=61 => Some(STATIC[index - 1]),
            _ => self.entries.get(index - 62).map(|(n, v)| (&n[..], &v[..])),
        }
    }

    fn evict_to(&mut self, target: usize) {
        while self.size > target {
            let Some((n, v)) = self.entries.pop_back() else {
                break;
            };
            self.size -= n.len() + v.len() + ENTRY_OVERHEAD;
        }
    }
}

/// The index of the first static entry named `name`, by a match the compiler
/// turns into a length switch and a few comparisons (a scan of the 61 entries
/// cost a response's head more than the rest of its encoding).
pub fn static_name(name: &[u8]) -> Option<usize> {
    Some(match name {
        b":authority" => 1,
        b":method" => 2,
        b":path" => 4,
        b":scheme" => 6,
        b":status" => 8,
        b"accept-charset" => 15,
        b"accept-encoding" => 16,
        b"accept-language" => 17,
        b"accept-ranges" => 18,
        b"accept" => 19,
        b"access-control-allow-origin" => 20,
        b"age" => 21,
        b"allow" => 22,
        b"authorization" => 23,
        b"cache-control" => 24,
        b"content-disposition" => 25,
        b"content-encoding" => 26,
        b"content-language" => 27,
        b"content-length" => 28,
        b"content-location" => 29,
        b"content-range" => 30,
        b"content-type" => 31,
        b"cookie" => 32,
        b"date" => 33,
        b"etag" => 34,
        b"expect" => 35,
        b"expires" => 36,
        b"from" => 37,
        b"host" => 38,
        b"if-match" => 39,
        b"if-modified-since" => 40,
        b"if-none-match" => 41,
        b"if-range" => 42,
        b"if-unmodified-since" => 43,
        b"last-modified" => 44,
        b"link" => 45,
        b"location" => 46,
        b"max-forwards" => 47,
        b"proxy-authenticate" => 48,
        b"proxy-authorization" => 49,
        b"range" => 50,
        b"referer" => 51,
        b"refresh" => 52,
        b"retry-after" => 53,
        b"server" => 54,
        b"set-cookie" => 55,
        b"strict-transport-security" => 56,
        b"transfer-encoding" => 57,
        b"user-agent" => 58,
        b"vary" => 59,
        b"via" => 60,
        b"www-authenticate" => 61,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_name_gives_each_name_s_first_entry() {
        for (i, (name, _)) in STATIC.iter().enumerate() {
            let first = STATIC.iter().position(|(n, _)| n == name).unwrap() + 1;
            assert_eq!(static_name(name), Some(first), "{}", i + 1);
        }
        assert_eq!(static_name(b"x-custom"), None);
        assert_eq!(static_name(b"Server"), None, "names are lowercase");
    }

    #[test]
    fn find_gives_the_newest_match_and_the_newest_name() {
        let mut t = DynamicTable::new(1000);
        t.insert(b"server", b"a");
        t.insert(b"server", b"b");
        t.insert(b"etag", b"x");
        // Newest first: etag 62, server b 63, server a 64.
        assert_eq!(t.find(b"server", b"a"), (Some(64), Some(63)));
        assert_eq!(t.find(b"server", b"c"), (None, Some(63)));
        assert_eq!(t.find(b"vary", b"x"), (None, None));
    }

    #[test]
    fn eviction_keeps_the_size_within_the_max() {
        let mut t = DynamicTable::new(100);
        t.insert(b"a", b"1"); // 34
        t.insert(b"b", b"2"); // 68
        t.insert(b"c", b"3"); // 102 > 100: "a" goes
        assert_eq!(t.len(), 2);
        assert_eq!(t.size(), 68);
        assert_eq!(t.get(62), Some((&b"c"[..], &b"3"[..])));
        assert_eq!(t.get(63), Some((&b"b"[..], &b"2"[..])));
        assert_eq!(t.get(64), None);
        t.insert(&[b'x'; 80], b""); // larger than the table: empties it
        assert!(t.is_empty());
        t.insert(b"d", b"4");
        t.set_max(10);
        assert!(t.is_empty());
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(2), Some((&b":method"[..], &b"GET"[..])));
        assert_eq!(t.get(61), Some((&b"www-authenticate"[..], &b""[..])));
    }
}
