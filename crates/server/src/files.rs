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

use std::fs::File;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use crate::ServerError;

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
        .map_err(|e| match e {
            rustix::io::Errno::NOENT
            | rustix::io::Errno::NOTDIR
            | rustix::io::Errno::XDEV
            | rustix::io::Errno::LOOP
            | rustix::io::Errno::NAMETOOLONG => FileError::NotFound,
            rustix::io::Errno::ACCESS | rustix::io::Errno::PERM => FileError::Forbidden,
            other => FileError::Io(other.into()),
        })?;
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
