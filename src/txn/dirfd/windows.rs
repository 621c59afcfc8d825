//! Stage: commit. The Windows side of [`Dir`]: a `cap-std` directory handle. Every name is
//! opened relative to the handle and never through a symlink (a reparse point), and the
//! handle is held without delete sharing, so neither the folder nor any folder above it can be
//! renamed or replaced by a symlink while the transaction uses it: the same guarantee the
//! `O_NOFOLLOW | O_DIRECTORY` walk gives on Unix. Windows has no permission bits, owners or
//! folder `fsync`: those are ignored here as git's `core.filemode=false` does (README
//! "Platforms"). No policy here.

use std::io;
use std::path::{Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::{Metadata, OpenOptions};

use super::{Dir, Kind, Stat};

/// The mode every regular file reports: Windows has none, and comparisons ignore it
/// ([`super::same_mode`]).
const FILE_MODE: u32 = 0o644;
const DIR_MODE: u32 = 0o755;

/// `ERROR_DIRECTORY`, `ERROR_STOPPED_ON_SYMLINK`, `ERROR_TOO_MANY_LINKS`: what opening a
/// folder without following a symlink returns for a file or a symlink.
const NOT_A_REAL_DIR: [i32; 3] = [267, 681, 1142];

/// `FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS`: open the link itself, and
/// folders too.
const OPEN_ITSELF: u32 = 0x0020_0000 | 0x0200_0000;

/// A name of one component as a path. Names are UTF-8 (they come from the patch's paths), and
/// a backslash or a colon would make Windows read one name as several (or as a drive or an
/// alternate stream), so both are refused.
fn name(bytes: &[u8]) -> io::Result<&Path> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
    let s = std::str::from_utf8(bytes).map_err(|_| invalid("name is not UTF-8"))?;
    if s.is_empty() || s.contains(['\\', ':', '\0']) {
        return Err(invalid(
            "name is empty or holds a character Windows reserves",
        ));
    }
    Ok(Path::new(s))
}

fn stat_of(m: &Metadata) -> Stat {
    let ft = m.file_type();
    // A symlink to a folder is a directory too: the symlink test comes first.
    let kind = if ft.is_symlink() {
        Kind::Symlink
    } else if ft.is_dir() {
        Kind::Directory
    } else if ft.is_file() {
        Kind::File
    } else {
        Kind::Other
    };
    Stat {
        kind,
        len: m.len(),
        mode: if kind == Kind::Directory {
            DIR_MODE
        } else {
            FILE_MODE
        },
        mtime: m.modified().ok().map(|t| t.into_std()),
        uid: 0,
        gid: 0,
        dev: m.dev(),
        ino: m.ino(),
    }
}

impl Dir {
    /// Opens an absolute (trusted) directory; symlinks in it are followed.
    pub fn open(path: &Path) -> io::Result<Dir> {
        let dir = cap_std::fs::Dir::open_ambient_dir(path, cap_std::ambient_authority())?;
        Ok(Dir { dir })
    }

    /// Opens the child directory `name`, refusing a symlink.
    pub fn open_child(&self, name_: &[u8]) -> io::Result<Dir> {
        let dir = self.dir.open_dir_nofollow(name(name_)?)?;
        Ok(Dir { dir })
    }

    /// Opens the child directory `name` as a place to look things up, following a symlink as
    /// a path lookup would (as on Unix). `cap-std` follows it only while it stays inside the
    /// handle's tree: a folder link leading out of it is an error here, where Unix would
    /// follow it (the path guards resolve symlinks before a tree lookup reaches here).
    pub fn open_child_following(&self, name_: &[u8]) -> io::Result<Dir> {
        let dir = self.dir.open_dir(name(name_)?)?;
        Ok(Dir { dir })
    }

    /// The `lstat` of `name`; `None` when it does not exist.
    pub fn stat(&self, name_: &[u8]) -> io::Result<Option<Stat>> {
        match self.dir.symlink_metadata(name(name_)?) {
            Ok(m) => Ok(Some(stat_of(&m))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Opens the file `name` for reading without following a symlink.
    pub fn open_file(&self, name_: &[u8]) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true).follow(FollowSymlinks::No);
        let file = self.dir.open_with(name(name_)?, &options)?;
        Ok(file.into_std())
    }

    /// The target of the symlink `name`, with `/` between its components as git records it.
    pub fn read_link(&self, name_: &[u8]) -> io::Result<Vec<u8>> {
        let target = self.dir.read_link_contents(name(name_)?)?;
        let target = target.into_os_string().into_string().map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidData, "symlink target is not UTF-8")
        })?;
        Ok(target.replace('\\', "/").into_bytes())
    }

    /// Creates `name` exclusively, never through a symlink; Windows has no mode to give it.
    pub fn create_file(&self, name_: &[u8], _mode: u32) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options
            .write(true)
            .create_new(true)
            .follow(FollowSymlinks::No);
        let file = self.dir.open_with(name(name_)?, &options)?;
        Ok(file.into_std())
    }

    /// Creates the directory `name`.
    pub fn mkdir(&self, name_: &[u8]) -> io::Result<()> {
        self.dir.create_dir(name(name_)?)
    }

    /// Creates the directory `name`; Windows has no mode to give it (it inherits the
    /// folder's access list).
    pub fn mkdir_private(&self, name_: &[u8]) -> io::Result<()> {
        self.mkdir(name_)
    }

    /// Creates a symlink `name` pointing at `target` (a folder symlink when the target is a
    /// folder now, as git for Windows does). Windows allows it to administrators and in
    /// developer mode only; elsewhere this is the error Windows gives. A target that is an
    /// absolute path is refused (`cap-std` keeps links inside the handle's tree).
    pub fn symlink(&self, target: &[u8], name_: &[u8]) -> io::Result<()> {
        let target = std::str::from_utf8(target)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "target is not UTF-8"))?;
        let target = PathBuf::from(target.replace('/', "\\"));
        let link = name(name_)?;
        if self.dir.is_dir(&target) {
            self.dir.symlink_dir(&target, link)
        } else {
            self.dir.symlink_file(&target, link)
        }
    }

    /// Renames `from` (in this directory) to `to` in `dest`, replacing a file there.
    pub fn rename(&self, from: &[u8], dest: &Dir, to: &[u8]) -> io::Result<()> {
        self.dir.rename(name(from)?, &dest.dir, name(to)?)
    }

    /// Hard-links `from` (in this directory) to `to` in `dest`.
    pub fn link(&self, from: &[u8], dest: &Dir, to: &[u8]) -> io::Result<()> {
        self.dir.hard_link(name(from)?, &dest.dir, name(to)?)
    }

    /// Removes the file or symlink `name` (a folder symlink included).
    pub fn unlink(&self, name_: &[u8]) -> io::Result<()> {
        self.dir.remove_file_or_symlink(name(name_)?)
    }

    /// Removes the empty directory `name`.
    pub fn rmdir(&self, name_: &[u8]) -> io::Result<()> {
        self.dir.remove_dir(name(name_)?)
    }

    /// Volume serial number and file index of the directory itself.
    pub fn identity(&self) -> io::Result<(u64, u64)> {
        let m = self.dir.dir_metadata()?;
        Ok((m.dev(), m.ino()))
    }

    /// Nothing to do: Windows cannot flush a folder opened for reading, and NTFS commits a
    /// rename to its own journal before it returns (README "Platforms").
    pub fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// The `fstat` of an open file.
pub fn file_stat(file: &std::fs::File) -> io::Result<Stat> {
    Metadata::from_file(file).map(|m| stat_of(&m))
}

/// Windows has no permission bits: nothing to set (git's `core.filemode=false`).
pub fn fchmod(_file: &std::fs::File, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Windows files have no Unix owner: nothing to give.
pub fn fchown_if_permitted(_file: &std::fs::File, _uid: u32, _gid: u32) -> io::Result<()> {
    Ok(())
}

/// Volume serial number and file index of `path` itself (a symlink is not followed).
pub fn path_identity(path: &Path) -> io::Result<(u64, u64)> {
    use std::os::windows::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .access_mode(0)
        .custom_flags(OPEN_ITSELF)
        .open(path)?;
    let m = Metadata::from_file(&file)?;
    Ok((m.dev(), m.ino()))
}

/// Is this I/O error what opening a folder without following a symlink returns for a
/// symlink or a non-directory?
pub fn is_not_a_real_dir(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::NotADirectory
        || e.raw_os_error()
            .is_some_and(|c| NOT_A_REAL_DIR.contains(&c))
}
