//! Stage: parse. Three nom front ends (agent language, unified diffs, JSON edit requests)
//! turn patch input into the one [`crate::model`]. Format detection (SPEC §1) lives here.
//! No I/O; nom's error types never leave this module: every failure is a [`ParseError`].

pub mod binary;
pub mod quoted;
pub mod unified;

use crate::model::Format;

/// Options that change how a patch is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// `--format`: skip detection.
    pub format: Option<Format>,
    /// `-p N` for unified diffs; None: SPEC §3 defaults.
    pub strip: Option<usize>,
    /// `--recount`: ignore the hunk line counts of unified diffs.
    pub recount: bool,
    /// `--unidiff-zero`: accept zero-context hunks that do not cover the whole file.
    pub unidiff_zero: bool,
}

/// A patch that could not be read: where, what was found, what was expected, what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line of the patch input.
    pub line: usize,
    /// 1-based column (in characters) of the offending spot.
    pub column: usize,
    /// The offending line, lossily decoded and cut to a readable length.
    pub line_text: String,
    /// What went wrong, lowercase ("expected a hunk line starting with ' ', '-' or '+'").
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}
