//! Index entries and the `--index` precondition: every touched path must still be what its
//! index entry says (stat first; the content is hashed when the stat differs or is racy).
//! Reads only.

use super::GitError;
use super::{blob::blob_id_of_bytes, Repo};
use crate::error::Error;
use crate::model::Mode;
use gix::index::entry::{Mode as EntryMode, Stage};
use gix::ObjectId;

/// An index entry of a path, as the planner needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub id: ObjectId,
    pub mode: Mode,
    /// The path has unmerged entries (stages 1–3); `id`/`mode` are then those of stage 2
    /// (ours) when there is one.
    pub conflicted: bool,
}

/// What `--index` requires of one touched path (root-relative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexRequirement {
    /// The path is modified, deleted, renamed or copied from: it must be in the index, and
    /// the work-tree file must match its entry.
    Tracked(String),
    /// The path is created: it must not be in the index.
    Untracked(String),
}

impl Repo {
    /// The index entry of root-relative `rel` (as read when the repository was opened).
    pub fn index_entry(&self, rel: &str) -> Result<Option<IndexEntry>, GitError> {
        let repo_path = self.repo_path(rel)?;
        Ok(entry_of(&self.index, &repo_path))
    }

    /// The blob and mode of the index entry of `rel` (`--cached`: the preimage).
    pub fn index_blob(&self, rel: &str) -> Result<Option<(Vec<u8>, Mode)>, GitError> {
        let Some(entry) = self.index_entry(rel)? else {
            return Ok(None);
        };
        let data = self.read_blob(&entry.id, rel)?;
        Ok(Some((data, entry.mode)))
    }

    /// The content of blob `id` (for messages: the path it belongs to).
    pub fn read_blob(&self, id: &ObjectId, rel: &str) -> Result<Vec<u8>, GitError> {
        let blob = self.repo.find_blob(*id).map_err(|e| {
            GitError::gix_at(&format!("cannot read blob {id} of {rel}"), &e, rel)
        })?;
        Ok(blob.detach().data)
    }

    /// Refuse (`index_mismatch`, naming every offending path) unless each requirement holds
    /// against the index as read when the repository was opened. [`super::LockedIndex`]
    /// checks again under the index lock.
    pub fn check_index_matches(&self, requirements: &[IndexRequirement]) -> Result<(), GitError> {
        check_against(self, &self.index, requirements)
    }
}

/// The entry of `repo_path` in `state`: stage 0, else the conflict's stage 2 (or any stage).
pub(crate) fn entry_of(state: &gix::index::State, repo_path: &str) -> Option<IndexEntry> {
    let path = Repo::bstr(repo_path);
    if let Some(e) = state.entry_by_path_and_stage(path, Stage::Unconflicted) {
        return Some(IndexEntry {
            id: e.id,
            mode: mode_of(e.mode),
            conflicted: false,
        });
    }
    let e = state
        .entry_by_path_and_stage(path, Stage::Ours)
        .or_else(|| state.entry_by_path(path))?;
    Some(IndexEntry {
        id: e.id,
        mode: mode_of(e.mode),
        conflicted: true,
    })
}

/// An index entry mode as a diff mode.
pub(crate) fn mode_of(mode: EntryMode) -> Mode {
    if mode == EntryMode::FILE_EXECUTABLE {
        Mode::EXECUTABLE
    } else if mode == EntryMode::SYMLINK {
        Mode::SYMLINK
    } else if mode == EntryMode::COMMIT {
        Mode::GITLINK
    } else {
        Mode::FILE
    }
}

/// Check every requirement against `state`; collect all offenders into one error.
pub(crate) fn check_against(
    repo: &Repo,
    state: &gix::index::State,
    requirements: &[IndexRequirement],
) -> Result<(), GitError> {
    let mut problems: Vec<(String, String)> = Vec::new();
    for requirement in requirements {
        let (rel, problem) = match requirement {
            IndexRequirement::Tracked(rel) => (rel, tracked_problem(repo, state, rel)?),
            IndexRequirement::Untracked(rel) => {
                let repo_path = repo.repo_path(rel)?;
                let known = state.entry_by_path(Repo::bstr(&repo_path)).is_some();
                (
                    rel,
                    known.then(|| "already exists in the index".to_string()),
                )
            }
        };
        if let Some(problem) = problem {
            if !problems.iter().any(|(p, _)| p == rel) {
                problems.push((rel.clone(), problem));
            }
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(GitError::IndexDisagrees { problems })
}

/// Why a tracked path does not satisfy `--index`, or None when it does.
fn tracked_problem(
    repo: &Repo,
    state: &gix::index::State,
    rel: &str,
) -> Result<Option<String>, GitError> {
    let repo_path = repo.repo_path(rel)?;
    let path = Repo::bstr(&repo_path);
    let Some(entry) = state.entry_by_path_and_stage(path, Stage::Unconflicted) else {
        return Ok(Some(if state.entry_by_path(path).is_some() {
            "has unresolved merge conflicts in the index".to_string()
        } else {
            "does not exist in the index".to_string()
        }));
    };
    if entry
        .flags
        .contains(gix::index::entry::Flags::INTENT_TO_ADD)
    {
        return Ok(Some(
            "is only marked intent-to-add in the index".to_string(),
        ));
    }
    Ok((!worktree_matches(repo, state, entry, &repo_path)?)
        .then(|| "the work-tree file differs from the index".to_string()))
}

/// Does the work-tree file at `repo_path` hold what `entry` records? Stat first; when the stat
/// differs, or the entry is racily clean (written in the same second as the index), the
/// file's content is hashed as `git add` would and compared with the entry's id.
pub(crate) fn worktree_matches(
    repo: &Repo,
    state: &gix::index::State,
    entry: &gix::index::Entry,
    repo_path: &str,
) -> Result<bool, GitError> {
    let file = repo.worktree_file(repo_path);
    let metadata = match gix::index::fs::Metadata::from_path_no_follow(&file) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(repo_path, "cannot inspect", &e).into()),
    };
    let config = repo.repo.config_snapshot();
    let has_symlinks = config.boolean("core.symlinks").unwrap_or(true);
    let executable_bit = config.boolean("core.fileMode").unwrap_or(true);
    if entry
        .mode
        .change_to_match_fs(&metadata, has_symlinks, executable_bit)
        .is_some()
    {
        return Ok(false);
    }
    let options = repo
        .repo
        .stat_options()
        .map_err(|e| GitError::gix("cannot read git's stat options", &e))?;
    if let Ok(stat) = gix::index::entry::Stat::from_fs(&metadata) {
        if !entry.stat.is_racy(state.timestamp(), options) && entry.stat.matches(&stat, options) {
            return Ok(true);
        }
    }
    let id = if entry.mode == EntryMode::SYMLINK {
        let target =
            std::fs::read_link(&file).map_err(|e| Error::io(repo_path, "cannot read link", &e))?;
        let bytes = gix::path::into_bstr(target)
            .map_err(|e| GitError::gix(&format!("cannot read link {repo_path}"), &e))?
            .into_owned();
        blob_id_of_bytes(repo.object_hash(), &bytes)
    } else {
        let bytes = std::fs::read(&file).map_err(|e| Error::io(repo_path, "cannot read", &e))?;
        let clean = repo.clean_repo_path(repo_path, &bytes)?;
        blob_id_of_bytes(repo.object_hash(), &clean)
    };
    Ok(id == entry.id)
}
