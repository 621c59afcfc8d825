//! Stage: parse — the lines of a block's SEARCH and REPLACE parts (SPEC §4b): Roo's `N | `
//! line-number prefixes (taken off only when every line of a part has one, and then a line
//! hint) and its backslash escapes of marker-like lines. Pure; the lines keep every other
//! byte as written, and borrow from the input unless an escape changed them.

use std::borrow::Cow;

use nom::bytes::complete::tag;
use nom::combinator::opt;
use nom::Parser;

use super::lex::{failure, number, ws, ws1, Fail, In, Res, END_LINE, START_LINE};

type Texts<'a> = (Vec<Cow<'a, [u8]>>, Vec<Cow<'a, [u8]>>, Option<usize>);

/// SEARCH's and REPLACE's lines with line-number prefixes and escapes taken off, and the
/// line hint the prefixes give (SPEC §4b): prefixes on every SEARCH line are dropped; those
/// of REPLACE too when every REPLACE line has one, and then (or when REPLACE is empty) the
/// first SEARCH number is the hint. Prefixes on some lines of a part only are refused.
pub(super) fn texts<'a>(
    search: &[In<'a>],
    replace: &[In<'a>],
) -> Result<Texts<'a>, nom::Err<Fail>> {
    let search_numbered = numbering(search, "SEARCH", "")?;
    let (replace_numbered, hint) = match search_numbered {
        None => (false, None),
        Some(first) => {
            let again = " (every SEARCH line has one)";
            match numbering(replace, "REPLACE", again)? {
                Some(_) => (true, Some(first)),
                None if replace.is_empty() => (false, Some(first)),
                None => (false, None),
            }
        }
    };
    let lines = |part: &[In<'a>], numbered: bool| {
        part.iter()
            .map(|&content| body_line(content, numbered))
            .collect()
    };
    Ok((
        lines(search, search_numbered.is_some()),
        lines(replace, replace_numbered),
        hint,
    ))
}

/// Whether every line of a part carries a line-number prefix (its first number), none does,
/// or only some do: refused at the first line that breaks the pattern.
fn numbering(part: &[In<'_>], which: &str, why: &str) -> Result<Option<usize>, nom::Err<Fail>> {
    let Some(&first) = part.first() else {
        return Ok(None);
    };
    let first_number = line_number(first).map(|(n, _)| n);
    let odd = part
        .iter()
        .find(|&&content| line_number(content).is_some() != first_number.is_some());
    match odd {
        None => Ok(first_number),
        Some(&content) => Err(failure(
            content,
            format!("line numbers (`N | `) on some {which} lines only{why}"),
            format!(
                "number every {which} line as read_file shows it (`12 | text`), or none; a \
                 line number is only a hint"
            ),
        )),
    }
}

/// grammar: line_number
///
/// Roo's `N | ` (as its read_file shows a file): blanks, digits, blanks, `|` and one optional
/// space; the number and the rest of the line.
fn line_number(content: In<'_>) -> Option<(usize, In<'_>)> {
    let parsed: Res<'_, _> = (ws, number, ws1, tag("|"), opt(tag(" "))).parse(content);
    match parsed {
        Ok((rest, (_, Some(n), _, _, _))) => Some((n, rest)),
        _ => None,
    }
}

/// grammar: body_line
///
/// A SEARCH or REPLACE line: its line-number prefix dropped when the part is numbered, then
/// its escape.
fn body_line(content: In<'_>, numbered: bool) -> Cow<'_, [u8]> {
    let text = if numbered {
        line_number(content).map_or(content, |(_, rest)| rest)
    } else {
        content
    };
    escaped_text(text).unwrap_or(Cow::Borrowed(text))
}

/// grammar: escaped_text
///
/// Roo's escape: a `\` (after blanks) before a marker-like text is dropped, so that a line of
/// the file that looks like a marker can be written in a block.
fn escaped_text(t: In<'_>) -> Option<Cow<'_, [u8]>> {
    let parsed: Res<'_, _> = (ws, tag("\\")).parse(t);
    let (rest, (indent, _)) = parsed.ok()?;
    if !escapable(rest) {
        return None;
    }
    Some(if indent.is_empty() {
        Cow::Borrowed(rest)
    } else {
        Cow::Owned([indent, rest].concat())
    })
}

/// grammar: escapable
///
/// Text that, after blanks and further backslashes, starts like a marker: 5 `<`, `=` or `>`,
/// 3 `-` or `+`, `:start_line:` or `:end_line:`. Further backslashes make every text
/// writable: `\\=======` stands for the line `\=======`.
pub(super) fn escapable(t: In<'_>) -> bool {
    const LIKE: [&[u8]; 7] = [
        b"<<<<<", b"=====", b">>>>>", b"---", b"+++", START_LINE, END_LINE,
    ];
    let mut t = t;
    loop {
        t = t.trim_ascii_start();
        match t.strip_prefix(b"\\") {
            Some(rest) => t = rest,
            None => break,
        }
    }
    LIKE.iter().any(|p| t.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_drop_one_backslash_before_marker_like_text() {
        let esc =
            |t: &str| escaped_text(t.as_bytes()).map(|c| String::from_utf8_lossy(&c).into_owned());
        assert_eq!(esc("\\======="), Some("=======".into()));
        assert_eq!(esc("  \\>>>>>>> REPLACE"), Some("  >>>>>>> REPLACE".into()));
        assert_eq!(esc("\\<<<<<<< HEAD"), Some("<<<<<<< HEAD".into()));
        assert_eq!(esc("\\:start_line:5"), Some(":start_line:5".into()));
        assert_eq!(esc("\\-------"), Some("-------".into()));
        assert_eq!(esc("\\\\======="), Some("\\=======".into()));
        assert_eq!(esc("\\\\hline"), None);
        assert_eq!(esc("\\d+"), None);
        assert_eq!(esc("\\ No newline at end of file"), None);
        assert_eq!(esc("a \\======="), None);
    }

    #[test]
    fn line_number_prefixes() {
        assert_eq!(line_number(b"12 | x"), Some((12, &b"x"[..])));
        assert_eq!(
            line_number(b"  7 |   indented"),
            Some((7, &b"  indented"[..]))
        );
        assert_eq!(line_number(b"3 |"), Some((3, &b""[..])));
        assert_eq!(line_number(b"1 | |a|b|"), Some((1, &b"|a|b|"[..])));
        assert_eq!(line_number(b"| x"), None);
        assert_eq!(line_number(b"1| x"), None);
        assert_eq!(line_number(b"x 1 | y"), None);
    }
}
