//! Where apply-patch keeps its own state for a root: the transaction lock, the journal, the
//! undo history, the audit log, and folders other features ask for (`sub`).
//!
//! Stage: infrastructure for the commit. It never touches the user's files; it only decides
//! paths and creates its own folders. Inside a git work tree the state is `.git/apply-patch/`
//! (a linked worktree's or submodule's `.git` file is followed to its git dir); elsewhere it is
//! `$XDG_STATE_HOME/apply-patch/<16 hex of sha256(canonical root)>/` (default
//! `~/.local/state`), and the journal is a hidden folder at the root, `.apply-patch-txn/`, that
//! exists only while a transaction runs (backups must stay on the root's file system).

#![allow(clippy::result_large_err)] // `crate::Error` is the shared, deliberately rich error shape.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{Error, ErrorCode};

/// Name of the hidden journal folder at the root of a work tree outside git.
pub const ROOT_JOURNAL_DIR: &str = ".apply-patch-txn";

/// The state place of one root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    root: PathBuf,
    base: PathBuf,
    git_dir: Option<PathBuf>,
}

impl StateDir {
    /// The state place of `root` (which must exist). See the module docs for where it is.
    pub fn for_root(root: &Path) -> Result<StateDir, Error> {
        let shown = root.display().to_string();
        let root = root
            .canonicalize()
            .map_err(|e| Error::io(&shown, "cannot open the root", &e))?;
        if !root.is_dir() {
            return Err(Error::new(
                ErrorCode::IoError,
                format!("the root {shown} is not a directory"),
            )
            .with_path(shown));
        }
        let git_dir = find_git_dir(&root)?;
        let base = match &git_dir {
            Some(git) => git.join("apply-patch"),
            None => user_state_dir()?.join("apply-patch").join(root_key(&root)),
        };
        Ok(StateDir {
            root,
            base,
            git_dir,
        })
    }

    /// A state place outside git at an explicit `base` (tests, and callers that keep state
    /// elsewhere); the journal is then the hidden folder at the root.
    pub fn outside_git(root: &Path, base: PathBuf) -> Result<StateDir, Error> {
        let shown = root.display().to_string();
        let root = root
            .canonicalize()
            .map_err(|e| Error::io(&shown, "cannot open the root", &e))?;
        Ok(StateDir {
            root,
            base,
            git_dir: None,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The state folder itself (not created until something is written).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The git dir when the root is inside a git work tree.
    pub fn git_dir(&self) -> Option<&Path> {
        self.git_dir.as_deref()
    }

    /// The lock file that serialises transactions.
    pub fn lock_path(&self) -> PathBuf {
        self.base.join("lock")
    }

    /// The folder of the running (or crashed) transaction: `journal.json` and its backups.
    pub fn journal_dir(&self) -> PathBuf {
        match self.git_dir {
            Some(_) => self.base.join("journal"),
            None => self.root.join(ROOT_JOURNAL_DIR),
        }
    }

    /// The undo history: one folder per committed transaction, oldest pruned.
    pub fn undo_dir(&self) -> PathBuf {
        self.base.join("undo")
    }

    /// The audit log, one JSON line per transaction.
    pub fn audit_log(&self) -> PathBuf {
        self.base.join("audit.jsonl")
    }

    /// A folder `name` inside the state place for another feature; created on demand.
    pub fn sub(&self, name: &str) -> Result<PathBuf, Error> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(Error::new(
                ErrorCode::Usage,
                format!("invalid state folder name {name:?}"),
            ));
        }
        let dir = self.base.join(name);
        create_dir_all(&dir)?;
        Ok(dir)
    }

    /// Creates the state folder.
    pub fn ensure(&self) -> Result<(), Error> {
        create_dir_all(&self.base)
    }
}

/// `create_dir_all` with the error naming the folder.
pub fn create_dir_all(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(
            &dir.display().to_string(),
            "cannot create the state folder",
            &e,
        )
    })
}

/// 16 hex digits of the SHA-256 of the canonical root.
fn root_key(root: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let digest = Sha256::digest(root.as_os_str().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// `$XDG_STATE_HOME`, else `$HOME/.local/state`.
fn user_state_dir() -> Result<PathBuf, Error> {
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|d| Path::new(d).is_absolute()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local").join("state")),
        None => Err(Error::new(
            ErrorCode::IoError,
            "cannot find a state directory: neither XDG_STATE_HOME nor HOME is set",
        )
        .with_hint("set XDG_STATE_HOME to a writable directory")),
    }
}

/// Walks up from `start` for `.git`: a directory is the git dir; a file `gitdir: PATH` (linked
/// worktree, submodule) points at it, relative to the file's folder.
fn find_git_dir(start: &Path) -> Result<Option<PathBuf>, Error> {
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Ok(Some(dot_git));
        }
        if meta.is_file() {
            let shown = dot_git.display().to_string();
            let text = std::fs::read_to_string(&dot_git)
                .map_err(|e| Error::io(&shown, "cannot read", &e))?;
            let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("gitdir:")) else {
                return Err(Error::new(
                    ErrorCode::IoError,
                    format!("{shown} is a file but does not start with `gitdir:`"),
                )
                .with_path(shown));
            };
            let target = Path::new(target.trim());
            let git = if target.is_absolute() {
                target.to_path_buf()
            } else {
                dir.join(target)
            };
            return Ok(Some(git.canonicalize().unwrap_or(git)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_git_dir_is_found_from_a_subfolder() {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join(".git")).expect("mkdir");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        let state = StateDir::for_root(&tmp.path().join("a/b")).expect("state");
        let git = tmp.path().canonicalize().expect("canon").join(".git");
        assert_eq!(state.base(), git.join("apply-patch"));
        assert_eq!(state.journal_dir(), git.join("apply-patch/journal"));
        assert_eq!(state.audit_log(), git.join("apply-patch/audit.jsonl"));
    }

    #[test]
    fn gitdir_file_of_a_linked_worktree_is_followed() {
        let tmp = tempfile::tempdir().expect("temp dir");
        let real = tmp.path().join("main/.git/worktrees/wt");
        std::fs::create_dir_all(&real).expect("mkdir");
        std::fs::create_dir_all(tmp.path().join("wt")).expect("mkdir");
        std::fs::write(
            tmp.path().join("wt/.git"),
            "gitdir: ../main/.git/worktrees/wt\n",
        )
        .expect("write");
        let state = StateDir::for_root(&tmp.path().join("wt")).expect("state");
        let real = real.canonicalize().expect("canon");
        assert_eq!(state.git_dir(), Some(real.as_path()));
        assert_eq!(state.undo_dir(), real.join("apply-patch/undo"));
    }

    #[test]
    fn root_key_is_sixteen_hex_digits() {
        let key = root_key(Path::new("/some/root"));
        assert_eq!(key.len(), 16);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(key, root_key(Path::new("/other/root")));
    }

    #[test]
    fn sub_refuses_names_with_slashes() {
        let tmp = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(tmp.path().join(".git")).expect("mkdir");
        let state = StateDir::for_root(tmp.path()).expect("state");
        assert!(state.sub("../x").is_err());
        let dir = state.sub("previews").expect("sub");
        assert!(dir.is_dir());
    }
}
