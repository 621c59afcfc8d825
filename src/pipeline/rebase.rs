//! Stage: orchestration (rebase, feature `git`). A patch refused as `stale_file` because a
//! `*** Base:` version no longer matches its file: with `--rebase` it is planned again on an
//! overlay that serves the base content (from the snapshots `read` kept, or git's HEAD) and
//! its change merged onto the current file; without, or when the base is not known, the
//! refusal says what a rebase would do. Reads only.

use std::collections::HashMap;
use std::path::Path;

use super::options::{FrontEnd, Options};
use super::source::{Planned, Source};
use crate::agent::rebase;
use crate::agent::sha256_hex;
use crate::agent::snapshots::SnapshotStore;
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::model::{FileOp, PatchSet};
use crate::plan::{DiffPiece, Plan, PlanOptions, Refusal};
use crate::report::{Warning, WarningCode};
use crate::spelling::{Hint, Opt, Value};
use crate::tree::{DiskTree, Kind, Node, Tree, TreeError};
use crate::txn::{NewState, Snapshot};

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

    fn kind(&self, path: &str) -> Result<Kind, TreeError> {
        self.disk.kind(path)
    }

    fn shows_snapshot(&self, path: &str) -> bool {
        !self.bases.contains_key(path) && self.disk.shows_snapshot(path)
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError> {
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

/// One file whose `*** Base:` is stale: where it is read, where its result goes, its current
/// content, and its base content with where that came from when it is known.
struct Rebasing {
    old: String,
    new: String,
    current: Vec<u8>,
    found: Option<(Vec<u8>, rebase::BaseSource)>,
    version: String,
}

/// After a `stale_file` refusal on a disk source: with `--rebase`, the file patches whose
/// `*** Base:` versions have known content are planned again on those bases (an overlay of
/// the source's tree) and merged onto the current files. A `stale_file` refusal that stays
/// says what a rebase would do ([`RebaseAdvice`]).
pub(super) fn on_stale(
    source: &Source<'_>,
    refusal: Box<Refusal>,
    patch: &PatchSet<'_>,
    opts: &Options,
    plan_opts: &PlanOptions,
) -> Result<Planned, Box<Refusal>> {
    let Some(tree) = source.disk() else {
        return Err(refusal);
    };
    let store = snapshot_store(opts, tree);
    let Ok(stale) = stale_bases(tree, patch, store.as_ref()) else {
        return Err(refusal);
    };
    let advised = |mut r: Box<Refusal>| {
        if r.error.code == ErrorCode::StaleFile {
            if let Some(advice) = advice(&r.error, &stale, opts.rebase, opts.front_end) {
                r.error = advice.into();
            }
        }
        r
    };
    if !opts.rebase {
        return Err(advised(refusal));
    }
    let rebasing: Vec<&Rebasing> = stale.iter().filter(|r| r.found.is_some()).collect();
    if rebasing.is_empty() {
        return Err(advised(refusal));
    }
    let overlay = BaseOverlay {
        disk: tree,
        bases: rebasing
            .iter()
            .filter_map(|r| Some((r.old.clone(), r.found.as_ref()?.0.clone())))
            .collect(),
    };
    let mut planned = source
        .plan_over(Some(&overlay), patch, opts, plan_opts)
        .map_err(advised)?;
    for r in &rebasing {
        merge_one(&mut planned.plan, r).map_err(|error| {
            Box::new(Refusal {
                error,
                files: planned.plan.files.clone(),
                warnings: planned.plan.warnings.clone(),
            })
        })?;
    }
    if plan_opts.diff {
        planned.plan.pieces = pieces_of(tree, &planned.plan);
    }
    Ok(planned)
}

/// The snapshots `read` kept for this root, looked up without creating the state place (a
/// `--check` run writes nothing, there either).
fn snapshot_store(opts: &Options, tree: &DiskTree) -> Option<SnapshotStore> {
    let state = match &opts.state {
        Some(s) => s.clone(),
        None => crate::state::StateDir::for_root(tree.path()).ok()?,
    };
    Some(SnapshotStore::new(state.base().join("snapshots")))
}

/// What a rebase would do for a `stale_file` refusal of a file whose `*** Base:` no longer
/// matches: its base content is known (`--rebase` would merge), or `--rebase` was given and
/// nothing of that version was kept. None when the refusal is of no file being rebased, or
/// when there is nothing to say.
fn advice(
    error: &Error,
    stale: &[Rebasing],
    rebase: bool,
    front: FrontEnd,
) -> Option<RebaseAdvice> {
    let r = stale
        .iter()
        .find(|r| error.path.as_deref() == Some(r.old.as_str()))?;
    let cause = Box::new(error.clone());
    match (&r.found, rebase) {
        (Some((_, source)), false) => Some(RebaseAdvice::Possible {
            cause,
            source: *source,
            front,
        }),
        (None, true) => Some(RebaseAdvice::NoBase {
            cause,
            version: r.version.clone(),
            front,
        }),
        _ => None,
    }
}

/// The `error.details.rebase` value of a `stale_file` refusal whose base content is known:
/// the same patch with `--rebase` (MCP: `rebase: true`) would be merged.
pub const REBASE_POSSIBLE: &str = "possible";

/// The `error.details.rebase` value when `--rebase` was given but no content of the Base's
/// version is known.
pub const REBASE_NO_BASE: &str = "no_base";

/// A `stale_file` refusal (`cause`) with what a rebase would do, worded once, when it becomes
/// the boundary [`Error`], for the front end that runs (the command line's flags, or the MCP
/// tools' arguments and `read` tool). The cause keeps its code, path and details; the hint
/// is the rebase's, and `details.rebase` says which advice it is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RebaseAdvice {
    /// The base content is known (`source`): `--rebase` would merge.
    Possible {
        cause: Box<Error>,
        source: rebase::BaseSource,
        front: FrontEnd,
    },
    /// `--rebase` was given, and no content of `version` is known.
    NoBase {
        cause: Box<Error>,
        version: String,
        front: FrontEnd,
    },
}

impl RebaseAdvice {
    /// The next step for this advice, one wording for every front end: the option and the
    /// `read` command are references the front end spells ([`crate::spelling`]).
    fn hint(&self) -> Hint {
        match self {
            RebaseAdvice::Possible { source, .. } => Hint::new()
                .text(format!(
                    "the content of that version is known ({}): run again with ",
                    source.as_str()
                ))
                .on(Opt::Rebase)
                .text(
                    " to merge the patch onto the current file, or re-read the file and \
                     write the patch against it",
                ),
            RebaseAdvice::NoBase { .. } => Hint::new()
                .text("read the file with ")
                .name(Opt::Read)
                .text(" first (it keeps a snapshot of what it shows, for ")
                .on(Opt::Rebase)
                .text("); now re-read it and write the patch against its current content"),
        }
    }
}

impl From<RebaseAdvice> for Error {
    fn from(advice: RebaseAdvice) -> Error {
        let hint = advice.hint();
        let (mut out, value, front) = match advice {
            RebaseAdvice::Possible { cause, front, .. } => {
                let out = Error::around(&cause, cause.message.clone());
                (out, REBASE_POSSIBLE, front)
            }
            RebaseAdvice::NoBase {
                cause,
                version,
                front,
            } => {
                let option = Opt::Rebase
                    .spell(front, &Value::On)
                    .unwrap_or_else(|| "rebase".into());
                // The one composition point: the cause's words, then why nothing merged, in
                // a message of its own (the cause's stays as it was, its source).
                let message = format!(
                    "{}; {option} had nothing to merge from: no snapshot of the content of \
                     version {version} was kept, and neither the git index nor HEAD holds it",
                    cause.message
                );
                (Error::around(&cause, message), REBASE_NO_BASE, front)
            }
        };
        out.set_hint(Some(hint));
        out.set_front_end(front);
        match out.details_mut() {
            Some(serde_json::Value::Object(map)) => {
                map.insert("rebase".into(), value.into());
            }
            _ => out.set_details(Some(serde_json::json!({ "rebase": value }))),
        }
        out
    }
}

/// The file patches whose `*** Base:` no longer matches the file, each with its base content
/// when it is known (Update and Move only: a stale Delete stays refused).
fn stale_bases(
    tree: &DiskTree,
    patch: &PatchSet<'_>,
    store: Option<&SnapshotStore>,
) -> Result<Vec<Rebasing>, Error> {
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
        out.push(Rebasing {
            found: rebase::find_base(root, &old, version, store),
            old,
            new,
            current: current.into_vec(),
            version: version.clone(),
        });
    }
    Ok(out)
}

/// Replace a rebased file's planned content (the patch applied to its base) by the merge of
/// that change onto the current content, and say so.
fn merge_one(plan: &mut Plan, r: &Rebasing) -> Result<(), Error> {
    let Some((base, source)) = &r.found else {
        return Ok(());
    };
    let change = plan
        .changes
        .iter_mut()
        .find(|c| c.path == r.new && matches!(c.after, NewState::File { .. }));
    let merged = match change {
        Some(c) => {
            let NewState::File { bytes, .. } = &mut c.after else {
                return Ok(());
            };
            let merged = Content::from(rebase::merge(&r.new, base, &r.current, bytes)?);
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
                source.as_str()
            ),
        )
        .with_path(&r.new),
    );
    Ok(())
}

/// The diff pieces of a whole plan against the disk (each changed path, as it is to what it
/// will hold).
fn pieces_of(tree: &DiskTree, plan: &Plan) -> Vec<DiffPiece> {
    let mut out = Vec::new();
    for c in &plan.changes {
        let old = match tree.read(&c.path) {
            Ok((_, Node::File { bytes, .. })) => Some(bytes),
            _ => None,
        };
        let new = match &c.after {
            NewState::File { bytes, .. } => Some(bytes.clone()),
            _ => None,
        };
        out.push(DiffPiece {
            old: old.as_ref().map(|_| c.path.clone()),
            new: new.as_ref().map(|_| c.path.clone()),
            before: old.as_deref().unwrap_or_default().to_vec(),
            after: new.as_deref().unwrap_or_default().to_vec(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hint is worded once, for the front end that runs: the command line's flag, or the
    /// MCP tools' argument and `read` tool; `details.rebase` is the same for both.
    #[test]
    fn the_rebase_hints_name_what_the_front_end_offers() {
        let stale = || Error::new(ErrorCode::StaleFile, "a.txt changed").with_path("a.txt");
        for (front, option, read) in [
            (FrontEnd::CommandLine, "--rebase", "`apply-patch read`"),
            (FrontEnd::McpTool, "rebase: true", "the read tool"),
            (FrontEnd::Python, "rebase=True", "`apply_patch.read()`"),
            (FrontEnd::JavaScript, "rebase: true", "`read()`"),
        ] {
            let e = Error::from(RebaseAdvice::NoBase {
                cause: Box::new(stale()),
                version: "0011".into(),
                front,
            });
            assert_eq!(
                (e.code, e.path.as_deref()),
                (ErrorCode::StaleFile, Some("a.txt"))
            );
            assert_eq!(
                e.message,
                format!(
                    "a.txt changed; {option} had nothing to merge from: no snapshot of the \
                     content of version 0011 was kept, and neither the git index nor HEAD \
                     holds it"
                )
            );
            let hint = e.hint.clone().unwrap_or_default();
            assert!(hint.contains(read) && hint.contains(option), "{hint}");
            assert_eq!(
                e.details().and_then(|d| d.get("rebase")),
                Some(&REBASE_NO_BASE.into())
            );
            let e = Error::from(RebaseAdvice::Possible {
                cause: Box::new(stale().with_details(serde_json::json!({"expected": "0011"}))),
                source: rebase::BaseSource::Snapshot,
                front,
            });
            assert_eq!(e.message, "a.txt changed");
            let hint = e.hint.clone().unwrap_or_default();
            assert!(hint.contains(option), "{hint}");
            for other in ["--rebase", "rebase: true", "rebase=True"] {
                if other != option {
                    assert!(!hint.contains(other), "{hint}");
                }
            }
            assert_eq!(
                e.details(),
                Some(&serde_json::json!({"expected": "0011", "rebase": REBASE_POSSIBLE}))
            );
        }
    }
}
