//! The crate's layering, checked (issue 31: an architecture review found 5
//! import circles here, among them check↔protocol↔results, error↔rundir,
//! schema↔template↔validate and the plot modules): every `crate::m` path in a
//! module's code is an edge from that module to `m`, and the edges must hold
//! no circle. A path through the crate root's re-exports (`crate::X`) is an
//! edge to the root, which declares every module, so it makes a circle too:
//! modules import from the module that owns a thing. The same holds one level
//! down, among the files of each module folder.

#[test]
fn the_modules_import_no_circle() {
    servelab_layout::assert_no_circle(
        env!("CARGO_MANIFEST_DIR"),
        &["check", "store", "process", "report"],
    );
}

#[test]
fn the_files_of_each_module_folder_import_no_circle() {
    for (module, expect) in [
        ("report/compare", &["drift", "tally"][..]),
        (
            "experiment",
            &["schema", "template", "validate", "plan", "builtin"][..],
        ),
        (
            "report/plot",
            &["figure", "draw", "bars", "lines", "legend"][..],
        ),
        ("run", &["measure", "record"][..]),
        ("process", &["cpu", "server", "peer"][..]),
        ("store", &["results", "rundir"][..]),
        ("report", &["page", "plot", "claim", "compare"][..]),
    ] {
        servelab_layout::assert_no_circle_within(env!("CARGO_MANIFEST_DIR"), module, expect);
    }
}
