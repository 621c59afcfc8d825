//! Stage: parse (shared). Byte offsets of the patch input → 1-based line, column and a
//! readable excerpt of the line, for error messages and `patch_line` fields. Pure; never
//! fails, whatever the bytes (invalid UTF-8, 1 MB lines, offsets past the end).

/// The most characters of the input an error shows (SPEC §1: at most the offending line, cut
/// to 80 characters); columns beyond it are shown in a window around the column instead of
/// from the start of the line.
const MAX_SHOWN: usize = 80;
/// Characters shown on each side of the column inside such a window.
const HALF: usize = MAX_SHOWN / 2;

/// Where a byte offset lies in the input, in the terms a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Position {
    pub line: usize,
    pub column: usize,
    pub line_text: String,
}

impl Position {
    /// The 1-based line and character column of `offset` (clamped to the input), and an
    /// excerpt of that line (lossily decoded, control characters made visible, cut to a
    /// readable length around the column).
    pub fn of(input: &[u8], offset: usize) -> Position {
        let offset = offset.min(input.len());
        let line = 1 + count_newlines(&input[..offset]);
        let line_start = input[..offset]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line_end = input[offset..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(input.len(), |i| offset + i);
        let mut content = &input[line_start..line_end];
        if let Some(stripped) = content.strip_suffix(b"\r") {
            content = stripped;
        }
        let before = &input[line_start..offset.min(line_start + content.len())];
        let column = String::from_utf8_lossy(before).chars().count() + 1;
        Position {
            line,
            column,
            line_text: excerpt(content, column),
        }
    }
}

/// Bytes quoted inside a message: lossily decoded, control characters made visible, cut to
/// 80 characters.
pub(crate) fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out: String = text.chars().take(MAX_SHOWN).map(visible).collect();
    if text.chars().nth(MAX_SHOWN).is_some() {
        out.push('…');
    }
    out
}

fn visible(c: char) -> char {
    if c.is_control() && c != '\t' {
        '\u{FFFD}'
    } else {
        c
    }
}

/// Count `\n` bytes.
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// The shown part of a line (at most [`MAX_SHOWN`] of its characters, `…` where it is
/// cut): from its start when the column is near it, else a window of characters around the
/// column (see [`caret_index`]).
pub(crate) fn excerpt(content: &[u8], column: usize) -> String {
    let text = String::from_utf8_lossy(content);
    let visible = text.chars().map(visible);
    if column > MAX_SHOWN {
        let mut out = String::from("…");
        out.extend(visible.skip(column - 1 - HALF).take(MAX_SHOWN));
        if text.chars().count() > column - 1 - HALF + MAX_SHOWN {
            out.push('…');
        }
        out
    } else {
        let mut out: String = visible.take(MAX_SHOWN).collect();
        if text.chars().count() > MAX_SHOWN {
            out.push('…');
        }
        out
    }
}

/// The character index of the caret within `line_text` for a 1-based `column`: the inverse
/// of [`excerpt`]'s windowing, so a rendered error points at the right character.
pub(crate) fn caret_index(column: usize, line_text: &str) -> usize {
    if column > MAX_SHOWN && line_text.starts_with('…') {
        HALF + 1
    } else {
        column.saturating_sub(1)
    }
}

/// Turns increasing byte offsets into 1-based line numbers in one pass over the input.
pub(crate) struct LineCounter<'a> {
    input: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    pub fn new(input: &'a [u8]) -> Self {
        LineCounter {
            input,
            offset: 0,
            line: 1,
        }
    }

    /// The line of `offset`; offsets before the previous one are counted from the start.
    pub fn line_of(&mut self, offset: usize) -> usize {
        let offset = offset.min(self.input.len());
        if offset < self.offset {
            self.offset = 0;
            self.line = 1;
        }
        self.line += count_newlines(&self.input[self.offset..offset]);
        self.offset = offset;
        self.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_ignore_the_cr_of_crlf() {
        let input = b"ab\r\ncd\r\n";
        let pos = Position::of(input, 5);
        assert_eq!((pos.line, pos.column, pos.line_text.as_str()), (2, 2, "cd"));
        let start = Position::of(input, 0);
        assert_eq!((start.line, start.column), (1, 1));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let input = "é=x".as_bytes();
        assert_eq!(Position::of(input, 3).column, 3);
    }

    #[test]
    fn offsets_past_the_end_are_clamped() {
        let pos = Position::of(b"ab", 99);
        assert_eq!((pos.line, pos.column), (1, 3));
    }

    #[test]
    fn long_lines_are_windowed_around_the_column() {
        let line = "x".repeat(1000) + "Y" + &"z".repeat(1000);
        let pos = Position::of(line.as_bytes(), 1000);
        assert_eq!(pos.column, 1001);
        let shown: Vec<char> = pos.line_text.chars().collect();
        let caret = caret_index(pos.column, &pos.line_text);
        assert_eq!(shown[caret], 'Y');
        // At most 80 characters of the line, and the marks where it is cut.
        assert_eq!(shown.iter().filter(|&&c| c != '…').count(), MAX_SHOWN);
        assert_eq!((shown[0], shown[shown.len() - 1]), ('…', '…'));
    }

    #[test]
    fn a_long_line_is_cut_to_80_characters() {
        let line = "s".repeat(500);
        let pos = Position::of(line.as_bytes(), 3);
        assert_eq!(pos.line_text, format!("{}…", "s".repeat(80)));
        let near_the_end = Position::of(line.as_bytes(), 499);
        let shown: Vec<char> = near_the_end.line_text.chars().collect();
        assert_eq!(shown.iter().filter(|&&c| c != '…').count(), HALF + 1);
        assert_eq!(
            shown[caret_index(near_the_end.column, &near_the_end.line_text)],
            's'
        );
    }

    #[test]
    fn control_bytes_are_made_visible() {
        let pos = Position::of(b"a\x1b[31mb", 0);
        assert_eq!(pos.line_text, "a\u{FFFD}[31mb");
    }

    #[test]
    fn line_counter_matches_direct_counting() {
        let input = b"a\nb\nc\nd";
        let mut counter = LineCounter::new(input);
        assert_eq!(counter.line_of(0), 1);
        assert_eq!(counter.line_of(4), 3);
        assert_eq!(counter.line_of(6), 4);
        assert_eq!(counter.line_of(2), 2);
    }
}
