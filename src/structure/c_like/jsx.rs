//! JSX inside JavaScript (`.js`, `.jsx`, `.tsx`): elements are recorded as tags, their text and
//! attribute strings blanked, their `{…}` expressions lexed as code.
//!
//! Stage: structure signals, part of the brace lexer. Pure; only reached where an expression
//! may start, so `a < b` stays a comparison.

use super::{Lexer, Prev, MAX_NESTING};
use crate::structure::scan::{is_ident, Tag, TagKind};

/// JSX: elements inside JavaScript, only in `.jsx`/`.tsx` and only where an expression may
/// start (so `a < b` stays a comparison).
impl Lexer<'_, '_> {
    pub(super) fn jsx_starts(&self) -> bool {
        if !self.lang.has_jsx() || !self.prev.expression_may_start() {
            return false;
        }
        let next = self.at(self.pos + 1);
        next == b'>' || next.is_ascii_alphabetic() || next == b'_' || next == b'$'
    }

    fn jsx_name(&mut self) -> (usize, usize) {
        let start = self.pos;
        while self.pos < self.t.len() {
            let b = self.t[self.pos];
            if is_ident(b) || matches!(b, b'.' | b':' | b'-' | b'$') {
                self.pos += 1;
            } else {
                break;
            }
        }
        (start, self.pos)
    }

    /// An element from its `<`: the head (attributes, `{…}` expressions), then its children
    /// up to the matching close tag. Tags are recorded; everything but `{…}` is blanked.
    pub(super) fn jsx_element(&mut self) {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            self.scan.gave_up = Some(format!("JSX nests deeper than {MAX_NESTING} levels"));
            return;
        }
        let start = self.pos;
        let index = self.scan.tags.len();
        self.pos += 1;
        let name = self.jsx_name();
        self.scan.tags.push(Tag {
            kind: TagKind::Open,
            start,
            end: start,
            name,
        });
        let mut seg = start;
        loop {
            if self.scan.stopped() {
                break;
            }
            if self.pos >= self.t.len() {
                let len = self.t.len();
                self.blank(seg, len);
                self.scan.tags[index].end = len;
                let open = format!("<{}", String::from_utf8_lossy(&self.t[name.0..name.1]));
                self.fail_unclosed(&open, start, len, false);
                break;
            }
            match (self.t[self.pos], self.at(self.pos + 1)) {
                (b'/', b'>') | (b'>', _) => {
                    let empty = self.t[self.pos] == b'/';
                    self.pos += if empty { 2 } else { 1 };
                    self.blank(seg, self.pos);
                    self.scan.tags[index].end = self.pos;
                    if empty {
                        self.scan.tags[index].kind = TagKind::Empty;
                    } else {
                        self.jsx_children();
                    }
                    break;
                }
                (b'{', _) => {
                    self.blank(seg, self.pos);
                    self.jsx_expression();
                    seg = self.pos;
                }
                (b'"' | b'\'', _) => {
                    let q = self.t[self.pos];
                    match self.t[self.pos + 1..].iter().position(|&b| b == q) {
                        Some(n) => self.pos += n + 2,
                        None => {
                            let len = self.t.len();
                            self.blank(seg, len);
                            self.fail_unclosed(&char::from(q).to_string(), self.pos, len, false);
                        }
                    }
                }
                _ => self.pos += 1,
            }
        }
        self.nesting -= 1;
        self.prev = Prev::Value;
    }

    /// `{…}` in JSX: code whose braces stay in the mask.
    fn jsx_expression(&mut self) {
        self.pos += 1;
        self.prev = Prev::Start;
        self.code(true);
        if self.pos < self.t.len() {
            self.pos += 1;
        }
    }

    /// Children up to (and including) the close tag: text is blanked.
    fn jsx_children(&mut self) {
        let mut seg = self.pos;
        loop {
            if self.scan.stopped() {
                return;
            }
            if self.pos >= self.t.len() {
                let len = self.t.len();
                self.blank(seg, len);
                return;
            }
            match (self.t[self.pos], self.at(self.pos + 1)) {
                (b'{', _) => {
                    self.blank(seg, self.pos);
                    self.jsx_expression();
                    seg = self.pos;
                }
                (b'<', b'/') => {
                    self.blank(seg, self.pos);
                    let start = self.pos;
                    self.pos += 2;
                    while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
                        self.pos += 1;
                    }
                    let name = self.jsx_name();
                    let gt = self.t[self.pos..].iter().position(|&b| b == b'>');
                    self.pos = gt.map_or(self.t.len(), |g| self.pos + g + 1);
                    self.blank(start, self.pos);
                    self.scan.tags.push(Tag {
                        kind: TagKind::Close,
                        start,
                        end: self.pos,
                        name,
                    });
                    return;
                }
                (b'<', _) => {
                    self.blank(seg, self.pos);
                    self.jsx_element();
                    seg = self.pos;
                }
                _ => self.pos += 1,
            }
        }
    }
}
