//! The lab's layering, checked (issue 31: an architecture review found 5
//! import circles here, among them check↔protocol↔results, error↔rundir and
//! experiment↔builtin): every `crate::m` path in a module's code (comments
//! aside, tests included) is an edge from that module to `m`, and the edges
//! must hold no circle. A path through the crate root's re-exports (`crate::Fit`)
//! is an edge to the root, which imports every module, so it makes a circle
//! too: modules import from the module that owns a thing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module → the modules its code names, from the source files under `src`
/// (a crate's `src/`). Public so that another crate's test (`servelab-predict`
/// keeps a copy of this checker) can check its own layout with it.
pub fn edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let src = src.to_path_buf();
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
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
    // A file's module is its first component under src/ (plot/figure.rs
    // belongs to plot); lib.rs is the root.
    let module_of = |p: &Path| {
        let rel = p.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str();
        let name = first.to_string_lossy();
        match name.strip_suffix(".rs") {
            Some("lib") => "crate root".to_string(),
            Some(m) => m.to_string(),
            None => name.to_string(),
        }
    };
    let modules: BTreeSet<String> = files.iter().map(|p| module_of(p)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // The root declares every module and re-exports from it.
    g.insert(
        "crate root".into(),
        modules
            .iter()
            .filter(|m| *m != "crate root" && *m != "layout")
            .cloned()
            .collect(),
    );
    for f in &files {
        let from = module_of(f);
        // This checker's own text names `crate::` as a string.
        if from == "layout" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        let to = g.entry(from.clone()).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for (i, _) in code.match_indices("crate::") {
                let name: String = code[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let target = if modules.contains(&name) {
                    name
                } else {
                    "crate root".to_string()
                };
                if target != from {
                    to.insert(target);
                }
            }
        }
    }
    g
}

/// A circle in `g`, if any, as the modules along it.
pub fn circle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modules_import_no_circle() {
        let g = edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        assert!(
            g.contains_key("check") && g.contains_key("results"),
            "{g:?}"
        );
        if let Some(c) = circle(&g) {
            panic!("import circle: {}\nedges: {g:#?}", c.join(" -> "));
        }
    }

    #[test]
    fn the_circle_finder_finds_one() {
        // results -> check -> results, one of the circles the review found.
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
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
}
