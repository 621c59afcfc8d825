//! Stage: parse — the line-level lexicon of the agent language: physical lines, blanks,
//! markers, numbers, and the parser's error type (shared with the blocks front end, in nom_fail). Pure; no model building here.

use nom::bytes::complete::{tag, take_till, take_while};
use nom::character::complete::digit1;
use nom::combinator::eof;
use nom::Parser;

pub(super) use crate::parse::nom_fail::{fail, failure, miss, not_here, Fail, In, Res};

/// grammar: begin_marker
pub(super) fn begin_marker(i: In<'_>) -> Res<'_, ()> {
    match exact_marker(i, b"*** Begin Patch") {
        Some(rest) => Ok((rest, ())),
        None => miss(i),
    }
}

/// grammar: end_marker
pub(super) fn end_marker(i: In<'_>) -> Res<'_, ()> {
    match exact_marker(i, b"*** End Patch") {
        Some(rest) => Ok((rest, ())),
        None => miss(i),
    }
}

/// grammar: end_of_file
pub(super) fn end_of_file(i: In<'_>) -> Res<'_, ()> {
    match exact_marker(i, b"*** End of File") {
        Some(rest) => Ok((rest, ())),
        None => miss(i),
    }
}

/// The input after the next line when that line, trimmed, is exactly `marker` (a helper of
/// the marker productions, not one itself).
fn exact_marker<'a>(i: In<'a>, marker: &[u8]) -> Option<In<'a>> {
    let (rest, content) = line(i).ok()?;
    (content.trim_ascii() == marker).then_some(rest)
}

/// Prefixes (of the trimmed line) that make a line a marker wherever it stands (SPEC §2).
pub(super) const MARKER_PREFIXES: [&[u8]; 5] = [
    b"*** Add File:",
    b"*** Delete File:",
    b"*** Update File:",
    b"*** Move to:",
    b"*** Base:",
];
pub(super) const MARKER_LINES: [&[u8]; 3] =
    [b"*** Begin Patch", b"*** End Patch", b"*** End of File"];

/// When the next line, trimmed, starts with `name` (`*** Add File:`…): the input after the
/// line and the bytes after `name` (a helper of the header productions, not one itself).
pub(super) fn marker_with_arg<'a>(i: In<'a>, name: &[u8]) -> Option<(In<'a>, In<'a>)> {
    let (rest, content) = line(i).ok()?;
    let arg = content.trim_ascii().strip_prefix(name)?;
    Some((rest, arg))
}

/// True when the next line is a marker (and so ends any hunk or added file it follows).
pub(super) fn is_marker_line(i: In<'_>) -> bool {
    let t = peek(i).trim_ascii();
    MARKER_LINES.contains(&t) || MARKER_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The next line's content (no ending), without consuming it.
pub(super) fn peek(i: In<'_>) -> &[u8] {
    line(i).map_or(&[][..], |(_, content)| content)
}

/// grammar: number
pub(super) fn number(i: In<'_>) -> Res<'_, usize> {
    let (rest, digits) = digit1(i)?;
    match std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok())
    {
        Some(n) => Ok((rest, n)),
        None => fail(
            i,
            "line number too large",
            "use the hunk's real line number",
        ),
    }
}

/// grammar: blank_line
pub(super) fn blank_line(i: In<'_>) -> Res<'_, ()> {
    let (rest, content) = line(i)?;
    if content.trim_ascii().is_empty() {
        Ok((rest, ()))
    } else {
        miss(i)
    }
}

/// Skip blank lines.
pub(super) fn blank_lines(mut i: In<'_>) -> In<'_> {
    while let Ok((rest, ())) = blank_line(i) {
        i = rest;
    }
    i
}

/// grammar: line
///
/// One physical line: its text (without the ending) — never matches at the end of the input.
pub(super) fn line(i: In<'_>) -> Res<'_, In<'_>> {
    if i.is_empty() {
        return miss(i);
    }
    let (i, content) = text(i)?;
    let (i, _) = eol(i)?;
    Ok((i, content))
}

/// grammar: text
///
/// The bytes up to the line feed; a CR right before it belongs to the line ending.
pub(super) fn text(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = take_till(|b| b == b'\n').parse(i)?;
    Ok((rest, content.strip_suffix(b"\r").unwrap_or(content)))
}

/// grammar: eol
pub(super) fn eol(i: In<'_>) -> Res<'_, In<'_>> {
    nom::branch::alt((tag("\n"), eof)).parse(i)
}

/// grammar: ws
pub(super) fn ws(i: In<'_>) -> Res<'_, In<'_>> {
    take_while(|b| b == b' ' || b == b'\t').parse(i)
}

/// grammar: ws1
pub(super) fn ws1(i: In<'_>) -> Res<'_, In<'_>> {
    nom::bytes::complete::take_while1(|b| b == b' ' || b == b'\t').parse(i)
}
