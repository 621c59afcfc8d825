//! `--3way`: when a hunk does not apply, find the blob the diff was made against (its
//! `index OLD..` id) and merge "base → patched base" onto the current file with
//! [`crate::merge::three_way`]. Reads only; writes are the transaction's and the index's.

use super::{GitError, MergeFate};
use super::Repo;
use crate::error::Error;
use crate::merge::{three_way, Conflicts, Labels};
use crate::model::FilePatch;
use gix::ObjectId;
use std::collections::HashSet;

/// The result of a three-way fallback for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
pub enum ThreeWay {
    /// The patch's change merged cleanly into the current file.
    Clean {
        merged: Vec<u8>,
        /// The base blob that was used.
        base_id: ObjectId,
    },
    /// The change conflicts with what changed in the file since the base.
    Conflict {
        conflicts: Conflicts,
        base_id: ObjectId,
        /// The base (work-tree form) and the patched base: stages 1 and 3 of the index
        /// when `--conflict-markers` records the conflict as git does.
        base: Vec<u8>,
        theirs: Vec<u8>,
    },
}

/// What became of a conflicted file, which its refusal says (and so the next step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conflicted<'a> {
    /// Nothing written: the patch is refused.
    Refused,
    /// `--conflict-markers --check`: the markers would be written, nothing was.
    Checked,
    /// `--conflict-markers`: markers were written into these files.
    MarkersWritten(&'a [&'a str]),
}

impl ThreeWay {
    /// The `merge_conflict` refusal of a conflicted merge, showing the regions.
    pub fn conflict_error(path: &str, conflicts: &Conflicts, fate: Conflicted<'_>) -> GitError {
        let fate = match fate {
            Conflicted::Refused => MergeFate::Refused,
            Conflicted::Checked => MergeFate::Checked,
            Conflicted::MarkersWritten(paths) => {
                MergeFate::MarkersWritten(paths.iter().map(|p| p.to_string()).collect())
            }
        };
        GitError::MergeConflict {
            path: path.into(),
            summary: conflicts.summary(),
            regions: Box::new(conflicts.to_details()),
            fate,
        }
    }
}

impl Repo {
    /// The one blob whose id starts with `hex` (the repository's object format decides how
    /// the hex is read). `Ok(None)` when the object database has none; ambiguity among blobs
    /// is refused (objects of other kinds are ignored, as git does for a blob context).
    pub fn find_blob_by_prefix(&self, hex: &str) -> Result<Option<(ObjectId, Vec<u8>)>, GitError> {
        let kind = self.object_hash();
        if hex.len() < 4
            || hex.len() > kind.len_in_hex()
            || !hex.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Ok(None);
        }
        let mut padded = hex.to_ascii_lowercase();
        padded.extend(std::iter::repeat_n('0', kind.len_in_hex() - hex.len()));
        let Ok(full) = ObjectId::from_hex(padded.as_bytes()) else {
            return Ok(None);
        };
        let prefix = gix::hash::Prefix::new(&full, hex.len())
            .map_err(|e| GitError::gix(&format!("invalid object id {hex}"), &e))?;
        let mut candidates = HashSet::new();
        let found = self
            .repo
            .objects
            .lookup_prefix(prefix, Some(&mut candidates))
            .map_err(|e| GitError::gix(&format!("cannot look up object {hex}"), &e))?;
        if found.is_none() {
            return Ok(None);
        }
        let mut blobs = Vec::new();
        for id in candidates {
            if let Ok(object) = self.repo.find_object(id) {
                if object.kind == gix::objs::Kind::Blob {
                    blobs.push((id, object.detach().data));
                }
            }
        }
        blobs.sort_by_key(|b| b.0);
        match blobs.len() {
            0 => Ok(None),
            1 => Ok(blobs.pop()),
            _ => Err(GitError::AmbiguousBase {
                hex: hex.to_string(),
                blobs: blobs.iter().map(|(id, _)| id.to_hex().to_string()).collect(),
            }),
        }
    }

    /// The three-way fallback for one file patch whose hunks did not apply to `current` (the
    /// work-tree bytes). `patch_base` applies the patch's hunks to the base (exactly: it is
    /// the preimage). `Ok(None)` when the diff names no base blob or the object database
    /// lacks it: the caller keeps its original refusal.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn three_way(
        &self,
        patch: &FilePatch<'_>,
        current: &[u8],
        patch_base: impl FnOnce(&[u8]) -> Result<Vec<u8>, Error>,
    ) -> Result<Option<ThreeWay>, GitError> {
        let Some(ids) = &patch.blob_ids else {
            return Ok(None);
        };
        let Some((base_id, base)) = self.find_blob_by_prefix(&ids.old)? else {
            return Ok(None);
        };
        let rel = patch.old_path.as_deref().unwrap_or(patch.path());
        // The blob is in git's form; the file in the work tree's (autocrlf, eol, smudge):
        // merge in the work tree's form, so only real changes meet.
        let base = self.smudge(rel, &base)?;
        let theirs = patch_base(&base)?;
        Ok(Some(
            match three_way(&base, current, &theirs, Labels::default()) {
                Ok(merged) => ThreeWay::Clean { merged, base_id },
                Err(conflicts) => ThreeWay::Conflict {
                    conflicts,
                    base_id,
                    base,
                    theirs,
                },
            },
        ))
    }

    /// The work-tree form of blob content at root-relative `rel` (what a checkout would write).
    pub fn smudge(&self, rel: &str, blob: &[u8]) -> Result<Vec<u8>, GitError> {
        use gix::filter::plumbing::driver::apply::MaybeDelayed;
        use gix::filter::plumbing::pipeline::convert::ToWorktreeOutcome;
        use std::io::Read;
        let repo_path = self.repo_path(rel)?;
        let (mut pipeline, _) = self
            .repo
            .filter_pipeline(None)
            .map_err(|e| GitError::gix("cannot set up git's filters", &e))?;
        let outcome = pipeline
            .convert_to_worktree(blob, Repo::bstr(&repo_path), Default::default())
            .map_err(|e| GitError::gix(&format!("cannot run git's filters on {rel}"), &e))?;
        Ok(match outcome {
            ToWorktreeOutcome::Unchanged(bytes) => bytes.to_vec(),
            ToWorktreeOutcome::Buffer(bytes) => bytes.to_vec(),
            ToWorktreeOutcome::Process(MaybeDelayed::Immediate(mut read)) => {
                let mut out = Vec::new();
                read.read_to_end(&mut out)
                    .map_err(|e| Error::io(rel, "cannot filter", &e))?;
                out
            }
            ToWorktreeOutcome::Process(MaybeDelayed::Delayed(_)) => {
                return Err(GitError::SmudgeDelayed { path: rel.into() })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::ConflictRegion;

    #[test]
    fn a_conflict_refusal_says_what_became_of_the_files() {
        let conflicts = Conflicts {
            regions: vec![ConflictRegion {
                line: 3,
                ours: vec!["A".into()],
                theirs: vec!["a".into()],
            }],
            marked: Vec::new(),
        };
        let head = "a.txt: the patch's change conflicts with changes made since it was \
                    written: 1 conflicting region (at line 3 of the merged text)";
        let refused: Error = ThreeWay::conflict_error("a.txt", &conflicts, Conflicted::Refused).into();
        assert_eq!(refused.message, head);
        assert!(refused
            .hint
            .is_some_and(|h| h.contains("--conflict-markers")));
        let checked: Error = ThreeWay::conflict_error("a.txt", &conflicts, Conflicted::Checked).into();
        assert_eq!(
            checked.message,
            format!("{head} (--check: nothing written)")
        );
        assert_eq!(checked.hint.as_deref(), Some(super::super::error::MARKERS_HINT));
        let written = Conflicted::MarkersWritten(&["a.txt", "b.txt"]);
        let written: Error = ThreeWay::conflict_error("a.txt", &conflicts, written).into();
        assert_eq!(
            written.message,
            format!("{head}; conflict markers were written into a.txt, b.txt")
        );
        assert_eq!(written.details(), Some(&conflicts.to_details()));
    }
}
