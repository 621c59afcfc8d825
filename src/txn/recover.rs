//! Stage: rollback and recovery. Puts a tree back to a transaction's old state after a
//! failure (in process) or a crash (the next run, or `apply-patch recover`), and finishes a
//! committed transaction (clean-up, audit line, undo record).
//!
//! Decisions per journal phase:
//! - `prepared` (the commit point was not reached): **roll back**. Some renames may have
//!   happened, none is known to be durable as a whole, and the user asked for all or nothing:
//!   the old state is the only one known complete. Except when a target whose rename was
//!   done holds neither state (another program changed it after our rename): the commit is
//!   then finished around that later edit ([`forward`]), as the live commit does.
//! - `committed` (every rename was done, synced and verified before the mark was written):
//!   **complete**: the new state is wholly in place; only clean-up remains.
//!
//! Rollback is decided per path from what the disk holds now, so it is idempotent and safe to
//! run again after an interrupted rollback: the old state → nothing to do; the new state →
//! restore the backup (or remove an added file); anything else was changed by someone after
//! the crash → left as found and reported (its backup is kept under `recovered/<id>/`). So is
//! a path that cannot be reached any more because a folder on its way was replaced (by a
//! symlink, which is never followed, or a file): nothing of ours can be behind it.
//!
//! What is not a journal is refused, saying what it is: a journal folder that is a symlink, a
//! file or a FIFO, or that belongs to another user ([`crate::state::safety`]); a journal that
//! is not this root's own ([`Journal::check_trusted`]). A journal folder whose journal was
//! renamed [`journal::DONE`] is a finished transaction whose clean-up was interrupted: its
//! removal is finished ([`cleanup::discard_journal`]).
//! Must not plan or write anything but the journal's own old states.

use std::path::{Path, PathBuf};

use std::io::Write;

use super::cleanup::{self, cleanup_warning, discard_journal, finish};
use super::dirfd::{self, Dir};
use super::failpoint::Failpoints;
use super::forward;
use super::journal::{self, current_state, Blocked, Entry, Journal, Phase, State};
use super::lock::{self, Lock};
use super::place::{self, write_last};
use super::{audit, Restoring, TxnError, TxnWarning, TxnWarningCode};
use crate::state::safety::{self, Keeps};
use crate::state::StateDir;
use crate::Error;

/// How many committed transactions the undo history keeps.
pub const UNDO_HISTORY: usize = 20;

/// What a recovery did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecoverAction {
    /// The crashed transaction had not reached its commit point: the old state is back.
    RolledBack,
    /// The crashed transaction had committed: its clean-up was finished.
    Completed,
    /// The transaction was over, and only removing its journal folder was interrupted: that
    /// was finished.
    CleanedUp,
}

/// The result of [`recover`]; empty (`action: None`) when there was nothing to recover.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RecoverReport {
    /// The recovered transaction's id.
    pub id: Option<String>,
    pub action: Option<RecoverAction>,
    /// Paths put back to their old content.
    pub restored: Vec<String>,
    /// Paths changed by someone after the crash: left exactly as found.
    pub conflicts: Vec<String>,
    /// Where the journal and backups were kept because of conflicts.
    pub kept: Option<PathBuf>,
    /// The conflicts that could not be reached: a folder on their way was replaced (by a
    /// symlink, never followed, or a file).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<Blocked>,
    /// Clean-up steps that failed (the tree itself is consistent).
    pub warnings: Vec<TxnWarning>,
}

impl RecoverReport {
    /// Nothing was recovered.
    pub fn is_empty(&self) -> bool {
        self.action.is_none()
    }

    /// The crashed transaction was finished because a target was changed after its rename.
    fn finished_around_later_edit(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| w.code == TxnWarningCode::LaterEdit)
    }

    /// The report as `recovered` warnings (what `commit` returns in `Committed::recovered`).
    pub fn warnings(&self) -> Vec<TxnWarning> {
        let (Some(id), Some(action)) = (&self.id, self.action) else {
            return vec![];
        };
        let what = match action {
            RecoverAction::RolledBack => format!("rolled back {} file(s)", self.restored.len()),
            RecoverAction::Completed if self.finished_around_later_edit() => {
                "finished its commit around a later edit".to_string()
            }
            RecoverAction::Completed => "completed its clean-up".to_string(),
            RecoverAction::CleanedUp => {
                "it had finished; removing its journal folder was completed".to_string()
            }
        };
        let mut out = vec![TxnWarning {
            code: TxnWarningCode::Recovered,
            message: format!("an interrupted transaction ({id}) was recovered first: {what}"),
            path: None,
        }];
        let kept = self
            .kept
            .as_ref()
            .map(|k| format!("; its backup is kept in {}", k.display()))
            .unwrap_or_default();
        let later_edit = |p: &String| {
            self.warnings
                .iter()
                .any(|w| w.code == TxnWarningCode::LaterEdit && w.path.as_ref() == Some(p))
        };
        let conflict = |p: &String| match self.blocked.iter().find(|b| b.path == *p) {
            Some(b) => format!("{}; it was left as found{kept}", super::error::blocked_text(b)),
            None => format!("{p} was changed after the interruption and was left as found{kept}"),
        };
        out.extend(
            self.conflicts
                .iter()
                .filter(|p| !later_edit(p))
                .map(|p| TxnWarning {
                    code: TxnWarningCode::Recovered,
                    message: conflict(p),
                    path: Some(p.clone()),
                }),
        );
        out.extend(self.warnings.iter().cloned());
        out
    }
}

/// Recovers a transaction a crash left under `root`'s state place (see the module docs).
pub fn recover(root: &Path) -> Result<RecoverReport, Error> {
    recover_with(&StateDir::for_root(root)?)
}

/// [`recover`] with an explicit state place.
pub fn recover_with(state: &StateDir) -> Result<RecoverReport, Error> {
    state.ensure()?;
    let _lock = Lock::acquire(&state.lock_path(), lock::WAIT)?;
    Ok(recover_locked(state)?)
}

/// Recovery with the lock held (the first thing every transaction does).
pub(crate) fn recover_locked(state: &StateDir) -> Result<RecoverReport, TxnError> {
    let jpath = state.journal_dir();
    let shown = jpath.display().to_string();
    // A symlink, a file or a FIFO there, or another user's folder, is refused, saying what it
    // is (and never followed, never removed).
    if !safety::check_folder(&jpath, Keeps::JournalFolder)? {
        return Ok(RecoverReport::default());
    }
    let Some(journal) = Journal::read(&jpath)? else {
        return recover_without_journal(state, &jpath);
    };
    // Acted on only against the root of this state place, never the root the journal names.
    let root = open_root(state)?;
    journal.check_trusted(&place::secret(state)?, &root, &jpath)?;
    check_index_lock(state, &journal, &jpath)?;
    let jdir =
        Dir::open(&jpath).map_err(|e| TxnError::io_of(&shown, "cannot open the journal folder", &e))?;
    match journal.phase {
        Phase::Prepared => match forward::later_edits(&root, &jdir, &journal)? {
            Some(edited) => recover_forward(state, &root, (jdir, &jpath), journal, &edited),
            None => recover_roll_back(state, &root, (jdir, &jpath), &journal),
        },
        Phase::Committed => {
            // Windows refuses to move or remove a folder while a handle holds it open.
            drop(jdir);
            recover_complete(state, &root, &jpath, &journal)
        }
    }
}

/// A crash between the renames and the commit mark, with a target changed by another
/// program after its rename: the commit is finished around that later edit rather than
/// rolled back around it (see [`forward`]).
fn recover_forward(
    state: &StateDir,
    root: &Dir,
    (jdir, jpath): (Dir, &Path),
    mut journal: Journal,
    edited: &[String],
) -> Result<RecoverReport, TxnError> {
    forward::finish_renames(root, &journal)?;
    journal.phase = Phase::Committed;
    journal.write(&jdir, jpath, &place::secret(state)?)?;
    // The clean-up moves the journal folder: no handle of ours may hold it (Windows).
    drop(jdir);
    let mut report = recover_complete(state, root, jpath, &journal)?;
    let later = edited.iter().map(|p| super::stage::later_edit(p));
    report.warnings.splice(0..0, later);
    Ok(report)
}

/// The state place's root, opened.
pub(crate) fn open_root(state: &StateDir) -> Result<Dir, TxnError> {
    Dir::open(state.root()).map_err(|e| {
        TxnError::io_of(
            &state.root().display().to_string(),
            "cannot open the root",
            &e,
        )
    })
}

/// A journal folder without a journal. The journal is written before anything else, and
/// removed only after everything else ([`cleanup::discard_journal`]), renamed first to
/// [`journal::DONE`]: so a folder with that finished journal is an interrupted removal
/// (finished here once its MAC proves it this root's own); an empty one (or with only the
/// journal's temporary file) is a start interrupted before anything was touched (removed);
/// one with other files is refused, with a hint that never leads to restoring files from it.
fn recover_without_journal(state: &StateDir, jpath: &Path) -> Result<RecoverReport, TxnError> {
    if let Some(done) = Journal::read_named(jpath, journal::DONE)? {
        let root = open_root(state)?;
        done.check_trusted(&place::secret(state)?, &root, jpath)?;
        discard_journal(jpath, &mut Failpoints::new(None))?;
        return Ok(RecoverReport {
            id: Some(done.id),
            action: Some(RecoverAction::CleanedUp),
            ..RecoverReport::default()
        });
    }
    if !holds_at_most(jpath, &["journal.json.tmp"])? {
        return Err(TxnError::Leftovers {
            place: jpath.display().to_string(),
        });
    }
    cleanup::remove_dir(jpath)?;
    Ok(RecoverReport::default())
}

/// Does the folder `dir` hold no names but `allowed`?
fn holds_at_most(dir: &Path, allowed: &[&str]) -> Result<bool, TxnError> {
    let shown = dir.display().to_string();
    let read = std::fs::read_dir(dir).map_err(|e| TxnError::io_of(&shown, "cannot list", &e))?;
    for item in read {
        let item = item.map_err(|e| TxnError::io_of(&shown, "cannot list", &e))?;
        if !allowed.iter().any(|a| item.file_name() == **a) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The companion's lock file a journal names must be a lock file of this state place's git
/// dir (the journal's MAC already says it is ours; this keeps a rename of it inside).
fn check_index_lock(state: &StateDir, journal: &Journal, jpath: &Path) -> Result<(), TxnError> {
    let Some(index) = &journal.index else {
        return Ok(());
    };
    let inside = state
        .git_dir()
        .is_some_and(|git| index.lock.starts_with(git) && index.lock != git);
    let named = index
        .lock
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.len() > ".lock".len() && n.ends_with(".lock"));
    if inside && named {
        return Ok(());
    }
    Err(journal::untrusted(
        jpath,
        "the index lock it names is not in this root's git dir",
    ))
}

/// Device and inode of `path` (not followed), when it exists.
fn identity_of(path: &Path) -> Option<(u64, u64)> {
    dirfd::path_identity(path).ok()
}

/// A rolled-back transaction's index lock file goes, when it is still ours (another git
/// process may have taken the lock since, if someone removed ours).
fn drop_index_lock(journal: &Journal) -> Result<(), TxnError> {
    let Some(index) = &journal.index else {
        return Ok(());
    };
    if identity_of(&index.lock) != Some((index.dev, index.ino)) {
        return Ok(());
    }
    match std::fs::remove_file(&index.lock) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(TxnError::io_of(
            &index.lock.display().to_string(),
            "cannot remove the git index lock",
            &e,
        )),
        _ => Ok(()),
    }
}

/// A committed transaction's index: its lock file, still ours and whole, is renamed over
/// the index (the crash came between the commit mark and that rename).
fn install_index_lock(journal: &Journal) -> Result<(), TxnError> {
    let Some(index) = &journal.index else {
        return Ok(());
    };
    let shown = index.lock.display().to_string();
    let target = index.lock.with_extension("");
    if identity_of(&index.lock) != Some((index.dev, index.ino)) {
        if identity_of(&target) == Some((index.dev, index.ino)) {
            return Ok(()); // installed before the crash
        }
        return Err(TxnError::IndexLockGone {
            id: journal.id.clone(),
            lock: shown,
        });
    }
    let bytes = std::fs::read(&index.lock).map_err(|e| TxnError::io_of(&shown, "cannot read", &e))?;
    if journal::hex(&super::sha256(&bytes)) != index.sha256 {
        return Err(TxnError::IndexLockChanged {
            id: journal.id.clone(),
            lock: shown,
        });
    }
    std::fs::rename(&index.lock, &target)
        .map_err(|e| TxnError::io_of(&shown, "cannot install the git index from", &e))
}

/// After a rollback: the work tree is old, so is the index, and `last` names what it named
/// before (an undo never changed it).
fn after_roll_back(state: &StateDir, journal: &Journal) -> Result<(), TxnError> {
    drop_index_lock(journal)?;
    if journal.undoes.is_none() {
        write_last(state, journal.previous.as_deref())?;
    }
    Ok(())
}

fn recover_roll_back(
    state: &StateDir,
    root: &Dir,
    (jdir, jpath): (Dir, &Path),
    journal: &Journal,
) -> Result<RecoverReport, TxnError> {
    let rb = roll_back(root, Some(&jdir), journal, journal.entries.len());
    // The journal folder is removed or moved below: no handle of ours may hold it (Windows).
    drop(jdir);
    if !rb.failures.is_empty() {
        let _ = audit::append(
            &state.audit_log(),
            &audit::line(journal, audit::ROLLBACK_FAILED),
        );
        return Err(rollback_failed(
            Restoring::Recovery {
                id: journal.id.clone(),
            },
            rb,
            jpath,
        ));
    }
    let mut warnings = vec![];
    if let Err(e) = after_roll_back(state, journal) {
        warnings.push(cleanup_warning(e));
    }
    if let Err(e) = audit::append(
        &state.audit_log(),
        &audit::line(journal, audit::RECOVERED_ROLLED_BACK),
    ) {
        warnings.push(cleanup_warning(e));
    }
    let fp = &mut Failpoints::new(None);
    let kept = if rb.conflicts.is_empty() {
        discard_journal(jpath, fp)?;
        None
    } else {
        let to = state.sub("recovered")?.join(&journal.id);
        cleanup::move_dir(jpath, &to, fp)?;
        Some(to)
    };
    Ok(RecoverReport {
        id: Some(journal.id.clone()),
        action: Some(RecoverAction::RolledBack),
        restored: rb.restored,
        conflicts: rb.conflicts,
        kept,
        blocked: rb.blocked,
        warnings,
    })
}

fn recover_complete(
    state: &StateDir,
    root: &Dir,
    jpath: &Path,
    journal: &Journal,
) -> Result<RecoverReport, TxnError> {
    let (mut conflicts, mut blocked) = (vec![], vec![]);
    for entry in &journal.entries {
        match journal::state_or_blocked(root, &entry.path)? {
            Ok((_, now)) if now == entry.after => {}
            Ok(_) => conflicts.push(entry.path.clone()),
            Err(b) => {
                conflicts.push(entry.path.clone());
                blocked.push(b);
            }
        }
    }
    // The index first: the journal that names it is gone after the clean-up.
    let installed = install_index_lock(journal).err().map(cleanup_warning);
    let mut warnings = finish(
        state,
        root,
        journal,
        jpath,
        &mut Failpoints::new(None),
        audit::RECOVERED_COMPLETED,
    );
    warnings.splice(0..0, installed);
    Ok(RecoverReport {
        id: Some(journal.id.clone()),
        action: Some(RecoverAction::Completed),
        restored: vec![],
        conflicts,
        kept: None,
        blocked,
        warnings,
    })
}

/// What a rollback did.
#[derive(Debug, Default)]
pub(crate) struct RolledBack {
    pub restored: Vec<String>,
    pub conflicts: Vec<String>,
    /// The conflicts that cannot be reached (a folder on their way was replaced).
    pub blocked: Vec<Blocked>,
    pub failures: Vec<Error>,
}

/// Puts every path of `journal` back to its old state where it holds the new one.
/// Only the first `touched` entries may have been renamed (a recovery, which cannot know,
/// passes them all); the others only lose their staged file, whatever their path holds now.
pub(crate) fn roll_back(
    root: &Dir,
    jdir: Option<&Dir>,
    journal: &Journal,
    touched: usize,
) -> RolledBack {
    let mut out = RolledBack::default();
    for (i, entry) in journal.entries.iter().enumerate().rev() {
        // Named after the transaction, so that a rollback interrupted mid-restore leaves
        // nothing the next one cannot find and remove.
        let tmp = format!(".apply-patch-{}-{i}.restore.tmp", journal.id);
        let result = if i < touched {
            roll_back_entry(root, jdir, entry, &tmp)
        } else {
            // Not renamed: whatever its path holds is not ours to change, and a staged file
            // behind a replaced folder is out of reach (nothing to remove through a link).
            remove_staged(root, entry, &tmp).map(|_| Outcome::Unchanged)
        };
        match result {
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Restored) => out.restored.push(entry.path.clone()),
            Ok(Outcome::Conflict) => out.conflicts.push(entry.path.clone()),
            Ok(Outcome::Blocked(b)) => {
                out.conflicts.push(entry.path.clone());
                out.blocked.push(b);
            }
            Err(e) => out.failures.push(e.into()),
        }
    }
    out.restored.reverse();
    out.conflicts.reverse();
    out.blocked.reverse();
    for dir in journal.created_dirs.iter().rev() {
        // A folder someone filled meanwhile stays; an empty one left behind holds no data.
        if let Ok(located) = journal::locate(root, dir) {
            if let Some(parent) = located.parent {
                let _ = parent.rmdir(&located.name);
            }
        }
    }
    out
}

enum Outcome {
    Unchanged,
    Restored,
    Conflict,
    /// The path cannot be reached: left as found, reported.
    Blocked(Blocked),
}

/// Removes the staged file and the restore temporary of `entry`, if there; the path's
/// folder, or why it cannot be reached.
fn remove_staged(
    root: &Dir,
    entry: &Entry,
    tmp: &str,
) -> Result<Result<journal::Located, Blocked>, TxnError> {
    let path = entry.path.as_str();
    let located = match journal::locate_or_blocked(root, path)? {
        Ok(located) => located,
        Err(blocked) => return Ok(Err(blocked)),
    };
    if let Some(dir) = &located.parent {
        for name in entry.stage.iter().map(String::as_str).chain([tmp]) {
            unlink_if_there(dir, name.as_bytes())
                .map_err(|e| TxnError::io_of(path, "cannot remove the staged content of", &e))?;
        }
    }
    Ok(Ok(located))
}

/// Removes `name` from `dir` when it is there. A name that is not there is not a failure,
/// whatever `unlink` says: on a read-only file system it says `EROFS` before it looks, and
/// a temporary that was never created is no reason to call a clean rollback failed.
fn unlink_if_there(dir: &Dir, name: &[u8]) -> std::io::Result<()> {
    match dir.unlink(name) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => match dir.stat(name) {
            Ok(None) => Ok(()),
            _ => Err(e),
        },
    }
}

fn roll_back_entry(
    root: &Dir,
    jdir: Option<&Dir>,
    entry: &Entry,
    tmp: &str,
) -> Result<Outcome, TxnError> {
    let path = entry.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot restore", &e);
    let located = match remove_staged(root, entry, tmp)? {
        Ok(located) => located,
        Err(blocked) => return Ok(Outcome::Blocked(blocked)),
    };
    let now = current_state(located.parent.as_deref(), &located.name).map_err(io)?;
    if now == entry.before {
        return Ok(Outcome::Unchanged);
    }
    if now != entry.after {
        return Ok(Outcome::Conflict);
    }
    restore_old(root, jdir, &located, entry, tmp)?;
    Ok(Outcome::Restored)
}

/// Puts `entry`'s old state back at a path that holds its new state.
fn restore_old(
    root: &Dir,
    jdir: Option<&Dir>,
    located: &journal::Located,
    entry: &Entry,
    tmp: &str,
) -> Result<(), TxnError> {
    let path = entry.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot restore", &e);
    match &entry.before {
        State::Missing => {
            let dir = located
                .parent
                .as_ref()
                .expect("the path holds the new content, so its folder exists");
            dir.unlink(&located.name).map_err(io)?;
            dir.sync().map_err(io)?;
        }
        State::File { sha256, .. } => {
            let (jdir, backup) = jdir.zip(entry.backup.as_ref()).ok_or_else(|| {
                TxnError::BackupMissing {
                    path: path.to_string(),
                }
            })?;
            let dir = journal::open_or_create_parent(root, located, path)?;
            restore_backup(jdir, backup, sha256, &dir, &located.name, tmp, path)?;
            dir.sync().map_err(io)?;
        }
        State::Symlink { target } => {
            let dir = journal::open_or_create_parent(root, located, path)?;
            dir.symlink(target, tmp.as_bytes()).map_err(io)?;
            dir.rename(tmp.as_bytes(), &dir, &located.name)
                .map_err(io)?;
            dir.sync().map_err(io)?;
        }
        State::Directory | State::Other => {
            return Err(TxnError::NotAFileToRestore {
                path: path.to_string(),
            })
        }
    }
    Ok(())
}

/// Puts the backup `backup` (checked against `sha256`) back as `name` in `dir`: a rename, or
/// a copy when the journal is on another file system (a git dir elsewhere).
fn restore_backup(
    jdir: &Dir,
    backup: &str,
    sha256: &str,
    dir: &Dir,
    name: &[u8],
    tmp: &str,
    path: &str,
) -> Result<(), TxnError> {
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot restore", &e);
    let (bytes, hash, st) = jdir.read_file_hashed(backup.as_bytes()).map_err(io)?;
    if journal::hex(&hash) != sha256 {
        return Err(TxnError::BackupWrong {
            path: path.to_string(),
        });
    }
    match jdir.rename(backup.as_bytes(), dir, name) {
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let mut file = dir.create_file(tmp.as_bytes(), 0o600).map_err(io)?;
            file.write_all(&bytes).map_err(io)?;
            dirfd::fchmod(&file, st.mode).map_err(io)?;
            file.sync_all().map_err(io)?;
            dir.rename(tmp.as_bytes(), dir, name).map_err(io)
        }
        other => other.map_err(io),
    }
}

/// In-process rollback after a failure before the commit point; returns the error to report.
pub(crate) fn roll_back_failed_commit(
    state: &StateDir,
    root: &Dir,
    journal: &mut Journal,
    (jdir, jpath): (Dir, &Path),
    (err, renamed): (TxnError, usize),
) -> TxnError {
    let was_committed = journal.phase == Phase::Committed;
    if was_committed {
        // The mark may be on disk although its folder sync failed (or the index could not
        // be installed after it): say "prepared" again so that a crash during this rollback
        // is rolled back, not completed.
        journal.phase = Phase::Prepared;
        if let Ok(secret) = place::secret(state) {
            let _ = journal.write(&jdir, jpath, &secret);
        }
    }
    // A crash during this rollback must roll back again, not finish the renames.
    if unlink_marker(&jdir) {
        let _ = jdir.sync();
    }
    let rb = roll_back(root, Some(&jdir), journal, renamed);
    // The journal folder may be removed below: no handle of ours may hold it (Windows).
    drop(jdir);
    if rb.failures.is_empty() && rb.conflicts.is_empty() {
        // `last` as it was; the index lock is its holder's to drop (a crash leaves it to
        // the recovery, which finds it in the journal).
        if journal.undoes.is_none() {
            let _ = write_last(state, journal.previous.as_deref());
        }
        let _ = audit::append(
            &state.audit_log(),
            &audit::line(journal, audit::ROLLED_BACK),
        );
        // Left behind, the journal would only be rolled back again (every path is old).
        let _ = discard_journal(jpath, &mut Failpoints::new(None));
        return if was_committed {
            super::TxnError::RolledBack {
                cause: Box::new(err),
            }
        } else {
            err
        };
    }
    let _ = audit::append(
        &state.audit_log(),
        &audit::line(journal, audit::ROLLBACK_FAILED),
    );
    rollback_failed(
        Restoring::FailedCommit {
            cause: Box::new(err),
        },
        rb,
        jpath,
    )
}

/// Removes the [`forward::RENAMING`] marker; true when it was there.
fn unlink_marker(jdir: &Dir) -> bool {
    jdir.unlink(forward::RENAMING.as_bytes()).is_ok()
}

fn rollback_failed(during: Restoring, rb: RolledBack, jpath: &Path) -> TxnError {
    TxnError::RestoreFailed {
        during,
        journal: jpath.into(),
        failures: rb.failures,
        conflicts: rb.conflicts,
        blocked: rb.blocked,
    }
}
