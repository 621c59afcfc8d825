//! Stage: parse. Four nom front ends (agent language, unified diffs, JSON edit requests and
//! SEARCH/REPLACE edit blocks) turn patch input into the one [`crate::model`], each setting
//! the model's [`crate::model::Rules`]. Format detection (SPEC §1) lives here.
//! No I/O; nom's error types never leave this module: every failure is a [`ParseError`].
//!
//! Every front end has the same shape: `parse(input, start, opts)` reads from byte offset
//! `start` (a line start found by [`detect`]) and counts lines from the beginning of `input`,
//! so that error positions are those of the user's input.

mod detect;
mod nom_lex;
mod one_patch;
mod position;

crate::internal_mod! {
    agent;
    binary;
    blocks;
    json;
    quoted;
    unified;
}

use crate::model::{Format, PatchSet};

pub use detect::{detect, is_inline_patch_text, Detected};

/// Options that change how a patch is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseOptions {
    /// `--format`: skip detection.
    pub format: Option<Format>,
    /// `-p N` for unified diffs; None: SPEC §3 defaults.
    pub strip: Option<usize>,
    /// `--recount`: ignore the hunk line counts of unified diffs.
    pub recount: bool,
    /// `--unidiff-zero`: accept zero-context hunks that do not cover the whole file.
    pub unidiff_zero: bool,
    /// `--path FILE`: the file of every SEARCH/REPLACE block (SPEC §4b "Paths"); every line
    /// outside the blocks is then prose. Only for blocks.
    pub path: Option<String>,
    /// `--base HEX`: the Base of the file `path` names (a prefix of the SHA-256 of its bytes,
    /// ≥ 8 hex digits), under which the blocks' line hints are trusted. Only with `path`.
    pub base: Option<String>,
}

/// Setters for code outside the crate, which cannot write the struct (it is
/// `#[non_exhaustive]`): `ParseOptions::default().with_strip(Some(1)).with_recount(true)`.
impl ParseOptions {
    /// [`format`](Self::format).
    pub fn with_format(mut self, format: Option<Format>) -> Self {
        self.format = format;
        self
    }

    /// [`strip`](Self::strip).
    pub fn with_strip(mut self, strip: Option<usize>) -> Self {
        self.strip = strip;
        self
    }

    /// [`recount`](Self::recount).
    pub fn with_recount(mut self, on: bool) -> Self {
        self.recount = on;
        self
    }

    /// [`unidiff_zero`](Self::unidiff_zero).
    pub fn with_unidiff_zero(mut self, on: bool) -> Self {
        self.unidiff_zero = on;
        self
    }

    /// [`path`](Self::path).
    pub fn with_path(mut self, path: Option<String>) -> Self {
        self.path = path;
        self
    }

    /// [`base`](Self::base).
    pub fn with_base(mut self, base: Option<String>) -> Self {
        self.base = base;
        self
    }
}

/// A patch that could not be read: where, what was found, what was expected, what to do.
///
/// It quotes at most the offending line, cut to 80 characters (SPEC §1); an error about the
/// input as a whole (no patch in it) quotes none of it and has no position
/// ([`ParseError::located`] is false), so that a file that is not a patch never leaks
/// through an error message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParseError {
    /// 1-based line of the patch input; 0 when the error is not [`located`](Self::located).
    pub line: usize,
    /// 1-based column (in characters) of the offending spot; 0 when not located.
    pub column: usize,
    /// The offending line, lossily decoded, control characters made visible, at most 80 of
    /// its characters (`…` where it is cut); empty when not located.
    pub line_text: String,
    /// False for an error about the input as a whole (no patch was found in it).
    pub located: bool,
    /// What went wrong, lowercase ("expected a hunk line starting with ' ', '-' or '+'").
    pub message: String,
    /// The part of the input the position is in, when it is not the patch itself (a JSON
    /// tool call's `diff` string): named before the message wherever it is shown.
    pub within: Option<InputPart>,
    /// What to do about it (as the command line words it).
    pub hint: Option<String>,
    /// The hint as parts when it names options (each front end spells them its own way).
    pub hint_parts: Option<crate::spelling::Hint>,
}

/// A part of the input a [`ParseError`] can be in, other than the patch itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputPart {
    /// The `diff` string of a SEARCH/REPLACE tool call (`{"path": …, "diff": …}`).
    DiffString,
}

impl std::fmt::Display for InputPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InputPart::DiffString => "the `diff` string",
        })
    }
}

impl ParseError {
    /// An error at byte `offset` of `input`; line, column and line text are computed from it.
    pub fn at(input: &[u8], offset: usize, message: impl Into<String>) -> Self {
        let pos = position::Position::of(input, offset);
        ParseError {
            line: pos.line,
            column: pos.column,
            line_text: pos.line_text,
            located: true,
            message: message.into(),
            within: None,
            hint: None,
            hint_parts: None,
        }
    }

    /// An error about the input as a whole, quoting none of it (no patch was found).
    pub fn about_input(message: impl Into<String>) -> Self {
        ParseError {
            line: 0,
            column: 0,
            line_text: String::new(),
            located: false,
            message: message.into(),
            within: None,
            hint: None,
            hint_parts: None,
        }
    }

    /// The same error with a hint.
    pub fn with_hint(mut self, hint: impl Into<crate::spelling::Hint>) -> Self {
        let hint = hint.into();
        self.hint = Some(hint.render(crate::spelling::FrontEnd::CommandLine));
        self.hint_parts = (!hint.options().is_empty()).then_some(hint);
        self
    }

    /// What went wrong, in the part of the input it is in ([`ParseError::within`]).
    pub fn what(&self) -> std::borrow::Cow<'_, str> {
        match self.within {
            Some(part) => format!("in {part}: {}", self.message).into(),
            None => self.message.as_str().into(),
        }
    }

    /// The error for humans: the message, the offending line, a caret under the column, and
    /// the hint.
    ///
    /// ```
    /// use apply_patch::parse::{parse, ParseOptions};
    /// let err = parse(b"*** Begin Patch\n*** Frobnicate File: a\n", &ParseOptions::default())
    ///     .unwrap_err();
    /// let text = err.render();
    /// assert!(text.contains("2 | *** Frobnicate File: a"));
    /// assert!(text.contains("  | ^"));
    /// ```
    pub fn render(&self) -> String {
        if !self.located {
            let mut out = format!("parse error: {}\n", self.what());
            if let Some(hint) = &self.hint {
                out.push_str(&format!("hint: {hint}\n"));
            }
            return out;
        }
        let number = self.line.to_string();
        let gutter = " ".repeat(number.len());
        let caret_at = position::caret_index(self.column, &self.line_text);
        // The caret line repeats the tabs of the offending line so that it lines up whatever
        // the terminal's tab width.
        let pad: String = self
            .line_text
            .chars()
            .take(caret_at)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let mut out = format!(
            "parse error: line {}, column {}: {}\n{gutter} |\n{number} | {}\n{gutter} | {pad}^\n",
            self.line,
            self.column,
            self.what(),
            self.line_text
        );
        if let Some(hint) = &self.hint {
            out.push_str(&format!("hint: {hint}\n"));
        }
        out
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.located {
            write!(f, "line {}, column {}: ", self.line, self.column)?;
        }
        f.write_str(&self.what())
    }
}

impl std::error::Error for ParseError {}

impl From<ParseError> for crate::Error {
    fn from(err: ParseError) -> Self {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: ParseError) -> crate::Error {
    let mut out = crate::Error::new(crate::ErrorCode::ParseError, err.to_string());
    // Not located: no position to give, and no line of the input to show.
    if err.located {
        out = out.with_details(serde_json::json!({
            "line": err.line,
            "column": err.column,
            "line_text": err.line_text,
        }));
    }
    out.set_hint(err.hint_parts.or(err.hint.map(crate::spelling::Hint::from)));
    out
}

/// Read a patch: detect its format (SPEC §1) unless `opts.format` forces one, then run that
/// format's front end from the patch's first line.
///
/// ```
/// use apply_patch::parse::{parse, ParseOptions};
/// use apply_patch::{FileOp, Format};
/// let input = b"*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
/// let set = parse(input, &ParseOptions::default()).unwrap();
/// assert_eq!(set.format, Format::Agent);
/// assert_eq!(set.files[0].op, FileOp::Add);
/// assert_eq!(set.files[0].path(), "hello.txt");
/// ```
pub fn parse<'a>(input: &'a [u8], opts: &ParseOptions) -> Result<PatchSet<'a>, ParseError> {
    let mut detected = match opts.format {
        Some(format) => detect::detect_as(input, format)?,
        None => detect::detect(input).ok_or_else(|| detect::nothing_found(input))?,
    };
    // `{"path": P, "diff": D}` starts with `{` too: the arguments of a SEARCH/REPLACE tool
    // call, not an edit request.
    if detected.format == Format::Json
        && opts.format.is_none()
        && blocks::is_tool_call(&input[detected.start..])
    {
        detected.format = Format::Blocks;
    }
    if detected.format != Format::Blocks && (opts.path.is_some() || opts.base.is_some()) {
        let given = if opts.path.is_some() {
            "--path"
        } else {
            "--base"
        };
        return Err(ParseError::about_input(format!(
            "{given} applies to SEARCH/REPLACE blocks only, and this input is {}",
            detect::describe(detected.format)
        ))
        .with_hint("drop --path and --base: the patch names its own files"));
    }
    let mut set = match detected.format {
        Format::Agent => agent::parse(input, detected.start, opts)?,
        Format::Json => json::parse(input, detected.start, opts)?,
        Format::Unified => unified::parse(input, detected.start, opts)?,
        Format::Blocks => blocks::parse_set(input, opts)?,
    };
    if set.cd.is_none() {
        set.cd = detected.cd;
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_routes_each_format_to_its_front_end() {
        let opts = ParseOptions::default();
        let unified = b"cd sub && apply_patch <<'EOF'\nSubject: x\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\nEOF\n";
        let set = parse(unified, &opts).expect("unified parses");
        assert_eq!(set.format, Format::Unified);
        assert_eq!(set.cd.as_deref(), Some("sub"));
        assert_eq!(set.files[0].path(), "x");
        let json = b"{\"edits\": [{\"op\": \"delete\", \"path\": \"a\"}]}";
        assert_eq!(parse(json, &opts).expect("json").format, Format::Json);
        let agent = b"*** Begin Patch\n*** Delete File: a\n*** End Patch\n";
        assert_eq!(parse(agent, &opts).expect("agent").format, Format::Agent);
    }

    #[test]
    fn forced_format_overrides_detection() {
        let opts = ParseOptions {
            format: Some(Format::Agent),
            ..ParseOptions::default()
        };
        let err = parse(b"{\"edits\": []}\n", &opts).expect_err("not an agent patch");
        assert_eq!(
            err.message,
            "no agent patch found: expected a line starting with `*** Begin Patch` (line 1 \
             starts a JSON edit request: drop --format, or pass --format json)"
        );
        assert!(!err.located && err.line_text.is_empty());
    }

    #[test]
    fn input_without_any_format_is_refused_with_a_hint_and_quotes_none_of_it() {
        let err = parse(b"root:secret:0:0\n", &ParseOptions::default()).expect_err("no patch");
        assert!(err.message.starts_with("no patch found"));
        assert!(err.hint.is_some());
        assert!(!err.located);
        let json = serde_json::to_string(&crate::Error::from(err.clone())).expect("plain data");
        for shown in [err.render(), err.to_string(), json] {
            assert!(!shown.contains("secret"), "{shown}");
        }
    }

    #[test]
    fn render_puts_the_caret_under_the_column() {
        let err = ParseError {
            line: 12,
            column: 3,
            line_text: "\tab".into(),
            located: true,
            message: "bad".into(),
            within: None,
            hint: Some("fix it".into()),
            hint_parts: None,
        };
        assert_eq!(
            err.render(),
            "parse error: line 12, column 3: bad\n   |\n12 | \tab\n   | \t ^\nhint: fix it\n"
        );
    }

    #[test]
    fn parse_error_becomes_a_parse_error_code_with_position_details() {
        let err = ParseError::at(b"a\nbcd\n", 4, "oops").with_hint("h");
        let out: crate::Error = err.into();
        assert_eq!(out.code, crate::ErrorCode::ParseError);
        assert_eq!(out.message, "line 2, column 3: oops");
        assert_eq!(out.hint.as_deref(), Some("h"));
        let details = out.details().expect("details are set");
        assert_eq!(details["line"], 2);
        assert_eq!(details["column"], 3);
        assert_eq!(details["line_text"], "bcd");
    }
}
