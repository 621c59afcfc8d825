//! Stage: orchestration (confirm). `apply-patch confirm ID` runs the pipeline with a kept
//! preview as its source: the recovery first, then the claim (exactly once), the check that
//! every path still holds what it held at the preview (`stale_file` otherwise; with the
//! index, the `--index` guard too), and the same disk sink as a direct apply — the index as
//! well when the preview was made with `--index` or `--cached`, and the plan's own audit
//! record, so that the audit line is a direct apply's.

use std::collections::BTreeMap;
use std::path::Path;

use super::options::GitMode;
use super::recover_first;
use super::sink::Disk;
use crate::agent::preview::{Before, Preview, PreviewStore, Writes};
use crate::agent::AgentError;
use crate::error::Error;
use crate::git::fallback::Planned;
use crate::git::trees::IndexTree;
use crate::git::{LockedIndex, Repo};
use crate::plan::Plan;
use crate::report::Warning;
use crate::state::StateDir;
use crate::tree::{DiskTree, Tree};
use crate::txn::{self, Change, Snapshot, TxnOptions};

/// A kept preview, committed by [`confirm`].
#[derive(Debug, Clone)]
#[must_use = "a confirmed preview says what was written"]
pub struct Confirmed {
    /// The preview's event id.
    pub preview: String,
    /// The `files` of the preview's report (what was written).
    pub files: serde_json::Value,
    pub warnings: Vec<Warning>,
}

/// `apply-patch confirm ID`: commit a kept preview, exactly once.
pub fn confirm(root: &Path, id: &str, state: Option<StateDir>) -> Result<Confirmed, Error> {
    let state = match state {
        Some(s) => s,
        None => StateDir::for_root(root)?,
    };
    let (preview, warnings) = commit_kept(root, &state, id)?;
    Ok(Confirmed {
        preview: preview.id,
        files: preview.report.get("files").cloned().unwrap_or_default(),
        warnings,
    })
}

/// Claim preview `id` (once), check it still fits, and commit exactly the kept plan.
/// Returns the preview and the warnings of the run (a recovery's, the commit's).
pub(crate) fn commit_kept(
    root: &Path,
    state: &StateDir,
    id: &str,
) -> Result<(Preview, Vec<Warning>), Error> {
    let tree = DiskTree::new(root)?;
    let txn_opts = TxnOptions {
        state: Some(state.clone()),
        ..TxnOptions::new(tree.path())
    };
    // Before the claim: a refused recovery must not use the preview up. A rollback it does
    // shows as `stale_file` below when it touched a previewed path.
    let mut warnings = recover_first(&txn_opts, false)?;
    let store = PreviewStore::new(state.sub("previews")?);
    let claimed = store.claim(id)?;
    let git = match claimed.preview.writes {
        Writes::WorkTree => GitMode::None,
        Writes::Both => GitMode::Index,
        Writes::Index => GitMode::Cached,
    };
    let repo = match git {
        GitMode::None => None,
        _ => Some(Repo::discover(tree.path())?.ok_or_else(|| {
            Error::from(AgentError::PreviewWithoutWorkTree { id: id.to_string() })
        })?),
    };
    let lock = repo.as_ref().map(Repo::lock_index).transpose()?;
    let mut changes = Vec::with_capacity(claimed.changes.len());
    for (path, before, after) in claimed.changes {
        let snapshot = snapshot_now(&tree, repo.as_ref(), lock.as_ref(), git, &path)?;
        if Before::of(&snapshot) != before {
            return Err(AgentError::PreviewStale {
                id: id.to_string(),
                path,
            }
            .into());
        }
        changes.push(Change {
            path,
            before: snapshot,
            after,
        });
    }
    let planned = Planned {
        plan: Plan {
            files: Vec::new(),
            warnings: Vec::new(),
            changes,
            diff: None,
        },
        bases: BTreeMap::new(),
        conflicts: Vec::new(),
    };
    if let (GitMode::Index, Some(repo)) = (git, &repo) {
        crate::git::changes::check_index(
            repo,
            lock.as_ref(),
            &crate::git::changes::requirements(&planned.plan.changes),
        )?;
    }
    let disk = Disk {
        tree: &tree,
        txn_opts: &txn_opts,
        repo: repo.as_ref(),
        git,
    };
    let (_, written) = disk.write(&planned, lock, false, &claimed.preview.audit)?;
    warnings.extend(written);
    Ok((claimed.preview, warnings))
}

/// What `path` holds now in the tree the preview was planned against.
fn snapshot_now(
    tree: &DiskTree,
    repo: Option<&Repo>,
    lock: Option<&LockedIndex>,
    git: GitMode,
    path: &str,
) -> Result<Snapshot, Error> {
    match (git, repo, lock) {
        (GitMode::Cached, Some(repo), Some(lock)) => {
            let bases = BTreeMap::new();
            let index = IndexTree {
                root: tree.path(),
                repo,
                state: lock.state(),
                bases: &bases,
            };
            Ok(index.read(path)?.0)
        }
        _ => Ok(txn::read_snapshot(tree.path(), path)?.0),
    }
}
