//! Stage: commit. Durability points: the commit collects what must be on disk before its
//! next step (staged files, backups, folders whose entries changed) in a [`Point`] and makes
//! it all durable at once, instead of one `fsync` after each file.
//!
//! On Linux a point with many objects on the root's file system is one `syncfs` of that
//! file system (the kernel writes every dirty page and inode of it back and commits its
//! journal once, with a cache flush; since Linux 5.8 it reports write-back errors of the file
//! system since the root was opened, which the commit holds open from its start). A point
//! with fewer objects `fsync`s them: a `syncfs` also waits for other programs' unwritten
//! data on that file system, which measured slower than three `fsync`s for a one-file edit
//! on a busy machine, and faster than 20 or more. Elsewhere, and for objects on another file system (a
//! folder that is a mount point, a state place on another disk), each object is synced on
//! a few threads (`F_FULLFSYNC` on macOS, where a plain `fsync` leaves the data in the
//! drive's cache). `APPLY_PATCH_SYNC=fsync` turns `syncfs` off (for measurements).
//! Must not decide anything: it only syncs what it is given.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;

use super::dirfd::{self, Dir};
use crate::Error;

/// From this many objects on the root's file system, a point is one `syncfs`.
pub const SYNCFS_FROM: usize = 12;

/// The most objects kept open until their point (the rest are synced in batches of this
/// many before it: a large patch must not run out of file descriptors).
pub const MAX_OPEN: usize = 64;

/// The most threads that sync objects at once.
const THREADS: usize = 8;

/// How a point makes its objects durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// One `syncfs` of the root's file system for a point with [`SYNCFS_FROM`] objects or more
    /// on it (Linux).
    SyncFs,
    /// Each object synced, on a bounded number of threads.
    EachObject,
}

impl Method {
    /// The method of this platform (`APPLY_PATCH_SYNC=fsync` asks for [`Method::EachObject`]).
    pub fn of_platform() -> Method {
        let asked_fsync = std::env::var_os("APPLY_PATCH_SYNC").is_some_and(|v| v == "fsync");
        if cfg!(target_os = "linux") && !asked_fsync {
            Method::SyncFs
        } else {
            Method::EachObject
        }
    }
}

/// An object waiting for its point: kept open so that it can be synced.
enum Held<'a> {
    File(File),
    Shared(Rc<Dir>),
    Borrowed(&'a Dir),
}

impl Held<'_> {
    fn fd(&self) -> RawFd {
        match self {
            Held::File(f) => f.as_raw_fd(),
            Held::Shared(d) => d.as_raw_fd(),
            Held::Borrowed(d) => d.as_raw_fd(),
        }
    }
}

/// What the next durability point must make durable.
pub struct Point<'a> {
    root: &'a Dir,
    /// The root as errors show it.
    shown: String,
    root_dev: u64,
    method: Method,
    /// Objects not synced yet, with the path errors name and their device.
    held: Vec<(String, Held<'a>, u64)>,
    /// Folders already held or synced since the last point (device, inode).
    dirs: std::collections::HashSet<(u64, u64)>,
    /// Objects on the root's file system since the last point.
    on_root: usize,
    /// The point is a `syncfs` of the root's file system.
    whole: bool,
    /// Counts of `syncfs` and `fsync` calls made (for tests and measurements).
    pub calls: (usize, usize),
}

impl<'a> Point<'a> {
    /// A point for a commit under `root` (held open from the start of the commit).
    pub fn new(root: &'a Dir, shown: String, method: Method) -> Result<Point<'a>, Error> {
        let (root_dev, _) = root
            .identity()
            .map_err(|e| Error::io(&shown, "cannot open the root", &e))?;
        Ok(Point {
            root,
            shown,
            root_dev,
            method,
            held: Vec::new(),
            dirs: std::collections::HashSet::new(),
            on_root: 0,
            whole: false,
            calls: (0, 0),
        })
    }

    /// A staged file (on device `dev`) whose content and entry must be durable by the next
    /// [`Point::sync`].
    pub fn file(&mut self, path: &str, file: File, dev: u64) -> Result<(), Error> {
        self.hold(path, Held::File(file), dev)
    }

    /// A folder whose entries must be durable by the next [`Point::sync`] (once per folder).
    pub fn dir(&mut self, path: &str, dir: Rc<Dir>) -> Result<(), Error> {
        self.folder(path, Held::Shared(dir))
    }

    /// [`Point::dir`] for a folder the caller keeps.
    pub fn dir_ref(&mut self, path: &str, dir: &'a Dir) -> Result<(), Error> {
        self.folder(path, Held::Borrowed(dir))
    }

    fn folder(&mut self, path: &str, held: Held<'a>) -> Result<(), Error> {
        let st = dirfd::fstat(held.fd()).map_err(|e| Error::io(path, "cannot sync", &e))?;
        if !self.dirs.insert((st.dev, st.ino)) {
            return Ok(());
        }
        self.hold(path, held, st.dev)
    }

    fn hold(&mut self, path: &str, held: Held<'a>, dev: u64) -> Result<(), Error> {
        if self.method == Method::SyncFs && dev == self.root_dev {
            self.on_root += 1;
            if self.whole {
                return Ok(()); // Closed now: the `syncfs` covers it.
            }
            if self.on_root >= SYNCFS_FROM {
                self.whole = true;
                // Those on the root's file system are covered by the `syncfs` too.
                let dev = self.root_dev;
                self.held.retain(|(_, _, d)| *d != dev);
                return Ok(());
            }
        }
        self.held.push((path.to_string(), held, dev));
        if self.held.len() >= MAX_OPEN {
            self.sync_held()?;
        }
        Ok(())
    }

    /// The durability point: everything given since the last one is on disk when this
    /// returns.
    pub fn sync(&mut self) -> Result<(), Error> {
        self.sync_held()?;
        if self.whole {
            syncfs(self.root.as_raw_fd())
                .map_err(|e| Error::io(&self.shown, "cannot make the changes durable under", &e))?;
            self.calls.0 += 1;
        }
        self.whole = false;
        self.on_root = 0;
        self.dirs.clear();
        Ok(())
    }

    /// Syncs the objects held, on up to [`THREADS`] threads (none for a few), and closes
    /// them.
    fn sync_held(&mut self) -> Result<(), Error> {
        let held = std::mem::take(&mut self.held);
        self.calls.1 += held.len();
        let fds: Vec<(&str, RawFd)> = held.iter().map(|(p, h, _)| (p.as_str(), h.fd())).collect();
        let sync_part = |part: &[(&str, RawFd)]| {
            part.iter().try_for_each(|(path, fd)| {
                full_sync(*fd).map_err(|e| Error::io(path, "cannot sync", &e))
            })
        };
        if fds.len() <= 4 {
            return sync_part(&fds);
        }
        let threads = std::thread::available_parallelism()
            .map_or(2, |n| n.get() * 2)
            .min(THREADS);
        let chunk = fds.len().div_ceil(threads);
        // The objects stay open (owned by `held`, here) until every thread is done.
        std::thread::scope(|scope| {
            let workers: Vec<_> = fds
                .chunks(chunk)
                .map(|part| scope.spawn(move || sync_part(part)))
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(Error::new(
                        crate::ErrorCode::IoError,
                        "a sync thread panicked",
                    ))
                })
            })
        })
    }
}

/// `fsync`, or `F_FULLFSYNC` on macOS (falling back to `fsync` where the file system does not
/// support it).
fn full_sync(fd: RawFd) -> io::Result<()> {
    #[cfg(target_vendor = "apple")]
    {
        // SAFETY: `fd` is open (its owner outlives this call).
        if unsafe { libc::fcntl(fd, libc::F_FULLFSYNC) } != -1 {
            return Ok(());
        }
    }
    loop {
        // SAFETY: `fd` is open (its owner outlives this call).
        if unsafe { libc::fsync(fd) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `syncfs` of the file system holding `fd`.
#[cfg(target_os = "linux")]
fn syncfs(fd: RawFd) -> io::Result<()> {
    loop {
        // SAFETY: `fd` is the open root.
        if unsafe { libc::syncfs(fd) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn syncfs(_fd: RawFd) -> io::Result<()> {
    unreachable!("Method::SyncFs is chosen on Linux only")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn staged(root: &Dir, name: &str) -> (File, u64) {
        let file = root.create_file(name.as_bytes(), 0o600).expect("create");
        let dev = dirfd::fstat(file.as_raw_fd()).expect("fstat").dev;
        (file, dev)
    }

    #[test]
    fn a_few_objects_are_fsynced_and_more_make_one_syncfs() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut point = Point::new(&root, "root".into(), Method::SyncFs).expect("point");
        let (f, dev) = staged(&root, "a");
        point.file("a", f, dev).expect("held");
        point.sync().expect("sync");
        assert_eq!(point.calls, (0, 1));

        let mut point = Point::new(&root, "root".into(), Method::SyncFs).expect("point");
        for i in 0..200 {
            let (f, dev) = staged(&root, &format!("f{i}"));
            point.file("f", f, dev).expect("held");
            assert!(point.held.len() < SYNCFS_FROM);
        }
        let sub = Rc::new(root.open_child(b".").expect("dup"));
        point.dir("d", Rc::clone(&sub)).expect("held");
        point.dir("d", sub).expect("once per folder");
        point.sync().expect("sync");
        assert_eq!(point.calls, (1, 0));
    }

    #[test]
    fn each_object_is_synced_in_bounded_batches() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut point = Point::new(&root, "root".into(), Method::EachObject).expect("point");
        for i in 0..(MAX_OPEN * 2 + 5) {
            let (f, dev) = staged(&root, &format!("f{i}"));
            point.file("f", f, dev).expect("held");
            assert!(point.held.len() < MAX_OPEN);
        }
        point.dir_ref("root", &root).expect("held");
        point.sync().expect("sync");
        assert_eq!(point.calls, (0, MAX_OPEN * 2 + 6));
        assert!(point.held.is_empty());
    }
}
