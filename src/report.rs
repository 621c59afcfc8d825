//! Stage: report. The outcome of a run as data (the JSON object of SPEC §8) and its renderings
//! for humans (plain or coloured) and for Codex's `apply_patch` drop-in.
//!
//! This module never prints and never touches the disk: the command line decides where the
//! strings go. Everything here is deterministic (no timestamps, stable order).

use std::fmt::Write as _;

use crate::content::Content;
use crate::error::Error;
pub(crate) use crate::hash::hex;
use crate::locate::Level;
use crate::model::{FileOp, Mode};
use crate::quote::{escape_for_terminal, quote_for_terminal};
pub use crate::risk::{Factor as RiskFactor, Risk};

/// The result of one run: SPEC §8's JSON object.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Report {
    /// True when the patch applied (or, with `--check`, would apply).
    pub ok: bool,
    /// What was touched (on failure: what would have been), in patch order.
    pub files: Vec<FileReport>,
    pub warnings: Vec<Warning>,
    /// The resulting unified diff, with `--diff`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why the run was refused; `null` on success.
    pub error: Option<Error>,
    /// `--check`: nothing was written. Not part of the JSON object.
    #[serde(skip)]
    pub checked_only: bool,
}

/// One file of the report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct FileReport {
    /// Root-relative path after the operation (the new path of a rename or copy).
    pub path: String,
    /// The source of a rename or copy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub op: FileOp,
    /// SHA-256 (hex) of the file's bytes before, when it existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_sha256: Option<String>,
    /// SHA-256 (hex) of the file's bytes after, when it exists afterwards. In a plan, a
    /// large edited file's is not taken yet (the transaction takes it while it writes the
    /// file); every [`Report`] shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_sha256: Option<String>,
    /// The old and new contents while their SHA-256 is not taken yet: whoever needs it
    /// first takes it (another thread while the plan is made, the transaction while it
    /// writes); the [`Report`] shows it.
    #[serde(skip)]
    old_content: Option<Content>,
    #[serde(skip)]
    new_content: Option<Content>,
    pub hunks: Vec<HunkReport>,
    /// The edited region with ±3 lines of context, numbered as in the new file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
    /// Lines inserted (human summary only).
    #[serde(skip)]
    pub added: usize,
    /// Lines deleted (human summary only).
    #[serde(skip)]
    pub removed: usize,
    /// The new git mode when the patch changes it (human summary only).
    #[serde(skip)]
    pub new_mode: Option<Mode>,
    /// The content changed by a binary patch (human summary only: no line counts).
    #[serde(skip)]
    pub binary: bool,
    /// With `--strict-balance` only: what the balance check found for this text file
    /// (`still_balanced`, `already_unbalanced`, `not_checked` with its reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balance: Option<crate::structure::EditBalance>,
}

impl FileReport {
    /// A report entry with no hunks, hashes or snippet yet.
    pub fn new(op: FileOp, path: impl Into<String>) -> Self {
        FileReport {
            path: path.into(),
            old_path: None,
            op,
            old_sha256: None,
            new_sha256: None,
            old_content: None,
            new_content: None,
            hunks: Vec::new(),
            snippet: None,
            added: 0,
            removed: 0,
            new_mode: None,
            binary: false,
            balance: None,
        }
    }

    /// The file's old content: its SHA-256 now when it is known, else when the report is
    /// made.
    pub(crate) fn set_old_content(&mut self, content: &Content) {
        (self.old_sha256, self.old_content) = pending_hash(content);
    }

    /// The file's new content: its SHA-256 now when it is known, else when the report is
    /// made (by then the transaction has taken it while writing the content).
    pub(crate) fn set_new_content(&mut self, content: &Content) {
        (self.new_sha256, self.new_content) = pending_hash(content);
    }

    /// `old_sha256` and `new_sha256` from the contents set by [`Self::set_old_content`] and
    /// [`Self::set_new_content`].
    fn settle(&mut self) {
        for (sha256, content) in [
            (&mut self.old_sha256, &mut self.old_content),
            (&mut self.new_sha256, &mut self.new_content),
        ] {
            if let Some(content) = content.take() {
                *sha256 = Some(hex(&content.sha256()));
                let size = content.len();
                crate::release::release(content, size);
            }
        }
    }
}

/// A content's hash in hex when it is known, else the content to take it from later.
fn pending_hash(content: &Content) -> (Option<String>, Option<Content>) {
    match content.known_sha256() {
        Some(sha256) => (Some(hex(&sha256)), None),
        None => (None, Some(content.clone())),
    }
}

/// Where one hunk went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct HunkReport {
    /// 1-based hunk (or edit) number within its file patch.
    pub hunk: usize,
    /// 1-based first line of the old side in the original file; for a pure insertion the
    /// line it was inserted after (0: at the top).
    pub line: usize,
    pub level: Level,
    /// Context lines fuzz ignored, both ends together (SPEC §5 "Fuzz"); 0 when none.
    pub fuzz: usize,
    /// Signed distance from the drift-adjusted explicit hint; `null` without one.
    pub offset: Option<isize>,
}

/// Lines of the new file around the edits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Snippet {
    /// 1-based number (in the new file) of `lines[0]`.
    pub start_line: usize,
    pub lines: Vec<String>,
}

/// Stable warning codes (SPEC §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningCode {
    FuzzyMatch,
    /// Outer context lines of a hunk were ignored to place it (SPEC §5 "Fuzz").
    Fuzz,
    Offset,
    AlreadyApplied,
    BaseMismatch,
    UnbalancedEdit,
    Recovered,
    /// A clean-up step after the commit point failed (the change itself is in place).
    Cleanup,
    /// `--3way` merged a file from its base blob (git integration).
    Merged,
    // agent (issue 6): `--rebase` merged a stale Base; the MCP server saw a file change
    // since the session read it.
    Rebased,
    ChangedSinceRead,
    /// Another program changed a path right after the commit wrote it; its edit was kept.
    LaterEdit,
    /// The git index could not be read; a plain apply went on without it (git integration).
    IndexUnreadable,
}

impl WarningCode {
    /// The stable string code.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::FuzzyMatch => "fuzzy_match",
            WarningCode::Fuzz => "fuzz",
            WarningCode::Offset => "offset",
            WarningCode::AlreadyApplied => "already_applied",
            WarningCode::BaseMismatch => "base_mismatch",
            WarningCode::UnbalancedEdit => "unbalanced_edit",
            WarningCode::Recovered => "recovered",
            WarningCode::Cleanup => "cleanup",
            WarningCode::Merged => "merged",
            WarningCode::Rebased => "rebased",
            WarningCode::ChangedSinceRead => "changed_since_read",
            WarningCode::LaterEdit => "later_edit",
            WarningCode::IndexUnreadable => "index_unreadable",
        }
    }
}

/// Something the user should know about a run that still succeeded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Warning {
    pub code: WarningCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hunk: Option<usize>,
    /// Where the message names the path, when a terminal shows that path quoted (fixed in
    /// [`Warning::with_path`]; not part of the JSON).
    #[serde(skip)]
    names: Option<crate::error::PathSlots>,
}

impl Warning {
    /// The `unbalanced_edit` warning for `path`, when the edit unbalanced it.
    pub fn unbalanced_edit(path: &str, balance: &crate::structure::EditBalance) -> Option<Self> {
        let message = balance.warning_message()?;
        Some(Warning::new(WarningCode::UnbalancedEdit, message).with_path(path))
    }

    pub fn new(code: WarningCode, message: impl Into<String>) -> Self {
        Warning {
            code,
            message: message.into(),
            path: None,
            hunk: None,
            names: None,
        }
    }

    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self.names = crate::error::PathSlots::of(&self.message, self.path.as_deref());
        self
    }

    /// The message as the human output shows it: the path quoted where the message names
    /// it, any other control character escaped (as [`Error::terminal_message`]).
    pub fn terminal_message(&self) -> std::borrow::Cow<'_, str> {
        crate::error::PathSlots::render(self.names.as_ref(), &self.message, self.path.as_deref())
    }

    pub fn with_hunk(mut self, hunk: usize) -> Self {
        self.hunk = Some(hunk);
        self
    }
}

impl Report {
    /// A successful report.
    pub fn success(mut files: Vec<FileReport>, warnings: Vec<Warning>) -> Self {
        files.iter_mut().for_each(FileReport::settle);
        Report {
            ok: true,
            files,
            warnings,
            diff: None,
            error: None,
            checked_only: false,
        }
    }

    /// A refusal: `files` lists what would have been touched.
    pub fn failure(error: Error, mut files: Vec<FileReport>, warnings: Vec<Warning>) -> Self {
        files.iter_mut().for_each(FileReport::settle);
        Report {
            ok: false,
            files,
            warnings,
            diff: None,
            error: Some(error),
            checked_only: false,
        }
    }

    /// SPEC §8 exit status: 0 applied, else the error code's status.
    pub fn exit_status(&self) -> u8 {
        match &self.error {
            None => 0,
            Some(e) => e.exit_status(),
        }
    }

    /// The JSON object, pretty-printed, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self)
            .expect("a report serialises because every field is plain data");
        s.push('\n');
        s
    }

    /// Human output: (stdout, stderr). Stdout holds one line per file (and the diff with
    /// `--diff`); stderr the warnings and the error.
    pub fn render_human(&self, style: Style) -> (String, String) {
        self.render_human_with(style, false)
    }

    /// As [`Self::render_human`], with a line under each file for each hunk: where it went,
    /// at which level, how far from its hint (the command line's `-v`).
    pub fn render_human_verbose(&self, style: Style) -> (String, String) {
        self.render_human_with(style, true)
    }

    fn render_human_with(&self, style: Style, verbose: bool) -> (String, String) {
        let mut out = String::new();
        let mut err = String::new();
        // An entirely applied patch is a no-op: its files are listed, but as already there.
        let noop = self
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::AlreadyApplied);
        if self.ok {
            for f in &self.files {
                if noop {
                    out.push_str(&noop_line(f, style));
                } else {
                    out.push_str(&file_line(f, style));
                }
                out.push('\n');
                if verbose {
                    out.push_str(&hunk_lines(f));
                }
            }
            if let Some(diff) = &self.diff {
                out.push_str(diff);
            }
        }
        for w in &self.warnings {
            err.push_str(&warning_text(w, style));
        }
        if let Some(e) = &self.error {
            err.push_str(&error_text(e, style));
        } else if self.checked_only {
            err.push_str("check: the patch applies cleanly; nothing was written\n");
        }
        (out, err)
    }

    /// Output of Codex's `apply_patch` command: (stdout, stderr).
    pub fn render_codex(&self) -> (String, String) {
        if let Some(e) = &self.error {
            return (String::new(), error_text(e, Style::Plain));
        }
        let mut out = String::from("Success. Updated the following files:\n");
        for f in &self.files {
            let letter = match f.op {
                FileOp::Add | FileOp::Copy => 'A',
                FileOp::Delete => 'D',
                FileOp::Modify | FileOp::Rename | FileOp::Mode => 'M',
            };
            let _ = writeln!(out, "{letter} {}", quote_for_terminal(&f.path));
        }
        let mut err = String::new();
        for w in &self.warnings {
            err.push_str(&warning_text(w, Style::Plain));
        }
        (out, err)
    }
}

/// Whether to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Style {
    Plain,
    Color,
}

impl Style {
    /// Colour only on a terminal, never with `NO_COLOR` set to anything non-empty.
    pub fn detect(is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> Style {
        let no_color = no_color.is_some_and(|v| !v.is_empty());
        if is_terminal && !no_color {
            Style::Color
        } else {
            Style::Plain
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        match self {
            Style::Plain => text.to_string(),
            Style::Color => format!("\x1b[{code}m{text}\x1b[0m"),
        }
    }
}

/// A file of a no-op run: its letter and path, and that nothing was written.
fn noop_line(f: &FileReport, style: Style) -> String {
    let line = file_line(f, style);
    let head: Vec<&str> = line.splitn(2, ' ').collect();
    let path = match f.op {
        FileOp::Rename | FileOp::Copy => format!(
            "{} -> {}",
            quote_for_terminal(f.old_path.as_deref().unwrap_or("")),
            quote_for_terminal(&f.path)
        ),
        _ => quote_for_terminal(&f.path).into_owned(),
    };
    format!("{} {path} (already there; nothing written)", head[0])
}

/// `-v`: one line per hunk of a file.
fn hunk_lines(f: &FileReport) -> String {
    let mut s = String::new();
    for h in &f.hunks {
        let offset = match h.offset {
            Some(0) | None => String::new(),
            Some(n) => format!(", {n:+} lines from its hint"),
        };
        let fuzz = match h.fuzz {
            0 => String::new(),
            1 => ", fuzz 1: 1 context line ignored".to_string(),
            n => format!(", fuzz {n}: {n} context lines ignored"),
        };
        let _ = writeln!(
            s,
            "  hunk {} at line {} ({}{fuzz}{offset})",
            h.hunk,
            h.line,
            h.level.as_str()
        );
    }
    s
}

fn file_line(f: &FileReport, style: Style) -> String {
    let counts = if f.binary {
        "binary".to_string()
    } else {
        format!("+{} -{}", f.added, f.removed)
    };
    let mode = f
        .new_mode
        .map(|m| format!(" (mode {:o})", m.0))
        .unwrap_or_default();
    let old = quote_for_terminal(f.old_path.as_deref().unwrap_or(""));
    let path = quote_for_terminal(&f.path);
    match f.op {
        FileOp::Add => format!("{} {path}{mode}", style.paint("32", "A")),
        FileOp::Delete => format!("{} {path}", style.paint("31", "D")),
        FileOp::Modify => format!("{} {path} {counts}{mode}", style.paint("33", "M")),
        FileOp::Mode => format!("{} {path}{mode}", style.paint("33", "M")),
        FileOp::Rename => format!("{} {old} -> {path} {counts}{mode}", style.paint("36", "R")),
        FileOp::Copy => format!("{} {old} -> {path} {counts}{mode}", style.paint("36", "C")),
    }
}

fn warning_text(w: &Warning, style: Style) -> String {
    let mut s = format!("{}[{}]: ", style.paint("33;1", "warning"), w.code.as_str());
    if let Some(p) = &w.path {
        let _ = write!(s, "{}: ", quote_for_terminal(p));
    }
    if let Some(h) = w.hunk {
        let _ = write!(s, "hunk {h}: ");
    }
    s.push_str(&w.terminal_message());
    s.push('\n');
    s
}

/// The human rendering of an error: the message, then whatever the error carries (the
/// offending patch line with a caret, the expected lines, the nearest text, the candidates,
/// extra details) and the hint.
pub fn error_text(e: &Error, style: Style) -> String {
    let mut s = format!("{}[{}]: ", style.paint("31;1", "error"), e.code.as_str());
    if let (Some(p), true) = (&e.path, e.path_unnamed()) {
        let _ = write!(s, "{}: ", quote_for_terminal(p));
    }
    // The lines after the first (the locator's comparison, a list) are printed indented.
    let message = e.terminal_message();
    let mut lines = message.lines();
    s.push_str(lines.next().unwrap_or(""));
    s.push('\n');
    for line in lines {
        let _ = writeln!(s, "  {line}");
    }
    parse_location(e, &mut s);
    if !e.context_in_message() {
        structured_context(e, &mut s);
    }
    other_details(e, &mut s);
    if let Some(h) = e.terminal_hint() {
        let _ = writeln!(s, "  {}: {h}", style.paint("36", "hint"));
    }
    s
}

/// The expected lines, the nearest text and the candidates of an error.
fn structured_context(e: &Error, s: &mut String) {
    if let Some(expected) = e.expected() {
        s.push_str("  expected:\n");
        for line in expected {
            let _ = writeln!(s, "        | {line}");
        }
    }
    if let Some(n) = e.nearest() {
        if e.code == crate::ErrorCode::ExpectedMismatch {
            s.push_str("  the file has:\n");
        } else {
            let _ = writeln!(
                s,
                "  nearest text (line {}, {:.0}% similar):",
                n.start_line,
                n.similarity * 100.0
            );
        }
        for l in &n.lines {
            let _ = writeln!(s, "  {:>5} | {}", l.line, l.text);
        }
        if let Some(d) = &n.difference {
            let _ = writeln!(s, "  difference: {d}");
        }
    }
    if let Some(cands) = e.candidates() {
        for c in cands {
            let _ = writeln!(s, "  candidate at line {}:", c.line);
            for l in &c.context {
                let _ = writeln!(s, "  {:>5} | {}", l.line, l.text);
            }
        }
    }
}

/// A parse error's details (`line`, `column`, `line_text`) as the offending line and a caret.
fn parse_location(e: &Error, s: &mut String) {
    let Some(d) = e.details().and_then(|d| d.as_object()) else {
        return;
    };
    let (Some(line), Some(text)) = (
        d.get("line").and_then(|v| v.as_u64()),
        d.get("line_text").and_then(|v| v.as_str()),
    ) else {
        return;
    };
    let column = d.get("column").and_then(|v| v.as_u64()).unwrap_or(1).max(1) as usize;
    let _ = writeln!(s, "  {line:>5} | {text}");
    let _ = writeln!(s, "        | {}^", " ".repeat(column - 1));
}

/// Details other than a parse location, one `key: value` line each (stale hashes, …).
fn other_details(e: &Error, s: &mut String) {
    let Some(d) = e.details().and_then(|d| d.as_object()) else {
        return;
    };
    if d.contains_key("line_text") {
        return;
    }
    // A chip's per-hunk lists are for JSON readers: its hint already names the hunks.
    for (k, v) in d
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "applicable" | "failed"))
    {
        match v {
            serde_json::Value::String(t) => {
                let _ = writeln!(s, "  {k}: {}", escape_for_terminal(t));
            }
            other => {
                let _ = writeln!(s, "  {k}: {other}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorCode, Nearest, NumberedLine};

    fn modified() -> FileReport {
        let mut f = FileReport::new(FileOp::Modify, "src/a.rs");
        f.added = 2;
        f.removed = 1;
        f.hunks.push(HunkReport {
            hunk: 1,
            line: 3,
            level: Level::Exact,
            fuzz: 0,
            offset: None,
        });
        f
    }

    #[test]
    fn json_has_exactly_the_spec_keys() {
        let report = Report::success(vec![modified()], vec![]);
        let v: serde_json::Value = serde_json::from_str(&report.to_json()).expect("valid json");
        assert_eq!(v["ok"], true);
        assert!(v["error"].is_null());
        assert!(v.get("diff").is_none());
        let file = &v["files"][0];
        assert_eq!(file["op"], "modify");
        assert!(file.get("added").is_none());
        assert_eq!(file["hunks"][0]["level"], "exact");
        assert!(file["hunks"][0]["offset"].is_null());
    }

    #[test]
    fn human_lines_follow_the_summary_format() {
        let mut r = FileReport::new(FileOp::Rename, "b.txt");
        r.old_path = Some("a.txt".into());
        let report = Report::success(
            vec![
                FileReport::new(FileOp::Add, "n.txt"),
                modified(),
                r,
                FileReport::new(FileOp::Delete, "d.txt"),
            ],
            vec![
                Warning::new(WarningCode::Offset, "placed 2 lines below its hint")
                    .with_path("src/a.rs")
                    .with_hunk(1),
            ],
        );
        let (out, err) = report.render_human(Style::Plain);
        assert_eq!(
            out,
            "A n.txt\nM src/a.rs +2 -1\nR a.txt -> b.txt +0 -0\nD d.txt\n"
        );
        assert_eq!(
            err,
            "warning[offset]: src/a.rs: hunk 1: placed 2 lines below its hint\n"
        );
    }

    #[test]
    fn errors_show_nearest_text_and_hint() {
        let mut e = Error::new(ErrorCode::ContextNotFound, "hunk 1: context not found")
            .with_unnamed_path("a.txt")
            .with_hint("re-read the file");
        e.set_nearest(Some(Nearest {
            start_line: 4,
            lines: vec![NumberedLine {
                line: 4,
                text: "\tfoo".into(),
            }],
            difference: Some("line 4: tab vs spaces".into()),
            similarity: 0.9,
        }));
        let text = error_text(&e, Style::Plain);
        assert!(text.starts_with("error[context_not_found]: a.txt: hunk 1"));
        assert!(text.contains("      4 | \tfoo\n"));
        assert!(text.contains("difference: line 4: tab vs spaces"));
        assert!(text.ends_with("hint: re-read the file\n"));
    }

    #[test]
    fn colour_only_on_terminal_without_no_color() {
        assert_eq!(Style::detect(true, None), Style::Color);
        assert_eq!(Style::detect(false, None), Style::Plain);
        assert_eq!(Style::detect(true, Some("1".as_ref())), Style::Plain);
        assert_eq!(Style::detect(true, Some("".as_ref())), Style::Color);
    }

    #[test]
    fn codex_output_lists_letters() {
        let report = Report::success(vec![FileReport::new(FileOp::Add, "x")], vec![]);
        assert_eq!(
            report.render_codex().0,
            "Success. Updated the following files:\nA x\n"
        );
    }

    #[test]
    fn the_path_goes_before_a_message_that_does_not_name_it() {
        // Decided where the error is made: a message naming its path gets no prefix, even
        // when it names it quoted or the path is a word of it.
        let named = Error::new(ErrorCode::FileNotFound, "a does not exist").with_path("a");
        assert_eq!(
            error_text(&named, Style::Plain),
            "error[file_not_found]: a does not exist\n"
        );
        let unnamed = Error::new(ErrorCode::StaleFile, "the file changed").with_unnamed_path("a");
        assert_eq!(
            error_text(&unnamed, Style::Plain),
            "error[stale_file]: a: the file changed\n"
        );
    }

    #[test]
    fn a_message_that_shows_its_context_is_not_followed_by_the_fields() {
        let e = |shown: bool| {
            let e = Error::new(ErrorCode::ContextNotFound, "head\ncomparison")
                .with_expected(vec!["x".into()]);
            let e = if shown {
                e.with_context_in_message()
            } else {
                e
            };
            error_text(&e, Style::Plain)
        };
        assert_eq!(e(true), "error[context_not_found]: head\n  comparison\n");
        assert_eq!(
            e(false),
            "error[context_not_found]: head\n  comparison\n  expected:\n        | x\n"
        );
    }
}
