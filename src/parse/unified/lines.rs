//! Stage: parse (unified diffs). The patch input seen as numbered lines, a cursor over them,
//! and the conversion of a failure at a spot of a line into a [`ParseError`].
//!
//! Pure; knows nothing of diff syntax beyond "a line ends at LF".

use crate::parse::quoted::Fail;
use crate::parse::ParseError;

/// One line of the patch input: its bytes without the LF, and its 1-based number in the whole
/// input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawLine<'a> {
    pub text: &'a [u8],
    pub number: usize,
}

impl<'a> RawLine<'a> {
    /// The line without a trailing CR: CRLF patches read like LF ones (line endings never
    /// count, SPEC §5).
    pub fn body(&self) -> &'a [u8] {
        self.text.strip_suffix(b"\r").unwrap_or(self.text)
    }

    /// A parse error at byte offset `at` of the line (0-based), turned into a 1-based column in
    /// characters.
    pub fn error_at(&self, at: usize, message: impl Into<String>) -> ParseError {
        let at = at.min(self.text.len());
        let column = String::from_utf8_lossy(&self.text[..at]).chars().count() + 1;
        ParseError {
            line: self.number,
            column,
            line_text: crate::parse::position::excerpt(self.body(), column),
            located: true,
            message: message.into(),
            within: None,
            hint: None,
            hint_parts: None,
        }
    }

    /// A parse error for a nom failure that left `fail.remaining` bytes of `input`, where
    /// `input` is a suffix of this line's body.
    pub fn error_from(&self, input: &[u8], fail: Fail) -> ParseError {
        let start = self.body().len().saturating_sub(input.len());
        let at = start + input.len().saturating_sub(fail.remaining);
        self.error_at(at, fail.message)
    }

    /// An error at the start of the line.
    pub fn error(&self, message: impl Into<String>) -> ParseError {
        self.error_at(0, message)
    }
}

/// Adds a hint to a parse error.
pub fn with_hint(err: ParseError, hint: impl Into<crate::spelling::Hint>) -> ParseError {
    err.with_hint(hint)
}

/// The lines from a start offset, and a position among them.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    lines: Vec<RawLine<'a>>,
    pub pos: usize,
    /// The number the line after the last one would have (for "end of input" errors).
    end_number: usize,
}

impl<'a> Cursor<'a> {
    /// Split `input[start..]` into lines numbered from the beginning of `input`.
    pub fn new(input: &'a [u8], start: usize) -> Self {
        let start = start.min(input.len());
        let mut number = 1 + memchr::memchr_iter(b'\n', &input[..start]).count();
        let body = &input[start..];
        let mut lines = Vec::new();
        let mut from = 0;
        for end in memchr::memchr_iter(b'\n', body) {
            lines.push(RawLine {
                text: &body[from..end],
                number,
            });
            number += 1;
            from = end + 1;
        }
        if from < body.len() {
            lines.push(RawLine {
                text: &body[from..],
                number,
            });
            number += 1;
        }
        Cursor {
            lines,
            pos: 0,
            end_number: number,
        }
    }

    /// The line at the cursor.
    pub fn peek(&self) -> Option<RawLine<'a>> {
        self.lines.get(self.pos).copied()
    }

    /// The line `n` lines after the cursor.
    pub fn peek_at(&self, n: usize) -> Option<RawLine<'a>> {
        self.lines.get(self.pos + n).copied()
    }

    /// The line at the cursor, moving past it.
    pub fn next_line(&mut self) -> Option<RawLine<'a>> {
        let line = self.peek()?;
        self.pos += 1;
        Some(line)
    }

    /// An error about the end of the input.
    pub fn error_at_end(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.end_number,
            column: 1,
            line_text: String::new(),
            located: true,
            message: message.into(),
            within: None,
            hint: None,
            hint_parts: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_from_the_input_start() {
        let input = b"prose\nmore\n--- a\r\n+++ b";
        let cur = Cursor::new(input, 11);
        let first = cur.peek().expect("a line");
        assert_eq!(first.number, 3);
        assert_eq!(first.body(), b"--- a");
        assert_eq!(cur.peek_at(1).map(|l| l.text), Some(&b"+++ b"[..]));
        assert!(cur.peek_at(2).is_none());
    }

    #[test]
    fn columns_count_characters() {
        let line = RawLine {
            text: "é=x".as_bytes(),
            number: 4,
        };
        let err = line.error_at(3, "bad");
        assert_eq!((err.line, err.column), (4, 3));
    }
}
