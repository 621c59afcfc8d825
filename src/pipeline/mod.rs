//! Stage: orchestration. The one apply pipeline: the command line, the MCP tools,
//! `confirm`, `check-patches` and the library all run this sequence, and no other copy of it
//! exists:
//!
//! 1. recover a transaction a crash left under the root (a [`Mode::Check`] refuses instead);
//! 2. the patch, parsed once by the caller ([`parse`]), is the run's request; the chip kept
//!    on a refusal reuses it;
//! 3. a *source* says which tree is planned against ([`source`]: the disk, the git work tree,
//!    the index, a memory tree; a base overlay for `--rebase`);
//! 4. *hooks* add what a flag adds ([`hooks`]): the `--index` guard, the three-way fallback
//!    and the rebase around the planner, the risk gate, chips and the post-check;
//! 5. a *sink* takes the plan ([`sink`]: the disk transaction, the index, both, a memory
//!    tree, a kept preview); the work tree and the index are both prepared before either
//!    commits, and a revert is always of this transaction's id, under the root's lock.
//!
//! ```
//! use apply_patch::pipeline::{self, Mode, Options, Target};
//! use apply_patch::tree::MemTree;
//!
//! let mut tree = MemTree::new();
//! tree.insert("hello.txt", b"hello\nworld\n".to_vec());
//! let patch = b"*** Begin Patch\n*** Update File: hello.txt\n@@\n hello\n-world\n+there\n*** End Patch\n";
//! let applied = pipeline::apply_bytes(Target::Memory(&mut tree), patch, &Options::default(), Mode::Write)
//!     .expect("applies");
//! assert_eq!(applied.files[0].path, "hello.txt");
//! assert_eq!(tree.get("hello.txt"), Some(&b"hello\nthere\n"[..]));
//! ```

// `check-patches` is a command of the command line.
#[cfg(feature = "cli")]
mod check;
#[cfg(feature = "git")]
pub mod confirm;
pub mod formatter;
#[cfg(feature = "git")]
mod git_hooks;
#[cfg(feature = "git")]
mod git_sink;
pub mod hooks;
pub mod options;
#[cfg(feature = "mcp")]
pub mod read;
#[cfg(feature = "git")]
mod rebase;
mod root;
pub mod sink;
pub mod source;
#[cfg(feature = "git")]
mod view;

use std::path::Path;

#[cfg(feature = "git")]
use crate::agent::postcheck::Verification;
use crate::error::Error;
use crate::model::PatchSet;
use crate::report::{FileReport, Report, Warning};
use crate::risk::Risk;
use crate::tree::MemTree;
use crate::txn::TxnOptions;
use hooks::Hook;
use root::open_root;
use sink::Place;

pub use crate::state::StateDir;
pub use crate::txn::Durability;
#[cfg(feature = "cli")]
pub use check::{check_patches, CheckReport, PatchCheck};
pub use formatter::Formatter;
pub use options::{
    FrontEnd, GitMode, Mode, Options, OptionsBuilder, PostCheck, RawOptions, Stage, DURABILITY_ENV,
};
#[cfg(feature = "git")]
pub use view::{AgentReport, ConfirmReport};

/// What a patch is applied to.
#[derive(Debug)]
#[non_exhaustive]
pub enum Target<'t> {
    /// A directory on disk (inside a git work tree, with git's guards and modes).
    Dir(&'t Path),
    /// A tree in memory (no git, no state place: no preview, rebase or post-check).
    Memory(&'t mut MemTree),
}

/// A patch that applied (or, in [`Mode::Check`], would apply; in [`Mode::Preview`], was kept).
#[derive(Debug, Clone)]
#[must_use = "a result says whether the post-check passed and what was written"]
#[non_exhaustive]
pub struct Applied {
    pub files: Vec<FileReport>,
    pub warnings: Vec<Warning>,
    /// The resulting unified diff, when asked for (always in a preview).
    pub diff: Option<String>,
    pub risk: Option<Risk>,
    /// The post-check's outcome; applied but failed (without rollback) is exit status 4.
    #[cfg(feature = "git")]
    pub verification: Option<Verification>,
    /// The event id of a kept preview (`apply-patch confirm ID`).
    pub preview: Option<String>,
    pub mode: Mode,
}

/// A patch refused: nothing in the work tree changed (except conflict markers asked for).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Refused {
    pub error: Error,
    /// What would have been touched, up to the refusal.
    pub files: Vec<FileReport>,
    pub warnings: Vec<Warning>,
    pub diff: Option<String>,
    pub risk: Option<Risk>,
    #[cfg(feature = "git")]
    pub verification: Option<Verification>,
}

impl Applied {
    /// SPEC §8: 0, or 4 when the post-check failed and nothing was rolled back.
    pub fn exit_status(&self) -> u8 {
        #[cfg(feature = "git")]
        if let Some(v) = &self.verification {
            if !v.passed() {
                return 4;
            }
        }
        0
    }
}

impl Refused {
    /// A refusal before anything was planned (boxed, as results carry it: a refusal is
    /// large and rare).
    pub fn before(error: Error) -> Box<Refused> {
        Refused::of(error, Vec::new(), Vec::new())
    }

    pub(crate) fn of(error: Error, files: Vec<FileReport>, warnings: Vec<Warning>) -> Box<Refused> {
        Box::new(Refused {
            error,
            files,
            warnings,
            diff: None,
            risk: None,
            #[cfg(feature = "git")]
            verification: None,
        })
    }

    pub fn exit_status(&self) -> u8 {
        self.error.exit_status()
    }
}

impl From<crate::plan::Refusal> for Refused {
    fn from(r: crate::plan::Refusal) -> Refused {
        *Refused::of(r.error, r.files, r.warnings)
    }
}

impl From<Box<crate::plan::Refusal>> for Box<Refused> {
    fn from(r: Box<crate::plan::Refusal>) -> Box<Refused> {
        let r = *r;
        Refused::of(r.error, r.files, r.warnings)
    }
}

/// The JSON view of a result (SPEC §8's report), built once, where it is printed or sent:
/// `Report::from(&result)`. The library itself returns the `Result`.
impl From<&Result<Applied, Box<Refused>>> for Report {
    fn from(outcome: &Result<Applied, Box<Refused>>) -> Report {
        match outcome {
            Ok(a) => Report::from(a),
            Err(r) => Report::from(&**r),
        }
    }
}

impl From<&Applied> for Report {
    fn from(a: &Applied) -> Report {
        let mut report = Report::success(a.files.clone(), a.warnings.clone());
        report.diff = a.diff.clone();
        report.checked_only = a.mode == Mode::Check;
        report
    }
}

impl From<&Refused> for Report {
    fn from(r: &Refused) -> Report {
        let mut report = Report::failure(r.error.clone(), r.files.clone(), r.warnings.clone());
        report.diff = r.diff.clone();
        report
    }
}

/// Parse patch input and apply the selection options (`--reverse`, `--include`,
/// `--exclude`, `--directory`). A run parses once; the result is its request.
pub fn parse<'a>(input: &'a [u8], opts: &Options) -> Result<PatchSet<'a>, Error> {
    let mut patch = crate::parse::parse(input, &opts.parse_options())?;
    if opts.reverse {
        // Refuses (`usage`) a patch that is not a unified diff.
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

/// Apply a parsed patch set to `target`.
pub fn apply(
    target: Target<'_>,
    patch: &PatchSet<'_>,
    opts: &Options,
    mode: Mode,
) -> Result<Applied, Box<Refused>> {
    run(target, &Request { input: None, patch }, opts, mode, None)
}

/// Parse `input` and apply it to `target` (a parse error is a refusal).
pub fn apply_bytes(
    target: Target<'_>,
    input: &[u8],
    opts: &Options,
    mode: Mode,
) -> Result<Applied, Box<Refused>> {
    apply_bytes_with(target, input, opts, mode, None)
}

/// [`apply_bytes`] with a front end's own hook (`extra`, see [`run`]): the one door for
/// patch bytes, so that a parse error is a refusal worded for the front end like any other.
pub(crate) fn apply_bytes_with(
    target: Target<'_>,
    input: &[u8],
    opts: &Options,
    mode: Mode,
    extra: Option<Box<dyn Hook + '_>>,
) -> Result<Applied, Box<Refused>> {
    let patch = parse(input, opts).map_err(|e| Refused::before(e.for_front_end(opts.front_end)))?;
    let request = Request {
        input: Some(input),
        patch: &patch,
    };
    run(target, &request, opts, mode, extra)
}

/// One run's request: the patch parsed once, with its bytes when there are any (a chip
/// keeps them).
pub(crate) struct Request<'p, 'a> {
    // Chips need the `git` feature; without it nothing keeps the bytes.
    #[cfg_attr(not(feature = "git"), allow(dead_code))]
    pub input: Option<&'a [u8]>,
    pub patch: &'p PatchSet<'a>,
}

/// The sequence (module docs), with a front end's own hook (`extra`) after the ones the
/// options register.
pub(crate) fn run(
    target: Target<'_>,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    extra: Option<Box<dyn Hook + '_>>,
) -> Result<Applied, Box<Refused>> {
    let mut out = run_for(target, req, opts, mode, extra);
    // Every refusal's hint in the words of the front end that runs.
    if let Err(refused) = &mut out {
        refused.error.set_front_end(opts.front_end);
    }
    out
}

/// [`run`], before the refusal is worded for its front end.
fn run_for(
    target: Target<'_>,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    extra: Option<Box<dyn Hook + '_>>,
) -> Result<Applied, Box<Refused>> {
    // The front ends checked before reading the patch; a library caller meets it here.
    opts.check(mode).map_err(Refused::before)?;
    #[cfg(not(feature = "git"))]
    if let Some(what) = opts.needs_git(mode) {
        return Err(Refused::before(
            crate::usage::UsageError::NeedsGitFeature { what }.into(),
        ));
    }
    let root = match &target {
        Target::Dir(root) => Some(*root),
        Target::Memory(_) => None,
    };
    let mut hooks = hooks::register(opts, root, req, extra);
    match target {
        Target::Memory(tree) => match sink::memory_can(opts, mode) {
            Ok(()) => sink::skeleton(&mut Place::Memory(tree), req, opts, mode, &mut hooks),
            Err(e) => Err(refused_before(e, &mut hooks)),
        },
        Target::Dir(root) => on_disk(root, req, opts, mode, &mut hooks),
    }
}

/// A refusal before the skeleton (before the root is open, or instead of it), through every
/// hook's [`Hook::on_refusal`]; the skeleton passes its own refusals through them.
fn refused_before(error: Error, hooks: &mut [Box<dyn Hook + '_>]) -> Box<Refused> {
    let mut refused = Refused::before(error);
    for hook in hooks.iter_mut() {
        hook.on_refusal(None, &mut refused);
    }
    refused
}

/// A run on a directory: the root opened once, the recovery, then the skeleton.
fn on_disk(
    root: &Path,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    hooks: &mut [Box<dyn Hook + '_>],
) -> Result<Applied, Box<Refused>> {
    let root = open_root(root, opts).map_err(|e| refused_before(e, hooks))?;
    // Step 1, before anything reads the tree; a preview recovers like an apply.
    let recovered =
        recover_first(&root.txn_opts, mode == Mode::Check).map_err(|e| refused_before(e, hooks))?;
    let mut out = root
        .open(opts.git, opts.git.writes_index() && mode == Mode::Write)
        .map_err(|e| refused_before(e, hooks))
        .and_then(|(opened, unreadable)| {
            let mut out =
                sink::skeleton(&mut Place::Disk(Box::new(opened)), req, opts, mode, hooks);
            warnings_of(&mut out).splice(0..0, unreadable);
            out
        });
    warnings_of(&mut out).splice(0..0, recovered);
    out
}

fn warnings_of(out: &mut Result<Applied, Box<Refused>>) -> &mut Vec<Warning> {
    match out {
        Ok(a) => &mut a.warnings,
        Err(r) => &mut r.warnings,
    }
}

/// Step zero of every run that reads a tree on disk (SPEC §6): finish or roll back a
/// transaction a crash left under the root before planning against it; `check` (a run that
/// must not write) refuses instead, naming `apply-patch recover`. Returns the `recovered`
/// warnings for the run's report.
pub(crate) fn recover_first(txn_opts: &TxnOptions, check: bool) -> Result<Vec<Warning>, Error> {
    let access = if check {
        crate::txn::Access::ReadOnly
    } else {
        crate::txn::Access::Write
    };
    crate::txn::recover_first(txn_opts, access).map(txn_warnings)
}

/// Transaction warnings as report warnings (`recovered`, `later_edit`, or `cleanup` for a
/// failed step after the commit point).
pub(crate) fn txn_warnings(warnings: Vec<crate::txn::TxnWarning>) -> Vec<Warning> {
    use crate::report::WarningCode;
    use crate::txn::TxnWarningCode;
    warnings
        .into_iter()
        .map(|w| {
            let code = match w.code {
                TxnWarningCode::Recovered => WarningCode::Recovered,
                TxnWarningCode::LaterEdit => WarningCode::LaterEdit,
                TxnWarningCode::Cleanup => WarningCode::Cleanup,
            };
            let mut out = Warning::new(code, w.message);
            out.path = w.path;
            out
        })
        .collect()
}

/// What the audit log records about each file of a plan.
pub(crate) fn audit_record(files: &[FileReport]) -> crate::txn::AuditRecord {
    crate::txn::AuditRecord {
        files: files
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
