//! Stage: commit. The journal: one JSON file that records a running transaction (its root,
//! phase, every path's old and new state, backup and staged names, the directories it
//! creates) so that a crash at any point can be rolled back or completed by the next run.
//! Written atomically (temporary file, fsync, rename, fsync of its folder). Also the path
//! walking shared by commit, rollback and recovery. Must not decide policy.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::dirfd::{self, Dir, Kind, Walk};
use super::{AuditRecord, TxnError};

/// The journal format version this code writes and reads (2: tied to its state place by a
/// MAC and to its root by device and inode).
pub const VERSION: u32 = 2;

/// File name of the journal inside the journal folder.
pub const FILE: &str = "journal.json";

/// The journal's name once its transaction is over and its folder is being removed: renamed
/// so first (atomically), it tells a recovery that the folder holds only a finished
/// transaction's leftovers, and (its MAC checked) proves they are this root's own
/// ([`super::recover`]).
pub const DONE: &str = "journal.done";

/// How far a transaction got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Written before the first change to the tree: a crash here is rolled back.
    Prepared,
    /// Written after every rename was done, synced and verified: a crash here is completed.
    Committed,
}

/// A path's state as the journal records and compares it.
#[derive(Debug, Clone, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(unix, derive(PartialEq))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    Missing,
    /// `sha256` is empty in an `after` state whose hash is still being taken while the
    /// content is staged (the journal is written again with it before any rename, so an
    /// empty one also says that no path holds the new state yet).
    File {
        sha256: String,
        mode: u32,
    },
    Symlink {
        target: Vec<u8>,
    },
    Directory,
    Other,
}

/// Two states are the same with any modes on Windows, which has none ([`super::dirfd::same_mode`]):
/// a mode a patch set there is recorded, never found on the disk.
#[cfg(windows)]
impl PartialEq for State {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (State::File { sha256: a, .. }, State::File { sha256: b, .. }) => a == b,
            (State::Symlink { target: a }, State::Symlink { target: b }) => a == b,
            (State::Missing, State::Missing)
            | (State::Directory, State::Directory)
            | (State::Other, State::Other) => true,
            _ => false,
        }
    }
}

/// One path of the transaction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub path: String,
    pub before: State,
    pub after: State,
    /// Name of the old file's backup inside the journal folder (replaced and deleted files).
    pub backup: Option<String>,
    /// Name of the staged new content in the target's folder.
    pub stage: Option<String>,
}

/// The whole journal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Journal {
    pub version: u32,
    pub id: String,
    /// Canonical root the entry paths are relative to.
    pub root: PathBuf,
    pub phase: Phase,
    /// `apply` or `undo` (for the audit line).
    pub operation: String,
    /// For an undo: the id of the transaction it reverts.
    #[serde(default)]
    pub undoes: Option<String>,
    pub entries: Vec<Entry>,
    /// Folders the transaction creates, parents first (removed again on rollback).
    pub created_dirs: Vec<String>,
    /// What the planner said about the change, for the audit line written by recovery.
    pub audit: AuditRecord,
    /// Device and inode of the root: a copy of the tree (which carries the journal when it
    /// is kept at the root) is another folder, and its journal is not acted on there.
    #[serde(default)]
    pub root_dev: u64,
    #[serde(default)]
    pub root_ino: u64,
    /// What the state place's `last` file says once this transaction is over: for an apply,
    /// the transaction before it (put back when it is rolled back); for an undo, the one
    /// before the transaction it reverts.
    #[serde(default)]
    pub previous: Option<String>,
    /// The git index written with the work tree (`--index`): installed by recovery when the
    /// transaction had committed, removed when it is rolled back.
    #[serde(default)]
    pub index: Option<IndexLock>,
    /// HMAC-SHA256 of the rest of the journal with the state place's secret.
    #[serde(default)]
    pub mac: String,
}

/// A lock file (`index.lock`) that holds a companion file's new content until the commit
/// (see [`super::Companion`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IndexLock {
    /// The lock file; the file it replaces is this path without `.lock`.
    pub lock: PathBuf,
    /// Device and inode of the lock file: it is ours only while they are these.
    pub dev: u64,
    pub ino: u64,
    /// SHA-256 of its whole new content; empty until it is written (before the commit mark).
    pub sha256: String,
}

pub use crate::hash::hex;

impl Journal {
    /// Writes the journal atomically into `dir` (the journal folder) and syncs the folder,
    /// with its MAC made with `secret`.
    pub fn write(&mut self, dir: &Dir, dir_path: &Path, secret: &[u8]) -> Result<(), TxnError> {
        self.write_with(dir, dir_path, secret, super::Durability::Full)
    }

    /// [`Journal::write`], synced only when `durability` flushes at all (the rename is
    /// atomic either way: a killed process leaves the old journal or the new one).
    pub fn write_with(
        &mut self,
        dir: &Dir,
        dir_path: &Path,
        secret: &[u8],
        durability: super::Durability,
    ) -> Result<(), TxnError> {
        let file = self.write_pending(dir, dir_path, secret)?;
        if durability.syncs() {
            file.sync_all()
                .map_err(|e| TxnError::io(&shown(dir_path), "cannot write the journal", e))?;
        }
        drop(file);
        Journal::install_pending(dir, dir_path, durability)
    }

    /// The first half of [`Journal::write`]: this journal in the temporary file beside the
    /// journal, not synced (the caller makes it durable, then calls
    /// [`Journal::install_pending`]); the open file is returned for that.
    pub fn write_pending(
        &mut self,
        dir: &Dir,
        dir_path: &Path,
        secret: &[u8],
    ) -> Result<std::fs::File, TxnError> {
        let shown = shown(dir_path);
        let io = |e: std::io::Error| TxnError::io(&shown, "cannot write the journal", e);
        self.mac = self.compute_mac(secret)?;
        let json = serde_json::to_vec_pretty(self).map_err(encode_error)?;
        // A temporary file is left only by a write that did not finish: removed then.
        let mut file = match dir.create_file(PENDING, 0o600) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                dir.unlink(PENDING).map_err(io)?;
                dir.create_file(PENDING, 0o600).map_err(io)?
            }
            other => other.map_err(io)?,
        };
        file.write_all(&json).map_err(io)?;
        Ok(file)
    }

    /// The second half of [`Journal::write`]: the temporary file, synced, renamed over the
    /// journal, and the rename made durable (the folder synced when `durability` flushes).
    pub fn install_pending(
        dir: &Dir,
        dir_path: &Path,
        durability: super::Durability,
    ) -> Result<(), TxnError> {
        let shown = shown(dir_path);
        let io = |e: std::io::Error| TxnError::io(&shown, "cannot write the journal", e);
        dir.rename(PENDING, dir, FILE.as_bytes()).map_err(io)?;
        if durability.syncs() {
            dir.sync().map_err(io)?;
        }
        Ok(())
    }

    /// The MAC of everything but the MAC itself.
    fn compute_mac(&self, secret: &[u8]) -> Result<String, TxnError> {
        let mut bare = self.clone();
        bare.mac = String::new();
        let bytes = serde_json::to_vec(&bare).map_err(encode_error)?;
        Ok(hex(&hmac_sha256(secret, &bytes)))
    }

    /// Acts on this journal (or undo record), read from `place`, only when it belongs to
    /// this state place and to the root opened as `root`: its MAC is made with the state
    /// place's secret, the root is the very folder it was written for (device and inode),
    /// and every id and name in it has the form this code gives it (so that nothing in it
    /// names a file outside its folder). Else an `io_error` naming the journal, which is
    /// left alone.
    pub fn check_trusted(&self, secret: &[u8], root: &Dir, place: &Path) -> Result<(), TxnError> {
        let reason = if !constant_eq(self.compute_mac(secret)?.as_bytes(), self.mac.as_bytes()) {
            Some("it was not written with this state place's secret")
        } else if root
            .identity()
            .map_or(true, |id| id != (self.root_dev, self.root_ino))
        {
            Some("it was written for another folder (a copy or an archive of the tree carries it)")
        } else if !self.names_are_ours() {
            Some("it names files it never creates")
        } else {
            None
        };
        match reason {
            None => Ok(()),
            Some(reason) => Err(untrusted(place, reason)),
        }
    }

    /// Ids, backup and staged names as [`super::stage`] makes them.
    fn names_are_ours(&self) -> bool {
        let entries_ok = self.entries.iter().enumerate().all(|(i, e)| {
            let backup_ok = e.backup.as_deref().is_none_or(|b| b == format!("b{i}"));
            let stage_ok = e
                .stage
                .as_deref()
                .is_none_or(|s| s == format!(".apply-patch-{}-{i}.tmp", self.id));
            backup_ok && stage_ok && dirfd::components(&e.path).is_ok()
        });
        let dirs_ok = self
            .created_dirs
            .iter()
            .all(|d| dirfd::components(d).is_ok());
        let ids_ok = [Some(&self.id), self.undoes.as_ref(), self.previous.as_ref()]
            .into_iter()
            .flatten()
            .all(|id| is_id(id));
        entries_ok && dirs_ok && ids_ok
    }

    /// Reads the journal of a journal folder; `None` when the folder holds none. Read as
    /// every state file is ([`super::place`]: a regular file of at most
    /// [`super::place::JOURNAL_LIMIT`] bytes, never through a symlink, never waiting on a
    /// FIFO).
    pub fn read(dir_path: &Path) -> Result<Option<Journal>, TxnError> {
        Journal::read_named(dir_path, FILE)
    }

    /// [`Journal::read`] of the file `name` of the folder (the journal of a finished
    /// transaction whose clean-up was interrupted is [`DONE`]).
    pub fn read_named(dir_path: &Path, name: &str) -> Result<Option<Journal>, TxnError> {
        let path = dir_path.join(name);
        let shown = path.display().to_string();
        let Some((bytes, _)) = super::place::read_file(&path, super::place::JOURNAL_LIMIT)? else {
            return Ok(None);
        };
        let journal: Journal = serde_json::from_slice(&bytes).map_err(|e| {
            TxnError::JournalDamaged {
                journal: shown.clone(),
                cause: e.to_string(),
            }
        })?;
        if journal.version != VERSION {
            return Err(TxnError::JournalVersion {
                journal: shown,
                version: journal.version,
                reads: VERSION,
            });
        }
        Ok(Some(journal))
    }
}

/// The temporary file a journal is written to before it is renamed over the journal.
const PENDING: &[u8] = b"journal.json.tmp";

/// The journal file of the folder `dir_path`, as errors show it.
fn shown(dir_path: &Path) -> String {
    dir_path.join(FILE).display().to_string()
}

fn encode_error(e: serde_json::Error) -> TxnError {
    TxnError::JournalUnencodable {
        cause: e.to_string(),
    }
}

/// The refusal of a journal or undo record that is not this root's own.
pub fn untrusted(place: &Path, reason: &str) -> TxnError {
    TxnError::Untrusted {
        place: place.display().to_string(),
        reason: reason.to_string(),
    }
}

/// Is `id` a transaction id as [`super::stage`] makes them (`<19 digits>-<pid>`)?
pub fn is_id(id: &str) -> bool {
    match id.split_once('-') {
        Some((time, pid)) => {
            time.len() == 19
                && time.bytes().all(|b| b.is_ascii_digit())
                && !pid.is_empty()
                && pid.len() <= 10
                && pid.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// HMAC-SHA256 (RFC 2104) of `message` with `key`.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Compares without stopping at the first difference (a MAC check must not tell how much
/// of a forged one was right).
fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A path's parent folder, opened without following symlinks, and its final name.
pub struct Located {
    /// `None` when a parent folder is missing (the path is then missing too).
    /// Shared: many targets of one folder use one handle (a big patch must not run out of
    /// file descriptors).
    pub parent: Option<Arc<Dir>>,
    pub name: Vec<u8>,
    /// Components of the parent that exist (the rest must be created).
    pub existing: usize,
    pub components: Vec<Vec<u8>>,
}

/// Folder handles already opened by one transaction, by root-relative folder path.
pub type DirCache = HashMap<Vec<u8>, Arc<Dir>>;

/// Opens the parent of `path` under `root` component by component (`O_NOFOLLOW`). A symlink
/// on the way is `path_escape`.
pub fn locate(root: &Dir, path: &str) -> Result<Located, TxnError> {
    locate_in(root, path, &mut DirCache::new())
}

/// [`locate`], reusing and filling `cache` (only folders found whole are cached).
pub fn locate_in(root: &Dir, path: &str, cache: &mut DirCache) -> Result<Located, TxnError> {
    locate_inner(root, path, cache)?.map_err(Blocked::into_error)
}

/// A path that cannot be reached because a folder on its way is no longer a folder: `at`
/// (root-relative) is a symbolic link (never followed) or a file now. Someone replaced it:
/// nothing apply-patch wrote is reachable through it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Blocked {
    pub path: String,
    pub at: String,
    pub symlink: bool,
}

impl Blocked {
    /// The refusal of a write through it (`path_escape` for a symlink).
    fn into_error(self) -> TxnError {
        if self.symlink {
            TxnError::SymlinkOnPath {
                path: self.path,
                symlink: self.at,
            }
        } else {
            TxnError::NotAFolderOnPath {
                path: self.path,
                at: self.at,
            }
        }
    }
}

/// [`locate`], telling a path whose way is blocked by a replaced folder ([`Blocked`]) from
/// other failures: a rollback or recovery reports such a path and goes on.
pub fn locate_or_blocked(root: &Dir, path: &str) -> Result<Result<Located, Blocked>, TxnError> {
    locate_inner(root, path, &mut DirCache::new())
}

fn locate_inner(
    root: &Dir,
    path: &str,
    cache: &mut DirCache,
) -> Result<Result<Located, Blocked>, TxnError> {
    let comps = checked_components(path)?;
    let (name, parents) = comps
        .split_last()
        .expect("split('/') yields at least one component because it always does");
    let key = parents.join(&b'/');
    let components = || comps.iter().map(|c| c.to_vec()).collect();
    if let Some(dir) = cache.get(&key) {
        return Ok(Ok(Located {
            parent: Some(Arc::clone(dir)),
            name: name.to_vec(),
            existing: parents.len(),
            components: components(),
        }));
    }
    let start =
        Dir::open_child(root, b".").map_err(|e| TxnError::io(path, "cannot open the root for", e))?;
    let walked = match start.walk(parents) {
        Ok(walked) => walked,
        Err(e) => {
            return match blocked(root, path, parents, &e) {
                Some(b) => Ok(Err(b)),
                None => Err(TxnError::io(path, "cannot open a folder on the path of", e)),
            }
        }
    };
    let (parent, existing) = match walked {
        Walk::Found(d) => {
            let d = Arc::new(d);
            cache.insert(key, Arc::clone(&d));
            (Some(d), parents.len())
        }
        Walk::Partial { existing, .. } => (None, existing),
    };
    Ok(Ok(Located {
        parent,
        name: name.to_vec(),
        existing,
        components: components(),
    }))
}

/// The components of `path`, refusing a path inside git's or apply-patch's own folders
/// (`path_escape`).
pub fn checked_components(path: &str) -> Result<Vec<&[u8]>, TxnError> {
    let comps = dirfd::components(path)?;
    if comps.iter().any(|c| *c == b".git")
        || comps.first() == Some(&crate::state::ROOT_JOURNAL_DIR.as_bytes())
    {
        return Err(TxnError::OwnFolder { path: path.into() });
    }
    Ok(comps)
}

/// Names the component that is a symlink (`path_escape`) or not a folder (`io_error`).
fn walk_error(root: &Dir, path: &str, parents: &[&[u8]], err: &std::io::Error) -> TxnError {
    match blocked(root, path, parents, err) {
        Some(b) => b.into_error(),
        None => TxnError::io_of(path, "cannot open a folder on the path of", err),
    }
}

/// The component of `parents` that made a walk fail with `err` because it is a symlink or
/// not a folder; `None` for any other failure.
fn blocked(root: &Dir, path: &str, parents: &[&[u8]], err: &std::io::Error) -> Option<Blocked> {
    if !dirfd::is_not_a_real_dir(err) {
        return None;
    }
    let mut dir = Dir::open_child(root, b".").ok()?;
    for (i, comp) in parents.iter().enumerate() {
        let at = || {
            parents[..=i]
                .iter()
                .map(|c| dirfd::show(c))
                .collect::<Vec<_>>()
                .join("/")
        };
        match dir.stat(comp) {
            Ok(Some(st)) if st.kind != Kind::Directory => {
                return Some(Blocked {
                    path: path.into(),
                    at: at(),
                    symlink: st.kind == Kind::Symlink,
                });
            }
            _ => {}
        }
        dir = dir.open_child(comp).ok()?;
    }
    None
}

/// The state of `name` in `parent` (`Missing` when the parent is missing).
pub fn current_state(parent: Option<&Dir>, name: &[u8]) -> std::io::Result<State> {
    let Some(dir) = parent else {
        return Ok(State::Missing);
    };
    let Some(st) = dir.stat(name)? else {
        return Ok(State::Missing);
    };
    Ok(match st.kind {
        Kind::File => {
            let (sha256, st) = dir.hash_file(name)?;
            State::File {
                sha256: hex(&sha256),
                mode: st.mode,
            }
        }
        Kind::Symlink => State::Symlink {
            target: dir.read_link(name)?,
        },
        Kind::Directory => State::Directory,
        Kind::Other => State::Other,
    })
}

/// The state of `path` under `root` (for recovery), or why the path cannot be reached
/// ([`locate_or_blocked`]).
pub fn state_or_blocked(
    root: &Dir,
    path: &str,
) -> Result<Result<(Located, State), Blocked>, TxnError> {
    let located = match locate_or_blocked(root, path)? {
        Ok(located) => located,
        Err(blocked) => return Ok(Err(blocked)),
    };
    let state = current_state(located.parent.as_deref(), &located.name)
        .map_err(|e| TxnError::io(path, "cannot read", e))?;
    Ok(Ok((located, state)))
}

/// Opens the parent of a located path, creating missing folders (for restoring a deleted
/// file whose folder was removed).
pub fn open_or_create_parent(root: &Dir, located: &Located, path: &str) -> Result<Dir, TxnError> {
    let mut dir =
        Dir::open_child(root, b".").map_err(|e| TxnError::io(path, "cannot open the root for", e))?;
    let parents = &located.components[..located.components.len() - 1];
    for comp in parents {
        dir = match dir.open_child(comp) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                dir.mkdir(comp)
                    .map_err(|e| TxnError::io(path, "cannot create a folder for", e))?;
                dir.open_child(comp)
                    .map_err(|e| TxnError::io(path, "cannot open a folder of", e))?
            }
            Err(e) => {
                let refs: Vec<&[u8]> = parents.iter().map(|c| c.as_slice()).collect();
                return Err(walk_error(root, path, &refs, &e));
            }
        };
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn targets_in_one_folder_share_one_handle() {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        let root = Dir::open(tmp.path()).expect("root");
        let mut cache = DirCache::new();
        let one = locate_in(&root, "a/b/one.txt", &mut cache).expect("one");
        let two = locate_in(&root, "a/b/two.txt", &mut cache).expect("two");
        let (one, two) = (one.parent.expect("found"), two.parent.expect("found"));
        assert!(Arc::ptr_eq(&one, &two));
        let missing = locate_in(&root, "a/c/three.txt", &mut cache).expect("three");
        assert!(missing.parent.is_none());
        assert_eq!(missing.existing, 1);
    }

    #[test]
    fn hmac_matches_the_rfc_4231_vectors() {
        let mac = hmac_sha256(&[0x0b; 20], b"Hi There");
        assert_eq!(
            hex(&mac),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        let long_key = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex(&long_key),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn ids_have_the_form_the_commit_gives_them() {
        assert!(is_id("1764460800123456789-4242"));
        for bad in [
            "",
            "..",
            "../x",
            "1764460800123456789",
            "1-2",
            "1764460800123456789-/x",
        ] {
            assert!(!is_id(bad), "{bad}");
        }
    }

    #[test]
    fn git_and_journal_folders_are_refused() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = Dir::open(tmp.path()).expect("root");
        for path in [
            ".git/config",
            "sub/.git/HEAD",
            ".apply-patch-txn/journal.json",
            "a//b",
            "a/../b",
        ] {
            let err = locate(&root, path).err().map(|e| e.code());
            assert_eq!(err, Some(ErrorCode::PathEscape), "{path}");
        }
    }
}
