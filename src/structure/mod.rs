//! Structure signals without a compiler or language server: the function, block or element
//! enclosing a line ([`range`]), and whether brackets, tags and quotes balance
//! ([`check_balance`], and around an apply, [`edit_balance`]).
//!
//! Stage: structure signals, beside the pipeline (the planner asks them after a file's new
//! bytes are built). Pure: no I/O, no panics on any input, linear in the text's size. These
//! are heuristics for a warning (`unbalanced_edit`) and for showing context, never a parse:
//! they must not refuse anything on their own.
//!
//! How: one lexer per language family (`c_like`, `python`, `shell`, `markup`, `yaml`) turns
//! the text into a *mask* — strings and comments blanked, offsets kept — plus markup tags and
//! the first unclosed string or comment; one matcher (`balance`) matches brackets and tags
//! over it; `range` and `indent` find enclosing ranges.

mod balance;
mod c_like;
mod indent;
mod lang;
mod markup;
mod output;
mod python;
mod range;
mod scan;
mod shell;
mod yaml;

pub use lang::Lang;
pub use output::{around, BalanceReport, FileBalance, RangeReport};
pub use range::{range, Kind, Range};
pub use {output::Around, range::RangeError};

use lang::Family;
use scan::{line_col, line_starts, RawProblem, Scan};

/// Texts larger than this are not checked (`Balance::NotChecked`) and have no ranges: a
/// generated or vendored file of that size is not hand-edited, and the check must stay cheap
/// around every apply.
pub const MAX_CHECK_BYTES: usize = 16 * 1024 * 1024;

/// What kind of problem unbalances a text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemKind {
    /// Something opened (a bracket, tag, string or comment) is still open at the end of the
    /// file (or, for a one-line string, of the line).
    Unclosed,
    /// A closer that does not match the innermost open thing.
    Mismatched,
    /// A closer with nothing open.
    UnexpectedClose,
}

/// Where something was opened.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Opened {
    /// The opener: `{`, `(`, `<div>`, `"`, `/*`, `r#"`, `<<EOF`…
    pub text: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
}

/// The first problem of an unbalanced text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Problem {
    pub kind: ProblemKind,
    /// 1-based line where it was noticed.
    pub line: usize,
    /// 1-based column (in characters) where it was noticed.
    pub column: usize,
    /// What was found there: a closer (`)`, `</div>`), `end of line` or `end of file`.
    pub found: String,
    /// What was open (none for an unexpected closer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open: Option<Opened>,
    /// Where the fix probably belongs, when indentation says more than the brackets (a `{`
    /// left open at the end of the file, and a `}` earlier that closes a `{` indented
    /// differently).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// A delimiter in backquotes (in single quotes when it holds a backquote itself).
fn quoted(delimiter: &str) -> String {
    if delimiter.contains('`') {
        format!("'{delimiter}'")
    } else {
        format!("`{delimiter}`")
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (line, col) = (self.line, self.column);
        match (&self.kind, &self.open) {
            (ProblemKind::Unclosed, Some(o)) => write!(
                f,
                "{} opened at line {}, column {} is not closed at the {} (line {line}, column {col})",
                quoted(&o.text),
                o.line,
                o.column,
                self.found
            ),
            (ProblemKind::Mismatched, Some(o)) => write!(
                f,
                "{} at line {line}, column {col} does not close {} opened at line {}, column {}",
                quoted(&self.found),
                quoted(&o.text),
                o.line,
                o.column
            ),
            _ => write!(
                f,
                "{} at line {line}, column {col} closes nothing",
                quoted(&self.found)
            ),
        }
    }
}

/// Whether a text balances.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Balance {
    /// Every bracket, tag, string and comment that opens also closes, in order.
    Balanced,
    /// The first problem, in reading order.
    Unbalanced { problem: Problem },
    /// The text was not looked at: unknown language, too large, binary, too deeply nested.
    NotChecked { reason: String },
}

impl Balance {
    /// True only for `Balanced`.
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // tests only
    pub fn is_balanced(&self) -> bool {
        matches!(self, Balance::Balanced)
    }
}

/// Do the brackets (`()`, `[]`, `{}`), markup tags and quotes of `text` balance, ignoring
/// what is inside strings and comments (as `lang` writes them)? The first problem is
/// reported with its line and column, what was open and where.
///
/// ```
/// use apply_patch::structure::{check_balance, Balance, Lang};
/// assert_eq!(check_balance("let s = \"}\"; // {\n", Lang::Rust), Balance::Balanced);
/// let Balance::Unbalanced { problem } = check_balance("fn f() {\n", Lang::Rust) else {
///     panic!("a missing brace is a problem");
/// };
/// assert_eq!(problem.to_string(),
///     "`{` opened at line 1, column 8 is not closed at the end of file (line 2, column 1)");
/// ```
pub fn check_balance(text: &str, lang: Lang) -> Balance {
    check_bytes(text.as_bytes(), lang)
}

/// Why a text is not looked at, if it is not: too large or binary.
pub(crate) fn not_checked_reason(bytes: &[u8]) -> Option<String> {
    if bytes.len() > MAX_CHECK_BYTES {
        return Some(format!(
            "larger than {} MiB",
            MAX_CHECK_BYTES / (1024 * 1024)
        ));
    }
    if bytes[..bytes.len().min(8000)].contains(&0) {
        return Some("binary (it holds a NUL byte)".to_string());
    }
    None
}

/// Why a file of an unknown language is not checked.
fn unknown_language() -> String {
    "unknown language (give one with --lang)".to_string()
}

fn check_bytes(bytes: &[u8], lang: Lang) -> Balance {
    if lang == Lang::Unknown {
        return Balance::NotChecked {
            reason: unknown_language(),
        };
    }
    if let Some(reason) = not_checked_reason(bytes) {
        return Balance::NotChecked { reason };
    }
    let bytes = bytes.strip_prefix(crate::text::BOM).unwrap_or(bytes);
    let scan = lex(bytes, lang);
    if let Some(reason) = scan.gave_up {
        return Balance::NotChecked { reason };
    }
    let matched = balance::match_all(bytes, &scan, lang, false);
    match matched.problem {
        Some(raw) => {
            let mut problem = to_problem(bytes, &raw);
            problem.hint = missing_brace_hint(bytes, &problem, matched.suspect);
            Balance::Unbalanced { problem }
        }
        None => Balance::Balanced,
    }
}

/// For a `{` left open at the end of the file: the first `}` that closes a `{` indented
/// differently is probably where a `}` is missing.
fn missing_brace_hint(
    text: &[u8],
    problem: &Problem,
    suspect: Option<(usize, usize)>,
) -> Option<String> {
    let (close, open) = suspect?;
    let open_brace = problem.open.as_ref().is_some_and(|o| o.text == "{");
    if problem.kind != ProblemKind::Unclosed || !open_brace {
        return None;
    }
    let starts = line_starts(text);
    let (close_line, _) = line_col(text, &starts, close);
    let (open_line, _) = line_col(text, &starts, open);
    Some(format!(
        "a `}}` may be missing before line {close_line}: the `}}` there closes the `{{` of line {open_line}, which is indented differently"
    ))
}

/// Lex `text` with its language family's lexer (unknown languages: the brace rules).
pub(crate) fn lex(text: &[u8], lang: Lang) -> Scan {
    match lang.family() {
        Family::CLike | Family::None => c_like::lex(text, lang),
        Family::Python => python::lex(text),
        Family::Shell => shell::lex(text),
        Family::Markup => markup::lex(text, lang),
        Family::Yaml => yaml::lex(text),
    }
}

/// Turn byte offsets into lines and columns.
pub(crate) fn to_problem(text: &[u8], raw: &RawProblem) -> Problem {
    let starts = line_starts(text);
    let (line, column) = line_col(text, &starts, raw.at);
    let open = raw.open.as_ref().map(|(what, at)| {
        let (line, column) = line_col(text, &starts, *at);
        Opened {
            text: what.clone(),
            line,
            column,
        }
    });
    Problem {
        kind: raw.kind,
        line,
        column,
        found: raw.found.clone(),
        open,
        hint: None,
    }
}

/// What an edit did to a file's balance.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EditBalance {
    /// Not checked: unknown language, too large, binary, or not UTF-8.
    NotChecked { reason: String },
    /// The file was unbalanced before the edit: the edit is not blamed.
    AlreadyUnbalanced { problem: Problem },
    /// Balanced before and after (also: a new file that balances).
    StillBalanced,
    /// Balanced before, not after: the problem's position is in the new file.
    NewlyUnbalanced { problem: Problem },
}

/// Check a file's balance before and after an edit, cheaply: the old text is checked first
/// (an unbalanced one is not blamed, and the new one is then not read), an unchanged text is
/// read once, and the new one is not asked for its bytes (a recipe not joined) when the
/// old one decides (too large, or a language without a check). `before` is empty for a new
/// file.
///
/// ```
/// use apply_patch::structure::{edit_balance, EditBalance};
/// let before = b"fn f() {\n    a();\n}\n";
/// let after = b"fn f() {\n    a(;\n}\n";
/// let EditBalance::NewlyUnbalanced { problem } = edit_balance("src/f.rs", before, after) else {
///     panic!("the edit broke the parentheses");
/// };
/// assert_eq!((problem.line, problem.column, problem.found.as_str()), (3, 1, "}"));
/// assert_eq!(problem.open.map(|o| (o.text, o.line, o.column)), Some(("(".into(), 2, 6)));
/// ```
pub fn edit_balance<A>(path: &str, before: &[u8], after: &A) -> EditBalance
where
    A: AsRef<[u8]> + ?Sized,
{
    let not_utf8 = || EditBalance::NotChecked {
        reason: "not UTF-8 text".to_string(),
    };
    let lang = match checkable(path, before) {
        Ok(lang) => lang,
        Err(reason) => return EditBalance::NotChecked { reason },
    };
    let after = after.as_ref();
    if std::str::from_utf8(before).is_err() || std::str::from_utf8(after).is_err() {
        return not_utf8();
    }
    match check_bytes(before, lang) {
        Balance::NotChecked { reason } => return EditBalance::NotChecked { reason },
        Balance::Unbalanced { problem } => return EditBalance::AlreadyUnbalanced { problem },
        Balance::Balanced if before == after => return EditBalance::StillBalanced,
        Balance::Balanced => {}
    }
    match check_bytes(after, lang) {
        Balance::Balanced => EditBalance::StillBalanced,
        Balance::Unbalanced { problem } => EditBalance::NewlyUnbalanced { problem },
        Balance::NotChecked { reason } => EditBalance::NotChecked { reason },
    }
}

/// The language to check an edit of `path` in, or why it is not checked: an old text too
/// large to check, or no check for the language, decides before the new text is asked for
/// its bytes (a recipe not joined) and before megabytes of UTF-8 are validated for nothing.
fn checkable(path: &str, before: &[u8]) -> Result<Lang, String> {
    if let Some(reason) = not_checked_reason(before).filter(|_| before.len() > MAX_CHECK_BYTES) {
        return Err(reason);
    }
    match Lang::from_path(path) {
        Lang::Unknown => Err(unknown_language()),
        lang => Ok(lang),
    }
}

/// [`edit_balance`]'s answer when it is [`EditBalance::NewlyUnbalanced`], else `None`, with
/// the new text checked first: when it balances (the common case) the edit cannot have
/// introduced a problem whatever the old text was, so the old one is not lexed at all — half
/// the work of an apply's `unbalanced_edit` warning, which is all this answer is for. (An
/// `--strict-balance` report also says what the old text was: it asks [`edit_balance`].)
pub fn edit_introduced_problem<A>(path: &str, before: &[u8], after: &A) -> Option<EditBalance>
where
    A: AsRef<[u8]> + ?Sized,
{
    let lang = checkable(path, before).ok()?;
    let after = after.as_ref();
    if before == after || std::str::from_utf8(after).is_err() {
        return None;
    }
    let Balance::Unbalanced { problem } = check_bytes(after, lang) else {
        return None;
    };
    let old_balanced = std::str::from_utf8(before).is_ok()
        && matches!(check_bytes(before, lang), Balance::Balanced);
    old_balanced.then_some(EditBalance::NewlyUnbalanced { problem })
}

impl EditBalance {
    /// The problem the edit introduced, if it introduced one.
    pub fn new_problem(&self) -> Option<&Problem> {
        match self {
            EditBalance::NewlyUnbalanced { problem } => Some(problem),
            _ => None,
        }
    }

    /// The message of the `unbalanced_edit` warning (SPEC §8), when the edit unbalanced the
    /// file (the report makes the warning: `report::Warning::unbalanced_edit`).
    ///
    /// ```
    /// use apply_patch::structure::edit_balance;
    /// let m = edit_balance("a.py", b"f(1)\n", b"f(1\n").warning_message().unwrap();
    /// assert_eq!(m, "the edit leaves the file unbalanced: `(` opened at line 1, \
    ///     column 2 is not closed at the end of file (line 2, column 1)");
    /// ```
    pub fn warning_message(&self) -> Option<String> {
        let problem = self.new_problem()?;
        let mut message = format!("the edit leaves the file unbalanced: {problem}");
        if let Some(hint) = &problem.hint {
            message.push_str(&format!(" ({hint})"));
        }
        Some(message)
    }

    /// The `unbalanced_edit` error for `--strict-balance`, when the edit unbalanced `path`;
    /// `details` holds the problem (`kind`, `line`, `column`, `found`, `open`); `hunk` is the
    /// 1-based hunk to blame, when one is.
    pub fn to_error(&self, path: &str, hunk: Option<usize>) -> Option<crate::Error> {
        let problem = self.new_problem()?.clone();
        Some(
            UnbalancedError {
                path: path.to_string(),
                hunk,
                problem,
            }
            .into(),
        )
    }
}

/// `--strict-balance`: the edit left `path` unbalanced (`unbalanced_edit`). The message, the
/// hint (the problem's own, else how to fix the patch) and the details (the problem) are
/// written once, when it becomes the boundary [`crate::Error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{path}: {}the edit leaves the file unbalanced: {problem}",
    hunk.map(|h| format!("hunk {h}: ")).unwrap_or_default()
)]
#[non_exhaustive]
pub struct UnbalancedError {
    pub path: String,
    /// The 1-based hunk to blame, when one is.
    pub hunk: Option<usize>,
    /// The first problem the edit made.
    pub problem: Problem,
}

impl UnbalancedError {
    /// The stable error code: `unbalanced_edit`.
    pub fn code(&self) -> crate::ErrorCode {
        crate::ErrorCode::UnbalancedEdit
    }
}

impl From<UnbalancedError> for crate::Error {
    fn from(err: UnbalancedError) -> crate::Error {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: UnbalancedError) -> crate::Error {
    let hint = match err.problem.hint.clone() {
        Some(h) => crate::spelling::Hint::from(h),
        None => crate::spelling::Hint::new()
            .text(
                "fix the patch so that every bracket, tag and quote it opens is closed, or \
                 apply ",
            )
            .opt(
                crate::spelling::Opt::StrictBalance,
                crate::spelling::Value::Off,
            ),
    };
    let mut out = crate::Error::new(err.code(), err.to_string())
        .with_path(&err.path)
        .with_hint(hint);
    if let Some(hunk) = err.hunk {
        out = out.with_hunk(hunk);
    }
    out.set_details(serde_json::to_value(&err.problem).ok());
    out
}

#[cfg(test)]
mod tests;
