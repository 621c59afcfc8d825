//! Stage: commit (the index). The locked read-modify-write of the git index: the lock is taken
//! before the index is read and held until the new index is committed, so the check, the edit
//! and the write see one index and no other git process can interleave.
//!
//! Writes new blobs to the object database (harmless when the transaction is later refused:
//! unreferenced objects are garbage-collected) and the index through `index.lock`. Never
//! touches the work tree. With `--index` the locked index is the work tree transaction's
//! [`Companion`]: written into `index.lock` before the commit mark, installed right after it,
//! so that a crash leaves both old or both new (the recovery finishes the index too).

use super::GitError;
use super::index::{check_against, entry_of, IndexEntry, IndexRequirement};
use super::Repo;
use crate::error::Error;
use crate::model::Mode;
use crate::txn::{Change, Companion, NewState, TxnError};
use gix::index::entry::{Flags, Mode as EntryMode, Stage, Stat};
use gix::ObjectId;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// One edit of the index; paths are root-relative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexChange {
    /// Stage `content` (as stored in git: already through the clean filters) with `mode`.
    Put {
        path: String,
        content: Vec<u8>,
        mode: Mode,
    },
    /// Remove every entry of `path`.
    Remove { path: String },
    /// Record `path` as unmerged, as git does after a conflicted merge: stage 1 (base),
    /// 2 (ours), 3 (theirs); a side that is None has no entry.
    Conflict {
        path: String,
        base: Option<(Vec<u8>, Mode)>,
        ours: Option<(Vec<u8>, Mode)>,
        theirs: Option<(Vec<u8>, Mode)>,
    },
}

impl IndexChange {
    /// The root-relative path it edits.
    pub fn path(&self) -> &str {
        match self {
            IndexChange::Put { path, .. }
            | IndexChange::Remove { path }
            | IndexChange::Conflict { path, .. } => path,
        }
    }
}

/// The index, locked (`index.lock` held) and read under the lock, being edited in memory.
/// Dropping it without [`LockedIndex::commit`] leaves the index untouched and removes the lock.
pub struct LockedIndex {
    /// `None` once installed.
    lock: Option<gix::lock::File>,
    /// The new index is in the lock file already (written by the transaction).
    written: bool,
    file: gix::index::File,
    /// Repo-relative paths whose stat is taken from the work tree at commit (`--index`).
    stat_from_worktree: Vec<String>,
    workdir: PathBuf,
}

impl std::fmt::Debug for LockedIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockedIndex")
            .field("lock", &self.lock.as_ref().map(|l| l.lock_path()))
            .finish()
    }
}

impl Repo {
    /// Take the index lock (`busy` when another process holds it), then read the index.
    /// A repository without an index file yet (no commits, nothing staged) gets an empty one.
    pub fn lock_index(&self) -> Result<LockedIndex, GitError> {
        let path = self.repo.index_path();
        let lock = gix::lock::File::acquire_to_update_resource(
            &path,
            gix::lock::acquire::Fail::AfterDurationWithBackoff(Duration::from_millis(500)),
            None,
            0,
        )
        .map_err(|e| {
            GitError::IndexLocked {
                index: path.to_path_buf(),
                cause: crate::root::gix_message("", &e),
            }
        })?;
        let file = gix::index::File::at_or_default(
            &path,
            self.object_hash(),
            false,
            gix::index::decode::Options::default(),
        )
        .map_err(|e| GitError::gix("cannot read the git index", &e))?;
        Ok(LockedIndex {
            lock: Some(lock),
            written: false,
            file,
            stat_from_worktree: Vec::new(),
            workdir: self.workdir().to_path_buf(),
        })
    }

    /// The index edits that mirror a transaction's work-tree changes (`--index`): new
    /// contents go through the clean filters, as `git add` would store them.
    pub fn index_changes_for(&self, changes: &[Change]) -> Result<Vec<IndexChange>, GitError> {
        // With core.fileMode=false the file system's executable bit means nothing: an entry
        // keeps its own mode, as `git add` keeps it.
        let trust_exec = self
            .repo
            .config_snapshot()
            .boolean("core.fileMode")
            .unwrap_or(true);
        changes
            .iter()
            .map(|change| {
                let path = change.path.clone();
                Ok(match &change.after {
                    NewState::File { bytes, mode, .. } => {
                        let from_fs = if mode & 0o111 != 0 {
                            Mode::EXECUTABLE
                        } else {
                            Mode::FILE
                        };
                        let mode = match self.index_entry(&path)? {
                            Some(e) if !trust_exec && !e.mode.is_symlink() => e.mode,
                            _ => from_fs,
                        };
                        IndexChange::Put {
                            content: self.clean(&change.path, bytes)?.into_owned(),
                            mode,
                            path,
                        }
                    }
                    NewState::Symlink { target } => IndexChange::Put {
                        content: target.clone(),
                        mode: Mode::SYMLINK,
                        path,
                    },
                    NewState::Absent => IndexChange::Remove { path },
                })
            })
            .collect()
    }
}

impl LockedIndex {
    /// The entry of root-relative `rel` in the locked index.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn entry(&self, repo: &Repo, rel: &str) -> Result<Option<IndexEntry>, GitError> {
        Ok(entry_of(&self.file, &repo.repo_path(rel)?))
    }

    /// Does the locked index hold entries below root-relative `rel` (a directory)?
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn is_dir(&self, repo: &Repo, rel: &str) -> Result<bool, GitError> {
        let repo_path = repo.repo_path(rel)?;
        Ok(self.file.path_is_directory(Repo::bstr(&repo_path)))
    }

    /// [`Repo::check_index_matches`] against the locked index.
    pub fn check_matches(
        &self,
        repo: &Repo,
        requirements: &[IndexRequirement],
    ) -> Result<(), GitError> {
        check_against(repo, &self.file, requirements)
    }

    /// Write the new blobs to the object database and edit the entries in memory. With
    /// `stat_from_worktree` (`--index`) the entries' stat is read from the work tree at
    /// [`LockedIndex::commit`], after the transaction wrote the files; otherwise (`--cached`)
    /// it is left empty, so git compares contents the next time it looks.
    pub fn stage(
        &mut self,
        repo: &Repo,
        changes: &[IndexChange],
        stat_from_worktree: bool,
    ) -> Result<(), GitError> {
        let mut replaced = BTreeSet::new();
        for change in changes {
            replaced.insert(repo.repo_path(change.path())?);
        }
        remove_paths(&mut self.file, &replaced);
        for change in changes {
            let repo_path = repo.repo_path(change.path())?;
            let mut push = |content: &[u8], mode: Mode, stage: Stage| -> Result<(), Error> {
                let id = write_blob(repo, content, change.path())?;
                self.file.dangerously_push_entry(
                    Stat::default(),
                    id,
                    Flags::from_stage(stage),
                    entry_mode(mode),
                    Repo::bstr(&repo_path),
                );
                Ok(())
            };
            match change {
                IndexChange::Put { content, mode, .. } => {
                    push(content, *mode, Stage::Unconflicted)?;
                    if stat_from_worktree {
                        self.stat_from_worktree.push(repo_path.clone());
                    }
                }
                IndexChange::Remove { .. } => {}
                IndexChange::Conflict {
                    base, ours, theirs, ..
                } => {
                    for (side, stage) in [
                        (base, Stage::Base),
                        (ours, Stage::Ours),
                        (theirs, Stage::Theirs),
                    ] {
                        if let Some((content, mode)) = side {
                            push(content, *mode, stage)?;
                        }
                    }
                }
            }
        }
        self.file.sort_entries();
        Ok(())
    }

    /// Write the index into its lock file (see [`LockedIndex::write_lock`]) and commit it
    /// by rename. On failure the old index stays.
    pub fn commit(mut self) -> Result<(), GitError> {
        if !self.written {
            self.write_lock()?;
        }
        self.install_lock()
    }

    /// Take the stat of staged files from the work tree, drop the cached tree extension
    /// (it would still describe the old entries), write the index into its lock file and
    /// sync it; returns the SHA-256 of what was written.
    fn write_lock(&mut self) -> Result<[u8; 32], GitError> {
        // An entry whose file changed in the second the index is written is "racily clean":
        // git smudges such entries (size 0) so that a later change of the same size within
        // that second is still noticed; do the same for the entries refreshed here.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(u64::MAX, |d| d.as_secs());
        for repo_path in std::mem::take(&mut self.stat_from_worktree) {
            let mut file = self.workdir.clone();
            file.extend(repo_path.split('/'));
            let stat = gix::index::fs::Metadata::from_path_no_follow(&file)
                .ok()
                .and_then(|m| Stat::from_fs(&m).ok());
            if let (Some(stat), Some(entry)) = (
                stat,
                self.file
                    .entry_mut_by_path_and_stage(Repo::bstr(&repo_path), Stage::Unconflicted),
            ) {
                entry.stat = stat;
                if u64::from(entry.stat.mtime.secs) >= now {
                    entry.stat.size = 0;
                }
            }
        }
        self.file.remove_tree();
        let options = gix::index::write::Options::default();
        let mut bytes = Vec::new();
        self.file
            .write_to(&mut bytes, options)
            .map_err(|e| GitError::gix("cannot write the git index", &e))?;
        let lock = self.lock.as_mut().ok_or_else(installed)?;
        lock.with_mut(|f| {
            use std::io::Write;
            f.write_all(&bytes)?;
            f.sync_all()
        })
        .map_err(|e| Error::io("index", "cannot write the git index", &e))?;
        self.written = true;
        Ok(crate::txn::sha256(&bytes))
    }

    /// Renames the lock file over the index.
    fn install_lock(&mut self) -> Result<(), GitError> {
        index_failpoint()?;
        let lock = self.lock.take().ok_or_else(installed)?;
        lock.commit().map_err(|e| {
            Error::io(
                "index",
                "cannot replace the git index",
                &std::io::Error::new(e.error.kind(), e.error.to_string()),
            )
        })?;
        Ok(())
    }

    /// Has the new index replaced the old one already (by the work tree's transaction)?
    pub fn is_installed(&self) -> bool {
        self.lock.is_none()
    }

    /// The index being edited (for checks and tests).
    pub fn state(&self) -> &gix::index::State {
        &self.file
    }
}

/// The entries at some paths (and above and below them, as [`LockedIndex::stage`] replaces
/// them): what a rollback puts back, and what it expects to find before it does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SavedEntries {
    paths: BTreeSet<String>,
    entries: Vec<(String, ObjectId, EntryMode, Stage)>,
}

impl LockedIndex {
    /// The entries of the index being edited at root-relative `rels`.
    pub fn save_entries(&self, repo: &Repo, rels: &[String]) -> Result<SavedEntries, GitError> {
        let mut saved = SavedEntries::default();
        for rel in rels {
            saved.paths.insert(repo.repo_path(rel)?);
        }
        saved.entries = self.entries_at(&saved.paths);
        Ok(saved)
    }

    /// The same paths, as the index being edited holds them now.
    pub fn save_again(&self, saved: &SavedEntries) -> SavedEntries {
        SavedEntries {
            paths: saved.paths.clone(),
            entries: self.entries_at(&saved.paths),
        }
    }

    fn entries_at(&self, paths: &BTreeSet<String>) -> Vec<(String, ObjectId, EntryMode, Stage)> {
        self.file
            .entries()
            .iter()
            .filter_map(|e| {
                let path = std::str::from_utf8(e.path(&self.file)).ok()?;
                covers(paths, path).then(|| (path.to_string(), e.id, e.mode, e.stage()))
            })
            .collect()
    }

    /// Does the index being edited still hold exactly `saved` at its paths?
    pub fn holds(&self, saved: &SavedEntries) -> bool {
        self.entries_at(&saved.paths) == saved.entries
    }

    /// Put `saved` back in place of whatever the index holds at its paths; the entries of
    /// files take their stat from the work tree at the commit (a rollback restores them).
    pub fn restore_entries(&mut self, saved: &SavedEntries) {
        remove_paths(&mut self.file, &saved.paths);
        for (path, id, mode, stage) in &saved.entries {
            self.file.dangerously_push_entry(
                Stat::default(),
                *id,
                Flags::from_stage(*stage),
                *mode,
                Repo::bstr(path),
            );
            if *stage == Stage::Unconflicted {
                self.stat_from_worktree.push(path.clone());
            }
        }
        self.file.sort_entries();
    }
}

impl Companion for LockedIndex {
    fn lock_path(&self) -> PathBuf {
        self.lock
            .as_ref()
            .map_or_else(PathBuf::new, |l| l.lock_path().to_path_buf())
    }

    // The transaction carries the index's refusal whole (`TxnError::Outside`).
    fn write(&mut self) -> Result<[u8; 32], TxnError> {
        self.write_lock().map_err(|e| Error::from(e).into())
    }

    fn install(&mut self) -> Result<(), TxnError> {
        self.install_lock().map_err(|e| Error::from(e).into())
    }
}

fn installed() -> GitError {
    GitError::IndexInstalled
}

/// `APPLY_PATCH_FAILPOINT=git-index:fail` makes the index install after a committed work
/// tree fail (tests of the rollback; the transaction's own failpoints are `commit:…`). Read
/// only with the `failpoints` feature.
fn index_failpoint() -> Result<(), GitError> {
    if !cfg!(feature = "failpoints") {
        return Ok(());
    }
    match std::env::var(crate::txn::failpoint::ENV) {
        Ok(v) if v.trim() == "git-index:fail" => Err(GitError::IndexFailpoint),
        _ => Ok(()),
    }
}

/// Remove every entry of each path, of each directory above it (a file replacing a
/// directory or the reverse), and below it.
fn remove_paths(file: &mut gix::index::File, paths: &BTreeSet<String>) {
    file.remove_entries(|_, path, _| std::str::from_utf8(path).is_ok_and(|p| covers(paths, p)));
}

/// Is `path` one of `paths`, a directory above one, or below one?
fn covers(paths: &BTreeSet<String>, path: &str) -> bool {
    paths.iter().any(|p| {
        path == p
            || (path.len() > p.len()
                && path.starts_with(p.as_str())
                && path.as_bytes()[p.len()] == b'/')
            || (p.len() > path.len() && p.starts_with(path) && p.as_bytes()[path.len()] == b'/')
    })
}

fn write_blob(repo: &Repo, content: &[u8], rel: &str) -> Result<ObjectId, GitError> {
    repo.repo
        .write_blob(content)
        .map(|id| id.detach())
        .map_err(|e| GitError::gix_at(&format!("cannot write the blob of {rel}"), &e, rel))
}

fn entry_mode(mode: Mode) -> EntryMode {
    if mode.is_symlink() {
        EntryMode::SYMLINK
    } else if mode.is_executable() {
        EntryMode::FILE_EXECUTABLE
    } else {
        EntryMode::FILE
    }
}
