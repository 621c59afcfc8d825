//! Stage: orchestration (hooks). What a flag adds around the plan and the commit: the
//! `--index` guard (the paths a patch names, then the planned changes, must match the
//! index), the risk gate (`--max-risk`), the chip kept for a patch refused at placement, and
//! the post-check (`--post-check`, with `--rollback-on-fail` a revert of this transaction's
//! id — and of the index entries it wrote — under the root's lock). The three-way fallback
//! and the rebase wrap the planner itself ([`super::source`]). All but the risk gate need
//! the `git` feature.

#[cfg(feature = "git")]
use std::path::Path;

use super::options::Options;
#[cfg(feature = "git")]
use super::options::PostCheck;
#[cfg(feature = "git")]
use super::sink::Written;
use super::Refused;
#[cfg(feature = "git")]
use super::Request;
#[cfg(feature = "git")]
use crate::agent::chips;
#[cfg(feature = "git")]
use crate::agent::postcheck::{self, Verification};
#[cfg(feature = "git")]
use crate::agent::AgentState;
use crate::error::{Error, ErrorCode};
#[cfg(feature = "git")]
use crate::git::changes::{check_index, patch_requirements, requirements};
#[cfg(feature = "git")]
use crate::git::{LockedIndex, Repo};
#[cfg(feature = "git")]
use crate::model::PatchSet;
use crate::plan::Plan;
use crate::risk::{self, Risk};
#[cfg(feature = "git")]
use crate::state::StateDir;

/// Why a hook refused, with the numbers it decided on as fields. The message and the next
/// step are written once, when a refusal becomes the boundary [`Error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// `--max-risk`: the plan scores above the limit.
    #[error("the patch's risk score is {}, above the limit of {max}", risk.score)]
    RiskExceeded { risk: Box<Risk>, max: u32 },
    /// `--rollback-on-fail`: the index holds other entries than the apply wrote, so the
    /// revert would undo another writer's work.
    #[error("the git index changed after the apply wrote it")]
    IndexChangedSinceApply,
}

impl HookError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            HookError::RiskExceeded { .. } => ErrorCode::RiskExceeded,
            HookError::IndexChangedSinceApply => ErrorCode::RollbackFailed,
        }
    }
}

impl From<HookError> for Error {
    fn from(err: HookError) -> Error {
        let out = Error::new(err.code(), err.to_string()).caused_by(err.clone());
        match err {
            HookError::RiskExceeded { risk, .. } => out
                .with_hint(
                    crate::spelling::Hint::new()
                        .text("split the patch into smaller ones")
                        .clause(
                            crate::spelling::Hint::new()
                                .text(", or ask for a higher ")
                                .name(crate::spelling::Opt::MaxRisk),
                        ),
                )
                .with_details(serde_json::json!({ "risk": risk })),
            HookError::IndexChangedSinceApply => out,
        }
    }
}

/// `--index`, before the plan: the paths the patch names, so that an unstaged edit is
/// reported as such rather than as a hunk that does not fit.
#[cfg(feature = "git")]
pub(crate) fn index_guard_named(
    repo: &Repo,
    lock: Option<&LockedIndex>,
    patch: &PatchSet<'_>,
    root: &Path,
) -> Result<(), Error> {
    let named = patch_requirements(patch, root)?;
    check_index(repo, lock, &named)
}

/// `--index`, after the plan: every changed path (symlinks resolved).
#[cfg(feature = "git")]
pub(crate) fn index_guard_planned(
    repo: &Repo,
    lock: Option<&LockedIndex>,
    plan: &Plan,
) -> Result<(), Error> {
    check_index(repo, lock, &requirements(&plan.changes))
}

/// The risk of a plan, from its per-file line counts.
pub(crate) fn score(plan: &Plan) -> Risk {
    let files: Vec<risk::FileChange<'_>> = plan
        .files
        .iter()
        .map(|f| risk::FileChange {
            path: &f.path,
            op: f.op,
            inserted: f.added,
            deleted: f.removed,
        })
        .collect();
    risk::score(&files)
}

/// `--max-risk N`: refuse (`risk_exceeded`) a plan scoring more. Returns the risk to report.
pub(crate) fn risk_gate(plan: &Plan, opts: &Options) -> Result<Option<Risk>, Box<Refused>> {
    if opts.max_risk.is_none() && !opts.report_risk {
        return Ok(None);
    }
    let risk = score(plan);
    match opts.max_risk {
        Some(max) if risk.score > max => {
            let e = HookError::RiskExceeded {
                risk: Box::new(risk.clone()),
                max,
            };
            let mut refused = Refused::of(e.into(), plan.files.clone(), plan.warnings.clone());
            refused.risk = Some(risk);
            Err(refused)
        }
        _ => Ok(opts.report_risk.then_some(risk)),
    }
}

/// Keep a patch refused at placement as a chip and name it (with the hunks that would have
/// applied) in the error; other refusals are left as they are.
#[cfg(feature = "git")]
pub(crate) fn keep_chip(root: &Path, req: &Request<'_, '_>, opts: &Options, refused: &mut Refused) {
    let Some(input) = req.input else { return };
    if !chips::keeps_chip(refused.error.code) {
        return;
    }
    let state = match &opts.state {
        Some(s) => AgentState::in_state_dir(s.clone()),
        None => AgentState::for_root(root),
    };
    let Ok(state) = state else { return };
    if let Ok(id) = state.chips.keep(input) {
        let hunks = chips::assess(root, req.patch, &opts.locate_options());
        refused.error = chips::attach(refused.error.clone(), &id, &hunks);
    }
}

/// Run the post-check after a commit; on failure with `rollback_on_fail`, revert what was
/// written. `Ok(verification)`: passed, or failed and left in place; `Err`: reverted (the
/// error is `post_check_failed`), or the revert failed (`rollback_failed`).
#[cfg(feature = "git")]
pub(crate) fn post_check(
    root: &Path,
    check: &PostCheck,
    written: Written,
    repo: Option<&Repo>,
    state: &StateDir,
) -> Result<Verification, Box<(Error, Verification)>> {
    let timeout = check.timeout.unwrap_or(postcheck::DEFAULT_TIMEOUT);
    let mut verification =
        postcheck::run(root, &check.command, timeout).unwrap_or_else(|e| Verification {
            command: check.command.clone(),
            status: "failed".into(),
            exit_code: None,
            stdout_tail: String::new(),
            stderr_tail: e.message,
            rolled_back: false,
        });
    if verification.passed() || !check.rollback_on_fail {
        return Ok(verification);
    }
    match revert(written, repo, state) {
        Ok(()) => {
            verification.rolled_back = true;
            Err(Box::new((verification.to_error(), verification)))
        }
        Err(e) => Err(Box::new((rollback_failed(e), verification))),
    }
}

#[cfg(feature = "git")]
fn rollback_failed(e: Error) -> Error {
    crate::txn::TxnError::RevertFailed { cause: Box::new(e) }.into()
}

/// Revert this run's transaction (by its id, under the root's lock) and the index entries it
/// wrote, together; refused when another transaction, or another index writer, came since.
#[cfg(feature = "git")]
fn revert(written: Written, repo: Option<&Repo>, state: &StateDir) -> Result<(), Error> {
    let mut lock = match (&written.index, repo) {
        (Some(saved), Some(repo)) => {
            let mut lock = repo.lock_index()?;
            if !lock.holds(&saved.after) {
                return Err(HookError::IndexChangedSinceApply.into());
            }
            lock.restore_entries(&saved.before);
            Some(lock)
        }
        _ => None,
    };
    if !written.id.is_empty() {
        let companion = lock.as_mut().map(|l| l as &mut dyn crate::txn::Companion);
        crate::txn::revert(state, &written.id, companion)?;
    }
    match lock.filter(|l| !l.is_installed()) {
        Some(lock) => lock.commit(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hook_refusal_has_its_code_and_fields() {
        let risk = Risk {
            score: 9,
            ..Risk::default()
        };
        let e: Error = HookError::RiskExceeded {
            risk: Box::new(risk.clone()),
            max: 5,
        }
        .into();
        assert_eq!(e.code, ErrorCode::RiskExceeded);
        assert_eq!(
            e.message,
            "the patch's risk score is 9, above the limit of 5"
        );
        assert_eq!(e.details(), Some(&serde_json::json!({ "risk": risk })));
        assert!(e.hint.is_some_and(|h| h.contains("--max-risk")));
        let e: Error = HookError::IndexChangedSinceApply.into();
        assert_eq!((e.code, e.exit_status()), (ErrorCode::RollbackFailed, 3));
        assert_eq!((e.path, e.hint), (None, None));
    }
}
