//! Stage: recovery. Finishing, rather than rolling back, a transaction a crash stopped
//! between its renames and its commit mark when another program changed a target after our
//! rename. The live commit calls that a later edit and goes on ([`super::stage`], step 6);
//! a recovery that rolled the rest back around the edited file would leave a mix that is
//! neither the old tree nor the new one, for good. So, when a target holds neither its old
//! nor its new state and its rename is known to have happened, the recovery does the
//! renames that were left, writes the commit mark and completes the transaction, keeping
//! the edited file as the other program left it (warning `later_edit`).
//!
//! When is a rename known to have happened? The commit creates the marker [`RENAMING`] in
//! the journal folder once every content is staged and backed up, synced with that folder
//! before the first rename; the renames then run in journal order. With the marker, a staged
//! file that is gone was renamed, and one still there was not. A deletion (nothing staged)
//! was done when a later entry's staged file is gone. An in-process rollback removes the
//! marker before it starts, so a crash during it is rolled back again. Must not decide
//! anything else: without a later edit the recovery rolls back as before.

use super::dirfd::Dir;
use super::journal::{self, current_state, Entry, Journal, State};
use super::TxnError;

/// The marker file in the journal folder: every content is staged, renames may have begun.
pub(crate) const RENAMING: &str = "renaming";

/// What finishing the commit does with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Its new state is in place.
    Done,
    /// Not renamed yet: its staged file (or, for a deletion, its removal) is still to come.
    Rename,
    /// Renamed, then changed by another program: kept as it is.
    LaterEdit,
}

/// The paths changed after their rename, when the crashed transaction can and must be
/// finished; `None` when it is rolled back (no marker, no later edit, or an entry whose
/// state does not fit a finished rename or a staged one).
pub(crate) fn later_edits(
    root: &Dir,
    jdir: &Dir,
    journal: &Journal,
) -> Result<Option<Vec<String>>, TxnError> {
    let marked = jdir
        .stat(RENAMING.as_bytes())
        .map_err(|e| TxnError::io_of(RENAMING, "cannot look at the journal folder for", &e))?;
    if marked.is_none() {
        return Ok(None);
    }
    let steps = match plan(root, journal)? {
        Some(steps) if steps.contains(&Step::LaterEdit) => steps,
        _ => return Ok(None),
    };
    Ok(Some(
        journal
            .entries
            .iter()
            .zip(&steps)
            .filter(|(_, s)| **s == Step::LaterEdit)
            .map(|(e, _)| e.path.clone())
            .collect(),
    ))
}

/// What each entry needs, in journal order; `None` when some entry cannot be finished.
fn plan(root: &Dir, journal: &Journal) -> Result<Option<Vec<Step>>, TxnError> {
    // (staged file still there, state now) per entry.
    let mut seen = Vec::with_capacity(journal.entries.len());
    for entry in &journal.entries {
        // A path behind a folder someone replaced (by a symlink, not followed) cannot be
        // finished: the transaction is rolled back, which reports it.
        let Ok((located, now)) = journal::state_or_blocked(root, &entry.path)? else {
            return Ok(None);
        };
        let staged = match (&entry.stage, located.parent.as_deref()) {
            (Some(stage), Some(dir)) => dir
                .stat(stage.as_bytes())
                .map_err(|e| TxnError::io_of(&entry.path, "cannot look at the staged content of", &e))?
                .is_some(),
            _ => false,
        };
        seen.push((staged, now));
    }
    let mut steps = Vec::with_capacity(seen.len());
    for (i, (entry, (staged, now))) in journal.entries.iter().zip(&seen).enumerate() {
        // A later entry whose staged file was renamed away: the renames got past this one.
        let passed = || {
            journal.entries[i + 1..]
                .iter()
                .zip(&seen[i + 1..])
                .any(|(e, (staged, _))| e.stage.is_some() && !staged)
        };
        let step = match (entry.stage.is_some(), *staged) {
            // Staged and not renamed: its target must still be ours to replace.
            (true, true) if *now == entry.before || *now == entry.after => Step::Rename,
            (true, true) => return Ok(None), // changed before our rename: a stale target
            (true, false) if *now == entry.after => Step::Done,
            (true, false) if *now == entry.before => return Ok(None),
            (true, false) => Step::LaterEdit,
            (false, _) if *now == entry.after => Step::Done,
            (false, _) if *now == entry.before => Step::Rename,
            (false, _) if passed() => Step::LaterEdit,
            (false, _) => return Ok(None),
        };
        steps.push(step);
    }
    Ok(Some(steps))
}

/// Does the renames (and removals) the crash left undone, each staged file checked against
/// the journal's new state first, and syncs their folders. The caller then writes the
/// commit mark.
pub(crate) fn finish_renames(root: &Dir, journal: &Journal) -> Result<(), TxnError> {
    let steps = plan(root, journal)?.ok_or_else(|| {
        TxnError::ChangedWhileFinishing {
            id: journal.id.clone(),
        }
    })?;
    for (entry, step) in journal.entries.iter().zip(steps) {
        if step == Step::Rename {
            rename_one(root, entry)?;
        }
    }
    Ok(())
}

fn rename_one(root: &Dir, entry: &Entry) -> Result<(), TxnError> {
    let path = entry.path.as_str();
    let io = |e: std::io::Error| TxnError::io_of(path, "cannot finish the commit of", &e);
    let located = journal::locate(root, path)?;
    let dir = located.parent.as_deref().ok_or_else(|| {
        io(std::io::Error::from_raw_os_error(libc::ENOENT)) // its folder was removed since
    })?;
    match &entry.stage {
        Some(stage) => {
            // Only the very content the journal names goes in (a staged file is in the tree,
            // where anyone could have replaced it).
            if current_state(Some(dir), stage.as_bytes()).map_err(io)? != entry.after {
                return Err(TxnError::StagedContentWrong {
                    path: path.to_string(),
                });
            }
            dir.rename(stage.as_bytes(), dir, &located.name)
                .map_err(io)?;
        }
        None if entry.after == State::Missing => dir.unlink(&located.name).map_err(io)?,
        None => {}
    }
    dir.sync().map_err(io)
}
