//! Stage: report (agent applies). The agent options of an apply (`--rebase`, `--preview`,
//! `--post-check`, `--rollback-on-fail`, `--max-risk`) as the command line and the MCP tools
//! give them, and the JSON view of a result with `risk`, `verification` and `preview`. The
//! apply itself — and `confirm` — run the one pipeline ([`crate::pipeline`]).

use std::path::Path;
use std::time::Duration;

use crate::agent::postcheck::Verification;
use crate::apply::ApplyOptions;
use crate::error::Error;
use crate::model::PatchSet;
use crate::pipeline::{self, Applied, Refused, Target};
use crate::report::{Report, Warning};
use crate::risk::Risk;
use crate::state::StateDir;

/// The agent options of one apply (the rest are [`ApplyOptions`]).
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// `--rebase`: merge onto a file that changed since its `*** Base:`.
    pub rebase: bool,
    /// `--preview`: plan, keep the plan, print the diff and an event id; write nothing.
    pub preview: bool,
    /// `--post-check CMD`.
    pub post_check: Option<String>,
    /// How long the post-check may run (None: [`crate::agent::postcheck::DEFAULT_TIMEOUT`]).
    pub post_check_timeout: Option<Duration>,
    /// `--rollback-on-fail`: a failing post-check reverts the transaction.
    pub rollback_on_fail: bool,
    /// `--max-risk N`: refuse (`risk_exceeded`) a patch scoring more.
    pub max_risk: Option<u32>,
    /// The state place (None: the root's own).
    pub state: Option<StateDir>,
    /// Put the risk score in the report (always with `--max-risk` and `--preview`, and in
    /// MCP results; off for a plain apply, whose report stays SPEC §8's).
    pub report_risk: bool,
}

/// The report of an agent apply: SPEC §8's object plus `risk`, `verification` and `preview`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AgentReport {
    #[serde(flatten)]
    pub report: Report,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification: Option<Verification>,
    /// The event id of a kept preview (`apply-patch confirm ID`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// The exit status (SPEC §8; 4 when applied but the post-check failed).
    #[serde(skip)]
    pub exit: u8,
}

impl AgentReport {
    /// The view of a pipeline result.
    pub fn of(outcome: &Result<Applied, Box<Refused>>) -> Self {
        let report = pipeline::report(outcome);
        match outcome {
            Ok(a) => AgentReport {
                report,
                risk: a.risk.clone(),
                verification: a.verification.clone(),
                preview: a.preview.clone(),
                exit: a.exit_status(),
            },
            Err(r) => AgentReport {
                report,
                risk: r.risk.clone(),
                verification: r.verification.clone(),
                preview: None,
                exit: r.exit_status(),
            },
        }
    }

    /// The JSON object, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .expect("a report serialises because every field is plain data");
        s.push('\n');
        s
    }
}

/// Apply `input` to `root` with the agent options (a refused patch is kept as a chip).
pub fn apply_to_dir(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
) -> AgentReport {
    AgentReport::of(&apply_result(root, input, opts, agent))
}

/// [`apply_to_dir`]'s typed result: the pipeline's [`Applied`] or [`Refused`], for a caller
/// that renders it (the command line).
pub fn apply_result(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
) -> Result<Applied, Box<Refused>> {
    // A plain `--check` keeps no chip; every other run on disk does.
    let keep_chips = !opts.check || any(agent);
    run(root, input, opts, agent, keep_chips, &mut |_| Ok(()))
}

/// [`apply_to_dir`] with a check of the parsed patch after the recovery, before the plan
/// (the MCP session's permission check).
pub fn apply_gated(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
    gate: &mut dyn FnMut(&PatchSet<'_>) -> Result<(), Error>,
) -> AgentReport {
    AgentReport::of(&run(root, input, opts, agent, true, gate))
}

fn run(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
    keep_chips: bool,
    gate: &mut dyn FnMut(&PatchSet<'_>) -> Result<(), Error>,
) -> Result<Applied, Box<Refused>> {
    let (mut options, mode) =
        pipeline::Options::from_flags(opts, agent).map_err(Refused::before)?;
    options.keep_chips = keep_chips;
    let patch = pipeline::parse(input, &options).map_err(Refused::before)?;
    let request = pipeline::Request {
        input: Some(input),
        patch: &patch,
    };
    pipeline::run(Target::Dir(root), &request, &options, mode, Some(gate))
}

/// True when any agent option is set.
fn any(agent: &AgentOptions) -> bool {
    agent.rebase
        || agent.preview
        || agent.post_check.is_some()
        || agent.rollback_on_fail
        || agent.max_risk.is_some()
}

/// The report of `apply-patch confirm ID`: the files as the preview planned them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConfirmReport {
    pub ok: bool,
    pub preview: String,
    /// The `files` of the preview's report (what was written).
    pub files: serde_json::Value,
    pub warnings: Vec<Warning>,
    pub error: Option<Error>,
}

impl ConfirmReport {
    pub fn exit_status(&self) -> u8 {
        self.error.as_ref().map_or(0, Error::exit_status)
    }
}

/// `apply-patch confirm ID`: commit a kept preview, exactly once.
pub fn confirm(root: &Path, id: &str, state: Option<StateDir>) -> ConfirmReport {
    let failed = |e: Error| ConfirmReport {
        ok: false,
        preview: id.to_string(),
        files: serde_json::Value::Array(Vec::new()),
        warnings: Vec::new(),
        error: Some(e),
    };
    let state = match state.map(Ok).unwrap_or_else(|| StateDir::for_root(root)) {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    match pipeline::confirm::confirm(root, &state, id) {
        Ok((preview, warnings)) => ConfirmReport {
            ok: true,
            preview: preview.id,
            files: preview.report.get("files").cloned().unwrap_or_default(),
            warnings,
            error: None,
        },
        Err(e) => failed(e),
    }
}
