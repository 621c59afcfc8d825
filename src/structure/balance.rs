//! The bracket and tag matcher: walks a lexer's mask (`()`, `[]`, `{}`) and its markup tags
//! with one stack, and reports the first problem; in recording mode it also keeps every
//! `{…}` block and element it closed (for `range`), recovering from problems as it goes.
//!
//! Stage: structure signals. Pure and linear; it never looks at the original text except to
//! compare tag names, and never decides what is a string or a comment (the lexer did).

use super::lang::Lang;
use super::markup;
use super::scan::{RawProblem, Scan, TagKind};
use super::ProblemKind;

/// A closed `{…}` block, by byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    /// Offset of the `{`.
    pub open: usize,
    /// Offset of the `}`.
    pub close: usize,
    /// Offset just after the last `;`, `}` (or `,` in JavaScript) before the `{` at the same
    /// depth, or after the enclosing opener: where the block's header may start.
    pub header_from: usize,
}

/// A closed markup element (or an empty one), by byte offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Element {
    /// Offset of the open tag's `<`.
    pub start: usize,
    /// Offset of the last byte of the element (the close tag's `>`, or where it was
    /// implicitly closed).
    pub end: usize,
}

/// What the matcher found.
#[derive(Debug, Clone, Default)]
pub(crate) struct Matched {
    pub problem: Option<RawProblem>,
    /// The first `}` that starts its line but is indented differently from the line of the
    /// `{` it closes: `(close, open)` offsets. When a `{` is left open at the end, a `}` is
    /// probably missing above this one.
    pub suspect: Option<(usize, usize)>,
    pub blocks: Vec<Block>,
    pub elements: Vec<Element>,
}

#[derive(Debug, Clone, Copy)]
enum Opener {
    Bracket(u8),
    /// A tag: its name's byte range and whether its end tag may be omitted (HTML `<li>`).
    Tag {
        name: (usize, usize),
        optional: bool,
    },
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    opener: Opener,
    at: usize,
    /// Where the header of the next block opened inside this frame may start.
    boundary: usize,
    /// For a `{` frame: where its own header may start.
    header_from: usize,
}

struct Matcher<'a> {
    text: &'a [u8],
    lang: Lang,
    record: bool,
    stack: Vec<Frame>,
    root_boundary: usize,
    out: Matched,
}

/// Match the brackets and tags of `scan` (made from `text`). Without `record`, stop at the
/// first problem; with it, keep going (recovering) and collect blocks and elements.
pub(crate) fn match_all(text: &[u8], scan: &Scan, lang: Lang, record: bool) -> Matched {
    let limit = scan.problem.as_ref().map_or(text.len(), |p| p.at);
    let mut m = Matcher {
        text,
        lang,
        record,
        stack: Vec::new(),
        root_boundary: 0,
        out: Matched::default(),
    };
    let comma_ends = scan.code_lang.is_js() || lang == Lang::Json;
    let mut tags = scan.tags.iter().peekable();
    for (i, &b) in scan.mask[..limit].iter().enumerate() {
        while let Some(tag) = tags.next_if(|t| t.start <= i) {
            m.tag(tag.kind, tag.start, tag.end, tag.name);
        }
        match b {
            b'(' | b'[' | b'{' => m.open(b, i),
            b')' | b']' | b'}' => m.close(b, i),
            b';' => m.set_boundary(i + 1),
            b',' if comma_ends => m.set_boundary(i + 1),
            _ => continue,
        }
        if m.stop() {
            return m.out;
        }
    }
    for tag in tags.filter(|t| t.start < limit) {
        m.tag(tag.kind, tag.start, tag.end, tag.name);
    }
    if !m.stop() {
        m.finish(limit, scan.problem.clone());
    }
    m.out
}

fn partner(close: u8) -> u8 {
    match close {
        b')' => b'(',
        b']' => b'[',
        _ => b'{',
    }
}

impl Matcher<'_> {
    fn stop(&self) -> bool {
        !self.record && self.out.problem.is_some()
    }

    fn problem(&mut self, problem: RawProblem) {
        if self.out.problem.is_none() {
            self.out.problem = Some(problem);
        }
    }

    fn boundary(&self) -> usize {
        self.stack.last().map_or(self.root_boundary, |f| f.boundary)
    }

    fn set_boundary(&mut self, at: usize) {
        match self.stack.last_mut() {
            Some(frame) => frame.boundary = at,
            None => self.root_boundary = at,
        }
    }

    fn open(&mut self, b: u8, at: usize) {
        // A `{` inside a JSX tag's head comes before the boundary the tag set.
        let header_from = self.boundary().min(at);
        self.stack.push(Frame {
            opener: Opener::Bracket(b),
            at,
            boundary: at + 1,
            header_from,
        });
    }

    /// Pop the top frame as closed at `at` (recording a block or element).
    fn pop_closed(&mut self, at: usize, end: usize) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        match frame.opener {
            Opener::Bracket(b'{') => {
                if self.out.suspect.is_none() && self.misindented(frame.at, at) {
                    self.out.suspect = Some((at, frame.at));
                }
                if self.record {
                    self.out.blocks.push(Block {
                        open: frame.at,
                        close: at,
                        header_from: frame.header_from,
                    });
                }
                self.set_boundary(at + 1);
            }
            Opener::Tag { .. } => {
                if self.record {
                    self.out.elements.push(Element {
                        start: frame.at,
                        end,
                    });
                }
                self.set_boundary(end + 1);
            }
            Opener::Bracket(_) => {}
        }
    }

    fn close(&mut self, b: u8, at: usize) {
        let want = partner(b);
        match self.stack.last().copied() {
            Some(Frame {
                opener: Opener::Bracket(open),
                ..
            }) if open == want => self.pop_closed(at, at),
            Some(frame) => {
                self.problem(RawProblem {
                    kind: ProblemKind::Mismatched,
                    at,
                    found: char::from(b).to_string(),
                    open: Some((self.describe(frame.opener), frame.at)),
                });
                self.recover(at, at, |_, o| matches!(o, Opener::Bracket(x) if x == want));
            }
            None => self.problem(RawProblem {
                kind: ProblemKind::UnexpectedClose,
                at,
                found: char::from(b).to_string(),
                open: None,
            }),
        }
    }

    /// After a mismatch (recording only): when a deeper frame fits, drop the frames above it
    /// and close it; otherwise ignore the closer.
    fn recover(&mut self, at: usize, end: usize, fits: impl Fn(&Self, Opener) -> bool) {
        if !self.record {
            return;
        }
        if let Some(depth) = self.stack.iter().rposition(|f| fits(self, f.opener)) {
            self.stack.truncate(depth + 1);
            self.pop_closed(at, end);
        }
    }

    fn tag(&mut self, kind: TagKind, start: usize, end: usize, name: (usize, usize)) {
        if self.stop() {
            return;
        }
        let name_bytes = &self.text[name.0..name.1];
        match kind {
            TagKind::Empty => {
                if self.record {
                    self.out.elements.push(Element {
                        start,
                        end: end.saturating_sub(1),
                    });
                }
            }
            TagKind::Open => {
                let optional = markup::optional_end(name_bytes, self.lang);
                // `<li>a<li>b`: a sibling closes the element whose end tag may be omitted.
                if let Some(Frame {
                    opener:
                        Opener::Tag {
                            name: top,
                            optional: true,
                        },
                    ..
                }) = self.stack.last().copied()
                {
                    if markup::closes_sibling(&self.text[top.0..top.1], name_bytes) {
                        let end = self.text_end_before(start);
                        self.pop_closed(end, end);
                    }
                }
                self.stack.push(Frame {
                    opener: Opener::Tag { name, optional },
                    at: start,
                    boundary: end,
                    header_from: end,
                });
            }
            TagKind::Close => self.close_tag(start, end, name),
        }
    }

    fn is_tag(&self, opener: Opener, name: (usize, usize)) -> bool {
        match opener {
            Opener::Tag { name: open, .. } => markup::same_name(
                &self.text[open.0..open.1],
                &self.text[name.0..name.1],
                self.lang,
            ),
            Opener::Bracket(_) => false,
        }
    }

    fn close_tag(&mut self, start: usize, end: usize, name: (usize, usize)) {
        let last = end.saturating_sub(1);
        let open = self.stack.iter().rposition(|f| self.is_tag(f.opener, name));
        // HTML lets `</ul>` close the `<li>`s inside it.
        let implicit = |m: &Self, depth: usize| {
            m.stack[depth + 1..]
                .iter()
                .all(|f| matches!(f.opener, Opener::Tag { optional: true, .. }))
        };
        let name_bytes = &self.text[name.0..name.1];
        match (open, self.stack.last().copied()) {
            (Some(depth), _) if implicit(self, depth) => {
                while self.stack.len() > depth + 1 {
                    let end = self.text_end_before(start);
                    self.pop_closed(end, end);
                }
                self.pop_closed(last, last);
            }
            _ if markup::is_void(name_bytes, self.lang) => {}
            // HTML reads a stray `</p>` as an empty paragraph.
            (None, _) if self.lang == Lang::Html && name_bytes.eq_ignore_ascii_case(b"p") => {}
            (_, Some(frame)) => {
                self.problem(RawProblem {
                    kind: ProblemKind::Mismatched,
                    at: start,
                    found: self.close_text(name),
                    open: Some((self.describe(frame.opener), frame.at)),
                });
                self.recover(last, last, |m, o| m.is_tag(o, name));
            }
            (_, None) => self.problem(RawProblem {
                kind: ProblemKind::UnexpectedClose,
                at: start,
                found: self.close_text(name),
                open: None,
            }),
        }
    }

    /// Does the `}` at `close` start its line with an indentation other than that of the
    /// line of the `{` at `open`?
    fn misindented(&self, open: usize, close: usize) -> bool {
        let line_start = |at: usize| {
            self.text[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |n| n + 1)
        };
        let close_start = line_start(close);
        let close_indent = &self.text[close_start..close];
        if close_indent.iter().any(|&b| b != b' ' && b != b'\t') {
            return false;
        }
        let open_line = &self.text[line_start(open)..open];
        let open_indent = open_line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        open_indent != close_indent.len()
    }

    /// The last non-blank byte before `at`: where an implicitly closed element ends.
    fn text_end_before(&self, at: usize) -> usize {
        self.text[..at]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .unwrap_or(0)
    }

    fn close_text(&self, name: (usize, usize)) -> String {
        format!("</{}>", String::from_utf8_lossy(&self.text[name.0..name.1]))
    }

    fn describe(&self, opener: Opener) -> String {
        match opener {
            Opener::Bracket(b) => char::from(b).to_string(),
            Opener::Tag { name, .. } => {
                format!("<{}>", String::from_utf8_lossy(&self.text[name.0..name.1]))
            }
        }
    }

    /// End of the text (or of what the lexer could read): a lexer problem wins; else
    /// elements whose end tag may be omitted close here, and anything else open is unclosed.
    fn finish(&mut self, limit: usize, lexer_problem: Option<RawProblem>) {
        if let Some(problem) = lexer_problem {
            self.problem(problem);
            return;
        }
        let last = limit.saturating_sub(1);
        while let Some(frame) = self.stack.last().copied() {
            if matches!(frame.opener, Opener::Tag { optional: true, .. }) {
                self.pop_closed(last, last);
                continue;
            }
            self.problem(RawProblem {
                kind: ProblemKind::Unclosed,
                at: limit,
                found: "end of file".to_string(),
                open: Some((self.describe(frame.opener), frame.at)),
            });
            break;
        }
    }
}
