//! The call the planner makes into git while it plans against a work tree (through
//! [`crate::tree::Tree::blob_matches`] of the git work tree): blob ids as `git add` would
//! store them (after the clean filters), instead of the filter-less hash used outside
//! repositories. Reads only.

use super::{GitError, Repo};

impl Repo {
    /// Compare a diff's `index` blob id (maybe abbreviated) with the file at root-relative
    /// `path` (`bytes`: its content, or the link target when `link`), hashed as `git add`
    /// would store it with the repository's object format. None when the id names no content
    /// (all zeros, not hex); else whether it matches, and the file's full blob id.
    pub fn blob_matches(
        &self,
        path: &str,
        id: &str,
        bytes: &[u8],
        link: bool,
    ) -> Result<Option<(bool, String)>, GitError> {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) || super::is_null_id(id) {
            return Ok(None);
        }
        let actual = self.blob_id_of_worktree_file(path, bytes, link)?;
        Ok(Some((
            super::id_matches(id, &actual),
            actual.to_hex().to_string(),
        )))
    }
}
