//! Stage: plan. What a git diff's file patches read from a path the patch also changes: a
//! git diff is a snapshot of two trees, so its copy and rename sources are the files as they
//! were before the patch, and a file's old side is named once. Pure; reads only the
//! planner's slots (and the tree, through them, on first use).

use super::{PlanError, Planner};
use crate::model::{FileOp, FilePatch};
use crate::tree::Node;

impl Planner<'_> {
    /// In a git diff, a file that an earlier file patch deleted or renamed away cannot be
    /// changed again: the diff names each file's old side once (`git apply` refuses it too).
    pub(super) fn check_not_gone(&mut self, shown: &str, real: &str) -> Result<(), PlanError> {
        if !self.rules.two_trees || !matches!(self.node(real)?, Node::Missing) {
            return Ok(());
        }
        // `node` made the slot; gone now but there when read: taken away by this diff.
        match self.slots[real].original {
            Node::Missing => Ok(()),
            _ => Err(PlanError::GoneEarlier { path: shown.into() }),
        }
    }

    /// What a rename or copy reads from its source. A git diff is a snapshot of two trees,
    /// so its copy and rename sources name the file as it was before the patch, whatever
    /// other file patches of the diff do to it (as `git apply` reads them); the agent
    /// language runs its operations in sequence (SPEC §2), so a Move reads the file as the
    /// operations before it left it.
    pub(super) fn source(
        &mut self,
        op: FileOp,
        shown: &str,
        real: &str,
    ) -> Result<Node, PlanError> {
        let current = self.node(real)?.clone();
        if !self.rules.two_trees {
            return Ok(current);
        }
        // `node` made the slot. A rename takes its source away: when an earlier file patch
        // of the diff changed that file (rather than leaving it or taking it away too), the
        // change would be lost, and a diff between two trees never asks for that.
        let slot = &self.slots[real];
        if op == FileOp::Rename && current != Node::Missing && !slot.unchanged() {
            return Err(PlanError::RenamedChanged { path: shown.into() });
        }
        Ok(slot.original.clone())
    }

    /// A copy whose destination already holds the diff's new blob (`index OLD..NEW`) is
    /// already applied, whatever its source holds now: once the diff has been applied, its
    /// source may hold the diff's change too, and the copy would no longer be found in it.
    pub(super) fn copied_already(
        &self,
        fp: &FilePatch<'_>,
        shown: &str,
        dest: &Node,
    ) -> Result<bool, PlanError> {
        let (Some(ids), FileOp::Copy) = (&fp.blob_ids, fp.op) else {
            return Ok(false);
        };
        let same_mode = |mode: u32| fp.new_mode.is_none_or(|m| m.0 & 0o111 == mode & 0o111);
        let bytes = match dest {
            Node::File { bytes, mode } if same_mode(*mode) => bytes.as_slice(),
            Node::Symlink { target } if fp.new_mode.is_some_and(|m| m.is_symlink()) => target,
            _ => return Ok(false),
        };
        let matched = self.tree.blob_matches(shown, &ids.new, bytes)?;
        Ok(matched.is_some_and(|(exact, _)| exact))
    }
}
