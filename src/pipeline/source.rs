//! Stage: orchestration (sources). Which tree a run plans against — a memory tree, a
//! directory outside git, the git work tree (with its write guard and blob ids), or the index
//! (`--cached`) — and the two hooks that wrap the planner itself: the three-way fallback
//! (`--3way`: a file whose hunks do not apply is planned on its base blob and merged) and the
//! rebase (`--rebase`: a stale `*** Base:` is planned on an overlay that serves the base and
//! merged onto the current file). Reads only.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::options::Options;
use crate::agent::rebase;
use crate::agent::sha256_hex;
use crate::agent::snapshots::SnapshotStore;
use crate::content::Content;
use crate::error::{Error, ErrorCode};
use crate::git::fallback::{plan_with_fallback, Fallback, Planned};
use crate::git::index::entry_of;
use crate::git::trees::{Base, GitTree, IndexTree};
use crate::git::Repo;
use crate::model::{FileOp, PatchSet};
use crate::plan::{Plan, PlanOptions, Refusal};
use crate::report::{Warning, WarningCode};
use crate::tree::{DiskTree, Kind, MemTree, Node, Tree};
use crate::txn::{NewState, Snapshot};

/// The tree a run plans against.
pub(crate) enum Source<'a> {
    Memory(&'a MemTree),
    /// A directory in no git work tree.
    Disk(&'a DiskTree),
    /// A directory in a git work tree.
    WorkTree {
        tree: &'a DiskTree,
        repo: &'a Repo,
    },
    /// The index (`--cached`): the locked one, or the one read (`--check`, `--preview`).
    Index {
        root: &'a Path,
        repo: &'a Repo,
        state: &'a gix::index::State,
    },
}

impl Source<'_> {
    /// The directory a rebase overlays.
    fn disk(&self) -> Option<&DiskTree> {
        match self {
            Source::Disk(tree) | Source::WorkTree { tree, .. } => Some(tree),
            _ => None,
        }
    }

    /// Plan against the source (or `overlay`, a view of its directory), with the three-way
    /// fallback inside a repository.
    pub(crate) fn plan_over(
        &self,
        overlay: Option<&dyn Tree>,
        patch: &PatchSet<'_>,
        opts: &Options,
        plan_opts: &PlanOptions,
    ) -> Result<Planned, Refusal> {
        let fallback = Fallback {
            three_way: opts.git.three_way().is_some(),
            conflict_markers: opts.git.three_way() == Some(true),
            locate: opts.locate_options(),
        };
        let plain = |tree: &dyn Tree| {
            crate::plan::plan(tree, patch, plan_opts).map(|plan| Planned {
                plan,
                bases: BTreeMap::new(),
                conflicts: Vec::new(),
            })
        };
        match *self {
            Source::Memory(tree) => plain(overlay.unwrap_or(tree)),
            Source::Disk(tree) => plain(overlay.unwrap_or(tree)),
            Source::WorkTree { tree, repo } => {
                let inner = overlay.unwrap_or(tree);
                let make = |bases: &BTreeMap<String, Base>| {
                    let git_tree = GitTree { inner, repo, bases };
                    crate::plan::plan(&git_tree, patch, plan_opts)
                };
                let current = |path: &str| match tree.read(path)? {
                    (_, Node::File { bytes, .. }) => Ok(bytes.into_vec()),
                    _ => Ok(Vec::new()),
                };
                plan_with_fallback(repo, patch, &fallback, false, &make, &current)
            }
            Source::Index { root, repo, state } => {
                let make = |bases: &BTreeMap<String, Base>| {
                    let index_tree = IndexTree {
                        root,
                        repo,
                        state,
                        bases,
                    };
                    crate::plan::plan(&index_tree, patch, plan_opts)
                };
                let current = |path: &str| -> Result<Vec<u8>, Error> {
                    match entry_of(state, &repo.repo_path(path)?) {
                        Some(e) => repo.read_blob(&e.id, path),
                        None => Ok(Vec::new()),
                    }
                };
                plan_with_fallback(repo, patch, &fallback, true, &make, &current)
            }
        }
    }
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

/// One file whose `*** Base:` is stale: where it is read, where its result goes, its current
/// content, and its base content with where that came from when it is known.
struct Rebasing {
    old: String,
    new: String,
    current: Vec<u8>,
    found: Option<(Vec<u8>, rebase::BaseSource)>,
    version: String,
}

/// Plan against the source; with `--rebase` on a disk source, a `stale_file` refusal caused
/// by `*** Base:` versions whose content is known is planned again on those bases (an
/// overlay of the source's tree) and merged onto the current files. A `stale_file` refusal
/// that stays says what a rebase would do ([`rebase::advise_rebase`],
/// [`rebase::explain_no_base`]).
pub(crate) fn plan(
    source: &Source<'_>,
    patch: &PatchSet<'_>,
    opts: &Options,
    plan_opts: &PlanOptions,
) -> Result<Planned, Refusal> {
    let first = source.plan_over(None, patch, opts, plan_opts);
    let (refusal, tree) = match (first, source.disk()) {
        (Err(r), Some(tree)) if r.error.code == ErrorCode::StaleFile => (r, tree),
        (other, _) => return other,
    };
    let store = snapshot_store(opts, tree);
    let Ok(stale) = stale_bases(tree, patch, store.as_ref()) else {
        return Err(refusal);
    };
    let advised = |mut r: Refusal| {
        if r.error.code == ErrorCode::StaleFile {
            advise(&mut r.error, &stale, opts.rebase);
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
        merge_one(&mut planned.plan, r).map_err(|error| Refusal {
            error,
            files: planned.plan.files.clone(),
            warnings: planned.plan.warnings.clone(),
        })?;
    }
    if plan_opts.diff {
        planned.plan.diff = Some(diff_of(tree, &planned.plan));
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

/// Word a `stale_file` refusal of a file whose `*** Base:` no longer matches for what a
/// rebase would do: its base content is known (`--rebase` would merge), or `--rebase` was
/// given and nothing of that version was kept.
fn advise(error: &mut Error, stale: &[Rebasing], rebase: bool) {
    let Some(r) = stale
        .iter()
        .find(|r| error.path.as_deref() == Some(r.old.as_str()))
    else {
        return;
    };
    match (&r.found, rebase) {
        (Some((_, source)), false) => rebase::advise_rebase(error, *source),
        (None, true) => rebase::explain_no_base(error, &r.version),
        _ => {}
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
