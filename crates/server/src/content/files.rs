//! The served tree: opening files beneath the root, and nothing else.
//!
//! Path strings are checked by `servelab_http::path` (no `..`, no encoded
//! slashes, no NUL), but a string check cannot see symlinks. So every file is
//! opened with `openat2(2)` relative to the root directory's descriptor with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`: the kernel itself refuses any
//! resolution that would leave the root, including through a symlink (inside
//! links still work), in one syscall and without a `realpath` race.
//!
//! Files are opened `O_NONBLOCK` so that a FIFO planted in the tree cannot block
//! a worker in `open`; anything but a regular file or a directory is refused.
//!
//! Directory listings (`--autoindex`) read the directory through a descriptor
//! opened the same way, and look at a symlinked entry only through
//! `openat2(RESOLVE_BENEATH)` from the root: an entry that points outside the
//! root is left out, as a request for it would get 404, and its target's size
//! and time are never read.

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use servelab_http::listing;

use crate::error::ServerError;

/// The root directory of a server.
#[derive(Debug)]
pub(crate) struct Root {
    dir: OwnedFd,
    path: PathBuf,
}

/// What a path names.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A regular file, open for reading.
    File(OpenFile),
    /// A directory.
    Dir,
}

/// A regular file with the metadata its response needs.
#[derive(Debug)]
pub(crate) struct OpenFile {
    pub(crate) file: File,
    pub(crate) len: u64,
    pub(crate) mtime: SystemTime,
    /// Device and inode: the file cache tells a replaced file by them.
    pub(crate) ino: (u64, u64),
}

/// Why a file cannot be served; each maps to one status.
#[derive(Debug)]
pub(crate) enum FileError {
    /// 404: missing, or outside the root, or not a file or directory we serve.
    NotFound,
    /// 403: exists but may not be read (permissions, or a special file).
    Forbidden,
    /// 500: anything else the system reported.
    Io(io::Error),
}

impl Root {
    /// Opens the root; it must exist and be a directory.
    pub(crate) fn open(path: &Path) -> Result<Root, ServerError> {
        let root_err = |source| ServerError::Root {
            path: path.to_owned(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(root_err)?;
        if !meta.is_dir() {
            return Err(ServerError::RootNotDir(path.to_owned()));
        }
        let dir = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| root_err(e.into()))?;
        // Every request opens its file this way: find out now, not with a 500
        // per request, whether this kernel (and its seccomp filter) allows it.
        rustix::fs::openat2(
            &dir,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(|e| ServerError::NoOpenat2 {
            path: path.to_owned(),
            source: e.into(),
        })?;
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
        Ok(Root { dir, path })
    }

    /// The root as an absolute path, for messages.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `rel` (a checked relative path; empty for the root itself).
    pub(crate) fn open_path(&self, rel: &str) -> Result<Opened, FileError> {
        let rel = if rel.is_empty() { "." } else { rel };
        let fd = rustix::fs::openat2(
            &self.dir,
            rel,
            OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(open_error)?;
        let st = rustix::fs::fstat(&fd).map_err(|e| FileError::Io(e.into()))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => Ok(Opened::Dir),
            FileType::RegularFile => Ok(Opened::File(OpenFile {
                file: File::from(fd),
                len: st.st_size as u64,
                mtime: mtime(st.st_mtime as i64, st.st_mtime_nsec as u32),
                #[allow(clippy::unnecessary_cast)] // the field types differ by target
                ino: (st.st_dev as u64, st.st_ino as u64),
            })),
            _ => Err(FileError::Forbidden),
        }
    }
}

/// A directory's entries as a listing shows them.
#[derive(Debug, Default)]
pub(crate) struct Listed {
    /// At most the `max` asked for.
    pub(crate) entries: Vec<listing::Entry>,
    /// Entries beyond `max`, not read further.
    pub(crate) omitted: usize,
}

impl Root {
    /// The regular files and directories in `rel` (a checked relative path of a
    /// directory), at most `max` of them. Left out: `.` and `..`, names that are
    /// not UTF-8 (no request could name them), dotfiles unless `dotfiles`, special
    /// files, and symlinks that lead outside the root or nowhere.
    pub(crate) fn list(&self, rel: &str, max: usize, dotfiles: bool) -> Result<Listed, FileError> {
        let dir_rel = if rel.is_empty() { "." } else { rel };
        let fd = rustix::fs::openat2(
            &self.dir,
            dir_rel,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        )
        .map_err(open_error)?;
        let mut dir = rustix::fs::Dir::read_from(&fd).map_err(|e| FileError::Io(e.into()))?;
        let mut listed = Listed::default();
        let mut joined = String::with_capacity(rel.len() + 64);
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| FileError::Io(e.into()))?;
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name == "." || name == ".." || (!dotfiles && name.starts_with('.')) {
                continue;
            }
            if listed.entries.len() == max {
                listed.omitted += 1;
                continue;
            }
            let st = if entry.file_type() == FileType::Symlink {
                // Follow it only beneath the root, as a request would.
                joined.clear();
                if !rel.is_empty() {
                    joined.push_str(rel);
                    joined.push('/');
                }
                joined.push_str(name);
                rustix::fs::openat2(
                    &self.dir,
                    joined.as_str(),
                    OFlags::PATH | OFlags::CLOEXEC,
                    Mode::empty(),
                    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
                )
                .and_then(rustix::fs::fstat)
            } else {
                rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)
            };
            let Ok(st) = st else { continue };
            let is_dir = match FileType::from_raw_mode(st.st_mode) {
                FileType::Directory => true,
                FileType::RegularFile => false,
                _ => continue,
            };
            #[allow(clippy::unnecessary_cast)] // the field types differ by target
            listed.entries.push(listing::Entry {
                name: name.to_owned(),
                is_dir,
                len: st.st_size as u64,
                mtime: mtime(st.st_mtime as i64, st.st_mtime_nsec as u32),
            });
        }
        Ok(listed)
    }
}

fn open_error(e: rustix::io::Errno) -> FileError {
    match e {
        rustix::io::Errno::NOENT
        | rustix::io::Errno::NOTDIR
        | rustix::io::Errno::XDEV
        | rustix::io::Errno::LOOP
        | rustix::io::Errno::NAMETOOLONG => FileError::NotFound,
        rustix::io::Errno::ACCESS | rustix::io::Errno::PERM => FileError::Forbidden,
        other => FileError::Io(other.into()),
    }
}

fn mtime(secs: i64, nanos: u32) -> SystemTime {
    if secs >= 0 {
        UNIX_EPOCH + Duration::new(secs as u64, nanos.min(999_999_999))
    } else {
        UNIX_EPOCH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_inside_refuses_outside() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("out")).unwrap();
        std::os::unix::fs::symlink("a.txt", dir.path().join("in")).unwrap();
        std::os::unix::fs::symlink("../../..", dir.path().join("sub/up")).unwrap();
        let root = Root::open(dir.path()).unwrap();
        match root.open_path("a.txt").unwrap() {
            Opened::File(f) => assert_eq!(f.len, 5),
            Opened::Dir => panic!("a.txt is a file"),
        }
        assert!(matches!(root.open_path("").unwrap(), Opened::Dir));
        assert!(matches!(root.open_path("sub").unwrap(), Opened::Dir));
        assert!(matches!(root.open_path("in").unwrap(), Opened::File(_)));
        assert!(matches!(root.open_path("out"), Err(FileError::NotFound)));
        assert!(matches!(
            root.open_path("sub/up/etc/passwd"),
            Err(FileError::NotFound)
        ));
        assert!(matches!(
            root.open_path("missing"),
            Err(FileError::NotFound)
        ));
        assert!(matches!(root.open_path("a.txt/"), Err(FileError::NotFound)));
    }

    #[test]
    fn lists_inside_only() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "sssss").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(p.join("d/a.txt"), "hello").unwrap();
        std::fs::write(p.join("d/.env"), "x").unwrap();
        std::fs::create_dir(p.join("d/sub")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), p.join("d/out")).unwrap();
        std::os::unix::fs::symlink("a.txt", p.join("d/in")).unwrap();
        std::os::unix::fs::symlink("missing", p.join("d/dangling")).unwrap();
        std::os::unix::fs::symlink("../..", p.join("d/up")).unwrap();
        let root = Root::open(p).unwrap();
        let names = |l: &Listed| {
            let mut n: Vec<_> = l.entries.iter().map(|e| e.name.clone()).collect();
            n.sort();
            n
        };
        let l = root.list("d", 100, false).unwrap();
        assert_eq!(names(&l), ["a.txt", "in", "sub"]);
        assert_eq!(l.omitted, 0);
        let a = l.entries.iter().find(|e| e.name == "in").unwrap();
        assert_eq!((a.is_dir, a.len), (false, 5));
        assert!(l.entries.iter().find(|e| e.name == "sub").unwrap().is_dir);
        assert_eq!(
            names(&root.list("d", 100, true).unwrap()),
            [".env", "a.txt", "in", "sub"]
        );
        let l = root.list("d", 2, false).unwrap();
        assert_eq!((l.entries.len(), l.omitted), (2, 1));
        assert_eq!(names(&root.list("", 100, false).unwrap()), ["d"]);
        assert!(matches!(
            root.list("d/a.txt", 9, false),
            Err(FileError::NotFound)
        ));
        assert!(matches!(
            root.list("d/up", 9, false),
            Err(FileError::NotFound)
        ));
        assert!(matches!(
            root.list("nope", 9, false),
            Err(FileError::NotFound)
        ));
    }

    #[test]
    fn fifo_is_forbidden_not_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let root = Root::open(dir.path()).unwrap();
        assert!(matches!(root.open_path("pipe"), Err(FileError::Forbidden)));
    }

    #[test]
    fn root_must_be_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        assert!(matches!(Root::open(&f), Err(ServerError::RootNotDir(_))));
        assert!(matches!(
            Root::open(&dir.path().join("nope")),
            Err(ServerError::Root { .. })
        ));
    }
}
