//! Stage: parse — the hunks of the agent language: `@@` headers (anchors, line hints) and
//! hunk bodies, into model [`Hunk`]s. Pure; where a hunk goes is the locator's business.

use std::borrow::Cow;

use nom::bytes::complete::tag;
use nom::combinator::opt;
use nom::sequence::preceded;
use nom::Parser;

use super::lex::{
    blank_lines, end_of_file, fail, is_marker_line, line, miss, not_here, number, peek, text, ws,
    ws1, In, Res,
};
use crate::model::{Hunk, Line, LineKind};

/// A hunk's `@@` lines gathered: anchors outermost first, at most one line-number hint.
#[derive(Debug, Default)]
pub(super) struct Header<'a> {
    anchors: Vec<Cow<'a, [u8]>>,
    hint: Option<Hint>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Hint {
    old_start: usize,
    old_count: Option<usize>,
    new: Option<(usize, Option<usize>)>,
}

pub(super) enum HeaderLine<'a> {
    Hint(Hint),
    Anchor(Option<&'a [u8]>),
}

/// grammar: first_hunk
///
/// Leniency: the first hunk of a file may omit its `@@` line.
pub(super) fn first_hunk(i: In<'_>) -> Res<'_, Hunk<'_>> {
    let start = i;
    let (i, header) = opt(hunk_header).parse(i)?;
    hunk_body(i, header.unwrap_or_default(), start)
}

/// grammar: hunk
pub(super) fn hunk(i: In<'_>) -> Res<'_, Hunk<'_>> {
    let start = i;
    let (i, header) = hunk_header(i)?;
    hunk_body(i, header, start)
}

/// grammar: hunk_header
///
/// Several `@@ ANCHOR` lines in a row narrow step by step (outermost first).
pub(super) fn hunk_header(i: In<'_>) -> Res<'_, Header<'_>> {
    let (mut i, first) = header_line(i)?;
    let mut header = Header::default();
    let mut next = Some(first);
    let mut at = i;
    while let Some(line) = next.take() {
        match line {
            HeaderLine::Anchor(Some(text)) => header.anchors.push(Cow::Borrowed(text)),
            HeaderLine::Anchor(None) => {}
            HeaderLine::Hint(hint) => {
                if header.hint.replace(hint).is_some() {
                    return fail(
                        at,
                        "a hunk has two line-number hints",
                        "keep one `@@ -N,M +N,M @@` line per hunk",
                    );
                }
            }
        }
        at = i;
        match header_line(i) {
            Ok((rest, line)) => {
                next = Some(line);
                i = rest;
            }
            Err(nom::Err::Error(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok((i, header))
}

/// grammar: header_line
pub(super) fn header_line(i: In<'_>) -> Res<'_, HeaderLine<'_>> {
    let (rest, content) = line(i)?;
    let Some(after) = content.strip_prefix(b"@@") else {
        return miss(i);
    };
    match line_hint(after) {
        Ok((_, hint)) => return Ok((rest, HeaderLine::Hint(hint))),
        Err(nom::Err::Error(_)) => {}
        Err(e) => return Err(e),
    }
    let (_, text) = anchor(after)?;
    Ok((rest, HeaderLine::Anchor(text)))
}

/// grammar: line_hint
///
/// `-N[,M] [+N[,M]] @@`; what follows the closing `@@` is ignored, as git does.
pub(super) fn line_hint(i: In<'_>) -> Res<'_, Hint> {
    let count = || opt(preceded(tag(","), number));
    let (i, (_, _, old_start, old_count)) = (ws, tag("-"), number, count()).parse(i)?;
    let (i, new) = opt(preceded((ws1, tag("+")), (number, count()))).parse(i)?;
    let (i, _) = (ws, tag("@@"), text).parse(i)?;
    Ok((
        i,
        Hint {
            old_start,
            old_count,
            new,
        },
    ))
}

/// grammar: anchor
///
/// The text after `@@` and one blank, trailing blanks dropped; none for a bare `@@`.
pub(super) fn anchor(i: In<'_>) -> Res<'_, Option<&[u8]>> {
    let (i, _) = opt(nom::branch::alt((tag(" "), tag("\t")))).parse(i)?;
    let (rest, t) = text(i)?;
    let t = t.trim_ascii_end();
    Ok((rest, (!t.trim_ascii().is_empty()).then_some(t)))
}

/// grammar: hunk_body
///
/// `start` is where the hunk (its header, if any) began.
pub(super) fn hunk_body<'a>(mut i: In<'a>, header: Header<'a>, start: In<'a>) -> Res<'a, Hunk<'a>> {
    let mut lines = Vec::new();
    // Empty lines are held back until a non-empty hunk line follows: at the end of a hunk
    // they only separate it from what comes next (unless `*** End of File` follows).
    let mut blanks = Vec::new();
    let mut end_of_file_seen = false;
    loop {
        if i.is_empty() || peek(i).starts_with(b"@@") {
            break;
        }
        if is_marker_line(i) {
            if let Ok((rest, ())) = end_of_file(i) {
                lines.append(&mut blanks);
                end_of_file_seen = true;
                i = rest;
            }
            break;
        }
        match hunk_line(i) {
            Ok((rest, (line, blank))) => {
                if blank {
                    blanks.push(line);
                } else {
                    lines.append(&mut blanks);
                    lines.push(line);
                }
                i = rest;
            }
            Err(nom::Err::Error(_)) => break,
            Err(e) => return Err(e),
        }
    }
    if lines.is_empty() {
        return fail(
            start,
            "the hunk has no lines",
            "after the `@@` line give ` context`, `-deleted` and `+inserted` lines",
        );
    }
    if end_of_file_seen {
        let next = blank_lines(i);
        if hunk_line(next).is_ok_and(|(_, (_, blank))| !blank) && !is_marker_line(next) {
            return fail(
                next,
                "`*** End of File` must be the last line of a hunk",
                "move `*** End of File` after the hunk's last line, or start a new hunk with `@@`",
            );
        }
        i = next;
    }
    let hint = header.hint;
    let hunk = Hunk {
        old_start: hint.map(|h| h.old_start),
        old_count: hint.and_then(|h| h.old_count),
        new_start: hint.and_then(|h| h.new.map(|n| n.0)),
        new_count: hint.and_then(|h| h.new.and_then(|n| n.1)),
        anchors: header.anchors,
        end_of_file: end_of_file_seen,
        lines,
        old_no_newline: false,
        new_no_newline: false,
        patch_line: start.len(),
    };
    Ok((i, hunk))
}

/// grammar: hunk_line
///
/// A hunk line and whether it was an empty (blank) line.
pub(super) fn hunk_line(i: In<'_>) -> Res<'_, (Line<'_>, bool)> {
    if is_marker_line(i) {
        return miss(i);
    }
    nom::branch::alt((
        |i| context_line(i).map(|(r, l)| (r, (l, false))),
        |i| removed_line(i).map(|(r, l)| (r, (l, false))),
        |i| inserted_line(i).map(|(r, l)| (r, (l, false))),
        |i| empty_line(i).map(|(r, t)| (r, (Line::new(LineKind::Context, t), true))),
    ))
    .parse(i)
}

/// grammar: context_line
pub(super) fn context_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b' ', LineKind::Context).ok_or_else(|| not_here(i))
}

/// grammar: removed_line
pub(super) fn removed_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b'-', LineKind::Delete).ok_or_else(|| not_here(i))
}

/// grammar: inserted_line
pub(super) fn inserted_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b'+', LineKind::Insert).ok_or_else(|| not_here(i))
}

/// The next line as a hunk line of `kind` when it starts with `prefix` (a helper of the three
/// hunk-line productions, not one itself).
fn prefixed_line(i: In<'_>, prefix: u8, kind: LineKind) -> Option<(In<'_>, Line<'_>)> {
    let (rest, content) = line(i).ok()?;
    match content.split_first() {
        Some((&first, text)) if first == prefix => Some((rest, Line::new(kind, text))),
        _ => None,
    }
}

/// grammar: empty_line
///
/// Leniency: a line of only blanks (or none) inside a hunk is a context line of that text
/// (an empty line: an empty context line).
pub(super) fn empty_line(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = line(i)?;
    if content.iter().all(|&b| b == b' ' || b == b'\t') {
        Ok((rest, content))
    } else {
        miss(i)
    }
}
