//! Stable error codes (SPEC §6) and the one error shape every stage's error becomes at the
//! boundary: what the JSON report's `error` object and the human output show.
//!
//! Stage errors (`ParseError`, `LocateError`, …) live beside their stage and convert into
//! [`Error`]; this module only holds the shared vocabulary and the code → exit-status table.

use std::fmt;

/// Every stable error code of SPEC §6. The string form (`as_str`) is the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    ParseError,
    Usage,
    PathEscape,
    IsDirectory,
    FileNotFound,
    FileExists,
    BinaryFile,
    InvalidUtf8,
    UnsupportedFile,
    ProtectedFile,
    StaleFile,
    ContextNotFound,
    AmbiguousMatch,
    OverlappingHunks,
    AlreadyApplied,
    ExpectedMismatch,
    IndexMismatch,
    MergeConflict,
    UnbalancedEdit,
    RiskExceeded,
    NotRead,
    UnknownPreview,
    PostCheckFailed,
    Busy,
    PermissionDenied,
    IoError,
    RollbackFailed,
}

impl ErrorCode {
    /// All codes, in SPEC order (for documentation tests).
    pub const ALL: [ErrorCode; 27] = [
        ErrorCode::ParseError,
        ErrorCode::Usage,
        ErrorCode::PathEscape,
        ErrorCode::IsDirectory,
        ErrorCode::FileNotFound,
        ErrorCode::FileExists,
        ErrorCode::BinaryFile,
        ErrorCode::InvalidUtf8,
        ErrorCode::UnsupportedFile,
        ErrorCode::ProtectedFile,
        ErrorCode::StaleFile,
        ErrorCode::ContextNotFound,
        ErrorCode::AmbiguousMatch,
        ErrorCode::OverlappingHunks,
        ErrorCode::AlreadyApplied,
        ErrorCode::ExpectedMismatch,
        ErrorCode::IndexMismatch,
        ErrorCode::MergeConflict,
        ErrorCode::UnbalancedEdit,
        ErrorCode::RiskExceeded,
        ErrorCode::NotRead,
        ErrorCode::UnknownPreview,
        ErrorCode::PostCheckFailed,
        ErrorCode::Busy,
        ErrorCode::PermissionDenied,
        ErrorCode::IoError,
        ErrorCode::RollbackFailed,
    ];

    /// The stable string code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::ParseError => "parse_error",
            ErrorCode::Usage => "usage",
            ErrorCode::PathEscape => "path_escape",
            ErrorCode::IsDirectory => "is_directory",
            ErrorCode::FileNotFound => "file_not_found",
            ErrorCode::FileExists => "file_exists",
            ErrorCode::BinaryFile => "binary_file",
            ErrorCode::InvalidUtf8 => "invalid_utf8",
            ErrorCode::UnsupportedFile => "unsupported_file",
            ErrorCode::ProtectedFile => "protected_file",
            ErrorCode::StaleFile => "stale_file",
            ErrorCode::ContextNotFound => "context_not_found",
            ErrorCode::AmbiguousMatch => "ambiguous_match",
            ErrorCode::OverlappingHunks => "overlapping_hunks",
            ErrorCode::AlreadyApplied => "already_applied",
            ErrorCode::ExpectedMismatch => "expected_mismatch",
            ErrorCode::IndexMismatch => "index_mismatch",
            ErrorCode::MergeConflict => "merge_conflict",
            ErrorCode::UnbalancedEdit => "unbalanced_edit",
            ErrorCode::RiskExceeded => "risk_exceeded",
            ErrorCode::NotRead => "not_read",
            ErrorCode::UnknownPreview => "unknown_preview",
            ErrorCode::PostCheckFailed => "post_check_failed",
            ErrorCode::Busy => "busy",
            ErrorCode::PermissionDenied => "permission_denied",
            ErrorCode::IoError => "io_error",
            ErrorCode::RollbackFailed => "rollback_failed",
        }
    }

    /// Exit status of SPEC §8: 2 for usage errors, 3 when a rollback failed, 1 for every
    /// other refusal. (4, "applied but the post-check failed", is not an error code.)
    pub fn exit_status(self) -> u8 {
        match self {
            ErrorCode::Usage => 2,
            ErrorCode::RollbackFailed => 3,
            _ => 1,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A line of the file shown in an error, with its 1-based number.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct NumberedLine {
    pub line: usize,
    pub text: String,
}

/// The nearest text of the file to what a hunk expected (SPEC §6: "the nearest actual lines
/// with their line numbers and what differs").
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Nearest {
    /// 1-based first line of the region.
    pub start_line: usize,
    pub lines: Vec<NumberedLine>,
    /// The first difference named in words ("line 12: the file has a tab where the patch has
    /// 4 spaces").
    pub difference: Option<String>,
    /// Similarity of the region to the expected lines, 0.0–1.0.
    pub similarity: f32,
}

/// One place a hunk matched when the match was ambiguous.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Candidate {
    /// 1-based first line of the match.
    pub line: usize,
    /// The match's first line with one line of context on each side.
    pub context: Vec<NumberedLine>,
    /// What selects this candidate when the patch is sent again (SPEC §5 "Uniqueness"): for
    /// a hunk or an anchor, the `@@` line to give the hunk (a string: `@@ -12 @@` for an
    /// agent hunk, a full header `@@ -12,3 +12,4 @@` for a unified one); for a JSON
    /// `replace`, the `line_range` edit to send in its place (an object). None when no
    /// selector can be written (a `line_range` needs 3 non-blank lines the file lacks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub select: Option<serde_json::Value>,
}

/// The error every stage's error becomes at the boundary; the `error` object of the JSON
/// report (SPEC §8) is its serialisation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 1-based hunk (or edit) number within the file patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunk: Option<usize>,
    /// The lines the hunk expected to find.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest: Option<Nearest>,
    /// Every place an ambiguous hunk matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<Candidate>>,
    /// The next step to take.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Extra structured data a particular code carries (e.g. the stale file's two hashes, a
    /// kept chip's id, conflicting regions). Keys are documented with the code in the README.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

impl Error {
    /// A new error with only a code and a message; add the rest with the builder methods.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            path: None,
            hunk: None,
            expected: None,
            nearest: None,
            candidates: None,
            hint: None,
            details: None,
        }
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub fn with_hunk(mut self, hunk: usize) -> Self {
        self.hunk = Some(hunk);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// An I/O error on `path`, mapped to `permission_denied` or `io_error`.
    pub fn io(path: &str, what: &str, err: &std::io::Error) -> Self {
        let code = if err.kind() == std::io::ErrorKind::PermissionDenied {
            ErrorCode::PermissionDenied
        } else {
            ErrorCode::IoError
        };
        Error::new(code, format!("{what} {path}: {err}")).with_path(path)
    }

    pub fn exit_status(&self) -> u8 {
        self.code.exit_status()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_serialise_as_their_stable_strings() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).expect("a unit enum serialises");
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
    }

    #[test]
    fn exit_statuses_follow_spec() {
        assert_eq!(ErrorCode::Usage.exit_status(), 2);
        assert_eq!(ErrorCode::RollbackFailed.exit_status(), 3);
        assert_eq!(ErrorCode::ContextNotFound.exit_status(), 1);
    }
}
