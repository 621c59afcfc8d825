//! The index edits and `--index` requirements of a plan: what the pipeline's index guard
//! checks and what its index sink stages (the conflict stages of a `--3way` merge included).
//! Reads the work tree and the index; writes nothing.

use super::fallback::Planned;
use super::index::entry_of;
use super::{IndexChange, IndexRequirement, LockedIndex, Repo};
use super::GitError;
use crate::model::{FileOp, Mode, PatchSet};
use crate::tree::{DiskTree, Node, Tree};
use crate::txn::{Change, NewState, Snapshot};
use std::path::Path;

/// [`IndexRequirement`]s against the locked index, or the index as read (`--check`).
pub(crate) fn check_index(
    repo: &Repo,
    lock: Option<&LockedIndex>,
    requirements: &[IndexRequirement],
) -> Result<(), GitError> {
    match lock {
        Some(lock) => lock.check_matches(repo, requirements),
        None => Ok(repo.check_index_matches(requirements)?),
    }
}

/// What `--index` requires of the paths a patch names: sources tracked and clean,
/// destinations of adds, renames and copies untracked. Only a path's first mention counts:
/// later operations of the same patch see what the earlier ones made of it.
pub(crate) fn patch_requirements(
    patch: &PatchSet<'_>,
    root: &Path,
) -> Result<Vec<IndexRequirement>, GitError> {
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
pub(crate) fn requirements(changes: &[Change]) -> Vec<IndexRequirement> {
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
pub(crate) fn index_changes(
    repo: &Repo,
    planned: &Planned,
    tree: &DiskTree,
) -> Result<Vec<IndexChange>, GitError> {
    let mut changes = repo.index_changes_for(&planned.plan.changes)?;
    for conflicted in &planned.conflicts {
        let path = &conflicted.path;
        let Some(base) = planned.bases.get(&conflicted.source) else {
            continue;
        };
        let ours = match tree.read(&conflicted.source)?.1 {
            Node::File { bytes, .. } => repo.clean(&conflicted.source, &bytes)?.into_owned(),
            _ => continue,
        };
        let theirs = repo.clean(path, &conflicted.theirs)?.into_owned();
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

/// The index edits of a `--cached` plan: contents are already in git's form.
pub(crate) fn cached_changes(
    state: &gix::index::State,
    repo: &Repo,
    planned: &Planned,
) -> Result<Vec<IndexChange>, GitError> {
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
