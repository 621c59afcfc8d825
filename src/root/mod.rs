//! The root's policies, kept once: the check that a root is a directory ([`check_root`], one
//! code for every front end and the library), the discovery of its git repository
//! ([`open_repo`], [`git_dir_of`]) that `git::Repo`, the state place and the disk tree's
//! nested-repository guard share, and whose repository it may be ([`trust`]: git's ownership
//! and `safe.directory` rule, and [`is_ours`], the owner test the state place applies to its
//! own folders too). A leaf: it depends on nothing of ours but the error types, so that
//! `tree`, `state` and `git` can all use it without a cycle. Without the `git` feature there
//! is no discovery: every root is in no repository.

use crate::usage::UsageError;
use std::path::{Path, PathBuf};

mod error;
#[cfg(feature = "git")]
mod trust;

pub(crate) use error::RootError;

use crate::error::{Error, ErrorCode};

/// The one check of a root (every front end and the library pass here): it must be an
/// existing directory, else `usage` with a hint, as SPEC's usage errors are. Returns it
/// canonical.
pub fn check_root(root: &Path) -> Result<PathBuf, Error> {
    #[cfg(test)]
    openings::count(true);
    match std::fs::canonicalize(root) {
        Ok(canonical) if canonical.is_dir() => Ok(canonical),
        _ => Err(UsageError::RootNotDirectory {
            root: root.to_path_buf(),
        }
        .into()),
    }
}

/// The one discovery of the repository of a (canonical) root, shared by `git::Repo::discover`,
/// the state place and the disk tree's nested-repository guard: upwards from the root as git
/// does, honouring `GIT_DIR` / `GIT_WORK_TREE` / `GIT_INDEX_FILE` (git sets them for hooks);
/// a `.git` file's `gitdir:` is followed only to a valid git dir (else the search goes on
/// upwards). `Ok(None)` when there is no repository.
///
/// A repository whose work tree holds the root, and so would be used, must be the current
/// user's as git decides ([`trust::check_repository`]; `GIT_DIR` too, unlike git, which
/// trusts a git dir named explicitly: the state place would be in it): else `usage`, before
/// anything of ours in it is read.
#[cfg(feature = "git")]
pub(crate) fn open_repo(root_canon: &Path) -> Result<Option<gix::Repository>, RootError> {
    #[cfg(test)]
    openings::count(false);
    let repo = match gix::discover_with_environment_overrides(root_canon) {
        Ok(repo) => repo,
        Err(err) if is_not_found(&err) => return Ok(None),
        Err(err) => {
            return Err(RootError::Unopenable(GixFailure::new(
                "cannot open the git repository",
                &err,
            )))
        }
    };
    if repo_holds(root_canon, &repo) {
        trust::check_repository(&repo)?;
    }
    Ok(Some(repo))
}

/// Does the work tree of `repo` hold the root (so that the repository is used)?
#[cfg(feature = "git")]
fn repo_holds(root_canon: &Path, repo: &gix::Repository) -> bool {
    repo.workdir()
        .map(canonical_or_same)
        .is_some_and(|w| root_canon.starts_with(w))
}

/// The git dir of the repository whose work tree holds `root_canon` (a canonical directory),
/// by [`open_repo`]'s discovery: None outside any work tree (no repository, a bare one, a root
/// inside the git dir, or `GIT_WORK_TREE` elsewhere). A linked worktree's or submodule's is
/// its own git dir (`.git/worktrees/NAME`, `.git/modules/NAME`).
#[cfg(feature = "git")]
pub(crate) fn git_dir_of(root_canon: &Path) -> Result<Option<PathBuf>, RootError> {
    Ok(open_repo(root_canon)?.and_then(|repo| git_dir_in(root_canon, &repo)))
}

/// [`git_dir_of`] with the repository [`open_repo`] opened for `root_canon` (a run opens it
/// once, for the state place and the planner).
#[cfg(feature = "git")]
pub(crate) fn git_dir_in(root_canon: &Path, repo: &gix::Repository) -> Option<PathBuf> {
    let git_dir = canonical_or_same(repo.git_dir());
    if !repo_holds(root_canon, repo) || root_canon.starts_with(&git_dir) {
        return None;
    }
    Some(git_dir)
}

/// Without the `git` feature nothing discovers a repository: every root is in none (the
/// state place and the disk tree treat it as a directory outside git).
#[cfg(not(feature = "git"))]
pub(crate) fn git_dir_of(_root_canon: &Path) -> Result<Option<PathBuf>, RootError> {
    Ok(None)
}

/// Is `uid` the current user, as git's ownership rule decides: the effective uid, and for
/// root also the user `sudo` ran for (`SUDO_UID`), as git does since 2.35.2 — only when the
/// process runs as root, so a `SUDO_UID` in another user's environment grants nothing.
#[cfg(unix)]
pub(crate) fn is_ours(uid: u32) -> bool {
    // SAFETY: geteuid has no failure mode and touches no memory of ours.
    let euid = unsafe { libc::geteuid() };
    if uid == euid {
        return true;
    }
    euid == 0
        && std::env::var("SUDO_UID")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .is_some_and(|sudo| sudo == uid)
}

/// Windows has no uids: every owner is taken as the current user.
#[cfg(not(unix))]
pub(crate) fn is_ours(_uid: u32) -> bool {
    true
}

#[cfg(feature = "git")]
fn is_not_found(err: &gix::Error) -> bool {
    use gix::discover::upwards::Error as Up;
    err.iter_errors().any(|cause| {
        matches!(
            cause.downcast_ref::<Up>(),
            Some(
                Up::NoGitRepository { .. }
                    | Up::NoGitRepositoryWithinCeiling { .. }
                    | Up::NoGitRepositoryWithinFs { .. }
            )
        )
    })
}

#[cfg(feature = "git")]
pub(crate) fn canonical_or_same(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A gix error as one of ours: `what` first, then the chain of causes (gix errors are
/// type-erased; their sources carry the useful part), and whether gix classed it as a
/// denied permission (`permission_denied`, else `io_error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct GixFailure {
    pub message: String,
    pub denied: bool,
}

impl GixFailure {
    #[cfg(feature = "git")]
    pub(crate) fn new(what: &str, err: &gix::Error) -> GixFailure {
        GixFailure {
            message: gix_message(what, err),
            denied: err.classify().is_permission_denied(),
        }
    }

    pub(crate) fn code(&self) -> ErrorCode {
        if self.denied {
            ErrorCode::PermissionDenied
        } else {
            ErrorCode::IoError
        }
    }
}

/// `what`, then the chain of gix's causes (each once), as [`GixFailure`] words it.
#[cfg(feature = "git")]
pub(crate) fn gix_message(what: &str, err: &gix::Error) -> String {
    let mut message = what.to_string();
    let mut last = String::new();
    for cause in err.iter_errors() {
        let text = cause.to_string();
        if text != last && !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        last = text;
    }
    message
}

/// Test-only: how many times this thread checked (canonicalised) a root and opened a
/// repository, so that a test can say how often one run opens its root.
#[cfg(test)]
pub(crate) mod openings {
    use std::cell::Cell;

    thread_local! {
        static COUNTS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
    }

    pub(crate) fn count(root: bool) {
        COUNTS.with(|c| {
            let (roots, repos) = c.get();
            c.set(if root {
                (roots + 1, repos)
            } else {
                (roots, repos + 1)
            });
        });
    }

    /// `(roots canonicalised, repositories opened)` since the last call.
    pub(crate) fn take() -> (usize, usize) {
        COUNTS.with(|c| c.replace((0, 0)))
    }
}
