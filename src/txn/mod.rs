//! Stage: commit / rollback. The only writer of the work tree: stages every new content
//! beside its target, re-checks every target against the snapshot taken at planning, then
//! renames into place with backups, under a per-root lock and a journal that makes a crash
//! recoverable (SPEC §6). Also undo and the audit log.
//!
//! The protocol, step by step, is in [`stage`]; recovery's decisions per journal phase in
//! [`recover`]; the recovery every run takes before it plans in [`first`]. Everything before
//! this module is pure; nothing after it writes.

mod error;
pub(crate) mod forward;
pub(crate) mod durable;
pub(crate) mod handles;

crate::internal_mod! {
    audit;
    cleanup;
    dirfd;
    failpoint;
    first;
    journal;
    lock;
    place;
    recover;
    stage;
    undo;
}

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use audit::{AuditFile, AuditRecord};
pub use durable::Durability;
// The command line's `recover` report names blocked paths as the errors do.
#[cfg(feature = "cli")]
pub(crate) use error::blocked_text;
pub use error::{IoFailure, Restoring, Staleness, TxnError, Worker};
pub use journal::Blocked;
// Fault injection is for this crate's own crash tests, not an API.
#[cfg(not(feature = "internals"))]
pub(crate) use failpoint::Failpoint;
#[cfg(feature = "internals")]
pub use failpoint::{Action, Failpoint};
pub use first::{recover_first, Access};
pub use recover::{recover_with, RecoverAction, RecoverReport};
pub use stage::prepare;
// The one-call forms of prepare-then-commit: the crash and property tests drive the
// transaction with them; the pipeline prepares and commits in two steps.
#[cfg(feature = "internals")]
pub use stage::{commit, commit_with};
pub use undo::UndoReport;
// The post-check's revert (feature `git`) and the MCP server's undo (feature `mcp`).
#[cfg(any(feature = "git", feature = "internals"))]
pub use undo::revert;
#[cfg(any(feature = "mcp", feature = "internals"))]
pub use undo::undo_with;

use crate::content::{Content, ContentHash};
use crate::state::StateDir;
use crate::Error;
use dirfd::{Dir, Kind};

/// What a path held when it was planned: the commit refuses (`stale_file`) when it differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapshot {
    Missing,
    File {
        len: u64,
        mtime: Option<SystemTime>,
        /// Permission bits (`st_mode & 0o7777`).
        mode: u32,
        /// The SHA-256 of the bytes read, with the bytes when they were read here (the
        /// commit compares a just-modified file with them rather than hashing it again).
        sha256: ContentHash,
    },
    Symlink {
        target: Vec<u8>,
    },
    /// A directory stands at the path (the planner refuses to write there: `is_directory`).
    Directory,
}

/// What a path must hold after the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewState {
    File {
        /// The new bytes (a recipe of a large edited file is written piece by piece; its
        /// SHA-256, when the planner has not taken it, is taken while it is staged).
        bytes: Content,
        /// Permission bits to set (`0o644`, `0o755`, or the old file's own bits).
        mode: u32,
    },
    Symlink {
        target: Vec<u8>,
    },
    Absent,
}

/// One path of a transaction. Paths are root-relative, `/`-separated and already confined to
/// the root by the planner's guards (the commit checks again that no symlink on the way
/// leads out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub before: Snapshot,
    pub after: NewState,
}

/// The bytes of a path as [`read_snapshot`] found them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Missing,
    File(Content),
    /// The link's target (the link is not followed).
    Symlink(Vec<u8>),
    Directory,
}

/// Where a transaction runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOptions {
    /// The root every change path is relative to.
    pub root: PathBuf,
    /// The state place; `None` means [`StateDir::for_root`] (tests point it elsewhere).
    pub state: Option<StateDir>,
    /// A failpoint (the crash tests'); `None` reads `APPLY_PATCH_FAILPOINT` from the
    /// environment when the `failpoints` feature is on.
    pub failpoint: Option<Failpoint>,
    /// How long to wait for another transaction's lock before `busy`.
    pub lock_wait: Duration,
    /// How durable the commit is made ([`Durability::Full`] unless the caller opts out).
    pub durability: Durability,
}

impl TxnOptions {
    /// Options for `root` with the defaults (state place of the root, failpoint from the
    /// environment, a 2 s lock wait, full durability).
    pub fn new(root: impl Into<PathBuf>) -> TxnOptions {
        TxnOptions {
            root: root.into(),
            state: None,
            failpoint: None,
            lock_wait: lock::WAIT,
            durability: Durability::Full,
        }
    }

    /// The state place these options name.
    pub fn state_dir(&self) -> Result<StateDir, Error> {
        match &self.state {
            Some(s) => Ok(s.clone()),
            None => StateDir::for_root(&self.root),
        }
    }
}

/// A file outside the work tree that must change together with it: the git index of
/// `--index`. Its lock file (held from before the transaction starts) receives the whole new
/// content before the commit mark, and is renamed over the file right after it. The journal
/// records the lock file (device, inode, and the SHA-256 of what was written), so that a
/// recovery installs it when the transaction had committed and removes it when it is rolled
/// back: the work tree and the index are never left one new and one old.
pub trait Companion {
    /// The lock file held (it exists before the transaction starts, inside the git dir).
    fn lock_path(&self) -> PathBuf;
    /// Writes the whole new content into the lock file and syncs it, after the work tree's
    /// renames (the index takes the new files' stat); returns its SHA-256. Not visible yet.
    fn write(&mut self) -> Result<[u8; 32], TxnError>;
    /// Makes it visible: renames the lock file over the file.
    fn install(&mut self) -> Result<(), TxnError>;
}

/// What a [`TxnWarning`] is about; the report maps each to its SPEC §8 warning code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TxnWarningCode {
    /// What the recovery of a crashed transaction did.
    Recovered,
    /// A step after the commit point failed (the change itself is in place).
    Cleanup,
    /// Another program changed a path right after the commit wrote it; its edit was kept.
    LaterEdit,
}

impl TxnWarningCode {
    /// The stable string code (the same as the report's warning code).
    pub fn as_str(self) -> &'static str {
        match self {
            TxnWarningCode::Recovered => "recovered",
            TxnWarningCode::Cleanup => "cleanup",
            TxnWarningCode::LaterEdit => "later_edit",
        }
    }
}

impl std::fmt::Display for TxnWarningCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warning of the transaction layer (the report turns it into SPEC §8's warning object).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct TxnWarning {
    pub code: TxnWarningCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A successful commit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Committed {
    /// The transaction id (also the undo record's name); empty when nothing had to change.
    pub id: String,
    /// What the recovery of a crashed transaction did before this one ran.
    pub recovered: Vec<TxnWarning>,
    /// Steps after the commit point that failed (the change itself is in place).
    pub warnings: Vec<TxnWarning>,
    /// Paths actually written (changes whose content and mode already matched are skipped).
    pub written: Vec<String>,
}

/// Reads `path` (root-relative) once: its snapshot and bytes agree. A final symlink is not
/// followed (`Found::Symlink`); a symlink among the folders on the way is `path_escape`
/// (the planner resolves in-root symlinks itself and passes real paths).
pub fn read_snapshot(root: &Path, path: &str) -> Result<(Snapshot, Found), TxnError> {
    SnapshotReader::open(root)?.read(path)
}

/// [`read_snapshot`] for many paths under one root: the root is opened once, and each folder
/// once while it stays among the [`handles::LIMIT`] open last (opened component by
/// component without following a symlink, as the commit opens them), not once per file.
pub(crate) struct SnapshotReader {
    root: Dir,
    handles: handles::Handles,
}

impl std::fmt::Debug for SnapshotReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnapshotReader")
    }
}

impl SnapshotReader {
    /// A reader of the tree at `root` (a trusted absolute path; symlinks in it are followed).
    pub fn open(root: &Path) -> Result<SnapshotReader, TxnError> {
        let shown = root.display().to_string();
        let root = Dir::open(root).map_err(|e| TxnError::io(&shown, "cannot open the root", e))?;
        let handles = handles::Handles::new(&root)?;
        Ok(SnapshotReader { root, handles })
    }

    /// See [`read_snapshot`].
    pub fn read(&mut self, path: &str) -> Result<(Snapshot, Found), TxnError> {
        let comps = journal::checked_components(path)?;
        let name = *comps
            .last()
            .expect("split('/') yields at least one component because it always does");
        let Some(parent) = self.handles.parent_to_read(&self.root, path)? else {
            return Ok((Snapshot::Missing, Found::Missing));
        };
        read_at(&parent, name, path)
    }
}

/// [`read_snapshot`] of `name` in its open folder `parent`.
fn read_at(parent: &Dir, name: &[u8], path: &str) -> Result<(Snapshot, Found), TxnError> {
    let io = |e: std::io::Error| TxnError::io(path, "cannot read", e);
    let Some(st) = parent.stat(name).map_err(io)? else {
        return Ok((Snapshot::Missing, Found::Missing));
    };
    match st.kind {
        Kind::File => {
            let (bytes, sha256, st) = parent.read_file_hashed(name).map_err(io)?;
            let content = Content::with_sha256(bytes, sha256);
            let snap = Snapshot::File {
                len: content.len() as u64,
                mtime: st.mtime,
                mode: st.mode,
                sha256: ContentHash::Of(content.clone()),
            };
            Ok((snap, Found::File(content)))
        }
        Kind::Symlink => {
            let target = parent.read_link(name).map_err(io)?;
            Ok((
                Snapshot::Symlink {
                    target: target.clone(),
                },
                Found::Symlink(target),
            ))
        }
        Kind::Directory => Ok((Snapshot::Directory, Found::Directory)),
        Kind::Other => Err(TxnError::NotRegular {
            path: path.to_string(),
        }),
    }
}

pub use crate::hash::sha256;
