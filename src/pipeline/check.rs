//! `check-patches`: does every patch file (in series order) still apply to the staged tree?
//! Each series is applied cumulatively to an in-memory tree seeded from the index blobs
//! (`--cached` semantics). Writes nothing.

use crate::error::Error;
use crate::git::series::{self, Series};
use crate::git::{GitError, Repo};
use crate::model::PatchSet;
use crate::pipeline::{self, Mode, Options, Refused, Target};
use crate::report::{FileReport, Warning};
use crate::tree::{MemEntry, MemTree};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The outcome for one patch file (the command line renders it, a `FAIL` line with the
/// error's nearest text and hint).
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
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

/// The JSON view of `check-patches`' result: one entry per patch, or the error that stopped
/// the run; built where it is printed, [`CheckReport::of`].
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CheckReport {
    pub ok: bool,
    pub patches: Vec<PatchCheck>,
    pub error: Option<Error>,
}

impl CheckReport {
    /// The view of [`check_patches`]' result.
    pub fn of(result: &Result<Vec<PatchCheck>, Error>) -> Self {
        match result {
            Ok(patches) => CheckReport {
                ok: patches.iter().all(|p| p.ok),
                patches: patches.clone(),
                error: None,
            },
            Err(e) => CheckReport {
                ok: false,
                patches: Vec::new(),
                error: Some(e.clone()),
            },
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
/// Patch paths are relative to `root`. One entry per patch (a patch that does not apply is
/// an entry, not an error); an error stops the whole run. A patch that applies only with
/// fuzz (SPEC §5) fails — it needs refreshing — unless `fuzz` (`--fuzz N`) allows it.
pub fn check_patches(
    root: &Path,
    paths: &[PathBuf],
    fuzz: Option<usize>,
) -> Result<Vec<PatchCheck>, Error> {
    crate::root::check_root(root)?;
    let repo = match Repo::discover(root)? {
        Some(repo) => repo,
        None => {
            return Err(GitError::NotInWorkTree {
                root: root.to_path_buf(),
            }
            .into())
        }
    };
    if let Some(e) = repo.index_error() {
        return Err(e.clone().into());
    }
    let roots = if paths.is_empty() {
        vec![root.to_path_buf()]
    } else {
        paths.to_vec()
    };
    let all = series::collect(&roots)?;
    let mut patches = Vec::new();
    for one in &all {
        check_series(&repo, (root, fuzz), one, &mut patches);
    }
    Ok(patches)
}

/// Apply one series cumulatively; after the first failure the rest are skipped.
fn check_series(
    repo: &Repo,
    (root, fuzz): (&Path, Option<usize>),
    series: &Series,
    out: &mut Vec<PatchCheck>,
) {
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
        let (warnings, error) = match check_one(repo, (root, fuzz), path, &mut tree, &mut seeded) {
            Ok(warnings) => (warnings, None),
            Err(refused) => {
                failed = Some(shown.clone());
                (refused.warnings, Some(refused.error))
            }
        };
        out.push(PatchCheck {
            patch: shown,
            ok: error.is_none(),
            skipped: false,
            warnings,
            error,
        });
    }
}

/// Apply one patch file to the series' tree: its warnings, or the refusal.
fn check_one(
    repo: &Repo,
    (root, fuzz): (&Path, Option<usize>),
    path: &Path,
    tree: &mut MemTree,
    seeded: &mut HashSet<String>,
) -> Result<Vec<Warning>, Box<Refused>> {
    // The command line's reader: a regular file within the size limit, a FIFO never waited on.
    let bytes = crate::patch_file::read_patch_file(path).map_err(Refused::before)?;
    // Parsed once: the seeding and the apply both work from this patch.
    let opts = match fuzz {
        Some(n) => Options::builder().fuzz(n).build(),
        None => Options::default(),
    };
    let patch = pipeline::parse(&bytes, &opts).map_err(Refused::before)?;
    seed(repo, root, &patch, tree, seeded).map_err(Refused::before)?;
    let applied = pipeline::apply(Target::Memory(tree), &patch, &opts, Mode::Write)?;
    // A patch that needs fuzz it was not allowed fails; the series stops there, so the tree
    // it changed is not read again.
    if let (None, Some(error)) = (fuzz, needs_fuzz(&applied.files)) {
        return Err(Box::new(Refused {
            error,
            files: applied.files,
            warnings: applied.warnings,
            diff: None,
            risk: None,
            verification: None,
        }));
    }
    Ok(applied.warnings)
}

/// The refusal of a patch one of whose hunks applied only with fuzz (SPEC §5 "Fuzz": such a
/// patch should be refreshed).
fn needs_fuzz(files: &[FileReport]) -> Option<Error> {
    files.iter().find_map(|f| {
        let h = f.hunks.iter().find(|h| h.fuzz > 0)?;
        Some(Error::from(GitError::NeedsFuzz {
            path: f.path.clone(),
            hunk: h.hunk,
            fuzz: h.fuzz,
        }))
    })
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
