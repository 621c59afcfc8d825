//! What every lexer produces: a *mask* of the text in which strings, comments and other
//! non-code bytes are blanked (newlines kept, so offsets and line numbers stay those of the
//! text), the markup tags it met, the multi-line strings it crossed, and the first lexical
//! problem (an unclosed string or comment).
//!
//! Stage: structure signals. Pure; the matcher ([`super::balance`]) and the range finder read
//! this, they never look at strings or comments again.

use super::Lang;

/// What a markup tag event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TagKind {
    /// `<name …>`: opens an element.
    Open,
    /// `</name>`: closes one.
    Close,
    /// `<name …/>` or a void element (`<br>`): opens and closes at once.
    Empty,
}

/// One markup tag, by byte offsets into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tag {
    pub kind: TagKind,
    /// Offset of the `<`.
    pub start: usize,
    /// Offset just after the `>` (the end of the text when the tag is cut off).
    pub end: usize,
    /// The name's byte range.
    pub name: (usize, usize),
}

/// A problem found by a lexer (or the matcher), by byte offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawProblem {
    pub kind: super::ProblemKind,
    /// Where it was noticed.
    pub at: usize,
    /// What was found there: a delimiter, `end of line` or `end of file`.
    pub found: String,
    /// What was open, and the offset where it was opened.
    pub open: Option<(String, usize)>,
}

impl RawProblem {
    /// A delimiter opened at `open_at` that is still open at `at` (end of line or file).
    pub fn unclosed(open: &str, open_at: usize, at: usize, found: &str) -> Self {
        RawProblem {
            kind: super::ProblemKind::Unclosed,
            at,
            found: found.to_string(),
            open: Some((open.to_string(), open_at)),
        }
    }
}

/// The result of lexing one text.
#[derive(Debug, Clone)]
pub(crate) struct Scan {
    /// The text with every non-code byte replaced by a space, newlines kept.
    pub mask: Vec<u8>,
    /// Markup tags, in the order of their `<`.
    pub tags: Vec<Tag>,
    /// Byte ranges of strings, comments and scalars that contain a newline: a line starting
    /// inside one is a continuation, not a statement.
    pub spans: Vec<(usize, usize)>,
    /// The first lexical problem; the mask is only meaningful before its offset.
    pub problem: Option<RawProblem>,
    /// Set when the lexer stopped for a reason that is not the text's fault (nesting deeper
    /// than it follows): the result is then "not checked".
    pub gave_up: Option<String>,
    /// The language whose rules decide what a block header declares (JavaScript for the
    /// scripts of an HTML or Vue file).
    pub code_lang: Lang,
}

impl Scan {
    /// A scan whose mask starts as a copy of the text (lexers blank what is not code).
    pub fn copy_of(text: &[u8], lang: Lang) -> Self {
        Scan {
            mask: text.to_vec(),
            tags: Vec::new(),
            spans: Vec::new(),
            problem: None,
            gave_up: None,
            code_lang: lang,
        }
    }

    /// A scan whose mask starts blank (lexers copy in what is code).
    pub fn blank_of(text: &[u8], lang: Lang) -> Self {
        let mask = text
            .iter()
            .map(|&b| if b == b'\n' { b'\n' } else { b' ' })
            .collect();
        Scan {
            mask,
            tags: Vec::new(),
            spans: Vec::new(),
            problem: None,
            gave_up: None,
            code_lang: lang,
        }
    }

    /// Blank `start..end` (newlines kept) and remember the span when it crosses a line.
    pub fn blank(&mut self, start: usize, end: usize) {
        let end = end.min(self.mask.len());
        if start >= end {
            return;
        }
        let mut multi = false;
        for b in &mut self.mask[start..end] {
            if *b == b'\n' {
                multi = true;
            } else {
                *b = b' ';
            }
        }
        if multi {
            self.spans.push((start, end));
        }
    }

    /// Record the first problem (later ones are ignored: only the first is reported).
    pub fn fail(&mut self, problem: RawProblem) {
        if self.problem.is_none() {
            self.problem = Some(problem);
        }
    }

    /// True once a problem was recorded or the lexer gave up: lexers stop then.
    pub fn stopped(&self) -> bool {
        self.problem.is_some() || self.gave_up.is_some()
    }
}

/// Start offsets of every line of `text` (line 1 starts at 0).
pub(crate) fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = Vec::with_capacity(text.len() / 32 + 1);
    starts.push(0);
    starts.extend(
        text.iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i + 1),
    );
    starts
}

/// 1-based line and column (in characters) of byte `offset`, given the line starts.
pub(crate) fn line_col(text: &[u8], starts: &[usize], offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let line = starts.partition_point(|&s| s <= offset).max(1);
    let start = starts[line - 1];
    let column = text[start..offset]
        .iter()
        .filter(|&&b| (b & 0xC0) != 0x80)
        .count()
        + 1;
    (line, column)
}

/// True for bytes that may continue an identifier (ASCII word bytes and any non-ASCII byte,
/// so that UTF-8 identifiers stay whole).
pub(crate) fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let text = "ab\néé{\n".as_bytes();
        let starts = line_starts(text);
        assert_eq!(starts, vec![0, 3, 9]);
        assert_eq!(line_col(text, &starts, 0), (1, 1));
        assert_eq!(line_col(text, &starts, 7), (2, 3));
        assert_eq!(line_col(text, &starts, 9), (3, 1));
    }

    #[test]
    fn blank_keeps_newlines_and_records_spans() {
        let mut scan = Scan::copy_of(b"a\"b\nc\"d", Lang::Rust);
        scan.blank(1, 6);
        assert_eq!(scan.mask, b"a  \n  d");
        assert_eq!(scan.spans, vec![(1, 6)]);
    }
}
