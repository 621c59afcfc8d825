//! The trees the planner reads inside a repository: the work tree with the submodule guard
//! and `--3way` bases ([`GitTree`]), and the index as a tree for `--cached` ([`IndexTree`]).
//! Reads only.

use super::GitError;
use super::index::entry_of;
use super::{IndexEntry, Repo};
use crate::error::Error;
use crate::tree::{Kind, Node, Tree, TreeError};
use crate::txn::Snapshot;
use std::collections::BTreeMap;
use std::path::Path;

/// A refusal of git's checks of a path passes through a tree whole, as its boundary error.
impl From<GitError> for TreeError {
    fn from(err: GitError) -> TreeError {
        Error::from(err).into()
    }
}

/// A tree's failure met by the git integration passes through whole, as its boundary error.
impl From<TreeError> for GitError {
    fn from(err: TreeError) -> GitError {
        Error::from(err).into()
    }
}

/// The work tree as the planner sees it inside a repository: submodule paths are refused, and
/// files being merged by `--3way` read as their base.
pub(crate) struct GitTree<'a> {
    pub inner: &'a dyn Tree,
    pub repo: &'a Repo,
    pub bases: &'a BTreeMap<String, Base>,
}

/// The base of a file merged by `--3way`, kept under the path the file is read from (the
/// source of a rename or copy).
pub(crate) struct Base {
    pub id: String,
    /// Work-tree form.
    pub content: Vec<u8>,
    /// Git form (stage 1 of a recorded conflict).
    pub blob: Vec<u8>,
    /// Every path the patch writes from this file, in patch order.
    pub targets: Vec<Target>,
}

/// A path the patch writes from a `--3way` base: the file itself for a modify, the new path
/// of a rename or copy. Its planned content (the patched base) is merged into the source as
/// it is.
pub(crate) struct Target {
    pub path: String,
    /// 1-based hunks of its file patch that did not apply to the file as it is.
    pub failed_hunks: Vec<usize>,
    /// 1-based hunks of its file patch that the file as it is holds already.
    pub applied_hunks: Vec<usize>,
}

impl Tree for GitTree<'_> {
    fn root(&self) -> Option<&Path> {
        self.inner.root()
    }

    /// A folder is looked at once per run (the guard asks for every folder of every path,
    /// and a many-file patch's paths share them); anything else each time.
    fn kind(&self, path: &str) -> Result<Kind, TreeError> {
        check_probe(self.repo, path)?;
        if self.repo.is_known_folder(path) {
            return Ok(Kind::Directory);
        }
        let kind = self.inner.kind(path)?;
        if kind == Kind::Directory {
            self.repo.know_folder(path);
        }
        Ok(kind)
    }

    /// Asked once per folder and run (the work tree's answer is kept by the [`Repo`]): the
    /// guard probes every folder of every path, and a many-file patch's paths share them.
    fn holds_git(&self, dir: &str) -> Result<bool, TreeError> {
        self.repo.check_path(dir)?;
        Ok(self
            .repo
            .probed_git(dir, || Ok(self.inner.kind(&format!("{dir}/.git"))? != Kind::Missing))?)
    }

    fn shows_snapshot(&self, path: &str) -> bool {
        !self.bases.contains_key(path) && self.inner.shows_snapshot(path)
    }

    fn blob_matches(
        &self,
        path: &str,
        id: &str,
        bytes: &[u8],
    ) -> Result<Option<(bool, String)>, TreeError> {
        Ok(self.repo.blob_matches(path, id, bytes, false)?)
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError> {
        self.repo.check_path(path)?;
        let (snapshot, node) = self.inner.read(path)?;
        match (self.bases.get(path), node) {
            (Some(base), Node::File { mode, .. }) => Ok((
                snapshot,
                Node::File {
                    bytes: base.content.clone().into(),
                    mode,
                },
            )),
            (_, node) => Ok((snapshot, node)),
        }
    }
}

/// `kind` is also how the path guard asks whether a directory holds a nested repository
/// (`DIR/.git`): that probe reads, never writes, so only the directory is checked.
fn check_probe(repo: &Repo, path: &str) -> Result<(), GitError> {
    match path.rsplit_once('/') {
        Some((dir, ".git")) => repo.check_path(dir),
        _ => repo.check_path(path),
    }
}

/// The index as a tree (`--cached`): each path holds its stage-0 entry's blob.
pub(crate) struct IndexTree<'a> {
    pub root: &'a Path,
    pub repo: &'a Repo,
    /// The locked index, or the index as read (`--check`).
    pub state: &'a gix::index::State,
    pub bases: &'a BTreeMap<String, Base>,
}

impl IndexTree<'_> {
    fn entry(&self, path: &str) -> Result<Option<IndexEntry>, GitError> {
        Ok(entry_of(self.state, &self.repo.repo_path(path)?))
    }

    fn is_dir(&self, path: &str) -> Result<bool, GitError> {
        let repo_path = self.repo.repo_path(path)?;
        Ok(self.state.path_is_directory(Repo::bstr(&repo_path)))
    }
}

impl Tree for IndexTree<'_> {
    fn root(&self) -> Option<&Path> {
        Some(self.root)
    }

    fn kind(&self, path: &str) -> Result<Kind, TreeError> {
        check_probe(self.repo, path)?;
        match self.entry(path)? {
            Some(e) if e.mode.is_symlink() => Ok(Kind::Symlink(self.repo.read_blob(&e.id, path)?)),
            Some(e) if e.mode.is_gitlink() => Ok(Kind::Directory),
            Some(_) => Ok(Kind::File),
            None if self.is_dir(path)? => Ok(Kind::Directory),
            None => Ok(Kind::Missing),
        }
    }

    fn read(&self, path: &str) -> Result<(Snapshot, Node), TreeError> {
        self.repo.check_path(path)?;
        let Some(entry) = self.entry(path)? else {
            return Ok(match self.is_dir(path)? {
                true => (Snapshot::Directory, Node::Directory),
                false => (Snapshot::Missing, Node::Missing),
            });
        };
        if entry.conflicted {
            return Err(GitError::ConflictedEntry { path: path.into() }.into());
        }
        let bytes = match self.bases.get(path) {
            Some(base) => base.blob.clone(),
            None => self.repo.read_blob(&entry.id, path)?,
        };
        if entry.mode.is_symlink() {
            return Ok((
                Snapshot::Symlink {
                    target: bytes.clone(),
                },
                Node::Symlink { target: bytes },
            ));
        }
        let mode = if entry.mode.is_executable() {
            0o755
        } else {
            0o644
        };
        let snapshot = Snapshot::File {
            len: bytes.len() as u64,
            mtime: None,
            mode,
            sha256: crate::txn::sha256(&bytes).into(),
        };
        Ok((
            snapshot,
            Node::File {
                bytes: bytes.into(),
                mode,
            },
        ))
    }
}
