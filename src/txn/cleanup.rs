//! Stage: after the commit point (and the end of a recovery, a rollback or an undo): the
//! clean-up. Removes folders emptied by deletes, appends the audit line, moves the journal
//! folder into the undo history (or, after an undo, drops the record it reverted), keeps the
//! history to [`UNDO_HISTORY`] records, and removes journal folders that are done with.
//!
//! Crash-safe at every step (issue 23, item 6): a process killed in the middle of removing a
//! folder must not leave something no later run can tell from a crashed transaction.
//! - A journal folder is removed by [`discard_journal`]: its journal is first renamed to
//!   [`journal::DONE`] (atomic: from then on the folder is a finished transaction's
//!   leftovers, and its MAC proves they are this root's own), then every other file goes, the
//!   journal last, then the folder. A recovery that finds [`journal::DONE`] and no journal
//!   finishes that removal by itself. Before the rename, the journal still says what the
//!   transaction was, and a recovery completes its clean-up again (each step may be redone).
//! - An undo record is renamed out of the history first ([`GONE`] prefix, atomic), then
//!   removed: a crash leaves a folder no listing takes for a record, swept later.
//!
//! Every step is a failpoint (`commit:<k>:…`, counted on after the commit's own steps).
//! Failures here are warnings: the change is already wholly in place. Must not touch the work
//! tree except to remove folders the transaction emptied.

use std::path::Path;

use super::dirfd::Dir;
use super::failpoint::Failpoints;
use super::journal::{self, Journal, State};
use super::place::write_last;
use super::recover::UNDO_HISTORY;
use super::{audit, TxnWarning, TxnWarningCode};
use crate::state::StateDir;
use super::TxnError;
use crate::Error;

/// The prefix of an undo record on its way out of the history (see the module docs).
pub(crate) const GONE: &str = ".gone-";

/// A failed clean-up step as a warning.
pub(crate) fn cleanup_warning(e: impl Into<Error>) -> TxnWarning {
    let e = e.into();
    TxnWarning {
        code: TxnWarningCode::Cleanup,
        message: e.message,
        path: e.path,
    }
}

/// Counts the clean-up step `what` (a failpoint), naming `place` in the error it may give.
fn step(fp: &mut Failpoints, place: &Path, what: &str) -> Result<(), TxnError> {
    fp.step(what)
        .map_err(|e| TxnError::io_of(&place.display().to_string(), what, &e))
}

/// Step 8 of a commit (and the end of recovering a committed one): remove folders emptied by
/// deletes, append the audit line, keep the journal folder as the undo record (see the
/// module docs).
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
    let mut warnings = vec![];
    if let Err(e) = step(fp, jpath, "prune folders").and_then(|_| prune_dirs(root, journal)) {
        warnings.push(cleanup_warning(e));
    }
    let line = audit::line(journal, outcome);
    let log = state.audit_log();
    if let Err(e) = step(fp, jpath, "audit").and_then(|_| audit::append(&log, &line)) {
        warnings.push(cleanup_warning(e));
    }
    let recorded =
        step(fp, jpath, "undo record").and_then(|_| record_undo(state, journal, jpath, room, fp));
    if let Err(e) = recorded {
        warnings.push(cleanup_warning(e));
        // An undo's journal stays: the next run's recovery finishes dropping the record it
        // reverted and naming the last transaction. An apply's record is given up (undo then
        // refuses, naming it: README "Undo").
        if journal.undoes.is_none() {
            if let Err(e) = discard_journal(jpath, fp) {
                warnings.push(cleanup_warning(e));
            }
        }
    }
    warnings
}

/// Removes the folders above deleted paths that are empty now (never the root). Each folder
/// is tried once, the deepest first (so a folder is tried after every folder below it that
/// may go), through folder handles opened once; a folder that stays keeps those above it.
fn prune_dirs(root: &Dir, journal: &Journal) -> Result<(), TxnError> {
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
            Err(e) => return Err(TxnError::io_of(dir, "cannot remove the emptied folder", &e)),
        }
    }
    Ok(())
}

/// Moves the journal folder into the undo history and prunes the history to
/// [`UNDO_HISTORY`] records (unless it had `room`); for an undo, drops the record it
/// reverted, names the transaction before that one in `last`, and then only removes the
/// journal folder (in that order: until the journal goes, a recovery can redo each step).
fn record_undo(
    state: &StateDir,
    journal: &Journal,
    jpath: &Path,
    room: bool,
    fp: &mut Failpoints,
) -> Result<(), TxnError> {
    let undo = state.undo_dir();
    if let Some(undone) = &journal.undoes {
        drop_record(&undo, undone, fp)?;
        // The transaction before the undone one is the last one now.
        step(fp, jpath, "last")?;
        write_last(state, journal.previous.as_deref())?;
        return discard_journal(jpath, fp);
    }
    // The history folder exists from the first commit on: created only when the move says
    // it is missing.
    let record = undo.join(&journal.id);
    if let Err(e) = move_dir(jpath, &record, fp) {
        if undo.is_dir() {
            return Err(e);
        }
        crate::state::create_dir_all(&undo)?;
        move_dir(jpath, &record, fp)?;
    }
    if room {
        return Ok(());
    }
    prune_undo(state, UNDO_HISTORY)
}

/// Removes the undo record `id` (a missing one is fine): renamed out of the history first
/// ([`GONE`]), then removed.
fn drop_record(undo: &Path, id: &str, fp: &mut Failpoints) -> Result<(), TxnError> {
    let record = undo.join(id);
    let gone = undo.join(format!("{GONE}{id}"));
    step(fp, &record, "drop record")?;
    match std::fs::rename(&record, &gone) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(TxnError::io_of(&record.display().to_string(), "cannot remove", &e)),
    }
    step(fp, &gone, "remove record")?;
    remove_dir(&gone)
}

/// Removes the journal folder `jpath` of a transaction that is over (see the module docs for
/// the order); a missing folder is fine.
pub(crate) fn discard_journal(jpath: &Path, fp: &mut Failpoints) -> Result<(), TxnError> {
    let shown = jpath.display().to_string();
    let io = |e: std::io::Error| TxnError::io_of(&shown, "cannot remove the journal folder", &e);
    step(fp, jpath, "journal done")?;
    match std::fs::rename(jpath.join(journal::FILE), jpath.join(journal::DONE)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !jpath.exists() {
                return Ok(());
            }
        }
        other => other.map_err(io)?,
    }
    let mut names: Vec<_> = std::fs::read_dir(jpath)
        .map_err(io)?
        .map(|item| item.map(|i| i.file_name()))
        .collect::<Result<_, _>>()
        .map_err(io)?;
    // The finished journal last: it is what proves the rest to be leftovers.
    names.sort_by_key(|n| *n == *journal::DONE);
    for name in names {
        let path = jpath.join(&name);
        step(fp, &path, &format!("discard {}", name.to_string_lossy()))?;
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            _ => {}
        }
    }
    step(fp, jpath, "remove journal folder")?;
    match std::fs::remove_dir(jpath) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
        _ => Ok(()),
    }
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
/// the same place as the history), that record is renamed out of the history ([`GONE`]),
/// emptied and renamed to the journal folder rather than removed, so that no folder is
/// removed and none created; a crash part way leaves a folder the next pruning sweeps.
pub(crate) fn make_room(state: &StateDir, journal: Option<&Path>) -> Result<Room, TxnError> {
    let undo = state.checked_undo_dir()?;
    let mut records = list_records(&undo)?;
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
        let gone = undo.join(format!("{GONE}{recycled}"));
        if std::fs::rename(&record, &gone).is_ok() {
            if empty_record(&gone).is_ok() && std::fs::rename(&gone, journal).is_ok() {
                return Ok(Room::Recycled);
            }
            remove_dir(&gone)?;
            return Ok(Room::Made);
        }
    }
    drop_record(&undo, recycled, &mut Failpoints::new(None))?;
    Ok(Room::Made)
}

/// Removes the files of a record renamed out of the history, leaving the folder.
fn empty_record(record: &Path) -> std::io::Result<()> {
    for item in std::fs::read_dir(record)? {
        let item = item?;
        if item.file_type()?.is_dir() {
            return Err(std::io::ErrorKind::IsADirectory.into());
        }
        std::fs::remove_file(item.path())?;
    }
    Ok(())
}

/// Removes the oldest undo records beyond the newest `keep`, and what a crash left of records
/// on their way out ([`GONE`]).
pub(crate) fn prune_undo(state: &StateDir, keep: usize) -> Result<(), TxnError> {
    let undo = state.checked_undo_dir()?;
    let (mut records, gone): (Vec<String>, Vec<String>) = list_dirs(&undo)?
        .into_iter()
        .filter(|n| journal::is_id(n) || n.starts_with(GONE))
        .partition(|n| journal::is_id(n));
    for gone in gone {
        remove_dir(&undo.join(gone))?;
    }
    records.sort();
    let excess = records.len().saturating_sub(keep);
    for old in &records[..excess] {
        drop_record(&undo, old, &mut Failpoints::new(None))?;
    }
    Ok(())
}

/// The undo records in the history folder `undo`: its folders named as transactions are.
pub(crate) fn list_records(undo: &Path) -> Result<Vec<String>, TxnError> {
    let mut names = list_dirs(undo)?;
    names.retain(|n| journal::is_id(n));
    Ok(names)
}

/// The folder names in `dir` (not following symlinks: a link is no folder of ours).
fn list_dirs(dir: &Path) -> Result<Vec<String>, TxnError> {
    let shown = dir.display().to_string();
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(TxnError::io_of(&shown, "cannot list", &e)),
    };
    let mut out = vec![];
    for item in read {
        let item = item.map_err(|e| TxnError::io_of(&shown, "cannot list", &e))?;
        if item.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            out.push(item.file_name().to_string_lossy().into_owned());
        }
    }
    Ok(out)
}

/// Renames a flat folder (journal + backups) to `to`; across file systems it is copied (over
/// what an interrupted copy left there) and the original removed as [`discard_journal`]
/// removes one, so that a crash part way leaves the journal where a recovery finds it.
pub(crate) fn move_dir(from: &Path, to: &Path, fp: &mut Failpoints) -> Result<(), TxnError> {
    let shown = to.display().to_string();
    let io = |e: std::io::Error| TxnError::io_of(&shown, "cannot move the journal folder to", &e);
    match std::fs::rename(from, to) {
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            remove_dir(to)?;
            crate::state::create_dir_all(to)?;
            for item in std::fs::read_dir(from).map_err(io)? {
                let item = item.map_err(io)?;
                std::fs::copy(item.path(), to.join(item.file_name())).map_err(io)?;
            }
            discard_journal(from, fp)
        }
        other => other.map_err(io),
    }
}

/// Removes one of our own folders with everything in it (a symlink is removed, never
/// followed); a missing one is fine.
pub(crate) fn remove_dir(dir: &Path) -> Result<(), TxnError> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(TxnError::io_of(&dir.display().to_string(), "cannot remove", &e))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut left = list_records(&undo).expect("list");
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
        assert_eq!(list_records(&undo).expect("list").len(), UNDO_HISTORY - 1);
    }

    #[test]
    fn a_large_record_or_several_are_left_to_the_pruning_beside_the_staging() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        let undo = state.undo_dir();
        let journal = tmp.path().join("journal");
        records(&undo, UNDO_HISTORY, INLINE_PRUNE + 1);
        assert_eq!(make_room(&state, Some(&journal)).expect("large"), Room::Large);
        assert_eq!(list_records(&undo).expect("list").len(), UNDO_HISTORY, "nothing removed");
        assert!(!journal.exists());
        prune_undo(&state, UNDO_HISTORY - 1).expect("pruned");
        assert_eq!(list_records(&undo).expect("list").len(), UNDO_HISTORY - 1);
        // Two records to drop, however small: also left to the pruning.
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        records(&state.undo_dir(), UNDO_HISTORY + 1, 1);
        assert_eq!(make_room(&state, Some(&journal)).expect("several"), Room::Large);
    }

    #[test]
    fn a_journal_folder_stopped_at_any_step_of_its_removal_says_what_it_holds() {
        use super::super::failpoint::{Action, Failpoint};
        let tmp = tempfile::tempdir().expect("temp dir");
        let jpath = tmp.path().join("journal");
        let mut k = 1;
        loop {
            std::fs::create_dir_all(&jpath).expect("journal folder");
            for name in [journal::FILE, "b0", "b1", "renaming", "journal.json.tmp"] {
                std::fs::write(jpath.join(name), name).expect("file");
            }
            let point = Failpoint {
                step: k,
                action: Action::Fail,
            };
            if discard_journal(&jpath, &mut Failpoints::new(Some(point))).is_ok() {
                assert!(!jpath.exists(), "removed whole");
                break;
            }
            let mut left: Vec<String> = std::fs::read_dir(&jpath)
                .expect("still there")
                .map(|i| i.expect("item").file_name().to_string_lossy().into_owned())
                .collect();
            left.sort();
            // The journal (nothing removed yet), or the finished journal with what is left
            // of the rest, or nothing at all: never backups without either.
            let whole = left.iter().any(|n| n == journal::FILE) && left.len() == 5;
            let done = left.iter().any(|n| n == journal::DONE);
            assert!(whole || done || left.is_empty(), "step {k}: {left:?}");
            std::fs::remove_dir_all(&jpath).expect("reset");
            k += 1;
            assert!(k < 20, "the failpoint never stopped firing");
        }
        assert_eq!(k, 8, "seven steps: the done mark, five files, the folder");
    }

    #[test]
    fn records_on_their_way_out_are_not_records_and_are_swept() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let state = StateDir::outside_git(tmp.path(), tmp.path().join("state")).expect("state");
        let undo = state.undo_dir();
        let ids = records(&undo, 3, 2);
        std::fs::create_dir_all(undo.join(format!("{GONE}{}", ids[0]))).expect("left by a crash");
        std::fs::create_dir_all(undo.join("not-a-record")).expect("someone's folder");
        let mut listed = list_records(&undo).expect("list");
        listed.sort();
        assert_eq!(listed, ids);
        prune_undo(&state, 2).expect("pruned");
        let mut left = list_dirs(&undo).expect("list");
        left.sort();
        assert_eq!(left, vec![ids[1].clone(), ids[2].clone(), "not-a-record".into()]);
    }
}
