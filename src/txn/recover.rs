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
//! the crash → left as found and reported (its backup is kept under `recovered/<id>/`).
//! Must not plan or write anything but the journal's own old states.

use std::path::{Path, PathBuf};

use std::io::Write;

use super::dirfd::{self, Dir};
use super::failpoint::Failpoints;
use super::forward;
use super::journal::{self, current_state, Entry, Journal, Phase, State};
use super::lock::{self, Lock};
use super::{audit, Restoring, TxnError, TxnWarning, TxnWarningCode};
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
        out.extend(
            self.conflicts
                .iter()
                .filter(|p| !later_edit(p))
                .map(|p| TxnWarning {
                    code: TxnWarningCode::Recovered,
                    message: format!(
                        "{p} was changed after the interruption and was left as found{kept}"
                    ),
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
    recover_locked(state)
}

/// Recovery with the lock held (the first thing every transaction does).
pub(crate) fn recover_locked(state: &StateDir) -> Result<RecoverReport, Error> {
    let jpath = state.journal_dir();
    let shown = jpath.display().to_string();
    match std::fs::symlink_metadata(&jpath) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RecoverReport::default()),
        Err(e) => return Err(Error::io(&shown, "cannot look at the journal folder", &e)),
        Ok(m) if !m.is_dir() => {
            return Err(TxnError::JournalNotAFolder { journal: shown }.into())
        }
        Ok(_) => {}
    }
    let Some(journal) = Journal::read(&jpath)? else {
        // The journal is written before anything else: a folder without one is a start that
        // was interrupted before anything was touched — when it holds nothing else.
        if !holds_at_most(&jpath, &["journal.json.tmp"])? {
            return Err(journal::untrusted(&jpath, "it holds files but no journal"));
        }
        remove_dir(&jpath)?;
        return Ok(RecoverReport::default());
    };
    // Acted on only against the root of this state place, never the root the journal names.
    let root = open_root(state)?;
    journal.check_trusted(&state.secret()?, &root, &jpath)?;
    check_index_lock(state, &journal, &jpath)?;
    let jdir =
        Dir::open(&jpath).map_err(|e| Error::io(&shown, "cannot open the journal folder", &e))?;
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
) -> Result<RecoverReport, Error> {
    forward::finish_renames(root, &journal)?;
    journal.phase = Phase::Committed;
    journal.write(&jdir, jpath, &state.secret()?)?;
    // The clean-up moves the journal folder: no handle of ours may hold it (Windows).
    drop(jdir);
    let mut report = recover_complete(state, root, jpath, &journal)?;
    let later = edited.iter().map(|p| super::stage::later_edit(p));
    report.warnings.splice(0..0, later);
    Ok(report)
}

/// The state place's root, opened.
pub(crate) fn open_root(state: &StateDir) -> Result<Dir, Error> {
    Dir::open(state.root()).map_err(|e| {
        Error::io(
            &state.root().display().to_string(),
            "cannot open the root",
            &e,
        )
    })
}

/// Does the folder `dir` hold no names but `allowed`?
fn holds_at_most(dir: &Path, allowed: &[&str]) -> Result<bool, Error> {
    let shown = dir.display().to_string();
    let read = std::fs::read_dir(dir).map_err(|e| Error::io(&shown, "cannot list", &e))?;
    for item in read {
        let item = item.map_err(|e| Error::io(&shown, "cannot list", &e))?;
        if !allowed.iter().any(|a| item.file_name() == **a) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The companion's lock file a journal names must be a lock file of this state place's git
/// dir (the journal's MAC already says it is ours; this keeps a rename of it inside).
fn check_index_lock(state: &StateDir, journal: &Journal, jpath: &Path) -> Result<(), Error> {
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
fn drop_index_lock(journal: &Journal) -> Result<(), Error> {
    let Some(index) = &journal.index else {
        return Ok(());
    };
    if identity_of(&index.lock) != Some((index.dev, index.ino)) {
        return Ok(());
    }
    match std::fs::remove_file(&index.lock) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(
            &index.lock.display().to_string(),
            "cannot remove the git index lock",
            &e,
        )),
        _ => Ok(()),
    }
}

/// A committed transaction's index: its lock file, still ours and whole, is renamed over
/// the index (the crash came between the commit mark and that rename).
fn install_index_lock(journal: &Journal) -> Result<(), Error> {
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
        }
        .into());
    }
    let bytes = std::fs::read(&index.lock).map_err(|e| Error::io(&shown, "cannot read", &e))?;
    if journal::hex(&super::sha256(&bytes)) != index.sha256 {
        return Err(TxnError::IndexLockChanged {
            id: journal.id.clone(),
            lock: shown,
        }
        .into());
    }
    std::fs::rename(&index.lock, &target)
        .map_err(|e| Error::io(&shown, "cannot install the git index from", &e))
}

/// The transaction the state place's `last` file names; `None` when there is none (or it
/// names none).
pub(crate) fn read_last(state: &StateDir) -> Result<Option<String>, Error> {
    let path = state.last_path();
    match crate::state::read_small(&path) {
        Ok(bytes) => Ok(std::str::from_utf8(&bytes)
            .ok()
            .map(|text| text.trim().to_string())
            .filter(|id| journal::is_id(id))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path.display().to_string(), "cannot read", &e)),
    }
}

/// Makes `last` name `id` (or removes it), atomically.
pub(crate) fn write_last(state: &StateDir, id: Option<&str>) -> Result<(), Error> {
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
pub(crate) fn write_last_with(
    state: &StateDir,
    id: Option<&str>,
    durability: super::Durability,
) -> Result<(), Error> {
    let path = state.last_path();
    let shown = path.display().to_string();
    let io = |e: std::io::Error| Error::io(&shown, "cannot write", &e);
    match id {
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        },
        Some(id) if !durability.syncs() && id.len() < LAST_WIDTH => {
            let record = format!("{id:<width$}\n", width = LAST_WIDTH - 1);
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(io)?;
            file.write_all(record.as_bytes()).map_err(io)?;
            // Longer than a record only when something else wrote it.
            if file.metadata().map_err(io)?.len() > LAST_WIDTH as u64 {
                file.set_len(LAST_WIDTH as u64).map_err(io)?;
            }
            Ok(())
        }
        Some(id) => {
            let tmp = path.with_extension("tmp");
            std::fs::write(&tmp, format!("{id}\n")).map_err(io)?;
            std::fs::rename(&tmp, &path).map_err(io)
        }
    }
}

/// After a rollback: the work tree is old, so is the index, and `last` names what it named
/// before (an undo never changed it).
fn after_roll_back(state: &StateDir, journal: &Journal) -> Result<(), Error> {
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
) -> Result<RecoverReport, Error> {
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
    let kept = if rb.conflicts.is_empty() {
        remove_dir(jpath)?;
        None
    } else {
        let to = state.sub("recovered")?.join(&journal.id);
        move_dir(jpath, &to)?;
        Some(to)
    };
    Ok(RecoverReport {
        id: Some(journal.id.clone()),
        action: Some(RecoverAction::RolledBack),
        restored: rb.restored,
        conflicts: rb.conflicts,
        kept,
        warnings,
    })
}

fn recover_complete(
    state: &StateDir,
    root: &Dir,
    jpath: &Path,
    journal: &Journal,
) -> Result<RecoverReport, Error> {
    let mut conflicts = vec![];
    for entry in &journal.entries {
        let (_, now) = journal::state_of(root, &entry.path)?;
        if now != entry.after {
            conflicts.push(entry.path.clone());
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
        warnings,
    })
}

/// What a rollback did.
#[derive(Debug, Default)]
pub(crate) struct RolledBack {
    pub restored: Vec<String>,
    pub conflicts: Vec<String>,
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
            remove_staged(root, entry, &tmp).map(|_| Outcome::Unchanged)
        };
        match result {
            Ok(Outcome::Unchanged) => {}
            Ok(Outcome::Restored) => out.restored.push(entry.path.clone()),
            Ok(Outcome::Conflict) => out.conflicts.push(entry.path.clone()),
            Err(e) => out.failures.push(e),
        }
    }
    out.restored.reverse();
    out.conflicts.reverse();
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
}

/// Removes the staged file and the restore temporary of `entry`, if there.
fn remove_staged(root: &Dir, entry: &Entry, tmp: &str) -> Result<journal::Located, Error> {
    let path = entry.path.as_str();
    let located = journal::locate(root, path)?;
    if let Some(dir) = &located.parent {
        for name in entry.stage.iter().map(String::as_str).chain([tmp]) {
            unlink_if_there(dir, name.as_bytes())
                .map_err(|e| Error::io(path, "cannot remove the staged content of", &e))?;
        }
    }
    Ok(located)
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
) -> Result<Outcome, Error> {
    let path = entry.path.as_str();
    let io = |e: std::io::Error| Error::io(path, "cannot restore", &e);
    let located = remove_staged(root, entry, tmp)?;
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
) -> Result<(), Error> {
    let path = entry.path.as_str();
    let io = |e: std::io::Error| Error::io(path, "cannot restore", &e);
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
                Error::from(TxnError::BackupMissing {
                    path: path.to_string(),
                })
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
            }
            .into())
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
) -> Result<(), Error> {
    let io = |e: std::io::Error| Error::io(path, "cannot restore", &e);
    let (bytes, hash, st) = jdir.read_file_hashed(backup.as_bytes()).map_err(io)?;
    if journal::hex(&hash) != sha256 {
        return Err(TxnError::BackupWrong {
            path: path.to_string(),
        }
        .into());
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
    (err, renamed): (Error, usize),
) -> Error {
    let was_committed = journal.phase == Phase::Committed;
    if was_committed {
        // The mark may be on disk although its folder sync failed (or the index could not
        // be installed after it): say "prepared" again so that a crash during this rollback
        // is rolled back, not completed.
        journal.phase = Phase::Prepared;
        if let Ok(secret) = state.secret() {
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
        let _ = remove_dir(jpath);
        return if was_committed {
            super::TxnError::RolledBack {
                cause: Box::new(err),
            }
            .into()
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

fn rollback_failed(during: Restoring, rb: RolledBack, jpath: &Path) -> Error {
    TxnError::RestoreFailed {
        during,
        journal: jpath.to_path_buf(),
        failures: rb.failures,
        conflicts: rb.conflicts,
    }
    .into()
}

pub(crate) fn cleanup_warning(e: Error) -> TxnWarning {
    TxnWarning {
        code: TxnWarningCode::Cleanup,
        message: e.message,
        path: e.path,
    }
}

/// Step 8 of a commit (and the end of recovering a committed one): remove folders emptied by
/// deletes, append the audit line, keep the journal folder as the undo record. Failures here
/// are warnings: the change is already wholly in place.
pub(crate) fn finish(
    state: &StateDir,
    root: &Dir,
    journal: &Journal,
    jpath: &Path,
    fp: &mut Failpoints,
    outcome: &str,
) -> Vec<TxnWarning> {
    finish_with(state, root, (journal, jpath), fp, outcome, false)
}

/// [`finish`]; `room`: the undo history was pruned to make room for this record before the
/// commit (it is not listed again).
pub(crate) fn finish_with(
    state: &StateDir,
    root: &Dir,
    (journal, jpath): (&Journal, &Path),
    fp: &mut Failpoints,
    outcome: &str,
    room: bool,
) -> Vec<TxnWarning> {
    let jshown = jpath.display().to_string();
    let step =
        |fp: &mut Failpoints, what: &str| fp.step(what).map_err(|e| Error::io(&jshown, what, &e));
    let mut warnings = vec![];
    if let Err(e) = step(fp, "prune folders").and_then(|_| prune_dirs(root, journal)) {
        warnings.push(cleanup_warning(e));
    }
    let line = audit::line(journal, outcome);
    if let Err(e) = step(fp, "audit").and_then(|_| audit::append(&state.audit_log(), &line)) {
        warnings.push(cleanup_warning(e));
    }
    if let Err(e) = step(fp, "undo record").and_then(|_| record_undo(state, journal, jpath, room))
    {
        warnings.push(cleanup_warning(e));
        if let Err(e) = remove_dir(jpath) {
            warnings.push(cleanup_warning(e));
        }
    }
    warnings
}

/// Removes the folders above deleted paths that are empty now (never the root). Each folder
/// is tried once, the deepest first (so a folder is tried after every folder below it that
/// may go), through folder handles opened once; a folder that stays keeps those above it.
fn prune_dirs(root: &Dir, journal: &Journal) -> Result<(), Error> {
    use super::handles::{folder_of, Handles};
    use std::collections::BTreeSet;
    let mut candidates = BTreeSet::new();
    for entry in journal.entries.iter().filter(|e| e.after == State::Missing) {
        let mut dir = folder_of(&entry.path);
        while !dir.is_empty() && candidates.insert((dir.split('/').count(), dir)) {
            dir = folder_of(dir);
        }
    }
    if candidates.is_empty() {
        return Ok(());
    }
    let mut handles = Handles::new(root)?;
    let mut kept: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for &(_, dir) in candidates.iter().rev() {
        if kept.contains(dir) {
            continue;
        }
        let Some(parent) = handles.parent(root, dir)? else {
            continue;
        };
        let name = dir.rsplit('/').next().unwrap_or(dir);
        handles.close(dir);
        match parent.rmdir(name.as_bytes()) {
            Ok(()) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::DirectoryNotEmpty
                        | std::io::ErrorKind::AlreadyExists
                        | std::io::ErrorKind::NotFound
                ) =>
            {
                let mut above = folder_of(dir);
                while !above.is_empty() && kept.insert(above) {
                    above = folder_of(above);
                }
            }
            Err(e) => return Err(Error::io(dir, "cannot remove the emptied folder", &e)),
        }
    }
    Ok(())
}

/// Moves the journal folder into the undo history (or, for an undo, drops the record it
/// reverted) and prunes the history to [`UNDO_HISTORY`] entries (unless it had `room`).
fn record_undo(state: &StateDir, journal: &Journal, jpath: &Path, room: bool) -> Result<(), Error> {
    let undo = state.undo_dir();
    if let Some(undone) = &journal.undoes {
        remove_dir(&undo.join(undone))?;
        remove_dir(jpath)?;
        // The transaction before the undone one is the last one now.
        return write_last(state, journal.previous.as_deref());
    }
    // The history folder exists from the first commit on: created only when the move says
    // it is missing.
    let record = undo.join(&journal.id);
    if let Err(e) = move_dir(jpath, &record) {
        if undo.is_dir() {
            return Err(e);
        }
        crate::state::create_dir_all(&undo)?;
        move_dir(jpath, &record)?;
    }
    if room {
        return Ok(());
    }
    prune_undo(state, UNDO_HISTORY)
}

/// What [`make_room`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Room {
    /// The history has room; the oldest record, if one had to go, is gone.
    Made,
    /// As `Made`, and the dropped record, emptied, is the journal folder now.
    Recycled,
    /// The record to drop is large (more than [`INLINE_PRUNE`] files, or more than one
    /// record to drop): left to [`prune_undo`], which the caller runs beside the staging —
    /// each unlink of a backup can cost a millisecond on a busy disk.
    Large,
}

/// The most files of an undo record removed inline, before the staging.
pub(crate) const INLINE_PRUNE: usize = 16;

/// Makes room in the undo history for one more record (the newest [`UNDO_HISTORY`] - 1 are
/// kept) when that is quick: one small record to drop. With `journal` (the journal folder, in
/// the same place as the history), that record is emptied and renamed to it rather than
/// removed, so that no folder is removed and none created. The record's journal goes first:
/// a crash part way leaves a record undo refuses, or an empty journal folder, which a
/// recovery removes (an interrupted start).
pub(crate) fn make_room(state: &StateDir, journal: Option<&Path>) -> Result<Room, Error> {
    let undo = state.undo_dir();
    let mut records = list_dirs(&undo)?;
    records.sort();
    let excess = records.len().saturating_sub(UNDO_HISTORY - 1);
    let Some((recycled, older)) = records[..excess].split_last() else {
        return Ok(Room::Made);
    };
    let record = undo.join(recycled);
    let items: Vec<_> = match std::fs::read_dir(&record) {
        Ok(read) => read.collect(),
        Err(_) => Vec::new(),
    };
    if !older.is_empty() || items.len() > INLINE_PRUNE {
        return Ok(Room::Large);
    }
    if let Some(journal) = journal {
        if empty_record(&record, items).is_ok() && std::fs::rename(&record, journal).is_ok() {
            return Ok(Room::Recycled);
        }
    }
    remove_dir(&record)?;
    Ok(Room::Made)
}

/// Removes the files of an undo record (its journal first), leaving the folder; `items` is
/// the record's listing, read once by the caller.
fn empty_record(
    record: &Path,
    items: Vec<std::io::Result<std::fs::DirEntry>>,
) -> std::io::Result<()> {
    match std::fs::remove_file(record.join(journal::FILE)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    for item in items {
        let item = item?;
        if item.file_name() == journal::FILE {
            continue;
        }
        if item.file_type()?.is_dir() {
            return Err(std::io::ErrorKind::IsADirectory.into());
        }
        std::fs::remove_file(item.path())?;
    }
    Ok(())
}

/// Removes the oldest undo records beyond the newest `keep`.
pub(crate) fn prune_undo(state: &StateDir, keep: usize) -> Result<(), Error> {
    let undo = state.undo_dir();
    let mut records = list_dirs(&undo)?;
    records.sort();
    let excess = records.len().saturating_sub(keep);
    for old in &records[..excess] {
        remove_dir(&undo.join(old))?;
    }
    Ok(())
}

/// The folder names in `dir`.
pub(crate) fn list_dirs(dir: &Path) -> Result<Vec<String>, Error> {
    let shown = dir.display().to_string();
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(&shown, "cannot list", &e)),
    };
    let mut out = vec![];
    for item in read {
        let item = item.map_err(|e| Error::io(&shown, "cannot list", &e))?;
        if item.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            out.push(item.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

/// Renames a flat folder (journal + backups); copies it when it must cross file systems.
fn move_dir(from: &Path, to: &Path) -> Result<(), Error> {
    let shown = to.display().to_string();
    let io = |e: std::io::Error| Error::io(&shown, "cannot move the journal folder to", &e);
    match std::fs::rename(from, to) {
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            std::fs::create_dir(to).map_err(io)?;
            for item in std::fs::read_dir(from).map_err(io)? {
                let item = item.map_err(io)?;
                std::fs::copy(item.path(), to.join(item.file_name())).map_err(io)?;
            }
            remove_dir(from)
        }
        other => other.map_err(io),
    }
}

/// Removes one of our own folders with everything in it; a missing one is fine.
pub(crate) fn remove_dir(dir: &Path) -> Result<(), Error> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io(&dir.display().to_string(), "cannot remove", &e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::Durability;

    /// `count` undo records of `files` files each, oldest first.
    fn records(undo: &Path, count: usize, files: usize) -> Vec<String> {
        let ids: Vec<String> = (0..count)
            .map(|i| format!("17961497411816861{i:02}-7"))
            .collect();
        for id in &ids {
            std::fs::create_dir_all(undo.join(id)).expect("record");
            std::fs::write(undo.join(id).join(journal::FILE), id).expect("journal");
            for b in 1..files {
                std::fs::write(undo.join(id).join(format!("b{b}")), id).expect("backup");
            }
        }
        ids
    }

    #[test]
    fn making_room_turns_the_oldest_record_into_an_empty_journal_folder() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        let undo = state.undo_dir();
        let ids = records(&undo, UNDO_HISTORY, 4);
        let journal = tmp.path().join("journal");
        assert_eq!(make_room(&state, Some(&journal)).expect("room made"), Room::Recycled);
        assert_eq!(std::fs::read_dir(&journal).expect("made").count(), 0);
        let mut left = list_dirs(&undo).expect("list");
        left.sort();
        assert_eq!(left, ids[1..], "the oldest went, the newest 19 stay");
        // With room already, nothing goes and no journal folder is made.
        std::fs::remove_dir(&journal).expect("rm");
        assert_eq!(make_room(&state, Some(&journal)).expect("nothing to drop"), Room::Made);
        assert!(!journal.exists());
        // Without a journal folder to make (or one that cannot be), the record is removed.
        std::fs::create_dir_all(undo.join("1796149741181686000-7/sub")).expect("odd record");
        assert_eq!(make_room(&state, Some(&journal)).expect("removed instead"), Room::Made);
        assert!(!journal.exists());
        assert!(!undo.join("1796149741181686000-7").exists());
        std::fs::create_dir_all(undo.join("1796149741181686000-7")).expect("record");
        assert_eq!(make_room(&state, None).expect("removed"), Room::Made);
        assert_eq!(list_dirs(&undo).expect("list").len(), UNDO_HISTORY - 1);
    }

    #[test]
    fn a_large_record_or_several_are_left_to_the_pruning_beside_the_staging() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        let undo = state.undo_dir();
        let journal = tmp.path().join("journal");
        records(&undo, UNDO_HISTORY, INLINE_PRUNE + 1);
        assert_eq!(make_room(&state, Some(&journal)).expect("large"), Room::Large);
        assert_eq!(list_dirs(&undo).expect("list").len(), UNDO_HISTORY, "nothing removed");
        assert!(!journal.exists());
        prune_undo(&state, UNDO_HISTORY - 1).expect("pruned");
        assert_eq!(list_dirs(&undo).expect("list").len(), UNDO_HISTORY - 1);
        // Two records to drop, however small: also left to the pruning.
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        records(&state.undo_dir(), UNDO_HISTORY + 1, 1);
        assert_eq!(make_room(&state, Some(&journal)).expect("several"), Room::Large);
    }

    #[test]
    fn last_written_in_place_reads_back_over_any_earlier_record() {
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
