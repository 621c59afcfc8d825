//! What the CLI prints for `range`, `check-balance` and `read --around`: serde structs for
//! `--json` and plain-text rendering for people.
//!
//! Stage: structure signals, output. Pure; builds strings and structs, never prints and
//! never reads a file (the CLI does both).

use super::range::{range, Range, RangeError};
use super::{Balance, Kind, Lang};
use crate::error::NumberedLine;
use crate::quote::quote_for_terminal;

/// The `range` result for one file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct RangeReport {
    pub path: String,
    #[serde(flatten)]
    pub range: Range,
}

impl RangeReport {
    /// One line, `path:start-end: kind (lang): opening line`, plus notes when the language
    /// was guessed or the file does not balance.
    pub fn render(&self) -> String {
        let r = &self.range;
        let mut out = format!(
            "{}:{}-{}: {} ({}): {}\n",
            quote_for_terminal(&self.path),
            r.start_line,
            r.end_line,
            r.kind,
            r.lang,
            r.opening_line.trim()
        );
        if r.fallback {
            out.push_str("note: unknown language: the range was found by braces\n");
        }
        if let Some(w) = &r.warning {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}

/// The balance of one file, for `check-balance`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct FileBalance {
    pub path: String,
    pub lang: Lang,
    #[serde(flatten)]
    pub balance: Balance,
}

impl FileBalance {
    /// The balance of the file `path` in `lang` (what [`check_balance`](super::check_balance)
    /// found).
    pub fn new(path: impl Into<String>, lang: Lang, balance: Balance) -> Self {
        FileBalance {
            path: path.into(),
            lang,
            balance,
        }
    }

    /// `path: balanced (lang)`, `path:line:col: unbalanced: …` or `path: not checked: …`.
    pub fn render(&self) -> String {
        let path = quote_for_terminal(&self.path);
        match &self.balance {
            Balance::Balanced => format!("{path}: balanced ({})\n", self.lang),
            Balance::Unbalanced { problem } => {
                let mut out = format!(
                    "{path}:{}:{}: unbalanced: {problem}\n",
                    problem.line, problem.column
                );
                if let Some(hint) = &problem.hint {
                    out.push_str(&format!("  hint: {hint}\n"));
                }
                out
            }
            Balance::NotChecked { reason } => {
                format!("{path}: not checked: {reason}\n")
            }
        }
    }
}

/// The `check-balance` result for every file given: `ok` when none is unbalanced (files
/// that were not checked do not make it fail).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct BalanceReport {
    pub ok: bool,
    pub files: Vec<FileBalance>,
}

impl BalanceReport {
    /// Build the report; `ok` is computed.
    pub fn new(files: Vec<FileBalance>) -> Self {
        let ok = !files
            .iter()
            .any(|f| matches!(f.balance, Balance::Unbalanced { .. }));
        BalanceReport { ok, files }
    }

    /// One line per file.
    pub fn render(&self) -> String {
        self.files.iter().map(FileBalance::render).collect()
    }
}

/// `read --around N`: the function (else block, else element) enclosing line N, with its
/// lines numbered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Around {
    pub range: Range,
    pub lines: Vec<NumberedLine>,
}

/// The enclosing range of `line` (as [`range`] with no kind) and its lines.
///
/// ```
/// use apply_patch::structure::{around, Lang};
/// let a = around("def f():\n    return 1\n", 2, Lang::Python).unwrap();
/// assert_eq!(a.render(), "     1\tdef f():\n     2\t    return 1\n");
/// ```
pub fn around(text: &str, line: usize, lang: Lang) -> Result<Around, RangeError> {
    let range = range(text, line, None::<Kind>, lang)?;
    let lines = text
        .split('\n')
        .enumerate()
        .skip(range.start_line - 1)
        .take(range.end_line + 1 - range.start_line)
        .map(|(i, l)| NumberedLine {
            line: i + 1,
            text: l.strip_suffix('\r').unwrap_or(l).to_string(),
        })
        .collect();
    Ok(Around { range, lines })
}

impl Around {
    /// Lines as `     N\ttext` (the number right-aligned in six columns, then a tab).
    #[cfg_attr(not(feature = "internals"), allow(dead_code))] // tests only
    pub fn render(&self) -> String {
        self.lines
            .iter()
            .map(|l| format!("{:>6}\t{}\n", l.line, l.text))
            .collect()
    }
}
