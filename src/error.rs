//! Stable error codes (SPEC §6) and the one error shape every stage's error becomes at the
//! boundary: what the JSON report's `error` object and the human output show.
//!
//! Stage errors (`ParseError`, `LocateError`, …) live beside their stage and convert into
//! [`Error`]; this module only holds the shared vocabulary and the code → exit-status table.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use crate::quote::{escape_for_terminal, quote_for_terminal};
use crate::spelling::{FrontEnd, Hint};

/// The typed error an [`Error`] was made from (its [`std::error::Error::source`]): shared, so
/// that an `Error` stays `Clone`.
pub type Cause = Arc<dyn std::error::Error + Send + Sync + 'static>;

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
    /// A `--formatter` command failed, timed out or could not run: nothing was written.
    FormatterFailed,
    Busy,
    PermissionDenied,
    IoError,
    RollbackFailed,
}

impl ErrorCode {
    /// All codes, in SPEC order (for documentation tests).
    pub const ALL: [ErrorCode; 28] = [
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
        ErrorCode::FormatterFailed,
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
            ErrorCode::FormatterFailed => "formatter_failed",
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
/// report (SPEC §8) is its serialisation, field order: `code`, `message`, `path`, `hunk`,
/// `expected`, `nearest`, `candidates`, `hint`, `details` (absent fields left out).
///
/// The rich, rarely present parts (expected lines, nearest text, candidates, details) sit in
/// one box reached through accessors, so that `Result<_, Error>` stays small on every path
/// that succeeds.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(from = "Owned")]
#[non_exhaustive]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    pub path: Option<String>,
    /// 1-based hunk (or edit) number within the file patch.
    pub hunk: Option<usize>,
    /// The next step to take.
    pub hint: Option<String>,
    /// None when every rich part is absent.
    rich: Option<Box<Rich>>,
    /// How the human output lays the message out (not part of the JSON).
    layout: Layout,
    /// The stage error this one was made from (not part of the JSON, nor of equality).
    cause: Option<Cause>,
}

/// How the human output lays an [`Error`] out: decided where the message is written, never
/// by reading the message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Layout {
    /// The message does not name the error's path: the human output writes `PATH: ` first.
    path_unnamed: bool,
    /// The message goes on, below its first line, with the comparison with the nearest text
    /// or the candidates: the human output does not show the structured fields again.
    context_in_message: bool,
}

/// The boxed parts of an [`Error`].
#[derive(Debug, Clone, PartialEq, Default)]
struct Rich {
    /// The lines the hunk expected to find.
    expected: Option<Vec<String>>,
    nearest: Option<Nearest>,
    /// Every place an ambiguous hunk matched.
    candidates: Option<Vec<Candidate>>,
    /// Extra structured data a particular code carries (e.g. the stale file's two hashes, a
    /// kept chip's id, conflicting regions). Keys are documented with the code in the README.
    details: Option<serde_json::Value>,
    /// Files of the missing file's name found elsewhere under the root (`file_not_found`):
    /// the hint shown starts with "did you mean …" naming them.
    elsewhere: Option<Vec<String>>,
    /// A hint that names options, kept as parts: `hint` is its rendering for the front end
    /// that runs ([`Error::set_front_end`]; the command line's until one is set).
    spelled: Option<Hint>,
    /// Where the message names the error's path, when that path is quoted for a terminal.
    message_names: Option<PathSlots>,
    /// Where the hint names the error's path, likewise.
    hint_names: Option<PathSlots>,
}

/// The places (byte offsets) where a text names a path, fixed when the text and the path
/// are joined; the human output writes the path quoted there ([`PathSlots::render`]). Kept
/// only for a path that a terminal shows quoted: any other is shown as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathSlots(Vec<usize>);

impl PathSlots {
    /// Where `text` names `path`, when `path` is shown quoted (None otherwise).
    pub(crate) fn of(text: &str, path: Option<&str>) -> Option<PathSlots> {
        let path = path.filter(|p| !p.is_empty())?;
        if matches!(quote_for_terminal(path), Cow::Borrowed(_)) {
            return None;
        }
        let at: Vec<usize> = text.match_indices(path).map(|(i, _)| i).collect();
        (!at.is_empty()).then_some(PathSlots(at))
    }

    /// `text` for a terminal: `path` quoted at each slot (a slot where `text` does not hold
    /// `path` is passed over), every other control character escaped.
    pub(crate) fn render<'a>(
        slots: Option<&PathSlots>,
        text: &'a str,
        path: Option<&str>,
    ) -> Cow<'a, str> {
        let (Some(PathSlots(at)), Some(path)) = (slots, path) else {
            return escape_for_terminal(text);
        };
        let quoted = quote_for_terminal(path);
        let mut named = String::with_capacity(text.len() + 8);
        let mut from = 0;
        for &i in at {
            if i < from || !text.get(i..).is_some_and(|t| t.starts_with(path)) {
                continue;
            }
            named.push_str(&text[from..i]);
            named.push_str(&quoted);
            from = i + path.len();
        }
        named.push_str(&text[from..]);
        Cow::Owned(escape_for_terminal(&named).into_owned())
    }
}

impl Error {
    /// A new error with only a code and a message; add the rest with the builder methods.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            path: None,
            hunk: None,
            hint: None,
            rich: None,
            layout: Layout::default(),
            cause: None,
        }
    }

    /// A new error about the same failure as `cause` (its code, path, hunk, hint, rich parts
    /// and layout), with a message of its own that says more (a message is made once and
    /// never edited: the wrapper writes a new one); `cause` stays whole as its
    /// [`source`](std::error::Error::source) until the caller names a typed one.
    pub(crate) fn around(cause: &Error, message: String) -> Error {
        let mut out = Error {
            code: cause.code,
            message,
            path: cause.path.clone(),
            hunk: cause.hunk,
            hint: cause.hint.clone(),
            rich: cause.rich.clone(),
            layout: cause.layout,
            cause: None,
        };
        out.name_path();
        out.caused_by(cause.clone())
    }

    /// Sets the typed error this one was made from (its [`std::error::Error::source`]).
    pub fn caused_by(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.cause = Some(Arc::new(cause));
        self
    }

    /// The typed error this one was made from, when it was made from one.
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.cause.as_deref()
    }

    /// Fixes where the message and the hint name the path (see [`PathSlots`]): called
    /// whenever one of the three is set.
    fn name_path(&mut self) {
        let path = self.path.as_deref();
        let message = PathSlots::of(&self.message, path);
        let hint = self.hint.as_deref().and_then(|h| PathSlots::of(h, path));
        if message.is_some() || hint.is_some() || self.rich.is_some() {
            let rich = self.rich_mut();
            rich.message_names = message;
            rich.hint_names = hint;
        }
    }

    /// The message as the human output shows it (SPEC §6): the path at each place the
    /// message names it, quoted as every path is; any other control character escaped, since
    /// a message may name paths it does not carry as fields. The JSON keeps the raw text.
    pub fn terminal_message(&self) -> Cow<'_, str> {
        let slots = self.rich.as_ref().and_then(|r| r.message_names.as_ref());
        PathSlots::render(slots, &self.message, self.path.as_deref())
    }

    /// The hint shown ([`Error::shown_hint`]) as the human output shows it: the files found
    /// elsewhere quoted, and the path quoted where the hint names it, as in
    /// [`Error::terminal_message`].
    pub fn terminal_hint(&self) -> Option<Cow<'_, str>> {
        let shown = self.shown_hint_with(|p| quote_for_terminal(p).into_owned())?;
        let slots = self.rich.as_ref().and_then(|r| r.hint_names.as_ref());
        // The files found elsewhere come first: the hint's slots move past them.
        let before = shown
            .len()
            .saturating_sub(self.hint.as_deref().map_or(0, |h| h.trim_end().len()));
        let slots = slots.map(|PathSlots(at)| PathSlots(at.iter().map(|i| i + before).collect()));
        Some(Cow::Owned(
            PathSlots::render(slots.as_ref(), &shown, self.path.as_deref()).into_owned(),
        ))
    }

    /// Sets the path the error is about; the message names it.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self.layout.path_unnamed = false;
        self.name_path();
        self
    }

    /// Sets the path the error is about, for a message that does not name it (the human
    /// output writes it before the message).
    pub fn with_unnamed_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self.layout.path_unnamed = true;
        self.name_path();
        self
    }

    /// The message already shows, below its first line, the comparison with the nearest
    /// text or the candidates (the locator's refusals).
    pub(crate) fn with_context_in_message(mut self) -> Self {
        self.layout.context_in_message = true;
        self
    }

    /// The human output writes the path before the message (it has one the message does
    /// not name).
    pub(crate) fn path_unnamed(&self) -> bool {
        self.path.is_some() && self.layout.path_unnamed
    }

    /// The message shows the structured context itself (see [`Error::with_context_in_message`]).
    pub(crate) fn context_in_message(&self) -> bool {
        self.layout.context_in_message
    }

    pub fn with_hunk(mut self, hunk: usize) -> Self {
        self.hunk = Some(hunk);
        self
    }

    /// Sets the next step. A [`Hint`] that names options is kept as parts and shown in the
    /// words of the front end that runs ([`Error::set_front_end`]); plain text is shown as is.
    pub fn with_hint(mut self, hint: impl Into<Hint>) -> Self {
        self.set_hint(Some(hint.into()));
        self
    }

    /// Sets (or, with None, clears) the next step (see [`Error::with_hint`]).
    pub fn set_hint(&mut self, hint: Option<Hint>) {
        self.hint = hint.as_ref().map(|h| h.render(FrontEnd::CommandLine));
        let spelled = hint.filter(|h| !h.options().is_empty());
        if spelled.is_some() || self.rich.is_some() {
            self.rich_mut().spelled = spelled;
        }
        self.name_path();
    }

    /// The next step as parts, when it names options (None for a plain one).
    pub fn hint_parts(&self) -> Option<&Hint> {
        self.rich.as_ref()?.spelled.as_ref()
    }

    /// The next step as parts: the one that names options, else the plain text.
    pub fn hint_as_parts(&self) -> Option<Hint> {
        match self.hint_parts() {
            Some(h) => Some(h.clone()),
            None => self.hint.clone().map(Hint::from),
        }
    }

    /// Words the hint (and the messages it names options in) for `front`: a hint kept as
    /// parts is rendered again from them; a plain one stays as it is.
    pub fn set_front_end(&mut self, front: FrontEnd) {
        if let Some(h) = self.hint_parts() {
            let shown = h.render(front);
            // Every step named an option this front end lacks: no hint rather than an empty one.
            self.hint = (!shown.is_empty()).then_some(shown);
            self.name_path();
        }
    }

    /// [`Error::set_front_end`], by value.
    pub fn for_front_end(mut self, front: FrontEnd) -> Self {
        self.set_front_end(front);
        self
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.rich_mut().details = Some(details);
        self
    }

    /// Sets the lines the hunk expected to find.
    pub fn with_expected(mut self, expected: Vec<String>) -> Self {
        self.rich_mut().expected = Some(expected);
        self
    }

    /// Sets (or, with None, clears) the nearest text of the file.
    pub fn with_nearest(mut self, nearest: Option<Nearest>) -> Self {
        self.set_nearest(nearest);
        self
    }

    /// Sets the places an ambiguous hunk matched.
    pub fn with_candidates(mut self, candidates: Vec<Candidate>) -> Self {
        self.rich_mut().candidates = Some(candidates);
        self
    }

    /// The lines the hunk expected to find.
    pub fn expected(&self) -> Option<&[String]> {
        self.rich.as_ref()?.expected.as_deref()
    }

    /// The nearest text of the file to what the hunk expected.
    pub fn nearest(&self) -> Option<&Nearest> {
        self.rich.as_ref()?.nearest.as_ref()
    }

    /// Every place an ambiguous hunk matched.
    pub fn candidates(&self) -> Option<&[Candidate]> {
        self.rich.as_ref()?.candidates.as_deref()
    }

    /// Names files of the missing file's name found elsewhere under the root (none: no
    /// suggestion); the hint shown ([`Error::shown_hint`]) starts with them.
    pub fn with_elsewhere(mut self, found: Vec<String>) -> Self {
        self.set_elsewhere(found);
        self
    }

    /// Sets the files found elsewhere (see [`Error::with_elsewhere`]).
    pub fn set_elsewhere(&mut self, found: Vec<String>) {
        if !found.is_empty() {
            self.rich_mut().elsewhere = Some(found);
        }
    }

    /// Files of the same name found elsewhere ([`Error::with_elsewhere`]).
    pub fn elsewhere(&self) -> Option<&[String]> {
        self.rich.as_ref()?.elsewhere.as_deref()
    }

    /// The hint as shown (the JSON `hint`, the human output's): the files found elsewhere,
    /// when there are any, then the next step.
    pub fn shown_hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        self.shown_hint_with(str::to_string)
    }

    /// [`Error::shown_hint`] with each file found elsewhere written by `path` (the human
    /// output quotes paths as git does; the JSON keeps them raw).
    pub fn shown_hint_with(
        &self,
        path: impl Fn(&str) -> String,
    ) -> Option<std::borrow::Cow<'_, str>> {
        let Some(found) = self.elsewhere() else {
            return self.hint.as_deref().map(std::borrow::Cow::Borrowed);
        };
        let list = found
            .iter()
            .map(|p| format!("`{}`", path(p)))
            .collect::<Vec<_>>()
            .join(", ");
        let hint = self.hint.as_deref().unwrap_or_default();
        let shown = format!("did you mean {list}? {hint}");
        Some(std::borrow::Cow::Owned(shown.trim_end().to_string()))
    }

    /// Extra structured data the code carries.
    pub fn details(&self) -> Option<&serde_json::Value> {
        self.rich.as_ref()?.details.as_ref()
    }

    /// The details, to add keys to in place.
    pub fn details_mut(&mut self) -> Option<&mut serde_json::Value> {
        self.rich.as_mut()?.details.as_mut()
    }

    /// Takes the details out, leaving none.
    pub fn take_details(&mut self) -> Option<serde_json::Value> {
        self.rich.as_mut()?.details.take()
    }

    /// Sets (or, with None, clears) the details.
    pub fn set_details(&mut self, details: Option<serde_json::Value>) {
        if details.is_some() || self.rich.is_some() {
            self.rich_mut().details = details;
        }
    }

    /// Sets (or, with None, clears) the nearest text.
    pub fn set_nearest(&mut self, nearest: Option<Nearest>) {
        if nearest.is_some() || self.rich.is_some() {
            self.rich_mut().nearest = nearest;
        }
    }

    fn rich_mut(&mut self) -> &mut Rich {
        self.rich.get_or_insert_with(Box::default)
    }

    /// The boundary error of a stage's refusal: its code and message, with the path its
    /// message names, its next step and its details, each when it has one. The stages'
    /// `From<…> for Error` conversions go through here and add what is particular to them.
    pub(crate) fn of_stage(
        code: ErrorCode,
        message: String,
        path: Option<impl Into<String>>,
        hint: Option<impl Into<Hint>>,
        details: Option<serde_json::Value>,
    ) -> Self {
        let mut out = Error::new(code, message);
        if let Some(path) = path {
            out = out.with_path(path);
        }
        if let Some(hint) = hint {
            out = out.with_hint(hint);
        }
        out.set_details(details);
        out
    }

    /// An I/O error on `path`, mapped to `permission_denied` or `io_error`.
    pub fn io(path: &str, what: &str, err: &std::io::Error) -> Self {
        // The source keeps the failure's kind and words (and its OS error number).
        Error::new(io_code(err), format!("{what} {path}: {err}"))
            .with_path(path)
            .caused_by(copy_io(err))
    }

    pub fn exit_status(&self) -> u8 {
        self.code.exit_status()
    }
}

/// The serialised view of an [`Error`], borrowed: the field order is the JSON contract.
#[derive(serde::Serialize)]
struct View<'a> {
    code: ErrorCode,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hunk: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nearest: Option<&'a Nearest>,
    #[serde(skip_serializing_if = "Option::is_none")]
    candidates: Option<&'a [Candidate]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a serde_json::Value>,
}

/// Equal when every field reads the same: an emptied box equals no box; the human layout
/// is not compared (the JSON does not carry it).
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.path == other.path
            && self.hunk == other.hunk
            && self.shown_hint() == other.shown_hint()
            && self.expected() == other.expected()
            && self.nearest() == other.nearest()
            && self.candidates() == other.candidates()
            && self.details() == other.details()
    }
}

impl serde::Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        View {
            code: self.code,
            message: &self.message,
            path: self.path.as_deref(),
            hunk: self.hunk,
            expected: self.expected(),
            nearest: self.nearest(),
            candidates: self.candidates(),
            hint: self.shown_hint().as_deref(),
            details: self.details(),
        }
        .serialize(s)
    }
}

/// The deserialised form of an [`Error`], every field flat as in the JSON.
#[derive(serde::Deserialize)]
struct Owned {
    code: ErrorCode,
    message: String,
    path: Option<String>,
    hunk: Option<usize>,
    expected: Option<Vec<String>>,
    nearest: Option<Nearest>,
    candidates: Option<Vec<Candidate>>,
    hint: Option<String>,
    details: Option<serde_json::Value>,
}

impl From<Owned> for Error {
    fn from(o: Owned) -> Self {
        let rich = Rich {
            expected: o.expected,
            nearest: o.nearest,
            candidates: o.candidates,
            details: o.details,
            elsewhere: None,
            spelled: None,
            message_names: None,
            hint_names: None,
        };
        let empty = rich == Rich::default();
        let mut out = Error {
            code: o.code,
            message: o.message,
            path: o.path,
            hunk: o.hunk,
            hint: o.hint,
            rich: (!empty).then(|| Box::new(rich)),
            layout: Layout::default(),
            cause: None,
        };
        out.name_path();
        out
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// The chain of causes: the typed stage error the boundary error was made from, then that
/// error's own source, and so on (an I/O failure ends it).
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// An I/O failure kept in a typed error: shared (so that the error stays `Clone`), equal to
/// another of the same kind and words; its source is the [`std::io::Error`] itself.
#[derive(Debug, Clone)]
pub struct IoFailure(Arc<std::io::Error>);

impl IoFailure {
    /// The failure.
    pub fn io(&self) -> &std::io::Error {
        &self.0
    }

    /// A copy of `err` met by reference: its kind and words, and its OS error number.
    pub(crate) fn copy_of(err: &std::io::Error) -> IoFailure {
        IoFailure(Arc::new(copy_io(err)))
    }

    /// Its stable code: `permission_denied` when the system said so, else `io_error`.
    pub fn code(&self) -> ErrorCode {
        io_code(&self.0)
    }
}

/// A copy of an I/O failure met by reference: its kind and words, and its OS error number.
fn copy_io(err: &std::io::Error) -> std::io::Error {
    match err.raw_os_error() {
        Some(n) => std::io::Error::from_raw_os_error(n),
        None => std::io::Error::new(err.kind(), err.to_string()),
    }
}

/// The stable code of an I/O failure (the one rule [`Error::io`] and every typed I/O
/// refusal share).
fn io_code(err: &std::io::Error) -> ErrorCode {
    if err.kind() == std::io::ErrorKind::PermissionDenied {
        ErrorCode::PermissionDenied
    } else {
        ErrorCode::IoError
    }
}

impl From<std::io::Error> for IoFailure {
    fn from(e: std::io::Error) -> Self {
        IoFailure(Arc::new(e))
    }
}

impl PartialEq for IoFailure {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind() == other.0.kind() && self.0.to_string() == other.0.to_string()
    }
}

impl std::fmt::Display for IoFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for IoFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

/// Checks shared by the stage error types' tests: a pass-through gives back the identical
/// error, and a typed I/O refusal reads as [`Error::io`] wrote it.
#[cfg(test)]
pub(crate) mod stage_checks {
    use super::*;
    use std::error::Error as _;

    /// A failure of another stage, with every part set and an OS error below it.
    pub(crate) fn foreign() -> Error {
        Error::io(
            "a.txt",
            "cannot read",
            &std::io::Error::from_raw_os_error(13),
        )
        .with_hunk(2)
        .with_hint("fix the permissions")
        .with_details(serde_json::json!({"k": 1}))
    }

    /// Each error below `e`, in words.
    pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
        let mut out = vec![];
        let mut at = e.source();
        while let Some(c) = at {
            out.push(c.to_string());
            at = c.source();
        }
        out
    }

    /// `original` carried through `E` (its pass-through) keeps its code and words, and turns
    /// back into the identical error: equal parts, the same JSON and terminal text, and the
    /// original's source chain (no `E` above it).
    pub(crate) fn passes_through<E>(original: &Error, code: impl Fn(&E) -> ErrorCode)
    where
        E: From<Error> + std::fmt::Display,
        Error: From<E>,
    {
        let through = E::from(original.clone());
        assert_eq!(code(&through), original.code);
        assert_eq!(through.to_string(), original.message);
        let back = Error::from(through);
        assert_eq!(&back, original);
        assert_eq!(
            (&back.path, back.hunk, &back.hint, back.details()),
            (
                &original.path,
                original.hunk,
                &original.hint,
                original.details()
            )
        );
        assert_eq!(
            serde_json::to_string(&back).expect("serialises"),
            serde_json::to_string(original).expect("serialises")
        );
        assert_eq!(back.terminal_message(), original.terminal_message());
        assert_eq!(chain(&back), chain(original));
    }

    /// `typed`, a stage's refusal of `what` on `path` made from `failure`, becomes the error
    /// `Error::io` makes of them (equal, the same JSON and terminal text, the same code), with
    /// `typed` first in its chain and the failure, with its OS error number, last.
    pub(crate) fn reads_as_error_io<E>(
        typed: E,
        code: ErrorCode,
        path: &str,
        what: &str,
        failure: &std::io::Error,
    ) where
        E: std::error::Error + Clone + PartialEq + 'static,
        Error: From<E>,
    {
        let e = Error::from(typed.clone());
        let wide = Error::io(path, what, failure);
        assert_eq!(e, wide);
        assert_eq!(code, wide.code);
        assert_eq!(
            serde_json::to_string(&e).expect("serialises"),
            serde_json::to_string(&wide).expect("serialises")
        );
        assert_eq!(e.terminal_message(), wide.terminal_message());
        assert_eq!(e.source().and_then(|s| s.downcast_ref::<E>()), Some(&typed));
        let mut last = e.source();
        while let Some(below) = last.and_then(|s| s.source()) {
            last = Some(below);
        }
        let io = last
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .expect("the I/O failure ends the chain");
        assert_eq!(io.to_string(), failure.to_string());
        assert_eq!(io.raw_os_error(), failure.raw_os_error());
    }
}

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
    fn files_found_elsewhere_lead_the_shown_hint_and_the_json() {
        let e = Error::new(ErrorCode::FileNotFound, "cannot update a.rs: no such file")
            .with_path("a.rs")
            .with_hint("check the path");
        assert_eq!(e.shown_hint().as_deref(), Some("check the path"));
        let found = e
            .clone()
            .with_elsewhere(vec!["src/a.rs".into(), "b/a.rs".into()]);
        assert_eq!(found.hint.as_deref(), Some("check the path"));
        assert_eq!(
            found.elsewhere(),
            Some(&["src/a.rs".to_string(), "b/a.rs".to_string()][..])
        );
        let shown = "did you mean `src/a.rs`, `b/a.rs`? check the path";
        assert_eq!(found.shown_hint().as_deref(), Some(shown));
        let json = serde_json::to_value(&found).expect("serialises");
        assert_eq!(json["hint"], shown);
        let back: Error = serde_json::from_value(json).expect("deserialises");
        assert_eq!(back, found);
        let bare = Error::new(ErrorCode::FileNotFound, "m").with_elsewhere(vec!["x".into()]);
        assert_eq!(bare.shown_hint().as_deref(), Some("did you mean `x`?"));
        assert_eq!(e.clone().with_elsewhere(Vec::new()), e);
        assert_eq!(e.with_elsewhere(Vec::new()).elsewhere(), None);
    }

    #[test]
    fn error_stays_small() {
        // Clippy's `result_large_err` threshold is 128 bytes; the rich parts are boxed.
        assert!(std::mem::size_of::<Error>() < 128);
    }

    #[test]
    fn stage_errors_stay_small() {
        // Every stage's `Result` stays under clippy's `result_large_err` threshold without an
        // allow: rich parts, refusals and their reports are boxed.
        let sizes = [
            (
                "ParseError",
                std::mem::size_of::<crate::parse::ParseError>(),
            ),
            (
                "LocateError",
                std::mem::size_of::<crate::locate::LocateError>(),
            ),
            ("PlanError", std::mem::size_of::<crate::plan::PlanError>()),
            ("TxnError", std::mem::size_of::<crate::txn::TxnError>()),
            (
                "Box<Refusal>",
                std::mem::size_of::<Box<crate::plan::Refusal>>(),
            ),
            (
                "Box<Refused>",
                std::mem::size_of::<Box<crate::pipeline::Refused>>(),
            ),
            #[cfg(feature = "git")]
            ("GitError", std::mem::size_of::<crate::git::GitError>()),
            #[cfg(feature = "git")]
            (
                "AgentError",
                std::mem::size_of::<crate::agent::AgentError>(),
            ),
        ];
        for (name, size) in sizes {
            assert!(size < 128, "{name} is {size} bytes");
        }
    }

    fn rich_error() -> Error {
        let line = |line: usize| NumberedLine {
            line,
            text: format!("l{line}"),
        };
        Error::new(ErrorCode::AmbiguousMatch, "m")
            .with_path("a.txt")
            .with_hunk(2)
            .with_hint("h")
            .with_details(serde_json::json!({ "k": 1 }))
            .with_expected(vec!["x".into()])
            .with_nearest(Some(Nearest {
                start_line: 3,
                lines: vec![line(3)],
                difference: None,
                similarity: 0.5,
            }))
            .with_candidates(vec![Candidate {
                line: 4,
                context: vec![line(4)],
                select: None,
            }])
    }

    #[test]
    fn json_keeps_the_field_order_and_leaves_absent_fields_out() {
        let json = serde_json::to_string(&rich_error()).expect("an error serialises");
        assert_eq!(
            json,
            r#"{"code":"ambiguous_match","message":"m","path":"a.txt","hunk":2,"expected":["x"],"nearest":{"start_line":3,"lines":[{"line":3,"text":"l3"}],"difference":null,"similarity":0.5},"candidates":[{"line":4,"context":[{"line":4,"text":"l4"}]}],"hint":"h","details":{"k":1}}"#
        );
        let bare = Error::new(ErrorCode::Usage, "u");
        let json = serde_json::to_string(&bare).expect("an error serialises");
        assert_eq!(json, r#"{"code":"usage","message":"u"}"#);
    }

    #[test]
    fn json_reads_back_as_the_same_error() {
        for e in [
            rich_error(),
            Error::new(ErrorCode::Usage, "u").with_hint("h"),
        ] {
            let json = serde_json::to_string(&e).expect("an error serialises");
            let back: Error = serde_json::from_str(&json).expect("its own JSON reads back");
            assert_eq!(back, e);
            assert_eq!(back.rich.is_none(), e.rich.is_none(), "{json}");
        }
    }

    #[test]
    fn taking_the_details_leaves_an_equal_bare_error() {
        let mut e = Error::new(ErrorCode::StaleFile, "s").with_details(serde_json::json!(1));
        assert_eq!(e.take_details(), Some(serde_json::json!(1)));
        assert_eq!(e, Error::new(ErrorCode::StaleFile, "s"));
        e.set_details(None);
        assert!(e.details().is_none());
    }

    /// A stage error's chain is visible through the boundary error: the typed error it was
    /// made from, then what that one wraps, down to the operating system's failure.
    #[test]
    fn a_stage_errors_chain_is_the_errors_source() {
        use std::error::Error as _;
        let denied = std::io::Error::from_raw_os_error(13);
        let step = crate::txn::TxnError::io_of("a.txt", "cannot write", &denied);
        let e = Error::from(crate::txn::TxnError::RolledBack {
            cause: Box::new(step.clone()),
        });
        let mut chain = Vec::new();
        let mut at: Option<&(dyn std::error::Error + 'static)> = e.source();
        while let Some(c) = at {
            chain.push(c);
            at = c.source();
        }
        assert_eq!(chain.len(), 4, "{chain:?}");
        assert!(matches!(
            chain[0].downcast_ref::<crate::txn::TxnError>(),
            Some(crate::txn::TxnError::RolledBack { .. })
        ));
        // The cause is whole below the wrapper: its own message, not the wrapper's.
        // (A boxed cause is met as its box.)
        let cause = chain[1]
            .downcast_ref::<Box<crate::txn::TxnError>>()
            .expect("the failed step");
        assert_eq!(**cause, step);
        assert_eq!(cause.to_string(), format!("cannot write a.txt: {denied}"));
        assert_ne!(e.message, cause.to_string());
        assert!(chain[2].downcast_ref::<crate::txn::IoFailure>().is_some());
        let io = chain[3]
            .downcast_ref::<std::io::Error>()
            .expect("the I/O failure");
        assert_eq!(io.raw_os_error(), Some(13));
        assert_eq!(io.to_string(), denied.to_string());
        // Every stage's error is the source of the error made from it.
        let usage = Error::from(crate::usage::UsageError::ZeroWindow);
        assert!(usage
            .source()
            .and_then(|s| s.downcast_ref::<crate::usage::UsageError>())
            .is_some());
        // Not part of the JSON, nor of equality.
        let json = serde_json::to_value(&e).expect("serialises");
        let back: Error = serde_json::from_value(json).expect("reads back");
        assert!(back.source().is_none());
        assert_eq!(back, e);
    }

    /// What the human output printed when it searched the message for the path at render
    /// time (before the places were fixed with the message): the reference.
    fn searched(text: &str, path: Option<&str>) -> String {
        if let Some(raw) = path.filter(|p| !p.is_empty() && text.contains(*p)) {
            if let Cow::Owned(quoted) = quote_for_terminal(raw) {
                return escape_for_terminal(&text.replace(raw, &quoted)).into_owned();
            }
        }
        escape_for_terminal(text).into_owned()
    }

    #[test]
    fn paths_are_quoted_where_the_message_names_them_as_before() {
        let tab = "dir/a\tb.txt";
        let cases = [
            Error::new(ErrorCode::StaleFile, format!("{tab} changed; {tab} again"))
                .with_path(tab)
                .with_hint(format!("read {tab} again")),
            Error::new(ErrorCode::FileNotFound, format!("cannot update {tab}"))
                .with_hint(format!("check {tab}"))
                .with_path(tab)
                .with_elsewhere(vec!["x/a\tb.txt".into(), "plain.txt".into()]),
            Error::new(ErrorCode::IoError, "no path named\x1b[2J").with_unnamed_path(tab),
            Error::new(ErrorCode::IoError, "plain a.txt").with_path("a.txt"),
            Error::io(tab, "cannot read", &std::io::Error::other("gone")),
            Error::from(crate::txn::TxnError::RolledBack {
                cause: Box::new(
                    Error::new(ErrorCode::IoError, format!("{tab}: x"))
                        .with_path(tab)
                        .into(),
                ),
            }),
            serde_json::from_value(serde_json::json!({
                "code": "io_error", "message": format!("{tab} read back"), "path": tab,
            }))
            .expect("reads"),
        ];
        for e in &cases {
            assert_eq!(
                e.terminal_message(),
                searched(&e.message, e.path.as_deref()),
                "{e:?}"
            );
            let shown = e.shown_hint_with(|p| quote_for_terminal(p).into_owned());
            assert_eq!(
                e.terminal_hint().map(Cow::into_owned),
                shown.map(|h| searched(&h, e.path.as_deref())),
                "{e:?}"
            );
        }
        assert!(cases[0]
            .terminal_message()
            .contains(r#""dir/a\tb.txt" changed"#));
        let w = crate::report::Warning::new(
            crate::report::WarningCode::Rebased,
            format!("{tab} was merged"),
        )
        .with_path(tab);
        assert_eq!(w.terminal_message(), searched(&w.message, Some(tab)));
    }

    #[test]
    fn exit_statuses_follow_spec() {
        assert_eq!(ErrorCode::Usage.exit_status(), 2);
        assert_eq!(ErrorCode::RollbackFailed.exit_status(), 3);
        assert_eq!(ErrorCode::ContextNotFound.exit_status(), 1);
    }
}
