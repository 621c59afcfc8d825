//! Stage: orchestration (sinks). Where a plan goes: a memory tree, a kept preview, or the
//! disk — the work-tree transaction, the index (`--cached`), or both (`--index`). Both are
//! prepared before either commits: the index is locked, read and edited in memory, the work
//! tree's transaction is prepared (locked, every target re-checked), then the transaction
//! commits with the index as its companion (written before the commit mark, installed right
//! after it). Writes the work tree only through the transaction, the index only through
//! [`LockedIndex`].

use super::options::{GitMode, Mode, Options};
use super::source::{self, Planned, Source};
use super::{audit_record, hooks, txn_warnings, Applied, Refused, Request};
#[cfg(feature = "git")]
use crate::agent::preview::{Kept, Writes};
#[cfg(feature = "git")]
use crate::agent::AgentState;
use crate::error::Error;
#[cfg(feature = "git")]
use crate::git::changes::{cached_changes, index_changes};
#[cfg(feature = "git")]
use crate::git::{Conflicted, LockedIndex, Repo, SavedEntries, ThreeWay};
use crate::report::Warning;
use crate::tree::{DiskTree, MemTree};
use crate::txn::{AuditRecord, Committed, TxnOptions};
use crate::usage::UsageError;

/// What a commit wrote, for a revert: the transaction id (empty when the work tree had
/// nothing to change) and the index entries before and after.
#[cfg(feature = "git")]
#[derive(Debug, Default)]
pub(crate) struct Written {
    pub id: String,
    pub index: Option<IndexWritten>,
}

/// The entries at the paths the index sink wrote, before and after.
#[derive(Debug)]
#[cfg(feature = "git")]
pub(crate) struct IndexWritten {
    pub before: SavedEntries,
    pub after: SavedEntries,
}

/// How far the run got in finding the root's repository before the plan.
pub(crate) enum Discovery {
    /// Not looked for yet (the planner discovers it).
    NotYet,
    /// Opened once for the state place (`None`: in no repository); the planner takes it
    /// from there and reads the index (after the recovery, which may have installed one).
    #[cfg(feature = "git")]
    Opened(Option<Box<gix::Repository>>),
}

/// The memory sink: plan against the tree and change it (no git, no state place).
pub(crate) fn memory(
    tree: &mut MemTree,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
) -> Result<Applied, Box<Refused>> {
    let unusable = if opts.git != GitMode::None {
        Some("git modes need a git work tree on disk")
    } else if mode == Mode::Preview {
        Some("a preview is kept in a state place, and a memory tree has none")
    } else if opts.rebase || opts.post_check.is_some() {
        Some("--rebase and --post-check need a directory on disk")
    } else {
        None
    };
    if let Some(why) = unusable {
        return Err(Refused::before(UsageError::TargetCannot { why }.into()));
    }
    let plan_opts = opts.plan_options(mode).map_err(Refused::before)?;
    let planned = source::plan(&Source::Memory(tree), req.patch, opts, &plan_opts)?;
    let risk = hooks::risk_gate(&planned.plan, opts)?;
    if mode == Mode::Write {
        tree.apply_changes(&planned.plan.changes);
    }
    let mut out = conclude(planned, mode, Vec::new())?;
    out.risk = risk;
    Ok(out)
}

/// Steps 3–5 of a run on a directory without the `git` feature, once recovered: the
/// directory as a plain one (the options that need git were refused before), the risk gate,
/// the disk transaction.
#[cfg(not(feature = "git"))]
pub(crate) fn plan_and_write(
    tree: &DiskTree,
    txn_opts: &TxnOptions,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    _discovery: Discovery,
) -> Result<Applied, Box<Refused>> {
    let plan_opts = opts.plan_options(mode).map_err(Refused::before)?;
    let planned = source::plan(&Source::Disk(tree), req.patch, opts, &plan_opts)?;
    let risk = hooks::risk_gate(&planned.plan, opts)?;
    let with_risk = |mut r: Box<Refused>| {
        r.risk = risk.clone();
        r
    };
    let mut after = Vec::new();
    if mode == Mode::Write && !planned.plan.changes.is_empty() {
        let disk = Disk { tree, txn_opts };
        after = disk
            .write(&planned, &audit_record(&planned.plan.files))
            .map_err(|e| Refused::of(e, planned.plan.files.clone(), planned.plan.warnings.clone()))
            .map_err(with_risk)?;
    }
    let mut out = conclude(planned, mode, after).map_err(with_risk)?;
    out.risk = risk;
    Ok(out)
}

/// Steps 3–5 of a run on a directory, once recovered: source, hooks, sink.
#[cfg(feature = "git")]
pub(crate) fn plan_and_write(
    tree: &DiskTree,
    txn_opts: &TxnOptions,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    discovery: Discovery,
) -> Result<Applied, Box<Refused>> {
    let (repo, unreadable) = discover(tree, opts.git, discovery).map_err(Refused::before)?;
    let mut out = plan_and_write_in(tree, txn_opts, req, opts, mode, repo);
    let warnings = match &mut out {
        Ok(a) => &mut a.warnings,
        Err(r) => &mut r.warnings,
    };
    warnings.splice(0..0, unreadable);
    out
}

/// [`plan_and_write`] once the repository (if any) is known.
#[cfg(feature = "git")]
fn plan_and_write_in(
    tree: &DiskTree,
    txn_opts: &TxnOptions,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    repo: Option<Repo>,
) -> Result<Applied, Box<Refused>> {
    let plan_opts = opts.plan_options(mode).map_err(Refused::before)?;
    // The index is locked before anything is read, so the check and the write see one index.
    let lock = match (&repo, opts.git.writes_index() && mode == Mode::Write) {
        (Some(repo), true) => Some(repo.lock_index().map_err(Refused::before)?),
        _ => None,
    };
    let guarded = opts.git.writes_index() && !opts.git.cached();
    let planned = {
        let source = match &repo {
            None => Source::Disk(tree),
            Some(repo) if opts.git.cached() => Source::Index {
                root: tree.path(),
                repo,
                state: lock.as_ref().map_or(repo.index_state(), LockedIndex::state),
            },
            Some(repo) => Source::WorkTree { tree, repo },
        };
        if let (true, Some(repo)) = (guarded, &repo) {
            hooks::index_guard_named(repo, lock.as_ref(), req.patch, tree.path())
                .map_err(Refused::before)?;
        }
        source::plan(&source, req.patch, opts, &plan_opts)?
    };
    if let (true, Some(repo)) = (guarded, &repo) {
        hooks::index_guard_planned(repo, lock.as_ref(), &planned.plan).map_err(|e| {
            Refused::of(e, planned.plan.files.clone(), planned.plan.warnings.clone())
        })?;
    }
    let risk = hooks::risk_gate(&planned.plan, opts)?;
    let with_risk = |mut r: Box<Refused>| {
        r.risk = risk.clone();
        r
    };
    let mut out = match mode {
        Mode::Check => conclude(planned, mode, Vec::new()),
        Mode::Preview => preview(planned, opts, tree),
        Mode::Write if planned.plan.changes.is_empty() => conclude(planned, mode, Vec::new()),
        Mode::Write => {
            let disk = Disk {
                tree,
                txn_opts,
                repo: repo.as_ref(),
                git: opts.git,
            };
            let rollback = opts.post_check.as_ref().is_some_and(|p| p.rollback_on_fail);
            let audit = audit_record(&planned.plan.files);
            return disk
                .write(&planned, lock, rollback, &audit)
                .map_err(|e| {
                    Refused::of(e, planned.plan.files.clone(), planned.plan.warnings.clone())
                })
                .map_err(with_risk)
                .and_then(|(written, warnings)| {
                    let mut out = conclude(planned, mode, warnings).map_err(with_risk)?;
                    out.risk = risk.clone();
                    verify(out, written, &disk, opts)
                });
        }
    }
    .map_err(with_risk)?;
    out.risk = risk;
    Ok(out)
}

/// The post-check hook after a disk write.
#[cfg(feature = "git")]
fn verify(
    mut out: Applied,
    written: Written,
    disk: &Disk<'_>,
    opts: &Options,
) -> Result<Applied, Box<Refused>> {
    let Some(check) = &opts.post_check else {
        return Ok(out);
    };
    let state = disk.txn_opts.state_dir().map_err(Refused::before)?;
    match hooks::post_check(disk.tree.path(), check, written, disk.repo, &state) {
        Ok(v) => {
            out.verification = Some(v);
            Ok(out)
        }
        Err(failed) => {
            let (error, v) = *failed;
            // The plan's warnings only: what the commit reported is undone with it.
            let warnings = out
                .warnings
                .into_iter()
                .filter(|w| !is_txn_warning(w))
                .collect();
            let mut refused = Refused::of(error, out.files, warnings);
            refused.risk = out.risk;
            refused.verification = Some(v);
            Err(refused)
        }
    }
}

#[cfg(feature = "git")]
fn is_txn_warning(w: &Warning) -> bool {
    use crate::report::WarningCode;
    matches!(w.code, WarningCode::Cleanup)
}

/// The repository the root lies in; a git mode without one is a usage error. A corrupt
/// index stops only the modes that use it: a plain apply warns (`index_unreadable`) and goes
/// on, as `git apply` does.
#[cfg(feature = "git")]
fn discover(
    tree: &DiskTree,
    git: GitMode,
    discovery: Discovery,
) -> Result<(Option<Repo>, Option<Warning>), Error> {
    let repo = match discovery {
        Discovery::NotYet => Repo::discover(tree.path())?,
        // The tree's path is the canonical root the repository was opened for.
        Discovery::Opened(Some(repo)) => Repo::of_opened(tree.path(), tree.path(), *repo)?,
        Discovery::Opened(None) => None,
    };
    match (repo, git.flag()) {
        (Some(repo), flag) => match repo.index_error() {
            Some(e) if flag.is_some() => Err(e.clone().into()),
            Some(e) => {
                let warning = Warning::new(
                    crate::report::WarningCode::IndexUnreadable,
                    format!(
                        "{e}; applied to the work tree without it (submodules listed only in \
                         the index are not recognised)"
                    ),
                );
                Ok((Some(repo), Some(warning)))
            }
            None => Ok((Some(repo), None)),
        },
        (None, Some(flag)) => Err(UsageError::NoWorkTree {
            flag,
            root: tree.path().to_path_buf(),
        }
        .into()),
        (None, None) => Ok((None, None)),
    }
}

/// The preview sink: keep the plan (and what confirm must write: the git mode and the audit
/// record) under an event id; nothing is written.
#[cfg(feature = "git")]
fn preview(planned: Planned, opts: &Options, tree: &DiskTree) -> Result<Applied, Box<Refused>> {
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
    let state = match &opts.state {
        Some(s) => AgentState::in_state_dir(s.clone()),
        None => AgentState::for_root(tree.path()),
    };
    let json = serde_json::to_value(crate::report::Report::from(&out)).unwrap_or_default();
    match state.and_then(|s| s.previews.save_kept(&changes, json, &kept)) {
        Ok(id) => {
            out.preview = Some(id);
            Ok(out)
        }
        Err(e) => Err(Refused::of(e, files, Vec::new())),
    }
}

/// The disk sink.
pub(crate) struct Disk<'a> {
    pub tree: &'a DiskTree,
    pub txn_opts: &'a TxnOptions,
    #[cfg(feature = "git")]
    pub repo: Option<&'a Repo>,
    #[cfg(feature = "git")]
    pub git: GitMode,
}

#[cfg(not(feature = "git"))]
impl Disk<'_> {
    /// Write a plan through the work-tree transaction. Returns the warnings of the commit.
    pub(crate) fn write(
        &self,
        planned: &Planned,
        audit: &AuditRecord,
    ) -> Result<Vec<Warning>, Error> {
        self.tree.close_folders();
        let prepared = crate::txn::prepare(self.txn_opts, planned.plan.changes.clone(), audit)?;
        let committed: Committed = prepared.commit(None)?;
        let mut warnings = txn_warnings(committed.recovered);
        warnings.extend(txn_warnings(committed.warnings));
        Ok(warnings)
    }
}

#[cfg(feature = "git")]
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

/// The result of a finished plan (`after`: the commit's warnings); with conflict markers
/// written, a `merge_conflict` refusal.
pub(crate) fn conclude(
    planned: Planned,
    mode: Mode,
    after: Vec<Warning>,
) -> Result<Applied, Box<Refused>> {
    #[cfg(feature = "git")]
    let Planned {
        plan, conflicts, ..
    } = planned;
    #[cfg(not(feature = "git"))]
    let Planned { plan } = planned;
    let mut warnings = plan.warnings;
    warnings.extend(after);
    #[cfg(feature = "git")]
    if let Some(first) = conflicts.first() {
        let error = conflict_error(first, &conflicts, mode);
        let mut refused = Refused::of(error, plan.files, warnings);
        refused.diff = plan.diff;
        return Err(refused);
    }
    Ok(Applied {
        files: plan.files,
        warnings,
        diff: plan.diff,
        risk: None,
        #[cfg(feature = "git")]
        verification: None,
        preview: None,
        mode,
    })
}

/// With conflict markers written (or, in a check, that would be), the `merge_conflict`
/// error naming the files.
#[cfg(feature = "git")]
fn conflict_error(
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
    ThreeWay::conflict_error(&first.path, &first.conflicts, fate)
}
