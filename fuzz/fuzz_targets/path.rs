//! Fuzzes `resolve_target` and `append_location`: the one place that decides which part of
//! the disk a URL may name, and the one that writes a URL back into a `Location` header.
//!
//! A resolved path that could leave the root is a crash: a `..` or `.` segment, an empty
//! segment, a leading or trailing `/`, a backslash, a NUL or any control character. (A
//! segment merely containing `..`, as in `a..b`, is an ordinary file name and allowed.) As a
//! second, independent check the result is joined to a root and walked with `std::path`,
//! which must never see a parent-directory component. Resolving is also idempotent: a path it
//! produced, resolved again, is unchanged (when it holds no byte that is special in a URL).
//! A `Location` must be a single absolute path: one leading `/`, no `//` authority, no
//! backslash, no byte outside visible ASCII.

#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use servelab_http::{PathKind, append_location, resolve_target};

fn check_resolved(target: &str, out: &str, kind: PathKind) {
    assert!(!out.starts_with('/'), "absolute: {out:?} from {target:?}");
    assert!(
        !out.ends_with('/'),
        "trailing slash: {out:?} from {target:?}"
    );
    assert!(!out.contains('\\'), "backslash: {out:?} from {target:?}");
    assert!(
        !out.chars().any(char::is_control),
        "control: {out:?} from {target:?}"
    );
    if !out.is_empty() {
        for seg in out.split('/') {
            assert!(
                !matches!(seg, "" | "." | ".."),
                "segment {seg:?} in {out:?} from {target:?}"
            );
        }
    } else {
        assert_eq!(kind, PathKind::Dir, "the root is a directory");
    }
    let root = Path::new("/srv/root");
    let joined = root.join(out);
    assert!(joined.starts_with(root), "{joined:?} left the root");
    assert!(
        joined
            .components()
            .all(|c| !matches!(c, Component::ParentDir | Component::Prefix(_))),
        "{joined:?} has a parent component"
    );
    if !out.contains(['%', '?', '#']) {
        let mut again = String::new();
        let slash = if kind == PathKind::Dir && !out.is_empty() {
            "/"
        } else {
            ""
        };
        let r = resolve_target(&format!("/{out}{slash}"), &mut again);
        assert_eq!(r, Ok(kind), "re-resolving {out:?}");
        assert_eq!(again, out, "not idempotent");
    }
}

fn check_location(target: &str) {
    let mut loc = String::new();
    append_location(target, &mut loc);
    assert!(loc.starts_with('/'), "location {loc:?} not absolute");
    assert!(
        !loc.starts_with("//"),
        "location {loc:?} names an authority"
    );
    assert!(!loc.contains('\\'), "location {loc:?} has a backslash");
    assert!(
        loc.bytes().all(|b| b.is_ascii_graphic()),
        "location {loc:?} has a raw byte"
    );
}

fuzz_target!(|data: &[u8]| {
    let target = String::from_utf8_lossy(data);
    let mut out = String::new();
    if let Ok(kind) = resolve_target(&target, &mut out) {
        check_resolved(&target, &out, kind);
    }
    check_location(&target);
});
