//! Stage: parse — the lexicon of the agent language: blanks, markers and numbers; the
//! physical lines and the error type it shares with the blocks front end are in
//! `parse::nom_lex`. Pure; no model building here.

use nom::character::complete::digit1;

pub(super) use crate::parse::nom_lex::{
    fail, failure, line, miss, not_here, text, ws, ws1, Fail, In, Res,
};

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

