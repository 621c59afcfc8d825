//! Stage: commit. The refusals the transaction layer composes around a cause (a step that
//! failed, and what the transaction did about it), and the refusals of an undo, each with its
//! context (transaction ids, paths) as fields. A cause stays a field; the message is written
//! once, when the refusal becomes the boundary [`Error`], which keeps the cause's code, path and
//! details.

use std::path::PathBuf;

use crate::{Error, ErrorCode};

/// A failed step and what the transaction did about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TxnError {
    /// A crashed transaction had to be recovered before this run, and recovering it failed.
    #[error(
        "an interrupted transaction of this root must be recovered before this run, and \
         recovering it failed: {}",
        .cause.message
    )]
    RecoveryFailed { cause: Box<Error> },
    /// A commit failed after it had renamed files, and the work tree was rolled back.
    #[error("{}; the work-tree changes were rolled back", .cause.message)]
    RolledBack { cause: Box<Error> },
    /// A file changed since it was planned against (`stale_file`), right after a crashed
    /// transaction was recovered, which is what changed it.
    #[error("{}", .cause.message)]
    StaleAfterRecovery { cause: Box<Error> },
    /// A post-check failed and reverting the transaction failed too (`rollback_failed`).
    #[error(
        "the post-check failed and the change could not be rolled back: {}",
        .cause.message
    )]
    RevertFailed { cause: Box<Error> },
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
    #[error("{}", restore_failed(during, failures, conflicts))]
    RestoreFailed {
        during: Restoring,
        /// The journal's folder.
        journal: PathBuf,
        /// The restores that failed.
        failures: Vec<Error>,
        /// The paths that hold neither their old nor their new content.
        conflicts: Vec<String>,
    },
}

/// What was being restored when a restore failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Restoring {
    /// A recovery of the crashed transaction `id`.
    Recovery { id: String },
    /// The rollback of a commit that failed with `cause`.
    FailedCommit { cause: Box<Error> },
}

/// The message of [`TxnError::RestoreFailed`]: what failed, then each failure.
fn restore_failed(during: &Restoring, failures: &[Error], conflicts: &[String]) -> String {
    let mut text = match during {
        Restoring::Recovery { id } => {
            format!("recovering transaction {id} could not restore every file")
        }
        Restoring::FailedCommit { cause } => {
            format!("{} — and restoring the old state failed", cause.message)
        }
    };
    for f in failures {
        text.push_str(&format!("; {}", f.message));
    }
    for c in conflicts {
        text.push_str(&format!("; {c} holds neither its old nor its new content"));
    }
    text
}

impl TxnError {
    /// The next step, when this refusal names one of its own.
    fn hint(&self) -> Option<String> {
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
                "inspect the journal folder, restore any file by hand from its backups, then \
                 remove the folder",
            ),
            TxnError::Untrusted { place, .. } => {
                return Some(format!(
                    "if it came with a copy or an archive of the tree, remove {place}; if it is \
                     this tree's own, restore its files by hand from the backups in it, then \
                     remove it"
                ))
            }
            TxnError::NoJournal { .. }
            | TxnError::BackupEdited { .. }
            | TxnError::NotAFile { .. }
            | TxnError::JournalUnencodable { .. }
            | TxnError::OwnFolder { .. }
            | TxnError::SymlinkOnPath { .. }
            | TxnError::NotAFolderOnPath { .. } => return None,
        };
        hint.map(str::to_string)
    }

    /// The stable error code: a wrapped cause keeps its own.
    pub fn code(&self) -> ErrorCode {
        match self {
            TxnError::RevertFailed { .. }
            | TxnError::NotTheLast { .. }
            | TxnError::RestoreFailed { .. } => ErrorCode::RollbackFailed,
            TxnError::ChangedSinceApplied { .. } => ErrorCode::StaleFile,
            TxnError::OwnFolder { .. } | TxnError::SymlinkOnPath { .. } => ErrorCode::PathEscape,
            TxnError::JournalDamaged { .. }
            | TxnError::JournalVersion { .. }
            | TxnError::JournalUnencodable { .. }
            | TxnError::Untrusted { .. }
            | TxnError::NotAFolderOnPath { .. }
            | TxnError::NoJournal { .. }
            | TxnError::NoRecordOfTheLast { .. }
            | TxnError::BackupEdited { .. }
            | TxnError::NotAFile { .. } => ErrorCode::IoError,
            TxnError::RecoveryFailed { cause }
            | TxnError::RolledBack { cause }
            | TxnError::StaleAfterRecovery { cause } => cause.code,
        }
    }

    /// The path a refusal of its own is about (every message names it).
    fn own_path(&self) -> Option<&str> {
        match self {
            TxnError::ChangedSinceApplied { changed, .. } => changed.first().map(String::as_str),
            TxnError::BackupEdited { path }
            | TxnError::NotAFile { path }
            | TxnError::OwnFolder { path }
            | TxnError::SymlinkOnPath { path, .. }
            | TxnError::NotAFolderOnPath { path, .. } => Some(path),
            TxnError::JournalDamaged { journal, .. } | TxnError::JournalVersion { journal, .. } => {
                Some(journal)
            }
            TxnError::Untrusted { place, .. } => Some(place),
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
            TxnError::SymlinkOnPath { symlink, .. } => {
                Some(serde_json::json!({ "symlink": symlink }))
            }
            TxnError::RestoreFailed {
                during,
                journal,
                failures,
                conflicts,
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
                if let Restoring::FailedCommit { cause } = during {
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
        let message = err.to_string();
        let hint = err.hint();
        let (TxnError::RecoveryFailed { cause }
        | TxnError::RolledBack { cause }
        | TxnError::StaleAfterRecovery { cause }) = err
        else {
            // A refusal of its own (a failed revert keeps only its cause's details).
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
            return out;
        };
        let mut out = *cause;
        out.message = message;
        if let Some(hint) = hint {
            out.hint = Some(hint);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_its_causes_code_path_and_details() {
        let cause = Error::new(ErrorCode::PermissionDenied, "cannot write a.txt: denied")
            .with_path("a.txt")
            .with_hint("fix the permissions")
            .with_details(serde_json::json!({"k": 1}));
        let failed: Error = TxnError::RecoveryFailed {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(failed.code, ErrorCode::PermissionDenied);
        assert_eq!(failed.path.as_deref(), Some("a.txt"));
        assert_eq!(failed.details(), cause.details());
        assert!(failed
            .message
            .ends_with("recovering it failed: cannot write a.txt: denied"));
        assert!(failed
            .hint
            .is_some_and(|h| h.contains("apply-patch recover")));
        let rolled: Error = TxnError::RolledBack {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(
            rolled.message,
            "cannot write a.txt: denied; the work-tree changes were rolled back"
        );
        assert_eq!(
            rolled.hint, cause.hint,
            "the cause's own next step still holds"
        );
    }

    #[test]
    fn a_stale_file_after_a_recovery_keeps_its_message_and_says_why() {
        let cause = Error::new(ErrorCode::StaleFile, "a.txt changed since it was read")
            .with_path("a.txt")
            .with_hint("read the file again");
        let out: Error = TxnError::StaleAfterRecovery {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(out.code, ErrorCode::StaleFile);
        assert_eq!(out.message, cause.message);
        assert!(out
            .hint
            .is_some_and(|h| h.starts_with("an interrupted transaction was just recovered")));
    }

    #[test]
    fn a_failed_revert_is_rollback_failed_with_the_causes_details() {
        let cause = Error::new(ErrorCode::Busy, "another transaction committed since")
            .with_path("a.txt")
            .with_details(serde_json::json!({"other": "t2"}));
        let out: Error = TxnError::RevertFailed {
            cause: Box::new(cause.clone()),
        }
        .into();
        assert_eq!(out.code, ErrorCode::RollbackFailed);
        assert_eq!(
            out.message,
            "the post-check failed and the change could not be rolled back: another \
             transaction committed since"
        );
        assert_eq!(out.path, None);
        assert_eq!(out.details(), cause.details());
        assert!(out.hint.is_some_and(|h| h.contains("apply-patch undo")));
    }

    #[test]
    fn an_undo_refusal_names_the_transactions_and_files() {
        let late: Error = TxnError::NotTheLast {
            id: "t1".into(),
            last: Some("t2".into()),
        }
        .into();
        assert_eq!(late.code, ErrorCode::RollbackFailed);
        assert_eq!(
            late.message,
            "cannot roll back transaction t1: transaction t2 was committed after it, and \
             reverting in its place would undo another change"
        );
        assert_eq!(
            late.details(),
            Some(&serde_json::json!({"transaction": "t1", "last": "t2"}))
        );
        let changed: Error = TxnError::ChangedSinceApplied {
            id: "t1".into(),
            changed: vec!["a.txt".into(), "b.txt".into()],
        }
        .into();
        assert_eq!(changed.code, ErrorCode::StaleFile);
        assert_eq!(changed.path.as_deref(), Some("a.txt"));
        assert!(changed.message.ends_with("changed since it was applied: a.txt, b.txt"));
        let none: Error = TxnError::NoRecordOfTheLast {
            last: "t3".into(),
            newest: None,
        }
        .into();
        assert_eq!(none.code, ErrorCode::IoError);
        assert!(none.message.contains("; there is none, and reverting"));
        assert_eq!(
            TxnError::NotAFile { path: "d".into() }.code(),
            ErrorCode::IoError
        );
    }

    #[test]
    fn a_failed_restore_lists_every_failure_and_keeps_the_commits_cause() {
        let cause = Error::new(ErrorCode::IoError, "cannot rename a.txt").with_path("a.txt");
        let failure = Error::new(ErrorCode::IoError, "cannot restore b.txt").with_path("b.txt");
        let out: Error = TxnError::RestoreFailed {
            during: Restoring::FailedCommit {
                cause: Box::new(cause),
            },
            journal: PathBuf::from("/s/j1"),
            failures: vec![failure],
            conflicts: vec!["c.txt".into()],
        }
        .into();
        assert_eq!(out.code, ErrorCode::RollbackFailed);
        assert_eq!(
            out.message,
            "cannot rename a.txt — and restoring the old state failed; cannot restore b.txt; \
             c.txt holds neither its old nor its new content"
        );
        let details = out.details().expect("a failed restore has details");
        assert_eq!(details["journal"], "/s/j1");
        assert_eq!(details["failures"][0]["path"], "b.txt");
        assert_eq!(details["conflicts"][0], "c.txt");
        assert_eq!(details["cause"]["path"], "a.txt");
        assert!(out.hint.is_some_and(|h| h.contains("apply-patch recover")));
        let recovering: Error = TxnError::RestoreFailed {
            during: Restoring::Recovery { id: "t9".into() },
            journal: PathBuf::from("/s/j9"),
            failures: Vec::new(),
            conflicts: Vec::new(),
        }
        .into();
        assert_eq!(
            recovering.message,
            "recovering transaction t9 could not restore every file"
        );
        assert!(recovering.details().is_some_and(|d| d.get("cause").is_none()));
    }

    #[test]
    fn a_journal_refusal_names_the_journal_and_the_next_step() {
        let untrusted: Error = TxnError::Untrusted {
            place: "/s/j1".into(),
            reason: "its secret differs".into(),
        }
        .into();
        assert_eq!(untrusted.code, ErrorCode::IoError);
        assert_eq!(
            untrusted.message,
            "refusing the apply-patch journal /s/j1: its secret differs; it was left as it is"
        );
        assert_eq!(untrusted.path.as_deref(), Some("/s/j1"));
        assert!(untrusted
            .hint
            .as_deref()
            .is_some_and(|h| h.starts_with("if it came with a copy or an archive of the tree, remove /s/j1;")));
        assert_eq!(
            untrusted.details(),
            Some(&serde_json::json!({"journal": "/s/j1", "reason": "its secret differs"}))
        );
        let link: Error = TxnError::SymlinkOnPath {
            path: "a/b/c.txt".into(),
            symlink: "a/b".into(),
        }
        .into();
        assert_eq!(link.code, ErrorCode::PathEscape);
        assert_eq!(link.path.as_deref(), Some("a/b/c.txt"));
        assert_eq!(link.details(), Some(&serde_json::json!({"symlink": "a/b"})));
        let version: Error = TxnError::JournalVersion {
            journal: "j.json".into(),
            version: 9,
            reads: 2,
        }
        .into();
        assert_eq!(
            version.message,
            "the journal j.json has version 9; this apply-patch reads version 2"
        );
        assert!(version.hint.is_some());
    }
}
