//! Directory listings (`--autoindex`): a list of entries in, one small HTML page out.
//!
//! The server reads the directory (beneath the root, like every file) and hands the entries
//! here; nothing in this file touches the file system, so every rule is tested on values:
//! - sorted: directories first, then by name ignoring ASCII case (byte order breaks ties, so
//!   the order is total and repeatable);
//! - names are HTML-escaped in the text and percent-encoded in the `href` (every byte but the
//!   RFC 3986 unreserved ones), so a name like `<script>`, `a"b`, `x:y` or `50%` can neither
//!   inject markup nor turn into another URL (`x:y` would otherwise read as a scheme);
//! - names a request could never reach are left out: `.` and `..`, and names with a control
//!   character or a backslash, which [`crate::resolve_target`] refuses (names that are not
//!   UTF-8 cannot be given here at all, for the same reason);
//! - dotfiles are left out unless the server serves them (`--dotfiles serve`): a listing must
//!   not advertise what a request would get 404 for;
//! - sizes for people (`1.0 MiB`, binary units) with the exact byte count in a `title`
//!   tooltip, `-` for directories; modification times as IMF-fixdate (UTC);
//! - one small inline `<style>` and a `viewport` meta, so the page reads on a phone (the
//!   date column gives way on narrow screens); no script, no external resource.
//!
//! Links are relative (`name`, `name/`, `../`): the page is only served at the directory's
//! slashed URL, so they resolve inside it.
//!
//! ```
//! use std::time::UNIX_EPOCH;
//! use servelab_http::listing::{Entry, Listing};
//! let mut entries = vec![Entry { name: "a b.txt".into(), is_dir: false, len: 3, mtime: UNIX_EPOCH }];
//! let mut out = Vec::new();
//! Listing { dir: "docs", dotfiles: false, omitted: 0 }.render(&mut entries, &mut out);
//! let html = String::from_utf8(out).unwrap();
//! assert!(html.contains(r#"<a href="a%20b.txt">a b.txt</a>"#));
//! ```

use std::time::SystemTime;

use crate::date::fmt_http_date;

/// One directory entry, as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file name (one path segment).
    pub name: String,
    /// A directory (linked with a trailing slash).
    pub is_dir: bool,
    /// Size in bytes (ignored for directories).
    pub len: u64,
    /// Last modification time.
    pub mtime: SystemTime,
}

/// How to render one directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listing<'a> {
    /// The directory's path below the root, without leading or trailing slash (`""` for the
    /// root itself), as `resolve_target` gives it.
    pub dir: &'a str,
    /// List names starting with `.` (only when the server serves them).
    pub dotfiles: bool,
    /// Entries the server did not read (it caps how many it reads); said at the bottom.
    pub omitted: usize,
}

impl Listing<'_> {
    /// Appends the HTML page for `entries` (sorted in place) to `out`.
    pub fn render(&self, entries: &mut [Entry], out: &mut Vec<u8>) {
        entries.sort_by(|a, b| {
            b.is_dir
                .cmp(&a.is_dir)
                .then_with(|| cmp_ignore_case(&a.name, &b.name))
                .then_with(|| a.name.cmp(&b.name))
        });
        out.extend_from_slice(
            b"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
              <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
              <title>Index of /",
        );
        escape_html(self.dir, out);
        if !self.dir.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(b"</title>\n<style>");
        out.extend_from_slice(STYLE.as_bytes());
        out.extend_from_slice(b"</style></head>\n<body>\n<h1>Index of /");
        escape_html(self.dir, out);
        if !self.dir.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(
            b"</h1>\n<table>\n<tr><th>Name</th><th class=\"n\">Size</th><th class=\"t\">Modified</th></tr>\n",
        );
        if !self.dir.is_empty() {
            out.extend_from_slice(
                b"<tr><td><a href=\"../\">../</a></td><td class=\"n\">-</td><td class=\"t\"></td></tr>\n",
            );
        }
        let mut num = itoa::Buffer::new();
        for e in entries.iter().filter(|e| self.shows(&e.name)) {
            out.extend_from_slice(b"<tr><td><a href=\"");
            escape_href(&e.name, out);
            if e.is_dir {
                out.push(b'/');
            }
            out.extend_from_slice(b"\">");
            escape_html(&e.name, out);
            if e.is_dir {
                out.push(b'/');
            }
            if e.is_dir {
                out.extend_from_slice(b"</a></td><td class=\"n\">-");
            } else {
                out.extend_from_slice(b"</a></td><td class=\"n\" title=\"");
                out.extend_from_slice(num.format(e.len).as_bytes());
                out.extend_from_slice(b" bytes\">");
                human_size(e.len, out);
            }
            out.extend_from_slice(b"</td><td class=\"t\">");
            out.extend_from_slice(&fmt_http_date(e.mtime));
            out.extend_from_slice(b"</td></tr>\n");
        }
        out.extend_from_slice(b"</table>\n");
        if self.omitted > 0 {
            out.extend_from_slice(b"<p>");
            out.extend_from_slice(num.format(self.omitted).as_bytes());
            out.extend_from_slice(b" more entries not shown.</p>\n");
        }
        out.extend_from_slice(b"</body></html>\n");
    }

    fn shows(&self, name: &str) -> bool {
        !name.is_empty()
            && name != "."
            && name != ".."
            && (self.dotfiles || !name.starts_with('.'))
            && !name
                .bytes()
                .any(|b| b < 0x20 || b == 0x7f || b == b'\\' || b == b'/')
    }
}

/// The page's whole style: readable type and spacing, zebra rows, sizes
/// right-aligned, and below 40em the date column gives way to the names.
/// Inline, so the page needs nothing else; a `--header
/// 'Content-Security-Policy: ...'` that forbids inline style leaves a plain but
/// usable table.
const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:1em auto;max-width:60em;\
padding:0 1em;color:#222;background:#fff}\
h1{font-size:1.25em;font-weight:600;overflow-wrap:anywhere}\
table{border-collapse:collapse;width:100%}\
th{text-align:left;font-weight:600;border-bottom:2px solid #ddd}\
td,th{padding:.35em .6em}tr:nth-child(even) td{background:#f5f5f7}\
.n{text-align:right;white-space:nowrap}.t{white-space:nowrap;color:#555}\
a{color:#0550ae;text-decoration:none;overflow-wrap:anywhere}a:hover{text-decoration:underline}\
p{color:#555}@media (max-width:40em){.t{display:none}td,th{padding:.5em .4em}}";

/// A size in binary units with one decimal past 1 KiB (`512 B`, `1.5 KiB`,
/// `1.0 MiB`); the exact count goes in the cell's tooltip.
fn human_size(bytes: u64, out: &mut Vec<u8>) {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        out.extend_from_slice(itoa::Buffer::new().format(bytes).as_bytes());
        out.extend_from_slice(b" B");
        return;
    }
    let mut unit = 0;
    let mut scaled = bytes as f64 / 1024.0;
    // Round first, so 1048575 bytes reads `1.0 MiB`, not `1024.0 KiB`.
    while (scaled * 10.0).round() / 10.0 >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    out.extend_from_slice(format!("{scaled:.1} {}", UNITS[unit]).as_bytes());
}

fn cmp_ignore_case(a: &str, b: &str) -> std::cmp::Ordering {
    a.bytes()
        .map(|c| c.to_ascii_lowercase())
        .cmp(b.bytes().map(|c| c.to_ascii_lowercase()))
}

/// Text and attribute escaping: the five characters that can end or open markup.
fn escape_html(s: &str, out: &mut Vec<u8>) {
    for b in s.bytes() {
        match b {
            b'&' => out.extend_from_slice(b"&amp;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'\'' => out.extend_from_slice(b"&#39;"),
            _ => out.push(b),
        }
    }
}

/// Percent-encodes every byte but RFC 3986 unreserved ones; the result needs no HTML escaping.
fn escape_href(s: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b);
        } else {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::{PathKind, resolve_target};
    use std::time::{Duration, UNIX_EPOCH};

    fn entry(name: &str, is_dir: bool, len: u64) -> Entry {
        Entry {
            name: name.into(),
            is_dir,
            len,
            mtime: UNIX_EPOCH + Duration::from_secs(784_111_777),
        }
    }

    fn render(dir: &str, dotfiles: bool, entries: &mut [Entry]) -> String {
        let mut out = Vec::new();
        Listing {
            dir,
            dotfiles,
            omitted: 0,
        }
        .render(entries, &mut out);
        String::from_utf8(out).unwrap()
    }

    /// The hrefs in page order.
    fn hrefs(html: &str) -> Vec<&str> {
        html.split("<a href=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect()
    }

    #[test]
    fn directories_first_then_names_ignoring_case() {
        let mut e = vec![
            entry("b.txt", false, 1),
            entry("Zeta", true, 0),
            entry("A.txt", false, 2),
            entry("alpha", true, 0),
            entry("a.txt", false, 3),
        ];
        let html = render("", false, &mut e);
        assert_eq!(hrefs(&html), ["alpha/", "Zeta/", "A.txt", "a.txt", "b.txt"]);
        assert!(!html.contains("../"), "the root has no parent link");
        assert!(html.contains("<title>Index of /</title>"));
    }

    #[test]
    fn sizes_times_and_parent_link() {
        let mut e = vec![entry("f", false, 1234), entry("d", true, 4096)];
        let html = render("docs/sub", false, &mut e);
        assert_eq!(hrefs(&html), ["../", "d/", "f"]);
        assert!(html.contains("<title>Index of /docs/sub/</title>"));
        assert!(html.contains(
            "<td class=\"n\" title=\"1234 bytes\">1.2 KiB</td><td class=\"t\">Sun, 06 Nov 1994 08:49:37 GMT</td>"
        ));
        assert!(html.contains(">d/</a></td><td class=\"n\">-</td>"));
        assert!(!html.contains("4096"));
    }

    #[test]
    fn names_are_escaped_in_text_and_encoded_in_links() {
        let mut e = vec![
            entry("<img src=x onerror=alert(1)>", false, 1),
            entry("a\"b'c&d", false, 1),
            entry("x:y", false, 1),
            entry("50% é", true, 0),
        ];
        let html = render("q&<a>", false, &mut e);
        assert!(!html.contains("<img"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(html.contains("a&quot;b&#39;c&amp;d"));
        assert!(html.contains("Index of /q&amp;&lt;a&gt;/"));
        assert_eq!(
            hrefs(&html),
            [
                "../",
                "50%25%20%C3%A9/",
                "%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E",
                "a%22b%27c%26d",
                "x%3Ay"
            ]
        );
        // Every link resolves back to exactly its name (the server's own decoder).
        let mut path = String::new();
        assert_eq!(
            resolve_target("/50%25%20%C3%A9/", &mut path),
            Ok(PathKind::Dir)
        );
        assert_eq!(path, "50% é");
        resolve_target("/a%22b%27c%26d", &mut path).unwrap();
        assert_eq!(path, "a\"b'c&d");
    }

    #[test]
    fn dotfiles_and_unreachable_names_are_hidden() {
        let mut e = vec![
            entry(".env", false, 1),
            entry(".git", true, 0),
            entry(".", true, 0),
            entry("..", true, 0),
            entry("tab\there", false, 1),
            entry("back\\slash", false, 1),
            entry("ok", false, 1),
        ];
        let html = render("d", false, &mut e);
        assert_eq!(hrefs(&html), ["../", "ok"]);
        assert!(!html.contains(".env") && !html.contains(".git"));
        let html = render("d", true, &mut e);
        assert_eq!(hrefs(&html), ["../", ".git/", ".env", "ok"]);
    }

    #[test]
    fn sizes_read_in_binary_units_with_the_bytes_in_a_tooltip() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (1536, "1.5 KiB"),
            (1_048_575, "1.0 MiB"),
            (1_048_576, "1.0 MiB"),
            (5 * 1024 * 1024 * 1024 + 1, "5.0 GiB"),
            (u64::MAX, "16.0 EiB"),
        ];
        for (bytes, text) in cases {
            let mut out = Vec::new();
            human_size(bytes, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text, "{bytes}");
        }
        let html = render("", false, &mut [entry("big", false, 1_048_576)]);
        assert!(
            html.contains("title=\"1048576 bytes\">1.0 MiB</td>"),
            "{html}"
        );
        assert!(html.contains("name=\"viewport\""), "{html}");
    }

    #[test]
    fn omitted_entries_are_said() {
        let mut out = Vec::new();
        Listing {
            dir: "",
            dotfiles: false,
            omitted: 7,
        }
        .render(&mut [], &mut out);
        let html = String::from_utf8(out).unwrap();
        assert!(html.contains("<p>7 more entries not shown.</p>"));
        assert!(html.ends_with("</body></html>\n"));
    }
}
