//! Stage: the public entry points. Parse a patch, plan it against a directory or an in-memory
//! tree, and commit it (or only check it), returning the [`Report`] of SPEC §8.
//!
//! This module orchestrates; it never writes itself: the directory is changed only by
//! `txn::commit`, the memory tree only by [`MemTree::apply_changes`].
//!
//! ```
//! use apply_patch::apply::{apply_to_memory, ApplyOptions};
//! use apply_patch::tree::MemTree;
//!
//! let mut tree = MemTree::new();
//! tree.insert("hello.txt", b"hello\nworld\n".to_vec());
//! let patch = b"*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
//! let report = apply_to_memory(&mut tree, patch, &ApplyOptions::default());
//! assert!(report.ok, "{:?}", report.error);
//! assert_eq!(tree.get("hello.txt"), Some(&b"hello\nthere\n"[..]));
//! assert_eq!(report.files[0].path, "hello.txt");
//! ```

// `crate::Error` is one rich shape shared by every stage (SPEC §8); boxing it here alone
// would buy nothing.
#![allow(clippy::result_large_err)]

use std::path::Path;

use crate::error::{Error, ErrorCode};
use crate::guard::Globs;
use crate::locate::LocateOptions;
use crate::model::{Format, PatchSet};
use crate::parse::ParseOptions;
use crate::plan::{Plan, PlanOptions, Refusal};
use crate::report::{Report, Warning, WarningCode};
use crate::tree::{DiskTree, MemTree, Tree};

/// Every option of the apply command (SPEC §1, §3, §5, §6). The command line validates its
/// raw arguments into this struct; library callers build it directly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// `--format`: skip detection.
    pub format: Option<Format>,
    /// `-p N`; None: SPEC §3 defaults.
    pub strip: Option<usize>,
    /// `--recount`.
    pub recount: bool,
    /// `--unidiff-zero`.
    pub unidiff_zero: bool,
    /// `--reverse` (unified diffs only).
    pub reverse: bool,
    /// `--directory DIR`: prefix every path.
    pub directory: Option<String>,
    /// `--include GLOB` (repeatable): only matching files.
    pub include: Vec<String>,
    /// `--exclude GLOB` (repeatable): skip matching files.
    pub exclude: Vec<String>,
    /// `--window N`.
    pub window: usize,
    /// `--strict-base`.
    pub strict_base: bool,
    /// `--protect GLOB` (repeatable).
    pub protect: Vec<String>,
    /// `--allow-notebooks`.
    pub allow_notebooks: bool,
    /// `--check`: plan only; write nothing.
    pub check: bool,
    /// `--diff`: include the resulting unified diff.
    pub diff: bool,
    // git integration (src/git/flow.rs):
    /// `--index`: apply to the work tree and the git index together.
    pub index: bool,
    /// `--cached`: apply to the git index only.
    pub cached: bool,
    /// `--3way`: merge from the diff's base blob when a hunk does not apply.
    pub three_way: bool,
    /// `--conflict-markers`: with `--3way`, write conflicts with git-style markers.
    pub conflict_markers: bool,
    /// `--strict-balance`: refuse (`unbalanced_edit`) an edit that leaves a balanced file
    /// unbalanced, instead of warning.
    pub strict_balance: bool,
}

impl Default for ApplyOptions {
    fn default() -> Self {
        ApplyOptions {
            format: None,
            strip: None,
            recount: false,
            unidiff_zero: false,
            reverse: false,
            directory: None,
            include: Vec::new(),
            exclude: Vec::new(),
            window: LocateOptions::default().window,
            strict_base: false,
            protect: Vec::new(),
            allow_notebooks: false,
            check: false,
            diff: false,
            index: false,
            cached: false,
            three_way: false,
            conflict_markers: false,
            strict_balance: false,
        }
    }
}

impl ApplyOptions {
    fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            format: self.format,
            strip: self.strip,
            recount: self.recount,
            unidiff_zero: self.unidiff_zero,
        }
    }

    pub(crate) fn plan_options(&self) -> Result<PlanOptions, Error> {
        Ok(PlanOptions {
            locate: LocateOptions {
                window: self.window,
                unidiff_zero: self.unidiff_zero,
                bytes_only: false,
            },
            strict_base: self.strict_base,
            protect: Globs::new(&self.protect)?,
            allow_notebooks: self.allow_notebooks,
            diff: self.diff,
            git: None,
            strict_balance: self.strict_balance,
        })
    }
}

/// Parse patch input and apply the selection options (`--reverse`, `--include`,
/// `--exclude`, `--directory`).
pub fn parse_patch<'a>(input: &'a [u8], opts: &ApplyOptions) -> Result<PatchSet<'a>, Error> {
    let mut patch = crate::parse::parse(input, &opts.parse_options())?;
    if opts.reverse {
        if patch.format != Format::Unified {
            return Err(Error::new(
                ErrorCode::Usage,
                format!(
                    "--reverse works on unified diffs only; this patch is in the {} format",
                    patch.format.as_str()
                ),
            ));
        }
        patch = crate::transform::reverse(patch)?;
    }
    if !opts.include.is_empty() || !opts.exclude.is_empty() {
        patch = crate::transform::select(patch, &opts.include, &opts.exclude)?;
    }
    if let Some(dir) = &opts.directory {
        patch = crate::transform::prefix(patch, dir);
    }
    Ok(patch)
}

/// Parse and plan against any tree, writing nothing.
pub fn plan(tree: &dyn Tree, input: &[u8], opts: &ApplyOptions) -> Result<Plan, Refusal> {
    let refusal = |error: Error| Refusal {
        error,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let patch = parse_patch(input, opts).map_err(refusal)?;
    let plan_opts = opts.plan_options().map_err(refusal)?;
    crate::plan::plan(tree, &patch, &plan_opts)
}

/// Apply (or with `check`, only plan) a patch to the directory `root`.
pub fn apply_to_dir(root: &Path, input: &[u8], opts: &ApplyOptions) -> Report {
    if !root.is_dir() {
        let error = Error::new(
            ErrorCode::Usage,
            format!("the root {} is not a directory", root.display()),
        )
        .with_hint("pass an existing directory with --root");
        return Report::failure(error, Vec::new(), Vec::new());
    }
    let tree = match DiskTree::new(root) {
        Ok(t) => t,
        Err(e) => return Report::failure(e, Vec::new(), Vec::new()),
    };
    let txn_opts = crate::txn::TxnOptions::new(tree.path());
    // Before anything is planned, for the plain and the git flows alike.
    let mut recovered = match recover_first(&txn_opts, opts.check) {
        Ok(w) => w,
        Err(e) => return Report::failure(e, Vec::new(), Vec::new()),
    };
    // git integration: inside a git work tree (or with a git flag) the git flow takes over.
    #[cfg(not(feature = "git"))]
    if opts.index || opts.cached || opts.three_way {
        let error = Error::new(ErrorCode::Usage, "--index, --cached and --3way need git")
            .with_hint("build apply-patch with its `git` feature");
        return Report::failure(error, Vec::new(), recovered);
    }
    #[cfg(feature = "git")]
    if let Some(mut report) = crate::git::flow::apply_in_repo(&tree, input, opts) {
        report.warnings.splice(0..0, recovered);
        return report;
    }
    let mut planned = match plan(&tree, input, opts) {
        Ok(p) => p,
        Err(r) => {
            recovered.extend(r.warnings);
            return Report::failure(r.error, r.files, recovered);
        }
    };
    if opts.check || planned.changes.is_empty() {
        return finished(planned, opts.check, recovered);
    }
    let audit = audit_record(&planned);
    let changes = std::mem::take(&mut planned.changes);
    match crate::txn::commit(&txn_opts, changes, &audit) {
        Ok(committed) => {
            recovered.extend(txn_warnings(committed.recovered));
            let mut report = finished(planned, false, recovered);
            report.warnings.extend(txn_warnings(committed.warnings));
            report
        }
        Err(e) => {
            recovered.extend(planned.warnings);
            Report::failure(e, planned.files, recovered)
        }
    }
}

/// Step zero of every run that reads a tree on disk (SPEC §6): finish or roll back a
/// transaction a crash left under the root before planning against it; `check` (a run that
/// must not write) refuses instead, naming `apply-patch recover`. Returns the `recovered`
/// warnings for the run's report.
pub fn recover_first(
    txn_opts: &crate::txn::TxnOptions,
    check: bool,
) -> Result<Vec<Warning>, Error> {
    let access = if check {
        crate::txn::Access::ReadOnly
    } else {
        crate::txn::Access::Write
    };
    crate::txn::recover_first(txn_opts, access).map(txn_warnings)
}

/// Apply (or with `check`, only plan) a patch to an in-memory tree.
pub fn apply_to_memory(tree: &mut MemTree, input: &[u8], opts: &ApplyOptions) -> Report {
    let planned = match plan(tree, input, opts) {
        Ok(p) => p,
        Err(r) => return Report::failure(r.error, r.files, r.warnings),
    };
    if !opts.check {
        tree.apply_changes(&planned.changes);
    }
    finished(planned, opts.check, Vec::new())
}

pub(crate) fn finished(plan: Plan, checked_only: bool, mut before: Vec<Warning>) -> Report {
    before.extend(plan.warnings);
    let mut report = Report::success(plan.files, before);
    report.diff = plan.diff;
    report.checked_only = checked_only;
    report
}

/// What the audit log records about each file of the plan.
pub(crate) fn audit_record(plan: &Plan) -> crate::txn::AuditRecord {
    crate::txn::AuditRecord {
        files: plan
            .files
            .iter()
            .map(|f| crate::txn::AuditFile {
                path: f.path.clone(),
                old_path: f.old_path.clone(),
                op: f.op.as_str().to_string(),
                lines_added: f.added,
                lines_removed: f.removed,
            })
            .collect(),
    }
}

/// Transaction warnings as report warnings (`recovered`, `later_edit`, or `cleanup` for a
/// failed step after the commit point).
pub fn txn_warnings(warnings: Vec<crate::txn::TxnWarning>) -> Vec<Warning> {
    warnings
        .into_iter()
        .map(|w| {
            let code = match w.code.as_str() {
                "recovered" => WarningCode::Recovered,
                crate::txn::stage::LATER_EDIT => WarningCode::LaterEdit,
                _ => WarningCode::Cleanup,
            };
            let mut out = Warning::new(code, w.message);
            out.path = w.path;
            out
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_of_agent_patch_is_a_usage_error() {
        let mut tree = MemTree::new();
        let opts = ApplyOptions {
            reverse: true,
            ..ApplyOptions::default()
        };
        let patch = b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
        let report = apply_to_memory(&mut tree, patch, &opts);
        assert_eq!(report.error.map(|e| e.code), Some(ErrorCode::Usage));
    }
}
