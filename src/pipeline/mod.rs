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
pub mod hooks;
pub mod options;
#[cfg(feature = "mcp")]
pub mod read;
#[cfg(feature = "git")]
mod rebase;
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
use crate::tree::{DiskTree, MemTree};
use crate::txn::TxnOptions;

pub use crate::state::StateDir;
pub use crate::txn::Durability;
#[cfg(feature = "cli")]
pub use check::{check_patches, CheckReport, PatchCheck};
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
    let patch = parse(input, opts).map_err(|e| Refused::before(e.for_front_end(opts.front_end)))?;
    let request = Request {
        input: Some(input),
        patch: &patch,
    };
    run(target, &request, opts, mode, None)
}

/// One run's request: the patch parsed once, with its bytes when there are any (a chip
/// keeps them).
pub(crate) struct Request<'p, 'a> {
    // Chips need the `git` feature; without it nothing keeps the bytes.
    #[cfg_attr(not(feature = "git"), allow(dead_code))]
    pub input: Option<&'a [u8]>,
    pub patch: &'p PatchSet<'a>,
}

/// A front end's hooks around a run on disk (the MCP session's): both see the tree the run
/// reads through, so they need no second discovery of the root's repository nor a second
/// walk to the files.
pub(crate) trait Gate {
    /// Checks the parsed patch after the recovery, before the plan (the permission check).
    fn before(&mut self, tree: &DiskTree, patch: &PatchSet<'_>) -> Result<(), Error>;
    /// Sees a write that committed ([`Mode::Write`]), after the commit.
    fn after(&mut self, tree: &DiskTree, applied: &Applied);
}

/// The sequence (module docs). `gate`'s `before` runs after the recovery, before the plan;
/// its `after`, after a write committed.
pub(crate) fn run(
    target: Target<'_>,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    gate: Option<&mut dyn Gate>,
) -> Result<Applied, Box<Refused>> {
    let mut out = run_for(target, req, opts, mode, gate);
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
    gate: Option<&mut dyn Gate>,
) -> Result<Applied, Box<Refused>> {
    // The front ends checked before reading the patch; a library caller meets it here.
    opts.check(mode).map_err(Refused::before)?;
    #[cfg(not(feature = "git"))]
    if let Some(what) = opts.needs_git(mode) {
        return Err(Refused::before(
            crate::usage::UsageError::NeedsGitFeature { what }.into(),
        ));
    }
    match target {
        Target::Memory(tree) => sink::memory(tree, req, opts, mode),
        #[cfg(feature = "git")]
        Target::Dir(root) => {
            let mut out = on_disk(root, req, opts, mode, gate);
            if let Err(refused) = &mut out {
                if opts.keep_chips {
                    hooks::keep_chip(root, req, opts, refused);
                }
            }
            out
        }
        #[cfg(not(feature = "git"))]
        Target::Dir(root) => on_disk(root, req, opts, mode, gate),
    }
}

/// Steps 1–5 on a directory.
fn on_disk(
    root: &Path,
    req: &Request<'_, '_>,
    opts: &Options,
    mode: Mode,
    gate: Option<&mut dyn Gate>,
) -> Result<Applied, Box<Refused>> {
    // The root check (`root::check_root`) and the repository discovery, once per run: the
    // tree's nested-repository guard and every step that needs the state place (the
    // recovery, the commit, the undo record) share them. A state place given by the caller
    // says nothing of the repository: the run then discovers it once for its tree and its
    // planner (`tree_of`).
    let (tree, state, discovery) = match &opts.state {
        Some(s) => {
            let (tree, discovery) = tree_of(root).map_err(Refused::before)?;
            (tree, s.clone(), discovery)
        }
        None => {
            let (state, discovery) = state_of(root).map_err(Refused::before)?;
            (DiskTree::of_state(&state), state, discovery)
        }
    };
    let txn_opts = TxnOptions {
        state: Some(state),
        durability: opts.durability,
        ..TxnOptions::new(tree.path())
    };
    // Step 1, before anything reads the tree; a preview recovers like an apply.
    let recovered = recover_first(&txn_opts, mode == Mode::Check).map_err(Refused::before)?;
    let mut gate = gate;
    let mut out = (|| {
        if let Some(gate) = gate.as_deref_mut() {
            gate.before(&tree, req.patch).map_err(Refused::before)?;
        }
        sink::plan_and_write(&tree, &txn_opts, req, opts, mode, discovery)
    })();
    if let (Some(gate), Ok(applied), Mode::Write) = (gate, &out, mode) {
        gate.after(&tree, applied);
    }
    match &mut out {
        Ok(a) => {
            a.warnings.splice(0..0, recovered);
        }
        Err(r) => {
            r.warnings.splice(0..0, recovered);
        }
    }
    out
}

/// The state place of `root`, from the run's one opening of its repository (kept for the
/// planner: opening it again read git's config files again).
#[cfg(feature = "git")]
fn state_of(root: &Path) -> Result<(crate::state::StateDir, sink::Discovery), Error> {
    let root_canon = crate::root::check_root(root)?;
    let repo = crate::root::open_repo(&root_canon)?;
    let state = crate::state::StateDir::for_opened(root_canon, repo.as_ref())?;
    Ok((state, sink::Discovery::Opened(repo.map(Box::new))))
}

/// The tree of `root` for a run whose state place the caller gave (it says nothing of the
/// repository), from one opening of the root's repository that the planner then keeps. A
/// repository that cannot be opened keeps the tree's nested-repository guard on (the safe
/// side) and leaves the error to the planner's own discovery, as before.
#[cfg(feature = "git")]
fn tree_of(root: &Path) -> Result<(DiskTree, sink::Discovery), Error> {
    let root_canon = crate::root::check_root(root)?;
    match crate::root::open_repo(&root_canon) {
        Ok(repo) => {
            let in_repository = repo
                .as_ref()
                .is_some_and(|r| crate::root::git_dir_in(&root_canon, r).is_some());
            let tree = DiskTree::at(root_canon, in_repository);
            Ok((tree, sink::Discovery::Opened(repo.map(Box::new))))
        }
        Err(_) => Ok((DiskTree::at(root_canon, true), sink::Discovery::NotYet)),
    }
}

#[cfg(not(feature = "git"))]
fn tree_of(root: &Path) -> Result<(DiskTree, sink::Discovery), Error> {
    Ok((DiskTree::new(root)?, sink::Discovery::NotYet))
}

#[cfg(not(feature = "git"))]
fn state_of(root: &Path) -> Result<(crate::state::StateDir, sink::Discovery), Error> {
    Ok((
        crate::state::StateDir::for_root(root)?,
        sink::Discovery::NotYet,
    ))
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
