//! `check-patches`: does every patch file (in series order) still apply to the staged tree?
//! Each series is applied cumulatively to an in-memory tree seeded from the index blobs
//! (`--cached` semantics). Writes nothing.

use super::GitError;
use super::series::{self, Series};
use super::Repo;
use crate::error::Error;
use crate::model::PatchSet;
use crate::pipeline::{self, Mode, Options, Target};
use crate::report::Warning;
use crate::tree::{MemEntry, MemTree};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The outcome for one patch file (the command line renders it, a `FAIL` line with the
/// error's nearest text and hint).
#[derive(Debug, Clone, serde::Serialize)]
pub struct PatchCheck {
    /// The patch file, as found (relative to where the command runs when given so).
    pub patch: String,
    pub ok: bool,
    /// Not checked because an earlier patch of its series does not apply.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    pub error: Option<Error>,
}

/// The outcome of `check-patches`: one entry per patch, or an error that stopped the run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CheckReport {
    pub ok: bool,
    pub patches: Vec<PatchCheck>,
    pub error: Option<Error>,
}

impl CheckReport {
    fn failed(error: Error) -> Self {
        CheckReport {
            ok: false,
            patches: Vec::new(),
            error: Some(error),
        }
    }

    /// Exactly one JSON object (SPEC §8 style: `ok`, the entries, `error`).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// 0 when every patch applies, 1 when one does not, the error's status otherwise.
    pub fn exit_status(&self) -> u8 {
        match &self.error {
            Some(e) => e.exit_status(),
            None if self.ok => 0,
            None => 1,
        }
    }
}

/// Check the patch files under `paths` (files, or directories searched for `*.patch` and
/// `*.diff`; none: `root`) against the staged tree of the repository containing `root`.
/// Patch paths are relative to `root`.
pub fn check_patches(root: &Path, paths: &[PathBuf]) -> CheckReport {
    if let Err(e) = crate::root::check_root(root) {
        return CheckReport::failed(e);
    }
    let repo = match Repo::discover(root) {
        Ok(Some(repo)) => repo,
        Ok(None) => {
            return CheckReport::failed(
                GitError::NotInWorkTree {
                    root: root.to_path_buf(),
                }
                .into(),
            )
        }
        Err(e) => return CheckReport::failed(e),
    };
    if let Some(e) = repo.index_error() {
        return CheckReport::failed(e.clone());
    }
    let roots = if paths.is_empty() {
        vec![root.to_path_buf()]
    } else {
        paths.to_vec()
    };
    let all = match series::collect(&roots) {
        Ok(s) => s,
        Err(e) => return CheckReport::failed(e),
    };
    let mut patches = Vec::new();
    for one in &all {
        check_series(&repo, root, one, &mut patches);
    }
    CheckReport {
        ok: patches.iter().all(|p| p.ok),
        patches,
        error: None,
    }
}

/// Apply one series cumulatively; after the first failure the rest are skipped.
fn check_series(repo: &Repo, root: &Path, series: &Series, out: &mut Vec<PatchCheck>) {
    let mut tree = MemTree::new();
    let mut seeded = HashSet::new();
    let mut failed: Option<String> = None;
    for path in &series.patches {
        let shown = path.display().to_string();
        if let Some(earlier) = &failed {
            let error = Error::from(GitError::EarlierPatchFailed {
                earlier: earlier.clone(),
            });
            out.push(PatchCheck {
                patch: shown,
                ok: false,
                skipped: true,
                warnings: Vec::new(),
                error: Some(error),
            });
            continue;
        }
        let result = check_one(repo, root, path, &mut tree, &mut seeded);
        if result.error.is_some() {
            failed = Some(shown);
        }
        out.push(result);
    }
}

fn check_one(
    repo: &Repo,
    root: &Path,
    path: &Path,
    tree: &mut MemTree,
    seeded: &mut HashSet<String>,
) -> PatchCheck {
    let shown = path.display().to_string();
    let fail = |error: Error| PatchCheck {
        patch: shown.clone(),
        ok: false,
        skipped: false,
        warnings: Vec::new(),
        error: Some(error),
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => return fail(Error::io(&shown, "cannot read the patch", &e)),
    };
    // Parsed once: the seeding and the apply both work from this patch.
    let opts = Options::default();
    let patch = match pipeline::parse(&bytes, &opts) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if let Err(e) = seed(repo, root, &patch, tree, seeded) {
        return fail(e);
    }
    let report = pipeline::report(&pipeline::apply(
        Target::Memory(tree),
        &patch,
        &opts,
        Mode::Write,
    ));
    PatchCheck {
        patch: shown,
        ok: report.ok,
        skipped: false,
        warnings: report.warnings,
        error: report.error,
    }
}

/// Put the index blob of every path the patch names into the tree, once per series (a path
/// an earlier patch changed keeps that patch's result).
fn seed(
    repo: &Repo,
    root: &Path,
    patch: &PatchSet<'_>,
    tree: &mut MemTree,
    seeded: &mut HashSet<String>,
) -> Result<(), Error> {
    for fp in &patch.files {
        for raw in [fp.old_path.as_deref(), fp.new_path.as_deref()]
            .into_iter()
            .flatten()
        {
            let path = crate::guard::normalize(raw, patch.cd.as_deref(), Some(root))?;
            if !seeded.insert(path.clone()) {
                continue;
            }
            let Some(entry) = repo.index_entry(&path)? else {
                continue;
            };
            if entry.conflicted || entry.mode.is_gitlink() {
                continue;
            }
            let blob = repo.read_blob(&entry.id, &path)?;
            let node = if entry.mode.is_symlink() {
                MemEntry::Symlink { target: blob }
            } else {
                let mode = if entry.mode.is_executable() {
                    0o755
                } else {
                    0o644
                };
                MemEntry::File { bytes: blob, mode }
            };
            tree.insert_entry(&path, node);
        }
    }
    Ok(())
}
