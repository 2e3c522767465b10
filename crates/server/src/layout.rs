//! The crate's layering, checked (issue 28: an architecture review found config → engine → shared → config behind `lib.rs` re-exports): every `crate::m` path in a module's
//! code is an edge from that module to `m`, and the edges must hold no
//! circle. A path through the crate root's re-exports (`crate::X`) is an edge
//! to the root, which declares every module, so it makes a circle too:
//! modules import from the module that owns a thing. The same holds one level
//! down, among the files of each module folder: the groups (`content` below
//! `runtime` below `site`) and the driver's and engines' files. `conn/` is
//! left out on purpose: `conn/h2.rs` is the HTTP/2 half of [`crate::conn::Conn`]
//! (an `impl Conn` block and its frames' handling, beside HTTP/1.1's in
//! `conn.rs`), so it names its parent's type by design.

#[test]
fn the_modules_import_no_circle() {
    servelab_layout::assert_no_circle(
        env!("CARGO_MANIFEST_DIR"),
        &["config", "engine", "driver", "content", "runtime", "site"],
    );
}

#[test]
fn the_files_of_each_module_folder_import_no_circle() {
    for (module, expect) in [
        ("content", &["files", "cache", "compress", "auth"][..]),
        ("runtime", &["shared", "clock", "stats", "shutdown"][..]),
        ("site", &["handler", "response", "status"][..]),
        ("driver", &["dispatch", "ring", "evloop"][..]),
        ("engines", &["reactor", "uring"][..]),
    ] {
        servelab_layout::assert_no_circle_within(env!("CARGO_MANIFEST_DIR"), module, expect);
    }
}
