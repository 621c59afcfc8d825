//! Stage: plan. The planner's refusals, each carrying its context (paths, blob ids, the
//! patch's format) as fields. The message and the next step are written once, when a
//! refusal becomes the boundary [`Error`]; a refusal of the locator keeps the
//! [`LocateError`] it wraps, and a failure of another stage met while planning (reading the
//! tree, the path guard, the balance check) travels whole inside [`PlanError::Outside`].

use crate::error::{Error, ErrorCode};
use crate::locate::LocateError;
use crate::model::{FileOp, Format};

/// Why the planner refused a file patch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The parser gave a file patch no path for its operation.
    #[error("file patch at line {line} has no path")]
    NoPath { line: usize },
    /// An Add meets a file with other content.
    #[error("cannot add {path}: the file already exists with other content")]
    AddExists { path: String, format: Format },
    /// A delete whose `-` lines are not the file's content.
    #[error("cannot delete {path}: its content differs from the lines the diff deletes")]
    DeleteDiffers { path: String },
    /// A move or copy that also edits a symlink with text hunks.
    #[error("{path} is a symlink; move it without editing, or edit its target")]
    SymlinkEdited { path: String },
    /// The diff's `index` line names another blob than the file's (`--strict-base`, or a
    /// binary patch).
    #[error("the diff was made against blob {expected}, but the file is blob {actual}")]
    BaseMismatch {
        path: String,
        expected: String,
        actual: String,
    },
    /// A path the patch makes a file lies under another the patch also makes a file.
    #[error("cannot write {path}: the patch also makes {parent} a file, so it cannot be a folder")]
    FileUnderFile { path: String, parent: String },
    /// A path the patch creates lies under a file that stands in the tree.
    #[error("cannot write {path}: {parent} is a file, so it cannot be a folder")]
    UnderExistingFile { path: String, parent: String },
    /// Some of the patch is in the files already and some is not.
    #[error(
        "the patch is partly {} already: {} {} there",
        if *reversed { "reverted" } else { "applied" },
        already.join(", "),
        if already.len() == 1 { "is" } else { "are" }
    )]
    PartlyApplied {
        /// What is there already (`a.txt (already added)`, …).
        already: Vec<String>,
        /// What is not.
        not_applied: Vec<String>,
        /// The patch is applied in reverse (`-R`): "reverted" rather than "applied".
        reversed: bool,
    },
    /// A binary file the patch cannot change.
    #[error("{path}: {why}")]
    Binary { path: String, why: BinaryWhy },
    #[error("{path} is a directory, not a file")]
    IsDirectory { path: String },
    /// The file to delete is not there.
    #[error("cannot delete {path}: no such file (it may already have been deleted)")]
    MissingToDelete { path: String },
    /// The file to update is not there.
    #[error("cannot update {path}: no such file")]
    MissingToUpdate { path: String, format: Format },
    /// The source of a move or copy is not there.
    #[error("cannot {} {path}: no such file", verb(*op))]
    MissingSource { path: String, op: FileOp },
    /// A git diff that renames a file away after another of its file patches changed it:
    /// a diff between two trees never does both, and the change would be lost.
    #[error(
        "{path} is both changed and renamed away by this diff; a diff between two trees never \
         does both (the rename reads the file as it was before the diff, so the change would \
         be lost)"
    )]
    RenamedChanged { path: String },
    /// A git diff that changes a file after an earlier file patch deleted it or renamed it
    /// away.
    #[error(
        "cannot change {path}: an earlier file patch of this diff deleted it or renamed it away \
         (a diff between two trees names a file's old side once)"
    )]
    GoneEarlier { path: String },
    /// A submodule (gitlink), which apply-patch never changes.
    #[error("{path} is a submodule (gitlink); apply-patch does not change submodules")]
    Gitlink { path: String },
    /// A move or copy onto an existing file (SPEC §6: refused, never overwritten).
    #[error("cannot {} {old} to {new}: the destination already exists", verb(*op))]
    DestinationExists {
        op: FileOp,
        old: String,
        new: String,
    },
    /// A file that is not UTF-8, edited by a patch format that only edits UTF-8 text.
    #[error("{path} is not valid UTF-8; {} patches only edit UTF-8 text", format.as_str())]
    NotUtf8 { path: String, format: Format },
    /// The locator refused a hunk (or edit) of `path`.
    #[error("{path}: {error}")]
    Locate {
        path: String,
        /// Boxed: the locator's refusal carries its teaching by value.
        #[source]
        error: Box<LocateError>,
    },
    /// A step outside the planner failed (reading the tree, the path guard, the balance
    /// check): its error is kept whole and becomes the boundary error unchanged.
    #[error("{}", .cause.message)]
    Outside {
        #[source]
        cause: Box<Error>,
    },
}

impl From<Error> for PlanError {
    fn from(cause: Error) -> PlanError {
        PlanError::Outside {
            cause: Box::new(cause),
        }
    }
}

/// A tree's refused look at a path, met while planning: its boundary error, whole.
impl From<crate::tree::TreeError> for PlanError {
    fn from(cause: crate::tree::TreeError) -> PlanError {
        Error::from(cause).into()
    }
}

/// A path guard's refusal, met while planning: its boundary error, whole.
impl From<crate::guard::GuardError> for PlanError {
    fn from(cause: crate::guard::GuardError) -> PlanError {
        Error::from(cause).into()
    }
}

/// Why a binary file cannot be changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BinaryWhy {
    #[error("the diff adds a binary file but carries no data")]
    AddedWithoutData,
    #[error("the diff says the binary file changed but carries no data")]
    ChangedWithoutData,
    #[error(
        "the diff deletes a binary file without its data or a full blob id to check it against"
    )]
    DeletedUnchecked,
    #[error("the file holds NUL bytes (binary) but the patch edits it as text")]
    EditedAsText,
    #[error("cannot decode the binary patch: {0}")]
    Undecodable(String),
    #[error("cannot apply the binary patch: {0}")]
    Unappliable(String),
}

fn verb(op: FileOp) -> &'static str {
    if op == FileOp::Copy {
        "copy"
    } else {
        "move"
    }
}

impl PlanError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            PlanError::NoPath { .. } => ErrorCode::ParseError,
            PlanError::AddExists { .. }
            | PlanError::FileUnderFile { .. }
            | PlanError::UnderExistingFile { .. }
            | PlanError::DestinationExists { .. } => ErrorCode::FileExists,
            PlanError::DeleteDiffers { .. } => ErrorCode::ContextNotFound,
            PlanError::SymlinkEdited { .. } | PlanError::Gitlink { .. } => {
                ErrorCode::UnsupportedFile
            }
            PlanError::BaseMismatch { .. } => ErrorCode::StaleFile,
            PlanError::PartlyApplied { .. } => ErrorCode::AlreadyApplied,
            PlanError::Binary { .. } => ErrorCode::BinaryFile,
            PlanError::IsDirectory { .. } => ErrorCode::IsDirectory,
            PlanError::MissingToDelete { .. }
            | PlanError::MissingToUpdate { .. }
            | PlanError::MissingSource { .. }
            | PlanError::GoneEarlier { .. } => ErrorCode::FileNotFound,
            PlanError::NotUtf8 { .. } => ErrorCode::InvalidUtf8,
            PlanError::RenamedChanged { .. } => ErrorCode::OverlappingHunks,
            PlanError::Locate { error, .. } => error.code(),
            PlanError::Outside { cause } => cause.code,
        }
    }

    /// The next step to take, when the refusal names one.
    fn hint(&self) -> Option<&'static str> {
        Some(match self {
            PlanError::NoPath { .. }
            | PlanError::SymlinkEdited { .. }
            | PlanError::Locate { .. }
            | PlanError::Outside { .. } => return None,
            PlanError::AddExists { format, .. } => add_exists_hint(*format),
            PlanError::DeleteDiffers { .. } => "re-read the file; it changed since the diff was made",
            PlanError::BaseMismatch { .. } => {
                "the file differs from the diff's base; regenerate the diff against the current file"
            }
            PlanError::FileUnderFile { .. } => {
                "a path cannot be both a file and a folder; rename one of them"
            }
            PlanError::UnderExistingFile { .. } => {
                "delete or rename the file in the same patch, or write the new file elsewhere"
            }
            PlanError::PartlyApplied { reversed: true, .. } => {
                "some of the patch's changes are already gone: drop those files or hunks from \
                 the patch, or re-read the files"
            }
            PlanError::PartlyApplied { reversed: false, .. } => {
                "drop the parts that are already applied, or re-read the files and regenerate \
                 the patch"
            }
            PlanError::Binary { why, .. } => return why.hint(),
            PlanError::IsDirectory { .. } => {
                "patches change files; name a file inside the directory"
            }
            PlanError::MissingToDelete { .. } => {
                "check the path; if the file was already deleted, drop this operation from the patch"
            }
            PlanError::MissingToUpdate { format, .. } => missing_hint(*format),
            PlanError::MissingSource { .. } => "check the path, or add the file with *** Add File",
            PlanError::Gitlink { .. } => "update the submodule with git submodule update instead",
            PlanError::GoneEarlier { .. } => {
                "regenerate the diff, or apply its parts as separate patches, one after the other"
            }
            PlanError::RenamedChanged { .. } => {
                "regenerate the diff (git diff -M), or apply the change and the rename as two \
                 patches, one after the other"
            }
            PlanError::DestinationExists { .. } => {
                "choose another destination, or delete the existing file first"
            }
            PlanError::NotUtf8 { .. } => {
                "use a unified diff, which matches non-UTF-8 files byte for byte"
            }
        })
    }

    /// The path the refusal is about, and whether its message names it.
    fn path(&self) -> Option<(&str, bool)> {
        match self {
            PlanError::NoPath { .. }
            | PlanError::PartlyApplied { .. }
            | PlanError::Outside { .. } => None,
            PlanError::BaseMismatch { path, .. } => Some((path, false)),
            PlanError::DestinationExists { new, .. } => Some((new, true)),
            PlanError::AddExists { path, .. }
            | PlanError::DeleteDiffers { path }
            | PlanError::SymlinkEdited { path }
            | PlanError::FileUnderFile { path, .. }
            | PlanError::UnderExistingFile { path, .. }
            | PlanError::Binary { path, .. }
            | PlanError::IsDirectory { path }
            | PlanError::MissingToDelete { path }
            | PlanError::MissingToUpdate { path, .. }
            | PlanError::MissingSource { path, .. }
            | PlanError::Gitlink { path }
            | PlanError::RenamedChanged { path }
            | PlanError::GoneEarlier { path }
            | PlanError::NotUtf8 { path, .. }
            | PlanError::Locate { path, .. } => Some((path, true)),
        }
    }
}

impl BinaryWhy {
    fn hint(&self) -> Option<&'static str> {
        match self {
            BinaryWhy::AddedWithoutData | BinaryWhy::ChangedWithoutData => {
                Some("regenerate the diff with git diff --binary")
            }
            BinaryWhy::DeletedUnchecked => {
                Some("regenerate the diff with git diff --binary (or --full-index)")
            }
            BinaryWhy::EditedAsText => {
                Some("patch binary files with a git binary diff (git diff --binary)")
            }
            BinaryWhy::Undecodable(_) | BinaryWhy::Unappliable(_) => None,
        }
    }
}

impl From<PlanError> for Error {
    fn from(err: PlanError) -> Error {
        if let PlanError::Outside { cause } = err {
            return *cause;
        }
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: PlanError) -> crate::Error {
    let err = match err {
        PlanError::Locate { path, error } => return error.into_error(&path),
        err => err,
    };
    let mut out = Error::new(err.code(), err.to_string());
    out = match err.path() {
        Some((path, true)) => out.with_path(path),
        Some((path, false)) => out.with_unnamed_path(path),
        None => out,
    };
    if let PlanError::DeleteDiffers { .. } = err {
        out = out.with_hunk(1);
    }
    out = match &err {
        PlanError::BaseMismatch {
            expected, actual, ..
        } => out.with_details(serde_json::json!({"expected": expected, "actual": actual})),
        PlanError::PartlyApplied {
            already,
            not_applied,
            ..
        } => out.with_details(
            serde_json::json!({"already_applied": already, "not_applied": not_applied}),
        ),
        _ => out,
    };
    let hint = match &err {
        PlanError::MissingToUpdate {
            format: Format::Unified,
            ..
        } => Some(unified_missing_hint()),
        _ => err.hint().map(crate::spelling::Hint::from),
    };
    match hint {
        Some(hint) => out.with_hint(hint),
        None => out,
    }
}

/// What to do when an Add (or JSON `create`) meets a file with other content.
fn add_exists_hint(format: Format) -> &'static str {
    match format {
        Format::Agent => "update the existing file instead (*** Update File), or delete it first",
        Format::Json => "edit the existing file instead (replace, line_range…), or delete it first",
        Format::Unified => {
            "the diff creates a file that already exists: apply it to a tree without the file, or diff against the existing one"
        }
        Format::Blocks => {
            "an empty SEARCH on a file with text can mean two things: to replace the whole \
             file, put its current lines in SEARCH (or delete it first); to append, put its \
             last lines in SEARCH and repeat them in REPLACE before the new lines, or send a \
             JSON `append` edit"
        }
    }
}

/// What to do when the file a unified diff updates is not there: the options that decide
/// where its paths land, in the caller's words.
fn unified_missing_hint() -> crate::spelling::Hint {
    use crate::spelling::{Hint, Opt, Value};
    Hint::new().text("check the path").clause(
        Hint::new()
            .text(" and the strip count (")
            .opt(Opt::Strip, Value::Number("N".into()))
            .text("), ")
            .name(Opt::Directory)
            .text(" and ")
            .name(Opt::Root),
    )
}

/// What to do when the file to update is not there.
fn missing_hint(format: Format) -> &'static str {
    match format {
        Format::Agent => "check the path, or add the file with *** Add File",
        Format::Json => "check the path, or create the file with a `create` edit",
        Format::Unified => "check the path and the strip count (-p N), --directory and --root",
        Format::Blocks => {
            "check the path (it is taken exactly, relative to the root: never guessed from a \
             file name), or create the file with a block whose SEARCH is empty"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_its_code_path_and_next_step() {
        let e: Error = PlanError::MissingToUpdate {
            path: "a.txt".into(),
            format: Format::Json,
        }
        .into();
        assert_eq!(e.code, ErrorCode::FileNotFound);
        assert_eq!(e.message, "cannot update a.txt: no such file");
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        assert_eq!(
            e.hint.as_deref(),
            Some("check the path, or create the file with a `create` edit")
        );
        let e: Error = PlanError::DestinationExists {
            op: FileOp::Copy,
            old: "a".into(),
            new: "b".into(),
        }
        .into();
        assert_eq!(
            (e.code, e.message.as_str(), e.path.as_deref()),
            (
                ErrorCode::FileExists,
                "cannot copy a to b: the destination already exists",
                Some("b")
            )
        );
        let e: Error = PlanError::Binary {
            path: "x.bin".into(),
            why: BinaryWhy::Undecodable("bad".into()),
        }
        .into();
        assert_eq!(e.code, ErrorCode::BinaryFile);
        assert_eq!(e.message, "x.bin: cannot decode the binary patch: bad");
        assert_eq!(e.hint, None);
    }

    #[test]
    fn a_base_mismatch_keeps_both_blob_ids_and_prefixes_its_path() {
        let e: Error = PlanError::BaseMismatch {
            path: "a.txt".into(),
            expected: "1234567".into(),
            actual: "89abcdef".into(),
        }
        .into();
        assert_eq!(e.code, ErrorCode::StaleFile);
        assert!(e.path_unnamed(), "the message does not name the file");
        assert_eq!(
            e.details(),
            Some(&serde_json::json!({"expected": "1234567", "actual": "89abcdef"}))
        );
    }

    #[test]
    fn a_partly_applied_patch_lists_both_sides() {
        let err = |reversed| PlanError::PartlyApplied {
            already: vec!["a (already added)".into(), "b (delete)".into()],
            not_applied: vec!["c".into()],
            reversed,
        };
        let e: Error = err(false).into();
        assert_eq!(e.code, ErrorCode::AlreadyApplied);
        assert_eq!(
            e.message,
            "the patch is partly applied already: a (already added), b (delete) are there"
        );
        assert_eq!(e.details().map(|d| &d["not_applied"][0]), Some(&"c".into()));
        let reverted: Error = err(true).into();
        assert!(reverted.message.starts_with("the patch is partly reverted"));
        assert_ne!(reverted.hint, e.hint);
    }

    #[test]
    fn a_locator_refusal_becomes_its_own_error() {
        let inner = LocateError::OverlappingHunks {
            hunk: 1,
            message: "overlaps hunk 1".into(),
        };
        let e: Error = PlanError::Locate {
            path: "a.rs".into(),
            error: Box::new(inner.clone()),
        }
        .into();
        assert_eq!(e, inner.into_error("a.rs"));
        assert_eq!(e.code, ErrorCode::OverlappingHunks);
    }

    #[test]
    fn an_error_from_outside_the_planner_passes_through_unchanged() {
        crate::error::stage_checks::passes_through(
            &crate::error::stage_checks::foreign(),
            PlanError::code,
        );
        let through = PlanError::from(crate::error::stage_checks::foreign());
        assert_eq!(through.path(), None);
    }

    #[test]
    fn a_planner_refusal_has_itself_as_its_source() {
        let err = PlanError::GoneEarlier { path: "a".into() };
        let e: Error = err.clone().into();
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(source.downcast_ref::<PlanError>(), Some(&err));
    }

    #[test]
    fn a_plan_error_stays_small() {
        assert!(std::mem::size_of::<PlanError>() < 128);
    }
}
