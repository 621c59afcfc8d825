//! Stage: orchestration (hooks). What an option adds around the plan and the commit, as
//! implementations of one trait, [`Hook`], registered from the options by [`register`] and
//! called by the one skeleton ([`super::sink::skeleton`]) at three places: before the plan,
//! after the plan (before the write) and after the commit; a refusal anywhere in the run goes
//! through [`Hook::on_refusal`]. The hooks: the `--index` guard (the paths a patch names, then
//! the planned changes, must match the index), the risk gate (`--max-risk`), the chip kept for
//! a patch refused at placement, the post-check (`--post-check`, with `--rollback-on-fail` a
//! revert of this transaction's id — and of the index entries it wrote — under the root's
//! lock; these three need the `git` feature and live in `git_hooks`), the formatters
//! (`--formatter`, [`super::formatter`]), and a front end's own (the MCP session's permission
//! check and read-back). The three-way fallback and the rebase wrap the planner itself
//! ([`super::source`]).

use std::path::Path;

use super::options::Options;
use super::sink::{Run, Written};
use super::source::Planned;
use super::{Applied, Refused, Request};
#[cfg(feature = "git")]
use crate::agent::postcheck::Verification;
use crate::error::{Error, ErrorCode};
use crate::plan::Plan;
use crate::risk::{self, Risk};

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
    /// The run was refused (anywhere, the root's opening included); `run` is the run's
    /// opened place when the refusal came after the root's opening (None before it).
    fn on_refusal(&mut self, _run: Option<&Run<'_, '_>>, _refused: &mut Refused) {}
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
    fn on_refusal(&mut self, run: Option<&Run<'_, '_>>, refused: &mut Refused) {
        (**self).on_refusal(run, refused)
    }
}

/// The hooks a run's options ask for, in the order they run: the index guard, the
/// post-check and the chip keeping (`git_hooks`), the formatters, the risk gate; then the
/// front end's (`extra`). `root` is the directory as the caller named it (None: a memory tree).
pub(crate) fn register<'h>(
    opts: &'h Options,
    root: Option<&'h Path>,
    req: &'h Request<'h, 'h>,
    extra: Option<Box<dyn Hook + 'h>>,
) -> Vec<Box<dyn Hook + 'h>> {
    let mut hooks: Vec<Box<dyn Hook + 'h>> = Vec::new();
    // The index guard, the post-check and the chips: they act at other steps than the
    // formatters and the risk gate, and the guard checks the plan before them.
    #[cfg(feature = "git")]
    super::git_hooks::register(&mut hooks, opts, root, req);
    #[cfg(not(feature = "git"))]
    let _ = (root, req);
    if !opts.formatters.is_empty() {
        hooks.push(Box::new(super::formatter::FormatterHook {
            formatters: &opts.formatters,
        }));
    }
    if opts.max_risk.is_some() || opts.report_risk {
        hooks.push(Box::new(RiskGate { opts }));
    }
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
