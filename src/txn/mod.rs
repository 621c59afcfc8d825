//! Stage: commit / rollback. The only writer of the work tree: stages every new content
//! beside its target, re-checks every target against the snapshot taken at planning, then
//! renames into place with backups, under a per-root lock and a journal that makes a crash
//! recoverable (SPEC §6). Also undo and the audit log.

use std::path::PathBuf;
use std::time::SystemTime;

/// What a path held when it was planned: the commit refuses (`stale_file`) when it differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Snapshot {
    Missing,
    File {
        len: u64,
        mtime: Option<SystemTime>,
        /// Permission bits (`st_mode & 0o7777`).
        mode: u32,
        sha256: [u8; 32],
    },
    Symlink {
        target: Vec<u8>,
    },
}

/// What a path must hold after the commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewState {
    File {
        bytes: Vec<u8>,
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

/// Where a transaction runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnOptions {
    /// The root every change path is relative to.
    pub root: PathBuf,
}
