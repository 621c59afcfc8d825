//! Stage: orchestration (hooks). What an option adds around the plan and the commit, as
//! implementations of one trait, [`Hook`], registered from the options by [`register`] and
//! called by the one skeleton ([`super::sink::skeleton`]) at three places: before the plan,
//! after the plan (before the write) and after the commit; a refusal anywhere in the run goes
//! through [`Hook::on_refusal`]. The hooks: the `--index` guard (the paths a patch names, then
//! the planned changes, must match the index), the risk gate (`--max-risk`), the chip kept for
//! a patch refused at placement, the post-check (`--post-check`, with `--rollback-on-fail` a
//! revert of this transaction's id — and of the index entries it wrote — under the root's
//! lock), the formatters (`--formatter`, [`super::formatter`]), and a front end's own (the MCP session's permission check and read-back). The
//! three-way fallback and the rebase wrap the planner itself ([`super::source`]). All but the
//! risk gate need the `git` feature.

use std::path::Path;

use super::options::Options;
#[cfg(feature = "git")]
use super::options::PostCheck;
use super::sink::{Run, Written};
use super::source::Planned;
use super::{Applied, Refused, Request};
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
use crate::git::Repo;
use crate::plan::Plan;
use crate::risk::{self, Risk};
#[cfg(feature = "git")]
use crate::state::StateDir;

/// What a hook adds to a run's result, refused or not (the skeleton attaches it last).
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub risk: Option<Risk>,
    #[cfg(feature = "git")]
    pub verification: Option<Verification>,
}

impl Facts {
    /// Put the facts into a result.
    pub(crate) fn attach(self, out: &mut Result<Applied, Box<Refused>>) {
        match out {
            Ok(a) => {
                a.risk = self.risk;
                #[cfg(feature = "git")]
                {
                    a.verification = self.verification;
                }
            }
            Err(r) => {
                r.risk = self.risk;
                #[cfg(feature = "git")]
                {
                    r.verification = self.verification;
                }
            }
        }
    }
}

/// Something an option (or a front end) adds to a run. Every method has a default that does
/// nothing; an `Err` refuses the run with that error (nothing written, or — after the commit —
/// written and reverted by the hook itself).
pub(crate) trait Hook {
    /// After the recovery, before the plan: the parsed patch, through the run's tree.
    fn before_plan(&mut self, _run: &Run<'_, '_>) -> Result<(), Error> {
        Ok(())
    }
    /// After the plan, before the write: may check the plan, score it, or change the bytes it
    /// writes (the report's entries with them).
    fn after_plan(
        &mut self,
        _run: &Run<'_, '_>,
        _planned: &mut Planned,
        _facts: &mut Facts,
    ) -> Result<(), Error> {
        Ok(())
    }
    /// After a [`super::Mode::Write`] run concluded; `written` is None when nothing had to be
    /// written.
    fn after_commit(
        &mut self,
        _run: &Run<'_, '_>,
        _applied: &Applied,
        _written: Option<&Written>,
        _facts: &mut Facts,
    ) -> Result<(), Error> {
        Ok(())
    }
    /// The run was refused (anywhere, the root's opening included).
    fn on_refusal(&mut self, _refused: &mut Refused) {}
}

/// A front end keeps its hook to read what it saw after the run.
impl<H: Hook + ?Sized> Hook for &mut H {
    fn before_plan(&mut self, run: &Run<'_, '_>) -> Result<(), Error> {
        (**self).before_plan(run)
    }
    fn after_plan(
        &mut self,
        run: &Run<'_, '_>,
        planned: &mut Planned,
        facts: &mut Facts,
    ) -> Result<(), Error> {
        (**self).after_plan(run, planned, facts)
    }
    fn after_commit(
        &mut self,
        run: &Run<'_, '_>,
        applied: &Applied,
        written: Option<&Written>,
        facts: &mut Facts,
    ) -> Result<(), Error> {
        (**self).after_commit(run, applied, written, facts)
    }
    fn on_refusal(&mut self, refused: &mut Refused) {
        (**self).on_refusal(refused)
    }
}

/// The hooks a run's options ask for, in the order they run: the index guard, the
/// formatters, the risk gate, the post-check, the chip keeping; then the front end's
/// (`extra`). `root` is the directory as the caller named it (None: a memory tree).
pub(crate) fn register<'h>(
    opts: &'h Options,
    root: Option<&'h Path>,
    req: &'h Request<'h, 'h>,
    extra: Option<Box<dyn Hook + 'h>>,
) -> Vec<Box<dyn Hook + 'h>> {
    let mut hooks: Vec<Box<dyn Hook + 'h>> = Vec::new();
    #[cfg(feature = "git")]
    if opts.git.writes_index() && !opts.git.cached() {
        hooks.push(Box::new(IndexGuard { named: true }));
    }
    if !opts.formatters.is_empty() {
        // Each glob compiled when the options were made.
        if let Ok(hook) = super::formatter::FormatterHook::new(&opts.formatters) {
            hooks.push(Box::new(hook));
        }
    }
    if opts.max_risk.is_some() || opts.report_risk {
        hooks.push(Box::new(RiskGate { opts }));
    }
    #[cfg(feature = "git")]
    if let Some(check) = &opts.post_check {
        hooks.push(Box::new(PostCheckHook { check }));
    }
    #[cfg(feature = "git")]
    if let (true, Some(root), Some(input)) = (opts.keep_chips, root, req.input) {
        hooks.push(Box::new(KeepChip {
            root,
            input,
            patch: req.patch,
            opts,
        }));
    }
    #[cfg(not(feature = "git"))]
    let _ = (root, req);
    hooks.extend(extra);
    hooks
}

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
        let out = Error::new(err.code(), err.to_string());
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

/// `--index`: the paths the patch names before the plan (so that an unstaged edit is
/// reported as such rather than as a hunk that does not fit; `named`), then every changed
/// path (symlinks resolved) after it.
#[cfg(feature = "git")]
pub(crate) struct IndexGuard {
    pub named: bool,
}

#[cfg(feature = "git")]
impl Hook for IndexGuard {
    fn before_plan(&mut self, run: &Run<'_, '_>) -> Result<(), Error> {
        match (self.named, run.repo, run.tree) {
            (true, Some(repo), Some(tree)) => {
                let named = patch_requirements(run.req.patch, tree.path())?;
                check_index(repo, run.lock, &named)
            }
            _ => Ok(()),
        }
    }

    fn after_plan(
        &mut self,
        run: &Run<'_, '_>,
        planned: &mut Planned,
        _facts: &mut Facts,
    ) -> Result<(), Error> {
        match run.repo {
            Some(repo) => check_index(repo, run.lock, &requirements(&planned.plan.changes)),
            None => Ok(()),
        }
    }
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

/// `--max-risk N`: refuse (`risk_exceeded`) a plan scoring more; the risk is reported with
/// `max_risk` or `report_risk`.
struct RiskGate<'o> {
    opts: &'o Options,
}

impl Hook for RiskGate<'_> {
    fn after_plan(
        &mut self,
        _run: &Run<'_, '_>,
        planned: &mut Planned,
        facts: &mut Facts,
    ) -> Result<(), Error> {
        let risk = score(&planned.plan);
        let exceeded = self.opts.max_risk.filter(|&max| risk.score > max);
        // A refusal always shows the risk it refused.
        facts.risk = (self.opts.report_risk || exceeded.is_some()).then(|| risk.clone());
        match exceeded {
            Some(max) => Err(HookError::RiskExceeded {
                risk: Box::new(risk),
                max,
            }
            .into()),
            None => Ok(()),
        }
    }
}

/// Keep a patch refused at placement as a chip and name it (with the hunks that would have
/// applied) in the error; other refusals are left as they are.
#[cfg(feature = "git")]
struct KeepChip<'h> {
    root: &'h Path,
    input: &'h [u8],
    patch: &'h crate::model::PatchSet<'h>,
    opts: &'h Options,
}

#[cfg(feature = "git")]
impl Hook for KeepChip<'_> {
    fn on_refusal(&mut self, refused: &mut Refused) {
        if !chips::keeps_chip(refused.error.code) {
            return;
        }
        let state = match &self.opts.state {
            Some(s) => AgentState::in_state_dir(s.clone()),
            None => AgentState::for_root(self.root),
        };
        let Ok(state) = state else { return };
        if let Ok(id) = state.chips.keep(self.input) {
            let hunks = chips::assess(self.root, self.patch, &self.opts.locate_options());
            refused.error = chips::attach(refused.error.clone(), &id, &hunks);
        }
    }
}

/// `--post-check`: run the command after a commit that wrote something; on failure with
/// `rollback_on_fail`, revert what was written (the refusal is `post_check_failed`, or
/// `rollback_failed` when the revert failed). Its outcome is the result's `verification`.
#[cfg(feature = "git")]
struct PostCheckHook<'o> {
    check: &'o PostCheck,
}

#[cfg(feature = "git")]
impl Hook for PostCheckHook<'_> {
    fn after_commit(
        &mut self,
        run: &Run<'_, '_>,
        _applied: &Applied,
        written: Option<&Written>,
        facts: &mut Facts,
    ) -> Result<(), Error> {
        let (Some(written), Some(tree), Some(state)) = (written, run.tree, run.state) else {
            return Ok(());
        };
        match post_check(tree.path(), self.check, written, run.repo, state) {
            Ok(v) => {
                facts.verification = Some(v);
                Ok(())
            }
            Err(failed) => {
                let (error, v) = *failed;
                facts.verification = Some(v);
                Err(error)
            }
        }
    }
}

/// Run the post-check after a commit; on failure with `rollback_on_fail`, revert what was
/// written. `Ok(verification)`: passed, or failed and left in place; `Err`: reverted (the
/// error is `post_check_failed`), or the revert failed (`rollback_failed`).
#[cfg(feature = "git")]
fn post_check(
    root: &Path,
    check: &PostCheck,
    written: &Written,
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
fn revert(written: &Written, repo: Option<&Repo>, state: &StateDir) -> Result<(), Error> {
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
