//! Stage: transform (rewriting a parsed patch: reverse, filter, convert). Its refusals, each
//! carrying its context (the path, the hunk, the flag and glob, what has no form in the
//! target format) as fields. All are `usage`: the patch is fine, the asked rewrite is not.
//! The message and the next step are written once, when a refusal becomes the boundary
//! [`Error`].

use crate::error::{Error, ErrorCode};
use crate::model::Format;

/// Why a patch could not be rewritten as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConvertError {
    /// `--reverse` of a patch that is not a unified diff.
    #[error(
        "--reverse works on unified diffs only; this patch is in the {} format",
        format.as_str()
    )]
    ReverseNotUnified { format: Format },
    /// A file patch with no reverse.
    #[error("{path}: {what} cannot be reversed")]
    Irreversible { path: String, what: Irreversible },
    /// An `--include` / `--exclude` pattern that is not a glob.
    #[error("{flag} {glob}: not a valid glob: {cause}")]
    BadGlob {
        flag: &'static str,
        glob: String,
        /// globset's words for the failure.
        cause: String,
    },
    /// The patterns of a flag do not build one set.
    #[error("{flag}: {cause}")]
    BadGlobSet { flag: &'static str, cause: String },
    /// A change the agent patch language has no form for.
    #[error("{path}: {what} cannot be expressed in the agent patch language")]
    NoAgentForm { path: String, what: NoAgentForm },
    /// An absolute path, which a git diff's `a/` and `b/` prefixes would make relative.
    #[error(
        "{path}: an absolute path has no form in a git diff (its a/ and b/ prefixes would make \
         it relative)"
    )]
    AbsoluteInUnified { path: String },
    /// JSON edits, which are not line hunks.
    #[error(
        "JSON edit requests cannot be converted to a unified diff: their edits are not line hunks"
    )]
    EditsToUnified,
    /// A hunk with an `@@ TEXT` anchor, which a unified diff has no form for.
    #[error("{path}: hunk {hunk} has an anchor ('@@ TEXT') that a unified diff cannot express")]
    AnchorToUnified { path: String, hunk: usize },
    /// JSON asked as the target format.
    #[error("convert can write 'unified' or 'agent', not 'json'")]
    ToJson,
    /// Blocks asked as the target format.
    #[error("convert can write 'unified' or 'agent', not 'blocks'")]
    ToBlocks,
}

/// What has no reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Irreversible {
    #[error("a copy")]
    Copy,
    #[error("binary data without a reverse section")]
    BinaryWithoutReverse,
}

/// What has no form in the agent patch language (`hunk` is 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoAgentForm {
    #[error("a symbolic link or submodule")]
    LinkOrSubmodule,
    #[error("a file mode change")]
    ModeChange,
    #[error("a binary change")]
    Binary,
    #[error("a JSON edit")]
    JsonEdit,
    #[error("a copy")]
    Copy,
    #[error("a path with control characters or surrounding blanks")]
    UnwritablePath,
    #[error("a new file without a final newline")]
    AddWithoutNewline,
    #[error("an update without hunks")]
    UpdateWithoutHunks,
    #[error("a non-UTF-8 line (hunk {hunk})")]
    NonUtf8Line { hunk: usize },
    #[error("a change of the final newline (hunk {hunk})")]
    FinalNewline { hunk: usize },
    #[error("an anchor that is blank or ends in blanks (hunk {hunk})")]
    BlankAnchor { hunk: usize },
    #[error("a context line that reads as a marker (hunk {hunk})")]
    MarkerContext { hunk: usize },
}

impl ConvertError {
    /// The stable error code: every refusal of a rewrite is a usage error.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::Usage
    }

    /// The path the refusal is about (every message names its own).
    fn path(&self) -> Option<&str> {
        match self {
            ConvertError::Irreversible { path, .. }
            | ConvertError::NoAgentForm { path, .. }
            | ConvertError::AbsoluteInUnified { path }
            | ConvertError::AnchorToUnified { path, .. } => Some(path),
            ConvertError::ReverseNotUnified { .. }
            | ConvertError::BadGlob { .. }
            | ConvertError::BadGlobSet { .. }
            | ConvertError::EditsToUnified
            | ConvertError::ToJson
            | ConvertError::ToBlocks => None,
        }
    }
}

impl From<ConvertError> for Error {
    fn from(err: ConvertError) -> Error {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: ConvertError) -> crate::Error {
    let mut out = Error::new(err.code(), err.to_string());
    if let Some(path) = err.path() {
        out = out.with_path(path);
    }
    match err {
        ConvertError::AnchorToUnified { hunk, .. } => out.with_hunk(hunk),
        ConvertError::NoAgentForm { .. } => {
            out.with_hint("convert to a unified diff instead (--to unified)")
        }
        // A copy leaves its source in place, so its inverse would be a delete that the
        // diff cannot check; `git apply -R` cannot undo one either.
        ConvertError::Irreversible {
            what: Irreversible::Copy,
            ..
        } => out.with_hint(
            "delete the copy by hand (git apply -R cannot undo a copy either), then reverse \
             the rest of the diff",
        ),
        _ => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_agent_form_names_the_path_and_points_to_unified() {
        let e: Error = ConvertError::NoAgentForm {
            path: "a.txt".into(),
            what: NoAgentForm::FinalNewline { hunk: 2 },
        }
        .into();
        assert_eq!(e.code, ErrorCode::Usage);
        assert_eq!(
            e.message,
            "a.txt: a change of the final newline (hunk 2) cannot be expressed in the agent \
             patch language"
        );
        assert_eq!(e.path.as_deref(), Some("a.txt"));
        assert_eq!(e.hunk, None);
        assert_eq!(
            e.hint.as_deref(),
            Some("convert to a unified diff instead (--to unified)")
        );
    }

    #[test]
    fn an_anchor_names_its_hunk_and_the_rest_carry_no_hint() {
        let e: Error = ConvertError::AnchorToUnified {
            path: "a".into(),
            hunk: 3,
        }
        .into();
        assert_eq!((e.path.as_deref(), e.hunk, e.hint), (Some("a"), Some(3), None));
        let e: Error = ConvertError::Irreversible {
            path: "b".into(),
            what: Irreversible::BinaryWithoutReverse,
        }
        .into();
        assert_eq!(
            e.message,
            "b: binary data without a reverse section cannot be reversed"
        );
        assert_eq!((e.path.as_deref(), e.hint), (Some("b"), None));
        let e: Error = ConvertError::ReverseNotUnified {
            format: Format::Agent,
        }
        .into();
        assert_eq!(
            e.message,
            "--reverse works on unified diffs only; this patch is in the agent format"
        );
        assert_eq!((e.code, e.path), (ErrorCode::Usage, None));
        let e: Error = ConvertError::BadGlob {
            flag: "--include",
            glob: "a[".into(),
            cause: "unclosed".into(),
        }
        .into();
        assert_eq!(e.message, "--include a[: not a valid glob: unclosed");
    }
}
