//! Stage: parse — the lexicon of SEARCH/REPLACE blocks: blanks, numbers, the marker lines
//! (opener, separator, closer, Roo's header lines) and fences; the physical lines and the
//! error type it shares with the agent front end are in `parse::nom_lex`. Pure; no syntax
//! tree is built here, and nothing is decided about paths or line hints.

use nom::bytes::complete::{tag, take_while_m_n};
use nom::character::complete::digit1;
use nom::combinator::{eof, opt};
use nom::Parser;

pub(super) use crate::parse::nom_lex::{
    fail, failure, line, ws, ws1, Fail, In, Res,
};

/// grammar: bom
pub(super) fn bom(i: In<'_>) -> Res<'_, In<'_>> {
    tag(crate::text::BOM).parse(i)
}

/// grammar: number
///
/// Decimal digits; `None` when they do not fit a `usize` (no line has such a number).
pub(super) fn number(i: In<'_>) -> Res<'_, Option<usize>> {
    let (rest, digits) = digit1(i)?;
    let n = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse().ok());
    Ok((rest, n))
}

/// A line's content without the blanks around it: markers are recognised on it (SPEC §4b).
pub(super) fn trimmed(content: &[u8]) -> &[u8] {
    content.trim_ascii()
}

/// A run of at least `min` bytes `mark`, one space, `word`, an optional `>`, and nothing
/// else (a helper of the opener and closer productions, not one itself).
fn fenced_word(t: In<'_>, mark: u8, min: usize, word: &'static str) -> bool {
    let parsed = (
        take_while_m_n(min, usize::MAX, |b| b == mark),
        tag(" "),
        tag(word),
        opt(tag(">")),
        eof,
    )
        .parse(t);
    let ok: Res<'_, _> = parsed;
    ok.is_ok()
}

/// grammar: opener
///
/// `<<<<<<< SEARCH` (5 or more `<`; Aider, Roo, Cline's older form) or `------- SEARCH`
/// (3 or more `-`; Cline), on the trimmed line.
pub(super) fn is_opener(content: &[u8]) -> bool {
    let t = trimmed(content);
    fenced_word(t, b'<', 5, "SEARCH") || fenced_word(t, b'-', 3, "SEARCH")
}

/// grammar: separator
///
/// Five or more `=` alone on the trimmed line.
pub(super) fn is_separator(content: &[u8]) -> bool {
    let t = trimmed(content);
    let parsed: Res<'_, _> = (take_while_m_n(5, usize::MAX, |b| b == b'='), eof).parse(t);
    parsed.is_ok()
}

/// grammar: closer
///
/// `>>>>>>> REPLACE` (5 or more `>`) or `+++++++ REPLACE` (3 or more `+`; Cline).
pub(super) fn is_closer(content: &[u8]) -> bool {
    let t = trimmed(content);
    fenced_word(t, b'>', 5, "REPLACE") || fenced_word(t, b'+', 3, "REPLACE")
}

/// The Roo header lines `:start_line:` and `:end_line:` (only right after an opener; anywhere
/// else in a block they are refused unless escaped).
pub(super) const START_LINE: &[u8] = b":start_line:";
pub(super) const END_LINE: &[u8] = b":end_line:";

/// grammar: divider
///
/// Roo's `-------` line after the opener (and its header lines): exactly seven `-`, so that a
/// SEARCH text starting with a Markdown rule or YAML's `---` is not taken for it.
pub(super) fn is_divider(content: &[u8]) -> bool {
    trimmed(content) == b"-------"
}

/// grammar: fence_line
///
/// A Markdown code fence (three or more backticks or tildes, any info string).
pub(super) fn is_fence(content: &[u8]) -> bool {
    let t = trimmed(content);
    t.starts_with(b"```") || t.starts_with(b"~~~")
}

/// What a line inside a block is, when it is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Marker {
    Opener,
    Separator,
    Closer,
    /// `:start_line:` or `:end_line:` away from the place right after the opener.
    Header,
}

/// The marker a block's line is, if any (markers are recognised on the trimmed line).
pub(super) fn marker(content: &[u8]) -> Option<Marker> {
    let t = trimmed(content);
    if is_separator(t) {
        Some(Marker::Separator)
    } else if is_closer(t) {
        Some(Marker::Closer)
    } else if is_opener(t) {
        Some(Marker::Opener)
    } else if t.starts_with(START_LINE) || t.starts_with(END_LINE) {
        Some(Marker::Header)
    } else {
        None
    }
}

/// The next line's content (no ending), without consuming it.
pub(super) fn peek(i: In<'_>) -> &[u8] {
    line(i).map_or(&[][..], |(_, content)| content)
}

/// The opening tags of the tool-call forms (SPEC §4b): Cline's and Roo's.
pub(super) const TOOL_TAGS: [&str; 2] = ["replace_in_file", "apply_diff"];

/// The tool whose opening tag `<NAME>` starts the line (after blanks), and where. A tag
/// inside a sentence is prose: it neither opens a call nor counts as a second one.
pub(super) fn tool_tag(content: &[u8]) -> Option<(usize, &'static str)> {
    let at = content.len() - content.trim_ascii_start().len();
    TOOL_TAGS.iter().find_map(|name| {
        let rest = content[at..]
            .strip_prefix(b"<")?
            .strip_prefix(name.as_bytes())?;
        rest.starts_with(b">").then_some((at, *name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openers_of_every_dialect() {
        for ok in [
            "<<<<<<< SEARCH",
            "<<<<< SEARCH",
            "<<<<<<<<<<<< SEARCH",
            "  <<<<<<< SEARCH>  ",
            "------- SEARCH",
            "--- SEARCH",
            "----------- SEARCH>",
            "<<<<<<< SEARCH\r",
        ] {
            assert!(is_opener(ok.as_bytes()), "{ok:?}");
        }
        for no in [
            "<<<< SEARCH",
            "-- SEARCH",
            "<<-- SEARCH",
            "-------SEARCH",
            "<<<<<<<  SEARCH",
            "<<<<<<< SEARCH>>",
            "<<<<<<< SEARCH  >",
            "<<<<<<< search",
            "\\<<<<<<< SEARCH",
            "`<<<<<<< SEARCH`",
        ] {
            assert!(!is_opener(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn separators_and_closers() {
        for ok in ["=====", "=======", " ======= ", "==========="] {
            assert!(is_separator(ok.as_bytes()), "{ok:?}");
        }
        for no in ["====", "=======x", "------- =======", "\\======="] {
            assert!(!is_separator(no.as_bytes()), "{no:?}");
        }
        for ok in [
            ">>>>>>> REPLACE",
            ">>>>> REPLACE",
            "+++++++ REPLACE",
            "+++ REPLACE>",
        ] {
            assert!(is_closer(ok.as_bytes()), "{ok:?}");
        }
        for no in [">>>> REPLACE", "++ REPLACE", ">>>>>>> feature", ">>>>>>>"] {
            assert!(!is_closer(no.as_bytes()), "{no:?}");
        }
    }

    #[test]
    fn markers_inside_a_block() {
        assert_eq!(marker(b"  ======="), Some(Marker::Separator));
        assert_eq!(marker(b"+++++++ REPLACE"), Some(Marker::Closer));
        assert_eq!(marker(b"------- SEARCH"), Some(Marker::Opener));
        assert_eq!(marker(b" :end_line:4"), Some(Marker::Header));
        assert_eq!(marker(b"<<<<<<< HEAD"), None);
        assert_eq!(marker(b"-------"), None);
        assert_eq!(marker(b"\\======="), None);
    }

    #[test]
    fn dividers_fences_and_tool_tags() {
        assert!(is_divider(b" ------- "));
        assert!(!is_divider(b"---"));
        assert!(!is_divider(b"--------"));
        assert!(is_fence(b" ```python"));
        assert!(is_fence(b"~~~"));
        assert!(!is_fence(b"``"));
        assert_eq!(tool_tag(b"  <apply_diff><path>"), Some((2, "apply_diff")));
        assert_eq!(tool_tag(b"<replace_in_file>"), Some((0, "replace_in_file")));
        assert_eq!(tool_tag(b"instead of <apply_diff>, blocks:"), None);
        assert_eq!(tool_tag(b"<replace_in_file"), None);
        assert_eq!(tool_tag(b"<apply_diffs>"), None);
    }

    #[test]
    fn lines_lose_the_cr_of_crlf_and_numbers_may_overflow() {
        let (rest, content) = line(b"ab\r\ncd").expect("a line");
        assert_eq!((rest, content), (&b"cd"[..], &b"ab"[..]));
        assert!(line(b"").is_err());
        let (_, n) = number(b"99999999999999999999999999").expect("digits");
        assert_eq!(n, None);
        assert_eq!(number(b"12 |").expect("digits").1, Some(12));
    }
}
