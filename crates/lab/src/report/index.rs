//! `index.html` of a directory of runs (such as `results/`): one line per run
//! with a link to its report and its conclusion (in the words a rebuilt report
//! uses, [`crate::report::definition`]), and a link to every directory
//! of runs inside it (such as `results/reference/`), so that `servelab serve
//! --root results` is browsable.
//!
//! It is written only into a directory the lab owns ([`rundir::is_runs`]):
//! never over an `index.html` the lab did not write.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::{LabError, Result};
use crate::html::{STYLE, esc};
use crate::report::conclusion;
use crate::report::definition::Definition;
use crate::store::results::{RunResults, Status};
use crate::store::rundir;

/// What [`write()`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// `index.html` was rewritten.
    Yes,
    /// The directory is not a directory of runs the lab owns; nothing written.
    NotOurs,
}

/// Rewrites `dir/index.html` if the lab owns `dir`. Subdirectories without a
/// readable `results.json` or a runs marker are left out.
pub fn write(dir: &Path) -> Result<Written> {
    if !rundir::is_runs(dir) {
        return Ok(Written::NotOurs);
    }
    let mut runs = Vec::new();
    let mut groups = Vec::new();
    let mut unread: Vec<(String, String)> = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| LabError::io(dir, e))?;
    for e in entries.flatten() {
        let sub = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if rundir::is_runs(&sub) {
            groups.push(name);
            continue;
        }
        if !sub.join("results.json").is_file() {
            continue;
        }
        let r = match RunResults::read(&sub) {
            Ok(r) => r,
            Err(e) => {
                // An older schema is listed with why it is not read, not hidden.
                unread.push((name, e.to_string()));
                continue;
            }
        };
        // The words a rebuilt report would use, so that the index and the
        // report conclude alike.
        let conclusion = Definition::for_rebuild(&r)
            .map(|d| conclusion::conclude(&d.exp, &r))
            .unwrap_or_default();
        runs.push((name, r, conclusion));
    }
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    groups.sort();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><link rel=\"icon\" href=\"data:,\">\
         {}<style>{STYLE}</style></head><body><h1>servelab lab runs</h1>\n",
        rundir::INDEX_TITLE
    );
    if !groups.is_empty() {
        h.push_str("<p>Other directories of runs:</p><ul>\n");
        for g in &groups {
            let _ = writeln!(h, "<li><a href=\"{0}/index.html\">{0}/</a></li>", esc(g));
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<div class=\"wide\"><table><thead><tr><th class=\"l\">run</th><th class=\"l\">started</th><th>points ok</th>\
         <th class=\"l\">conclusion</th></tr></thead><tbody>\n",
    );
    for (name, r, c) in &runs {
        let ok = r.points.iter().filter(|p| p.status == Status::Ok).count();
        let _ = writeln!(
            h,
            "<tr><td class=\"l\"><a href=\"{0}/report.html\">{0}</a>{1}</td><td class=\"l\">{2}</td><td>{ok}/{3}</td><td class=\"l\">{4}</td></tr>",
            esc(name),
            if r.quick { " (quick)" } else { "" },
            esc(&r.started_utc),
            r.points.len(),
            esc(c)
        );
    }
    for (name, why) in &unread {
        let _ = writeln!(
            h,
            "<tr class=\"unavailable\"><td class=\"l\"><a href=\"{0}/report.html\">{0}</a></td><td></td><td></td>\
             <td class=\"l\">not read: {1}</td></tr>",
            esc(name),
            esc(why)
        );
    }
    h.push_str("</tbody></table></div></body></html>\n");
    let path = dir.join("index.html");
    std::fs::write(&path, h).map_err(|e| LabError::io(path, e))?;
    Ok(Written::Yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_marked_directory_gets_an_index_and_it_links_nested_runs() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("index.html"), "theirs").unwrap();
        assert_eq!(write(tmp.path()).unwrap(), Written::NotOurs);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("index.html")).unwrap(),
            "theirs"
        );

        let results = tmp.path().join("results");
        let reference = results.join("reference");
        std::fs::create_dir_all(&reference).unwrap();
        std::fs::write(results.join(rundir::RUNS_MARKER), "").unwrap();
        std::fs::write(reference.join(rundir::RUNS_MARKER), "").unwrap();
        assert_eq!(write(&results).unwrap(), Written::Yes);
        let html = std::fs::read_to_string(results.join("index.html")).unwrap();
        assert!(html.contains("href=\"reference/index.html\""), "{html}");
    }
}
