//! Finding the repository of the root, repo-relative paths, and the write guard (no `.git`, no
//! submodule). Reads only.

use super::blob::Filters;
use super::GitError;
use crate::error::Error;
use crate::root::{canonical_or_same, GixFailure};
use gix::bstr::{BStr, ByteSlice};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The git work tree that contains the root, opened through gix.
pub struct Repo {
    pub(crate) repo: gix::Repository,
    /// The work tree, canonical.
    workdir: PathBuf,
    /// The root relative to the work tree, `/`-separated: "" or "dir/sub".
    prefix: String,
    /// The index as it was when the repository was opened (read-only checks); empty when it
    /// could not be read (see `index_error`).
    pub(crate) index: gix::worktree::Index,
    /// Why the index could not be read (corrupt, unreadable): only the flows that use the
    /// index (`--index`, `--cached`, `--3way`, check-patches) refuse; a plain apply warns.
    index_error: Option<GitError>,
    /// git's clean filters, set up at the first blob id and kept (see [`Filters`]).
    pub(super) filters: Mutex<Option<Filters>>,
    /// The folders [`Repo::check_path`] looked in for a `.git` of a nested repository, with
    /// the answer: a many-file patch asks for the same folders file after file.
    nested: Mutex<HashMap<String, bool>>,
    /// The path guard's probe of a folder for a `.git` through the planner's work tree
    /// ([`Repo::probed_git`]), with the answer.
    probed: Mutex<HashMap<String, bool>>,
    /// The paths the planner's work tree found to be folders (see [`Repo::probed_git`] for
    /// why an answer is kept for the run).
    folders: Mutex<HashSet<String>>,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("workdir", &self.workdir)
            .field("prefix", &self.prefix)
            .finish()
    }
}

impl Repo {
    /// The work tree containing `root` (a directory), also from a subdirectory, in a linked
    /// worktree or a submodule, and in a repository without commits. `GIT_DIR`,
    /// `GIT_WORK_TREE` and `GIT_INDEX_FILE` are honoured (git sets them for hooks).
    ///
    /// `Ok(None)` when the root is in no work tree (no repository, or a bare one): git
    /// features are then skipped. A root inside a `.git` directory is `path_escape`.
    pub fn discover(root: &Path) -> Result<Option<Repo>, GitError> {
        let root_canon = crate::root::check_root(root)?;
        let Some(repo) = crate::root::open_repo(&root_canon)? else {
            return Ok(None);
        };
        Repo::of_opened(root, &root_canon, repo)
    }

    /// [`Repo::discover`] with the repository `root::open_repo` opened for `root_canon` (the
    /// canonical `root`): a run opens it once, for the state place and the planner. The
    /// index is read here, so after a recovery that may have installed one.
    pub(crate) fn of_opened(
        root: &Path,
        root_canon: &Path,
        repo: gix::Repository,
    ) -> Result<Option<Repo>, GitError> {
        let git_dir = canonical_or_same(repo.git_dir());
        // The same folder but in a linked worktree: resolved once (a `readlink` per component).
        let common_dir = if repo.common_dir() == repo.git_dir() {
            git_dir.clone()
        } else {
            canonical_or_same(repo.common_dir())
        };
        if root_canon.starts_with(&git_dir) || root_canon.starts_with(&common_dir) {
            return Err(GitError::RootInGitDir {
                root: root.to_path_buf(),
            });
        }
        let Some(workdir) = repo.workdir().map(canonical_or_same) else {
            return Ok(None);
        };
        let Ok(rest) = root_canon.strip_prefix(&workdir) else {
            // GIT_WORK_TREE points elsewhere: the root is not part of that work tree.
            return Ok(None);
        };
        let prefix = slash_path(rest)?;
        let (index, index_error) = match read_index(&repo) {
            Ok(index) => (index, None),
            Err(e) => {
                let empty = gix::index::File::from_state(
                    gix::index::State::new(repo.object_hash()),
                    repo.index_path(),
                );
                let index = gix::worktree::Index::new(gix::fs::FileSnapshot::new(empty));
                let unreadable =
                    GitError::IndexUnreadable(GixFailure::new("cannot read the git index", &e));
                (index, Some(unreadable))
            }
        };
        Ok(Some(Repo {
            repo,
            workdir,
            prefix,
            index,
            index_error,
            filters: Mutex::default(),
            nested: Mutex::default(),
            probed: Mutex::default(),
            folders: Mutex::default(),
        }))
    }

    /// Why the index could not be read, when it could not (the index is then taken as empty).
    pub fn index_error(&self) -> Option<&GitError> {
        self.index_error.as_ref()
    }

    /// The work tree directory (canonical).
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// The root relative to the work tree ("" when the root is the top of the work tree).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn root_prefix(&self) -> &str {
        &self.prefix
    }

    /// The object format of the repository (SHA-1 or SHA-256).
    pub fn object_hash(&self) -> gix::hash::Kind {
        self.repo.object_hash()
    }

    /// The gix repository, for callers that need more than this module offers.
    pub fn gix(&self) -> &gix::Repository {
        &self.repo
    }

    /// The repo-relative, `/`-separated path of a root-relative path (`.` and `..`
    /// resolved; leaving the work tree is `path_escape`).
    pub fn repo_path(&self, rel: &str) -> Result<String, GitError> {
        let mut parts: Vec<&str> = self.prefix.split('/').filter(|p| !p.is_empty()).collect();
        for part in rel.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(GitError::LeavesWorkTree { path: rel.into() });
                    }
                }
                other => parts.push(other),
            }
        }
        Ok(parts.join("/"))
    }

    /// The absolute work-tree path of a repo-relative path.
    pub fn worktree_file(&self, repo_path: &str) -> PathBuf {
        let mut path = self.workdir.clone();
        path.extend(repo_path.split('/'));
        path
    }

    /// Refuse (`path_escape`, saying why) a root-relative path that lies in `.git` or inside a
    /// submodule (a gitlink of the index, or a nested repository in the work tree).
    pub fn check_path(&self, rel: &str) -> Result<(), GitError> {
        let repo_path = self.repo_path(rel)?;
        let parts: Vec<&str> = repo_path.split('/').collect();
        if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
            return Err(GitError::InsideGitDir { path: rel.into() });
        }
        for end in 1..=parts.len() {
            let dir = parts[..end].join("/");
            let gitlink = self
                .index
                .entry_by_path(BStr::new(dir.as_bytes()))
                .is_some_and(|e| e.mode.is_submodule());
            let nested = end < parts.len() && self.holds_git(&dir);
            if gitlink || nested {
                return Err(GitError::OtherRepository {
                    path: rel.into(),
                    dir,
                    submodule: gitlink,
                    whole: end == parts.len(),
                });
            }
        }
        Ok(())
    }

    /// Does the work-tree folder `dir` (repo-relative) hold a `.git`, a nested repository's?
    /// Asked once per folder and run.
    fn holds_git(&self, dir: &str) -> bool {
        let mut nested = self.nested.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&known) = nested.get(dir) {
            return known;
        }
        let found = self.worktree_file(dir).join(".git").exists();
        nested.insert(dir.to_string(), found);
        found
    }

    /// The work tree's answer to "does folder `dir` hold a `.git`" as `probe` gives it, asked
    /// once per folder: a `Repo` lives for one run, which plans against one state of the work
    /// tree (the commit re-checks each file it replaces, not the folders' `.git`).
    pub(crate) fn probed_git(
        &self,
        dir: &str,
        probe: impl FnOnce() -> Result<bool, Error>,
    ) -> Result<bool, GitError> {
        if let Some(&known) = self.probed_lock().get(dir) {
            return Ok(known);
        }
        let found = probe()?;
        self.probed_lock().insert(dir.to_string(), found);
        Ok(found)
    }

    /// Was `path` found to be a folder earlier in the run ([`Repo::know_folder`])?
    pub(crate) fn is_known_folder(&self, path: &str) -> bool {
        self.folders_lock().contains(path)
    }

    /// Keep that `path` is a folder, for the rest of the run.
    pub(crate) fn know_folder(&self, path: &str) {
        self.folders_lock().insert(path.to_string());
    }

    fn folders_lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.folders.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn probed_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.probed.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The index as read when the repository was opened.
    pub fn index_state(&self) -> &gix::index::State {
        &self.index
    }

    /// A repo-relative path as the index spells it.
    pub(crate) fn bstr(path: &str) -> &BStr {
        path.as_bytes().as_bstr()
    }
}

/// The index as git reads it to look at it: without hashing the whole file to verify its
/// trailing checksum (git verifies it only in `git fsck`; gix's default read hashed it on
/// every run, with collision detection, a cost sized by the repository — 0.4 MB for git's own
/// repository). A missing index file is an empty index. The index read under the lock before
/// a write is still verified ([`Repo::lock_index`]).
fn read_index(repo: &gix::Repository) -> Result<gix::worktree::Index, gix::Error> {
    let file = gix::index::File::at_or_default(
        repo.index_path(),
        repo.object_hash(),
        true,
        gix::index::decode::Options::default(),
    )?;
    Ok(gix::worktree::Index::new(gix::fs::FileSnapshot::new(file)))
}

/// A relative path as a `/`-separated string (paths of patches are UTF-8).
fn slash_path(path: &Path) -> Result<String, GitError> {
    let mut parts = Vec::new();
    for component in path.components() {
        let text = component.as_os_str().to_str().ok_or_else(|| {
            GitError::PathNotUtf8 {
                path: path.to_path_buf(),
            }
        })?;
        parts.push(text);
    }
    Ok(parts.join("/"))
}
