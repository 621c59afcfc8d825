//! Stage: orchestration (the root, opened once). A run on a directory checks its root
//! (canonical path), opens its repository and finds its state place here, once; the
//! recovery runs between [`open_root`] and [`Root::open`], which then reads the repository's
//! index (the recovery may have installed one) and, when the run writes the index, locks it.
//! Reads only (the lock aside).

use std::path::Path;

use super::options::{GitMode, Options};
use super::sink::Opened;
use crate::error::Error;
#[cfg(feature = "git")]
use crate::git::Repo;
use crate::report::Warning;
use crate::state::StateDir;
use crate::tree::DiskTree;
use crate::txn::TxnOptions;
#[cfg(feature = "git")]
use crate::usage::UsageError;

/// A root checked, its state place found, its repository opened: what the recovery needs.
pub(crate) struct Root {
    pub tree: DiskTree,
    pub txn_opts: TxnOptions,
    /// The repository as opened for the state place (`Some(None)`: in no repository; None:
    /// it could not be opened, and the error is left to [`Root::open`]'s own discovery).
    #[cfg(feature = "git")]
    repo: Option<Option<gix::Repository>>,
}

/// Check `root` and open it once: its canonical path, its repository, and its state place
/// (`opts.state`, else the root's own: the repository's, or the user's state directory).
#[cfg(feature = "git")]
pub(crate) fn open_root(root: &Path, opts: &Options) -> Result<Root, Error> {
    let root_canon = crate::root::check_root(root)?;
    let (tree, state, repo) = match &opts.state {
        // A state place given by the caller says nothing of the repository. One that cannot
        // be opened keeps the tree's nested-repository guard on (the safe side).
        Some(state) => match crate::root::open_repo(&root_canon) {
            Ok(repo) => {
                let in_repository = repo
                    .as_ref()
                    .is_some_and(|r| crate::root::git_dir_in(&root_canon, r).is_some());
                let tree = DiskTree::at(root_canon, in_repository);
                (tree, state.clone(), Some(repo))
            }
            Err(_) => (DiskTree::at(root_canon, true), state.clone(), None),
        },
        None => {
            let repo = crate::root::open_repo(&root_canon)?;
            let state = StateDir::for_opened(root_canon, repo.as_ref())?;
            (DiskTree::of_state(&state), state, Some(repo))
        }
    };
    Ok(Root {
        txn_opts: txn_options(&tree, state, opts),
        tree,
        repo,
    })
}

#[cfg(not(feature = "git"))]
pub(crate) fn open_root(root: &Path, opts: &Options) -> Result<Root, Error> {
    let (tree, state) = match &opts.state {
        Some(state) => (DiskTree::new(root)?, state.clone()),
        None => {
            let state = StateDir::for_root(root)?;
            (DiskTree::of_state(&state), state)
        }
    };
    Ok(Root {
        txn_opts: txn_options(&tree, state, opts),
        tree,
    })
}

fn txn_options(tree: &DiskTree, state: StateDir, opts: &Options) -> TxnOptions {
    TxnOptions {
        state: Some(state),
        durability: opts.durability,
        ..TxnOptions::new(tree.path())
    }
}

impl Root {
    /// After the recovery: the repository with its index, and the index locked when the run
    /// writes it (`lock`), so that the guard and the write see one index. A git mode without
    /// a repository is a usage error; a corrupt index stops only the modes that use it: a
    /// plain apply warns (`index_unreadable`) and goes on, as `git apply` does.
    #[cfg(feature = "git")]
    pub(crate) fn open(self, git: GitMode, lock: bool) -> Result<(Opened, Option<Warning>), Error> {
        let repo = match self.repo {
            None => Repo::discover(self.tree.path())?,
            // The tree's path is the canonical root the repository was opened for.
            Some(Some(repo)) => Repo::of_opened(self.tree.path(), self.tree.path(), repo)?,
            Some(None) => None,
        };
        let (repo, warning) = match (repo, git.flag()) {
            (Some(repo), flag) => match repo.index_error() {
                Some(e) if flag.is_some() => return Err(e.clone().into()),
                Some(e) => {
                    let warning = Warning::new(
                        crate::report::WarningCode::IndexUnreadable,
                        format!(
                            "{e}; applied to the work tree without it (submodules listed only \
                             in the index are not recognised)"
                        ),
                    );
                    (Some(repo), Some(warning))
                }
                None => (Some(repo), None),
            },
            (None, Some(flag)) => {
                return Err(UsageError::NoWorkTree {
                    flag,
                    root: self.tree.path().to_path_buf(),
                }
                .into())
            }
            (None, None) => (None, None),
        };
        let lock = match (&repo, lock) {
            (Some(repo), true) => Some(repo.lock_index()?),
            _ => None,
        };
        let opened = Opened {
            tree: self.tree,
            txn_opts: self.txn_opts,
            repo,
            lock,
            kept: None,
            git,
        };
        Ok((opened, warning))
    }

    #[cfg(not(feature = "git"))]
    pub(crate) fn open(
        self,
        git: GitMode,
        _lock: bool,
    ) -> Result<(Opened, Option<Warning>), Error> {
        let opened = Opened {
            tree: self.tree,
            txn_opts: self.txn_opts,
            git,
        };
        Ok((opened, None))
    }
}

#[cfg(all(test, feature = "git", unix))]
mod tests {
    use crate::pipeline::{apply_bytes, confirm::confirm, GitMode, Mode, Options, Target};
    use crate::root::openings;

    fn patch(from: usize) -> String {
        format!(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-v{from}\n+v{}\n*** End Patch\n",
            from + 1
        )
    }

    /// Issue 25 item 1: a run (an apply, a preview, its confirm, a refusal that keeps a chip,
    /// with or without the index) canonicalises its root once and opens its repository once.
    #[test]
    fn a_run_opens_its_root_and_its_repository_once() {
        for opts in [
            Options::builder().keep_chips(true).build(),
            Options::builder()
                .git(GitMode::Index)
                .keep_chips(true)
                .build(),
        ] {
            let dir = tempfile::tempdir().expect("temp dir");
            let root = dir.path();
            let git = |args: &[&str]| {
                let ok = std::process::Command::new("git")
                    .args(args)
                    .current_dir(root)
                    .status()
                    .is_ok_and(|s| s.success());
                assert!(ok, "git {args:?}");
            };
            git(&["init", "-q"]);
            std::fs::write(root.join("a.txt"), "v0\n").expect("write");
            git(&["add", "a.txt"]);
            let _ = openings::take();
            let applied = apply_bytes(Target::Dir(root), patch(0).as_bytes(), &opts, Mode::Write);
            assert!(applied.is_ok(), "{applied:?}");
            assert_eq!(openings::take(), (1, 1), "apply, {:?}", opts.git);
            let kept = apply_bytes(Target::Dir(root), patch(1).as_bytes(), &opts, Mode::Preview)
                .map(|a| a.preview.unwrap_or_default());
            assert_eq!(openings::take(), (1, 1), "preview, {:?}", opts.git);
            let confirmed = confirm(root, &kept.expect("kept"), None);
            assert!(confirmed.is_ok(), "{confirmed:?}");
            assert_eq!(openings::take(), (1, 1), "confirm, {:?}", opts.git);
            assert_eq!(
                std::fs::read(root.join("a.txt")).ok(),
                Some(b"v2\n".to_vec())
            );
            // A patch that no longer fits is refused and kept as a chip: in the run's state
            // place, its hunks assessed through the run's tree, nothing opened again.
            let refused = apply_bytes(Target::Dir(root), patch(0).as_bytes(), &opts, Mode::Write)
                .expect_err("refused");
            assert_eq!(openings::take(), (1, 1), "refused, {:?}", opts.git);
            let details = refused.error.details().cloned().unwrap_or_default();
            assert!(details["chip"].is_string(), "{:?}", refused.error);
            assert_eq!(details["failed"][0]["hunk"], 1, "{details}");
        }
    }
}
