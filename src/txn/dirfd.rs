//! Stage: commit. Directory handles: every write of the transaction goes through a directory
//! file descriptor opened component by component with `O_NOFOLLOW | O_DIRECTORY`, so a
//! symlink swapped into a directory of the path after planning cannot redirect a write out of
//! the root (`path_escape`). Thin, safe wrappers over the `*at` system calls; no policy here.
//!
//! On Windows the same `Dir` is a `cap-std` directory handle (`dirfd/windows.rs`): names are
//! opened relative to the handle (`NtCreateFile` with a root directory), a symlink is never
//! followed, and an open folder cannot be renamed or removed while it is held, so the walk
//! keeps the same guarantee there. Modes, owners and folder syncs have no Windows meaning and
//! are ignored (README "Platforms").

#[cfg(unix)]
use std::ffi::{CString, OsStr};
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
#[cfg(unix)]
use std::path::Path;
use std::time::SystemTime;
#[cfg(unix)]
use std::time::{Duration, UNIX_EPOCH};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{fchmod, fchown_if_permitted, file_stat, is_not_a_real_dir, path_identity};

use super::TxnError;

/// What `lstat` says about one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Symlink,
    Directory,
    Other,
}

/// The parts of `struct stat` the transaction compares.
#[derive(Debug, Clone, Copy)]
pub struct Stat {
    pub kind: Kind,
    pub len: u64,
    pub mode: u32,
    pub mtime: Option<SystemTime>,
    pub uid: u32,
    pub gid: u32,
    /// Device and inode: the identity of the file.
    pub dev: u64,
    pub ino: u64,
}

#[cfg(unix)]
impl Stat {
    // The casts are no-ops on Linux but not on every Unix (`st_mode` is 16 bits on macOS).
    #[allow(clippy::unnecessary_cast)]
    fn from_raw(st: &libc::stat) -> Stat {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFLNK => Kind::Symlink,
            libc::S_IFDIR => Kind::Directory,
            _ => Kind::Other,
        };
        let mtime = if st.st_mtime >= 0 {
            let nanos = u32::try_from(st.st_mtime_nsec).unwrap_or(0);
            UNIX_EPOCH.checked_add(Duration::new(st.st_mtime as u64, nanos))
        } else {
            None
        };
        Stat {
            kind,
            len: st.st_size as u64,
            mode: (st.st_mode as u32) & 0o7777,
            mtime,
            uid: st.st_uid,
            gid: st.st_gid,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }
}

/// An open directory.
#[derive(Debug)]
pub struct Dir {
    #[cfg(unix)]
    fd: OwnedFd,
    #[cfg(windows)]
    dir: cap_std::fs::Dir,
}

#[cfg(unix)]
fn cstr(name: &[u8]) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "nul byte in name"))
}

#[cfg(unix)]
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Runs a system call again while it is interrupted by a signal.
#[cfg(unix)]
fn retry<F: FnMut() -> libc::c_int>(mut f: F) -> io::Result<libc::c_int> {
    loop {
        match check(f()) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Outcome of walking down a relative directory path.
pub enum Walk {
    /// Every component exists and is a real directory.
    Found(Dir),
    /// `existing` components exist (the last opened is `dir`); the rest are missing.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))]
    Partial { dir: Dir, existing: usize },
}

/// Reads the rest of `f` into `bytes`, which has room reserved for the size the caller's
/// `fstat` gave. Not `File::read_to_end`, which asks the file's size and position again (two
/// system calls per file), nor `Read::read_to_end` without that size, which reads in small
/// pieces first: one read fills the room, one more finds the end (or a file that grew).
fn read_rest(f: &mut std::fs::File, bytes: &mut Vec<u8>) -> io::Result<usize> {
    read_rest_within(f, bytes, u64::MAX)
}

/// [`read_rest`], refusing (`FileTooLarge`) a file that grows past `limit` bytes in all
/// while it is read: only `limit + 1` bytes are ever asked for.
fn read_rest_within(f: &mut std::fs::File, bytes: &mut Vec<u8>, limit: u64) -> io::Result<usize> {
    use std::io::Read;
    let start = bytes.len();
    let room = bytes.capacity() - start;
    bytes.resize(start + room, 0);
    let mut filled = start;
    while filled < bytes.len() {
        match f.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                bytes.truncate(filled);
                return Err(e);
            }
        }
    }
    bytes.truncate(filled);
    if filled - start == room {
        let left = limit.saturating_sub(bytes.len() as u64).saturating_add(1);
        Read::take(f, left).read_to_end(bytes)?;
        if bytes.len() as u64 > limit {
            bytes.truncate(start);
            return Err(over_limit(limit));
        }
    }
    Ok(bytes.len() - start)
}

/// `f` with its `fstat` when it is a regular file; anything else is refused (`InvalidInput`).
fn regular(f: std::fs::File) -> io::Result<(std::fs::File, Stat)> {
    let st = file_stat(&f)?;
    if st.kind != Kind::File {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok((f, st))
}

/// The whole of `f`, opened by the caller as [`Dir::open_file`] opens (not through a
/// symlink, not waiting on a FIFO), and its `fstat`, when it is a regular file of at most
/// `limit` bytes (see [`Dir::read_file_within`]). A file too large for the memory is an
/// error (`OutOfMemory`), as for [`Dir::read_file`].
pub fn read_opened_within(f: std::fs::File, limit: u64) -> io::Result<(Vec<u8>, Stat)> {
    let (mut f, st) = regular(f)?;
    if st.len > limit {
        return Err(over_limit(limit));
    }
    let expected = usize::try_from(st.len).map_err(|_| too_large(&st))?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(expected)
        .map_err(|_| too_large(&st))?;
    read_rest_within(&mut f, &mut bytes, limit)?;
    Ok((bytes, st))
}

/// A file longer than a read's limit.
fn over_limit(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("the file is larger than {limit} bytes"),
    )
}

impl Dir {
    #[cfg(unix)]
    /// Opens an absolute (trusted) directory; symlinks in it are followed.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstr(path.as_os_str().as_bytes())?;
        // SAFETY: `c` is a valid NUL-terminated string; the fd returned is owned below.
        let fd = retry(|| unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned by open and is owned by nobody else.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    #[cfg(unix)]
    fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    #[cfg(unix)]
    /// Opens the child directory `name`, refusing a symlink (`ELOOP`/`ENOTDIR`).
    pub fn open_child(&self, name: &[u8]) -> io::Result<Dir> {
        let c = cstr(name)?;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid dirfd and C string; the returned fd is owned below.
        let fd = retry(|| unsafe { libc::openat(self.raw(), c.as_ptr(), flags) })?;
        // SAFETY: `fd` was just returned by openat.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    #[cfg(unix)]
    /// Opens the child directory `name` only as a place to look things up (`O_PATH`: no read
    /// permission needed), following a symlink as a path lookup would.
    pub fn open_child_following(&self, name: &[u8]) -> io::Result<Dir> {
        let c = cstr(name)?;
        // `O_PATH` (Linux) needs no read permission; elsewhere the folder is opened for reading.
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let access = libc::O_PATH;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let access = libc::O_RDONLY;
        let flags = access | libc::O_DIRECTORY | libc::O_CLOEXEC;
        // SAFETY: valid dirfd and C string; the returned fd is owned below.
        let fd = retry(|| unsafe { libc::openat(self.raw(), c.as_ptr(), flags) })?;
        // SAFETY: `fd` was just returned by openat.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Walks down `components`, stopping at the first missing one. A component that is a
    /// symlink or not a directory is an error (`path_escape` / `io_error` by the caller).
    pub fn walk(self, components: &[&[u8]]) -> io::Result<Walk> {
        let mut dir = self;
        for (i, comp) in components.iter().enumerate() {
            match dir.open_child(comp) {
                Ok(child) => dir = child,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Walk::Partial { dir, existing: i });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Walk::Found(dir))
    }

    #[cfg(unix)]
    /// `lstat` of `name`; `None` when it does not exist.
    pub fn stat(&self, name: &[u8]) -> io::Result<Option<Stat>> {
        let c = cstr(name)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: valid dirfd, C string and out-pointer.
        let r = retry(|| unsafe {
            libc::fstatat(
                self.raw(),
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        });
        match r {
            // SAFETY: fstatat succeeded, so it filled `st`.
            Ok(_) => Ok(Some(Stat::from_raw(unsafe { &st.assume_init() }))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    #[cfg(unix)]
    /// Opens the regular file `name` for reading without following a symlink.
    pub fn open_file(&self, name: &[u8]) -> io::Result<std::fs::File> {
        let c = cstr(name)?;
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        // SAFETY: valid dirfd and C string.
        let fd = retry(|| unsafe { libc::openat(self.raw(), c.as_ptr(), flags) })?;
        // SAFETY: `fd` was just returned by openat and is owned by the File.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }

    /// Opens the regular file `name` (anything else is refused) with its `fstat`.
    fn open_regular(&self, name: &[u8]) -> io::Result<(std::fs::File, Stat)> {
        regular(self.open_file(name)?)
    }

    /// Reads the whole regular file `name` and its `fstat` (of the same open file). A file
    /// too large for the memory is an error (`OutOfMemory`), not the end of the process.
    pub fn read_file(&self, name: &[u8]) -> io::Result<(Vec<u8>, Stat)> {
        self.read_file_within(name, u64::MAX)
    }

    /// [`Dir::read_file`] of a file that may hold at most `limit` bytes: a longer one is
    /// refused (`FileTooLarge`) before it is read, or as soon as it grows past the limit
    /// while it is read. Opened as every read of the tree is (no symlink followed, no wait on
    /// a FIFO, nothing but a regular file), so a file of the state place that is a link to
    /// `/dev/zero`, a FIFO or a huge file can neither hang a run nor exhaust its memory.
    pub fn read_file_within(&self, name: &[u8], limit: u64) -> io::Result<(Vec<u8>, Stat)> {
        read_opened_within(self.open_file(name)?, limit)
    }

    /// [`Dir::read_file`] and the SHA-256 of the bytes read. A large file is hashed on
    /// another thread piece by piece while the next piece is read, so that reading and
    /// hashing cost about the time of the slower of the two. A file too large for the
    /// memory is an error (`OutOfMemory`), as for [`Dir::read_file`].
    pub fn read_file_hashed(&self, name: &[u8]) -> io::Result<(Vec<u8>, [u8; 32], Stat)> {
        use sha2::Digest;
        use std::io::Read;
        let (mut f, st) = self.open_regular(name)?;
        let expected = usize::try_from(st.len).map_err(|_| too_large(&st))?;
        if expected < PARALLEL_HASH_BYTES {
            let mut bytes = Vec::new();
            bytes
                .try_reserve_exact(expected)
                .map_err(|_| too_large(&st))?;
            read_rest(&mut f, &mut bytes)?;
            let sha256 = sha2::Sha256::digest(&bytes).into();
            return Ok((bytes, sha256, st));
        }
        // Zeroed lazily by the kernel: no page is touched before the read fills it.
        let mut bytes = zeroed(expected).ok_or_else(|| too_large(&st))?;
        let (filled, hashed) = std::thread::scope(|scope| -> io::Result<(usize, sha2::Sha256)> {
            let (pieces, received) = std::sync::mpsc::channel::<&[u8]>();
            let hashing = crate::pool::beside(scope, move || {
                let mut hasher = sha2::Sha256::new();
                for piece in received {
                    hasher.update(piece);
                }
                hasher
            });
            let mut rest: &mut [u8] = &mut bytes;
            let mut filled = 0;
            let read = loop {
                if rest.is_empty() {
                    break Ok(());
                }
                let want = rest.len().min(READ_PIECE);
                match f.read(&mut rest[..want]) {
                    Ok(0) => break Ok(()),
                    Ok(n) => {
                        let (done, tail) = std::mem::take(&mut rest).split_at_mut(n);
                        // The receiver only goes away with a panic, which the join passes on.
                        let _ = pieces.send(done);
                        rest = tail;
                        filled += n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            drop(pieces);
            let hasher = hashing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            read.map(|()| (filled, hasher))
        })?;
        bytes.truncate(filled);
        // A file that grew while it was read: the rest too, hashed with the whole.
        let before = bytes.len();
        read_rest(&mut f, &mut bytes)?;
        let sha256 = if bytes.len() == before {
            hashed.finalize().into()
        } else {
            sha2::Sha256::digest(&bytes).into()
        };
        Ok((bytes, sha256, st))
    }

    /// The SHA-256 of the regular file `name` and its `fstat` (of the same open file), read
    /// in pieces: checking a large file costs no memory and no copy of it.
    pub fn hash_file(&self, name: &[u8]) -> io::Result<([u8; 32], Stat)> {
        use sha2::Digest;
        use std::io::Read;
        let (mut f, st) = self.open_regular(name)?;
        let mut hasher = sha2::Sha256::new();
        let mut buf = vec![0u8; HASH_CHUNK];
        loop {
            match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok((hasher.finalize().into(), st))
    }

    /// Does the regular file `name` hold exactly `expected`? Read in pieces and compared
    /// as it is read (a comparison costs a fraction of a hash), stopping at the first
    /// difference.
    pub fn holds(&self, name: &[u8], expected: &[u8]) -> io::Result<bool> {
        use std::io::Read;
        let (mut f, st) = self.open_regular(name)?;
        if st.len != expected.len() as u64 {
            return Ok(false);
        }
        // No larger than the file (and one byte to see its end): a small file's check then
        // needs no fresh pages of its own.
        let mut buf = vec![0u8; HASH_CHUNK.min(expected.len() + 1)];
        let mut rest = expected;
        loop {
            match f.read(&mut buf) {
                Ok(0) => return Ok(rest.is_empty()),
                Ok(n) => match rest.strip_prefix(&buf[..n]) {
                    Some(tail) => rest = tail,
                    None => return Ok(false),
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    #[cfg(unix)]
    /// The target of the symlink `name`.
    pub fn read_link(&self, name: &[u8]) -> io::Result<Vec<u8>> {
        let c = cstr(name)?;
        let mut buf = vec![0u8; 4096];
        loop {
            // SAFETY: valid dirfd, C string and buffer of the given length.
            let n = unsafe {
                libc::readlinkat(self.raw(), c.as_ptr(), buf.as_mut_ptr().cast(), buf.len())
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            // A full buffer may be a truncated target: try again with a bigger one.
            if (n as usize) < buf.len() {
                buf.truncate(n as usize);
                return Ok(buf);
            }
            buf.resize(buf.len() * 2, 0);
        }
    }

    #[cfg(unix)]
    /// Creates `name` exclusively (`O_EXCL`, never through a symlink) with `mode`.
    pub fn create_file(&self, name: &[u8], mode: u32) -> io::Result<std::fs::File> {
        let c = cstr(name)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid dirfd and C string.
        let fd =
            retry(|| unsafe { libc::openat(self.raw(), c.as_ptr(), flags, mode as libc::c_uint) })?;
        // SAFETY: `fd` was just returned by openat.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }

    #[cfg(unix)]
    /// Creates the directory `name`.
    pub fn mkdir(&self, name: &[u8]) -> io::Result<()> {
        self.mkdir_mode(name, 0o777)
    }

    #[cfg(unix)]
    /// Creates the directory `name` that only its owner may enter (apply-patch's own folders
    /// in the tree: the journal folder outside git).
    pub fn mkdir_private(&self, name: &[u8]) -> io::Result<()> {
        self.mkdir_mode(name, 0o700)
    }

    #[cfg(unix)]
    fn mkdir_mode(&self, name: &[u8], mode: libc::mode_t) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: valid dirfd and C string.
        retry(|| unsafe { libc::mkdirat(self.raw(), c.as_ptr(), mode) }).map(|_| ())
    }

    #[cfg(unix)]
    /// Creates a symlink `name` pointing at `target`.
    pub fn symlink(&self, target: &[u8], name: &[u8]) -> io::Result<()> {
        let t = cstr(target)?;
        let c = cstr(name)?;
        // SAFETY: valid dirfd and C strings.
        retry(|| unsafe { libc::symlinkat(t.as_ptr(), self.raw(), c.as_ptr()) }).map(|_| ())
    }

    #[cfg(unix)]
    /// Renames `from` (in this directory) to `to` in `dest` (atomic replace).
    pub fn rename(&self, from: &[u8], dest: &Dir, to: &[u8]) -> io::Result<()> {
        let f = cstr(from)?;
        let t = cstr(to)?;
        // SAFETY: valid dirfds and C strings.
        retry(|| unsafe { libc::renameat(self.raw(), f.as_ptr(), dest.raw(), t.as_ptr()) })
            .map(|_| ())
    }

    #[cfg(unix)]
    /// Hard-links `from` (in this directory, the link itself when a symlink) to `to` in `dest`.
    pub fn link(&self, from: &[u8], dest: &Dir, to: &[u8]) -> io::Result<()> {
        let f = cstr(from)?;
        let t = cstr(to)?;
        // SAFETY: valid dirfds and C strings.
        retry(|| unsafe { libc::linkat(self.raw(), f.as_ptr(), dest.raw(), t.as_ptr(), 0) })
            .map(|_| ())
    }

    #[cfg(unix)]
    /// Removes the file or symlink `name`.
    pub fn unlink(&self, name: &[u8]) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: valid dirfd and C string.
        retry(|| unsafe { libc::unlinkat(self.raw(), c.as_ptr(), 0) }).map(|_| ())
    }

    #[cfg(unix)]
    /// Removes the empty directory `name`.
    pub fn rmdir(&self, name: &[u8]) -> io::Result<()> {
        let c = cstr(name)?;
        // SAFETY: valid dirfd and C string.
        retry(|| unsafe { libc::unlinkat(self.raw(), c.as_ptr(), libc::AT_REMOVEDIR) }).map(|_| ())
    }

    #[cfg(unix)]
    /// `fstat` of the directory itself.
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        fstat(self.raw()).map(|st| (st.dev, st.ino))
    }

    /// Flushes the directory's entries (a rename is durable only after this).
    #[cfg(all(unix, not(target_vendor = "apple")))]
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: valid fd.
        retry(|| unsafe { libc::fsync(self.raw()) }).map(|_| ())
    }

    /// Flushes the directory's entries to the disk itself: on macOS a plain `fsync` only
    /// hands them to the drive, whose cache may lose them on power loss; `F_FULLFSYNC` asks
    /// the drive to flush (what `File::sync_all` does for files there). A file system
    /// without it (some network ones) gets the plain `fsync`.
    #[cfg(target_vendor = "apple")]
    pub fn sync(&self) -> io::Result<()> {
        // SAFETY: valid fd; F_FULLFSYNC takes no argument.
        match retry(|| unsafe { libc::fcntl(self.raw(), libc::F_FULLFSYNC) }) {
            Ok(_) => Ok(()),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTSUP) | Some(libc::EINVAL)) => {
                // SAFETY: valid fd.
                retry(|| unsafe { libc::fsync(self.raw()) }).map(|_| ())
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(unix)]
impl AsRawFd for Dir {
    fn as_raw_fd(&self) -> RawFd {
        self.raw()
    }
}

#[cfg(unix)]
impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// From this size on, [`Dir::read_file_hashed`] hashes on a second thread, in pieces of
/// [`READ_PIECE`] bytes.
const PARALLEL_HASH_BYTES: usize = 1 << 20;
const READ_PIECE: usize = 1 << 20;

/// A file that does not fit in the memory: an error, not the end of the process.
fn too_large(st: &Stat) -> io::Error {
    io::Error::new(
        io::ErrorKind::OutOfMemory,
        format!(
            "the file is too large to read into memory ({} bytes)",
            st.len
        ),
    )
}

/// `len` zero bytes, which the kernel zeroes when they are first touched (none is written
/// here); `None` when the memory cannot be had.
fn zeroed(len: usize) -> Option<Vec<u8>> {
    let layout = std::alloc::Layout::array::<u8>(len).ok()?;
    if layout.size() == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the layout's size is not zero.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    // SAFETY: `ptr` is a zeroed allocation of the global allocator with exactly this
    // layout (align 1, `len` bytes), so it is a valid `Vec<u8>` of length and capacity `len`.
    (!ptr.is_null()).then(|| unsafe { Vec::from_raw_parts(ptr, len, len) })
}

/// The piece size of [`Dir::hash_file`]: large enough for few system calls, small enough to
/// stay in the cache while it is hashed.
const HASH_CHUNK: usize = 256 * 1024;

/// `fstat` of an open file.
#[cfg(unix)]
pub fn file_stat(file: &std::fs::File) -> io::Result<Stat> {
    fstat(file.as_raw_fd())
}

/// `fstat` of an open descriptor.
#[cfg(unix)]
pub fn fstat(fd: RawFd) -> io::Result<Stat> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: valid fd and out-pointer.
    retry(|| unsafe { libc::fstat(fd, st.as_mut_ptr()) })?;
    // SAFETY: fstat succeeded, so it filled `st`.
    Ok(Stat::from_raw(unsafe { &st.assume_init() }))
}

/// A file being written that starts the write-back of what it was given every
/// [`WRITE_BACK_STEP`] bytes, so that the `fsync` that follows waits for the tail only (on
/// Linux; elsewhere it only writes).
pub struct WritingBack<'f> {
    file: &'f std::fs::File,
    written: u64,
    started: u64,
}

/// How much written data [`WritingBack`] lets accumulate before it starts its write-back.
pub const WRITE_BACK_STEP: u64 = 4 << 20;

impl<'f> WritingBack<'f> {
    pub fn new(file: &'f std::fs::File) -> Self {
        WritingBack {
            file,
            written: 0,
            started: 0,
        }
    }

    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        if self.written - self.started >= WRITE_BACK_STEP {
            #[cfg(target_os = "linux")]
            // SAFETY: valid fd; the call only starts write-back of the range (a failure
            // here is not an error: the fsync that follows writes and reports everything).
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    self.started as libc::off64_t,
                    (self.written - self.started) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
            }
            self.started = self.written;
        }
    }
}

impl io::Write for WritingBack<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&*self.file).write(buf)?;
        self.wrote(n);
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let n = (&*self.file).write_vectored(bufs)?;
        self.wrote(n);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sets the permission bits of an open file (not subject to the umask, unlike `open`).
#[cfg(unix)]
pub fn fchmod(file: &std::fs::File, mode: u32) -> io::Result<()> {
    // SAFETY: valid fd.
    retry(|| unsafe { libc::fchmod(file.as_raw_fd(), mode as libc::mode_t) }).map(|_| ())
}

/// Gives an open file the owner and group of the file it replaces; only root or the owner
/// may, so a refusal (`EPERM`) is ignored as SPEC §6 says "where permitted".
#[cfg(unix)]
pub fn fchown_if_permitted(file: &std::fs::File, uid: u32, gid: u32) -> io::Result<()> {
    // SAFETY: valid fd.
    match retry(|| unsafe { libc::fchown(file.as_raw_fd(), uid, gid) }) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Splits a root-relative `/`-separated path into its components, refusing `.`/`..`/empty
/// components and absolute paths (the planner normalises; this is the last guard).
pub fn components(path: &str) -> Result<Vec<&[u8]>, TxnError> {
    let mut out = Vec::new();
    for comp in path.split('/') {
        if comp.is_empty() || comp == "." || comp == ".." {
            return Err(TxnError::NotNormalised {
                path: path.to_string(),
            });
        }
        out.push(comp.as_bytes());
    }
    Ok(out)
}

/// The display form of a name for messages.
#[cfg(unix)]
pub fn show(name: &[u8]) -> String {
    Path::new(OsStr::from_bytes(name)).display().to_string()
}

/// The display form of a name for messages (names are UTF-8 on Windows).
#[cfg(windows)]
pub fn show(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// Device and inode of `path` itself (a symlink is not followed).
#[cfg(unix)]
pub fn path_identity(path: &Path) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).map(|m| (m.dev(), m.ino()))
}

/// Do two permission modes agree? Always on Windows, which has no permission bits to compare
/// (git's `core.filemode=false`): the mode a patch sets is recorded, not applied there.
pub fn same_mode(a: u32, b: u32) -> bool {
    cfg!(windows) || a == b
}

/// Is this I/O error what `O_NOFOLLOW | O_DIRECTORY` returns for a symlink or a non-directory?
#[cfg(unix)]
pub fn is_not_a_real_dir(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn read_file_hashed_agrees_with_read_and_hash() {
        let dir = tempfile::tempdir().expect("temp dir");
        let handle = Dir::open(dir.path()).expect("open");
        // Below and above the size from which the hash runs on its own thread, and a size
        // that is not a whole number of pieces.
        for len in [0, 5, PARALLEL_HASH_BYTES - 1, 3 * READ_PIECE + 12_345] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            std::fs::write(dir.path().join("f"), &bytes).expect("write");
            let (read, sha256, st) = handle.read_file_hashed(b"f").expect("read");
            assert_eq!(read, bytes);
            assert_eq!(st.len, len as u64);
            assert_eq!(sha256, <[u8; 32]>::from(sha2::Sha256::digest(&bytes)));
            let (hashed, _) = handle.hash_file(b"f").expect("hash");
            assert_eq!(hashed, sha256);
        }
    }

    #[test]
    fn holds_compares_the_whole_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let handle = Dir::open(dir.path()).expect("open");
        let bytes: Vec<u8> = (0..3 * HASH_CHUNK + 17).map(|i| (i % 253) as u8).collect();
        std::fs::write(dir.path().join("f"), &bytes).expect("write");
        assert!(handle.holds(b"f", &bytes).expect("read"));
        let mut other = bytes.clone();
        *other.last_mut().expect("not empty") ^= 1;
        assert!(!handle.holds(b"f", &other).expect("read"), "last byte");
        other = bytes.clone();
        other[HASH_CHUNK] ^= 1;
        assert!(!handle.holds(b"f", &other).expect("read"), "a later piece");
        assert!(!handle.holds(b"f", &bytes[1..]).expect("read"), "shorter");
        std::fs::write(dir.path().join("e"), b"").expect("write");
        assert!(handle.holds(b"e", b"").expect("read"));
    }

    #[test]
    fn writing_back_writes_every_byte() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("temp dir");
        let bytes: Vec<u8> = (0..(2 * WRITE_BACK_STEP as usize + 999))
            .map(|i| (i % 241) as u8)
            .collect();
        let file = std::fs::File::create(dir.path().join("w")).expect("create");
        let mut out = WritingBack::new(&file);
        for piece in bytes.chunks(1 << 20) {
            out.write_all(piece).expect("write");
        }
        let pieces = [io::IoSlice::new(b"ta"), io::IoSlice::new(b"il")];
        let mut n = out.write_vectored(&pieces).expect("write");
        // Windows has no vectored write for files: there the call takes the first piece only.
        if cfg!(windows) && n == 2 {
            n += out.write(b"il").expect("write");
        }
        assert_eq!(n, 4);
        drop(file);
        let mut expected = bytes;
        expected.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(dir.path().join("w")).expect("read"), expected);
    }
}
