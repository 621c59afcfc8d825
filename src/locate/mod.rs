//! Stage: locate. Pure: file lines + hunks (or JSON edits) + options in, one placement per
//! hunk or a typed refusal out (SPEC §5, and the `replace` / `line_range` checks of §4).
//! No I/O, no line endings (the splicer in `crate::splice` owns those).

use crate::error::{Candidate, Error, ErrorCode, Nearest, NumberedLine};
use crate::model::{Edit, Hunk, Rules, Trust};
use crate::text::Text;

#[cfg(test)]
mod assess_tests;
mod diagnose;
mod edits;
mod hunks;
mod ladder;
mod overlap;
mod reindent;
mod search;

/// Place every hunk of one file (SPEC §5): one [`Placement`] per hunk, sorted by `start`, or
/// the first refusal. `lines` are the file's line contents ([`Text::contents`]: no endings,
/// no BOM); hunks are in patch order. `rules` are those of the patch set the hunks come from
/// ([`crate::PatchSet::rules`]; a [`crate::Format`] gives its front end's).
///
/// ```
/// use apply_patch::locate::{locate_hunks, LocateOptions, Piece};
/// use apply_patch::{Format, Hunk, Line, LineKind};
///
/// let file: Vec<&[u8]> = vec![b"fn main() {", b"    old();", b"}"];
/// let hunk = Hunk {
///     lines: vec![
///         Line::new(LineKind::Context, &b"fn main() {"[..]),
///         Line::new(LineKind::Delete, &b"    old();"[..]),
///         Line::new(LineKind::Insert, &b"    new();"[..]),
///     ],
///     ..Hunk::default()
/// };
/// let placed = locate_hunks(&file, &[hunk], Format::Agent, &LocateOptions::default()).unwrap();
/// assert_eq!((placed[0].start, placed[0].old_len), (0, 2));
/// assert_eq!(placed[0].pieces[0], Piece::Keep(0));
/// ```
pub fn locate_hunks(
    lines: &[&[u8]],
    hunks: &[Hunk<'_>],
    rules: impl Into<Rules>,
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    hunks::locate_hunks(lines, hunks, rules, opts)
}

/// Which hunks of one file would apply, in order (for a refusal's chip): hunk `i` applies
/// when [`locate_hunks`] accepts it together with the applicable hunks before it. One pass
/// over the hunks, so it costs about what one [`locate_hunks`] does.
pub fn assess_hunks(
    lines: &[&[u8]],
    hunks: &[Hunk<'_>],
    rules: impl Into<Rules>,
    opts: &LocateOptions,
) -> Vec<Result<(), ErrorCode>> {
    hunks::assess_hunks(lines, hunks, rules, opts)
}

/// Place the JSON edits of one file (SPEC §4: `replace`, `line_range`, `insert`, `append`),
/// all against the file as it was before the request; overlapping edits are refused.
/// Placements are sorted by `start`; their `hunk` is the edit's index.
pub fn locate_edits(
    text: &Text<'_>,
    edits: &[Edit<'_>],
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    edits::locate_edits(text, edits, opts)
}

/// The tolerance ladder of SPEC §5, strictest first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Level {
    /// Byte-exact (line endings never count).
    Exact,
    /// Trailing ASCII whitespace ignored.
    TrailingWhitespace,
    /// Leading and trailing ASCII whitespace ignored.
    Whitespace,
    /// As `Whitespace`, with Unicode punctuation and spaces folded.
    Unicode,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::Exact,
        Level::TrailingWhitespace,
        Level::Whitespace,
        Level::Unicode,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Exact => "exact",
            Level::TrailingWhitespace => "trailing_whitespace",
            Level::Whitespace => "whitespace",
            Level::Unicode => "unicode",
        }
    }
}

/// Options of the locator.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LocateOptions {
    /// `--window N`: how far from the hint a match still counts as "near" (default 20).
    pub window: usize,
    /// `--unidiff-zero`: zero-context hunks are placed at their line numbers exactly.
    pub unidiff_zero: bool,
    /// The file is not UTF-8: match byte for byte at level 1 only.
    pub bytes_only: bool,
    /// Whether the file's last line ends in a newline (an empty file counts as ending in
    /// one; [`Text::ends_with_newline`]): a hunk that changes only the final newline is
    /// already applied when the file already ends as the hunk leaves it (SPEC §5 "Already
    /// applied"). None (the default): not known, and such a hunk is placed as any other.
    pub ends_with_newline: Option<bool>,
    /// Whether the hunks' line numbers belong to the file as it is (SPEC §5 "Trust in line
    /// numbers"): only trusted numbers choose among equal candidates.
    pub line_numbers: LineNumbers,
    /// `--fuzz N`: when no level finds a hunk, up to N outer context lines at each end may be
    /// ignored, under uniqueness in the whole file (SPEC §5 "Fuzz"; default 2, 0 turns it
    /// off).
    pub fuzz: usize,
}

/// The default of `--fuzz` (SPEC §5 "Fuzz"), as GNU patch's.
pub const DEFAULT_FUZZ: usize = 2;

/// Whether a file's hunk line numbers are evidence of where the hunks go (SPEC §5 "Trust in
/// line numbers"). A trusted number may choose among equal candidates (a match starting
/// exactly at it is taken at once); an untrusted one still centres the window, but never
/// chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LineNumbers {
    /// As the patch's rules say ([`Rules::line_numbers`]): a unified diff's numbers are
    /// trusted, an agent hunk's are not (models guess line numbers).
    #[default]
    ByFormat,
    /// Trusted: an agent patch under a `*** Base:` that matches the file.
    Trusted,
    /// Not trusted: a unified diff whose `index` blob id is known to differ from the file.
    Untrusted,
}

impl LineNumbers {
    /// Whether numbers of a patch with `rules` are trusted.
    pub fn trusted(self, rules: impl Into<Rules>) -> bool {
        match self {
            LineNumbers::ByFormat => rules.into().line_numbers == Trust::UnlessStale,
            LineNumbers::Trusted => true,
            LineNumbers::Untrusted => false,
        }
    }
}

/// Setters for code outside the crate, which cannot write the struct (it is
/// `#[non_exhaustive]`): `LocateOptions::default().with_fuzz(0).with_window(5)`.
impl LocateOptions {
    /// [`window`](Self::window).
    pub fn with_window(mut self, window: usize) -> Self {
        self.window = window;
        self
    }

    /// [`unidiff_zero`](Self::unidiff_zero).
    pub fn with_unidiff_zero(mut self, on: bool) -> Self {
        self.unidiff_zero = on;
        self
    }

    /// [`bytes_only`](Self::bytes_only).
    pub fn with_bytes_only(mut self, on: bool) -> Self {
        self.bytes_only = on;
        self
    }

    /// [`ends_with_newline`](Self::ends_with_newline).
    pub fn with_ends_with_newline(mut self, ends: Option<bool>) -> Self {
        self.ends_with_newline = ends;
        self
    }

    /// [`line_numbers`](Self::line_numbers).
    pub fn with_line_numbers(mut self, numbers: LineNumbers) -> Self {
        self.line_numbers = numbers;
        self
    }

    /// [`fuzz`](Self::fuzz).
    pub fn with_fuzz(mut self, fuzz: usize) -> Self {
        self.fuzz = fuzz;
        self
    }
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            window: 20,
            unidiff_zero: false,
            bytes_only: false,
            ends_with_newline: None,
            line_numbers: LineNumbers::ByFormat,
            fuzz: DEFAULT_FUZZ,
        }
    }
}

/// How many outer context lines of a hunk fuzz ignored, at its top and at its bottom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Fuzz {
    pub top: usize,
    pub bottom: usize,
}

impl Fuzz {
    /// `top` outer context lines ignored at the top of a hunk, `bottom` at its bottom.
    pub fn new(top: usize, bottom: usize) -> Self {
        Fuzz { top, bottom }
    }

    /// Context lines ignored, both ends together (`fuzz` in the report, SPEC §8).
    pub fn lines(self) -> usize {
        self.top + self.bottom
    }
}

/// One line of a placed hunk's new side.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Piece {
    /// A context line: the file's own line at this 0-based index, kept byte for byte.
    Keep(usize),
    /// An inserted line (already re-indented when the match was at level 3 or 4). `replaces`
    /// is the 0-based index of the deleted file line it takes the place of, if any: its
    /// ending is what the new line gets (SPEC §6).
    Insert {
        text: Vec<u8>,
        replaces: Option<usize>,
    },
}

/// Where one hunk (or edit) goes, and what replaces the file lines it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Placement {
    /// 0-based index of the hunk (or edit) in its file patch.
    pub hunk: usize,
    /// 0-based index of the first file line covered; for a pure insertion the index the new
    /// lines are inserted before (0: at the top; `lines.len()`: at the end).
    pub start: usize,
    /// How many file lines the hunk covers (its old side).
    pub old_len: usize,
    pub level: Level,
    /// Signed distance from the drift-adjusted explicit line-number hint; None without one.
    pub offset: Option<isize>,
    /// The hunk's new side is already there: nothing to change.
    pub already_applied: bool,
    /// The outer context lines fuzz ignored (SPEC §5 "Fuzz"); they are not part of the
    /// placement (`start` is the first line of the trimmed match) and keep the file's text.
    pub fuzz: Fuzz,
    /// The new side, replacing file lines `start..start + old_len`.
    pub pieces: Vec<Piece>,
    /// Some(true/false) when this hunk decides whether the file ends in a newline (a unified
    /// diff's `\ No newline at end of file`, `append`, a level-1 `replace` whose `old` includes
    /// the final line ending); None keeps the file's own state.
    pub final_newline: Option<bool>,
}

/// What the user calls the refused piece of a patch: a hunk of a diff, or an edit of a JSON
/// request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchPart {
    Hunk,
    Edit,
}

impl std::fmt::Display for PatchPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PatchPart::Hunk => "hunk",
            PatchPart::Edit => "edit",
        })
    }
}

/// Why a hunk was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LocateError {
    #[error("{unit} {}: {message}{}", hunk + 1, below.as_deref().map(|b| format!("\n{b}")).unwrap_or_default())]
    ContextNotFound {
        unit: PatchPart,
        hunk: usize,
        /// The first line of the message.
        message: String,
        /// The lines that follow it: the comparison with the nearest text, a note.
        below: Option<String>,
        /// The lines the hunk (or its anchor) expected.
        expected: Vec<String>,
        /// Boxed: a refusal stays small on the paths that succeed.
        nearest: Option<Box<Nearest>>,
        hint: String,
    },
    #[error("{unit} {}: {message}\n{}", hunk + 1, diagnose::candidate_block(candidates))]
    AmbiguousMatch {
        unit: PatchPart,
        hunk: usize,
        /// The first line of the message; the candidates follow it.
        message: String,
        expected: Vec<String>,
        candidates: Vec<Candidate>,
        hint: String,
    },
    #[error("hunk {}: {message}", hunk + 1)]
    OverlappingHunks { hunk: usize, message: String },
    #[error("edit {}: {message}", hunk + 1)]
    ExpectedMismatch {
        hunk: usize,
        message: String,
        actual: Vec<NumberedLine>,
        hint: String,
    },
}

impl LocateError {
    /// The stable error code of this refusal.
    pub fn code(&self) -> ErrorCode {
        match self {
            LocateError::ContextNotFound { .. } => ErrorCode::ContextNotFound,
            LocateError::AmbiguousMatch { .. } => ErrorCode::AmbiguousMatch,
            LocateError::OverlappingHunks { .. } => ErrorCode::OverlappingHunks,
            LocateError::ExpectedMismatch { .. } => ErrorCode::ExpectedMismatch,
        }
    }

    /// What the user calls the refused piece: JSON edits are "edits".
    pub fn unit(&self) -> PatchPart {
        match self {
            LocateError::ContextNotFound { unit, .. }
            | LocateError::AmbiguousMatch { unit, .. } => *unit,
            LocateError::OverlappingHunks { .. } => PatchPart::Hunk,
            LocateError::ExpectedMismatch { .. } => PatchPart::Edit,
        }
    }

    /// 0-based index of the refused hunk (or edit).
    pub fn hunk(&self) -> usize {
        match self {
            LocateError::ContextNotFound { hunk, .. }
            | LocateError::AmbiguousMatch { hunk, .. }
            | LocateError::OverlappingHunks { hunk, .. }
            | LocateError::ExpectedMismatch { hunk, .. } => *hunk,
        }
    }

    /// The boundary error: `hunk 3 of src/a.rs: context matches 2 places (lines 10 and 88)`,
    /// with the expected lines, the nearest text, the candidates and the next step filled in.
    pub fn into_error(self, path: &str) -> Error {
        let code = self.code();
        let n = self.hunk() + 1;
        let unit = self.unit();
        let head = |message: &str| format!("{unit} {n} of {path}: {message}");
        let base = |message: &str| Error::new(code, head(message)).with_path(path).with_hunk(n);
        match self {
            LocateError::ContextNotFound {
                message,
                below: None,
                expected,
                nearest,
                hint,
                ..
            } => base(&message)
                .with_hint(hint)
                .with_expected(expected)
                .with_nearest(nearest.map(|n| *n)),
            LocateError::ContextNotFound {
                message,
                below: Some(below),
                expected,
                nearest,
                hint,
                ..
            } => base(&format!("{message}\n{below}"))
                .with_context_in_message()
                .with_hint(hint)
                .with_expected(expected)
                .with_nearest(nearest.map(|n| *n)),
            LocateError::AmbiguousMatch {
                message,
                expected,
                mut candidates,
                hint,
                ..
            } => {
                // A JSON edit that selects a candidate names the file too (so does the
                // message, which shows the edit).
                for c in &mut candidates {
                    if let Some(select @ serde_json::Value::Object(_)) = &mut c.select {
                        select["path"] = path.into();
                    }
                }
                let block = diagnose::candidate_block(&candidates);
                base(&format!("{message}\n{block}"))
                    .with_context_in_message()
                    .with_hint(hint)
                    .with_expected(expected)
                    .with_candidates(candidates)
            }
            LocateError::OverlappingHunks { message, .. } => base(&message)
                .with_hint("merge the two hunks into one, or make their changed lines distinct"),
            LocateError::ExpectedMismatch {
                message,
                actual,
                hint,
                ..
            } => base(&message)
                .with_hint(hint)
                .with_nearest(edits::actual_as_nearest(&actual)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_selector_names_the_file_in_the_candidates_and_the_message() {
        let err = LocateError::AmbiguousMatch {
            unit: PatchPart::Edit,
            hunk: 0,
            message: "`old` matches 2 places (lines 1 and 3)".into(),
            expected: vec!["x".into()],
            candidates: vec![Candidate {
                line: 1,
                context: vec![NumberedLine {
                    line: 1,
                    text: "x".into(),
                }],
                select: Some(serde_json::json!({"op": "line_range"})),
            }],
            hint: "say which one".into(),
        };
        let shown = err.to_string();
        let out = err.into_error("a.txt");
        let select = r#"{"op":"line_range","path":"a.txt"}"#;
        assert_eq!(
            out.candidates().and_then(|c| c[0].select.as_ref()),
            Some(&serde_json::from_str(select).expect("valid JSON"))
        );
        assert!(out
            .message
            .starts_with("edit 1 of a.txt: `old` matches 2 places"));
        assert!(out.message.contains(select), "{}", out.message);
        assert!(
            !shown.contains(select),
            "the stage's own text has no path: {shown}"
        );
        assert!(out.context_in_message());
        assert_eq!((out.code, out.hunk), (ErrorCode::AmbiguousMatch, Some(1)));
    }

    #[test]
    fn the_lines_below_a_refusal_follow_its_first_line() {
        let err = |below: Option<&str>| LocateError::ContextNotFound {
            unit: PatchPart::Hunk,
            hunk: 1,
            message: "context not found".into(),
            below: below.map(str::to_string),
            expected: vec!["x".into()],
            nearest: None,
            hint: "h".into(),
        };
        let with = err(Some("comparison")).into_error("a.rs");
        assert_eq!(
            with.message,
            "hunk 2 of a.rs: context not found\ncomparison"
        );
        assert!(with.context_in_message());
        let without = err(None).into_error("a.rs");
        assert_eq!(without.message, "hunk 2 of a.rs: context not found");
        assert!(!without.context_in_message());
        assert_eq!(without.expected(), Some(&["x".to_string()][..]));
    }
}
