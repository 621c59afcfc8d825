//! Lexer for the brace languages: Rust, C, C++, Java, C#, Go, JavaScript/TypeScript (with
//! JSX), CSS/SCSS and JSON. It blanks strings and comments in the mask and records JSX tags;
//! brackets are left in the mask for the matcher.
//!
//! Stage: structure signals. Pure and linear in the text; it never judges brackets itself
//! (except to find where a `${…}` or JSX `{…}` ends) and never allocates per byte.

mod directive;
mod jsx;

use super::lang::Lang;
use super::scan::{is_ident, RawProblem, Scan};

/// How deep template literals, interpolations and JSX may nest before the lexer gives up
/// (recursion guard; real code stays far below).
const MAX_NESTING: usize = 200;

/// What the previous significant token was: decides whether `/` starts a regular expression
/// and `<` a JSX element (both only where an expression may start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prev {
    Start,
    Punct,
    Value,
    Keyword,
}

impl Prev {
    fn expression_may_start(self) -> bool {
        !matches!(self, Prev::Value)
    }
}

/// JavaScript keywords after which an expression (so a regex or JSX) may start.
const JS_EXPR_KEYWORDS: &[&[u8]] = &[
    b"return",
    b"typeof",
    b"instanceof",
    b"in",
    b"of",
    b"new",
    b"delete",
    b"void",
    b"throw",
    b"case",
    b"do",
    b"else",
    b"yield",
    b"await",
];

/// Lex a whole brace-language text.
pub(crate) fn lex(text: &[u8], lang: Lang) -> Scan {
    let mut scan = Scan::copy_of(text, lang);
    let mut lexer = Lexer::new(text, 0, lang, &mut scan);
    lexer.shebang();
    lexer.code(false);
    scan
}

/// Lex `text[start..end]` (the body of an HTML `<script>` or `<style>`) into `scan`, whose
/// mask is blank there: the region is copied in first, then its non-code is blanked.
pub(crate) fn lex_region(text: &[u8], start: usize, end: usize, lang: Lang, scan: &mut Scan) {
    scan.mask[start..end].copy_from_slice(&text[start..end]);
    let mut lexer = Lexer::new(&text[..end], start, lang, scan);
    lexer.code(false);
}

struct Lexer<'t, 's> {
    t: &'t [u8],
    pos: usize,
    lang: Lang,
    scan: &'s mut Scan,
    prev: Prev,
    nesting: usize,
}

impl<'t, 's> Lexer<'t, 's> {
    fn new(t: &'t [u8], pos: usize, lang: Lang, scan: &'s mut Scan) -> Self {
        Lexer {
            t,
            pos,
            lang,
            scan,
            prev: Prev::Start,
            nesting: 0,
        }
    }

    fn at(&self, i: usize) -> u8 {
        self.t.get(i).copied().unwrap_or(0)
    }

    fn blank(&mut self, start: usize, end: usize) {
        self.scan.blank(start, end);
    }

    /// Scan the code of an interpolation (`${…}` in a template literal, `{…}` in an
    /// interpolated string) whose `{` is at `open`; the index just after its closing `}`, or
    /// None when scanning stopped (a problem was found, or the text ended unclosed).
    fn interpolation(&mut self, token: &str, open: usize) -> Option<usize> {
        self.pos = open + 1;
        self.prev = Prev::Start;
        self.code(true);
        if self.scan.stopped() {
            return None;
        }
        if self.pos >= self.t.len() {
            let len = self.t.len();
            self.fail_unclosed(token, open, len, false);
            return None;
        }
        Some(self.pos + 1)
    }

    fn fail_unclosed(&mut self, open: &str, open_at: usize, at: usize, eol: bool) {
        let found = if eol { "end of line" } else { "end of file" };
        self.scan
            .fail(RawProblem::unclosed(open, open_at, at, found));
        self.pos = at;
    }

    /// A `#!` first line is a comment (but not Rust's `#![attr]`).
    fn shebang(&mut self) {
        if self.t.starts_with(b"#!") && self.at(2) != b'[' {
            let end = self.line_end(0);
            self.blank(0, end);
            self.pos = end;
        }
    }

    fn line_end(&self, from: usize) -> usize {
        self.t[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.t.len(), |i| from + i)
    }

    fn punct(&mut self) {
        self.pos += 1;
        self.prev = Prev::Punct;
    }

    /// Lex code. With `in_braces`, stop (without consuming it) at the `}` that closes the
    /// `{` just before the call: the end of a `${…}` or JSX `{…}`.
    fn code(&mut self, in_braces: bool) {
        if in_braces {
            self.nesting += 1;
            if self.nesting > MAX_NESTING {
                self.scan.gave_up = Some(format!(
                    "templates or JSX nest deeper than {MAX_NESTING} levels"
                ));
                return;
            }
        }
        let mut depth = 0usize;
        while self.pos < self.t.len() && !self.scan.stopped() {
            let b = self.t[self.pos];
            match b {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => self.pos += 1,
                b'{' => {
                    depth += 1;
                    self.punct();
                }
                b'}' => {
                    if in_braces && depth == 0 {
                        break;
                    }
                    depth = depth.saturating_sub(1);
                    self.pos += 1;
                    self.prev = Prev::Value;
                }
                b')' | b']' => {
                    self.pos += 1;
                    self.prev = Prev::Value;
                }
                b'/' => self.slash(),
                b'"' => self.double_quote(self.pos),
                b'\'' => self.single_quote(),
                b'`' => self.backtick(),
                b'<' if self.jsx_starts() => self.jsx_element(),
                b'#' if self.is_directive() => self.directive(),
                b'@' if self.lang == Lang::CSharp => self.csharp_at(),
                b'$' if self.lang == Lang::CSharp => self.csharp_dollar(),
                b'0'..=b'9' => self.number(),
                _ if is_ident(b) || (b == b'$' && self.lang.is_js()) => self.word(),
                _ => self.punct(),
            }
        }
        if in_braces {
            self.nesting -= 1;
        }
    }

    fn slash(&mut self) {
        match self.at(self.pos + 1) {
            b'/' if self.lang != Lang::Css => {
                let end = self.line_end(self.pos);
                self.blank(self.pos, end);
                self.pos = end;
            }
            b'*' => self.block_comment(),
            _ if self.lang.is_js() && self.prev.expression_may_start() => {
                if !self.regex() {
                    self.punct();
                }
            }
            _ => self.punct(),
        }
    }

    /// `/* … */`; Rust's nest.
    fn block_comment(&mut self) {
        let start = self.pos;
        let nests = self.lang == Lang::Rust;
        let mut depth = 0usize;
        let mut i = start;
        while i + 1 < self.t.len() {
            match (self.t[i], self.t[i + 1]) {
                (b'/', b'*') if nests || depth == 0 => {
                    depth += 1;
                    i += 2;
                }
                (b'*', b'/') => {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        self.blank(start, i);
                        self.pos = i;
                        return;
                    }
                }
                _ => i += 1,
            }
        }
        let len = self.t.len();
        self.blank(start, len);
        self.fail_unclosed("/*", start, len, false);
    }

    /// A regular-expression literal at `/`, if one ends on this line; false leaves `pos`.
    fn regex(&mut self) -> bool {
        let start = self.pos;
        let mut i = start + 1;
        let mut class = false;
        while i < self.t.len() {
            match self.t[i] {
                b'\\' if self.at(i + 1) != b'\n' => i += 2,
                b'\n' | b'\\' => return false,
                b'[' => {
                    class = true;
                    i += 1;
                }
                b']' => {
                    class = false;
                    i += 1;
                }
                b'/' if !class => {
                    i += 1;
                    while i < self.t.len() && is_ident(self.t[i]) {
                        i += 1;
                    }
                    self.blank(start, i);
                    self.pos = i;
                    self.prev = Prev::Value;
                    return true;
                }
                _ => i += 1,
            }
        }
        false
    }

    /// A string from `start` (which may be a prefix such as `b`) whose opening quote `q`
    /// is at `self.pos`; backslash escapes; `multiline` strings may cross newlines.
    fn quoted(&mut self, start: usize, q: u8, multiline: bool) {
        let mut i = self.pos + 1;
        loop {
            if i >= self.t.len() {
                let len = self.t.len();
                self.blank(start, len);
                self.fail_unclosed(&char::from(q).to_string(), self.pos, len, false);
                return;
            }
            match self.t[i] {
                b'\\' => i += 2,
                b'\n' if !multiline => {
                    self.blank(start, i);
                    self.fail_unclosed(&char::from(q).to_string(), self.pos, i, true);
                    return;
                }
                c if c == q => break,
                _ => i += 1,
            }
        }
        self.blank(start, i + 1);
        self.pos = i + 1;
        self.prev = Prev::Value;
    }

    /// Everything from `start` up to and including `close`; no escapes. `open` names the
    /// opener in a problem.
    fn raw_until(&mut self, start: usize, body: usize, close: &[u8], open: &str) {
        match find(self.t, body, close) {
            Some(i) => {
                let end = i + close.len();
                self.blank(start, end);
                self.pos = end;
                self.prev = Prev::Value;
            }
            None => {
                let len = self.t.len();
                self.blank(start, len);
                self.fail_unclosed(open, start, len, false);
            }
        }
    }

    fn double_quote(&mut self, start: usize) {
        match self.lang {
            Lang::Rust => self.quoted(start, b'"', true),
            Lang::Java | Lang::CSharp if self.t[self.pos..].starts_with(b"\"\"\"") => {
                self.triple_quoted(start)
            }
            _ => self.quoted(start, b'"', false),
        }
    }

    /// Java text blocks (`"""`, escapes) and C# raw strings (N ≥ 3 quotes, closed by N).
    fn triple_quoted(&mut self, start: usize) {
        let n = self.t[self.pos..]
            .iter()
            .take_while(|&&b| b == b'"')
            .count();
        let (n, escapes) = if self.lang == Lang::Java {
            (3, true)
        } else {
            (n, false)
        };
        let mut i = self.pos + n;
        while i < self.t.len() {
            match self.t[i] {
                b'\\' if escapes => i += 2,
                b'"' => {
                    let run = self.t[i..].iter().take_while(|&&b| b == b'"').count();
                    if run >= n {
                        let end = i + run;
                        self.blank(start, end);
                        self.pos = end;
                        self.prev = Prev::Value;
                        return;
                    }
                    i += run;
                }
                _ => i += 1,
            }
        }
        let len = self.t.len();
        self.blank(start, len);
        let open = "\"".repeat(n);
        self.fail_unclosed(&open, start, len, false);
    }

    fn single_quote(&mut self) {
        match self.lang {
            Lang::Rust => self.char_or_lifetime(),
            _ => self.quoted(self.pos, b'\'', false),
        }
    }

    /// Rust: `'x'`, `'\n'`, `'é'` are characters; `'a` and `'label:` are lifetimes.
    fn char_or_lifetime(&mut self) {
        let i = self.pos + 1;
        if self.at(i) == b'\\' {
            return self.quoted(self.pos, b'\'', false);
        }
        let width = utf8_width(self.at(i));
        if self.at(i) != b'\n' && i < self.t.len() && self.at(i + width) == b'\'' {
            self.blank(self.pos, i + width + 1);
            self.pos = i + width + 1;
            self.prev = Prev::Value;
        } else {
            self.punct();
        }
    }

    fn backtick(&mut self) {
        match self.lang {
            Lang::Go => {
                let start = self.pos;
                self.raw_until(start, start + 1, b"`", "`");
            }
            lang if lang.is_js() => self.template(),
            _ => self.punct(),
        }
    }

    /// A JavaScript template literal with nested `${…}` (whose braces stay in the mask).
    fn template(&mut self) {
        let start = self.pos;
        let mut seg = start;
        let mut i = start + 1;
        loop {
            if i >= self.t.len() {
                let len = self.t.len();
                self.blank(seg, len);
                self.fail_unclosed("`", start, len, false);
                return;
            }
            match self.t[i] {
                b'\\' => i += 2,
                b'`' => {
                    self.blank(seg, i + 1);
                    self.pos = i + 1;
                    self.prev = Prev::Value;
                    return;
                }
                b'$' if self.at(i + 1) == b'{' => {
                    self.blank(seg, i + 1);
                    let Some(next) = self.interpolation("${", i + 1) else {
                        return;
                    };
                    i = next;
                    seg = i;
                }
                _ => i += 1,
            }
        }
    }

    /// An identifier or keyword, and the string prefixes some languages glue to quotes.
    fn word(&mut self) {
        let start = self.pos;
        let mut i = start;
        while i < self.t.len() && (is_ident(self.t[i]) || (self.t[i] == b'$' && self.lang.is_js()))
        {
            i += 1;
        }
        let word = &self.t[start..i];
        self.pos = i;
        let next = self.at(i);
        match self.lang {
            Lang::Rust
                if matches!(word, b"r" | b"br" | b"cr") && (next == b'"' || next == b'#') =>
            {
                return self.rust_raw(start);
            }
            Lang::Rust if matches!(word, b"b" | b"c") && next == b'"' => {
                return self.quoted(start, b'"', true);
            }
            Lang::Rust if word == b"b" && next == b'\'' => {
                return self.quoted(start, b'\'', false);
            }
            Lang::Cpp | Lang::C
                if matches!(word, b"R" | b"u8R" | b"uR" | b"UR" | b"LR") && next == b'"' =>
            {
                return self.cpp_raw(start);
            }
            Lang::Css | Lang::Scss if word.eq_ignore_ascii_case(b"url") && next == b'(' => {
                return self.css_url();
            }
            _ => {}
        }
        self.prev = if self.lang.is_js() && JS_EXPR_KEYWORDS.contains(&word) {
            Prev::Keyword
        } else {
            Prev::Value
        };
    }

    /// `r"…"`, `r#"…"#` (any number of `#`), with `b`/`c` prefixes; `r#ident` is an
    /// identifier.
    fn rust_raw(&mut self, start: usize) {
        let hashes = self.t[self.pos..]
            .iter()
            .take_while(|&&b| b == b'#')
            .count();
        let quote = self.pos + hashes;
        if self.at(quote) != b'"' {
            self.prev = Prev::Value;
            return;
        }
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        let open = String::from_utf8_lossy(&self.t[start..=quote]).into_owned();
        self.raw_until(start, quote + 1, &close, &open);
    }

    /// C++ `R"delim( … )delim"`.
    fn cpp_raw(&mut self, start: usize) {
        let quote = self.pos;
        let delim_len = self.t[quote + 1..].iter().take(17).position(|&b| b == b'(');
        let Some(delim_len) = delim_len else {
            return self.quoted(start, b'"', false);
        };
        let delim = &self.t[quote + 1..quote + 1 + delim_len];
        let mut close = vec![b')'];
        close.extend_from_slice(delim);
        close.push(b'"');
        let body = quote + 2 + delim_len;
        let open = String::from_utf8_lossy(&self.t[start..body]).into_owned();
        self.raw_until(start, body, &close, &open);
    }

    /// CSS `url(…)` without quotes: the body may hold `//` and `'`.
    fn css_url(&mut self) {
        let open = self.pos;
        let mut i = open + 1;
        while matches!(self.at(i), b' ' | b'\t') {
            i += 1;
        }
        if matches!(self.at(i), b'"' | b'\'') {
            self.prev = Prev::Value;
            return;
        }
        let end = self.line_end(open);
        if let Some(close) = self.t[open..end].iter().position(|&b| b == b')') {
            self.blank(open + 1, open + close);
            self.pos = open + close;
        }
        self.prev = Prev::Value;
    }

    fn number(&mut self) {
        let cxx = matches!(self.lang, Lang::C | Lang::Cpp);
        let mut i = self.pos;
        while i < self.t.len() {
            let b = self.t[i];
            // C++14 digit separators: 1'000'000.
            let separator = cxx && b == b'\'' && self.at(i + 1).is_ascii_alphanumeric();
            if is_ident(b) || b == b'.' || separator {
                i += 1;
            } else {
                break;
            }
        }
        self.pos = i;
        self.prev = Prev::Value;
    }

    /// C# `@"verbatim"` and `@$"…"`; `@ident` is an identifier.
    fn csharp_at(&mut self) {
        let start = self.pos;
        match (self.at(start + 1), self.at(start + 2)) {
            (b'"', _) => {
                self.pos = start + 1;
                self.csharp_string(start, true, false);
            }
            (b'$', b'"') => {
                self.pos = start + 2;
                self.csharp_string(start, true, true);
            }
            _ => self.punct(),
        }
    }

    /// C# `$"…{expr}…"`, `$@"…"`, `$"""…"""`.
    fn csharp_dollar(&mut self) {
        let start = self.pos;
        let dollars = self.t[start..].iter().take_while(|&&b| b == b'$').count();
        let mut i = start + dollars;
        let verbatim = self.at(i) == b'@';
        if verbatim {
            i += 1;
        }
        if self.at(i) != b'"' {
            return self.punct();
        }
        self.pos = i;
        if self.t[i..].starts_with(b"\"\"\"") {
            return self.triple_quoted(start);
        }
        self.csharp_string(start, verbatim, true);
    }

    /// A C# string at `self.pos` (the quote) from `start` (its prefix).
    fn csharp_string(&mut self, start: usize, verbatim: bool, interpolated: bool) {
        let open = String::from_utf8_lossy(&self.t[start..=self.pos]).into_owned();
        let mut seg = start;
        let mut i = self.pos + 1;
        loop {
            if i >= self.t.len() || (!verbatim && self.t[i] == b'\n') {
                let at = i.min(self.t.len());
                self.blank(seg, at);
                self.fail_unclosed(&open, start, at, at < self.t.len());
                return;
            }
            match (self.t[i], self.at(i + 1)) {
                (b'\\', _) if !verbatim => i += 2,
                (b'"', b'"') if verbatim => i += 2,
                (b'{', b'{') | (b'}', b'}') if interpolated => i += 2,
                (b'"', _) => break,
                (b'{', _) if interpolated => {
                    self.blank(seg, i);
                    let Some(next) = self.interpolation("{", i) else {
                        return;
                    };
                    i = next;
                    seg = i;
                }
                _ => i += 1,
            }
        }
        self.blank(seg, i + 1);
        self.pos = i + 1;
        self.prev = Prev::Value;
    }
}

/// The first occurrence of `needle` in `hay` at or after `from`.
pub(crate) fn find(hay: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || from >= hay.len() {
        return None;
    }
    let first = needle[0];
    let mut i = from;
    while let Some(p) = hay[i..].iter().position(|&b| b == first) {
        let at = i + p;
        if hay[at..].starts_with(needle) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Byte length of the UTF-8 character that starts with `lead` (1 for anything odd).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xF0..=0xF7 => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}
