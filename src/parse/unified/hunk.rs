//! Stage: parse (unified diffs). One hunk: its `@@ -N,M +N,M @@` header (nom) and its lines,
//! checked against the header's counts, or recounted with `--recount`.
//!
//! A trailing CR is stripped from every hunk line (line endings never count, SPEC §5; the
//! planner gives inserted lines the file's own endings). Placement is not decided here.

use std::borrow::Cow;

use nom::bytes::complete::{tag, take_while1};
use nom::combinator::opt;
use nom::sequence::preceded;
use nom::Parser;

use super::lines::{with_hint, Cursor, RawLine};
use crate::model::{Hunk, Line, LineKind};
use crate::parse::quoted::{fail, PResult};
use crate::parse::{ParseError, ParseOptions};

/// What to do about a hunk header without line numbers.
pub const NO_NUMBERS_HINT: &str = "a unified diff hunk starts '@@ -OLD_START,COUNT +NEW_START,COUNT @@'; hunks without line numbers belong in the agent patch language (*** Begin Patch)";

/// The numbers of a hunk header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HunkHeader {
    pub old_start: usize,
    pub old_count: usize,
    pub new_start: usize,
    pub new_count: usize,
}

/// grammar: range
///
/// `START[,COUNT]`; a missing count is 1.
fn range(i: &[u8]) -> PResult<'_, (usize, usize)> {
    let (r, (start, count)) = (number, opt(preceded(tag(&b","[..]), number))).parse(i)?;
    Ok((r, (start, count.unwrap_or(1))))
}

/// grammar: number
fn number(i: &[u8]) -> PResult<'_, usize> {
    let (r, digits) = take_while1(|c: u8| c.is_ascii_digit()).parse(i)?;
    match std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(n) => Ok((r, n)),
        None => fail(i, "line number too large"),
    }
}

/// grammar: hunk_header
///
/// `@@ -OLD +NEW @@` then optional section text (ignored, as git does).
pub fn hunk_header(i: &[u8]) -> PResult<'_, HunkHeader> {
    let (r, _) = tag(&b"@@ -"[..]).parse(i)?;
    let Ok((r, (old_start, old_count))) = range(r) else {
        return fail(r, "expected the old range 'START[,COUNT]' after '@@ -'");
    };
    let Ok((r, _)) = tag::<_, _, crate::parse::quoted::Fail>(&b" +"[..]).parse(r) else {
        return fail(r, "expected ' +' and the new range");
    };
    let Ok((r, (new_start, new_count))) = range(r) else {
        return fail(r, "expected the new range 'START[,COUNT]' after '+'");
    };
    let Ok((r, _)) = tag::<_, _, crate::parse::quoted::Fail>(&b" @@"[..]).parse(r) else {
        return fail(r, "expected ' @@' after the new range");
    };
    let header = HunkHeader {
        old_start,
        old_count,
        new_start,
        new_count,
    };
    Ok((r, header))
}

/// What one line inside a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyLine<'a> {
    Line(LineKind, &'a [u8]),
    /// An empty line: an empty context line (editors strip the lone space).
    Empty,
    NoNewline,
    Other,
}

/// grammar: hunk_line
fn hunk_line(body: &[u8]) -> BodyLine<'_> {
    match body.split_first() {
        None => BodyLine::Empty,
        Some((b' ', t)) => BodyLine::Line(LineKind::Context, t),
        Some((b'-', t)) => BodyLine::Line(LineKind::Delete, t),
        Some((b'+', t)) => BodyLine::Line(LineKind::Insert, t),
        Some((b'\\', _)) => no_newline_line(body),
        Some(_) => BodyLine::Other,
    }
}

/// grammar: no_newline_line
///
/// `\ No newline at end of file` (any text after the backslash: older gits translated it).
fn no_newline_line(body: &[u8]) -> BodyLine<'_> {
    match body.first() {
        Some(b'\\') => BodyLine::NoNewline,
        _ => BodyLine::Other,
    }
}

/// The hunk being built, with the bookkeeping for `\ No newline` markers.
struct Builder<'a> {
    hunk: Hunk<'a>,
    header_line: RawLine<'a>,
}

impl<'a> Builder<'a> {
    fn push(
        &mut self,
        line: RawLine<'a>,
        kind: LineKind,
        text: &'a [u8],
    ) -> Result<(), ParseError> {
        let h = &self.hunk;
        if (kind != LineKind::Insert && h.old_no_newline)
            || (kind != LineKind::Delete && h.new_no_newline)
        {
            return Err(
                line.error("a hunk line follows '\\ No newline at end of file' on the same side")
            );
        }
        // A `+`/`-` line keeps its CR for now: the file patch decides (`check_body`) whether
        // the diff's own line endings are content (a created or deleted file) or not.
        let text = match line.text.len().checked_sub(text.len() + 1) {
            Some(start) if kind != LineKind::Context && line.text.ends_with(b"\r") => {
                &line.text[start..]
            }
            _ => text,
        };
        self.hunk.lines.push(Line::new(kind, Cow::Borrowed(text)));
        Ok(())
    }

    fn no_newline(&mut self, line: RawLine<'a>) -> Result<(), ParseError> {
        match self.hunk.lines.last().map(|l| l.kind) {
            None => Err(line.error("'\\ No newline at end of file' must follow a hunk line")),
            Some(LineKind::Delete) => {
                self.hunk.old_no_newline = true;
                Ok(())
            }
            Some(LineKind::Insert) => {
                self.hunk.new_no_newline = true;
                Ok(())
            }
            Some(LineKind::Context) => {
                self.hunk.old_no_newline = true;
                self.hunk.new_no_newline = true;
                Ok(())
            }
        }
    }

    fn header_text(&self) -> String {
        String::from_utf8_lossy(self.header_line.body()).into_owned()
    }
}

/// grammar: hunk
///
/// A hunk header and its lines. With counts checked (the default) the hunk holds exactly the
/// lines its header counts, plus a final `\ No newline` marker; with `--recount` it runs until
/// a line that cannot belong to it.
pub fn hunk<'a>(cur: &mut Cursor<'a>, opts: &ParseOptions) -> Result<Hunk<'a>, ParseError> {
    let Some(header_line) = cur.next_line() else {
        return Err(cur.error_at_end("expected a hunk header '@@ -N,M +N,M @@'"));
    };
    let body = header_line.body();
    let header = match hunk_header(body) {
        Ok((_, h)) => h,
        Err(nom::Err::Failure(f)) => return Err(header_line.error_from(body, f)),
        Err(_) => {
            return Err(with_hint(
                header_line.error("expected a hunk header '@@ -N,M +N,M @@'"),
                NO_NUMBERS_HINT,
            ));
        }
    };
    let mut b = Builder {
        hunk: Hunk {
            old_start: Some(header.old_start),
            old_count: Some(header.old_count),
            new_start: Some(header.new_start),
            new_count: Some(header.new_count),
            patch_line: header_line.number,
            ..Hunk::default()
        },
        header_line,
    };
    if opts.recount {
        recounted_lines(cur, &mut b, header)?;
        let old = b.hunk.old_lines().count();
        let new = b.hunk.new_lines().count();
        b.hunk.old_count = Some(old);
        b.hunk.new_count = Some(new);
    } else {
        counted_lines(cur, &mut b, header)?;
    }
    if b.hunk.lines.is_empty() {
        return Err(with_hint(
            header_line.error("hunk has no lines"),
            "a hunk needs at least one ' ', '-' or '+' line",
        ));
    }
    Ok(b.hunk)
}

/// The lines of a hunk whose header counts are trusted.
fn counted_lines<'a>(
    cur: &mut Cursor<'a>,
    b: &mut Builder<'a>,
    header: HunkHeader,
) -> Result<(), ParseError> {
    let (mut old_left, mut new_left) = (header.old_count, header.new_count);
    while old_left > 0 || new_left > 0 {
        let short = |old_left: usize, new_left: usize| {
            format!(
                "hunk '{}' (line {}) ends early: {old_left} more old and {new_left} more new lines expected",
                b.header_text(),
                b.header_line.number
            )
        };
        let Some(line) = cur.peek() else {
            return Err(recount_hint(cur.error_at_end(short(old_left, new_left))));
        };
        let (kind, text) = match hunk_line(line.body()) {
            BodyLine::Line(kind, text) => (kind, text),
            BodyLine::Empty => (LineKind::Context, &line.body()[..0]),
            BodyLine::NoNewline => {
                b.no_newline(line)?;
                cur.pos += 1;
                continue;
            }
            BodyLine::Other => return Err(recount_hint(line.error(short(old_left, new_left)))),
        };
        let fits = match kind {
            LineKind::Context => old_left > 0 && new_left > 0,
            LineKind::Delete => old_left > 0,
            LineKind::Insert => new_left > 0,
        };
        if !fits {
            let msg = format!(
                "hunk '{}' (line {}) has more {} lines than its header counts",
                b.header_text(),
                b.header_line.number,
                if kind == LineKind::Insert {
                    "new"
                } else {
                    "old"
                },
            );
            return Err(recount_hint(line.error(msg)));
        }
        if kind != LineKind::Insert {
            old_left -= 1;
        }
        if kind != LineKind::Delete {
            new_left -= 1;
        }
        b.push(line, kind, text)?;
        cur.pos += 1;
    }
    if let Some(line) = cur.peek() {
        if hunk_line(line.body()) == BodyLine::NoNewline {
            b.no_newline(line)?;
            cur.pos += 1;
        }
    }
    Ok(())
}

fn recount_hint(err: ParseError) -> ParseError {
    with_hint(err, recount_step())
}

/// "fix the counts …, or pass --recount …", with the option in the caller's words.
pub(crate) fn recount_step() -> crate::spelling::Hint {
    use crate::spelling::{Hint, Opt};
    Hint::new().text("fix the counts in the '@@' line").clause(
        Hint::new()
            .text(", or pass ")
            .on(Opt::Recount)
            .text(" to count the hunk's lines instead"),
    )
}

/// The lines of a hunk with `--recount`: everything up to a line that cannot belong to it.
/// An empty line is an empty context line when it lies inside the region the header counts,
/// or when a hunk line follows it; otherwise it ends the hunk.
fn recounted_lines<'a>(
    cur: &mut Cursor<'a>,
    b: &mut Builder<'a>,
    header: HunkHeader,
) -> Result<(), ParseError> {
    let mut kept = (b.hunk.lines.len(), cur.pos);
    while let Some(line) = cur.peek() {
        if super::is_header_start(cur) || line.body().starts_with(b"@@ ") {
            break;
        }
        match hunk_line(line.body()) {
            BodyLine::Line(kind, text) => {
                // An e-mail signature separator, not a deleted line "- ": a signature follows
                // a hunk's lines and is itself followed by a line that is no hunk line (the
                // version of `git format-patch`); at the end of the input, or first in its
                // hunk, `-- ` deletes "- " (so that what the renderer writes reads back).
                let signature = line.body() == b"-- "
                    && !b.hunk.lines.is_empty()
                    && cur.peek_at(1).is_some()
                    && !next_is_hunk_line(cur);
                if signature {
                    break;
                }
                b.push(line, kind, text)?;
                cur.pos += 1;
                kept = (b.hunk.lines.len(), cur.pos);
            }
            BodyLine::Empty => {
                let counted = b.hunk.old_lines().count() < header.old_count
                    && b.hunk.new_lines().count() < header.new_count;
                b.push(line, LineKind::Context, &line.body()[..0])?;
                cur.pos += 1;
                if counted && kept.0 + 1 == b.hunk.lines.len() {
                    kept = (b.hunk.lines.len(), cur.pos);
                }
            }
            BodyLine::NoNewline => {
                b.no_newline(line)?;
                cur.pos += 1;
                kept = (b.hunk.lines.len(), cur.pos);
            }
            BodyLine::Other => break,
        }
    }
    b.hunk.lines.truncate(kept.0);
    cur.pos = kept.1;
    Ok(())
}

fn next_is_hunk_line(cur: &Cursor<'_>) -> bool {
    cur.peek_at(1).is_some_and(|l| {
        matches!(
            hunk_line(l.body()),
            BodyLine::Line(..) | BodyLine::NoNewline
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_hunk(text: &str, recount: bool) -> Result<(Hunk<'_>, usize), ParseError> {
        let mut cur = Cursor::new(text.as_bytes(), 0);
        let opts = ParseOptions {
            recount,
            ..ParseOptions::default()
        };
        let h = hunk(&mut cur, &opts)?;
        Ok((h, cur.pos))
    }

    #[test]
    fn header_numbers() {
        let (_, h) = hunk_header(b"@@ -1 +0,0 @@ fn main").expect("parses");
        assert_eq!(
            (h.old_start, h.old_count, h.new_start, h.new_count),
            (1, 1, 0, 0)
        );
        assert!(hunk_header(b"@@ -1,x +1 @@").is_err());
        assert!(hunk_header(b"@@ -99999999999999999999999 +1 @@").is_err());
    }

    #[test]
    fn counts_are_checked() {
        let (h, pos) = parse_hunk("@@ -1,2 +1,2 @@\n a\n-b\n+c\ntrailing\n", false).expect("ok");
        assert_eq!(h.lines.len(), 3);
        assert_eq!(pos, 4);
        let err = parse_hunk("@@ -1,3 +1,3 @@\n a\n-b\n+c\n", false).expect_err("short");
        assert!(err.message.contains("ends early"), "{}", err.message);
        assert_eq!(err.line, 5);
        let err = parse_hunk("@@ -1,1 +1,1 @@\n-b\n+c\n+d\n", false).map(|(h, _)| h.lines.len());
        assert_eq!(
            err,
            Ok(2),
            "an extra line after a complete hunk is not the hunk's"
        );
        let err = parse_hunk("@@ -1,1 +1,2 @@\n-b\n-c\n+d\n", false).expect_err("too many old");
        assert!(err.message.contains("more old lines"), "{}", err.message);
    }

    #[test]
    fn empty_lines_and_crlf_are_context() {
        // A context line loses its CR here; a `+`/`-` line keeps it until the file patch
        // decides whether it is content (file::own_endings).
        let (h, _) = parse_hunk("@@ -1,3 +1,3 @@\r\n a\r\n\n-b\r\n+c\r\n", false).expect("ok");
        let texts: Vec<_> = h.lines.iter().map(|l| l.text.as_ref()).collect();
        assert_eq!(texts, vec![&b"a"[..], b"", b"b\r", b"c\r"]);
    }

    #[test]
    fn no_newline_markers() {
        let text =
            "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n";
        let (h, _) = parse_hunk(text, false).expect("ok");
        assert!(h.old_no_newline && h.new_no_newline);
        let err =
            parse_hunk("@@ -1 +1,2 @@\n a\n\\ x\n+b\n", false).expect_err("line after marker");
        assert!(err.message.contains("follows"), "{}", err.message);
    }

    #[test]
    fn recount_ignores_header_counts() {
        let text = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n\nprose\n";
        let (h, pos) = parse_hunk(text, true).expect("ok");
        assert_eq!((h.old_count, h.new_count), (Some(2), Some(2)));
        assert_eq!(
            pos, 4,
            "trailing empty lines past the counts are not part of the hunk"
        );
        let text = "@@ -1,9 +1,9 @@\n a\n-b\n+c\n\n\nprose\n";
        let (h, pos) = parse_hunk(text, true).expect("ok");
        assert_eq!((h.old_count, h.new_count, pos), (Some(4), Some(4), 6));
        let text = "@@ -1,3 +1,3 @@\n a\n-b\n+c\n\nprose\n";
        let (h, _) = parse_hunk(text, true).expect("ok");
        assert_eq!(
            h.lines.len(),
            4,
            "an empty line inside the counted region is context"
        );
        let text = "@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n";
        let (h, _) = parse_hunk(text, true).expect("ok");
        assert_eq!(
            h.lines.len(),
            2,
            "the e-mail signature is not a deleted line"
        );
    }
}
