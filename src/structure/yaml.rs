//! Lexer for YAML: plain scalars (where `'` and `[` are just text), quoted scalars
//! (`"…"` with escapes, `'…'` with `''`, both may cross lines), `#` comments, block scalars
//! (`|`, `>`: their lines are text, however they look) and flow collections (`[…]`, `{…}`,
//! whose brackets stay in the mask for the matcher). Indicators `-`, `?`, `:` stay too.
//!
//! Stage: structure signals. Pure and linear; it does not build the document.

use super::lang::Lang;
use super::scan::{RawProblem, Scan};

/// Lex a YAML text.
pub(crate) fn lex(text: &[u8]) -> Scan {
    let mut scan = Scan::copy_of(text, Lang::Yaml);
    let mut y = Yaml {
        t: text,
        scan: &mut scan,
        block_parent: None,
    };
    let mut i = 0;
    while i < text.len() && !y.scan.stopped() {
        i = y.line(i);
    }
    scan
}

struct Yaml<'t, 's> {
    t: &'t [u8],
    scan: &'s mut Scan,
    /// Inside a block scalar: the column its lines must be deeper than.
    block_parent: Option<usize>,
}

impl Yaml<'_, '_> {
    fn at(&self, i: usize) -> u8 {
        self.t.get(i).copied().unwrap_or(0)
    }

    fn eol(&self, from: usize) -> usize {
        self.t[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.t.len(), |n| from + n)
    }

    fn column(&self, i: usize) -> usize {
        i - self.t[..i]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |n| n + 1)
    }

    /// Space, end of line or end of text after `i`: what makes `-`, `?`, `:` indicators.
    fn blank_after(&self, i: usize) -> bool {
        matches!(self.at(i + 1), b' ' | b'\t' | b'\n' | b'\r' | 0)
    }

    /// Lex the line starting at `start`; returns the start of the next line to lex.
    fn line(&mut self, start: usize) -> usize {
        let end = self.eol(start);
        let indent = self.t[start..end]
            .iter()
            .take_while(|&&b| b == b' ')
            .count();
        let content = &self.t[start + indent..end];
        if let Some(parent) = self.block_parent {
            let blank = content.iter().all(|b| b.is_ascii_whitespace());
            if blank || indent > parent {
                self.scan.blank(start, end);
                return end + 1;
            }
            self.block_parent = None;
        }
        if indent == 0 && content.starts_with(b"%") {
            self.scan.blank(start, end);
            return end + 1;
        }
        let mut i = start + indent;
        if indent == 0 && (content.starts_with(b"---") || content.starts_with(b"...")) {
            i += 3;
        }
        self.node(i, indent)
    }

    /// Nodes from `i` to the end of the line (or beyond, for quoted scalars and flow
    /// collections that cross lines). `owner` is the column of the key or `-` that owns a
    /// block scalar started here.
    fn node(&mut self, mut i: usize, mut owner: usize) -> usize {
        loop {
            while matches!(self.at(i), b' ' | b'\t' | b'\r') {
                i += 1;
            }
            if i >= self.t.len() || self.t[i] == b'\n' {
                return i + 1;
            }
            match self.t[i] {
                b'#' => {
                    let end = self.eol(i);
                    self.scan.blank(i, end);
                    return end + 1;
                }
                b'-' | b'?' | b':' if self.blank_after(i) => {
                    if self.t[i] == b'-' {
                        owner = self.column(i);
                    }
                    i += 1;
                }
                b'&' | b'!' | b'*' => {
                    let start = i;
                    while i < self.t.len() && !self.t[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    self.scan.blank(start, i);
                }
                b'|' | b'>' => {
                    let end = self.eol(i);
                    self.scan.blank(i + 1, end);
                    self.block_parent = Some(owner);
                    return end + 1;
                }
                b'"' | b'\'' => i = self.quoted(i),
                b'[' | b'{' => i = self.flow(i),
                _ => match self.plain(i, false) {
                    (next, true) => {
                        owner = self.column(i);
                        i = next;
                    }
                    (next, false) => i = next,
                },
            }
            if self.scan.stopped() {
                return self.t.len();
            }
        }
    }

    /// A plain scalar from `i`: blanked up to `: `, ` #`, the end of the line (or, in a flow
    /// collection, `,[]{}`). Returns where it stopped and whether it was a key (`:` follows;
    /// the `:` is left for the caller).
    fn plain(&mut self, start: usize, in_flow: bool) -> (usize, bool) {
        let mut i = start;
        while i < self.t.len() {
            match self.t[i] {
                b'\n' => break,
                b':' if self.blank_after(i)
                    || (in_flow && matches!(self.at(i + 1), b',' | b']' | b'}')) =>
                {
                    self.scan.blank(start, i);
                    return (i, true);
                }
                b'#' if i > start && matches!(self.t[i - 1], b' ' | b'\t') => break,
                b',' | b'[' | b']' | b'{' | b'}' if in_flow => break,
                _ => i += 1,
            }
        }
        self.scan.blank(start, i);
        (i, false)
    }

    /// A quoted scalar at `i`; returns the offset after it.
    fn quoted(&mut self, start: usize) -> usize {
        let q = self.t[start];
        let mut i = start + 1;
        while i < self.t.len() {
            match (self.t[i], self.at(i + 1)) {
                (b'\\', _) if q == b'"' => i += 2,
                (b'\'', b'\'') if q == b'\'' => i += 2,
                (c, _) if c == q => {
                    self.scan.blank(start, i + 1);
                    return i + 1;
                }
                _ => i += 1,
            }
        }
        let len = self.t.len();
        self.scan.blank(start, len);
        let open = char::from(q).to_string();
        self.scan
            .fail(RawProblem::unclosed(&open, start, len, "end of file"));
        len
    }

    /// A flow collection from its `[` or `{`, across lines; its brackets stay in the mask.
    fn flow(&mut self, start: usize) -> usize {
        let mut depth = 0usize;
        let mut i = start;
        while i < self.t.len() && !self.scan.stopped() {
            match self.t[i] {
                b'[' | b'{' => {
                    depth += 1;
                    i += 1;
                }
                b']' | b'}' => {
                    i += 1;
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return i;
                    }
                }
                b',' | b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b':' | b'?' | b'-' if self.blank_after(i) => i += 1,
                b'#' if matches!(self.t[i - 1], b' ' | b'\t' | b'\n') => {
                    let end = self.eol(i);
                    self.scan.blank(i, end);
                    i = end;
                }
                b'"' | b'\'' => i = self.quoted(i),
                _ => {
                    let (next, key) = self.plain(i, true);
                    i = if key { next + 1 } else { next.max(i + 1) };
                }
            }
        }
        i
    }
}
