//! Stage: orchestration inside a git work tree. `apply_to_dir` hands over here when the root
//! lies in a git work tree (or a git flag is given): the same planner and transaction, plus
//! the write guard for submodules, filtered blob ids, `--index`, `--cached`, `--3way` and
//! `--conflict-markers`.
//!
//! Writes only through `txn::commit` (the work tree) and [`LockedIndex`] (objects and index).

use super::{IndexChange, IndexRequirement, LockedIndex, PlanHooks, Repo};
use crate::apply::{self, ApplyOptions};
use crate::error::{Error, ErrorCode};
use crate::merge::{three_way, Conflicts, Labels};
use crate::model::{FileOp, Mode, PatchSet};
use crate::plan::{Plan, Refusal};
use crate::report::{Report, Warning, WarningCode};
use crate::tree::{DiskTree, Kind, Node, Tree};
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
    Some(if opts.cached {
        cached(&repo, tree, input, opts)
    } else {
        worktree(&repo, tree, input, opts)
    })
}

fn usage(message: &str) -> Error {
    Error::new(ErrorCode::Usage, message).with_hint("run apply-patch --help for the options")
}

fn failure(error: Error) -> Report {
    Report::failure(error, Vec::new(), Vec::new())
}

/// The work tree as the planner sees it inside a repository: submodule paths are refused, and
/// files being merged by `--3way` read as their base.
struct GitTree<'a> {
    inner: &'a dyn Tree,
    repo: &'a Repo,
    bases: &'a BTreeMap<String, Base>,
}

/// The base of a file merged by `--3way`.
struct Base {
    id: String,
    /// Work-tree form.
    content: Vec<u8>,
    /// Git form (stage 1 of a recorded conflict).
    blob: Vec<u8>,
    /// 1-based hunks that did not apply to the file as it is.
    failed_hunks: Vec<usize>,
}

impl Tree for GitTree<'_> {
    fn root(&self) -> Option<&Path> {
        self.inner.root()
    }

    fn kind(&self, path: &str) -> Result<Kind, Error> {
        self.repo.check_path(path)?;
        self.inner.kind(path)
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), Error> {
        self.repo.check_path(path)?;
        let (snapshot, node) = self.inner.read(path)?;
        match (self.bases.get(path), node) {
            (Some(base), Node::File { mode, .. }) => Ok((
                snapshot,
                Node::File {
                    bytes: base.content.clone(),
                    mode,
                },
            )),
            (_, node) => Ok((snapshot, node)),
        }
    }
}

/// The index as a tree (`--cached`): each path holds its stage-0 entry's blob.
struct IndexTree<'a> {
    root: &'a Path,
    repo: &'a Repo,
    index: &'a LockedIndex,
    bases: &'a BTreeMap<String, Base>,
}

impl Tree for IndexTree<'_> {
    fn root(&self) -> Option<&Path> {
        Some(self.root)
    }

    fn kind(&self, path: &str) -> Result<Kind, Error> {
        self.repo.check_path(path)?;
        match self.index.entry(self.repo, path)? {
            Some(e) if e.mode.is_symlink() => Ok(Kind::Symlink(self.repo.read_blob(&e.id, path)?)),
            Some(e) if e.mode.is_gitlink() => Ok(Kind::Directory),
            Some(_) => Ok(Kind::File),
            None if self.index.is_dir(self.repo, path)? => Ok(Kind::Directory),
            None => Ok(Kind::Missing),
        }
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), Error> {
        self.repo.check_path(path)?;
        let Some(entry) = self.index.entry(self.repo, path)? else {
            return Ok(match self.index.is_dir(self.repo, path)? {
                true => (Snapshot::Directory, Node::Directory),
                false => (Snapshot::Missing, Node::Missing),
            });
        };
        if entry.conflicted {
            return Err(Error::new(
                ErrorCode::IndexMismatch,
                format!("{path} has unresolved merge conflicts in the index"),
            )
            .with_path(path)
            .with_hint("resolve the conflict and stage the file first"));
        }
        let bytes = match self.bases.get(path) {
            Some(base) => base.blob.clone(),
            None => self.repo.read_blob(&entry.id, path)?,
        };
        if entry.mode.is_symlink() {
            return Ok((
                Snapshot::Symlink {
                    target: bytes.clone(),
                },
                Node::Symlink { target: bytes },
            ));
        }
        let mode = if entry.mode.is_executable() {
            0o755
        } else {
            0o644
        };
        let snapshot = Snapshot::File {
            len: bytes.len() as u64,
            mtime: None,
            mode,
            sha256: crate::txn::sha256(&bytes),
        };
        Ok((snapshot, Node::File { bytes, mode }))
    }
}

/// A plan made with `--3way` fallbacks: the files merged, and the conflicts (when
/// `--conflict-markers` lets them through).
struct Planned {
    plan: Plan,
    bases: BTreeMap<String, Base>,
    conflicts: Vec<Conflicted>,
}

/// A file written with conflict markers.
struct Conflicted {
    path: String,
    conflicts: Conflicts,
    /// The patched base (stage 3 of the index), in the planned tree's form.
    theirs: Vec<u8>,
}

/// Plans against the tree with the given `--3way` bases.
type PlanWith<'a> = dyn Fn(&BTreeMap<String, Base>) -> Result<Plan, Refusal> + 'a;

/// Plan against `make_tree(bases)`, retrying with the base blob of each file whose hunks do
/// not apply when `--3way` is on; then merge those files.
fn plan_with_fallback(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &ApplyOptions,
    cached: bool,
    make_tree: &PlanWith<'_>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Refusal> {
    let mut bases: BTreeMap<String, Base> = BTreeMap::new();
    let plan = loop {
        match make_tree(&bases) {
            Ok(plan) => break plan,
            Err(refusal) if opts.three_way => {
                match base_for(repo, patch, opts, cached, &refusal, &bases, current) {
                    Ok(Some((path, base))) => {
                        bases.insert(path, base);
                    }
                    Ok(None) => return Err(refusal),
                    Err(e) => {
                        return Err(Refusal {
                            error: e,
                            ..refusal
                        })
                    }
                }
            }
            Err(refusal) => return Err(refusal),
        }
    };
    merge_bases(plan, bases, opts, current)
}

/// The base to retry a refused file with, if `--3way` can help it.
fn base_for(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &ApplyOptions,
    cached: bool,
    refusal: &Refusal,
    bases: &BTreeMap<String, Base>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Option<(String, Base)>, Error> {
    if !matches!(
        refusal.error.code,
        ErrorCode::ContextNotFound | ErrorCode::AmbiguousMatch
    ) {
        return Ok(None);
    }
    // The planner reports every file up to and including the refused one, in patch order.
    let Some(fp) = refusal
        .files
        .len()
        .checked_sub(1)
        .and_then(|i| patch.files.get(i))
    else {
        return Ok(None);
    };
    let (Some(ids), Some(old), FileOp::Modify | FileOp::Rename | FileOp::Copy) =
        (&fp.blob_ids, fp.old_path.as_deref(), fp.op)
    else {
        return Ok(None);
    };
    let path = crate::guard::normalize(old, patch.cd.as_deref(), None)?;
    if bases.contains_key(&path) {
        return Ok(None);
    }
    let Some((_, blob)) = repo.find_blob_by_prefix(&ids.old)? else {
        return Ok(None);
    };
    let content = if cached {
        blob.clone()
    } else {
        repo.smudge(&path, &blob)?
    };
    let file = current(&path)?;
    let failed_hunks = failed_hunks(fp.body.hunks(), patch.format, &file, opts);
    Ok(Some((
        path,
        Base {
            id: ids.old.clone(),
            content,
            blob,
            failed_hunks,
        },
    )))
}

/// The 1-based hunks that do not apply to `file` on their own.
fn failed_hunks(
    hunks: &[crate::model::Hunk<'_>],
    format: crate::model::Format,
    file: &[u8],
    opts: &ApplyOptions,
) -> Vec<usize> {
    let text = crate::text::Text::parse(file);
    let lines = text.contents();
    let locate = crate::locate::LocateOptions {
        window: opts.window,
        unidiff_zero: opts.unidiff_zero,
        bytes_only: std::str::from_utf8(file).is_err(),
    };
    hunks
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            crate::locate::locate_hunks(&lines, std::slice::from_ref(*h), format, &locate).is_err()
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Replace each merged file's planned content (the patched base) by the merge of
/// base → patched base into the file as it is.
fn merge_bases(
    mut plan: Plan,
    bases: BTreeMap<String, Base>,
    opts: &ApplyOptions,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Refusal> {
    let mut conflicts = Vec::new();
    for (path, base) in &bases {
        let refuse = |error: Error, plan: &Plan| Refusal {
            error,
            files: plan.files.clone(),
            warnings: plan.warnings.clone(),
        };
        let ours = current(path).map_err(|e| refuse(e, &plan))?;
        let Some(change) = plan.changes.iter_mut().find(|c| &c.path == path) else {
            continue;
        };
        let NewState::File { bytes: theirs, .. } = &mut change.after else {
            continue;
        };
        let merged = three_way(&base.content, &ours, theirs, Labels::default());
        if let Some(diff) = plan.diff.as_mut() {
            let new = match &merged {
                Ok(m) => m.as_slice(),
                Err(found) => found.marked.as_slice(),
            };
            *diff = replace_file_diff(diff, path, &ours, new);
        }
        match merged {
            Ok(merged) => {
                *theirs = merged;
                let hunks: Vec<String> = base.failed_hunks.iter().map(usize::to_string).collect();
                let mut warning = Warning::new(
                    WarningCode::Merged,
                    format!(
                        "merged from the base blob {} (hunk{} {} did not apply to the file as it is)",
                        base.id,
                        if hunks.len() == 1 { "" } else { "s" },
                        hunks.join(", ")
                    ),
                )
                .with_path(path.clone());
                if let Some(first) = base.failed_hunks.first() {
                    warning = warning.with_hunk(*first);
                }
                plan.warnings.push(warning);
            }
            Err(found) if opts.conflict_markers => {
                let patched = std::mem::replace(theirs, found.marked.clone());
                conflicts.push(Conflicted {
                    path: path.clone(),
                    conflicts: found,
                    theirs: patched,
                });
            }
            Err(found) => {
                let error = super::ThreeWay::conflict_error(path, &found);
                return Err(refuse(error, &plan));
            }
        }
    }
    Ok(Planned {
        plan,
        bases,
        conflicts,
    })
}

/// `diff` with the part for `path` (planned against the base) replaced by the diff of the
/// file as it is to its merged content.
fn replace_file_diff(diff: &str, path: &str, old: &[u8], new: &[u8]) -> String {
    let header = crate::render::file_diff(Some(path), Some(path), b"x\n", b"y\n");
    let header = header.lines().next().unwrap_or("").to_string();
    let mut out = String::new();
    let mut skipping = false;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            skipping = line.trim_end() == header;
            if skipping {
                out.push_str(&crate::render::file_diff(Some(path), Some(path), old, new));
            }
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
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
    plan_opts.git = Some(PlanHooks::new(Rc::clone(repo)));
    // The index is locked before anything is read, so the check and the write see one index.
    let mut lock = match (opts.index && !opts.check).then(|| repo.lock_index()) {
        Some(Ok(lock)) => Some(lock),
        Some(Err(e)) => return failure(e),
        None => None,
    };
    // Named paths first, so an unstaged edit is reported as such rather than as a hunk that
    // does not fit; the planned changes are checked again below (symlinks resolved).
    if opts.index {
        let named = match patch_requirements(&patch, tree.path()) {
            Ok(r) => r,
            Err(e) => return failure(e),
        };
        let checked = match &lock {
            Some(lock) => lock.check_matches(repo, &named),
            None => repo.check_index_matches(&named),
        };
        if let Err(e) = checked {
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
        (_, Node::File { bytes, .. }) => Ok(bytes),
        _ => Ok(Vec::new()),
    };
    let planned = match plan_with_fallback(repo, &patch, opts, false, &make, &current) {
        Ok(p) => p,
        Err(r) => return Report::failure(r.error, r.files, r.warnings),
    };
    if opts.index {
        let requirements = requirements(&planned.plan.changes);
        let checked = match &lock {
            Some(lock) => lock.check_matches(repo, &requirements),
            None => repo.check_index_matches(&requirements),
        };
        if let Err(e) = checked {
            return Report::failure(e, planned.plan.files, planned.plan.warnings);
        }
    }
    if opts.check || planned.plan.changes.is_empty() {
        return conclude(planned, opts.check, Vec::new());
    }
    if let Some(lock) = lock.as_mut() {
        let staged = index_changes(repo, &planned, tree).and_then(|c| lock.stage(repo, &c, true));
        if let Err(e) = staged {
            return Report::failure(e, planned.plan.files, planned.plan.warnings);
        }
    }
    let txn_opts = crate::txn::TxnOptions::new(tree.path());
    let audit = apply::audit_record(&planned.plan);
    let committed = match crate::txn::commit(&txn_opts, planned.plan.changes.clone(), &audit) {
        Ok(c) => c,
        // The index lock is dropped unused: the index stays as it was.
        Err(e) => return Report::failure(e, planned.plan.files, planned.plan.warnings),
    };
    let mut warnings = apply::txn_warnings(committed.recovered);
    warnings.extend(apply::txn_warnings(committed.warnings));
    if let Some(lock) = lock {
        if let Err(e) = index_failpoint().and_then(|()| lock.commit()) {
            return index_failed(tree.path(), &committed.id, e, planned);
        }
    }
    conclude(planned, false, warnings)
}

/// `APPLY_PATCH_FAILPOINT=git-index:fail` makes the index write after a committed work tree
/// fail (tests of the rollback; the transaction's own failpoints are `commit:…`).
fn index_failpoint() -> Result<(), Error> {
    match std::env::var("APPLY_PATCH_FAILPOINT") {
        Ok(v) if v.trim() == "git-index:fail" => Err(Error::new(
            ErrorCode::IoError,
            "cannot replace the git index: failpoint git-index:fail",
        )),
        _ => Ok(()),
    }
}

/// What `--index` requires of the paths a patch names: sources tracked and clean,
/// destinations of adds, renames and copies untracked.
fn patch_requirements(patch: &PatchSet<'_>, root: &Path) -> Result<Vec<IndexRequirement>, Error> {
    let mut out = Vec::new();
    let cd = patch.cd.as_deref();
    for fp in &patch.files {
        if fp.op != FileOp::Add {
            if let Some(old) = fp.old_path.as_deref() {
                out.push(IndexRequirement::Tracked(crate::guard::normalize(
                    old,
                    cd,
                    Some(root),
                )?));
            }
        }
        if matches!(fp.op, FileOp::Add | FileOp::Rename | FileOp::Copy) {
            if let Some(new) = fp.new_path.as_deref() {
                out.push(IndexRequirement::Untracked(crate::guard::normalize(
                    new,
                    cd,
                    Some(root),
                )?));
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

/// The index edits of a work-tree plan; conflicted merges become stages 1/2/3.
fn index_changes(
    repo: &Repo,
    planned: &Planned,
    tree: &DiskTree,
) -> Result<Vec<IndexChange>, Error> {
    let mut changes = repo.index_changes_for(&planned.plan.changes)?;
    for conflicted in &planned.conflicts {
        let path = &conflicted.path;
        let Some(base) = planned.bases.get(path) else {
            continue;
        };
        let (_, node) = tree.read(path)?;
        let (ours, mode) = match node {
            Node::File { bytes, mode } => (repo.clean(path, &bytes)?, mode),
            _ => continue,
        };
        let mode = if mode & 0o111 != 0 {
            Mode::EXECUTABLE
        } else {
            Mode::FILE
        };
        let theirs = repo.clean(path, &conflicted.theirs)?;
        for change in changes.iter_mut() {
            if matches!(change, IndexChange::Put { path: p, .. } if p == path) {
                *change = IndexChange::Conflict {
                    path: path.clone(),
                    base: Some((base.blob.clone(), mode)),
                    ours: Some((ours.clone(), mode)),
                    theirs: Some((theirs.clone(), mode)),
                };
            }
        }
    }
    Ok(changes)
}

/// The index could not be written after the work tree was: put the work tree back.
fn index_failed(root: &Path, txn_id: &str, error: Error, planned: Planned) -> Report {
    let mut error = error;
    if !txn_id.is_empty() {
        match crate::txn::undo(root) {
            Ok(_) => {
                error.message =
                    format!("{}; the work-tree changes were rolled back", error.message);
            }
            Err(undo) => {
                error = Error::new(
                    ErrorCode::RollbackFailed,
                    format!(
                        "{}; rolling the work tree back failed too: {}",
                        error.message, undo.message
                    ),
                )
                .with_hint("run apply-patch undo, or restore the files from git");
            }
        }
    }
    Report::failure(error, planned.plan.files, planned.plan.warnings)
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
    let mut lock = match repo.lock_index() {
        Ok(lock) => lock,
        Err(e) => return failure(e),
    };
    let planned = {
        let index = &lock;
        let make = |bases: &BTreeMap<String, Base>| {
            let index_tree = IndexTree {
                root: tree.path(),
                repo,
                index,
                bases,
            };
            crate::plan::plan(&index_tree, &patch, &plan_opts)
        };
        let current = |path: &str| -> Result<Vec<u8>, Error> {
            match index.entry(repo, path)? {
                Some(e) => repo.read_blob(&e.id, path),
                None => Ok(Vec::new()),
            }
        };
        plan_with_fallback(repo, &patch, opts, true, &make, &current)
    };
    let planned = match planned {
        Ok(p) => p,
        Err(r) => return Report::failure(r.error, r.files, r.warnings),
    };
    if opts.check || planned.plan.changes.is_empty() {
        return conclude(planned, opts.check, Vec::new());
    }
    let changes = cached_changes(&lock, repo, &planned);
    let written = changes.and_then(|c| {
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
    lock: &LockedIndex,
    repo: &Repo,
    planned: &Planned,
) -> Result<Vec<IndexChange>, Error> {
    let mut out = Vec::new();
    for change in &planned.plan.changes {
        let path = change.path.clone();
        out.push(match &change.after {
            NewState::File { bytes, mode } => {
                let mode = if mode & 0o111 != 0 {
                    Mode::EXECUTABLE
                } else {
                    Mode::FILE
                };
                match planned.conflicts.iter().find(|c| c.path == path) {
                    Some(conflicted) => {
                        let base = planned.bases.get(&path).map(|b| (b.blob.clone(), mode));
                        let ours = match lock.entry(repo, &path)? {
                            Some(e) => Some((repo.read_blob(&e.id, &path)?, mode)),
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
                        content: bytes.clone(),
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
