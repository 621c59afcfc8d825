//! Stage: git. The refusals of the git integration (discovery, the index, blobs, the
//! three-way merge, patch series), each carrying its context (paths, blob ids, the
//! conflicted regions) as fields. The message and the next step are written once, when a
//! refusal becomes the boundary [`Error`]. Failures of gix itself are
//! [`GitError::Gix`] (gix's words and its permission class, `GixFailure`).

use crate::spelling::{Hint, Opt, Value};
use std::path::PathBuf;

use super::GixFailure;
use crate::error::{Error, ErrorCode};

/// Why the git integration refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GitError {
    /// The root lies inside the git directory.
    #[error(
        "the root {} is inside the git directory: apply-patch never writes git's own files",
        root.display()
    )]
    RootInGitDir { root: PathBuf },
    /// A path whose `..` leads out of the work tree.
    #[error("{path} leaves the git work tree")]
    LeavesWorkTree { path: String },
    /// A path inside `.git`.
    #[error("{path} is inside .git: apply-patch never writes git's own files")]
    InsideGitDir { path: String },
    /// A path that is, or is inside, a submodule or a nested repository `dir`.
    #[error(
        "{path} is {}{}{}",
        if *whole { "" } else { "inside " },
        if *submodule { "the submodule" } else { "the nested repository" },
        if *whole {
            ": it belongs to another repository".to_string()
        } else {
            format!(" {dir}: its files belong to another repository")
        }
    )]
    OtherRepository {
        path: String,
        dir: String,
        submodule: bool,
        /// `path` is the submodule or repository itself, not a file inside it.
        whole: bool,
    },
    /// A path of the file system that is not UTF-8.
    #[error("the path {} is not valid UTF-8", path.display())]
    PathNotUtf8 { path: PathBuf },
    /// Another process holds the index lock.
    #[error("the git index is locked ({}.lock exists)", index.display())]
    IndexLocked {
        index: PathBuf,
        /// gix's words for the failure.
        cause: String,
    },
    /// The index could not be read (a plain apply goes on without it, with a warning):
    /// "cannot read the git index", then gix's causes.
    #[error("{0}")]
    IndexUnreadable(GixFailure),
    /// gix failed a step (`failure`: what was done, then gix's causes), on `path` when it
    /// was about one.
    #[error("{failure}")]
    Gix {
        #[source]
        failure: GixFailure,
        path: Option<String>,
    },
    /// The staged index was already installed (a second install).
    #[error("the git index was installed already")]
    IndexInstalled,
    /// The failpoint `git-index:fail` (crash tests).
    #[error("cannot replace the git index: failpoint git-index:fail")]
    IndexFailpoint,
    /// `check-patches` outside a git work tree.
    #[error(
        "check-patches checks against the git index, and {} is in no git work tree",
        root.display()
    )]
    NotInWorkTree { root: PathBuf },
    /// A patch of a series after one that does not apply.
    #[error("not checked: {earlier}, before it in the series, does not apply")]
    EarlierPatchFailed { earlier: String },
    /// `check-patches` without `--fuzz`: a hunk applies only with outer context lines
    /// ignored (SPEC §5 "Fuzz"), so the patch needs refreshing.
    #[error("hunk {hunk} of {path} applies only with {fuzz} outer context line{} ignored (fuzz): the patch needs refreshing", if *fuzz == 1 { "" } else { "s" })]
    NeedsFuzz {
        path: String,
        hunk: usize,
        fuzz: usize,
    },
    /// A three-way merge that conflicts.
    #[error(
        "{path}: the patch's change conflicts with changes made since it was written: \
         {summary}{}",
        match fate {
            MergeFate::Refused => String::new(),
            MergeFate::Checked => " (--check: nothing written)".to_string(),
            MergeFate::MarkersWritten(paths) => {
                format!("; conflict markers were written into {}", paths.join(", "))
            }
        }
    )]
    MergeConflict {
        path: String,
        /// The conflicted regions in words.
        summary: String,
        /// The conflicted regions (the error's `details`).
        regions: Box<serde_json::Value>,
        fate: MergeFate,
    },
    /// A base blob id that names more than one blob.
    #[error("the base blob id {hex} is ambiguous: {}", blobs.join(", "))]
    AmbiguousBase { hex: String, blobs: Vec<String> },
    /// The smudge filter delayed its output (not supported).
    #[error("{path}: the smudge filter delayed its output")]
    SmudgeDelayed { path: String },
    /// An index entry with unresolved merge conflicts.
    #[error("{path} has unresolved merge conflicts in the index")]
    ConflictedEntry { path: String },
    /// A series file lists a patch that does not exist.
    #[error("{} lists {name}, which does not exist", series.display())]
    SeriesMissing { series: PathBuf, name: String },
    /// `--index`: the work tree and the index disagree on touched files.
    #[error(
        "--index needs the work tree and the index to agree on every touched file: {}",
        problems.iter().map(|(p, why)| format!("{p} ({why})")).collect::<Vec<_>>().join(", ")
    )]
    IndexDisagrees {
        /// Each path and why it disagrees.
        problems: Vec<(String, String)>,
    },
    /// `--strict-base`: the file is not the blob the diff names.
    #[error(
        "patch was made against a different version of {path}: the diff's index line names \
         blob {expected}, the file is blob {}",
        short_blob(expected, actual)
    )]
    StaleBase {
        path: String,
        expected: String,
        actual: String,
    },
    /// A step outside the git integration failed (the file system through [`Error::io`],
    /// the transaction, the state place): its error is kept
    /// whole and becomes the boundary error unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for GitError {
    fn from(cause: Error) -> GitError {
        GitError::Outside {
            cause: Box::new(cause),
        }
    }
}

/// A refusal of the root's repository (discovery, ownership) passes through whole, as its
/// boundary error.
impl From<crate::root::RootError> for GitError {
    fn from(err: crate::root::RootError) -> GitError {
        Error::from(err).into()
    }
}

/// A guard's refusal of a path passes through whole, as its boundary error.
impl From<crate::guard::GuardError> for GitError {
    fn from(err: crate::guard::GuardError) -> GitError {
        Error::from(err).into()
    }
}

/// What became of a conflicted merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeFate {
    /// Refused; nothing written.
    Refused,
    /// `--check`: nothing written.
    Checked,
    /// `--conflict-markers`: markers were written into these files.
    MarkersWritten(Vec<String>),
}

/// The file's blob id, shortened to the length of the diff's (at least 12 digits).
pub(crate) fn short_blob<'a>(expected: &str, actual: &'a str) -> &'a str {
    &actual[..actual.len().min(expected.len().max(12))]
}

/// The next step once conflict markers are in the files.
pub(crate) const MARKERS_HINT: &str = "resolve the conflict markers, then stage the files (git add)";

impl GitError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            GitError::RootInGitDir { .. }
            | GitError::LeavesWorkTree { .. }
            | GitError::InsideGitDir { .. }
            | GitError::OtherRepository { .. } => ErrorCode::PathEscape,
            GitError::PathNotUtf8 { .. }
            | GitError::IndexInstalled
            | GitError::IndexFailpoint
            | GitError::SmudgeDelayed { .. } => ErrorCode::IoError,
            GitError::IndexLocked { .. } => ErrorCode::Busy,
            GitError::IndexUnreadable(failure) | GitError::Gix { failure, .. } => failure.code(),
            GitError::NotInWorkTree { .. } => ErrorCode::Usage,
            GitError::EarlierPatchFailed { .. } | GitError::NeedsFuzz { .. } => {
                ErrorCode::ContextNotFound
            }
            GitError::MergeConflict { .. } | GitError::AmbiguousBase { .. } => {
                ErrorCode::MergeConflict
            }
            GitError::ConflictedEntry { .. } | GitError::IndexDisagrees { .. } => {
                ErrorCode::IndexMismatch
            }
            GitError::SeriesMissing { .. } => ErrorCode::FileNotFound,
            GitError::StaleBase { .. } => ErrorCode::StaleFile,
            GitError::Outside { cause } => cause.code,
        }
    }

    /// The next step to take, when the refusal names one.
    fn hint(&self) -> Option<Hint> {
        let hint = match self {
            GitError::RootInGitDir { .. } => {
                return Some(
                    Hint::new()
                        .text("run apply-patch from the work tree")
                        .clause(
                            Hint::new()
                                .text(" (")
                                .opt(Opt::Root, Value::Text("DIR".into()))
                                .text(")"),
                        ),
                )
            }
            GitError::InsideGitDir { .. } => "patch files of the work tree only",
            GitError::OtherRepository { dir, .. } => {
                return Some(
                    Hint::new()
                        .text(format!("apply the part of the patch for {dir} from inside it"))
                        .clause(
                            Hint::new()
                                .text(" (")
                                .opt(Opt::Root, Value::Text(dir.clone().into()))
                                .text(")"),
                        ),
                )
            }
            GitError::IndexLocked { index, .. } => {
                return Some(Hint::from(format!(
                    "another git process is running; if none is, a crashed one left the lock: \
                     remove {}.lock",
                    index.display()
                )))
            }
            GitError::NotInWorkTree { .. } => {
                return Some(
                    Hint::new()
                        .text("run it inside the repository the patches belong to")
                        .clause(
                            Hint::new()
                                .text(" (")
                                .opt(Opt::Root, Value::Text("DIR".into()))
                                .text(")"),
                        ),
                )
            }
            GitError::MergeConflict {
                fate: MergeFate::Refused,
                ..
            } => {
                return Some(
                    Hint::new().text("resolve by hand").clause(
                        Hint::new()
                            .text(", or pass ")
                            .on(Opt::ConflictMarkers)
                            .text(" to write git-style conflict markers into the file"),
                    ),
                )
            }
            GitError::MergeConflict { .. } => MARKERS_HINT,
            GitError::AmbiguousBase { .. } => {
                "make the diff with full blob ids (git diff --full-index)"
            }
            GitError::ConflictedEntry { .. } => "resolve the conflict and stage the file first",
            GitError::IndexDisagrees { .. } => {
                return Some(
                    Hint::new()
                        .text("stage the files first (git add), or apply ")
                        .opt(Opt::Index, Value::Off),
                )
            }
            GitError::StaleBase { .. } => {
                return Some(
                    Hint::new()
                        .text("regenerate the patch against the current file")
                        .clause(
                            Hint::new()
                                .text(", or drop ")
                                .name(Opt::StrictBase)
                                .text(" to apply it anyway"),
                        ),
                )
            }
            GitError::NeedsFuzz { .. } => {
                "regenerate the patch against the staged tree (its context lines have drifted), \
                 or run check-patches --fuzz N to accept patches that need up to N lines of fuzz"
            }
            GitError::LeavesWorkTree { .. }
            | GitError::PathNotUtf8 { .. }
            | GitError::IndexUnreadable(_)
            | GitError::Gix { .. }
            | GitError::IndexInstalled
            | GitError::IndexFailpoint
            | GitError::EarlierPatchFailed { .. }
            | GitError::SmudgeDelayed { .. }
            | GitError::SeriesMissing { .. }
            | GitError::Outside { .. } => return None,
        };
        Some(Hint::from(hint))
    }

    /// The path the refusal is about (every message names its own).
    fn path(&self) -> Option<String> {
        match self {
            GitError::LeavesWorkTree { path }
            | GitError::InsideGitDir { path }
            | GitError::OtherRepository { path, .. }
            | GitError::MergeConflict { path, .. }
            | GitError::SmudgeDelayed { path }
            | GitError::ConflictedEntry { path }
            | GitError::StaleBase { path, .. }
            | GitError::NeedsFuzz { path, .. } => Some(path.clone()),
            GitError::SeriesMissing { series, .. } => Some(series.display().to_string()),
            GitError::Gix { path, .. } => path.clone(),
            GitError::IndexDisagrees { problems } if problems.len() == 1 => {
                Some(problems[0].0.clone())
            }
            _ => None,
        }
    }

    /// The structured data the refusal carries.
    fn details(&self) -> Option<serde_json::Value> {
        Some(match self {
            GitError::IndexLocked { cause, .. } => serde_json::json!({ "cause": cause }),
            GitError::MergeConflict { regions, .. } => (**regions).clone(),
            GitError::IndexDisagrees { problems } => serde_json::json!({
                "paths": problems
                    .iter()
                    .map(|(p, why)| serde_json::json!({"path": p, "reason": why}))
                    .collect::<Vec<_>>()
            }),
            GitError::StaleBase {
                expected, actual, ..
            } => serde_json::json!({ "expected_blob": expected, "actual_blob": actual }),
            _ => return None,
        })
    }
}

impl GitError {
    /// gix's failure of `what`, about no path in particular.
    pub(crate) fn gix(what: &str, err: &gix::Error) -> GitError {
        GitError::Gix {
            failure: GixFailure::new(what, err),
            path: None,
        }
    }

    /// gix's failure of `what` on the file `path`.
    pub(crate) fn gix_at(what: &str, err: &gix::Error, path: &str) -> GitError {
        GitError::Gix {
            failure: GixFailure::new(what, err),
            path: Some(path.to_string()),
        }
    }
}

impl From<GitError> for Error {
    fn from(err: GitError) -> Error {
        if let GitError::Outside { cause } = err {
            return *cause;
        }
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: GitError) -> crate::Error {
    Error::of_stage(
        err.code(),
        err.to_string(),
        err.path(),
        err.hint(),
        err.details(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conflict_says_what_became_of_it() {
        let err = |fate| GitError::MergeConflict {
            path: "a.txt".into(),
            summary: "lines 2-3".into(),
            regions: Box::new(serde_json::json!({"conflicts": []})),
            fate,
        };
        let refused: Error = err(MergeFate::Refused).into();
        assert_eq!(refused.code, ErrorCode::MergeConflict);
        assert_eq!(
            refused.message,
            "a.txt: the patch's change conflicts with changes made since it was written: lines 2-3"
        );
        assert!(refused
            .hint
            .as_ref()
            .is_some_and(|h| h.contains("--conflict-markers")));
        assert_eq!(refused.details(), Some(&serde_json::json!({"conflicts": []})));
        let written: Error = err(MergeFate::MarkersWritten(vec!["a.txt".into(), "b".into()])).into();
        assert!(written
            .message
            .ends_with("; conflict markers were written into a.txt, b"));
        assert_eq!(written.hint.as_deref(), Some(MARKERS_HINT));
        let checked: Error = err(MergeFate::Checked).into();
        assert!(checked.message.ends_with(" (--check: nothing written)"));
    }

    #[test]
    fn another_repository_is_named_with_its_folder() {
        let e: Error = GitError::OtherRepository {
            path: "sub/a.txt".into(),
            dir: "sub".into(),
            submodule: true,
            whole: false,
        }
        .into();
        assert_eq!(e.code, ErrorCode::PathEscape);
        assert_eq!(
            e.message,
            "sub/a.txt is inside the submodule sub: its files belong to another repository"
        );
        assert_eq!(
            e.hint.as_deref(),
            Some("apply the part of the patch for sub from inside it (--root sub)")
        );
        let whole: Error = GitError::OtherRepository {
            path: "nested".into(),
            dir: "nested".into(),
            submodule: false,
            whole: true,
        }
        .into();
        assert_eq!(
            whole.message,
            "nested is the nested repository: it belongs to another repository"
        );
    }

    #[test]
    fn an_index_disagreement_names_a_lone_path() {
        let one: Error = GitError::IndexDisagrees {
            problems: vec![("a.txt".into(), "not staged".into())],
        }
        .into();
        assert_eq!(one.code, ErrorCode::IndexMismatch);
        assert_eq!(one.path.as_deref(), Some("a.txt"));
        assert!(one.message.ends_with(": a.txt (not staged)"));
        let two: Error = GitError::IndexDisagrees {
            problems: vec![("a".into(), "x".into()), ("b".into(), "y".into())],
        }
        .into();
        assert_eq!(two.path, None);
        assert_eq!(two.details().map(|d| d["paths"][1]["reason"].clone()), Some("y".into()));
    }

    #[test]
    fn a_stale_base_shortens_the_files_blob_to_the_diffs() {
        let e: Error = GitError::StaleBase {
            path: "a.txt".into(),
            expected: "1234567".into(),
            actual: "ce013625030ba8dba906f756967f9e9ca394464a".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::StaleFile);
        assert!(e.message.ends_with("names blob 1234567, the file is blob ce013625030b"));
        assert_eq!(
            e.details().map(|d| d["actual_blob"].clone()),
            Some("ce013625030ba8dba906f756967f9e9ca394464a".into())
        );
    }

    #[test]
    fn codes_follow_the_spec() {
        let locked: Error = GitError::IndexLocked {
            index: ".git/index".into(),
            cause: "held".into(),
        }
        .into();
        assert_eq!(locked.code, ErrorCode::Busy);
        assert!(locked.hint.is_some_and(|h| h.ends_with("remove .git/index.lock")));
        assert_eq!(GitError::IndexFailpoint.code(), ErrorCode::IoError);
        let usage: Error = GitError::NotInWorkTree {
            root: "/tmp/x".into(),
        }
        .into();
        assert_eq!(usage.code, ErrorCode::Usage);
    }

    #[test]
    fn an_error_from_outside_git_passes_through_unchanged() {
        crate::error::stage_checks::passes_through(
            &crate::error::stage_checks::foreign(),
            GitError::code,
        );
    }

    #[test]
    fn a_git_error_stays_small() {
        assert!(std::mem::size_of::<GitError>() < 128);
    }

    /// A failure of gix reads as its words, with its code, on its path when it had one, no
    /// hint; the typed failure is its source.
    #[test]
    fn a_gix_failure_keeps_its_words_code_and_path() {
        let failure = |denied| GixFailure {
            message: "cannot read blob 1234 of a.txt: object not found".into(),
            denied,
        };
        let e: Error = GitError::Gix {
            failure: failure(false),
            path: Some("a.txt".into()),
        }
        .into();
        assert_eq!(
            e,
            Error::new(ErrorCode::IoError, failure(false).message).with_path("a.txt")
        );
        assert_eq!(e.hint, None);
        let source = std::error::Error::source(&e).and_then(|s| s.downcast_ref::<GitError>());
        assert!(matches!(source, Some(GitError::Gix { .. })));
        let e: Error = GitError::Gix {
            failure: failure(true),
            path: None,
        }
        .into();
        assert_eq!((e.code, e.path), (ErrorCode::PermissionDenied, None));
    }

    #[test]
    fn an_unreadable_index_keeps_gix_words_and_its_code() {
        let err = |denied| {
            GitError::IndexUnreadable(GixFailure {
                message: "cannot read the git index: bad signature".into(),
                denied,
            })
        };
        let e: Error = err(false).into();
        assert_eq!(e.code, ErrorCode::IoError);
        assert_eq!(e.message, "cannot read the git index: bad signature");
        assert!(e.details().is_none());
        assert_eq!((e.path, e.hint), (None, None));
        assert_eq!(err(true).code(), ErrorCode::PermissionDenied);
        assert_eq!(err(true).to_string(), e.message);
    }
}
