//! `--3way` planning: plan, and when a file's hunks do not apply, plan that file against the
//! base blob its diff names, then merge "base → patched base" into the file as it is.
//! Pure apart from reading blobs; writes nothing.

use super::trees::Base;
use super::Repo;
use crate::apply::ApplyOptions;
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::merge::{three_way, Conflicts, Labels};
use crate::model::{FileOp, PatchSet};
use crate::plan::{Plan, Refusal};
use crate::report::{Warning, WarningCode};
use crate::txn::NewState;
use std::collections::BTreeMap;

/// A plan made with `--3way` fallbacks: the files merged, and the conflicts (when
/// `--conflict-markers` lets them through).
pub(super) struct Planned {
    pub plan: Plan,
    pub bases: BTreeMap<String, Base>,
    pub conflicts: Vec<Conflicted>,
}

/// A file written with conflict markers.
pub(super) struct Conflicted {
    pub path: String,
    pub conflicts: Conflicts,
    /// The patched base (stage 3 of the index), in the planned tree's form.
    pub theirs: Vec<u8>,
}

/// Plans against the tree with the given `--3way` bases.
pub(super) type PlanWith<'a> = dyn Fn(&BTreeMap<String, Base>) -> Result<Plan, Refusal> + 'a;

/// Plan against `make_tree(bases)`, retrying with the base blob of each file whose hunks do
/// not apply when `--3way` is on; then merge those files.
pub(super) fn plan_with_fallback(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &ApplyOptions,
    cached: bool,
    make_tree: &PlanWith<'_>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Refusal> {
    let mut bases: BTreeMap<String, Base> = BTreeMap::new();
    let plan = loop {
        match make_tree(&bases) {
            Ok(plan) => break plan,
            Err(refusal) if opts.three_way => {
                match base_for(repo, patch, opts, cached, &refusal, &bases, current) {
                    Ok(Some((path, base))) => {
                        bases.insert(path, base);
                    }
                    Ok(None) => return Err(refusal),
                    Err(e) => {
                        return Err(Refusal {
                            error: e,
                            ..refusal
                        })
                    }
                }
            }
            Err(refusal) => return Err(refusal),
        }
    };
    merge_bases(plan, bases, opts, current)
}

/// The base to retry a refused file with, if `--3way` can help it.
fn base_for(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &ApplyOptions,
    cached: bool,
    refusal: &Refusal,
    bases: &BTreeMap<String, Base>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Option<(String, Base)>, Error> {
    if !matches!(
        refusal.error.code,
        ErrorCode::ContextNotFound | ErrorCode::AmbiguousMatch
    ) {
        return Ok(None);
    }
    // The planner reports every file up to and including the refused one, in patch order.
    let Some(fp) = refusal
        .files
        .len()
        .checked_sub(1)
        .and_then(|i| patch.files.get(i))
    else {
        return Ok(None);
    };
    let (Some(ids), Some(old), FileOp::Modify | FileOp::Rename | FileOp::Copy) =
        (&fp.blob_ids, fp.old_path.as_deref(), fp.op)
    else {
        return Ok(None);
    };
    // An absolute path (accepted by the planner against its root) is not retried.
    let Ok(path) = crate::guard::normalize(old, patch.cd.as_deref(), None) else {
        return Ok(None);
    };
    let new = fp
        .new_path
        .as_deref()
        .map(|n| crate::guard::normalize(n, patch.cd.as_deref(), None));
    let named = |p: &String| *p == path || matches!(&new, Some(Ok(n)) if n == p);
    // The refusal must be about this file (not, say, a path guard on another one).
    if bases.contains_key(&path) || !refusal.error.path.as_ref().is_some_and(named) {
        return Ok(None);
    }
    let Some((_, blob)) = repo.find_blob_by_prefix(&ids.old)? else {
        return Ok(None);
    };
    let content = if cached {
        blob.clone()
    } else {
        repo.smudge(&path, &blob)?
    };
    let file = current(&path)?;
    let failed_hunks = failed_hunks(fp.body.hunks(), patch.format, &file, opts);
    Ok(Some((
        path,
        Base {
            id: ids.old.clone(),
            content,
            blob,
            failed_hunks,
        },
    )))
}

/// The 1-based hunks that do not apply to `file` on their own.
fn failed_hunks(
    hunks: &[crate::model::Hunk<'_>],
    format: crate::model::Format,
    file: &[u8],
    opts: &ApplyOptions,
) -> Vec<usize> {
    let text = crate::text::Text::parse(file);
    let lines = text.contents();
    let locate = crate::locate::LocateOptions {
        window: opts.window,
        unidiff_zero: opts.unidiff_zero,
        bytes_only: std::str::from_utf8(file).is_err(),
    };
    hunks
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            crate::locate::locate_hunks(lines, std::slice::from_ref(*h), format, &locate).is_err()
        })
        .map(|(i, _)| i + 1)
        .collect()
}

/// Replace each merged file's planned content (the patched base) by the merge of
/// base → patched base into the file as it is.
fn merge_bases(
    mut plan: Plan,
    bases: BTreeMap<String, Base>,
    opts: &ApplyOptions,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Refusal> {
    let mut conflicts = Vec::new();
    for (path, base) in &bases {
        let refuse = |error: Error, plan: &Plan| Refusal {
            error,
            files: plan.files.clone(),
            warnings: plan.warnings.clone(),
        };
        let ours = current(path).map_err(|e| refuse(e, &plan))?;
        let Some(change) = plan.changes.iter_mut().find(|c| &c.path == path) else {
            continue;
        };
        let NewState::File { bytes: theirs, .. } = &mut change.after else {
            continue;
        };
        let merged = three_way(&base.content, &ours, theirs, Labels::default());
        if let Some(diff) = plan.diff.as_mut() {
            let new = match &merged {
                Ok(m) => m.as_slice(),
                Err(found) => found.marked.as_slice(),
            };
            *diff = replace_file_diff(diff, path, &ours, new);
        }
        match merged {
            Ok(merged) => {
                *theirs = Content::from(merged);
                let hunks: Vec<String> = base.failed_hunks.iter().map(usize::to_string).collect();
                let mut warning = Warning::new(
                    WarningCode::Merged,
                    format!(
                        "merged from the base blob {} (hunk{} {} did not apply to the file as it is)",
                        base.id,
                        if hunks.len() == 1 { "" } else { "s" },
                        hunks.join(", ")
                    ),
                )
                .with_path(path.clone());
                if let Some(first) = base.failed_hunks.first() {
                    warning = warning.with_hunk(*first);
                }
                plan.warnings.push(warning);
            }
            Err(found) if opts.conflict_markers => {
                let patched = std::mem::replace(theirs, Content::from(found.marked.clone()));
                conflicts.push(Conflicted {
                    path: path.clone(),
                    conflicts: found,
                    theirs: patched.into_vec(),
                });
            }
            Err(found) => {
                let error = super::ThreeWay::conflict_error(path, &found);
                return Err(refuse(error, &plan));
            }
        }
        // The report shows the hash of what is written: the merge, not the patched base.
        if let Some(f) = plan.files.iter_mut().find(|f| f.path == *path) {
            f.set_new_content(theirs);
        }
    }
    Ok(Planned {
        plan,
        bases,
        conflicts,
    })
}

/// `diff` with the part for `path` (planned against the base) replaced by the diff of the
/// file as it is to its merged content.
fn replace_file_diff(diff: &str, path: &str, old: &[u8], new: &[u8]) -> String {
    let header = crate::render::file_diff(Some(path), Some(path), b"x\n", b"y\n");
    let header = header.lines().next().unwrap_or("").to_string();
    let mut out = String::new();
    let mut skipping = false;
    for line in diff.split_inclusive('\n') {
        if line.starts_with("diff --git ") {
            skipping = line.trim_end() == header;
            if skipping {
                out.push_str(&crate::render::file_diff(Some(path), Some(path), old, new));
            }
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}
