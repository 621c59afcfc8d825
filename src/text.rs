//! A file's bytes seen as lines, each with its own ending, plus the BOM and final-newline
//! state: the representation the locator matches against and the planner splices.
//!
//! Stage: shared by locate and plan. Pure; no I/O. Only `\n` ends a line; a `\r` right
//! before it makes the ending CRLF; a lone `\r` is content.

/// How one line ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    Lf,
    CrLf,
    /// The last line of a file without a final newline.
    None,
}

impl Ending {
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Ending::Lf => b"\n",
            Ending::CrLf => b"\r\n",
            Ending::None => b"",
        }
    }
}

/// The UTF-8 byte-order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of a file: its content (no ending) and its ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextLine<'a> {
    pub content: &'a [u8],
    pub ending: Ending,
}

/// A file split into lines. `Text::parse(b).to_bytes() == b` for every input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a> {
    /// The file starts with a UTF-8 BOM (not part of line 1).
    pub bom: bool,
    pub lines: Vec<TextLine<'a>>,
}

impl<'a> Text<'a> {
    /// Split `bytes` into lines. An empty file (or one holding only a BOM) has no lines.
    pub fn parse(bytes: &'a [u8]) -> Self {
        let (bom, body) = match bytes.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let mut lines = Vec::with_capacity(memchr_count(body) + 1);
        let mut rest = body;
        while !rest.is_empty() {
            match memchr::memchr(b'\n', rest) {
                Some(i) => {
                    let (content, ending) = if i > 0 && rest[i - 1] == b'\r' {
                        (&rest[..i - 1], Ending::CrLf)
                    } else {
                        (&rest[..i], Ending::Lf)
                    };
                    lines.push(TextLine { content, ending });
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(TextLine {
                        content: rest,
                        ending: Ending::None,
                    });
                    rest = &[];
                }
            }
        }
        Text { bom, lines }
    }

    /// True when the last line ends in a newline (an empty file counts as ending in one).
    pub fn ends_with_newline(&self) -> bool {
        self.lines.last().is_none_or(|l| l.ending != Ending::None)
    }

    /// The contents of every line, without endings: what the locator matches.
    pub fn contents(&self) -> Vec<&'a [u8]> {
        self.lines.iter().map(|l| l.content).collect()
    }

    /// Reassemble the exact bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let len: usize = self
            .lines
            .iter()
            .map(|l| l.content.len() + l.ending.as_bytes().len())
            .sum();
        let mut out = Vec::with_capacity(len + 3);
        if self.bom {
            out.extend_from_slice(BOM);
        }
        for l in &self.lines {
            out.extend_from_slice(l.content);
            out.extend_from_slice(l.ending.as_bytes());
        }
        out
    }

    /// The ending most lines use (LF when there is no line with an ending): what a line
    /// gets when no neighbour decides.
    pub fn dominant_ending(&self) -> Ending {
        let crlf = self
            .lines
            .iter()
            .filter(|l| l.ending == Ending::CrLf)
            .count();
        let lf = self.lines.iter().filter(|l| l.ending == Ending::Lf).count();
        if crlf > lf {
            Ending::CrLf
        } else {
            Ending::Lf
        }
    }
}

fn memchr_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_endings_round_trip() {
        let input = b"\xEF\xBB\xBFa\r\nb\nc\rd";
        let text = Text::parse(input);
        assert!(text.bom);
        assert_eq!(text.lines.len(), 3);
        assert_eq!(text.lines[0].ending, Ending::CrLf);
        assert_eq!(text.lines[1].ending, Ending::Lf);
        assert_eq!(text.lines[2].content, b"c\rd");
        assert_eq!(text.lines[2].ending, Ending::None);
        assert!(!text.ends_with_newline());
        assert_eq!(text.to_bytes(), input);
    }

    #[test]
    fn empty_and_bom_only_have_no_lines() {
        assert!(Text::parse(b"").lines.is_empty());
        let t = Text::parse(BOM);
        assert!(t.bom && t.lines.is_empty());
        assert!(t.ends_with_newline());
    }

    #[test]
    fn dominant_ending_prefers_majority() {
        assert_eq!(
            Text::parse(b"a\r\nb\r\nc\n").dominant_ending(),
            Ending::CrLf
        );
        assert_eq!(Text::parse(b"a").dominant_ending(), Ending::Lf);
    }
}
