//! Stage: check and commit, the git side (SPEC §7). Everything here goes through `gix`; the
//! `git` program is never run.
//!
//! - [`Repo::discover`]: the work tree that contains the root (or none: then every git
//!   feature is skipped quietly), repo-relative paths, and the guard that refuses writes into
//!   `.git` or a submodule.
//! - blob ids as `git add` would store them, compared with a diff's `index OLD..NEW` line
//!   ([`Repo::check_blob_ids`]).
//! - index entries, "does the work tree still match the index" ([`Repo::check_index_matches`]),
//!   and the locked read-modify-write of the index that `--index`, `--cached` and
//!   `--conflict-markers` use ([`LockedIndex`]).
//! - base blobs for `--3way` ([`Repo::find_blob_by_prefix`], [`Repo::three_way`]).
//! - `check-patches`: patch series checked against the staged tree ([`series`]).
//!
//! Nothing here decides where a hunk goes or writes the work tree: the planner and the
//! transaction call in at fixed points.


mod blob;
pub(crate) mod changes;
mod discover;
mod error;
pub(crate) mod fallback;
mod hooks;
pub(crate) mod index;
#[cfg(feature = "cli")]
pub mod series;
mod stage;
mod threeway;
pub(crate) mod trees;

pub use blob::{id_matches, is_null_id};
// Used by the integration tests only.
#[cfg(feature = "internals")]
pub use {
    blob::{blob_id_of_bytes, BaseCheck},
};
pub use discover::Repo;
pub use error::{GitError, MergeFate};
pub use index::{IndexEntry, IndexRequirement};
pub use stage::{IndexChange, LockedIndex, SavedEntries};
pub use threeway::{Conflicted, ThreeWay};

pub(crate) use crate::root::GixFailure;
