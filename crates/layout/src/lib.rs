//! A crate's layering, checked: every `crate::m` path in a module's code
//! (comments aside, tests included) is an edge from that module to `m`, and
//! the edges must hold no circle.
//!
//! Why a check and not a review: an architecture review found 5 import
//! circles in the lab (issue 31) and more in the server (issue 28,
//! config → engine → shared → config), all hidden behind `lib.rs`
//! re-exports. A path through the crate root's re-exports (`crate::Config`)
//! is an edge to the root, which declares every module, so it makes a circle
//! too: modules import from the module that owns a thing.
//!
//! Each library crate keeps a `#[cfg(test)] mod layout;` that calls
//! [`assert_no_circle`]; this crate is only ever a dev-dependency, so it has
//! no dependencies of its own.
//!
//! Layout:
//! - [`edges`]: module → the modules its code names, read from `src/`
//! - [`circle`]: a circle in such a graph, if any
//! - [`assert_no_circle`]: the test each crate runs
//! - [`edges_within`], [`assert_no_circle_within`]: the same one level down,
//!   among the files of a module folder (`plot/figure.rs` ↔ `plot/draw.rs`)
//!
//! ```
//! use std::collections::{BTreeMap, BTreeSet};
//! let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
//! g.entry("config".into()).or_default().insert("engine".into());
//! g.entry("engine".into()).or_default().insert("config".into());
//! assert_eq!(servelab_layout::circle(&g).unwrap().join(" -> "), "config -> engine -> config");
//! ```

#![deny(missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the modules its code names.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// The name [`edges`] gives the crate root (`lib.rs`).
pub const ROOT: &str = "crate root";

/// Module → the modules its code names, from the source files under `src`
/// (a crate's `src/`). A file's module is its first component under `src/`
/// (`driver/evloop.rs` belongs to `driver`); `lib.rs` is [`ROOT`], which has
/// an edge to every module because it declares them.
///
/// # Panics
///
/// If `src` or a file under it cannot be read: this runs in tests only.
pub fn edges(src: &Path) -> Graph {
    let files = rust_files(src);
    let module_of = |p: &Path| {
        let rel = p.strip_prefix(src).unwrap();
        let first = rel.components().next().unwrap().as_os_str();
        let name = first.to_string_lossy();
        match name.strip_suffix(".rs") {
            Some("lib") => ROOT.to_string(),
            Some(m) => m.to_string(),
            None => name.to_string(),
        }
    };
    let modules: BTreeSet<String> = files.iter().map(|p| module_of(p)).collect();
    let mut g = Graph::new();
    g.insert(
        ROOT.into(),
        modules.iter().filter(|m| *m != ROOT).cloned().collect(),
    );
    for f in &files {
        let from = module_of(f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = without_comments(&text);
        let to = g.entry(from.clone()).or_default();
        for name in crate_paths(&code) {
            let target = if modules.contains(&name) {
                name
            } else {
                ROOT.to_string()
            };
            if target != from {
                to.insert(target);
            }
        }
    }
    g
}

/// `text` with every `//` comment cut off: a doc link to `crate::X` is no
/// import.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files
}

/// The first name of every `crate::` path in `code`; a group
/// `crate::{a::B, c}` gives each of its items' first names (`a`, `c`), and
/// `self` in a group is the root itself.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            names.push(ident(rest));
            continue;
        };
        // Split the group at its top-level commas.
        let (mut depth, mut start) = (0usize, 0usize);
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    names.push(ident(&group[start..j]));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    names.push(ident(&group[start..j]));
                    start = j + 1;
                }
                _ => {}
            }
        }
    }
    names
        .into_iter()
        .filter(|n| !n.is_empty())
        .map(|n| if n == "self" { ROOT.to_string() } else { n })
        .collect()
}

/// A circle in `g`, if any, as the modules along it (the first repeated last).
pub fn circle(g: &Graph) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

/// The test each crate runs on its own `src/` (pass
/// `env!("CARGO_MANIFEST_DIR")`): panics with the circle and the edges if
/// the modules import one. `expect` names a few modules the graph must hold,
/// so that a wrong directory fails instead of passing on an empty graph.
pub fn assert_no_circle(manifest_dir: &str, expect: &[&str]) {
    let g = edges(&Path::new(manifest_dir).join("src"));
    for m in expect {
        assert!(g.contains_key(*m), "no module {m} in {g:?}");
    }
    if let Some(c) = circle(&g) {
        panic!("import circle: {}\nedges: {g:#?}", c.join(" -> "));
    }
}

/// The submodules of `module` (`plot`, or `report/plot` for a folder inside
/// a folder) → the submodules (and `module` itself) that their code names,
/// from the files under `src/<module>/`: the same check
/// one level down, since a circle among `plot/figure.rs`, `plot/draw.rs` and
/// `plot.rs` hides from [`edges`] inside the one node `plot`. A submodule is
/// a file's first component under the folder; paths are read as
/// `crate::module::x`, `super::x` and `super::super::x` (a `mod tests` at a
/// file's end is one level deeper). A name the parent only re-exports
/// (`super::Figure`) is an edge to `module`, which declares every submodule,
/// so it makes a circle, as the crate root does in [`edges`].
///
/// # Panics
///
/// If a file under `src/<module>/` cannot be read: this runs in tests only.
pub fn edges_within(src: &Path, module: &str) -> Graph {
    let dir = src.join(module);
    // `report/plot`: the path below the crate root, and where a child's name is.
    let base: Vec<String> = module.split('/').map(str::to_string).collect();
    let depth = base.len();
    let files = rust_files(&dir);
    // A file's module path below the crate root: ["plot", "draw"].
    let path_of = |p: &Path| -> Vec<String> {
        let rel = p.strip_prefix(src).unwrap().with_extension("");
        let mut v: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if v.last().is_some_and(|l| l == "mod") {
            v.pop();
        }
        v
    };
    let children: BTreeSet<String> = files.iter().map(|f| path_of(f)[depth].clone()).collect();
    let mut g = Graph::new();
    g.insert(module.into(), children.clone());
    for f in &files {
        let here = path_of(f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = without_comments(&text);
        let tests_at = code.find("mod tests").unwrap_or(code.len());
        let to = g.entry(here[depth].clone()).or_default();
        for (at, path) in paths(&code) {
            let mut abs: Vec<String> = Vec::new();
            let mut rest = path.as_slice();
            if rest[0] == "crate" {
                rest = &rest[1..];
            } else {
                // `super` in a file is its parent; inside `mod tests`, the file.
                abs = here.clone();
                if at > tests_at {
                    abs.push("tests".into());
                }
                while rest.first().is_some_and(|s| s == "super") {
                    abs.pop();
                    rest = &rest[1..];
                }
            }
            abs.extend(rest.iter().cloned());
            if !abs.starts_with(&base) {
                continue;
            }
            let target = match abs.get(depth) {
                Some(c) if children.contains(c) => c.clone(),
                _ => module.to_string(),
            };
            if target != here[depth] {
                to.insert(target);
            }
        }
    }
    g
}

/// Every path that starts with `crate::` or `super::` in `code`, with where
/// it starts, as its names (`super::super::bars::x` is
/// `["super", "super", "bars", "x"]`); a group `{a::B, c}` gives one path per
/// item, each to its first name.
fn paths(code: &str) -> Vec<(usize, Vec<String>)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    for head in ["crate::", "super::"] {
        for (i, _) in code.match_indices(head) {
            let before = &code[..i];
            if before.ends_with("::") || before.ends_with(is_ident) {
                continue; // the middle of a path, or `pub(super)`-like text
            }
            let mut names = vec![head.trim_end_matches(':').to_string()];
            let mut rest = &code[i + head.len()..];
            loop {
                let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
                if !name.is_empty() {
                    rest = &rest[name.len()..];
                    names.push(name);
                    match rest.strip_prefix("::") {
                        Some(r) => rest = r,
                        None => break,
                    }
                } else {
                    if rest.starts_with('{') {
                        // Only this group: up to the brace that closes it.
                        let mut depth = 0usize;
                        let end = rest
                            .char_indices()
                            .find(|&(_, c)| {
                                match c {
                                    '{' => depth += 1,
                                    '}' => depth -= 1,
                                    _ => {}
                                }
                                depth == 0
                            })
                            .map_or(rest.len(), |(j, _)| j + 1);
                        for n in crate_paths(&format!("crate::{}", &rest[..end])) {
                            let mut p = names.clone();
                            p.push(n);
                            out.push((i, p));
                        }
                    }
                    break;
                }
            }
            if names.len() > 1 && !rest.starts_with('{') {
                out.push((i, names));
            }
        }
    }
    out
}

/// [`assert_no_circle`] one level down: the submodules of `module` (its
/// files under `src/<module>/`, and `module` itself) import no circle.
/// `expect` names a few submodules the graph must hold.
pub fn assert_no_circle_within(manifest_dir: &str, module: &str, expect: &[&str]) {
    let g = edges_within(&Path::new(manifest_dir).join("src"), module);
    for m in expect {
        assert!(g.contains_key(*m), "no submodule {m} of {module} in {g:?}");
    }
    if let Some(c) = circle(&g) {
        panic!(
            "import circle in {module}: {}\nedges: {g:#?}",
            c.join(" -> ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_circle_finder_finds_one() {
        // results -> check -> results, one of the circles the lab's review found.
        let mut g = Graph::new();
        g.entry("results".into())
            .or_default()
            .insert("check".into());
        g.entry("check".into())
            .or_default()
            .insert("results".into());
        g.entry("report".into())
            .or_default()
            .insert("results".into());
        let c = circle(&g).expect("a circle");
        assert!(c.first() == c.last() && c.len() == 3, "{c:?}");
        g.get_mut("check").unwrap().clear();
        assert_eq!(circle(&g), None);
    }

    #[test]
    fn paths_and_groups_name_their_first_module() {
        let code = "use crate::config::Config;\nuse crate::{engine::Engine, shared,\n  self, tls::{a, b}};\nlet x = crate::Stats::new();";
        assert_eq!(
            crate_paths(code),
            ["config", "engine", "shared", ROOT, "tls", "Stats"]
        );
    }

    #[test]
    fn a_re_export_through_the_root_is_a_circle() {
        let dir = std::env::temp_dir().join(format!("servelab-layout-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/driver")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "mod config;\nmod driver;\npub use config::Config;",
        )
        .unwrap();
        std::fs::write(
            dir.join("src/config.rs"),
            "// uses crate::driver in a comment only\npub struct Config;",
        )
        .unwrap();
        std::fs::write(dir.join("src/driver.rs"), "mod evloop;").unwrap();
        std::fs::write(
            dir.join("src/driver/evloop.rs"),
            "use crate::config::Config;",
        )
        .unwrap();
        let g = edges(&dir.join("src"));
        assert_eq!(circle(&g), None, "{g:?}");
        assert_eq!(g["driver"], BTreeSet::from(["config".to_string()]));
        // The same import through the root's re-export closes a circle.
        std::fs::write(dir.join("src/driver/evloop.rs"), "use crate::Config;").unwrap();
        let g = edges(&dir.join("src"));
        let c = circle(&g).expect("a circle through the root");
        assert!(
            c.contains(&ROOT.to_string()) && c.contains(&"driver".to_string()),
            "{c:?}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writes `text` at `rel` under `dir`, making its folders.
    fn put(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_circle_one_level_down_is_found() {
        let dir = std::env::temp_dir().join(format!("servelab-layout-in-{}", std::process::id()));
        put(&dir, "src/lib.rs", "mod plot;");
        put(
            &dir,
            "src/plot.rs",
            "mod draw;\nmod figure;\npub use figure::Figure;",
        );
        put(&dir, "src/plot/figure.rs", "pub struct Figure;");
        put(
            &dir,
            "src/plot/draw.rs",
            "use super::{figure::Figure, style};\nuse crate::plot::figure;\nuse crate::error::Result;\nmod tests { use super::*; use super::super::figure::Figure; }",
        );
        put(&dir, "src/plot/style.rs", "");
        let g = edges_within(&dir.join("src"), "plot");
        assert_eq!(circle(&g), None, "{g:?}");
        // A group names only its own items; `crate::error` is outside `plot`.
        assert_eq!(
            g["draw"],
            BTreeSet::from(["figure".to_string(), "style".to_string()])
        );
        // figure → draw closes a circle.
        put(&dir, "src/plot/figure.rs", "use super::draw;");
        let g = edges_within(&dir.join("src"), "plot");
        assert!(circle(&g).is_some(), "{g:?}");
        // So does a name that the parent re-exports.
        put(&dir, "src/plot/figure.rs", "");
        put(&dir, "src/plot/draw.rs", "use super::{Figure, figure};");
        let g = edges_within(&dir.join("src"), "plot");
        assert_eq!(
            g["draw"],
            BTreeSet::from(["plot".to_string(), "figure".to_string()])
        );
        assert!(circle(&g).is_some(), "{g:?}");
        // A folder inside a folder: `report/plot`.
        put(
            &dir,
            "src/report/plot/a.rs",
            "use crate::report::plot::b::X;",
        );
        put(&dir, "src/report/plot/b.rs", "pub struct X;");
        let g = edges_within(&dir.join("src"), "report/plot");
        assert_eq!(g["a"], BTreeSet::from(["b".to_string()]));
        assert_eq!(circle(&g), None, "{g:?}");
        put(&dir, "src/report/plot/b.rs", "use super::a;");
        let g = edges_within(&dir.join("src"), "report/plot");
        assert!(circle(&g).is_some(), "{g:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
