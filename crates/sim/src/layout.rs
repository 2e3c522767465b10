//! The crate's layering, checked (issue 31: an architecture review found
//! engine↔spec↔window here): every `crate::m` path in a module's code is an
//! edge from that module to `m`, and the edges must hold no circle. A path
//! through the crate root's re-exports (`crate::X`) is an edge to the root,
//! which declares every module, so it makes a circle too: modules import from
//! the module that owns a thing.

#[test]
fn the_modules_import_no_circle() {
    servelab_layout::assert_no_circle(env!("CARGO_MANIFEST_DIR"), &["engine", "spec", "window"]);
}

#[test]
fn the_files_of_the_report_folder_import_no_circle() {
    servelab_layout::assert_no_circle_within(env!("CARGO_MANIFEST_DIR"), "report", &["table"]);
}
