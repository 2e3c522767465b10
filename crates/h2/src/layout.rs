//! The crate's layering, checked: every `crate::m` path in a module's code is
//! an edge from that module to `m`, and the edges must hold no circle (the
//! frame codec and the error codes named each other's types until the stream
//! id got its own file). A path through the crate root's re-exports
//! (`crate::X`) is an edge to the root, which declares every module, so it
//! makes a circle too: modules import from the module that owns a thing.
//! One level down, `hpack/`'s files are checked too; `frame/` is not: its
//! parent holds the frame types that `decode.rs` and `encode.rs` turn bytes
//! into and back, and re-exports the two functions, by design.

#[test]
fn the_modules_import_no_circle() {
    servelab_layout::assert_no_circle(
        env!("CARGO_MANIFEST_DIR"),
        &["conn", "frame", "error", "hpack"],
    );
}

#[test]
fn the_files_of_hpack_import_no_circle() {
    servelab_layout::assert_no_circle_within(
        env!("CARGO_MANIFEST_DIR"),
        "hpack",
        &["decoder", "encoder", "table"],
    );
}
