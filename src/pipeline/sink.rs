//! Stage: orchestration (sinks). The one skeleton of a run once its root is open
//! ([`skeleton`]): before-plan hooks → plan (a source) → after-plan hooks → write (a sink) →
//! after-commit hooks. The sinks differ only in their write step: a memory tree changes in
//! place; a kept preview is saved under an event id; the disk — the work-tree transaction, the
//! index (`--cached`), or both (`--index`) — prepares both before either commits: the index is
//! locked, read and edited in memory, the work tree's transaction is prepared (locked, every
//! target re-checked), then the transaction commits with the index as its companion (written
//! before the commit mark, installed right after it). Writes the work tree only through the
//! transaction, the index only through [`LockedIndex`].

#[cfg(feature = "git")]
use super::git_sink::{conflict_error, preview, IndexWritten};
use super::hooks::{Facts, Hook};
use super::options::{GitMode, Mode, Options};
use super::source::{self, Planned, Source};
use super::{audit_record, Applied, Refused, Request};
use crate::error::Error;
#[cfg(feature = "git")]
use crate::git::{LockedIndex, Repo};
use crate::report::Warning;
use crate::state::StateDir;
use crate::tree::{DiskTree, MemTree};
use crate::txn::TxnOptions;
use crate::usage::UsageError;

/// What a commit wrote, for a revert: the transaction id (empty when the work tree had
/// nothing to change) and the index entries before and after.
#[derive(Debug, Default)]
// Without git nothing reverts a write (the post-check needs git).
#[cfg_attr(not(feature = "git"), allow(dead_code))]
pub(crate) struct Written {
    pub id: String,
    #[cfg(feature = "git")]
    pub index: Option<IndexWritten>,
}

/// A root opened once for a run: its canonical path (the tree), its state place (in the
/// transaction options), its repository and, when the run writes the index, the index's lock
/// (taken before anything is read, so that the guard and the write see one index).
pub(crate) struct Opened {
    pub tree: DiskTree,
    pub txn_opts: TxnOptions,
    #[cfg(feature = "git")]
    pub repo: Option<Repo>,
    #[cfg(feature = "git")]
    pub lock: Option<LockedIndex>,
    /// A kept preview to plan from instead of the patch (`confirm`).
    #[cfg(feature = "git")]
    pub kept: Option<super::confirm::KeptPlan>,
    /// The git mode the sink writes in (a kept preview's own, for `confirm`).
    #[cfg_attr(not(feature = "git"), allow(dead_code))]
    pub git: GitMode,
}

/// Where a run plans and writes.
pub(crate) enum Place<'t> {
    Memory(&'t mut MemTree),
    Disk(Box<Opened>),
}

/// What a hook sees of a run: its request, and on disk the tree, state place, repository and
/// index lock the run opened.
// Without git only the risk gate runs, and it reads the plan alone.
#[cfg_attr(not(feature = "git"), allow(dead_code))]
pub(crate) struct Run<'r, 'a> {
    pub req: &'r Request<'r, 'a>,
    pub tree: Option<&'r DiskTree>,
    pub state: Option<&'r StateDir>,
    #[cfg(feature = "git")]
    pub repo: Option<&'r Repo>,
    #[cfg(feature = "git")]
    pub lock: Option<&'r LockedIndex>,
}

impl Place<'_> {
    fn run<'r, 'a>(&'r self, req: &'r Request<'r, 'a>) -> Run<'r, 'a> {
        match self {
            Place::Memory(_) => Run {
                req,
                tree: None,
                state: None,
                #[cfg(feature = "git")]
                repo: None,
                #[cfg(feature = "git")]
                lock: None,
            },
            Place::Disk(o) => Run {
                req,
                tree: Some(&o.tree),
                state: o.txn_opts.state.as_ref(),
                #[cfg(feature = "git")]
                repo: o.repo.as_ref(),
                #[cfg(feature = "git")]
                lock: o.lock.as_ref(),
            },
        }
    }

    /// A kept preview is always written, as confirmed (an empty one too).
    fn kept(&self) -> bool {
        match self {
            #[cfg(feature = "git")]
            Place::Disk(o) => o.kept.is_some(),
            _ => false,
        }
    }

    /// The tree the plan is made against.
    fn source(&self) -> Source<'_> {
        match self {
            Place::Memory(tree) => Source::Memory(tree),
            Place::Disk(o) => o.source(),
        }
    }

    /// The write step: the memory tree changed in place, or the disk sink. Returns what was
    /// written (for a revert) and the commit's warnings.
    fn write(
        &mut self,
        planned: &Planned,
        opts: &Options,
    ) -> Result<(Written, Vec<Warning>), Error> {
        match self {
            Place::Memory(tree) => {
                tree.apply_changes(&planned.plan.changes);
                Ok((Written::default(), Vec::new()))
            }
            Place::Disk(o) => {
                #[cfg(feature = "git")]
                let rollback = opts.post_check.as_ref().is_some_and(|p| p.rollback_on_fail);
                #[cfg(not(feature = "git"))]
                let _ = opts;
                let disk = Disk {
                    tree: &o.tree,
                    txn_opts: &o.txn_opts,
                    #[cfg(feature = "git")]
                    repo: o.repo.as_ref(),
                    #[cfg(feature = "git")]
                    git: o.git,
                };
                #[cfg(feature = "git")]
                if let Some(kept) = &o.kept {
                    // The plan's own audit record, so that the audit line is a direct apply's.
                    return disk.write(planned, o.lock.take(), rollback, &kept.audit);
                }
                let audit = audit_record(&planned.plan.files);
                #[cfg(feature = "git")]
                return disk.write(planned, o.lock.take(), rollback, &audit);
                #[cfg(not(feature = "git"))]
                disk.write(planned, &audit)
            }
        }
    }
}

#[cfg(not(feature = "git"))]
impl Opened {
    fn source(&self) -> Source<'_> {
        Source::Disk(&self.tree)
    }
}

/// A memory tree takes no git mode, no preview and nothing that needs a directory.
pub(crate) fn memory_can(opts: &Options, mode: Mode) -> Result<(), Error> {
    let unusable = if opts.git != GitMode::None {
        Some("git modes need a git work tree on disk")
    } else if mode == Mode::Preview {
        Some("a preview is kept in a state place, and a memory tree has none")
    } else if opts.rebase || opts.post_check.is_some() {
        Some("--rebase and --post-check need a directory on disk")
    } else if !opts.formatters.is_empty() {
        Some("--formatter runs its commands in a directory on disk")
    } else {
        None
    };
    match unusable {
        Some(why) => Err(UsageError::TargetCannot { why }.into()),
        None => Ok(()),
    }
}

/// The one skeleton of a run (module docs), once the root is open and recovered; the hooks'
/// facts (the risk, the post-check's outcome) go into the result, refused or not, and a
/// refusal goes through every hook's [`Hook::on_refusal`] with the run's place.
pub(crate) fn skeleton(
    place: &mut Place<'_>,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    hooks: &mut [Box<dyn Hook + '_>],
) -> Result<Applied, Box<Refused>> {
    let mut facts = Facts::default();
    let mut out = steps(place, req, opts, mode, hooks, &mut facts);
    facts.attach(&mut out);
    if let Err(refused) = &mut out {
        let run = place.run(req);
        for hook in hooks.iter_mut() {
            hook.on_refusal(Some(&run), refused);
        }
    }
    out
}

fn steps(
    place: &mut Place<'_>,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    hooks: &mut [Box<dyn Hook + '_>],
    facts: &mut Facts,
) -> Result<Applied, Box<Refused>> {
    let plan_opts = opts.plan_options(mode).map_err(Refused::before)?;
    let refuse = |e: Error, planned: &Planned| {
        Refused::of(e, planned.plan.files.clone(), planned.plan.warnings.clone())
    };
    let planned = {
        let run = place.run(req);
        for hook in hooks.iter_mut() {
            hook.before_plan(&run).map_err(Refused::before)?;
        }
        let mut planned = source::plan(&place.source(), req.patch, opts, &plan_opts)?;
        for hook in hooks.iter_mut() {
            hook.after_plan(&run, &mut planned, facts)
                .map_err(|e| refuse(e, &planned))?;
        }
        // The diff's text, once: the fallback, the rebase and the hooks changed its pieces.
        planned.plan.render_diff();
        planned
    };
    let (written, after) = match mode {
        Mode::Check => (None, Vec::new()),
        Mode::Preview => return keep(planned, opts, place),
        Mode::Write if planned.plan.changes.is_empty() && !place.kept() => (None, Vec::new()),
        Mode::Write => {
            let (written, after) = place
                .write(&planned, opts)
                .map_err(|e| refuse(e, &planned))?;
            (Some(written), after)
        }
    };
    let out = conclude(planned, mode, after)?;
    if mode == Mode::Write {
        let run = place.run(req);
        for hook in hooks.iter_mut() {
            if let Err(e) = hook.after_commit(&run, &out, written.as_ref(), facts) {
                // The plan's warnings only: what the commit reported is undone with it.
                let warnings = out.warnings.into_iter().filter(|w| !is_txn_warning(w));
                return Err(Refused::of(e, out.files, warnings.collect()));
            }
        }
    }
    Ok(out)
}

fn is_txn_warning(w: &Warning) -> bool {
    use crate::report::WarningCode;
    matches!(w.code, WarningCode::Cleanup)
}

/// The preview sink on disk (a memory tree has no state place to keep it in).
fn keep(planned: Planned, opts: &Options, place: &Place<'_>) -> Result<Applied, Box<Refused>> {
    match place {
        #[cfg(feature = "git")]
        Place::Disk(o) => preview(planned, opts, o),
        _ => {
            let _ = (planned, opts);
            let why = "a preview is kept in a state place, and a memory tree has none";
            Err(Refused::before(UsageError::TargetCannot { why }.into()))
        }
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
    /// Write a plan through the work-tree transaction. Returns what was written and the
    /// warnings of the commit.
    pub(crate) fn write(
        &self,
        planned: &Planned,
        audit: &crate::txn::AuditRecord,
    ) -> Result<(Written, Vec<Warning>), Error> {
        self.tree.close_folders();
        let prepared = crate::txn::prepare(self.txn_opts, planned.plan.changes.clone(), audit)?;
        let committed = prepared.commit(None)?;
        let mut warnings = super::txn_warnings(committed.recovered);
        warnings.extend(super::txn_warnings(committed.warnings));
        Ok((Written { id: committed.id }, warnings))
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
