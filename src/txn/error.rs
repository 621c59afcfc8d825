//! Stage: commit. The refusals the transaction layer composes around a cause (a step that
//! failed, and what the transaction did about it), and its own refusals — of a commit, a
//! recovery and an undo — each with its context (transaction ids, paths, how a file changed)
//! as fields. A cause stays a field; the message, hint and details are written once, when the
//! refusal becomes the boundary [`Error`], which keeps a cause's code, path and details. Plain
//! I/O failures stay [`Error::io`].

use crate::spelling::{Hint, Opt, Value};
use std::path::{Path, PathBuf};

use super::journal::Blocked;
pub use crate::error::IoFailure;
use crate::{Error, ErrorCode};

/// A failed step and what the transaction did about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TxnError {
    /// A crashed transaction had to be recovered before this run, and recovering it failed.
    /// The cause is the recovery's own refusal (a step outside it, such as the state place's
    /// checks, arrives as [`TxnError::Outside`]).
    #[error(
        "an interrupted transaction of this root must be recovered before this run, and \
         recovering it failed: {cause}"
    )]
    RecoveryFailed {
        #[source]
        cause: Box<TxnError> },
    /// A commit failed after it had renamed files, and the work tree was rolled back.
    #[error("{cause}; the work-tree changes were rolled back")]
    RolledBack {
        #[source]
        cause: Box<TxnError> },
    /// A file changed since it was planned against (`stale_file`), right after a crashed
    /// transaction was recovered, which is what changed it.
    #[error("{cause}")]
    StaleAfterRecovery {
        #[source]
        cause: Box<TxnError> },
    /// A post-check failed and reverting the transaction failed too (`rollback_failed`).
    /// The cause stays the wide [`Error`]: the revert spans the git index (its lock and
    /// commit), the pipeline's own index check and the transaction's undo, any of which
    /// may refuse.
    #[error(
        "the post-check failed and the change could not be rolled back: {}",
        .cause.message
    )]
    RevertFailed {
        #[source]
        cause: Box<Error> },
    /// An undo record without its journal.
    #[error("the undo record {} has no journal", record.display())]
    NoJournal { record: PathBuf },
    /// Transaction `id` is not the last one any more: reverting it would undo another's
    /// change.
    #[error(
        "cannot roll back transaction {id}: {}, and reverting in its place would undo another \
         change",
        match last {
            Some(l) => format!("transaction {l} was committed after it"),
            None => "the history no longer ends with it".to_string(),
        }
    )]
    NotTheLast { id: String, last: Option<String> },
    /// The last transaction has no undo record (writing it failed after its commit):
    /// reverting the newest record would skip it.
    #[error(
        "cannot undo: the last transaction ({last}) has no undo record (writing it failed after \
         its commit); {}, and reverting that would skip the last one",
        match newest {
            Some(n) => format!("the newest one is of the earlier transaction {n}"),
            None => "there is none".to_string(),
        }
    )]
    NoRecordOfTheLast {
        last: String,
        newest: Option<String>,
    },
    /// Files changed since transaction `id` was applied: undoing it would lose those changes.
    #[error("cannot undo transaction {id}: changed since it was applied: {}", changed.join(", "))]
    ChangedSinceApplied { id: String, changed: Vec<String> },
    /// A backup that no longer holds the content it was taken of.
    #[error(
        "the backup of {path} no longer holds its old content (a hard link of it was edited)"
    )]
    BackupEdited { path: String },
    /// A journal entry whose old state was neither a file, a symlink nor absent.
    #[error("{path} was not a file; cannot undo it")]
    NotAFile { path: String },
    /// A journal that does not read as one.
    #[error("the journal {journal} is damaged: {cause}")]
    JournalDamaged { journal: String, cause: String },
    /// A journal of another version of apply-patch.
    #[error("the journal {journal} has version {version}; this apply-patch reads version {reads}")]
    JournalVersion {
        journal: String,
        version: u32,
        reads: u32,
    },
    #[error("cannot encode the journal: {cause}")]
    JournalUnencodable { cause: String },
    /// A journal or undo record that is not this root's own.
    #[error("refusing the apply-patch journal {place}: {reason}; it was left as it is")]
    Untrusted { place: String, reason: String },
    /// A journal folder that holds files but neither a journal nor the journal of a finished
    /// transaction: what an older apply-patch left when removing a finished transaction's
    /// folder was interrupted (or a copy of the tree carried it).
    #[error(
        "refusing {place}: it holds files but no journal; apply-patch removes a journal only \
         once its transaction is over (the tree is then wholly old or wholly new), so these \
         are the leftovers of an interrupted clean-up (or a copy of the tree carried them); it \
         was left as it is"
    )]
    Leftovers { place: String },
    /// A path inside apply-patch's or git's own folder.
    #[error("{path} is inside apply-patch's or git's own folder")]
    OwnFolder { path: String },
    /// A folder on the way to `path` is a symbolic link.
    #[error("{symlink} on the path of {path} is a symbolic link; refusing to write through it")]
    SymlinkOnPath { path: String, symlink: String },
    /// A folder on the way to `path` is not a folder.
    #[error("{at} on the path of {path} is not a folder")]
    NotAFolderOnPath { path: String, at: String },
    /// Restoring the old state failed (`rollback_failed`): some files could not be put back,
    /// or hold neither their old nor their new content. The journal and backups are kept.
    #[error("{}", restore_failed(during, failures, conflicts, blocked))]
    RestoreFailed {
        during: Restoring,
        /// The journal's folder (boxed: the variant stays small enough to return on every
        /// platform, where a `PathBuf` is larger).
        journal: Box<Path>,
        /// The restores that failed.
        failures: Vec<Error>,
        /// The paths that hold neither their old nor their new content (those that cannot be
        /// reached too).
        conflicts: Vec<String>,
        /// The conflicts that cannot be reached: a folder on their way was replaced.
        blocked: Vec<Blocked>,
    },
    /// Another transaction holds the root's lock (`busy`): `waited` is how long this one
    /// waited for `lock`.
    #[error(
        "another apply-patch transaction holds this root (waited {:.1} s for {lock})",
        waited.as_secs_f32()
    )]
    Busy {
        lock: String,
        waited: std::time::Duration,
    },
    /// `--check` found the journal of a crashed transaction, which it cannot recover.
    #[error(
        "an interrupted transaction of this root was not finished ({} remains), and --check \
         writes nothing, so it cannot recover it; the tree may be half old, half new",
        journal.display()
    )]
    UnfinishedUnderCheck { journal: PathBuf },
    /// A target changed since it was planned against (`stale_file`).
    #[error("{path} {how}")]
    Stale { path: String, how: Staleness },
    /// A worker thread of the commit panicked.
    #[error("{worker} panicked")]
    WorkerPanicked { worker: Worker },
    /// A path of the transaction that is not UTF-8 (the planner only makes UTF-8 ones).
    #[error("a path of the transaction is not UTF-8")]
    PathNotUtf8,
    /// One path changed twice in one transaction.
    #[error("{path} appears twice in one transaction")]
    Twice { path: String },
    /// The folder of a target is missing after the step that creates it.
    #[error("the folder of {path} could not be created")]
    FolderNotCreated { path: String },
    /// A path with an empty, `.` or `..` component, or an absolute one (the last guard).
    #[error("path {path} is not a normalised path inside the root")]
    NotNormalised { path: String },
    /// A target that is a device, socket or fifo.
    #[error("{path} is not a regular file, symlink or folder (a device, socket or fifo)")]
    NotRegular { path: String },
    /// Finishing a crashed transaction's renames found the tree neither before nor after it.
    #[error("the tree changed while transaction {id} was being finished")]
    ChangedWhileFinishing { id: String },
    /// A staged file that no longer holds the new content its journal names.
    #[error("the staged new content of {path} is not what the journal names")]
    StagedContentWrong { path: String },
    /// A committed transaction's new git index (`lock`) was removed before it was installed.
    #[error(
        "the new git index of transaction {id} is gone ({lock} was removed): the index does not \
         hold its changes"
    )]
    IndexLockGone { id: String, lock: String },
    /// A committed transaction's new git index (`lock`) holds something else now.
    #[error("{lock} does not hold the new git index of transaction {id}; it was left as it is")]
    IndexLockChanged { id: String, lock: String },
    /// The journal names a backup of `path` that is not there.
    #[error("the backup of {path} is missing")]
    BackupMissing { path: String },
    /// The backup of `path` does not hold the old content the journal names.
    #[error("the backup of {path} does not hold its old content")]
    BackupWrong { path: String },
    /// A journal entry whose old state was neither a file, a symlink nor absent, met while
    /// restoring.
    #[error("{path} was not a file; cannot restore it")]
    NotAFileToRestore { path: String },
    /// The operating system refused a step (`what`, "cannot write the journal") on `path`:
    /// `permission_denied` or `io_error`, as [`Error::io`] words it.
    #[error("{what} {path}: {cause}")]
    Io {
        path: String,
        what: String,
        #[source]
        cause: IoFailure,
    },
    /// A step outside the transaction layer failed (the state place's checks, the git index
    /// of `--index`): its refusal is kept whole and becomes the boundary error unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for TxnError {
    fn from(cause: Error) -> TxnError {
        TxnError::Outside {
            cause: Box::new(cause),
        }
    }
}

/// A refusal of the state place passes through whole, as its boundary error.
impl From<crate::state::StateError> for TxnError {
    fn from(err: crate::state::StateError) -> TxnError {
        Error::from(err).into()
    }
}

/// How a target differs from what it was planned against.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Staleness {
    /// It was missing and exists now.
    ExistsNow,
    /// It was removed.
    Removed,
    /// Its size changed.
    Size { now: u64, was: u64 },
    /// Its permission bits changed.
    Mode { now: u32, was: u32 },
    /// The symlink points elsewhere.
    SymlinkElsewhere,
    /// It is another kind of file (a folder for a file, …).
    OtherKind,
    /// Its content differs (SHA-256s in hex).
    Content { expected: String, actual: String },
    /// It changed between the checks and its rename.
    DuringCommit,
}

impl std::fmt::Display for Staleness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self {
            Staleness::DuringCommit => return f.write_str("changed while the patch was being committed"),
            Staleness::ExistsNow => "it exists now",
            Staleness::Removed => "it was removed",
            Staleness::Size { now, was } => {
                return write!(f, "changed since it was read: its size is {now} bytes, was {was}")
            }
            Staleness::Mode { now, was } => {
                return write!(f, "changed since it was read: its mode is {now:o}, was {was:o}")
            }
            Staleness::SymlinkElsewhere => "the symlink points elsewhere",
            Staleness::OtherKind => "it is a different kind of file",
            Staleness::Content { .. } => "its content differs",
        };
        write!(f, "changed since it was read: {what}")
    }
}

/// A worker thread of the commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Worker {
    /// The thread pruning the undo history beside the commit.
    Pruning,
    /// A thread syncing files.
    Sync,
}

impl std::fmt::Display for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Worker::Pruning => "the thread pruning the undo history",
            Worker::Sync => "a sync thread",
        })
    }
}

/// What was being restored when a restore failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Restoring {
    /// A recovery of the crashed transaction `id`.
    Recovery { id: String },
    /// The rollback of a commit that failed with `cause`.
    FailedCommit { cause: Box<TxnError> },
}

/// The message of [`TxnError::RestoreFailed`]: what failed, then each failure.
fn restore_failed(
    during: &Restoring,
    failures: &[Error],
    conflicts: &[String],
    blocked: &[Blocked],
) -> String {
    let mut text = match during {
        Restoring::Recovery { id } => {
            format!("recovering transaction {id} could not restore every file")
        }
        Restoring::FailedCommit { cause } => {
            format!("{cause} — and restoring the old state failed")
        }
    };
    for f in failures {
        text.push_str(&format!("; {}", f.message));
    }
    for c in conflicts {
        match blocked.iter().find(|b| b.path == *c) {
            Some(b) => text.push_str(&format!("; {}", blocked_text(b))),
            None => text.push_str(&format!("; {c} holds neither its old nor its new content")),
        }
    }
    text
}

/// Why a blocked path was left as found.
pub(crate) fn blocked_text(b: &Blocked) -> String {
    let what = if b.symlink {
        "a symbolic link (never followed)"
    } else {
        "not a folder"
    };
    format!(
        "{} cannot be reached: {} on its path is {what} now, put there by another program",
        b.path, b.at
    )
}

impl TxnError {
    /// The operating system's refusal of `what` on `path` (see [`TxnError::Io`]).
    pub(crate) fn io(path: &str, what: &str, cause: std::io::Error) -> TxnError {
        TxnError::Io {
            path: path.to_string(),
            what: what.to_string(),
            cause: cause.into(),
        }
    }

    /// [`TxnError::io`] of a failure met by reference (kept as its kind and words, and its
    /// OS error number).
    pub(crate) fn io_of(path: &str, what: &str, cause: &std::io::Error) -> TxnError {
        TxnError::Io {
            path: path.to_string(),
            what: what.to_string(),
            cause: IoFailure::copy_of(cause),
        }
    }

    /// The next step, when this refusal names one of its own.
    fn hint(&self) -> Option<Hint> {
        let hint = match self {
            TxnError::RecoveryFailed { .. } => Some(
                "run `apply-patch recover` as a user who can write the root and its state \
                 place, then run this command again",
            ),
            TxnError::RolledBack { .. } => return None,
            TxnError::RevertFailed { .. } => {
                Some("inspect the files; `apply-patch undo` reverts the last transaction")
            }
            TxnError::StaleAfterRecovery { .. } => Some(
                "an interrupted transaction was just recovered, which changed files this patch \
                 was planned against; run the command again",
            ),
            TxnError::NotTheLast { .. } => {
                Some("inspect the files; `apply-patch undo` reverts the last transaction")
            }
            TxnError::NoRecordOfTheLast { .. } => Some(
                "revert the last transaction by hand (its audit line lists its files), or apply a \
                 reverse patch",
            ),
            TxnError::ChangedSinceApplied { .. } => {
                Some("revert those files by hand, or apply a reverse patch instead")
            }
            TxnError::RestoreFailed { .. } => Some(
                "run `apply-patch recover` to finish restoring the old state (the journal and \
                 backups are kept)",
            ),
            TxnError::JournalDamaged { .. } | TxnError::JournalVersion { .. } => Some(
                "apply-patch cannot tell from it which files the transaction changed: compare \
                 each file with its backup in the journal folder and put back all of them or \
                 none (never some only, which would mix old and new files), then remove the \
                 folder",
            ),
            TxnError::Untrusted { place, .. } => {
                return Some(Hint::from(format!(
                    "if it came with a copy or an archive of the tree, remove {place}; if it is \
                     this tree's own (its state secret was replaced since), put every path its \
                     journal.json lists back to its `before` state from the backups named there, \
                     or leave them all as they are — never some only, which would mix old and \
                     new files — then remove it"
                )))
            }
            TxnError::Leftovers { place } => {
                return Some(Hint::from(format!(
                    "remove it (`rm -r {place}`); do not restore files from it: its backups are \
                     old versions of files the finished transaction replaced"
                )))
            }
            TxnError::Busy { .. } => Some("wait for the other run to finish, then try again"),
            TxnError::UnfinishedUnderCheck { .. } => {
                return Some(
                    Hint::new()
                        .text("run `apply-patch recover` (or any apply ")
                        .opt(Opt::Check, Value::Off)
                        .text("), then check again"),
                )
            }
            TxnError::Stale { .. } => {
                Some("read the file again and make the patch against its current content")
            }
            TxnError::NoJournal { .. }
            | TxnError::WorkerPanicked { .. }
            | TxnError::PathNotUtf8
            | TxnError::Twice { .. }
            | TxnError::FolderNotCreated { .. }
            | TxnError::NotNormalised { .. }
            | TxnError::NotRegular { .. }
            | TxnError::ChangedWhileFinishing { .. }
            | TxnError::StagedContentWrong { .. }
            | TxnError::IndexLockGone { .. }
            | TxnError::IndexLockChanged { .. }
            | TxnError::BackupMissing { .. }
            | TxnError::BackupWrong { .. }
            | TxnError::NotAFileToRestore { .. }
            | TxnError::BackupEdited { .. }
            | TxnError::NotAFile { .. }
            | TxnError::JournalUnencodable { .. }
            | TxnError::OwnFolder { .. }
            | TxnError::SymlinkOnPath { .. }
            | TxnError::NotAFolderOnPath { .. }
            | TxnError::Io { .. }
            | TxnError::Outside { .. } => return None,
        };
        hint.map(Hint::from)
    }

    /// The stable error code: a wrapped cause keeps its own.
    pub fn code(&self) -> ErrorCode {
        match self {
            TxnError::RevertFailed { .. }
            | TxnError::NotTheLast { .. }
            | TxnError::RestoreFailed { .. } => ErrorCode::RollbackFailed,
            TxnError::ChangedSinceApplied { .. } | TxnError::Stale { .. } => ErrorCode::StaleFile,
            TxnError::Busy { .. } | TxnError::UnfinishedUnderCheck { .. } => ErrorCode::Busy,
            TxnError::NotRegular { .. } => ErrorCode::UnsupportedFile,
            TxnError::OwnFolder { .. }
            | TxnError::SymlinkOnPath { .. }
            | TxnError::NotNormalised { .. } => ErrorCode::PathEscape,
            TxnError::WorkerPanicked { .. }
            | TxnError::PathNotUtf8
            | TxnError::Twice { .. }
            | TxnError::FolderNotCreated { .. }
            | TxnError::ChangedWhileFinishing { .. }
            | TxnError::StagedContentWrong { .. }
            | TxnError::IndexLockGone { .. }
            | TxnError::IndexLockChanged { .. }
            | TxnError::BackupMissing { .. }
            | TxnError::BackupWrong { .. }
            | TxnError::NotAFileToRestore { .. }
            | TxnError::JournalDamaged { .. }
            | TxnError::JournalVersion { .. }
            | TxnError::JournalUnencodable { .. }
            | TxnError::Untrusted { .. }
            | TxnError::Leftovers { .. }
            | TxnError::NotAFolderOnPath { .. }
            | TxnError::NoJournal { .. }
            | TxnError::NoRecordOfTheLast { .. }
            | TxnError::BackupEdited { .. }
            | TxnError::NotAFile { .. } => ErrorCode::IoError,
            TxnError::Outside { cause } => cause.code,
            TxnError::RecoveryFailed { cause }
            | TxnError::RolledBack { cause }
            | TxnError::StaleAfterRecovery { cause } => cause.code(),
            TxnError::Io { cause, .. } => cause.code(),
        }
    }

    /// The path a refusal of its own is about (every message names it).
    fn own_path(&self) -> Option<&str> {
        match self {
            TxnError::ChangedSinceApplied { changed, .. } => changed.first().map(String::as_str),
            TxnError::BackupEdited { path }
            | TxnError::Stale { path, .. }
            | TxnError::Twice { path }
            | TxnError::FolderNotCreated { path }
            | TxnError::NotNormalised { path }
            | TxnError::NotRegular { path }
            | TxnError::StagedContentWrong { path }
            | TxnError::BackupMissing { path }
            | TxnError::BackupWrong { path }
            | TxnError::NotAFileToRestore { path }
            | TxnError::NotAFile { path }
            | TxnError::OwnFolder { path }
            | TxnError::SymlinkOnPath { path, .. }
            | TxnError::NotAFolderOnPath { path, .. }
            | TxnError::Io { path, .. } => Some(path),
            TxnError::JournalDamaged { journal, .. } | TxnError::JournalVersion { journal, .. } => {
                Some(journal)
            }
            TxnError::Untrusted { place, .. } | TxnError::Leftovers { place } => Some(place),
            TxnError::IndexLockGone { lock, .. } | TxnError::IndexLockChanged { lock, .. } => {
                Some(lock)
            }
            _ => None,
        }
    }

    /// The structured data a refusal of its own carries.
    fn own_details(&self) -> Option<serde_json::Value> {
        match self {
            TxnError::NotTheLast { id, last } => {
                Some(serde_json::json!({ "transaction": id, "last": last }))
            }
            TxnError::NoRecordOfTheLast { last, newest } => {
                Some(serde_json::json!({ "last": last, "newest_record": newest }))
            }
            TxnError::ChangedSinceApplied { changed, .. } => {
                Some(serde_json::json!({ "changed": changed }))
            }
            TxnError::RevertFailed { cause } => cause.details().cloned(),
            TxnError::Untrusted { place, reason } => {
                Some(serde_json::json!({ "journal": place, "reason": reason }))
            }
            TxnError::Leftovers { place } => Some(serde_json::json!({ "journal": place })),
            TxnError::JournalDamaged { journal, .. } | TxnError::JournalVersion { journal, .. } => {
                Some(serde_json::json!({ "journal": journal }))
            }
            TxnError::Busy { lock, .. } => Some(serde_json::json!({ "lock": lock })),
            TxnError::Stale {
                path,
                how: Staleness::Content { expected, actual },
            } => Some(serde_json::json!({
                "path": path, "expected_sha256": expected, "actual_sha256": actual,
            })),
            TxnError::SymlinkOnPath { symlink, .. } => {
                Some(serde_json::json!({ "symlink": symlink }))
            }
            TxnError::RestoreFailed {
                during,
                journal,
                failures,
                conflicts,
                blocked,
            } => {
                let failures: Vec<_> = failures
                    .iter()
                    .map(|f| serde_json::json!({"path": f.path, "message": f.message}))
                    .collect();
                let mut details = serde_json::json!({
                    "journal": journal.display().to_string(),
                    "failures": failures,
                    "conflicts": conflicts,
                });
                if !blocked.is_empty() {
                    details["blocked"] = serde_json::json!(blocked);
                }
                if let Restoring::FailedCommit { cause } = during {
                    let cause = Error::from((**cause).clone());
                    details["cause"] = serde_json::json!({
                        "code": cause.code, "message": cause.message, "path": cause.path
                    });
                }
                Some(details)
            }
            _ => None,
        }
    }
}

impl From<TxnError> for Error {
    fn from(err: TxnError) -> Error {
        if let TxnError::Outside { cause } = err {
            return *cause;
        }
        let message = err.to_string();
        let hint = err.hint();
        let out = match &err {
            // The wrapper's own message (the cause's words inside it), about the cause's
            // file with its code; the cause stays whole below it in the chain.
            TxnError::RecoveryFailed { cause }
            | TxnError::RolledBack { cause }
            | TxnError::StaleAfterRecovery { cause } => {
                around(&Error::from((**cause).clone()), message, hint)
            }
            // A refusal of its own (a failed revert keeps only its cause's details).
            _ => {
                let mut out = Error::new(err.code(), message);
                if let Some(path) = err.own_path() {
                    out = out.with_path(path);
                }
                if let Some(hint) = hint {
                    out = out.with_hint(hint);
                }
                if let Some(details) = err.own_details() {
                    out = out.with_details(details);
                }
                out
            }
        };
        out.caused_by(err)
    }
}

/// The wrapper's own message (the cause's words inside it), about the cause's file with its
/// code; the cause stays whole below it in the chain.
fn around(cause: &Error, message: String, hint: Option<Hint>) -> Error {
    let mut out = Error::around(cause, message);
    if let Some(hint) = hint {
        out.set_hint(Some(hint));
    }
    out
}

#[cfg(test)]
mod tests;
