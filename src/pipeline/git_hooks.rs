//! Stage: orchestration (the hooks that need git). The `--index` guard, the chip kept for a
//! patch refused at placement, and the post-check with its revert, as [`Hook`]s; registered
//! by [`super::hooks::register`].

use std::path::Path;

use super::hooks::{Facts, Hook, HookError};
use super::options::{Options, PostCheck};
use super::sink::{Run, Written};
use super::source::Planned;
use super::{Applied, Refused, Request};
use crate::agent::chips;
use crate::agent::postcheck::{self, Verification};
use crate::agent::AgentState;
use crate::error::Error;
use crate::git::changes::{check_index, patch_requirements, requirements};
use crate::git::Repo;
use crate::state::StateDir;

/// Add the hooks of this module the options ask for (in this order).
pub(super) fn register<'h>(
    hooks: &mut Vec<Box<dyn Hook + 'h>>,
    opts: &'h Options,
    root: Option<&'h Path>,
    req: &'h Request<'h, 'h>,
) {
    if opts.git.writes_index() && !opts.git.cached() {
        hooks.push(Box::new(IndexGuard { named: true }));
    }
    if let Some(check) = &opts.post_check {
        hooks.push(Box::new(PostCheckHook { check }));
    }
    if let (true, Some(_), Some(input)) = (opts.keep_chips, root, req.input) {
        hooks.push(Box::new(KeepChip {
            input,
            patch: req.patch,
            opts,
        }));
    }
}

/// `--index`: the paths the patch names before the plan (so that an unstaged edit is
/// reported as such rather than as a hunk that does not fit; `named`), then every changed
/// path (symlinks resolved) after it.
pub(crate) struct IndexGuard {
    pub named: bool,
}

impl Hook for IndexGuard {
    fn before_plan(&mut self, run: &Run<'_, '_>) -> Result<(), Error> {
        match (self.named, run.repo, run.tree) {
            (true, Some(repo), Some(tree)) => {
                let named = patch_requirements(run.req.patch, tree.path())?;
                Ok(check_index(repo, run.lock, &named)?)
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
            Some(repo) => Ok(check_index(
                repo,
                run.lock,
                &requirements(&planned.plan.changes),
            )?),
            None => Ok(()),
        }
    }
}

/// Keep a patch refused at placement as a chip and name it (with the hunks that would have
/// applied) in the error; other refusals are left as they are. The chip goes to the run's
/// state place and the hunks are assessed through the run's tree: nothing is opened again.
struct KeepChip<'h> {
    input: &'h [u8],
    patch: &'h crate::model::PatchSet<'h>,
    opts: &'h Options,
}

impl Hook for KeepChip<'_> {
    fn on_refusal(&mut self, run: Option<&Run<'_, '_>>, refused: &mut Refused) {
        // A placement refusal comes from the plan, so after the root's opening.
        let (Some(tree), Some(state)) = (run.and_then(|r| r.tree), run.and_then(|r| r.state))
        else {
            return;
        };
        if !chips::keeps_chip(refused.error.code) {
            return;
        }
        let Ok(state) = AgentState::in_state_dir(state.clone()) else {
            return;
        };
        if let Ok(id) = state.chips.keep(self.input) {
            let hunks = chips::assess(tree, self.patch, &self.opts.locate_options());
            refused.error = chips::attach(refused.error.clone(), &id, &hunks);
        }
    }
}

/// `--post-check`: run the command after a commit that wrote something; on failure with
/// `rollback_on_fail`, revert what was written (the refusal is `post_check_failed`, or
/// `rollback_failed` when the revert failed). Its outcome is the result's `verification`.
struct PostCheckHook<'o> {
    check: &'o PostCheck,
}

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
            stderr_tail: Error::from(e).message,
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

fn rollback_failed(e: Error) -> Error {
    crate::txn::TxnError::RevertFailed { cause: Box::new(e) }.into()
}

/// Revert this run's transaction (by its id, under the root's lock) and the index entries it
/// wrote, together; refused when another transaction, or another index writer, came since.
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
        Some(lock) => Ok(lock.commit()?),
        None => Ok(()),
    }
}
