//! `Content-Type` from a file name's extension.
//!
//! A static table covers the types a web site is made of, with `charset=utf-8` on the textual
//! ones: without a charset, browsers guess (often windows-1252) and mangle non-ASCII text.
//! Other extensions go to `mime_guess`'s table, whose entries are `&'static str` already, so no
//! lookup allocates. A textual type that only `mime_guess` knows comes back without a charset
//! (we cannot glue one on without allocating); add it to the table when it matters. Unknown or
//! missing extensions give `application/octet-stream`, which browsers download rather than
//! sniff (RFC 9110 8.3).

/// The default for unknown extensions.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// Extension (lowercase) to type, checked before `mime_guess`.
const TABLE: &[(&str, &str)] = &[
    ("html", "text/html; charset=utf-8"),
    ("htm", "text/html; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    // RFC 9239 makes text/javascript the one type for JavaScript, modules included.
    ("js", "text/javascript; charset=utf-8"),
    ("mjs", "text/javascript; charset=utf-8"),
    ("cjs", "text/javascript; charset=utf-8"),
    ("json", "application/json; charset=utf-8"),
    ("map", "application/json; charset=utf-8"),
    ("webmanifest", "application/manifest+json; charset=utf-8"),
    ("svg", "image/svg+xml; charset=utf-8"),
    ("xml", "application/xml; charset=utf-8"),
    ("xhtml", "application/xhtml+xml; charset=utf-8"),
    ("rss", "application/rss+xml; charset=utf-8"),
    ("atom", "application/atom+xml; charset=utf-8"),
    ("txt", "text/plain; charset=utf-8"),
    ("text", "text/plain; charset=utf-8"),
    ("log", "text/plain; charset=utf-8"),
    // Source files as plain text, so that a browser shows them instead of downloading.
    ("rs", "text/plain; charset=utf-8"),
    ("toml", "text/plain; charset=utf-8"),
    ("py", "text/plain; charset=utf-8"),
    ("c", "text/plain; charset=utf-8"),
    ("h", "text/plain; charset=utf-8"),
    ("sh", "text/plain; charset=utf-8"),
    ("md", "text/markdown; charset=utf-8"),
    ("markdown", "text/markdown; charset=utf-8"),
    ("csv", "text/csv; charset=utf-8"),
    ("tsv", "text/tab-separated-values; charset=utf-8"),
    ("ics", "text/calendar; charset=utf-8"),
    ("vtt", "text/vtt; charset=utf-8"),
    ("yaml", "application/yaml; charset=utf-8"),
    ("yml", "application/yaml; charset=utf-8"),
    ("png", "image/png"),
    ("apng", "image/apng"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("avif", "image/avif"),
    ("ico", "image/x-icon"),
    ("bmp", "image/bmp"),
    ("wasm", "application/wasm"),
    ("pdf", "application/pdf"),
    ("woff", "font/woff"),
    ("woff2", "font/woff2"),
    ("ttf", "font/ttf"),
    ("otf", "font/otf"),
    ("mp4", "video/mp4"),
    ("webm", "video/webm"),
    ("mp3", "audio/mpeg"),
    ("ogg", "audio/ogg"),
    ("wav", "audio/wav"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("bin", OCTET_STREAM),
];

/// The `Content-Type` for a path (only the extension of its last segment matters; the
/// comparison ignores ASCII case).
pub fn content_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return OCTET_STREAM;
    };
    if stem.is_empty() || ext.is_empty() {
        // ".bashrc" has no extension, it is a hidden file named bashrc; "a." has none either.
        return OCTET_STREAM;
    }
    if let Some((_, ty)) = TABLE.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)) {
        return ty;
    }
    mime_guess::from_ext(ext)
        .first_raw()
        .unwrap_or(OCTET_STREAM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_web_types() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(content_type("docs/INDEX.HTM"), "text/html; charset=utf-8");
        assert_eq!(content_type("style.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("app.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("app.mjs"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("data.json"), "application/json; charset=utf-8");
        assert_eq!(content_type("img/logo.svg"), "image/svg+xml; charset=utf-8");
        assert_eq!(content_type("feed.xml"), "application/xml; charset=utf-8");
        assert_eq!(content_type("img/logo.png"), "image/png");
        assert_eq!(content_type("a.JPG"), "image/jpeg");
        assert_eq!(content_type("a.jpeg"), "image/jpeg");
        assert_eq!(content_type("a.gif"), "image/gif");
        assert_eq!(content_type("a.webp"), "image/webp");
        assert_eq!(content_type("favicon.ico"), "image/x-icon");
        assert_eq!(content_type("about.txt"), "text/plain; charset=utf-8");
        assert_eq!(content_type("README.md"), "text/markdown; charset=utf-8");
        assert_eq!(content_type("m.wasm"), "application/wasm");
        assert_eq!(content_type("paper.pdf"), "application/pdf");
        assert_eq!(content_type("f.woff2"), "font/woff2");
    }

    #[test]
    fn every_textual_table_entry_has_a_charset() {
        for (ext, ty) in TABLE {
            let textual = ty.starts_with("text/")
                || ty.contains("json")
                || ty.contains("xml")
                || ty.contains("javascript")
                || ty.contains("yaml");
            assert_eq!(textual, ty.ends_with("; charset=utf-8"), "{ext}: {ty}");
            assert_eq!(*ext, ext.to_ascii_lowercase());
        }
    }

    #[test]
    fn fallbacks() {
        assert_eq!(content_type("book.epub"), "application/epub+zip"); // from mime_guess
        assert_eq!(content_type("BOOK.EPUB"), "application/epub+zip");
        assert_eq!(content_type("noext"), OCTET_STREAM);
        assert_eq!(content_type("dir.d/noext"), OCTET_STREAM);
        assert_eq!(content_type(".bashrc"), OCTET_STREAM);
        assert_eq!(content_type("a."), OCTET_STREAM);
        assert_eq!(content_type("x.unknownextension"), OCTET_STREAM);
        assert_eq!(content_type(""), OCTET_STREAM);
        assert_eq!(content_type("archive.tar.gz"), "application/gzip");
    }
}
