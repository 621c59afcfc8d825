//! Lexer for Python: `#` comments, single- and triple-quoted strings with any prefix
//! (`r`, `b`, `u`, `f`, `t` and pairs), and f-strings whose `{…}` fields hold code (with
//! nested strings) while `{{`/`}}` are text.
//!
//! Stage: structure signals. Pure and linear; indentation is not judged here (the range
//! finder reads the mask for that).

use super::lang::Lang;
use super::scan::{is_ident, RawProblem, Scan};

const MAX_NESTING: usize = 200;

/// Lex a Python text.
pub(crate) fn lex(text: &[u8]) -> Scan {
    let mut scan = Scan::copy_of(text, Lang::Python);
    let mut lexer = Py {
        t: text,
        pos: 0,
        scan: &mut scan,
        nesting: 0,
    };
    lexer.code(false);
    scan
}

struct Py<'t, 's> {
    t: &'t [u8],
    pos: usize,
    scan: &'s mut Scan,
    nesting: usize,
}

fn is_prefix(word: &[u8]) -> bool {
    word.len() <= 2
        && word
            .iter()
            .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f' | b't'))
}

impl Py<'_, '_> {
    fn at(&self, i: usize) -> u8 {
        self.t.get(i).copied().unwrap_or(0)
    }

    /// Lex code; with `in_braces`, stop at the `}` that ends an f-string field.
    fn code(&mut self, in_braces: bool) {
        if in_braces {
            self.nesting += 1;
            if self.nesting > MAX_NESTING {
                self.scan.gave_up = Some(format!("f-strings nest deeper than {MAX_NESTING}"));
                return;
            }
        }
        let mut depth = 0usize;
        while self.pos < self.t.len() && !self.scan.stopped() {
            match self.t[self.pos] {
                // In an f-string field `#` is part of a format spec (`{x:#x}`).
                b'#' if !in_braces => {
                    let end = self.t[self.pos..]
                        .iter()
                        .position(|&b| b == b'\n')
                        .map_or(self.t.len(), |n| self.pos + n);
                    self.scan.blank(self.pos, end);
                    self.pos = end;
                }
                b'{' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' if in_braces && depth == 0 => break,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    self.pos += 1;
                }
                b'"' | b'\'' => self.string(self.pos, self.pos),
                b if is_ident(b) => {
                    let start = self.pos;
                    while self.pos < self.t.len() && is_ident(self.t[self.pos]) {
                        self.pos += 1;
                    }
                    let quote = matches!(self.at(self.pos), b'"' | b'\'');
                    if quote && is_prefix(&self.t[start..self.pos]) {
                        self.string(start, self.pos);
                    }
                }
                _ => self.pos += 1,
            }
        }
        if in_braces {
            self.nesting -= 1;
        }
    }

    /// A string from `start` (its prefix) whose first quote is at `quote_at`.
    fn string(&mut self, start: usize, quote_at: usize) {
        let q = self.t[quote_at];
        let triple = self.t[quote_at..].starts_with(&[q, q, q]);
        let prefix = &self.t[start..quote_at];
        let formatted = prefix
            .iter()
            .any(|b| matches!(b.to_ascii_lowercase(), b'f' | b't'));
        let open_len = if triple { 3 } else { 1 };
        let open = String::from_utf8_lossy(&self.t[start..quote_at + open_len]).into_owned();
        let mut seg = start;
        let mut i = quote_at + open_len;
        loop {
            if i >= self.t.len() {
                let len = self.t.len();
                return self.unclosed(seg, &open, start, len, false);
            }
            match (self.t[i], self.at(i + 1)) {
                (b'\\', _) => i += 2,
                (c, _) if c == q && (!triple || self.t[i..].starts_with(&[q, q, q])) => {
                    let end = i + open_len;
                    self.scan.blank(seg, end);
                    if triple && self.t[start..end].contains(&b'\n') {
                        self.scan.spans.push((start, end));
                    }
                    self.pos = end;
                    return;
                }
                (b'\n', _) if !triple => return self.unclosed(seg, &open, start, i, true),
                (b'{', b'{') | (b'}', b'}') if formatted => i += 2,
                (b'{', _) if formatted => {
                    self.scan.blank(seg, i);
                    self.pos = i + 1;
                    self.code(true);
                    if self.scan.stopped() {
                        return;
                    }
                    if self.pos >= self.t.len() {
                        let len = self.t.len();
                        return self.unclosed(len, "{", i, len, false);
                    }
                    i = self.pos + 1;
                    seg = i;
                }
                _ => i += 1,
            }
        }
    }

    fn unclosed(&mut self, seg: usize, open: &str, open_at: usize, at: usize, eol: bool) {
        self.scan.blank(seg, at);
        let found = if eol { "end of line" } else { "end of file" };
        self.scan
            .fail(RawProblem::unclosed(open, open_at, at, found));
        self.pos = at;
    }
}
