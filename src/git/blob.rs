//! Blob ids as `git add` would store them, and the staleness check of a diff's
//! `index OLD..NEW` line. Reads only (no object is written here).

use super::GitError;
use super::Repo;
use crate::error::Error;
use crate::model::{FileOp, FilePatch};
use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
use gix::ObjectId;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

/// git's clean filters of one repository with the attribute stack they read, set up once per
/// [`Repo`] (at its first blob id of a work-tree file) and kept: set up per file, each file
/// read the attribute files again (system, global, `info/attributes`, each folder's
/// `.gitattributes`), re-checked the index file and scanned the index for `.gitattributes`
/// entries. The stack keeps what it read of each folder, so a many-file patch reads each
/// folder's `.gitattributes` once.
pub(crate) struct Filters {
    pipeline: gix::filter::plumbing::Pipeline,
    attributes: gix::worktree::Stack,
}

impl Filters {
    /// Set up as gix's `filter_pipeline` does for a work tree (the same configuration and
    /// attribute sources: the work tree's `.gitattributes`, else the index's), with the index
    /// the [`Repo`] read. An unreadable index fails as `filter_pipeline` fails (it reads the
    /// index again).
    fn of(repo: &Repo) -> Result<Filters, GitError> {
        use gix::worktree::stack::state::attributes::Source;
        let setup = |e: gix::Error| GitError::gix("cannot set up git's filters", &e);
        let pipeline = if repo.index_error().is_some() {
            repo.repo.filter_pipeline(None).map_err(setup)?.0
        } else {
            let attributes = repo
                .repo
                .attributes_only(&repo.index, Source::WorktreeThenIdMapping)
                .map_err(setup)?
                .detach();
            gix::filter::Pipeline::new(&repo.repo, attributes).map_err(setup)?
        };
        let (pipeline, attributes) = pipeline.into_parts();
        Ok(Filters {
            pipeline,
            attributes,
        })
    }

    /// The content `git add` would store for `bytes` at `repo_path`, with the attributes
    /// there and `index` for the CRLF filter's look at the staged version (as gix's
    /// `Pipeline::convert_to_git` does). `bytes` themselves when no filter changes them (the
    /// usual case: no copy of every file a patch touches just to hash it).
    fn clean<'b>(
        &mut self,
        repo: &gix::Repository,
        index: &gix::index::State,
        repo_path: &str,
        bytes: &'b [u8],
    ) -> Result<Cow<'b, [u8]>, GitError> {
        let rel = repo_path;
        let attrs = self
            .attributes
            .at_path(Path::new(repo_path), None, &repo.objects)
            .map_err(|e| Error::io(rel, "cannot read the git attributes of", &e))?;
        let outcome = self
            .pipeline
            .convert_to_git(
                bytes,
                Path::new(repo_path),
                &mut |_, out| {
                    attrs.matching_attributes(out);
                },
                &mut |buf| -> gix::Result<Option<()>> {
                    let Some(entry) = index.entry_by_path(Repo::bstr(repo_path)) else {
                        return Ok(None);
                    };
                    let found = gix::objs::Find::try_find(&repo.objects, &entry.id, buf)?;
                    Ok(found.filter(|o| o.kind == gix::objs::Kind::Blob).map(|_| ()))
                },
            )
            .map_err(|e| GitError::gix(&format!("cannot run git's filters on {rel}"), &e))?;
        match outcome {
            ToGitOutcome::Unchanged(_) => Ok(Cow::Borrowed(bytes)),
            ToGitOutcome::Buffer(converted) => Ok(Cow::Owned(converted.to_vec())),
            ToGitOutcome::Process(mut reader) => {
                let mut out = Vec::with_capacity(bytes.len());
                reader
                    .read_to_end(&mut out)
                    .map_err(|e| Error::io(rel, "cannot filter", &e))?;
                Ok(Cow::Owned(out))
            }
        }
    }
}

/// The git blob id of `bytes` as they are (no filters): `git hash-object --no-filters`.
pub fn blob_id_of_bytes(kind: gix::hash::Kind, bytes: &[u8]) -> ObjectId {
    gix::objs::compute_hash(kind, gix::objs::Kind::Blob, bytes)
        .expect("hashing bytes in memory cannot fail because there is no I/O")
}

/// Does the (possibly abbreviated) hex id `abbrev` name `id`? Compared as a prefix, case
/// insensitively; an empty or non-hex `abbrev` names nothing.
pub fn id_matches(abbrev: &str, id: &ObjectId) -> bool {
    !abbrev.is_empty()
        && abbrev.bytes().all(|b| b.is_ascii_hexdigit())
        && id
            .to_hex()
            .to_string()
            .starts_with(&abbrev.to_ascii_lowercase())
}

/// Is `abbrev` the null id (`0000000`): "no file" on that side of the diff?
pub fn is_null_id(abbrev: &str) -> bool {
    !abbrev.is_empty() && abbrev.bytes().all(|b| b == b'0')
}

/// The outcome of comparing a diff's `index OLD..` id with the current file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
pub enum BaseCheck {
    /// Nothing to compare: no `index` line, a new file, or no current file.
    Skipped,
    /// The current file is the blob the diff was made against.
    Matches,
    /// It is not: the patch was made against a different version.
    Mismatch {
        path: String,
        /// The id of the `index` line, as written.
        expected: String,
        /// The current file's blob id (full hex).
        actual: String,
    },
}

#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
impl BaseCheck {
    /// The message of the `base_mismatch` warning and of the `stale_file` error.
    pub fn message(&self) -> Option<String> {
        match self {
            BaseCheck::Mismatch {
                path,
                expected,
                actual,
            } => Some(
                GitError::StaleBase {
                    path: path.clone(),
                    expected: expected.clone(),
                    actual: actual.clone(),
                }
                .to_string(),
            ),
            _ => None,
        }
    }

    /// The `stale_file` error that `--strict-base` turns a mismatch into.
    pub fn into_stale_error(self) -> Option<Error> {
        let BaseCheck::Mismatch {
            path,
            expected,
            actual,
        } = self
        else {
            return None;
        };
        Some(
            GitError::StaleBase {
                path,
                expected,
                actual,
            }
            .into(),
        )
    }
}

impl Repo {
    /// The blob `git add` would store for `bytes` at root-relative `rel`: the clean filters,
    /// `text`/`eol` attributes and `core.autocrlf` applied, then hashed with the repository's
    /// object format. Symlinks are hashed as their target (pass the target as `bytes`).
    pub fn blob_id_of_worktree_file(
        &self,
        rel: &str,
        bytes: &[u8],
        symlink: bool,
    ) -> Result<ObjectId, GitError> {
        if symlink {
            return Ok(blob_id_of_bytes(self.object_hash(), bytes));
        }
        let clean = self.clean(rel, bytes)?;
        Ok(blob_id_of_bytes(self.object_hash(), &clean))
    }

    /// The content `git add` would store for the work-tree `bytes` at root-relative `rel`
    /// (borrowed when no filter changes them).
    pub fn clean<'b>(&self, rel: &str, bytes: &'b [u8]) -> Result<Cow<'b, [u8]>, GitError> {
        self.clean_repo_path(&self.repo_path(rel)?, bytes)
    }

    /// As [`Repo::clean`], for a repo-relative path.
    pub(crate) fn clean_repo_path<'b>(
        &self,
        repo_path: &str,
        bytes: &'b [u8],
    ) -> Result<Cow<'b, [u8]>, GitError> {
        let mut filters = self.filters.lock().unwrap_or_else(|e| e.into_inner());
        let filters = match &mut *filters {
            Some(filters) => filters,
            empty => empty.insert(Filters::of(self)?),
        };
        filters.clean(&self.repo, &self.index, repo_path, bytes)
    }

    /// Compare a file patch's `index OLD..` id with the file as it is (`current`: its bytes,
    /// or the link target for a symlink; None when there is no file). Abbreviated ids are
    /// compared as prefixes.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
    pub fn check_blob_ids(
        &self,
        patch: &FilePatch<'_>,
        current: Option<&[u8]>,
        symlink: bool,
    ) -> Result<BaseCheck, GitError> {
        let (Some(ids), Some(current), Some(path)) =
            (&patch.blob_ids, current, patch.old_path.as_deref())
        else {
            return Ok(BaseCheck::Skipped);
        };
        if patch.op == FileOp::Add || is_null_id(&ids.old) {
            return Ok(BaseCheck::Skipped);
        }
        let actual = self.blob_id_of_worktree_file(path, current, symlink)?;
        Ok(compare(path, &ids.old, &actual))
    }
}

/// The check of `expected` (as written) against `actual`.
#[cfg_attr(not(feature = "internals"), allow(dead_code))] // the integration tests call it
pub(crate) fn compare(path: &str, expected: &str, actual: &ObjectId) -> BaseCheck {
    if id_matches(expected, actual) {
        BaseCheck::Matches
    } else {
        BaseCheck::Mismatch {
            path: path.to_string(),
            expected: expected.to_string(),
            actual: actual.to_hex().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_ids_match_git_hash_object() {
        // `printf 'hello\n' | git hash-object --stdin` (SHA-1 and SHA-256 object formats).
        let sha1 = blob_id_of_bytes(gix::hash::Kind::Sha1, b"hello\n");
        assert_eq!(
            sha1.to_hex().to_string(),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
        let sha256 = blob_id_of_bytes(gix::hash::Kind::Sha256, b"hello\n");
        assert_eq!(
            sha256.to_hex().to_string(),
            "2cf8d83d9ee29543b34a87727421fdecb7e3f3a183d337639025de576db9ebb4"
        );
    }

    #[test]
    fn abbreviated_ids_compare_as_prefixes() {
        let id = blob_id_of_bytes(gix::hash::Kind::Sha1, b"hello\n");
        assert!(id_matches("ce01362", &id));
        assert!(id_matches("CE01362", &id));
        assert!(!id_matches("ce01363", &id));
        assert!(!id_matches("", &id));
        assert!(!id_matches("xyz", &id));
        assert!(is_null_id("0000000"));
        assert!(!is_null_id("ce01362"));
    }

    #[test]
    fn mismatch_message_names_both_blobs() {
        let id = blob_id_of_bytes(gix::hash::Kind::Sha1, b"hello\n");
        let check = compare("a.txt", "1234567", &id);
        let message = check.message().expect("a mismatch has a message");
        assert!(message.starts_with("patch was made against a different version of a.txt"));
        assert!(message.contains("1234567") && message.contains("ce013625030b"));
        let err = check
            .into_stale_error()
            .expect("a mismatch becomes stale_file");
        assert_eq!(err.code, crate::ErrorCode::StaleFile);
    }
}
