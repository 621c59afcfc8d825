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
//! drive's cache). [`Durability::FullFsync`] turns `syncfs` off (for measurements). On
//! Windows each file is flushed with `File::sync_all` (`FlushFileBuffers`) and a folder needs
//! nothing: NTFS journals its entries itself (README "Platforms").
//!
//! [`Durability::Atomic`] (asked for explicitly, never the default) makes every point a
//! no-op: the steps keep their order, so a killed process is recovered exactly as before
//! (what the kernel was handed is what the next run finds), but nothing is forced to the
//! disk, so a power loss or an OS crash may lose the commit or tear the journal.
//! Must not decide anything: it only syncs what it is given.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

use super::dirfd::Dir;
use super::{TxnError, Worker};

/// From this many objects on the root's file system, a point is one `syncfs`.
pub const SYNCFS_FROM: usize = 12;

/// The most objects kept open until their point (the rest are synced in batches of this
/// many before it: a large patch must not run out of file descriptors).
pub const MAX_OPEN: usize = 64;

/// The most threads that sync objects at once.
const THREADS: usize = 8;

/// How durable a commit is made (README "Transactions, undo and recovery": durability).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum Durability {
    /// SPEC §6: every durability point is flushed to stable storage before the next step, so
    /// a commit reported done survives a power loss or an OS crash, and a crash at any moment
    /// is recovered to wholly old or wholly new. On Linux a point with many objects is one
    /// `syncfs`.
    #[default]
    Full,
    /// [`Durability::Full`] with an `fsync` of each object, never a `syncfs` (for
    /// measurements, and file systems where a `syncfs` waits on much else).
    FullFsync,
    /// Nothing is flushed: the commit is still all or nothing and recoverable when the
    /// process is killed (SIGKILL, a panic, an OOM kill), since every step still happens in
    /// order; after a power loss or an OS crash the files may be old, new or empty, and the
    /// journal may be torn (recovery then refuses it). For sandboxes, CI and tmpfs, where
    /// the machine does not outlive the work anyway.
    Atomic,
}

impl Durability {
    /// The names the command line and `APPLY_PATCH_DURABILITY` take.
    pub const NAMES: [&'static str; 3] = ["full", "fsync", "atomic"];

    /// The mode named `name` (one of [`Durability::NAMES`]).
    pub fn from_name(name: &str) -> Option<Durability> {
        match name {
            "full" => Some(Durability::Full),
            "fsync" => Some(Durability::FullFsync),
            "atomic" => Some(Durability::Atomic),
            _ => None,
        }
    }

    /// Anything is flushed at all.
    pub fn syncs(self) -> bool {
        self != Durability::Atomic
    }

    /// How its points sync: one `syncfs` where it pays (Linux), else each object; `None`
    /// for [`Durability::Atomic`].
    pub(crate) fn method(self) -> Option<Method> {
        match self {
            Durability::Full if cfg!(target_os = "linux") => Some(Method::SyncFs),
            Durability::Full | Durability::FullFsync => Some(Method::EachObject),
            Durability::Atomic => None,
        }
    }
}

/// How a point makes its objects durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// One `syncfs` of the root's file system for a point with [`SYNCFS_FROM`] objects or more
    /// on it (Linux).
    SyncFs,
    /// Each object synced, on a bounded number of threads.
    EachObject,
}

/// An object waiting for its point: kept open so that it can be synced.
enum Held<'a> {
    File(File),
    // On Windows a folder has nothing to flush: it is held, and counted, but never read.
    #[cfg_attr(windows, allow(dead_code))]
    Shared(Arc<Dir>),
    #[cfg_attr(windows, allow(dead_code))]
    Borrowed(&'a Dir),
}

/// What a sync thread is given of a held object: its descriptor on Unix; on Windows the
/// file itself, and nothing for a folder (which has nothing to flush there).
#[cfg(unix)]
type Syncable<'h> = BorrowedFd<'h>;
#[cfg(windows)]
type Syncable<'h> = Option<&'h File>;

impl Held<'_> {
    #[cfg(unix)]
    fn syncable(&self) -> Syncable<'_> {
        match self {
            Held::File(f) => f.as_fd(),
            Held::Shared(d) => d.as_fd(),
            Held::Borrowed(d) => d.as_fd(),
        }
    }

    #[cfg(windows)]
    fn syncable(&self) -> Syncable<'_> {
        match self {
            Held::File(f) => Some(f),
            Held::Shared(_) | Held::Borrowed(_) => None,
        }
    }
}

/// What the next durability point must make durable.
pub struct Point<'a> {
    root: &'a Dir,
    /// The root as errors show it.
    shown: String,
    root_dev: u64,
    /// `None`: nothing is synced ([`Durability::Atomic`]).
    method: Option<Method>,
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
    pub fn new(root: &'a Dir, shown: String, durability: Durability) -> Result<Point<'a>, TxnError> {
        Point::with_method(root, shown, durability.method())
    }

    /// [`Point::new`] with its method (`None`: nothing is synced).
    fn with_method(root: &'a Dir, shown: String, method: Option<Method>) -> Result<Point<'a>, TxnError> {
        let (root_dev, _) = root
            .identity()
            .map_err(|e| TxnError::io(&shown, "cannot open the root", e))?;
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

    /// The point flushes anything at all (not [`Durability::Atomic`]).
    pub fn syncs(&self) -> bool {
        self.method.is_some()
    }

    /// A staged file (on device `dev`) whose content and entry must be durable by the next
    /// [`Point::sync`].
    pub fn file(&mut self, path: &str, file: File, dev: u64) -> Result<(), TxnError> {
        self.hold(path, Held::File(file), dev)
    }

    /// A folder whose entries must be durable by the next [`Point::sync`] (once per folder).
    pub fn dir(&mut self, path: &str, dir: Arc<Dir>) -> Result<(), TxnError> {
        if !self.syncs() {
            return Ok(());
        }
        let id = identity(path, &dir)?;
        self.folder(path, id, Held::Shared(dir))
    }

    /// [`Point::dir`] for a folder the caller keeps.
    pub fn dir_ref(&mut self, path: &str, dir: &'a Dir) -> Result<(), TxnError> {
        if !self.syncs() {
            return Ok(());
        }
        self.folder(path, identity(path, dir)?, Held::Borrowed(dir))
    }

    fn folder(&mut self, path: &str, (dev, ino): (u64, u64), held: Held<'a>) -> Result<(), TxnError> {
        if !self.dirs.insert((dev, ino)) {
            return Ok(());
        }
        self.hold(path, held, dev)
    }

    fn hold(&mut self, path: &str, held: Held<'a>, dev: u64) -> Result<(), TxnError> {
        if self.method.is_none() {
            return Ok(()); // Closed now: nothing is flushed.
        }
        if self.method == Some(Method::SyncFs) && dev == self.root_dev {
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
    pub fn sync(&mut self) -> Result<(), TxnError> {
        self.sync_held()?;
        if self.whole {
            syncfs(self.root)
                .map_err(|e| TxnError::io(&self.shown, "cannot make the changes durable under", e))?;
            self.calls.0 += 1;
        }
        self.whole = false;
        self.on_root = 0;
        self.dirs.clear();
        Ok(())
    }

    /// Syncs the objects held, on up to [`THREADS`] threads (none for a few), and closes
    /// them.
    fn sync_held(&mut self) -> Result<(), TxnError> {
        let held = std::mem::take(&mut self.held);
        self.calls.1 += held.len();
        let fds: Vec<(&str, Syncable)> = held
            .iter()
            .map(|(p, h, _)| (p.as_str(), h.syncable()))
            .collect();
        let sync_part = |part: &[(&str, Syncable)]| {
            part.iter().try_for_each(|(path, fd)| {
                full_sync(*fd).map_err(|e| TxnError::io(path, "cannot sync", e))
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
                .map(|part| crate::pool::beside(scope, move || sync_part(part)))
                .collect();
            workers.into_iter().try_for_each(|w| {
                w.join().unwrap_or_else(|_| {
                    Err(TxnError::WorkerPanicked {
                        worker: Worker::Sync,
                    })
                })
            })
        })
    }
}

/// The device and inode (volume and file index on Windows) of the folder `dir`.
fn identity(path: &str, dir: &Dir) -> Result<(u64, u64), TxnError> {
    dir.identity()
        .map_err(|e| TxnError::io(path, "cannot sync", e))
}

/// `fsync`, or `F_FULLFSYNC` on macOS (falling back to `fsync` where the file system does not
/// support it).
#[cfg(unix)]
fn full_sync(fd: Syncable) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = fd.as_raw_fd();
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

/// `FlushFileBuffers` of a file; a folder has nothing to flush on Windows (its entries are in
/// the NTFS journal once the rename returns, README "Platforms").
#[cfg(windows)]
fn full_sync(file: Syncable) -> io::Result<()> {
    file.map_or(Ok(()), File::sync_all)
}

/// `syncfs` of the file system holding `root`.
#[cfg(target_os = "linux")]
fn syncfs(root: &Dir) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: `root` is open (borrowed for this call).
        if unsafe { libc::syncfs(root.as_raw_fd()) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn syncfs(_root: &Dir) -> io::Result<()> {
    unreachable!("Method::SyncFs is chosen on Linux only")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::dirfd;

    fn staged(root: &Dir, name: &str) -> (File, u64) {
        let file = root.create_file(name.as_bytes(), 0o600).expect("create");
        let dev = dirfd::file_stat(&file).expect("fstat").dev;
        (file, dev)
    }

    #[test]
    #[cfg(target_os = "linux")] // `syncfs` is Linux's (`Method::of_platform`)
    fn a_few_objects_are_fsynced_and_more_make_one_syncfs() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut point = Point::with_method(&root, "root".into(), Some(Method::SyncFs)).expect("point");
        let (f, dev) = staged(&root, "a");
        point.file("a", f, dev).expect("held");
        point.sync().expect("sync");
        assert_eq!(point.calls, (0, 1));

        let mut point = Point::with_method(&root, "root".into(), Some(Method::SyncFs)).expect("point");
        for i in 0..200 {
            let (f, dev) = staged(&root, &format!("f{i}"));
            point.file("f", f, dev).expect("held");
            assert!(point.held.len() < SYNCFS_FROM);
        }
        let sub = Arc::new(root.open_child(b".").expect("dup"));
        point.dir("d", Arc::clone(&sub)).expect("held");
        point.dir("d", sub).expect("once per folder");
        point.sync().expect("sync");
        assert_eq!(point.calls, (1, 0));
    }

    #[test]
    fn each_object_is_synced_in_bounded_batches() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut point = Point::with_method(&root, "root".into(), Some(Method::EachObject)).expect("point");
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

    #[test]
    fn an_atomic_point_syncs_nothing_and_closes_what_it_is_given() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut point = Point::new(&root, "root".into(), Durability::Atomic).expect("point");
        for i in 0..3 {
            let (f, dev) = staged(&root, &format!("f{i}"));
            point.file("f", f, dev).expect("taken");
        }
        point.dir_ref("root", &root).expect("taken");
        assert!(point.held.is_empty(), "nothing kept open to sync");
        point.sync().expect("sync");
        assert_eq!(point.calls, (0, 0));
        let mut full = Point::new(&root, "root".into(), Durability::FullFsync).expect("point");
        let (f, dev) = staged(&root, "g");
        full.file("g", f, dev).expect("held");
        full.sync().expect("sync");
        assert_eq!(full.calls, (0, 1), "a full point syncs each object it holds");
    }

    #[test]
    fn durability_names_round_trip_and_only_atomic_skips_syncs() {
        for name in Durability::NAMES {
            let d = Durability::from_name(name).expect("a name of ours");
            assert_eq!(d.syncs(), name != "atomic");
            assert_eq!(d.method().is_some(), d.syncs());
        }
        assert_eq!(Durability::from_name("relaxed"), None);
        assert_eq!(Durability::default(), Durability::Full);
    }
}
