//! Stage: orchestration inside a git work tree. `apply_to_dir` hands over here when the root
//! lies in a git work tree (or a git flag is given): the same planner and transaction, plus
//! the write guard for submodules, filtered blob ids, `--index`, `--cached`, `--3way` and
//! `--conflict-markers`. `apply_to_dir` has already recovered a transaction a crash left
//! (`apply::recover_first`) before it hands over, so nothing here plans a half-applied tree.
//!
//! Writes only through `txn::commit` (the work tree) and [`LockedIndex`] (objects and index).

use super::fallback::{plan_with_fallback, Planned};
use super::index::entry_of;
use super::trees::{Base, GitTree, IndexTree};
use super::{IndexChange, IndexRequirement, LockedIndex, PlanHooks, Repo};
use crate::apply::{self, ApplyOptions};
use crate::error::{Error, ErrorCode};
use crate::model::{FileOp, Mode, PatchSet};
use crate::report::{Report, Warning, WarningCode};
use crate::tree::{DiskTree, Node, Tree};
use crate::txn::{Change, NewState, Snapshot};
use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

/// Route a run: `None` when the root is in no git work tree and no git flag is given (the
/// plain flow goes on); else the report of the git flow (or of a usage error).
pub fn apply_in_repo(tree: &DiskTree, input: &[u8], opts: &ApplyOptions) -> Option<Report> {
    let git_flag = opts.index || opts.cached || opts.three_way || opts.conflict_markers;
    if opts.conflict_markers && !opts.three_way {
        return Some(failure(usage("--conflict-markers needs --3way")));
    }
    let repo = match Repo::discover(tree.path()) {
        Ok(Some(repo)) => Rc::new(repo),
        Ok(None) if git_flag => {
            let flag = if opts.cached {
                "--cached"
            } else if opts.index {
                "--index"
            } else {
                "--3way"
            };
            return Some(failure(usage(&format!(
                "{flag} needs a git work tree, and {} is in none",
                tree.path().display()
            ))));
        }
        Ok(None) => return None,
        Err(e) => return Some(failure(e)),
    };
    // A corrupt index stops only the flows that use it; a plain apply warns and goes on, as
    // `git apply` does.
    let unreadable = match repo.index_error() {
        Some(e) if git_flag => return Some(failure(e.clone())),
        Some(e) => Some(Warning::new(
            WarningCode::IndexUnreadable,
            format!(
                "{}; applied to the work tree without it (submodules listed only in the \
                     index are not recognised)",
                e.message
            ),
        )),
        None => None,
    };
    let mut report = if opts.cached {
        cached(&repo, tree, input, opts)
    } else {
        worktree(&repo, tree, input, opts)
    };
    report.warnings.splice(0..0, unreadable);
    Some(report)
}

fn usage(message: &str) -> Error {
    Error::new(ErrorCode::Usage, message).with_hint("run apply-patch --help for the options")
}

fn failure(error: Error) -> Report {
    Report::failure(error, Vec::new(), Vec::new())
}

/// The work-tree flows: plain (inside a repository), `--index`, `--3way`.
fn worktree(repo: &Rc<Repo>, tree: &DiskTree, input: &[u8], opts: &ApplyOptions) -> Report {
    let patch = match apply::parse_patch(input, opts) {
        Ok(p) => p,
        Err(e) => return failure(e),
    };
    let mut plan_opts = match opts.plan_options() {
        Ok(p) => p,
        Err(e) => return failure(e),
    };
    plan_opts.git = Some(Rc::new(PlanHooks::new(Rc::clone(repo))));
    // The index is locked before anything is read, so the check and the write see one index.
    let lock = match (opts.index && !opts.check).then(|| repo.lock_index()) {
        Some(Ok(lock)) => Some(lock),
        Some(Err(e)) => return failure(e),
        None => None,
    };
    // Named paths first, so an unstaged edit is reported as such rather than as a hunk that
    // does not fit; the planned changes are checked again below (symlinks resolved).
    if opts.index {
        let named = patch_requirements(&patch, tree.path());
        if let Err(e) = named.and_then(|named| check_index(repo, lock.as_ref(), &named)) {
            return failure(e);
        }
    }
    let make = |bases: &BTreeMap<String, Base>| {
        let git_tree = GitTree {
            inner: tree,
            repo,
            bases,
        };
        crate::plan::plan(&git_tree, &patch, &plan_opts)
    };
    let current = |path: &str| match tree.read(path)? {
        (_, Node::File { bytes, .. }) => Ok(bytes.into_vec()),
        _ => Ok(Vec::new()),
    };
    let planned = match plan_with_fallback(repo, &patch, opts, false, &make, &current) {
        Ok(p) => p,
        Err(r) => return Report::failure(r.error, r.files, r.warnings),
    };
    if opts.index {
        if let Err(e) = check_index(repo, lock.as_ref(), &requirements(&planned.plan.changes)) {
            return Report::failure(e, planned.plan.files, planned.plan.warnings);
        }
    }
    if opts.check || planned.plan.changes.is_empty() {
        return conclude(planned, opts.check, Vec::new());
    }
    commit_worktree(repo, tree, planned, lock)
}

/// [`IndexRequirement`]s against the locked index, or the index as read (`--check`).
fn check_index(
    repo: &Repo,
    lock: Option<&LockedIndex>,
    requirements: &[IndexRequirement],
) -> Result<(), Error> {
    match lock {
        Some(lock) => lock.check_matches(repo, requirements),
        None => repo.check_index_matches(requirements),
    }
}

/// Stage the index edits (`--index`), commit the work tree, then the index.
fn commit_worktree(
    repo: &Repo,
    tree: &DiskTree,
    planned: Planned,
    mut lock: Option<LockedIndex>,
) -> Report {
    if let Some(lock) = lock.as_mut() {
        let staged = index_changes(repo, &planned, tree).and_then(|c| lock.stage(repo, &c, true));
        if let Err(e) = staged {
            return Report::failure(e, planned.plan.files, planned.plan.warnings);
        }
    }
    let txn_opts = crate::txn::TxnOptions::new(tree.path());
    let audit = apply::audit_record(&planned.plan);
    // The index is part of the transaction: written before its commit mark and installed
    // right after it (a failure then rolls the work tree back; a crash is finished by the
    // recovery either way). Without a commit the lock is dropped unused: the index stays.
    let companion = lock.as_mut().map(|l| l as &mut dyn crate::txn::Companion);
    let changes = planned.plan.changes.clone();
    let committed = match crate::txn::commit_with(&txn_opts, changes, &audit, companion) {
        Ok(c) => c,
        Err(e) => return Report::failure(e, planned.plan.files, planned.plan.warnings),
    };
    let mut warnings = apply::txn_warnings(committed.recovered);
    warnings.extend(apply::txn_warnings(committed.warnings));
    // Nothing in the work tree had to change (no transaction ran): the index alone.
    if let Some(lock) = lock.filter(|l| !l.is_installed()) {
        if let Err(e) = lock.commit() {
            return Report::failure(e, planned.plan.files, planned.plan.warnings);
        }
    }
    conclude(planned, false, warnings)
}

/// What `--index` requires of the paths a patch names: sources tracked and clean,
/// destinations of adds, renames and copies untracked. Only a path's first mention counts:
/// later operations of the same patch see what the earlier ones made of it.
fn patch_requirements(patch: &PatchSet<'_>, root: &Path) -> Result<Vec<IndexRequirement>, Error> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let cd = patch.cd.as_deref();
    for fp in &patch.files {
        let source = (fp.op != FileOp::Add)
            .then_some(fp.old_path.as_deref())
            .flatten();
        let created = matches!(fp.op, FileOp::Add | FileOp::Rename | FileOp::Copy);
        let target = created.then_some(fp.new_path.as_deref()).flatten();
        for (raw, tracked) in [(source, true), (target, false)] {
            let Some(raw) = raw else { continue };
            let path = crate::guard::normalize(raw, cd, Some(root))?;
            if seen.insert(path.clone()) {
                out.push(match tracked {
                    true => IndexRequirement::Tracked(path),
                    false => IndexRequirement::Untracked(path),
                });
            }
        }
    }
    Ok(out)
}

/// What `--index` requires of every changed path.
fn requirements(changes: &[Change]) -> Vec<IndexRequirement> {
    changes
        .iter()
        .map(|c| match c.before {
            Snapshot::Missing => IndexRequirement::Untracked(c.path.clone()),
            _ => IndexRequirement::Tracked(c.path.clone()),
        })
        .collect()
}

/// The index edits of a work-tree plan; conflicted merges become stages 1/2/3 at the path
/// written, with the source as it is (the old path of a rename or copy) as stage 2 and, as
/// git does, the planned mode on every stage.
fn index_changes(
    repo: &Repo,
    planned: &Planned,
    tree: &DiskTree,
) -> Result<Vec<IndexChange>, Error> {
    let mut changes = repo.index_changes_for(&planned.plan.changes)?;
    for conflicted in &planned.conflicts {
        let path = &conflicted.path;
        let Some(base) = planned.bases.get(&conflicted.source) else {
            continue;
        };
        let ours = match tree.read(&conflicted.source)?.1 {
            Node::File { bytes, .. } => repo.clean(&conflicted.source, &bytes)?,
            _ => continue,
        };
        let theirs = repo.clean(path, &conflicted.theirs)?;
        for change in changes.iter_mut() {
            if let IndexChange::Put { path: p, mode, .. } = change {
                if p == path {
                    let mode = *mode;
                    *change = IndexChange::Conflict {
                        path: path.clone(),
                        base: Some((base.blob.clone(), mode)),
                        ours: Some((ours.clone(), mode)),
                        theirs: Some((theirs.clone(), mode)),
                    };
                }
            }
        }
    }
    Ok(changes)
}

/// The report of a finished plan; with conflict markers written, a `merge_conflict` failure.
fn conclude(planned: Planned, checked_only: bool, before: Vec<Warning>) -> Report {
    let Planned {
        plan, conflicts, ..
    } = planned;
    let files = plan.files.clone();
    let mut report = apply::finished(plan, checked_only, before);
    if let Some(first) = conflicts.first() {
        let mut error = super::ThreeWay::conflict_error(&first.path, &first.conflicts);
        error.message = if checked_only {
            format!("{} (--check: nothing written)", error.message)
        } else {
            format!(
                "{}; conflict markers were written into {}",
                error.message,
                conflicts
                    .iter()
                    .map(|c| c.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        error.hint = Some("resolve the conflict markers, then stage the files (git add)".into());
        let warnings = std::mem::take(&mut report.warnings);
        let diff = report.diff.take();
        report = Report::failure(error, files, warnings);
        report.diff = diff;
    }
    report
}

/// `--cached`: plan against the index, write objects and the index only.
fn cached(repo: &Rc<Repo>, tree: &DiskTree, input: &[u8], opts: &ApplyOptions) -> Report {
    let patch = match apply::parse_patch(input, opts) {
        Ok(p) => p,
        Err(e) => return failure(e),
    };
    let plan_opts = match opts.plan_options() {
        Ok(p) => p,
        Err(e) => return failure(e),
    };
    // `--check` reads the index as it is; a real run locks it before reading it.
    let lock = match (!opts.check).then(|| repo.lock_index()) {
        Some(Ok(lock)) => Some(lock),
        Some(Err(e)) => return failure(e),
        None => None,
    };
    let state = lock.as_ref().map_or(repo.index_state(), LockedIndex::state);
    let make = |bases: &BTreeMap<String, Base>| {
        let index_tree = IndexTree {
            root: tree.path(),
            repo,
            state,
            bases,
        };
        crate::plan::plan(&index_tree, &patch, &plan_opts)
    };
    let current = |path: &str| -> Result<Vec<u8>, Error> {
        match entry_of(state, &repo.repo_path(path)?) {
            Some(e) => repo.read_blob(&e.id, path),
            None => Ok(Vec::new()),
        }
    };
    let planned = match plan_with_fallback(repo, &patch, opts, true, &make, &current) {
        Ok(p) => p,
        Err(r) => return Report::failure(r.error, r.files, r.warnings),
    };
    let Some(mut lock) = lock else {
        return conclude(planned, true, Vec::new());
    };
    if planned.plan.changes.is_empty() {
        return conclude(planned, false, Vec::new());
    }
    let written = cached_changes(lock.state(), repo, &planned).and_then(|c| {
        lock.stage(repo, &c, false)?;
        lock.commit()
    });
    match written {
        Ok(()) => conclude(planned, false, Vec::new()),
        Err(e) => Report::failure(e, planned.plan.files, planned.plan.warnings),
    }
}

/// The index edits of a `--cached` plan: contents are already in git's form.
fn cached_changes(
    state: &gix::index::State,
    repo: &Repo,
    planned: &Planned,
) -> Result<Vec<IndexChange>, Error> {
    let mut out = Vec::new();
    for change in &planned.plan.changes {
        let path = change.path.clone();
        out.push(match &change.after {
            NewState::File { bytes, mode, .. } => {
                let mode = if mode & 0o111 != 0 {
                    Mode::EXECUTABLE
                } else {
                    Mode::FILE
                };
                match planned.conflicts.iter().find(|c| c.path == path) {
                    Some(conflicted) => {
                        let source = &conflicted.source;
                        let base = planned.bases.get(source).map(|b| (b.blob.clone(), mode));
                        let ours = match entry_of(state, &repo.repo_path(source)?) {
                            Some(e) => Some((repo.read_blob(&e.id, source)?, mode)),
                            None => None,
                        };
                        IndexChange::Conflict {
                            path,
                            base,
                            ours,
                            theirs: Some((conflicted.theirs.clone(), mode)),
                        }
                    }
                    None => IndexChange::Put {
                        path,
                        content: bytes.to_vec(),
                        mode,
                    },
                }
            }
            NewState::Symlink { target } => IndexChange::Put {
                path,
                content: target.clone(),
                mode: Mode::SYMLINK,
            },
            NewState::Absent => IndexChange::Remove { path },
        });
    }
    Ok(out)
}

/// Plan (writing nothing) against a tree on disk the way the plain git flow does: inside a
/// git work tree, with the submodule and `.git` write guard and blob ids hashed through the
/// repository's filters; elsewhere, as [`apply::plan`]. For callers that commit themselves
/// (the agent layer's preview, rebase and post-check), so that no path of the product plans
/// a git work tree without the git guards.
pub fn plan_on_disk(
    tree: &dyn Tree,
    input: &[u8],
    opts: &ApplyOptions,
) -> Result<crate::plan::Plan, crate::plan::Refusal> {
    let refusal = |error: Error| crate::plan::Refusal {
        error,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let repo = match tree.root().map(Repo::discover) {
        Some(Ok(Some(repo))) => Rc::new(repo),
        Some(Err(e)) => return Err(refusal(e)),
        _ => return apply::plan(tree, input, opts),
    };
    let patch = apply::parse_patch(input, opts).map_err(refusal)?;
    let mut plan_opts = opts.plan_options().map_err(refusal)?;
    plan_opts.git = Some(Rc::new(PlanHooks::new(Rc::clone(&repo))));
    let bases = BTreeMap::new();
    let git_tree = GitTree {
        inner: tree,
        repo: &repo,
        bases: &bases,
    };
    crate::plan::plan(&git_tree, &patch, &plan_opts)
}
