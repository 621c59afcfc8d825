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
///
/// Line contents and endings are kept in two vectors (16 + 1 bytes a line): the locator
/// matches on [`Text::contents`] directly, and a run of untouched lines is one slice of the
/// input ([`Text::span`]), so a large file costs little beyond its own bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<'a> {
    /// The file starts with a UTF-8 BOM (not part of line 1).
    pub bom: bool,
    /// The bytes after the BOM; every line borrows from it, in order and without gaps.
    body: &'a [u8],
    contents: Vec<&'a [u8]>,
    endings: Vec<Ending>,
}

impl<'a> Text<'a> {
    /// Split `bytes` into lines. An empty file (or one holding only a BOM) has no lines.
    pub fn parse(bytes: &'a [u8]) -> Self {
        let (bom, body) = match bytes.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        // A guess, not a count (counting costs a pass over the file): a vector that outgrows
        // it is moved by the allocator's remapping, not copied, when it is large.
        let guess = body.len() / 32 + 16;
        let mut contents = Vec::with_capacity(guess);
        let mut endings = Vec::with_capacity(guess);
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', body) {
            if i > start && body[i - 1] == b'\r' {
                contents.push(&body[start..i - 1]);
                endings.push(Ending::CrLf);
            } else {
                contents.push(&body[start..i]);
                endings.push(Ending::Lf);
            }
            start = i + 1;
        }
        if start < body.len() {
            contents.push(&body[start..]);
            endings.push(Ending::None);
        }
        Text {
            bom,
            body,
            contents,
            endings,
        }
    }

    /// `bytes` as one line without an ending and without a BOM, whatever it holds (a file
    /// holding only a BOM, matched as the one line a diff tool shows for it).
    pub fn single_line(bytes: &'a [u8]) -> Self {
        Text {
            bom: false,
            body: bytes,
            contents: vec![bytes],
            endings: vec![Ending::None],
        }
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.contents.len()
    }

    /// True when the file has no lines.
    pub fn is_empty(&self) -> bool {
        self.contents.is_empty()
    }

    /// Line `i` (0-based), if there is one.
    pub fn get(&self, i: usize) -> Option<TextLine<'a>> {
        Some(TextLine {
            content: self.contents.get(i)?,
            ending: self.endings[i],
        })
    }

    /// Every line, in order.
    pub fn lines(&self) -> impl DoubleEndedIterator<Item = TextLine<'a>> + ExactSizeIterator + '_ {
        self.contents
            .iter()
            .zip(&self.endings)
            .map(|(content, ending)| TextLine {
                content,
                ending: *ending,
            })
    }

    /// The contents of every line, without endings: what the locator matches.
    pub fn contents(&self) -> &[&'a [u8]] {
        &self.contents
    }

    /// The ending of every line.
    pub fn endings(&self) -> &[Ending] {
        &self.endings
    }

    /// The bytes of lines `from..to` with their endings, as they stand in the file.
    pub fn span(&self, from: usize, to: usize) -> &'a [u8] {
        let to = to.min(self.len());
        if from >= to {
            return &[];
        }
        let start = self.offset(from);
        let end = self.offset(to - 1)
            + self.contents[to - 1].len()
            + self.endings[to - 1].as_bytes().len();
        &self.body[start..end]
    }

    /// Where line `i` starts in the body (lines borrow from it, so this is pointer
    /// arithmetic, no search).
    fn offset(&self, i: usize) -> usize {
        self.contents[i].as_ptr() as usize - self.body.as_ptr() as usize
    }

    /// True when the last line ends in a newline (an empty file counts as ending in one).
    pub fn ends_with_newline(&self) -> bool {
        self.endings.last().is_none_or(|e| *e != Ending::None)
    }

    /// Reassemble the exact bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + BOM.len());
        if self.bom {
            out.extend_from_slice(BOM);
        }
        out.extend_from_slice(self.span(0, self.len()));
        out
    }

    /// The ending most lines use (LF when there is no line with an ending): what a line
    /// gets when no neighbour decides.
    pub fn dominant_ending(&self) -> Ending {
        let crlf = self.endings.iter().filter(|e| **e == Ending::CrLf).count();
        let lf = self.endings.iter().filter(|e| **e == Ending::Lf).count();
        if crlf > lf {
            Ending::CrLf
        } else {
            Ending::Lf
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_endings_round_trip() {
        let input = b"\xEF\xBB\xBFa\r\nb\nc\rd";
        let text = Text::parse(input);
        assert!(text.bom);
        assert_eq!(text.len(), 3);
        assert_eq!(text.endings(), [Ending::CrLf, Ending::Lf, Ending::None]);
        assert_eq!(text.contents()[2], b"c\rd");
        assert_eq!(text.span(1, 3), b"b\nc\rd");
        assert_eq!(text.span(0, 1), b"a\r\n");
        assert_eq!(text.span(2, 2), b"");
        assert!(!text.ends_with_newline());
        assert_eq!(text.to_bytes(), input);
    }

    #[test]
    fn empty_and_bom_only_have_no_lines() {
        assert!(Text::parse(b"").is_empty());
        let t = Text::parse(BOM);
        assert!(t.bom && t.is_empty());
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

    proptest::proptest! {
        /// The lines cover the input exactly: the bytes come back, and a span is the lines
        /// it names with their endings.
        #[test]
        fn lines_cover_the_input(bytes in proptest::collection::vec(
            proptest::sample::select(vec![b'a', b'\r', b'\n', 0xEF, 0xBB, 0xBF]), 0..40),
            a in 0usize..20, b in 0usize..20)
        {
            let text = Text::parse(&bytes);
            proptest::prop_assert_eq!(text.to_bytes(), bytes.clone());
            let (from, to) = (a.min(b), a.max(b));
            let joined: Vec<u8> = text
                .lines()
                .skip(from)
                .take(to.saturating_sub(from))
                .flat_map(|l| [l.content, l.ending.as_bytes()].concat())
                .collect();
            proptest::prop_assert_eq!(text.span(from, to), joined.as_slice());
            proptest::prop_assert!(text.lines().all(|l| !l.content.contains(&b'\n')));
        }
    }
}
