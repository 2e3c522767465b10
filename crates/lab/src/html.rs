//! HTML text shared by every page the lab writes (reports, the index, the
//! comparison): escaping and the style sheet. It imports nothing from the
//! lab, so any module may use it without an import circle.

/// Escapes text for HTML (element content and quoted attribute values).
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The style sheet of every page, inline (a report fetches nothing).
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
h1{margin-bottom:.2em}.q{font-size:1.15em;color:#444}.conclusion{background:#eef6ee;border-left:4px solid #4a4;padding:.6em 1em}\
table{border-collapse:collapse;font-size:.85em;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}\
th{background:#f4f4f4}td.l,th.l{text-align:left}.failed{background:#fdecea}.unavailable{background:#f4f4f4;color:#777}\
.skipped{color:#999}td.unmeasurable{color:#777;font-style:italic}figure{margin:1.5em 0}figcaption{font-size:.9em;color:#555}figcaption .warn{color:#9a3b00}td.notes{min-width:36em}\
figure.plot{margin:1.5em 0}figure.plot svg{display:block;width:100%;height:auto}pre{background:#f6f6f6;padding:.6em;overflow-x:auto}\
.flag{color:#9a3b00;font-weight:600}dl.meta{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;font-size:.9em}dl.meta dt{font-weight:600}div.wide{overflow-x:auto}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup() {
        assert_eq!(
            esc("<a href=\"x\">&</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"
        );
    }
}
