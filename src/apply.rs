//! Stage: the command line's entry points. [`ApplyOptions`] is the apply command's flag bag;
//! [`apply_to_dir`] and [`apply_to_memory`] map it onto the typed options of
//! [`crate::pipeline`] (where the one apply sequence lives) and return the [`Report`] of
//! SPEC §8. Nothing here plans or writes.
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

// `Refusal` carries the files' reports with the error; it is built once per request.
#![allow(clippy::result_large_err)]

use std::path::Path;

use crate::error::Error;
use crate::locate::LocateOptions;
use crate::model::{Format, PatchSet};
use crate::pipeline::{self, Mode, Options, Target};
use crate::plan::{Plan, Refusal};
use crate::report::{Report, Warning};
use crate::tree::{MemTree, Tree};

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
    /// `--durability`: how durable the commit is made (full unless the caller opts out).
    pub durability: crate::txn::Durability,
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
            durability: crate::txn::Durability::Full,
        }
    }
}

impl ApplyOptions {
    /// The pipeline's options and mode for these flags (a combination that cannot mean
    /// anything is a usage error).
    pub fn to_options(&self) -> Result<(Options, Mode), Error> {
        Options::from_apply(self)
    }
}

/// Parse patch input and apply the selection options (`--reverse`, `--include`,
/// `--exclude`, `--directory`); see [`pipeline::parse`].
pub fn parse_patch<'a>(input: &'a [u8], opts: &ApplyOptions) -> Result<PatchSet<'a>, Error> {
    pipeline::parse(input, &opts.to_options()?.0)
}

/// Parse and plan against any tree, writing nothing.
pub fn plan(tree: &dyn Tree, input: &[u8], opts: &ApplyOptions) -> Result<Plan, Refusal> {
    let refusal = |error: Error| Refusal {
        error,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let (options, mode) = opts.to_options().map_err(refusal)?;
    let patch = pipeline::parse(input, &options).map_err(refusal)?;
    crate::plan::plan(tree, &patch, &options.plan_options(mode).map_err(refusal)?)
}

/// Apply (or with `check`, only plan) a patch to the directory `root`.
pub fn apply_to_dir(root: &Path, input: &[u8], opts: &ApplyOptions) -> Report {
    forward(Target::Dir(root), input, opts)
}

/// Apply (or with `check`, only plan) a patch to an in-memory tree.
pub fn apply_to_memory(tree: &mut MemTree, input: &[u8], opts: &ApplyOptions) -> Report {
    forward(Target::Memory(tree), input, opts)
}

fn forward(target: Target<'_>, input: &[u8], opts: &ApplyOptions) -> Report {
    match opts.to_options() {
        Ok((options, mode)) => {
            pipeline::report(&pipeline::apply_bytes(target, input, &options, mode))
        }
        Err(e) => Report::failure(e, Vec::new(), Vec::new()),
    }
}

/// Step zero of every run on disk; see [`pipeline::recover_first`].
pub fn recover_first(
    txn_opts: &crate::txn::TxnOptions,
    check: bool,
) -> Result<Vec<Warning>, Error> {
    pipeline::recover_first(txn_opts, check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

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
