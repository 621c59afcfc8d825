//! Stage: orchestration (confirm). `apply-patch confirm ID` runs the pipeline's skeleton with
//! a kept preview as its source: the root opened once, the recovery first, then the claim
//! (exactly once), the check that every path still holds what it held at the preview
//! (`stale_file` otherwise; with the index, the `--index` guard hook too), and the same disk
//! sink as a direct apply — the index
//! as well when the preview was made with `--index` or `--cached`, and the plan's own audit
//! record, so that the audit line is a direct apply's.

use std::collections::BTreeMap;
use std::path::Path;

use super::git_hooks::IndexGuard;
use super::hooks::Hook;
use super::options::{GitMode, Mode, Options};
use super::root::open_root;
use super::sink::{skeleton, Opened, Place};
use super::{recover_first, Request};
use crate::agent::preview::{Before, Preview, PreviewStore, Writes};
use crate::agent::AgentError;
use crate::error::Error;
use crate::git::fallback::Planned;
use crate::git::trees::IndexTree;
use crate::model::{Format, PatchSet, Rules};
use crate::plan::Plan;
use crate::report::Warning;
use crate::state::StateDir;
use crate::tree::Tree;
use crate::txn::{self, AuditRecord, Change, NewState, Snapshot};

/// A kept preview, committed by [`confirm`].
#[derive(Debug, Clone)]
#[must_use = "a confirmed preview says what was written"]
#[non_exhaustive]
pub struct Confirmed {
    /// The preview's event id.
    pub preview: String,
    /// The `files` of the preview's report (what was written).
    pub files: serde_json::Value,
    pub warnings: Vec<Warning>,
}

/// `apply-patch confirm ID`: commit a kept preview, exactly once.
pub fn confirm(root: &Path, id: &str, state: Option<StateDir>) -> Result<Confirmed, Error> {
    let (preview, warnings) = commit_kept(root, state, id)?;
    Ok(Confirmed {
        preview: preview.id,
        files: preview.report.get("files").cloned().unwrap_or_default(),
        warnings,
    })
}

/// Claim preview `id` (once), check it still fits, and commit exactly the kept plan: the
/// run's skeleton with the preview as its source. Returns the preview and the warnings of
/// the run (a recovery's, the commit's).
pub(crate) fn commit_kept(
    root: &Path,
    state: Option<StateDir>,
    id: &str,
) -> Result<(Preview, Vec<Warning>), Error> {
    let opts = Options {
        state,
        ..Options::default()
    };
    let root = open_root(root, &opts)?;
    // The state place the root's opening found (the caller's, else the root's own).
    let state = root.txn_opts.state_dir()?;
    // Before the claim: a refused recovery must not use the preview up. A rollback it does
    // shows as `stale_file` below when it touched a previewed path.
    let mut warnings = recover_first(&root.txn_opts, false)?;
    let store = PreviewStore::new(state.sub("previews")?);
    let claimed = store.claim(id)?;
    let git = match claimed.preview.writes {
        Writes::WorkTree => GitMode::None,
        Writes::Both => GitMode::Index,
        Writes::Index => GitMode::Cached,
    };
    // The index is read and locked as the preview's mode needs (an unreadable one stops the
    // lock, as before; confirm reports no `index_unreadable`).
    let (mut opened, _) = root.open(GitMode::None, git != GitMode::None)?;
    if git != GitMode::None && opened.repo.is_none() {
        return Err(AgentError::PreviewWithoutWorkTree { id: id.to_string() }.into());
    }
    opened.git = git;
    opened.kept = Some(KeptPlan {
        id: id.to_string(),
        changes: claimed.changes,
        audit: claimed.preview.audit.clone(),
    });
    let mut hooks: Vec<Box<dyn Hook>> = Vec::new();
    if git == GitMode::Index {
        hooks.push(Box::new(IndexGuard { named: false }));
    }
    // The kept plan is the request; there is no patch to read.
    let patch = PatchSet {
        format: Format::Agent,
        rules: Rules::AGENT,
        cd: None,
        files: Vec::new(),
    };
    let req = Request {
        input: None,
        patch: &patch,
    };
    let mut place = Place::Disk(Box::new(opened));
    let applied = skeleton(&mut place, &req, &opts, Mode::Write, &mut hooks)
        .map_err(|refused| refused.error)?;
    warnings.extend(applied.warnings);
    Ok((claimed.preview, warnings))
}

/// A kept preview as a source: its changes in plan order, and the audit record of its plan.
pub(crate) struct KeptPlan {
    id: String,
    changes: Vec<(String, Before, NewState)>,
    pub audit: AuditRecord,
}

impl KeptPlan {
    /// The plan to write: every path must still hold what it held at the preview
    /// (`stale_file` otherwise), in the tree the preview was planned against.
    pub(crate) fn check(&self, opened: &Opened) -> Result<Planned, Error> {
        let mut changes = Vec::with_capacity(self.changes.len());
        for (path, before, after) in &self.changes {
            let snapshot = snapshot_now(opened, path)?;
            if Before::of(&snapshot) != *before {
                return Err(AgentError::PreviewStale {
                    id: self.id.clone(),
                    path: path.clone(),
                }
                .into());
            }
            changes.push(Change {
                path: path.clone(),
                before: snapshot,
                after: after.clone(),
            });
        }
        Ok(Planned {
            plan: Plan {
                files: Vec::new(),
                warnings: Vec::new(),
                changes,
                diff: None,
                pieces: Vec::new(),
            },
            bases: BTreeMap::new(),
            conflicts: Vec::new(),
        })
    }
}

/// What `path` holds now in the tree the preview was planned against.
fn snapshot_now(opened: &Opened, path: &str) -> Result<Snapshot, Error> {
    let root = opened.tree.path();
    match (opened.git, &opened.repo, &opened.lock) {
        (GitMode::Cached, Some(repo), Some(lock)) => {
            let bases = BTreeMap::new();
            let index = IndexTree {
                root,
                repo,
                state: lock.state(),
                bases: &bases,
            };
            Ok(index.read(path)?.0)
        }
        _ => Ok(txn::read_snapshot(root, path)?.0),
    }
}
