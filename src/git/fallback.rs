//! `--3way` planning: plan, and when a file's hunks do not apply, plan that file against the
//! base blob its diff names, then merge "base → patched base" into the file as it is.
//! Pure apart from reading blobs; writes nothing.

use super::trees::{Base, Target};
use super::{GitError, Repo};
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::locate::LocateOptions;
use crate::merge::{three_way, Conflicts, Labels};
use crate::model::{FileOp, PatchSet};
use crate::plan::{DiffPiece, Plan, Refusal};
use crate::report::{Warning, WarningCode};
use crate::txn::NewState;
use std::collections::BTreeMap;

/// What `--3way` planning needs of the run's options.
#[derive(Debug, Clone)]
pub(crate) struct Fallback {
    /// `--3way` is on.
    pub three_way: bool,
    /// `--conflict-markers`.
    pub conflict_markers: bool,
    pub locate: LocateOptions,
}

/// A plan made with `--3way` fallbacks: the files merged, and the conflicts (when
/// `--conflict-markers` lets them through).
pub(crate) struct Planned {
    pub plan: Plan,
    pub bases: BTreeMap<String, Base>,
    pub conflicts: Vec<Conflicted>,
}

/// A file written with conflict markers.
pub(crate) struct Conflicted {
    pub path: String,
    /// Where it was read from: `path` itself, or the source of a rename or copy (the key of
    /// its base, and stage 2 of the index).
    pub source: String,
    pub conflicts: Conflicts,
    /// The patched base (stage 3 of the index), in the planned tree's form.
    pub theirs: Vec<u8>,
}

/// Plans against the tree with the given `--3way` bases and `--fuzz`.
pub(crate) type PlanWith<'a> =
    dyn Fn(&BTreeMap<String, Base>, usize) -> Result<Plan, Box<Refusal>> + 'a;

/// Plan against `make_tree(bases, fuzz)`, retrying with the base blob of each file whose
/// hunks do not apply, or that is partly applied already, when `--3way` is on; then merge
/// those files (SPEC §7). With `--3way` the merge is tried before fuzz (SPEC §5 "Fuzz"):
/// fuzz comes in only for a placement no base can help, and a merge conflict stays final.
pub(crate) fn plan_with_fallback(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &Fallback,
    cached: bool,
    make_tree: &PlanWith<'_>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Box<Refusal>> {
    let mut bases: BTreeMap<String, Base> = BTreeMap::new();
    let mut fuzz = if opts.three_way { 0 } else { opts.locate.fuzz };
    let plan = loop {
        let refusal = match make_tree(&bases, fuzz) {
            Ok(plan) => break plan,
            Err(refusal) if opts.three_way => refusal,
            Err(refusal) => return Err(refusal),
        };
        let found = if refusal.error.code == ErrorCode::AlreadyApplied {
            partly_applied(repo, patch, opts, cached, &bases, current)
        } else {
            base_for(repo, patch, opts, cached, &refusal, &bases, current)
                .map(|b| b.into_iter().collect())
        };
        let placing = matches!(
            refusal.error.code,
            ErrorCode::ContextNotFound | ErrorCode::AmbiguousMatch
        );
        match found {
            Ok(found) if !found.is_empty() => bases.extend(found),
            Ok(_) if placing && fuzz < opts.locate.fuzz => fuzz = opts.locate.fuzz,
            Ok(_) => return Err(refusal),
            Err(e) => {
                return Err(Box::new(Refusal {
                    error: e.into(),
                    ..*refusal
                }))
            }
        }
    };
    merge_bases(plan, bases, opts, current)
}

/// The bases of the files refused as partly applied (SPEC §7: with `--3way` the merge
/// decides): each modified, renamed or copied file that has a base blob and holds some of
/// its hunks already.
fn partly_applied(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &Fallback,
    cached: bool,
    bases: &BTreeMap<String, Base>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Vec<(String, Base)>, GitError> {
    let mut out = Vec::new();
    for fp in &patch.files {
        let Some(path) = merge_source(patch, fp) else {
            continue;
        };
        if bases.contains_key(&path) || out.iter().any(|(p, _)| *p == path) {
            continue;
        }
        // A source that cannot be read (a rename already made) keeps the refusal as it is.
        let Ok(file) = current(&path) else {
            continue;
        };
        if hunk_states(fp.body.hunks(), patch.rules, &file, opts).1.is_empty() {
            continue;
        }
        if let Some(base) = base_of(repo, patch, fp, (&path, cached), current, opts)? {
            out.push((path, base));
        }
    }
    Ok(out)
}

/// The normalised source path of a file patch a base can be merged for: a modify, rename or
/// copy whose diff names its base blob.
fn merge_source(patch: &PatchSet<'_>, fp: &crate::model::FilePatch<'_>) -> Option<String> {
    let (Some(_), Some(old), FileOp::Modify | FileOp::Rename | FileOp::Copy) =
        (&fp.blob_ids, fp.old_path.as_deref(), fp.op)
    else {
        return None;
    };
    // An absolute path (accepted by the planner against its root) is not retried.
    crate::guard::normalize(old, patch.cd.as_deref(), None).ok()
}

/// The base to retry a refused file with, if `--3way` can help it.
fn base_for(
    repo: &Repo,
    patch: &PatchSet<'_>,
    opts: &Fallback,
    cached: bool,
    refusal: &Refusal,
    bases: &BTreeMap<String, Base>,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Option<(String, Base)>, GitError> {
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
    let Some(path) = merge_source(patch, fp) else {
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
    let base = base_of(repo, patch, fp, (&path, cached), current, opts)?;
    Ok(base.map(|b| (path, b)))
}

/// The base blob `fp`'s diff names for its source `path`, in the form the plan reads (the
/// work tree's, or the index's with `cached`), with the paths written from it; None when the
/// object database lacks it.
fn base_of(
    repo: &Repo,
    patch: &PatchSet<'_>,
    fp: &crate::model::FilePatch<'_>,
    (path, cached): (&str, bool),
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
    opts: &Fallback,
) -> Result<Option<Base>, GitError> {
    let Some(ids) = &fp.blob_ids else {
        return Ok(None);
    };
    let Some((_, blob)) = repo.find_blob_by_prefix(&ids.old)? else {
        return Ok(None);
    };
    let content = if cached {
        blob.clone()
    } else {
        repo.smudge(path, &blob)?
    };
    let file = current(path)?;
    let targets = targets(patch, path, &file, opts);
    Ok(Some(Base {
        id: ids.old.clone(),
        content,
        blob,
        targets,
    }))
}

/// The paths written from `source` by the patch's modifies, renames and copies (once the
/// source reads as its base, every one of them is planned against it), each with the hunks
/// that do not apply to `file`, the source as it is.
fn targets(patch: &PatchSet<'_>, source: &str, file: &[u8], opts: &Fallback) -> Vec<Target> {
    let normal = |p: &str| crate::guard::normalize(p, patch.cd.as_deref(), None).ok();
    patch
        .files
        .iter()
        .filter(|fp| matches!(fp.op, FileOp::Modify | FileOp::Rename | FileOp::Copy))
        .filter(|fp| fp.old_path.as_deref().and_then(normal).as_deref() == Some(source))
        .filter_map(|fp| {
            let path = fp.new_path.as_deref().or(fp.old_path.as_deref())?;
            let (failed_hunks, applied_hunks) = hunk_states(fp.body.hunks(), patch.rules, file, opts);
            Some(Target {
                path: normal(path)?,
                failed_hunks,
                applied_hunks,
            })
        })
        .collect()
}

/// The 1-based hunks that do not apply to `file` on their own, and those that are already
/// in it. Each hunk is placed alone, without fuzz (the merge comes before fuzz).
fn hunk_states(
    hunks: &[crate::model::Hunk<'_>],
    rules: crate::model::Rules,
    file: &[u8],
    opts: &Fallback,
) -> (Vec<usize>, Vec<usize>) {
    let text = crate::text::Text::parse(file);
    let lines = text.contents();
    let locate = LocateOptions {
        bytes_only: std::str::from_utf8(file).is_err(),
        ends_with_newline: Some(text.ends_with_newline()),
        fuzz: 0,
        ..opts.locate.clone()
    };
    let (mut failed, mut applied) = (Vec::new(), Vec::new());
    for (i, h) in hunks.iter().enumerate() {
        match crate::locate::locate_hunks(lines, std::slice::from_ref(h), rules, &locate) {
            Err(_) => failed.push(i + 1),
            Ok(p) if p.iter().any(|p| p.already_applied) => applied.push(i + 1),
            Ok(_) => {}
        }
    }
    (failed, applied)
}

/// Replace the planned content (the patched base) of each path written from a base by the
/// merge of base → patched base into the source as it is: the file itself for a modify, the
/// old path for a rename or copy, whose content is what the user has, wherever it goes.
fn merge_bases(
    mut plan: Plan,
    bases: BTreeMap<String, Base>,
    opts: &Fallback,
    current: &dyn Fn(&str) -> Result<Vec<u8>, Error>,
) -> Result<Planned, Box<Refusal>> {
    let mut conflicts = Vec::new();
    for (source, base) in &bases {
        let ours = current(source).map_err(|error| Refusal {
            error,
            files: plan.files.clone(),
            warnings: plan.warnings.clone(),
        })?;
        for target in &base.targets {
            let merge = Merge {
                source,
                base,
                target,
                ours: &ours,
            };
            match merge.into_plan(&mut plan, opts) {
                Ok(Some(conflicted)) => conflicts.push(conflicted),
                Ok(None) => {}
                Err(error) => {
                    return Err(Box::new(Refusal {
                        error: error.into(),
                        files: plan.files.clone(),
                        warnings: plan.warnings.clone(),
                    }))
                }
            }
        }
    }
    Ok(Planned {
        plan,
        bases,
        conflicts,
    })
}

/// One path written from a base, to be merged with the source as it is.
struct Merge<'a> {
    source: &'a str,
    base: &'a Base,
    target: &'a Target,
    ours: &'a [u8],
}

impl Merge<'_> {
    /// Put the merge into the plan: its content, diff and report; a conflict is returned
    /// (with `--conflict-markers`, the marked text is planned) or refused.
    fn into_plan(self, plan: &mut Plan, opts: &Fallback) -> Result<Option<Conflicted>, GitError> {
        let path = self.target.path.as_str();
        let Some(change) = plan.changes.iter_mut().find(|c| c.path == path) else {
            return Ok(None);
        };
        let NewState::File { bytes: theirs, .. } = &mut change.after else {
            return Ok(None);
        };
        let merged = three_way(&self.base.content, self.ours, theirs, Labels::default());
        let new = match &merged {
            Ok(m) => m.as_slice(),
            Err(found) => found.marked.as_slice(),
        };
        merge_pieces(&mut plan.pieces, self.source, path, self.ours, new);
        let conflicted = match merged {
            Ok(merged) => {
                *theirs = Content::from(merged);
                plan.warnings.push(self.warning());
                None
            }
            Err(found) if opts.conflict_markers => {
                let patched = std::mem::replace(theirs, Content::from(found.marked.clone()));
                Some(Conflicted {
                    path: path.to_string(),
                    source: self.source.to_string(),
                    conflicts: found,
                    theirs: patched.into_vec(),
                })
            }
            Err(found) => {
                return Err(super::ThreeWay::conflict_error(
                    path,
                    &found,
                    super::Conflicted::Refused,
                ))
            }
        };
        // The report shows the hashes of what is there and what is written: the source as
        // it is and the merge, not the base and the patched base.
        if let Some(f) = plan.files.iter_mut().find(|f| f.path == path) {
            f.set_old_content(&Content::from(self.ours.to_vec()));
            f.set_new_content(theirs);
        }
        Ok(conflicted)
    }

    /// The `merged` warning, naming the hunks that did not apply to the file as it is (or,
    /// for a file refused as partly applied, those it held already).
    fn warning(&self) -> Warning {
        let failed = &self.target.failed_hunks;
        let applied = &self.target.applied_hunks;
        let list = |h: &[usize]| h.iter().map(usize::to_string).collect::<Vec<_>>().join(", ");
        let why = match (failed.len(), applied.len()) {
            (0, 0) => format!("read as it for another operation on {}", self.source),
            (0, 1) => format!("hunk {} was in the file already", list(applied)),
            (0, _) => format!("hunks {} were in the file already", list(applied)),
            (1, _) => format!("hunk {} did not apply to the file as it is", list(failed)),
            _ => format!("hunks {} did not apply to the file as it is", list(failed)),
        };
        let first = failed.first().or(applied.first());
        let mut warning = Warning::new(
            WarningCode::Merged,
            format!("merged from the base blob {} ({why})", self.base.id),
        )
        .with_path(self.target.path.clone());
        if let Some(first) = first {
            warning = warning.with_hunk(*first);
        }
        warning
    }
}

/// The diff pieces for `old_path` → `path` (planned against the base) become the diff of
/// the source as it is (`old`) to the merged content (`new`).
fn merge_pieces(pieces: &mut [DiffPiece], old_path: &str, path: &str, old: &[u8], new: &[u8]) {
    for p in pieces.iter_mut() {
        if p.old.as_deref() == Some(old_path) && p.new.as_deref() == Some(path) {
            p.before = old.to_vec();
            p.after = new.to_vec();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::merge_pieces;
    use crate::plan::{DiffPiece, Plan};

    fn piece(old: &str, new: &str, before: &[u8], after: &[u8]) -> DiffPiece {
        DiffPiece {
            old: Some(old.into()),
            new: Some(new.into()),
            before: before.to_vec(),
            after: after.to_vec(),
        }
    }

    #[test]
    fn a_renamed_file_diff_is_replaced_by_the_merge_and_the_others_kept() {
        let mut plan = Plan {
            files: Vec::new(),
            warnings: Vec::new(),
            changes: Vec::new(),
            diff: Some(String::new()),
            pieces: vec![
                piece("x.txt", "x.txt", b"1\n", b"2\n"),
                piece("a.txt", "b.txt", b"base\n", b"patched\n"),
            ],
        };
        merge_pieces(&mut plan.pieces, "a.txt", "b.txt", b"ours\n", b"merged\n");
        plan.render_diff();
        let out = plan.diff.expect("a diff");
        let want = [
            crate::render::file_diff(Some("x.txt"), Some("x.txt"), b"1\n", b"2\n"),
            crate::render::file_diff(Some("a.txt"), Some("b.txt"), b"ours\n", b"merged\n"),
        ]
        .concat();
        assert_eq!(out, want);
        assert!(
            out.contains("rename from a.txt\nrename to b.txt\n"),
            "{out}"
        );
        assert!(out.contains("-ours\n+merged\n"), "{out}");
    }
}
