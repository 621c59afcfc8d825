//! Lexer for POSIX shell and bash: `#` comments (only where a word starts), `'…'`, `"…"`
//! with `$(…)` and `` `…` `` inside, `$'…'`, `${…}`, backslash escapes, here-documents
//! (`<<EOF`, `<<-EOF`, `<<'EOF'`: their bodies are text) and `case` patterns (whose `)` has
//! no `(`).
//!
//! Stage: structure signals. Pure and linear; it is not a shell parser — it only decides
//! what is code so that brackets can be matched.

use super::lang::Lang;
use super::scan::{RawProblem, Scan};

const MAX_NESTING: usize = 200;

/// Lex a shell script.
pub(crate) fn lex(text: &[u8]) -> Scan {
    let mut scan = Scan::copy_of(text, Lang::Shell);
    let mut lexer = Sh {
        t: text,
        pos: 0,
        scan: &mut scan,
        heredocs: Vec::new(),
        cases: Vec::new(),
        nesting: 0,
    };
    if text.starts_with(b"#!") {
        lexer.comment();
    }
    lexer.code(false);
    if let Some(doc) = lexer.heredocs.first() {
        let open = format!("<<{}", String::from_utf8_lossy(&doc.delim));
        scan.fail(RawProblem::unclosed(
            &open,
            doc.open_at,
            text.len(),
            "end of file",
        ));
    }
    scan
}

/// A here-document whose body starts at the next line.
struct Heredoc {
    delim: Vec<u8>,
    strip_tabs: bool,
    open_at: usize,
}

/// Where a `case` statement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    /// After `case WORD`, before `in`.
    WantIn,
    /// Reading a pattern, up to its `)`.
    Pattern,
    /// Reading a branch's commands, up to `;;`.
    Body,
}

struct Sh<'t, 's> {
    t: &'t [u8],
    pos: usize,
    scan: &'s mut Scan,
    heredocs: Vec<Heredoc>,
    cases: Vec<Case>,
    nesting: usize,
}

fn is_word(b: u8) -> bool {
    !b.is_ascii_whitespace()
        && !matches!(
            b,
            b';' | b'&'
                | b'|'
                | b'('
                | b')'
                | b'<'
                | b'>'
                | b'"'
                | b'\''
                | b'`'
                | b'$'
                | b'\\'
                | b'{'
                | b'}'
        )
}

impl Sh<'_, '_> {
    fn at(&self, i: usize) -> u8 {
        self.t.get(i).copied().unwrap_or(0)
    }

    fn unclosed(&mut self, open: &str, open_at: usize) {
        let len = self.t.len();
        self.scan.blank(open_at, len);
        self.scan
            .fail(RawProblem::unclosed(open, open_at, len, "end of file"));
        self.pos = len;
    }

    fn comment(&mut self) {
        let end = self.t[self.pos..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.t.len(), |n| self.pos + n);
        self.scan.blank(self.pos, end);
        self.pos = end;
    }

    /// A word starts here when the previous byte ends one.
    fn word_starts(&self) -> bool {
        self.pos == 0
            || matches!(
                self.t[self.pos - 1],
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
            )
    }

    /// Lex commands; with `in_parens`, stop at the `)` closing a `$(` (not consumed).
    fn code(&mut self, in_parens: bool) {
        if in_parens {
            self.nesting += 1;
            if self.nesting > MAX_NESTING {
                self.scan.gave_up = Some(format!(
                    "command substitutions nest deeper than {MAX_NESTING}"
                ));
                return;
            }
        }
        let mut depth = 0usize;
        while self.pos < self.t.len() && !self.scan.stopped() {
            let b = self.t[self.pos];
            match b {
                b'\n' => {
                    self.pos += 1;
                    self.heredoc_bodies();
                }
                // `)#` is zsh's "zero or more" glob operator (`[[ $v == (4|5)(.*)# ]]`), not
                // a comment: a comment right after `)` is rare, that pattern is not.
                b'#' if self.word_starts() && self.t[self.pos.saturating_sub(1)] != b')' => {
                    self.comment()
                }
                b'\\' => {
                    self.scan.blank(self.pos, self.pos + 2);
                    self.pos += 2;
                }
                b'\'' => self.single_quoted(self.pos, false),
                b'"' => self.double_quoted(),
                b'`' => self.backquoted(),
                b'$' => self.dollar(),
                b'<' if self.at(self.pos + 1) == b'<' => self.heredoc_operator(),
                b'(' | b')' if self.cases.last() == Some(&Case::Pattern) => {
                    self.scan.blank(self.pos, self.pos + 1);
                    if b == b')' {
                        self.set_case(Case::Body);
                    }
                    self.pos += 1;
                }
                b'(' => {
                    depth += 1;
                    self.pos += 1;
                }
                b')' if in_parens && depth == 0 => break,
                b')' => {
                    depth = depth.saturating_sub(1);
                    self.pos += 1;
                }
                b';' if self.cases.last() == Some(&Case::Body) && self.at(self.pos + 1) == b';' => {
                    self.set_case(Case::Pattern);
                    self.pos += 2;
                }
                b';' if self.cases.last() == Some(&Case::Body) && self.at(self.pos + 1) == b'&' => {
                    self.set_case(Case::Pattern);
                    self.pos += 2;
                }
                _ if is_word(b) => self.word(),
                _ => self.pos += 1,
            }
        }
        if in_parens {
            self.nesting -= 1;
        }
    }

    fn set_case(&mut self, state: Case) {
        if let Some(top) = self.cases.last_mut() {
            *top = state;
        }
    }

    /// A plain word: only `case`, `in` and `esac` matter.
    fn word(&mut self) {
        let start = self.pos;
        while self.pos < self.t.len() && is_word(self.t[self.pos]) {
            self.pos += 1;
        }
        let word = &self.t[start..self.pos];
        let at_start = start == 0 || !is_word(self.t[start - 1]);
        if !at_start {
            return;
        }
        match (word, self.cases.last()) {
            (b"case", None | Some(Case::Body)) => self.cases.push(Case::WantIn),
            (b"in", Some(Case::WantIn)) => self.set_case(Case::Pattern),
            (b"esac", Some(Case::Pattern | Case::Body)) => {
                self.cases.pop();
            }
            _ => {}
        }
    }

    /// `'…'` (no escapes) or, with `ansi`, `$'…'` (backslash escapes) from `start`.
    fn single_quoted(&mut self, start: usize, ansi: bool) {
        let mut i = self.pos + 1;
        while i < self.t.len() {
            match self.t[i] {
                b'\\' if ansi => i += 2,
                b'\'' => {
                    self.scan.blank(start, i + 1);
                    self.pos = i + 1;
                    return;
                }
                _ => i += 1,
            }
        }
        self.unclosed(if ansi { "$'" } else { "'" }, start);
    }

    fn double_quoted(&mut self) {
        let start = self.pos;
        let mut seg = start;
        let mut i = start + 1;
        while i < self.t.len() && !self.scan.stopped() {
            match (self.t[i], self.at(i + 1)) {
                (b'\\', _) => i += 2,
                (b'"', _) => {
                    self.scan.blank(seg, i + 1);
                    self.pos = i + 1;
                    return;
                }
                (b'$', b'(') => {
                    self.scan.blank(seg, i + 1);
                    self.pos = i + 2;
                    self.code(true);
                    if self.pos >= self.t.len() {
                        return self.unclosed("$(", i);
                    }
                    i = self.pos + 1;
                    seg = i;
                }
                (b'$', b'{') | (b'`', _) => {
                    self.scan.blank(seg, i);
                    self.pos = i;
                    if self.t[i] == b'`' {
                        self.backquoted();
                    } else {
                        self.parameter();
                    }
                    i = self.pos;
                    seg = i;
                }
                _ => i += 1,
            }
        }
        if !self.scan.stopped() {
            self.unclosed("\"", start);
        }
    }

    /// `` `…` `` (old command substitution): blanked whole.
    fn backquoted(&mut self) {
        let start = self.pos;
        let mut i = start + 1;
        while i < self.t.len() {
            match self.t[i] {
                b'\\' => i += 2,
                b'`' => {
                    self.scan.blank(start, i + 1);
                    self.pos = i + 1;
                    return;
                }
                _ => i += 1,
            }
        }
        self.unclosed("`", start);
    }

    fn dollar(&mut self) {
        match self.at(self.pos + 1) {
            b'\'' => {
                let start = self.pos;
                self.pos += 1;
                self.single_quoted(start, true);
            }
            b'{' => self.parameter(),
            _ => self.pos += 1,
        }
    }

    /// `${…}`: blanked whole (`#`, `%` and quotes inside are operators or nested words).
    fn parameter(&mut self) {
        let start = self.pos;
        let mut depth = 0usize;
        let mut i = start + 1;
        while i < self.t.len() {
            match self.t[i] {
                b'\\' => i += 2,
                b'{' => {
                    depth += 1;
                    i += 1;
                }
                b'}' => {
                    depth -= 1;
                    i += 1;
                    if depth == 0 {
                        self.scan.blank(start, i);
                        self.pos = i;
                        return;
                    }
                }
                q @ (b'\'' | b'"') => {
                    i = match self.t[i + 1..].iter().position(|&b| b == q) {
                        Some(n) => i + n + 2,
                        None => self.t.len(),
                    }
                }
                _ => i += 1,
            }
        }
        self.unclosed("${", start);
    }

    /// `<<WORD`, `<<-WORD`, `<<'WORD'`, `<<"WORD"`, `<<\WORD`; `<<<` is a here-string and
    /// `<<` inside `((…))` a shift.
    fn heredoc_operator(&mut self) {
        let start = self.pos;
        if self.at(start + 2) == b'<' {
            self.pos += 3;
            return;
        }
        let line_start = self.t[..start]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1);
        let before = &self.t[line_start..start];
        let opened = before.windows(2).rposition(|w| w == b"((");
        let closed = before.windows(2).rposition(|w| w == b"))");
        if opened.is_some() && opened > closed {
            self.pos += 2;
            return;
        }
        let mut i = start + 2;
        let strip_tabs = self.at(i) == b'-';
        if strip_tabs {
            i += 1;
        }
        while matches!(self.at(i), b' ' | b'\t') {
            i += 1;
        }
        let word_start = i;
        let mut delim = Vec::new();
        while i < self.t.len() {
            match self.t[i] {
                q @ (b'\'' | b'"') => {
                    let n = self.t[i + 1..].iter().position(|&b| b == q || b == b'\n');
                    let end = n.map_or(self.t.len(), |n| i + 1 + n);
                    delim.extend_from_slice(&self.t[i + 1..end]);
                    i = (end + 1).min(self.t.len());
                }
                b'\\' => i += 1,
                b if is_word(b) => {
                    delim.push(b);
                    i += 1;
                }
                _ => break,
            }
        }
        self.scan.blank(word_start, i);
        self.pos = i;
        if !delim.is_empty() {
            self.heredocs.push(Heredoc {
                delim,
                strip_tabs,
                open_at: start,
            });
        }
    }

    /// At a line start after here-document operators: blank their bodies, in order.
    fn heredoc_bodies(&mut self) {
        let docs = std::mem::take(&mut self.heredocs);
        for (n, doc) in docs.iter().enumerate() {
            let body = self.pos;
            loop {
                if self.pos >= self.t.len() {
                    self.scan.blank(body, self.t.len());
                    self.heredocs = docs.into_iter().skip(n).collect();
                    return;
                }
                let end = self.t[self.pos..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(self.t.len(), |e| self.pos + e);
                let mut line = &self.t[self.pos..end];
                if let Some(l) = line.strip_suffix(b"\r") {
                    line = l;
                }
                if doc.strip_tabs {
                    while let Some(l) = line.strip_prefix(b"\t") {
                        line = l;
                    }
                }
                let next = (end + 1).min(self.t.len());
                if line == doc.delim.as_slice() {
                    self.scan.blank(body, next);
                    self.pos = next;
                    break;
                }
                self.pos = next;
            }
        }
    }
}
