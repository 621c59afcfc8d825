//! `range`: the function, block or element enclosing a line, found from the lexer's mask and
//! the matcher's blocks (brace languages, scripts of HTML/Vue), from indentation (Python,
//! YAML), or from tags (HTML, XML, Vue, JSX).
//!
//! Stage: structure signals. Pure; a heuristic, not a parser: it never compiles, never asks
//! a language server, and documents its choices (README `structure`).
//!
//! Decisions: a block starts at its *header* — the first line of the statement that opens
//! it, so a Rust `fn` whose signature spans lines starts at `fn`, and `} else {` starts on
//! that line — without the attributes, decorators, annotations, preprocessor lines and
//! comments above it. It ends on the line of its `}` (or, by indentation, its last line that
//! is not blank or a comment at the header's indentation or less).

use super::balance::{match_all, Block};
use super::lang::{Family, Lang};
use super::scan::{is_ident, line_starts, Scan};
use super::{indent, lex, not_checked_reason};
use crate::spelling::{Hint, Opt, Value};

/// What kind of range to find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Kind {
    /// A function or method (brace languages: a block whose header declares one; Python:
    /// `def` or `class`).
    Function,
    /// Any block: `{…}`, or an indented block under a header.
    Block,
    /// A markup element.
    Tag,
}

impl Kind {
    /// The names `range --kind` and the MCP `range` tool's `kind` take.
    pub const NAMES: [&'static str; 3] = ["function", "block", "tag"];

    /// `function`, `block` or `tag`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Function => "function",
            Kind::Block => "block",
            Kind::Tag => "tag",
        }
    }

    /// The kind called `name`, if any.
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "function" => Some(Kind::Function),
            "block" => Some(Kind::Block),
            "tag" => Some(Kind::Tag),
            _ => None,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An enclosing range.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct Range {
    /// 1-based first line (the header's first line).
    pub start_line: usize,
    /// 1-based last line.
    pub end_line: usize,
    /// The text of the first line.
    pub opening_line: String,
    /// The kind found (asked for, or — when none was asked — the first of function, block
    /// that encloses the line).
    pub kind: Kind,
    /// The language the text was read as.
    pub lang: Lang,
    /// The language was unknown: the range was found by braces, as a guess.
    pub fallback: bool,
    /// The text is not balanced; the range was found by skipping over the problem and may
    /// be wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Why no range was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RangeError {
    /// The line is 0 or past the last line (a usage error).
    #[error("line {line} is outside the file, which has {lines} lines")]
    LineOutOfRange { line: usize, lines: usize },
    /// No range of that kind encloses the line (`context_not_found`).
    #[error("line {line} is not inside any {kind} ({lang})")]
    NotFound { line: usize, kind: Kind, lang: Lang },
    /// The language has no ranges of that kind: tags outside markup and JSX, functions in
    /// YAML, CSS or JSON (a usage error).
    #[error("{lang} has no {kind} ranges")]
    Unsupported { kind: Kind, lang: Lang },
    /// The text is too large or binary (`unsupported_file`).
    #[error("not read: {reason}")]
    NotRead { reason: String },
}

impl From<RangeError> for crate::Error {
    fn from(err: RangeError) -> Self {
        let source = err.clone();
        boundary(err).caused_by(source)
    }
}

/// The boundary error of `err` (its message, path, hint and details, written once); the
/// conversion adds `err` itself as its source.
fn boundary(err: RangeError) -> crate::Error {
    let code = match err {
        RangeError::NotFound { .. } => crate::ErrorCode::ContextNotFound,
        RangeError::NotRead { .. } => crate::ErrorCode::UnsupportedFile,
        _ => crate::ErrorCode::Usage,
    };
    let hint = match &err {
        RangeError::NotFound {
            kind: Kind::Function,
            ..
        } => Some(
            Hint::new()
                .text("try ")
                .opt(Opt::Kind, Value::Text("block".into()))
                .text(", or a line inside a function"),
        ),
        RangeError::Unsupported { .. } => Some(
            Hint::new()
                .text("try ")
                .opt(Opt::Kind, Value::Text("block".into()))
                .text(" (or tag for markup)"),
        ),
        _ => None,
    };
    let out = crate::Error::new(code, err.to_string());
    match hint {
        Some(h) => out.with_hint(h),
        None => out,
    }
}

/// The range of kind `kind` (or, with `None`, the most useful one: the element for HTML,
/// XML and Vue, the block for YAML, CSS and JSON, else the function, falling back to the
/// block) that encloses the 1-based `line` of `text`.
///
/// ```
/// use apply_patch::structure::{range, Kind, Lang};
/// let text = "fn main() {\n    if true {\n        println!(\"{}\", 1);\n    }\n}\n";
/// let r = range(text, 3, Some(Kind::Function), Lang::Rust).unwrap();
/// assert_eq!((r.start_line, r.end_line), (1, 5));
/// let r = range(text, 3, Some(Kind::Block), Lang::Rust).unwrap();
/// assert_eq!((r.start_line, r.end_line, r.opening_line.as_str()), (2, 4, "    if true {"));
/// ```
pub fn range(text: &str, line: usize, kind: Option<Kind>, lang: Lang) -> Result<Range, RangeError> {
    let bytes = text.as_bytes();
    if let Some(reason) = not_checked_reason(bytes) {
        return Err(RangeError::NotRead { reason });
    }
    let starts = line_starts(bytes);
    let lines = starts.len() - usize::from(bytes.is_empty() || bytes.ends_with(b"\n"));
    if line == 0 || line > lines {
        return Err(RangeError::LineOutOfRange { line, lines });
    }
    let scan = lex(bytes, lang);
    let matched = match_all(bytes, &scan, lang, true);
    let warning = matched.problem.as_ref().map(|p| {
        let problem = super::to_problem(bytes, p);
        format!("the file is not balanced ({problem}): the range may be wrong")
    });
    let kinds: &[Kind] = match (kind, lang.family()) {
        (Some(Kind::Function), _) => &[Kind::Function],
        (Some(Kind::Block), _) => &[Kind::Block],
        (Some(Kind::Tag), _) => &[Kind::Tag],
        (None, Family::Markup) => &[Kind::Tag],
        (None, _) if matches!(lang, Lang::Yaml | Lang::Css | Lang::Json) => &[Kind::Block],
        (None, _) => &[Kind::Function, Kind::Block],
    };
    let ctx = Ctx {
        text: bytes,
        scan: &scan,
        starts: &starts,
        lines,
        lang,
    };
    for &k in kinds {
        if let Some((start, end)) = ctx.find(k, line, &matched)? {
            let opening = &bytes[starts[start - 1]..line_end(bytes, starts[start - 1])];
            let opening = String::from_utf8_lossy(opening);
            let opening = opening
                .trim_start_matches('\u{feff}')
                .trim_end_matches('\r');
            return Ok(Range {
                start_line: start,
                end_line: end,
                opening_line: opening.to_string(),
                kind: k,
                lang,
                fallback: lang == Lang::Unknown,
                warning,
            });
        }
    }
    Err(RangeError::NotFound {
        line,
        kind: kinds[0],
        lang,
    })
}

/// Offset of the end of the line that starts at `from` (its `\n`, or the end of the text).
pub(crate) fn line_end(text: &[u8], from: usize) -> usize {
    text[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |n| from + n)
}

/// What every finder needs.
pub(crate) struct Ctx<'a> {
    pub text: &'a [u8],
    pub scan: &'a Scan,
    pub starts: &'a [usize],
    pub lines: usize,
    pub lang: Lang,
}

impl Ctx<'_> {
    /// 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }

    fn find(
        &self,
        kind: Kind,
        line: usize,
        matched: &super::balance::Matched,
    ) -> Result<Option<(usize, usize)>, RangeError> {
        let unsupported = Err(RangeError::Unsupported {
            kind,
            lang: self.lang,
        });
        match (kind, self.lang.family()) {
            (Kind::Tag, Family::Markup) => Ok(self.element(line, matched)),
            (Kind::Tag, _) if self.lang.has_jsx() => Ok(self.element(line, matched)),
            (Kind::Tag, _) => unsupported,
            (Kind::Function, _) if matches!(self.lang, Lang::Yaml | Lang::Css | Lang::Json) => {
                unsupported
            }
            (_, Family::Python | Family::Yaml) => {
                Ok(indent::range(self, line, kind == Kind::Function))
            }
            _ => Ok(self.brace_block(line, kind == Kind::Function, &matched.blocks)),
        }
    }

    /// The innermost element whose lines contain `line`.
    fn element(&self, line: usize, matched: &super::balance::Matched) -> Option<(usize, usize)> {
        matched
            .elements
            .iter()
            .map(|e| (e.start, self.line_of(e.start), self.line_of(e.end)))
            .filter(|&(_, s, e)| s <= line && line <= e)
            .max_by_key(|&(start, _, _)| start)
            .map(|(_, s, e)| (s, e))
    }

    /// The innermost `{…}` block (whose header declares a function, with `function`) whose
    /// lines, header included, contain `line`.
    fn brace_block(&self, line: usize, function: bool, blocks: &[Block]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize, usize)> = None;
        let code_lang = self.scan.code_lang;
        for block in blocks {
            let end = self.line_of(block.close);
            if end < line || self.line_of(block.header_from) > line {
                continue;
            }
            let header = header_start(&self.scan.mask, block.header_from, block.open, code_lang);
            let start = self.line_of(header).min(self.line_of(block.open));
            if start > line {
                continue;
            }
            if function && !is_function(code_lang, &self.scan.mask[header..block.open]) {
                continue;
            }
            if best.is_none_or(|(open, _, _)| block.open > open) {
                best = Some((block.open, start, end));
            }
        }
        best.map(|(_, s, e)| (s, e))
    }
}

/// Languages where a newline may end a statement (no `;` needed): a header there starts
/// after the last line break that ends a statement.
fn newline_ends_statements(lang: Lang) -> bool {
    lang.is_js()
        || matches!(
            lang,
            Lang::Go | Lang::Shell | Lang::Css | Lang::Scss | Lang::Unknown
        )
}

/// Where the header of a block starts, searching `mask[from..open]`: after the last line
/// break that ends a statement (in languages without `;`), then past blanks, attributes
/// (`#[…]`), decorators and annotations (`@X(…)`), C# attributes (`[X]`) and preprocessor
/// lines.
pub(crate) fn header_start(mask: &[u8], from: usize, open: usize, lang: Lang) -> usize {
    let from = from.min(open);
    let mut i = if newline_ends_statements(lang) {
        last_statement_break(mask, from, open)
    } else {
        from
    };
    loop {
        while i < open && mask[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= open {
            return open;
        }
        let at_line_start = i == 0
            || mask[..i]
                .iter()
                .rev()
                .take_while(|&&b| b != b'\n')
                .all(|b| b.is_ascii_whitespace());
        let next = mask.get(i + 1).copied().unwrap_or(0);
        i = match (mask[i], lang) {
            (b'#', Lang::Rust) if next == b'[' || next == b'!' => skip_group(mask, i, open),
            (b'@', l) if l.is_js() || matches!(l, Lang::Java | Lang::Python) => {
                let mut j = i + 1;
                while j < open && (is_ident(mask[j]) || mask[j] == b'.') {
                    j += 1;
                }
                if mask.get(j) == Some(&b'(') {
                    skip_group(mask, j, open)
                } else {
                    j
                }
            }
            (b'[', Lang::CSharp) if at_line_start => skip_group(mask, i, open),
            (b'#', Lang::C | Lang::Cpp | Lang::CSharp) if at_line_start => line_end(mask, i),
            _ => return i,
        };
    }
}

/// The offset after the first bracket group starting at or after `i` (capped at `limit`).
fn skip_group(mask: &[u8], i: usize, limit: usize) -> usize {
    let mut depth = 0usize;
    for (j, &b) in mask[i..limit].iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + j + 1;
                }
            }
            _ => {}
        }
    }
    limit
}

/// After the last newline in `mask[from..open]` that is outside brackets and follows a line
/// that ends a statement (its last code byte is not an operator, comma or opener).
fn last_statement_break(mask: &[u8], from: usize, open: usize) -> usize {
    let mut depth = 0usize;
    let mut cut = from;
    let mut last = 0u8;
    for (j, &b) in mask[from..open].iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\n' => {
                let continues = matches!(
                    last,
                    0 | b'('
                        | b'['
                        | b','
                        | b'='
                        | b'+'
                        | b'-'
                        | b'*'
                        | b'/'
                        | b'%'
                        | b'&'
                        | b'|'
                        | b'^'
                        | b'<'
                        | b'>'
                        | b'!'
                        | b'?'
                        | b':'
                        | b'.'
                        | b'\\'
                );
                if depth == 0 && !continues {
                    cut = from + j + 1;
                }
                continue;
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            last = b;
        }
    }
    cut
}

/// Tokens of a header: identifiers, `=>`, `->`, `::` and single punctuation bytes.
fn tokens(h: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < h.len() {
        let b = h[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let len = if is_ident(b) || b == b'$' {
            h[i..]
                .iter()
                .take_while(|&&c| is_ident(c) || c == b'$')
                .count()
        } else if matches!(&h[i..], [b'=' | b'-', b'>', ..] | [b':', b':', ..]) {
            2
        } else {
            1
        };
        out.push(&h[i..i + len]);
        i += len;
    }
    out
}

/// Words before a `(` that make a header a statement or a type, not a function.
const NOT_FUNCTION: &[&[u8]] = &[
    b"if",
    b"for",
    b"while",
    b"switch",
    b"catch",
    b"with",
    b"foreach",
    b"using",
    b"lock",
    b"fixed",
    b"synchronized",
    b"return",
    b"sizeof",
    b"typeof",
    b"until",
    b"elif",
    b"else",
    b"do",
    b"try",
    b"class",
    b"struct",
    b"enum",
    b"union",
    b"interface",
    b"namespace",
    b"new",
    b"record",
    b"trait",
    b"impl",
    b"=",
    b"case",
    b"when",
    b"select",
];

/// Does a block header (masked, from its start to its `{`) declare a function or method?
pub(crate) fn is_function(lang: Lang, header: &[u8]) -> bool {
    let toks = tokens(header);
    let has = |w: &[u8]| toks.contains(&w);
    match lang {
        Lang::Rust => has(b"fn"),
        Lang::Go => has(b"func"),
        Lang::Css | Lang::Json | Lang::Yaml | Lang::Python | Lang::Html | Lang::Xml | Lang::Vue => {
            false
        }
        Lang::Scss => {
            toks.len() > 1 && toks[0] == b"@" && matches!(toks[1], b"mixin" | b"function")
        }
        _ => {
            let last = toks.last().copied().unwrap_or_default();
            has(b"function")
                || (last == b"=>" && (lang.is_js() || matches!(lang, Lang::CSharp | Lang::Unknown)))
                || (last == b"->" && lang == Lang::Java)
                || call_shape(lang, &toks)
        }
    }
}

/// `name(…)` not preceded by a control keyword or a type keyword: a function definition in
/// the C family (`int main(void)`, `Foo::Foo(int a) : x(a)`, `get x()`), or a C++ lambda.
fn call_shape(lang: Lang, toks: &[&[u8]]) -> bool {
    let Some(paren) = toks.iter().position(|t| *t == b"(") else {
        return false;
    };
    if paren == 0 {
        return false;
    }
    let mut name = paren - 1;
    if toks[name] == b">" {
        // A generic method: `foo<T>(…)`.
        let mut depth = 0usize;
        loop {
            match toks[name] {
                b">" => depth += 1,
                b"<" => depth -= 1,
                _ => {}
            }
            if depth == 0 || name == 0 {
                break;
            }
            name -= 1;
        }
        name = name.saturating_sub(1);
    }
    let word = toks[name];
    if word == b"]" {
        return lang == Lang::Cpp;
    }
    let identifier = word.first().is_some_and(|&b| is_ident(b) || b == b'$');
    identifier && !toks[..=name].iter().any(|t| NOT_FUNCTION.contains(t))
}
