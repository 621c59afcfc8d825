//! The calls the planner makes into git while it plans against a work tree: blob ids as
//! `git add` would store them (after the clean filters), instead of the filter-less hash used
//! outside repositories. Reads only.

use super::Repo;
use crate::error::Error;
use std::rc::Rc;

/// A handle the planner holds (through its options) while planning inside a git work tree.
#[derive(Clone)]
pub struct PlanHooks {
    repo: Rc<Repo>,
}

impl std::fmt::Debug for PlanHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanHooks")
            .field("repo", &self.repo)
            .finish()
    }
}

impl PlanHooks {
    pub fn new(repo: Rc<Repo>) -> Self {
        PlanHooks { repo }
    }

    /// The repository.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

}

impl crate::plan::RepoBlobIds for PlanHooks {
    /// Hashed as `git add` would store the file, with the repository's object format.
    fn blob_matches(
        &self,
        path: &str,
        id: &str,
        bytes: &[u8],
        link: bool,
    ) -> Result<Option<(bool, String)>, Error> {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) || super::is_null_id(id) {
            return Ok(None);
        }
        let actual = self.repo.blob_id_of_worktree_file(path, bytes, link)?;
        Ok(Some((
            super::id_matches(id, &actual),
            actual.to_hex().to_string(),
        )))
    }
}
