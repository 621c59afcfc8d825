//! Stage: commit (its state files). Every file of the state place — the lock, journals and
//! undo records, `last`, the secret, the audit log, and the agent features' snapshots, chips
//! and previews — is opened here: never through a symlink, never waiting on a FIFO (opened
//! non-blocking, then `fstat`), nothing but a regular file, and read through the tree's own
//! reader with a size limit ([`Dir::read_file_within`]), so that a hostile file planted in
//! its place (a link to `/dev/zero`, a FIFO, a huge file) can neither hang a run nor exhaust
//! its memory: it is refused, saying what it is ([`crate::state::safety`]). Also the state
//! place's secret, which must be the user's own and writable by no one else. Must not decide
//! anything about the files' content.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::dirfd::{self, Stat};
use crate::state::safety::{self, Found, Keeps};
use crate::state::{StateDir, StateError, SECRET_LEN};
use super::TxnError;
use crate::Error;

/// The most bytes a journal or undo record may hold (1 GiB, the size of the largest patch
/// input; a journal holds a few hundred bytes per path).
pub const JOURNAL_LIMIT: u64 = 1 << 30;

/// The most bytes of `last` (an id, padded to 40 bytes).
pub const LAST_LIMIT: u64 = 4096;

/// The most bytes a kept patch (a chip) or a preview's plan may hold (as a patch input).
#[cfg(feature = "git")]
pub const KEPT_LIMIT: u64 = 1 << 30;

/// Opens `path` with `options` itself: not through a symlink at its last component, not
/// waiting on a FIFO, close-on-exec, and created 0600 when `options` create it. The folders
/// above it are the state place's, checked on their own ([`crate::state::safety`]).
fn open_raw(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    }
    #[cfg(windows)]
    {
        // FILE_FLAG_OPEN_REPARSE_POINT: a link is opened itself (its `fstat` then says so).
        std::os::windows::fs::OpenOptionsExt::custom_flags(options, 0x0020_0000);
    }
    options.open(path)
}

/// The whole file `path` of the state place, of at most `limit` bytes (see the module docs),
/// and its `fstat`; `None` when it does not exist.
pub fn read_file(path: &Path, limit: u64) -> Result<Option<(Vec<u8>, Stat)>, StateError> {
    let read = open_raw(path, OpenOptions::new().read(true))
        .and_then(|f| dirfd::read_opened_within(f, limit));
    match read {
        Ok(read) => Ok(Some(read)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => Err(safety::refusal(
            path,
            Keeps::File,
            &Found::TooLarge { limit },
        )),
        Err(e) => Err(not_a_file(path, &e, "cannot read")),
    }
}

/// [`read_file`] of a file that must also be the user's and writable by no one else (the
/// secret: who can write it can forge journals).
pub fn read_owned_file(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, StateError> {
    let Some((bytes, st)) = read_file(path, limit)? else {
        return Ok(None);
    };
    if cfg!(unix) {
        if let Some(found) = safety::owner_mode_flaw(st.uid, st.mode) {
            return Err(safety::refusal(path, Keeps::File, &found));
        }
    }
    Ok(Some(bytes))
}

/// Opens the file `path` of the state place with `options` (created 0600 when it is made),
/// never through a symlink and never waiting on a FIFO; anything but a regular file is
/// refused. Returns it with its `fstat`. For the lock, the audit log and `last`, which are
/// opened to be written.
pub fn open_file(
    path: &Path,
    options: &mut OpenOptions,
    what: &'static str,
) -> Result<(File, Stat), StateError> {
    let file = open_raw(path, options).map_err(|e| not_a_file(path, &e, what))?;
    let st = dirfd::file_stat(&file)
        .map_err(|e| StateError::io(path, what, &e))?;
    if st.kind != dirfd::Kind::File {
        // Opened (a FIFO with a reader, a device): say what it is, never use it.
        let found = safety::lstat(path)?
            .and_then(|m| safety::flaw(path, &m, Keeps::File))
            .unwrap_or(Found::Kind {
                what: "neither a file nor a folder",
            });
        return Err(safety::refusal(path, Keeps::File, &found));
    }
    Ok((file, st))
}

/// The error for a state file that could not be opened or read: what stands there when it is
/// not a regular file (a symlink, a FIFO, a folder…), else the I/O error.
fn not_a_file(path: &Path, err: &std::io::Error, what: &'static str) -> StateError {
    match safety::lstat(path) {
        Ok(Some(meta)) => match safety::flaw(path, &meta, Keeps::File) {
            Some(found @ (Found::Symlink { .. } | Found::Kind { .. })) => {
                safety::refusal(path, Keeps::File, &found)
            }
            _ => StateError::io(path, what, err),
        },
        _ => StateError::io(path, what, err),
    }
}

/// The secret of the state place `state`: 32 random bytes in its `secret` file, created on
/// first use (0600). Journals and undo records carry a MAC made with it, so that one found in
/// the tree (or copied with it) is not mistaken for this root's own; so it must be the
/// user's own, writable by no one else, and a regular file.
pub fn secret(state: &StateDir) -> Result<[u8; SECRET_LEN], TxnError> {
    let path = state.secret_path();
    match read_secret(&path)? {
        Some(secret) => Ok(secret),
        None => create_secret(&path),
    }
}

fn read_secret(path: &Path) -> Result<Option<[u8; SECRET_LEN]>, TxnError> {
    let Some(bytes) = read_owned_file(path, LAST_LIMIT)? else {
        return Ok(None);
    };
    <[u8; SECRET_LEN]>::try_from(bytes.as_slice())
        .map(Some)
        .map_err(|_| {
            Error::from(StateError::DamagedSecret {
                path: path.to_path_buf(),
            })
            .into()
        })
}

/// Writes a new secret beside `path` and links it in place; when another run linked one
/// first, that one is the secret.
fn create_secret(path: &Path) -> Result<[u8; SECRET_LEN], TxnError> {
    use std::io::Write;
    let shown = path.display().to_string();
    let io = |e: std::io::Error| TxnError::io(&shown, "cannot create the state secret", e);
    let mut secret = [0u8; SECRET_LEN];
    random_fill(&mut secret).map_err(io)?;
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    // Readable by its owner only (Windows gives a new file the folder's access list); never
    // through a link left at the temporary name (`create_new` does not follow one).
    let mut file = open_raw(&tmp, OpenOptions::new().write(true).create_new(true)).map_err(io)?;
    let written = file.write_all(&secret).and_then(|()| file.sync_all());
    let linked = written.and_then(|()| std::fs::hard_link(&tmp, path));
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(secret),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            read_secret(path)?.ok_or_else(|| io(std::io::Error::from(std::io::ErrorKind::NotFound)))
        }
        Err(e) => Err(io(e)),
    }
}

/// Fills `buf` with random bytes from the kernel.
#[cfg(unix)]
fn random_fill(buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf))
}

/// Fills `buf` with random bytes from the system's generator.
#[cfg(windows)]
fn random_fill(buf: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(buf).map_err(std::io::Error::other)
}

/// The transaction the state place's `last` file names; `None` when there is none (or it
/// names none).
pub(crate) fn read_last(state: &StateDir) -> Result<Option<String>, TxnError> {
    let Some((bytes, _)) = read_file(&state.last_path(), LAST_LIMIT)? else {
        return Ok(None);
    };
    Ok(std::str::from_utf8(&bytes)
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|id| super::journal::is_id(id)))
}

/// Makes `last` name `id` (or removes it), atomically.
pub(crate) fn write_last(state: &StateDir, id: Option<&str>) -> Result<(), TxnError> {
    write_last_with(state, id, super::Durability::Full)
}

/// The width of `last` written in place: an id (at most 30 bytes) padded with spaces, and
/// a newline.
const LAST_WIDTH: usize = 40;

/// [`write_last`]. Without flushes ([`super::Durability::Atomic`]) the file is overwritten in
/// place by one write of a fixed width — a killed process leaves the old record or the new
/// one, never a mix — rather than a new file renamed over it: on ext4 that rename starts a
/// write-back of the new file first (`auto_da_alloc`, there so that a power loss cannot leave
/// it empty), which measured milliseconds a run, for a guarantee this mode does not give.
/// Either file is opened as every state file is (no symlink followed, no FIFO waited on).
pub(crate) fn write_last_with(
    state: &StateDir,
    id: Option<&str>,
    durability: super::Durability,
) -> Result<(), TxnError> {
    use std::io::Write;
    let path = state.last_path();
    let shown = path.display().to_string();
    let io = |e: std::io::Error| TxnError::io(&shown, "cannot write", e);
    match id {
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        },
        Some(id) if !durability.syncs() && id.len() < LAST_WIDTH => {
            let record = format!("{id:<width$}\n", width = LAST_WIDTH - 1);
            let mut options = OpenOptions::new();
            options.write(true).create(true).truncate(false);
            let (mut file, st) = open_file(&path, &mut options, "cannot write")?;
            file.write_all(record.as_bytes()).map_err(io)?;
            // Longer than a record only when something else wrote it.
            if st.len > LAST_WIDTH as u64 {
                file.set_len(LAST_WIDTH as u64).map_err(io)?;
            }
            Ok(())
        }
        Some(id) => {
            // The temporary name is written under the root's lock only: one left by a crash
            // is stale, and is removed rather than opened (it may be anything by now).
            let tmp = path.with_extension("tmp");
            match std::fs::remove_file(&tmp) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
                _ => {}
            }
            let mut options = OpenOptions::new();
            options.write(true).create_new(true);
            let (mut file, _) = open_file(&tmp, &mut options, "cannot write")?;
            file.write_all(format!("{id}\n").as_bytes()).map_err(io)?;
            drop(file);
            std::fs::rename(&tmp, &path).map_err(io)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_made_once_and_kept() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        state.ensure().expect("ensure");
        let first = secret(&state).expect("made");
        assert_eq!(secret(&state).expect("read"), first);
        assert_ne!(first, [0u8; SECRET_LEN]);
    }

    #[cfg(unix)]
    #[test]
    fn hostile_files_are_refused_without_blocking_or_following() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp.path();
        std::fs::write(dir.join("real"), b"12345").expect("write");
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).expect("symlink");
        std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).expect("symlink");
        let fifo = std::ffi::CString::new(dir.join("fifo").as_os_str().as_encoded_bytes())
            .expect("no nul");
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::create_dir(dir.join("folder")).expect("mkdir");
        let found = |name: &str| {
            let e = Error::from(read_file(&dir.join(name), 100).expect_err(name));
            assert!(safety::is_refusal(&e), "{name}: {e:?}");
            e.details().expect("details")["found"].clone()
        };
        assert_eq!(found("zero"), "symlink");
        assert_eq!(found("link"), "symlink");
        assert_eq!(found("fifo"), "fifo");
        assert_eq!(found("folder"), "folder");
        let e = Error::from(read_file(&dir.join("real"), 4).expect_err("too large"));
        assert_eq!(e.details().expect("details")["found"], "too_large");
        assert_eq!(read_file(&dir.join("real"), 5).expect("read").expect("there").0, b"12345");
        assert!(read_file(&dir.join("none"), 5).expect("missing").is_none());
        let mut write = OpenOptions::new();
        write.write(true).create(true).truncate(false);
        for name in ["zero", "fifo"] {
            let e = Error::from(
                open_file(&dir.join(name), &mut write.clone(), "cannot open").expect_err(name),
            );
            assert!(safety::is_refusal(&e), "{name}: {e:?}");
        }
        open_file(&dir.join("new"), &mut write, "cannot open").expect("created");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("new")).expect("made").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_secret_others_can_write_is_refused_and_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        state.ensure().expect("ensure");
        let made = secret(&state).expect("made");
        let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
        assert_eq!(mode(&state.secret_path()), 0o600);
        std::fs::set_permissions(state.secret_path(), std::fs::Permissions::from_mode(0o666))
            .expect("chmod");
        let e = secret(&state).expect_err("writable by others");
        assert_eq!(e.code(), crate::ErrorCode::Usage);
        assert_eq!(std::fs::read(state.secret_path()).expect("kept"), made);
    }

    #[test]
    fn last_written_in_place_reads_back_over_any_earlier_record() {
        use crate::txn::Durability;
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        state.ensure().expect("state folder");
        let (a, b) = ("1796149741181686118-22759", "1796149741181686119-7");
        write_last(&state, Some(a)).expect("renamed in");
        write_last_with(&state, Some(b), Durability::Atomic).expect("in place");
        assert_eq!(read_last(&state).expect("read"), Some(b.to_string()));
        std::fs::write(state.last_path(), format!("{a}\n{}", "x".repeat(100))).expect("long");
        write_last_with(&state, Some(b), Durability::Atomic).expect("in place");
        assert_eq!(read_last(&state).expect("read"), Some(b.to_string()));
        assert_eq!(
            std::fs::metadata(state.last_path()).expect("stat").len(),
            LAST_WIDTH as u64
        );
        write_last(&state, Some(a)).expect("renamed over the padded one");
        assert_eq!(read_last(&state).expect("read"), Some(a.to_string()));
        write_last_with(&state, None, Durability::Atomic).expect("removed");
        assert_eq!(read_last(&state).expect("read"), None);
    }
}
