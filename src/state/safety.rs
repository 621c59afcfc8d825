//! What a file or folder of the state place must be before apply-patch uses it (SPEC §6,
//! README "Transactions, undo and recovery"): a folder a real folder (a symlink is never
//! followed) owned by the current user (as [`crate::root::is_ours`] decides, git's rule) and
//! writable by nobody else; a file a regular file (opened, read with a size limit, by
//! `txn::place`). Folders are created readable by their owner only (0700), and an older one
//! of ours that others could read is made so. Anything else is refused with an error that
//! says what was found there and how to clear it ([`refusal`]).
//!
//! Stage: infrastructure for the commit. Must not touch the work tree, and must not remove
//! or change what it refuses.

use std::path::{Path, PathBuf};

use super::StateError;
use crate::Error;

/// What apply-patch keeps at a place of the state it refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeps {
    /// A folder of the state place.
    Folder,
    /// A file of the state place.
    File,
    /// The journal folder of a running (or interrupted) transaction.
    JournalFolder,
}

impl Keeps {
    fn noun(self) -> &'static str {
        match self {
            Keeps::Folder => "a folder of its own",
            Keeps::File => "a file of its own",
            Keeps::JournalFolder => "the journal folder of a running transaction",
        }
    }
}

/// What was found at a place of the state that apply-patch will not use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A symbolic link (not followed), with its target.
    Symlink { target: PathBuf },
    /// Another kind of file: `a folder`, `a regular file`, `a FIFO`, `a device`, `a socket`.
    Kind { what: &'static str },
    /// It belongs to another user.
    Owner { uid: u32 },
    /// The group or others may write it (its permission bits).
    Writable { mode: u32 },
    /// It is longer than anything apply-patch writes there.
    TooLarge { limit: u64 },
}

impl Found {
    /// The stable word of `details.found`.
    pub fn word(&self) -> &'static str {
        match self {
            Found::Symlink { .. } => "symlink",
            Found::Kind { what } => match *what {
                "a folder" => "folder",
                "a regular file" => "file",
                "a FIFO" => "fifo",
                "a device" => "device",
                "a socket" => "socket",
                _ => "other",
            },
            Found::Owner { .. } => "other_owner",
            Found::Writable { .. } => "writable_by_others",
            Found::TooLarge { .. } => "too_large",
        }
    }
}

/// The message of a refused place.
pub fn message(path: &Path, keeps: Keeps, found: &Found) -> String {
    let path = path.display();
    let noun = keeps.noun();
    match found {
        Found::Symlink { target } => format!(
            "{path} is a symbolic link (to {}), where apply-patch keeps {noun}; it was not \
             followed",
            target.display()
        ),
        Found::Kind { what } => format!("{path} is {what}, where apply-patch keeps {noun}"),
        Found::Owner { uid } => format!(
            "{path} belongs to another user (uid {uid}); apply-patch uses only state that the \
             user running it owns"
        ),
        Found::Writable { mode } => format!(
            "{path} can be written by other users (mode {mode:o}); apply-patch uses only state \
             that no one but its owner can change"
        ),
        Found::TooLarge { limit } => format!(
            "{path} is larger than anything apply-patch writes there ({limit} bytes at most)"
        ),
    }
}

/// The next step for a refused place.
pub fn hint(path: &Path, keeps: Keeps, found: &Found) -> String {
    let path = path.display();
    let remove = match keeps {
        Keeps::File => "rm",
        Keeps::Folder | Keeps::JournalFolder => "rm -r",
    };
    match found {
        Found::Symlink { .. } => format!(
            "it is not apply-patch's: remove the link (`rm {path}` removes the link itself, not \
             what it points to) or rename it, then run again"
        ),
        Found::Kind { .. } | Found::TooLarge { .. } => format!(
            "it is not apply-patch's: remove it or move it away (`mv {path} {path}.found`), then \
             run again"
        ),
        Found::Owner { .. } => format!(
            "run apply-patch as the user who owns it; or, if you do not know where it came \
             from, remove it (`{remove} {path}`): apply-patch makes a new one, yours"
        ),
        Found::Writable { .. } => format!(
            "if no one else has written in it, make it yours alone (`chmod go-w {path}`); \
             otherwise remove it (`{remove} {path}`)"
        ),
    }
}

/// The refusal of a place of the state ([`super::StateError::Unsafe`]): `usage` for an
/// owner or mode to fix, `io_error` for a file that is not apply-patch's; `details.state`
/// names the place and `details.found` what is there.
pub fn refusal(path: &Path, keeps: Keeps, found: &Found) -> StateError {
    StateError::Unsafe {
        path: path.to_path_buf(),
        keeps,
        found: found.clone(),
    }
}

/// Is `err` the refusal of a place of the state ([`refusal`])? Its own message and hint say
/// what to do; a caller must not replace them with "run `apply-patch recover`", which would
/// meet the same place.
pub fn is_refusal(err: &Error) -> bool {
    err.details()
        .is_some_and(|d| d.get("state").is_some() && d.get("found").is_some())
}

/// What stands at `path` itself (not followed); `None` when nothing does.
pub(crate) fn lstat(path: &Path) -> Result<Option<std::fs::Metadata>, StateError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StateError::io(path, "cannot look at the state", &e)),
    }
}

/// What kind of thing `meta` is, as a refusal names it.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a folder";
    }
    if ft.is_file() {
        return "a regular file";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "neither a file nor a folder"
}

/// The flaw of what `meta` (of `path`, not followed) is, for a place that keeps `keeps`;
/// `None` when it may be used.
pub(crate) fn flaw(path: &Path, meta: &std::fs::Metadata, keeps: Keeps) -> Option<Found> {
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).unwrap_or_default();
        return Some(Found::Symlink { target });
    }
    let want_folder = keeps != Keeps::File;
    if meta.is_dir() != want_folder || !(meta.is_dir() || meta.is_file()) {
        return Some(Found::Kind {
            what: kind_of(meta),
        });
    }
    owner_flaw(meta)
}

/// The owner or mode flaw of `meta` (Unix only: Windows has neither).
#[cfg(unix)]
fn owner_flaw(meta: &std::fs::Metadata) -> Option<Found> {
    use std::os::unix::fs::MetadataExt;
    owner_mode_flaw(meta.uid(), meta.mode())
}

#[cfg(not(unix))]
fn owner_flaw(_meta: &std::fs::Metadata) -> Option<Found> {
    None
}

/// A place owned by `uid` with permission bits `mode`: foreign, or writable by others?
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn owner_mode_flaw(uid: u32, mode: u32) -> Option<Found> {
    if !crate::root::is_ours(uid) {
        return Some(Found::Owner { uid });
    }
    if mode & 0o022 != 0 {
        return Some(Found::Writable { mode: mode & 0o7777 });
    }
    None
}

/// Checks the folder at `path` (see the module docs); false when it does not exist. A folder
/// of ours that others may read (as older versions made them) is made the owner's alone.
pub fn check_folder(path: &Path, keeps: Keeps) -> Result<bool, StateError> {
    let Some(meta) = lstat(path)? else {
        return Ok(false);
    };
    if let Some(found) = flaw(path, &meta, keeps) {
        return Err(StateError::Unsafe {
            path: path.to_path_buf(),
            keeps,
            found,
        });
    }
    make_private(path, &meta);
    Ok(true)
}

/// Takes read and search permission away from the group and others on a folder of ours
/// (best effort: the folder is safe to use either way, this only keeps its content private).
#[cfg(unix)]
fn make_private(path: &Path, meta: &std::fs::Metadata) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    if meta.mode() & 0o077 != 0 {
        let bits = meta.mode() & 0o7700;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits));
    }
}

#[cfg(not(unix))]
fn make_private(_path: &Path, _meta: &std::fs::Metadata) {}

/// Creates `dir` and its missing parents readable by their owner only (0700), and checks it.
pub fn create_folder(dir: &Path) -> Result<(), StateError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| StateError::io(dir, "cannot create the state folder", &e))?;
    check_folder(dir, Keeps::Folder).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[cfg(unix)]
    #[test]
    fn folders_must_be_real_ours_and_not_writable_by_others() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path().join("state/deep");
        create_folder(&dir).expect("made");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&tmp.path().join("state")), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert!(check_folder(&dir, Keeps::Folder).expect("fine"));
        assert_eq!(mode(&dir), 0o700, "made private again");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
        let e = Error::from(check_folder(&dir, Keeps::Folder).expect_err("writable"));
        assert_eq!(e.code, ErrorCode::Usage);
        assert!(e.hint.as_deref().unwrap_or("").contains("chmod go-w"));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&dir, &link).expect("symlink");
        let e = Error::from(check_folder(&link, Keeps::JournalFolder).expect_err("symlink"));
        assert_eq!(e.code, ErrorCode::IoError);
        assert!(e.message.contains("is a symbolic link (to"), "{}", e.message);
        assert!(e.message.contains("the journal folder of a running transaction"));
        assert!(!check_folder(&tmp.path().join("none"), Keeps::Folder).expect("missing"));
        assert_eq!(owner_mode_flaw(u32::MAX - 1, 0o700), Some(Found::Owner { uid: u32::MAX - 1 }));
    }
}
