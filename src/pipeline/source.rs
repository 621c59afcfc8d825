//! Stage: orchestration (sources). Which tree a run plans against — a memory tree, a
//! directory outside git, the git work tree (with its write guard and blob ids), the index
//! (`--cached`), or a kept preview (`confirm`) — and the two hooks that wrap the planner itself: the three-way fallback
//! (`--3way`: a file whose hunks do not apply is planned on its base blob and merged) and the
//! rebase (`--rebase`, its own module: a stale `*** Base:` is planned on an overlay that
//! serves the base and merged onto the current file). Reads only. Without the `git` feature
//! only the memory tree and the plain directory are sources, with neither hook.

#[cfg(feature = "git")]
use std::collections::BTreeMap;
#[cfg(feature = "git")]
use std::path::Path;

use super::options::Options;
#[cfg(feature = "git")]
use crate::error::Error;
#[cfg(feature = "git")]
pub(crate) use crate::git::fallback::Planned;
#[cfg(feature = "git")]
use crate::git::fallback::{plan_with_fallback, Fallback};
#[cfg(feature = "git")]
use crate::git::index::entry_of;
#[cfg(feature = "git")]
use crate::git::trees::{Base, GitTree, IndexTree};
#[cfg(feature = "git")]
use crate::git::Repo;
use crate::model::PatchSet;
use crate::plan::{Plan, PlanOptions, Refusal};
#[cfg(feature = "git")]
use crate::tree::Node;
use crate::tree::{DiskTree, MemTree, Tree};

/// A plan, as the sinks take it. Without the `git` feature there is no three-way fallback,
/// so no bases and no conflicts to carry (the git build's is `git::fallback`'s).
#[cfg(not(feature = "git"))]
pub(crate) struct Planned {
    pub plan: Plan,
}

impl Planned {
    /// A plan made without the three-way fallback.
    pub(crate) fn plain(plan: Plan) -> Planned {
        Planned {
            plan,
            #[cfg(feature = "git")]
            bases: BTreeMap::new(),
            #[cfg(feature = "git")]
            conflicts: Vec::new(),
        }
    }
}

/// The tree a run plans against.
pub(crate) enum Source<'a> {
    Memory(&'a MemTree),
    /// A directory in no git work tree.
    Disk(&'a DiskTree),
    /// A directory in a git work tree.
    #[cfg(feature = "git")]
    WorkTree {
        tree: &'a DiskTree,
        repo: &'a Repo,
    },
    /// The index (`--cached`): the locked one, or the one read (`--check`, `--preview`).
    #[cfg(feature = "git")]
    Index {
        root: &'a Path,
        repo: &'a Repo,
        state: &'a gix::index::State,
    },
    /// A kept preview (`confirm`): its changes, each checked against what its path holds
    /// now in the tree it was planned against.
    #[cfg(feature = "git")]
    Kept {
        kept: &'a super::confirm::KeptPlan,
        opened: &'a super::sink::Opened,
    },
}

impl Source<'_> {
    /// The directory a rebase overlays.
    #[cfg(feature = "git")]
    pub(super) fn disk(&self) -> Option<&DiskTree> {
        match self {
            Source::Disk(tree) | Source::WorkTree { tree, .. } => Some(tree),
            _ => None,
        }
    }

    /// Plan against the source (or `overlay`, a view of its directory), with the three-way
    /// fallback inside a repository.
    // Without git, nothing here reads `opts` (they choose the three-way fallback).
    #[cfg_attr(not(feature = "git"), allow(unused_variables))]
    pub(crate) fn plan_over(
        &self,
        overlay: Option<&dyn Tree>,
        patch: &PatchSet<'_>,
        opts: &Options,
        plan_opts: &PlanOptions,
    ) -> Result<Planned, Box<Refusal>> {
        #[cfg(feature = "git")]
        let fallback = Fallback {
            three_way: opts.git.three_way().is_some(),
            conflict_markers: opts.git.three_way() == Some(true),
            locate: opts.locate_options(),
        };
        let plain =
            |tree: &dyn Tree| crate::plan::unrendered(tree, patch, plan_opts).map(Planned::plain);
        match *self {
            Source::Memory(tree) => plain(overlay.unwrap_or(tree)),
            Source::Disk(tree) => plain(overlay.unwrap_or(tree)),
            #[cfg(feature = "git")]
            Source::WorkTree { tree, repo } => {
                let inner = overlay.unwrap_or(tree);
                let make = |bases: &BTreeMap<String, Base>, fuzz: usize| {
                    let git_tree = GitTree { inner, repo, bases };
                    crate::plan::unrendered(&git_tree, patch, &with_fuzz(plan_opts, fuzz))
                };
                let current = |path: &str| match tree.read(path)? {
                    (_, Node::File { bytes, .. }) => Ok(bytes.into_vec()),
                    _ => Ok(Vec::new()),
                };
                plan_with_fallback(repo, patch, &fallback, false, &make, &current)
            }
            #[cfg(feature = "git")]
            Source::Index { root, repo, state } => {
                let make = |bases: &BTreeMap<String, Base>, fuzz: usize| {
                    let index_tree = IndexTree {
                        root,
                        repo,
                        state,
                        bases,
                    };
                    crate::plan::unrendered(&index_tree, patch, &with_fuzz(plan_opts, fuzz))
                };
                let current = |path: &str| -> Result<Vec<u8>, Error> {
                    match entry_of(state, &repo.repo_path(path)?) {
                        Some(e) => Ok(repo.read_blob(&e.id, path)?),
                        None => Ok(Vec::new()),
                    }
                };
                plan_with_fallback(repo, patch, &fallback, true, &make, &current)
            }
            #[cfg(feature = "git")]
            Source::Kept { kept, opened } => kept.check(opened).map_err(|error| {
                Box::new(Refusal {
                    error,
                    files: Vec::new(),
                    warnings: Vec::new(),
                })
            }),
        }
    }
}

/// `opts` with `--fuzz fuzz` (the three-way fallback plans without fuzz first).
#[cfg(feature = "git")]
fn with_fuzz(opts: &PlanOptions, fuzz: usize) -> std::borrow::Cow<'_, PlanOptions> {
    if opts.locate.fuzz == fuzz {
        return std::borrow::Cow::Borrowed(opts);
    }
    let mut opts = opts.clone();
    opts.locate.fuzz = fuzz;
    std::borrow::Cow::Owned(opts)
}

/// Plan against the source. A `stale_file` refusal on a disk source goes to the rebase
/// (feature `git`): with `--rebase` a stale `*** Base:` is planned again on its base and
/// merged; a refusal that stays says what a rebase would do.
pub(crate) fn plan(
    source: &Source<'_>,
    patch: &PatchSet<'_>,
    opts: &Options,
    plan_opts: &PlanOptions,
) -> Result<Planned, Box<Refusal>> {
    match source.plan_over(None, patch, opts, plan_opts) {
        #[cfg(feature = "git")]
        Err(refusal) if refusal.error.code == crate::error::ErrorCode::StaleFile => {
            super::rebase::on_stale(source, refusal, patch, opts, plan_opts)
        }
        other => other,
    }
}
