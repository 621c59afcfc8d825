//! C, C++ and C# preprocessor lines: blanked (they are not code to match), and only the
//! first branch of each conditional is read.
//!
//! Stage: structure signals, part of the brace lexer. Pure; it does not evaluate conditions
//! (beyond `#if 0`) nor expand macros.

use super::{find, Lexer};
use crate::structure::lang::Lang;
use crate::structure::scan::is_ident;

impl Lexer<'_, '_> {
    /// A `#` that starts a line of C, C++ or C#: a preprocessor directive.
    pub(super) fn is_directive(&self) -> bool {
        matches!(self.lang, Lang::C | Lang::Cpp | Lang::CSharp)
            && self.t[..self.pos]
                .iter()
                .rev()
                .take_while(|&&b| b != b'\n')
                .all(|&b| b == b' ' || b == b'\t')
    }

    /// A directive line (with its `\` continuations) is blanked: `#include <…>`,
    /// `#error don't`, `#define BEGIN {` are not code to match. Only the first branch of a
    /// conditional is read (the `#else` branch after `#if 0`): two branches that each open a
    /// call would otherwise count twice.
    pub(super) fn directive(&mut self) {
        let start = self.pos;
        let end = self.directive_end(start);
        let word = directive_word(&self.t[start..end]);
        self.blank(start, end);
        self.pos = end;
        let if_zero = word == b"if" && {
            let rest = &self.t[start..end];
            let after = rest
                .iter()
                .position(|&b| b == b'f')
                .map_or(rest, |f| &rest[f + 1..]);
            let after = after.trim_ascii();
            after == b"0" || after.starts_with(b"0 ") || after.starts_with(b"0/")
        };
        match word {
            _ if if_zero => self.skip_branch(true),
            b"else" | b"elif" | b"elifdef" | b"elifndef" => self.skip_branch(false),
            _ => {}
        }
    }

    /// The end of the directive starting at `start`: its line, extended by `\`-newlines
    /// and by `/* … */` comments that run past the line's end.
    fn directive_end(&self, start: usize) -> usize {
        let mut i = start;
        loop {
            let end = self.line_end(i);
            match find(&self.t[..end], i, b"/*") {
                Some(open) => match find(self.t, open + 2, b"*/") {
                    Some(close) => i = close + 2,
                    None => return self.t.len(),
                },
                None if end < self.t.len() && self.t[i..end].trim_ascii_end().ends_with(b"\\") => {
                    i = end + 1;
                }
                None => return end,
            }
        }
    }

    /// Blank the lines of a conditional branch not read, from `self.pos` to its `#endif`
    /// (left for the main loop) or, with `to_else`, to its `#else`/`#elif` (consumed: that
    /// branch is the one read).
    fn skip_branch(&mut self, to_else: bool) {
        let from = self.pos;
        let mut depth = 0usize;
        let mut i = from;
        while i < self.t.len() {
            let end = self.line_end(i);
            let line = self.t[i..end].trim_ascii_start();
            if line.starts_with(b"#") {
                match directive_word(line) {
                    b"if" | b"ifdef" | b"ifndef" => depth += 1,
                    b"endif" if depth == 0 => {
                        self.blank(from, i);
                        self.pos = i;
                        return;
                    }
                    b"endif" => depth -= 1,
                    b"else" | b"elif" | b"elifdef" | b"elifndef" if depth == 0 && to_else => {
                        let end = self.directive_end(i);
                        self.blank(from, end);
                        self.pos = end;
                        return;
                    }
                    _ => {}
                }
            }
            i = end + 1;
        }
        let len = self.t.len();
        self.blank(from, len);
        self.pos = len;
    }
}

/// The word after the `#` of a directive line (`define` in `#  define X`).
fn directive_word(line: &[u8]) -> &[u8] {
    let line = line.trim_ascii_start();
    let rest = line.strip_prefix(b"#").unwrap_or(line).trim_ascii_start();
    let n = rest.iter().take_while(|&&b| is_ident(b)).count();
    &rest[..n]
}
