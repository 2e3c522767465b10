//! The crate's layering, checked with the lab's checker
//! ([`servelab_lab::layout`]): every `crate::m` path in a module's code is an
//! edge from that module to `m`, and the edges must hold no circle. A path
//! through the crate root's re-exports (`crate::Fit`) is an edge to the root,
//! which imports every module, so it makes a circle too: modules import from
//! the module that owns a thing.

use std::path::Path;

use servelab_lab::layout::{circle, edges};

#[test]
fn the_modules_import_no_circle() {
    let g = edges(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(g.contains_key("fit") && g.contains_key("threads"), "{g:?}");
    if let Some(c) = circle(&g) {
        panic!("import circle: {}\nedges: {g:#?}", c.join(" -> "));
    }
}
