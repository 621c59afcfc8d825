//! Stage: agent orchestration. What an agent pipeline needs around one apply: plan with the
//! applier's planner, rebase a stale `Base` (`--rebase`), score the risk (`--max-risk`), keep
//! a preview instead of writing (`--preview`), commit through the transaction, run the
//! post-check (`--post-check`, `--rollback-on-fail`), and keep a refused patch as a chip.
//!
//! Writes the work tree only through `txn::commit` (and `txn::undo_with` for a rollback);
//! everything else it keeps goes to the state place.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::agent::chips::{self, ChipStore};
use crate::agent::postcheck::{self, Verification};
use crate::agent::rebase;
use crate::agent::risk::{self, Risk};
use crate::agent::snapshots::SnapshotStore;
use crate::agent::{sha256_hex, AgentState};
use crate::apply::{self, ApplyOptions};
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::model::FileOp;
use crate::plan::Plan;
use crate::report::{FileReport, Report, Warning, WarningCode};
use crate::state::StateDir;
use crate::tree::{DiskTree, Kind, Node, Tree};
use crate::txn::{self, NewState, Snapshot, TxnOptions};

/// The agent options of one apply (the rest are [`ApplyOptions`]).
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// `--rebase`: merge onto a file that changed since its `*** Base:`.
    pub rebase: bool,
    /// `--preview`: plan, keep the plan, print the diff and an event id; write nothing.
    pub preview: bool,
    /// `--post-check CMD`.
    pub post_check: Option<String>,
    /// How long the post-check may run (None: [`postcheck::DEFAULT_TIMEOUT`]).
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
    fn from_report(report: Report) -> Self {
        let exit = report.exit_status();
        AgentReport {
            report,
            risk: None,
            verification: None,
            preview: None,
            exit,
        }
    }

    fn failure(error: Error, files: Vec<FileReport>, warnings: Vec<Warning>) -> Self {
        AgentReport::from_report(Report::failure(error, files, warnings))
    }

    /// The JSON object, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .expect("a report serialises because every field is plain data");
        s.push('\n');
        s
    }
}

/// Apply `input` to `root` with the agent options.
pub fn apply_to_dir(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
) -> AgentReport {
    if let Err(e) = crate::agent::check_root(root) {
        return AgentReport::failure(e, Vec::new(), Vec::new());
    }
    if opts.index || opts.cached || opts.three_way || opts.conflict_markers {
        let e = Error::new(
            ErrorCode::Usage,
            "--rebase, --preview, --post-check and --max-risk do not go together with --index, \
             --cached or --3way",
        )
        .with_hint("run the git-integrated apply and the agent options as separate steps");
        return AgentReport::failure(e, Vec::new(), Vec::new());
    }
    let tree = match DiskTree::new(root) {
        Ok(t) => t,
        Err(e) => return AgentReport::failure(e, Vec::new(), Vec::new()),
    };
    let txn_opts = TxnOptions {
        state: agent.state.clone(),
        ..TxnOptions::new(tree.path())
    };
    // A preview plans for a later commit: it recovers like an apply; only `--check` refuses.
    let recovered = match apply::recover_first(&txn_opts, opts.check) {
        Ok(w) => w,
        Err(e) => return AgentReport::failure(e, Vec::new(), Vec::new()),
    };
    let mut report = plan_and_commit(&tree, input, opts, agent);
    report.report.warnings.splice(0..0, recovered);
    report
}

/// [`apply_to_dir`] once any crashed transaction is recovered.
fn plan_and_commit(
    tree: &DiskTree,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
) -> AgentReport {
    let state = || match &agent.state {
        Some(s) => AgentState::in_state_dir(s.clone()),
        None => AgentState::for_root(tree.path()),
    };
    let mut plan_opts = opts.clone();
    plan_opts.diff |= agent.preview;
    let planned = match plan_with_rebase(tree, input, &plan_opts, agent, &state) {
        Ok(p) => p,
        Err(r) => return refused(tree.path(), input, opts, r, &state),
    };
    let risk = score(&planned);
    let mut out = |report: Report| {
        let mut r = AgentReport::from_report(report);
        r.risk = agent.report_risk.then(|| risk.clone());
        r
    };
    if let Some(max) = agent.max_risk {
        if risk.score > max {
            let e = Error::new(
                ErrorCode::RiskExceeded,
                format!(
                    "the patch's risk score is {}, above the limit of {max}",
                    risk.score
                ),
            )
            .with_hint("split the patch into smaller ones, or ask for a higher --max-risk")
            .with_details(serde_json::json!({"risk": risk}));
            let mut r = out(Report::failure(e, planned.files, planned.warnings));
            r.risk = Some(risk);
            return r;
        }
    }
    if opts.check {
        return out(success(planned, true, Vec::new()));
    }
    if agent.preview {
        return preview(planned, &state, &mut out);
    }
    commit(tree, planned, agent, &state, out)
}

fn success(plan: Plan, checked_only: bool, mut before: Vec<Warning>) -> Report {
    before.extend(plan.warnings);
    let mut report = Report::success(plan.files, before);
    report.diff = plan.diff;
    report.checked_only = checked_only;
    report
}

fn preview(
    planned: Plan,
    state: &dyn Fn() -> Result<AgentState, Error>,
    out: &mut dyn FnMut(Report) -> AgentReport,
) -> AgentReport {
    let changes: Vec<(String, Snapshot, NewState)> = planned
        .changes
        .iter()
        .map(|c| (c.path.clone(), c.before.clone(), c.after.clone()))
        .collect();
    let files = planned.files.clone();
    // Nothing is written, but the report is the preview's own (not a `--check`'s).
    let report = success(planned, false, Vec::new());
    let saved = state().and_then(|s| {
        let json = serde_json::to_value(&report).unwrap_or_default();
        s.previews.save(&changes, json)
    });
    match saved {
        Ok(id) => {
            let mut r = out(report);
            r.preview = Some(id);
            r
        }
        Err(e) => out(Report::failure(e, files, Vec::new())),
    }
}

fn commit(
    tree: &DiskTree,
    planned: Plan,
    agent: &AgentOptions,
    state: &dyn Fn() -> Result<AgentState, Error>,
    mut out: impl FnMut(Report) -> AgentReport,
) -> AgentReport {
    if planned.changes.is_empty() {
        return out(success(planned, false, Vec::new()));
    }
    let txn_opts = TxnOptions {
        state: agent.state.clone(),
        ..TxnOptions::new(tree.path())
    };
    let committed = match txn::commit(
        &txn_opts,
        planned.changes.clone(),
        &apply::audit_record(&planned),
    ) {
        Ok(c) => c,
        Err(e) => return out(Report::failure(e, planned.files, planned.warnings)),
    };
    let mut before = apply::txn_warnings(committed.recovered);
    before.extend(apply::txn_warnings(committed.warnings));
    let files = planned.files.clone();
    let warnings_after = planned.warnings.clone();
    let report = success(planned, false, before);
    let Some(cmd) = &agent.post_check else {
        return out(report);
    };
    let timeout = agent
        .post_check_timeout
        .unwrap_or(postcheck::DEFAULT_TIMEOUT);
    let mut verification =
        postcheck::run(tree.path(), cmd, timeout).unwrap_or_else(|e| Verification {
            command: cmd.clone(),
            status: "failed".into(),
            exit_code: None,
            stdout_tail: String::new(),
            stderr_tail: e.message,
            rolled_back: false,
        });
    let mut r = if verification.passed() {
        out(report)
    } else if !agent.rollback_on_fail {
        let mut r = out(report);
        r.exit = 4;
        r
    } else {
        let error = match roll_back(&committed.id, state) {
            Ok(()) => {
                verification.rolled_back = true;
                verification.to_error()
            }
            Err(e) => e,
        };
        out(Report::failure(error, files, warnings_after))
    };
    r.verification = Some(verification);
    r
}

/// Undo transaction `id` after a failed post-check, only while it is still the last one
/// (another change written meanwhile must not be reverted in its place).
fn roll_back(id: &str, state: &dyn Fn() -> Result<AgentState, Error>) -> Result<(), Error> {
    let failed = |why: String| {
        Error::new(
            ErrorCode::RollbackFailed,
            format!("the post-check failed and the change could not be rolled back: {why}"),
        )
        .with_hint("inspect the files; `apply-patch undo` reverts the last transaction")
    };
    let s = state().map_err(|e| failed(e.message))?;
    let last = std::fs::read_dir(s.state.undo_dir())
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .max()
        })
        .unwrap_or(None);
    if last.as_deref() != Some(id) {
        return Err(failed("another change was written after it".into()));
    }
    match txn::undo_with(&s.state, None) {
        Ok(u) if u.undone.as_deref() == Some(id) => Ok(()),
        Ok(_) => Err(failed("another change was written after it".into())),
        Err(e) => Err(failed(e.message)),
    }
}

/// The risk of a plan, from its per-file line counts.
fn score(plan: &Plan) -> Risk {
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

/// A refusal: kept as a chip when the patch reached placement, named in the error with the
/// hunks that would have applied.
fn refused(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    r: crate::plan::Refusal,
    state: &dyn Fn() -> Result<AgentState, Error>,
) -> AgentReport {
    let error = keep_chip(root, input, opts, r.error, state);
    AgentReport::failure(error, r.files, r.warnings)
}

/// Keep a patch refused at placement as a chip and name it (with the hunks that would have
/// applied) in the error; other errors are returned as they are.
pub fn keep_chip(
    root: &Path,
    input: &[u8],
    opts: &ApplyOptions,
    mut error: Error,
    state: &dyn Fn() -> Result<AgentState, Error>,
) -> Error {
    if chips::keeps_chip(error.code) {
        if let (Ok(patch), Ok(s)) = (apply::parse_patch(input, opts), state()) {
            let store: &ChipStore = &s.chips;
            if let Ok(id) = store.keep(input) {
                let locate = crate::locate::LocateOptions {
                    window: opts.window,
                    unidiff_zero: opts.unidiff_zero,
                    bytes_only: false,
                };
                let hunks = chips::assess(root, &patch, &locate);
                error = chips::attach(error, &id, &hunks);
            }
        }
    }
    error
}

/// An apply without agent options (the plain and git flows of [`apply::apply_to_dir`]), with
/// a refused patch kept as a chip.
pub fn apply_plain(root: &Path, input: &[u8], opts: &ApplyOptions) -> Report {
    let mut report = apply::apply_to_dir(root, input, opts);
    if opts.check {
        return report;
    }
    if let Some(error) = report.error.take() {
        let state = || AgentState::for_root(root);
        report.error = Some(keep_chip(root, input, opts, error, &state));
    }
    report
}

/// A disk tree that serves, for the paths being rebased, their base content instead of the
/// current one (with the current snapshot, which the commit re-checks).
struct BaseOverlay<'a> {
    disk: &'a DiskTree,
    bases: HashMap<String, Vec<u8>>,
}

impl Tree for BaseOverlay<'_> {
    fn root(&self) -> Option<&Path> {
        self.disk.root()
    }

    fn kind(&self, path: &str) -> Result<Kind, Error> {
        self.disk.kind(path)
    }

    fn shows_snapshot(&self, path: &str) -> bool {
        !self.bases.contains_key(path) && self.disk.shows_snapshot(path)
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), Error> {
        let (snapshot, node) = self.disk.read(path)?;
        match (self.bases.get(path), node) {
            (Some(base), Node::File { mode, .. }) => Ok((
                snapshot,
                Node::File {
                    bytes: base.clone().into(),
                    mode,
                },
            )),
            (_, node) => Ok((snapshot, node)),
        }
    }
}

/// One file being rebased: where it is read, where its result goes, and the three contents.
struct Rebasing {
    old: String,
    new: String,
    base: Vec<u8>,
    current: Vec<u8>,
    source: rebase::BaseSource,
    version: String,
}

/// Plan; with `--rebase`, a `stale_file` refusal caused by `*** Base:` versions whose content
/// is known is planned again on those bases and merged onto the current files.
fn plan_with_rebase(
    tree: &DiskTree,
    input: &[u8],
    opts: &ApplyOptions,
    agent: &AgentOptions,
    state: &dyn Fn() -> Result<AgentState, Error>,
) -> Result<Plan, crate::plan::Refusal> {
    let first = crate::git::flow::plan_on_disk(tree, input, opts);
    let refusal = match first {
        Err(r) if agent.rebase && r.error.code == ErrorCode::StaleFile => r,
        other => return other,
    };
    let store = state().ok().map(|s| s.snapshots);
    let rebasing = match stale_bases(tree, input, opts, store.as_ref()) {
        Ok(list) if !list.is_empty() => list,
        _ => return Err(refusal),
    };
    let overlay = BaseOverlay {
        disk: tree,
        bases: rebasing
            .iter()
            .map(|r| (r.old.clone(), r.base.clone()))
            .collect(),
    };
    let mut plan = crate::git::flow::plan_on_disk(&overlay, input, opts)?;
    for r in &rebasing {
        merge_one(&mut plan, r).map_err(|error| crate::plan::Refusal {
            error,
            files: plan.files.clone(),
            warnings: plan.warnings.clone(),
        })?;
    }
    if opts.diff {
        plan.diff = Some(diff_of(tree, &plan));
    }
    Ok(plan)
}

/// The file patches whose `*** Base:` no longer matches the file and whose base content is
/// known (Update and Move only: a stale Delete stays refused).
fn stale_bases(
    tree: &DiskTree,
    input: &[u8],
    opts: &ApplyOptions,
    store: Option<&SnapshotStore>,
) -> Result<Vec<Rebasing>, Error> {
    let patch = apply::parse_patch(input, opts)?;
    let root = tree.path();
    let mut out = Vec::new();
    for fp in &patch.files {
        let (Some(version), Some(old), Some(new)) = (&fp.base, &fp.old_path, &fp.new_path) else {
            continue;
        };
        if !matches!(fp.op, FileOp::Modify | FileOp::Rename) {
            continue;
        }
        let cd = patch.cd.as_deref();
        let old =
            crate::guard::resolve(tree, &crate::guard::normalize(old, cd, Some(root))?, true)?;
        let new = crate::guard::normalize(new, cd, Some(root))?;
        let new = if new == old { old.clone() } else { new };
        let Ok((_, Node::File { bytes: current, .. })) = tree.read(&old) else {
            continue;
        };
        if sha256_hex(&current).starts_with(&version.to_ascii_lowercase()) {
            continue;
        }
        let Some((base, source)) = rebase::find_base(root, &old, version, store) else {
            continue;
        };
        out.push(Rebasing {
            old,
            new,
            base,
            current: current.into_vec(),
            source,
            version: version.clone(),
        });
    }
    Ok(out)
}

/// Replace a rebased file's planned content (the patch applied to its base) by the merge of
/// that change onto the current content, and say so.
fn merge_one(plan: &mut Plan, r: &Rebasing) -> Result<(), Error> {
    let change = plan
        .changes
        .iter_mut()
        .find(|c| c.path == r.new && matches!(c.after, NewState::File { .. }));
    let merged = match change {
        Some(c) => {
            let NewState::File { bytes, .. } = &mut c.after else {
                return Ok(());
            };
            let merged = Content::from(rebase::merge(&r.new, &r.base, &r.current, bytes)?);
            *bytes = merged.clone();
            merged
        }
        // The patch changed nothing on its base (already applied there): nothing to merge.
        None => return Ok(()),
    };
    if let Some(f) = plan.files.iter_mut().find(|f| f.path == r.new) {
        f.old_sha256 = Some(sha256_hex(&r.current));
        f.set_new_content(&merged);
        // The snippet was numbered on the base; it would mislead on the merged file.
        f.snippet = None;
    }
    plan.warnings.push(
        Warning::new(
            WarningCode::Rebased,
            format!(
                "changed since version {}: the patch was placed on that version ({}) and its \
                 change merged onto the current file",
                r.version,
                r.source.as_str()
            ),
        )
        .with_path(&r.new),
    );
    Ok(())
}

/// The unified diff of a whole plan against the disk.
fn diff_of(tree: &DiskTree, plan: &Plan) -> String {
    let mut out = String::new();
    for c in &plan.changes {
        let old = match tree.read(&c.path) {
            Ok((_, Node::File { bytes, .. })) => Some(bytes),
            _ => None,
        };
        let new = match &c.after {
            NewState::File { bytes, .. } => Some(bytes.clone()),
            _ => None,
        };
        out.push_str(&crate::render::file_diff(
            old.as_ref().map(|_| c.path.as_str()),
            new.as_ref().map(|_| c.path.as_str()),
            old.as_deref().unwrap_or_default(),
            new.as_deref().unwrap_or_default(),
        ));
    }
    out
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
    match crate::agent::preview::confirm(root, &state, id) {
        Ok((preview, committed)) => {
            let mut warnings = apply::txn_warnings(committed.recovered);
            warnings.extend(apply::txn_warnings(committed.warnings));
            ConfirmReport {
                ok: true,
                preview: preview.id,
                files: preview.report.get("files").cloned().unwrap_or_default(),
                warnings,
                error: None,
            }
        }
        Err(e) => failed(e),
    }
}
