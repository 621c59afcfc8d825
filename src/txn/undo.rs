//! Stage: undo. Reverts the last committed transaction of a root from its undo record (the
//! journal folder it left: old and new states and hard-linked backups), but only when every
//! file it wrote still holds what it wrote (`stale_file` names those changed since). The
//! revert is itself an ordinary transaction (lock, journal, rename, verify, audit line);
//! its end drops the undone record. Must not touch anything the record does not name.

use std::path::Path;

use super::dirfd::Dir;
use super::durable::Durability;
use super::failpoint::Failpoints;
use super::journal::{self, Entry, Journal, State};
use super::lock::{self, Lock};
use super::cleanup::list_records;
use super::place;
use super::recover;
use super::stage::Txn;
use super::{AuditRecord, Change, NewState, TxnError, TxnWarning};
use crate::content::Content;
use crate::state::StateDir;
use crate::Error;

/// The result of [`undo`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct UndoReport {
    /// The id of the transaction reverted; `None` when the history was empty.
    pub undone: Option<String>,
    /// The paths put back, in the transaction's order.
    pub files: Vec<String>,
    /// What recovering an interrupted transaction did first.
    pub recovered: Vec<TxnWarning>,
    /// Clean-up steps that failed (the revert itself is in place).
    pub warnings: Vec<TxnWarning>,
}

/// Reverts the last committed transaction of `root` (see the module docs).
pub fn undo(root: &Path) -> Result<UndoReport, Error> {
    undo_with(&StateDir::for_root(root)?, None)
}

/// [`undo`] with an explicit state place and failpoint (`None`: from the environment).
pub fn undo_with(
    state: &StateDir,
    failpoint: Option<super::Failpoint>,
) -> Result<UndoReport, Error> {
    Ok(revert_inner(state, None, failpoint, None)?)
}

/// Reverts transaction `id` — only that one, decided under the root's lock: when another
/// transaction committed after it, nothing is reverted and the error (`rollback_failed`)
/// names both. With a `companion` (the git index of `--index`, its entries put back), the
/// revert changes it together with the work tree, as the transaction did.
#[cfg(any(feature = "git", feature = "internals"))]
pub fn revert(
    state: &StateDir,
    id: &str,
    companion: Option<&mut dyn super::Companion>,
) -> Result<UndoReport, Error> {
    Ok(revert_inner(state, Some(id), None, companion)?)
}

fn revert_inner(
    state: &StateDir,
    expect: Option<&str>,
    failpoint: Option<super::Failpoint>,
    companion: Option<&mut dyn super::Companion>,
) -> Result<UndoReport, TxnError> {
    state.ensure()?;
    let _lock = Lock::acquire(&state.lock_path(), lock::WAIT)?;
    let recovered = recover::recover_locked(state)?.warnings();
    let undo = state.checked_undo_dir()?;
    let mut records = list_records(&undo)?;
    records.sort();
    let last = place::read_last(state)?;
    if let Some(id) = expect.filter(|id| last.as_deref() != Some(*id)) {
        return Err(not_the_last(id, last.as_deref()));
    }
    let newest = records.pop();
    if let Some(last) = last.filter(|l| newest.as_ref() != Some(l)) {
        return Err(no_record_of_the_last(&last, newest.as_deref()));
    }
    let Some(id) = newest else {
        return Ok(UndoReport {
            recovered,
            ..UndoReport::default()
        });
    };
    let dir = undo.join(&id);
    let journal = Journal::read(&dir)?
        .ok_or_else(|| TxnError::NoJournal { record: dir.clone() })?;
    // Only a record of this state place, for this very root, and named as its transaction.
    let root = recover::open_root(state)?;
    journal.check_trusted(&place::secret(state)?, &root, &dir)?;
    if journal.id != id || journal.undoes.is_some() {
        return Err(journal::untrusted(
            &dir,
            "it is not the record of its transaction",
        ));
    }
    // Its backups are read through the record's folder opened without following a symlink,
    // and let go before the revert, whose end drops the record (Windows cannot move a folder
    // a handle holds).
    let changes = {
        let backups = Dir::open(&undo)
            .and_then(|u| u.open_child(id.as_bytes()))
            .map_err(|e| TxnError::io_of(&dir.display().to_string(), "cannot open", &e))?;
        reverse_changes(state.root(), &journal, &backups)?
    };
    let files = changes.iter().map(|c| c.path.clone()).collect();
    let tx = Txn {
        state,
        operation: "undo",
        undoes: Some((id.clone(), journal.previous.clone())),
        durability: Durability::Full,
    };
    let mut fp = Failpoints::new(failpoint.or_else(super::Failpoint::from_env));
    let done = tx.run(changes, &AuditRecord::default(), &mut fp, companion)?;
    Ok(UndoReport {
        undone: Some(id),
        files,
        recovered,
        warnings: done.warnings,
    })
}

/// Transaction `id` is not the last one any more: reverting would undo another's change.
fn not_the_last(id: &str, last: Option<&str>) -> TxnError {
    TxnError::NotTheLast {
        id: id.to_string(),
        last: last.map(str::to_string),
    }
}

/// The last transaction has no undo record (writing it failed after its commit): reverting
/// the newest record would skip it, so undo refuses.
fn no_record_of_the_last(last: &str, newest: Option<&str>) -> TxnError {
    TxnError::NoRecordOfTheLast {
        last: last.to_string(),
        newest: newest.map(str::to_string),
    }
}

/// The changes that put the record's old states back, each checked to still hold the new
/// state; `stale_file` lists every path changed since.
fn reverse_changes(root: &Path, journal: &Journal, backups: &Dir) -> Result<Vec<Change>, TxnError> {
    // One read per path: the snapshot that is checked is the one the revert commits against.
    let mut befores = vec![];
    let mut changed = vec![];
    for entry in &journal.entries {
        let (before, _) = super::read_snapshot(root, &entry.path)?;
        if State::from_snapshot(&before) != entry.after {
            changed.push(entry.path.clone());
        }
        befores.push(before);
    }
    if !changed.is_empty() {
        return Err(changed_since(journal, changed));
    }
    journal
        .entries
        .iter()
        .zip(befores)
        .map(|(entry, before)| {
            let after = old_content(backups, entry)?;
            Ok(Change {
                path: entry.path.clone(),
                before,
                after,
            })
        })
        .collect()
}

fn changed_since(journal: &Journal, changed: Vec<String>) -> TxnError {
    TxnError::ChangedSinceApplied {
        id: journal.id.clone(),
        changed,
    }
}

/// What `entry` held before its transaction, as the new state of the revert.
fn old_content(backups: &Dir, entry: &Entry) -> Result<NewState, TxnError> {
    match &entry.before {
        State::Missing => Ok(NewState::Absent),
        State::Symlink { target } => Ok(NewState::Symlink {
            target: target.clone(),
        }),
        State::File { sha256, mode } => {
            let name = entry.backup.as_deref().unwrap_or_default();
            let (bytes, hash, _) = backups
                .read_file_hashed(name.as_bytes())
                .map_err(|e| TxnError::io_of(&entry.path, "cannot read the backup of", &e))?;
            if journal::hex(&hash) != *sha256 {
                return Err(TxnError::BackupEdited {
                    path: entry.path.clone(),
                });
            }
            Ok(NewState::File {
                bytes: Content::with_sha256(bytes, hash),
                mode: *mode,
            })
        }
        State::Directory | State::Other => Err(TxnError::NotAFile {
            path: entry.path.clone(),
        }),
    }
}
