//! Stage: orchestration (the sinks' git parts). What only a run with the `git` feature
//! writes or keeps: the index sink's saved entries, the source of an opened root inside a
//! repository, the preview sink, the disk sink's write with the index as the transaction's
//! companion, and the `merge_conflict` error of a three-way merge.

use super::options::{Mode, Options};
use super::sink::{conclude, Disk, Opened, Written};
use super::source::{Planned, Source};
use super::{audit_record, txn_warnings, Applied, Refused};
use crate::agent::preview::{Kept, Writes};
use crate::agent::AgentState;
use crate::error::Error;
use crate::git::changes::{cached_changes, index_changes};
use crate::git::{Conflicted, LockedIndex, SavedEntries, ThreeWay};
use crate::report::Warning;
use crate::txn::{AuditRecord, Committed};

/// The entries at the paths the index sink wrote, before and after.
#[derive(Debug)]
pub(crate) struct IndexWritten {
    pub before: SavedEntries,
    pub after: SavedEntries,
}

impl Opened {
    pub(super) fn source(&self) -> Source<'_> {
        if let Some(kept) = &self.kept {
            return Source::Kept { kept, opened: self };
        }
        match &self.repo {
            None => Source::Disk(&self.tree),
            Some(repo) if self.git.cached() => Source::Index {
                root: self.tree.path(),
                repo,
                state: self
                    .lock
                    .as_ref()
                    .map_or(repo.index_state(), LockedIndex::state),
            },
            Some(repo) => Source::WorkTree {
                tree: &self.tree,
                repo,
            },
        }
    }
}

/// The preview sink: keep the plan (and what confirm must write: the git mode and the audit
/// record) under an event id; nothing is written.
pub(super) fn preview(
    planned: Planned,
    opts: &Options,
    opened: &Opened,
) -> Result<Applied, Box<Refused>> {
    let changes: Vec<_> = planned
        .plan
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.before.clone(), c.after.clone()))
        .collect();
    let writes = match opts.git {
        g if g.cached() => Writes::Index,
        g if g.writes_index() => Writes::Both,
        _ => Writes::WorkTree,
    };
    let kept = Kept {
        writes,
        audit: audit_record(&planned.plan.files),
    };
    let files = planned.plan.files.clone();
    let mut out = conclude(planned, Mode::Preview, Vec::new())?;
    // The run's state place (the caller's, else the one the root's opening found).
    let state = opened
        .txn_opts
        .state_dir()
        .and_then(AgentState::in_state_dir);
    let json = serde_json::to_value(crate::report::Report::from(&out)).unwrap_or_default();
    match state.and_then(|s| Ok(s.previews.save_kept(&changes, json, &kept)?)) {
        Ok(id) => {
            out.preview = Some(id);
            Ok(out)
        }
        Err(e) => Err(Refused::of(e, files, Vec::new())),
    }
}

impl Disk<'_> {
    /// Write a plan: the index edits staged in `lock` (when the index is written), the
    /// work-tree transaction prepared, then both committed. With `rollback`, the index
    /// entries before and after are kept for a revert. Returns the warnings of the commit.
    pub(crate) fn write(
        &self,
        planned: &Planned,
        mut lock: Option<LockedIndex>,
        rollback: bool,
        audit: &AuditRecord,
    ) -> Result<(Written, Vec<Warning>), Error> {
        let mut written = Written::default();
        if let (Some(lock), Some(repo)) = (lock.as_mut(), self.repo) {
            let changes = if self.git.cached() {
                cached_changes(lock.state(), repo, planned)?
            } else {
                index_changes(repo, planned, self.tree)?
            };
            let paths: Vec<String> = changes.iter().map(|c| c.path().to_string()).collect();
            let before = rollback
                .then(|| lock.save_entries(repo, &paths))
                .transpose()?;
            lock.stage(repo, &changes, !self.git.cached())?;
            written.index = before.map(|before| IndexWritten {
                after: lock.save_again(&before),
                before,
            });
        }
        if self.git.cached() {
            if let Some(lock) = lock {
                lock.commit()?;
            }
            return Ok((written, Vec::new()));
        }
        self.tree.close_folders();
        let prepared = crate::txn::prepare(self.txn_opts, planned.plan.changes.clone(), audit)?;
        let companion = lock.as_mut().map(|l| l as &mut dyn crate::txn::Companion);
        let committed: Committed = prepared.commit(companion)?;
        // Nothing in the work tree had to change (no transaction ran): the index alone.
        if let Some(lock) = lock.filter(|l| !l.is_installed()) {
            lock.commit()?;
        }
        let mut warnings = txn_warnings(committed.recovered);
        warnings.extend(txn_warnings(committed.warnings));
        written.id = committed.id;
        Ok((written, warnings))
    }
}

/// With conflict markers written (or, in a check, that would be), the `merge_conflict`
/// error naming the files.
pub(super) fn conflict_error(
    first: &crate::git::fallback::Conflicted,
    conflicts: &[crate::git::fallback::Conflicted],
    mode: Mode,
) -> Error {
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    let fate = if mode == Mode::Check {
        Conflicted::Checked
    } else {
        Conflicted::MarkersWritten(&paths)
    };
    ThreeWay::conflict_error(&first.path, &first.conflicts, fate).into()
}
