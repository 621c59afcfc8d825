//! Stage: parse (detection, SPEC §1). Finds which format a patch input is in and where the
//! patch starts, skipping a BOM, blank lines, prose and a shell heredoc opener. It only looks
//! at line starts; it never reads a patch body (the front ends do).

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::combinator::{eof, opt};
use nom::sequence::{delimited, terminated};
use nom::{IResult, Parser};

use super::ParseError;
use crate::model::Format;
use crate::text::BOM;

/// Where a patch was found in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Detected {
    /// The format of the patch.
    pub format: Format,
    /// Byte offset of the patch's first line (`*** Begin Patch`, `diff --git`, `---`, `{`).
    pub start: usize,
    /// The `DIR` of a heredoc opener `cd DIR && apply_patch <<'EOF'` before the patch.
    pub cd: Option<String>,
}

/// A shell heredoc opener before the patch: `[cd DIR &&] apply_patch <<'TAG'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heredoc<'a> {
    pub cd: Option<String>,
    /// The word that, alone on a line, closes the heredoc.
    pub tag: &'a [u8],
}

/// Find the patch in `input` (SPEC §1): the first line that, trimmed, starts with
/// `*** Begin Patch`, or starts with `diff --git `, or with `--- ` followed by a line starting
/// with `+++ `, or with `{`, or is a SEARCH opener (SPEC §4b). `None` when there is no such
/// line.
///
/// ```
/// use apply_patch::parse::detect;
/// use apply_patch::Format;
/// let input = b"Please apply:\n\ncd src && apply_patch <<'EOF'\n*** Begin Patch\n";
/// let found = detect(input).unwrap();
/// assert_eq!(found.format, Format::Agent);
/// assert_eq!(found.start, 45);
/// assert_eq!(found.cd.as_deref(), Some("src"));
/// ```
pub fn detect(input: &[u8]) -> Option<Detected> {
    scan(input, None)
}

/// Like [`detect`] but only for `format` (`--format`). When no line starts that format, no
/// patch was found: the error quotes none of the input, and names the line where a patch of
/// another format starts, if one does.
pub(crate) fn detect_as(input: &[u8], format: Format) -> Result<Detected, ParseError> {
    scan(input, Some(format)).ok_or_else(|| {
        let expected = match format {
            Format::Agent => {
                "no agent patch found: expected a line starting with `*** Begin Patch`"
            }
            Format::Unified => {
                "no unified diff found: expected a `diff --git ` line, or a `--- ` line followed \
                 by a `+++ ` line"
            }
            Format::Json => "no JSON edit request found: expected a line starting with `{`",
            Format::Blocks => {
                "no SEARCH/REPLACE block found: expected a `<<<<<<< SEARCH` or `------- SEARCH` \
                 line, or a tool call holding one"
            }
        };
        let mut message = expected.to_string();
        if let Some(other) = detect(input) {
            let line = 1 + super::position::count_newlines(&input[..other.start]);
            message.push_str(&format!(
                " (line {line} starts {}: drop --format, or pass --format {})",
                describe(other.format),
                other.format.as_str()
            ));
        }
        ParseError::about_input(message).with_hint(
            crate::spelling::Hint::new().clause(
                crate::spelling::Hint::new()
                    .text("`")
                    .name(crate::spelling::Opt::Format)
                    .text("` forces the format; without it the format is detected"),
            ),
        )
    })
}

/// A patch of `format`, in a message's words ("an agent patch").
pub(crate) fn describe(format: Format) -> &'static str {
    match format {
        Format::Agent => "an agent patch",
        Format::Unified => "a unified diff",
        Format::Json => "a JSON edit request",
        Format::Blocks => "SEARCH/REPLACE blocks",
    }
}

/// SPEC §1: an argument is patch text when it holds a newline and starts, after blanks, with
/// `*** Begin Patch`.
///
/// ```
/// use apply_patch::parse::is_inline_patch_text;
/// assert!(is_inline_patch_text("  *** Begin Patch\n*** End Patch"));
/// assert!(!is_inline_patch_text("patch.txt"));
/// ```
pub fn is_inline_patch_text(arg: &str) -> bool {
    arg.contains('\n') && arg.trim_start().starts_with("*** Begin Patch")
}

/// The error for input in which no format was found. It quotes none of the input (SPEC §1:
/// a file that is not a patch must not leak through an error message).
pub(crate) fn nothing_found(input: &[u8]) -> ParseError {
    let start = body_start(input);
    let empty = input[start..].iter().all(u8::is_ascii_whitespace);
    let message = if empty {
        "the patch is empty".to_string()
    } else {
        let lines = 1 + super::position::count_newlines(input.trim_ascii_end());
        format!(
            "no patch found in the input ({lines} line{}, none shown): expected a line \
             starting with `*** Begin Patch`, `diff --git `, `--- ` followed by `+++ `, `{{`, \
             or `<<<<<<< SEARCH`",
            if lines == 1 { "" } else { "s" }
        )
    };
    ParseError::about_input(message).with_hint(
        crate::spelling::Hint::new()
            .text(
                "send an agent patch (`*** Begin Patch` … `*** End Patch`), a unified diff, a \
                 JSON edit request or SEARCH/REPLACE blocks",
            )
            .clause(
                crate::spelling::Hint::new()
                    .text("; `")
                    .opt(
                        crate::spelling::Opt::Format,
                        crate::spelling::Value::Text("agent|unified|json|blocks".into()),
                    )
                    .text("` forces a format"),
            ),
    )
}

/// The heredoc that is still open at byte `start`: the last opener before it whose closing
/// word does not stand alone on a line in between (as the shell reads it, everything up to
/// that word, prose included, is the input of `apply_patch`).
pub(crate) fn heredoc_before(input: &[u8], start: usize) -> Option<Heredoc<'_>> {
    let head = &input[..start.min(input.len())];
    let mut open = None;
    for (_, content) in lines(head) {
        match heredoc_open(content) {
            Ok((_, heredoc)) => open = Some(heredoc),
            Err(_) if open.as_ref().is_some_and(|h| h.tag == content) => open = None,
            Err(_) => {}
        }
    }
    open
}

/// The first line of `input` that starts an agent envelope or a unified diff: what counts as
/// a second patch in the prose around SEARCH/REPLACE blocks (a `{` line there is a code
/// snippet of the explanation, not a JSON request).
pub(crate) fn envelope_or_diff(input: &[u8]) -> Option<Detected> {
    let agent = scan(input, Some(Format::Agent));
    let unified = scan(input, Some(Format::Unified));
    match (agent, unified) {
        (Some(a), Some(u)) => Some(if a.start <= u.start { a } else { u }),
        (a, u) => a.or(u),
    }
}

fn scan(input: &[u8], only: Option<Format>) -> Option<Detected> {
    let wanted = |f: Format| only.is_none_or(|o| o == f);
    // The offset of a `---` line seen on the previous line.
    let mut previous: Option<usize> = None;
    for (offset, content) in lines(input) {
        // A `---` line is only a unified header when a `+++` line follows it.
        if let Some(dashes) = previous.take() {
            if content.starts_with(b"+++ ") && wanted(Format::Unified) {
                return Some(found(input, Format::Unified, dashes));
            }
        }
        let format = if trim(content).starts_with(b"*** Begin Patch") {
            Some(Format::Agent)
        } else if super::blocks::is_opener_line(content)
            || (only == Some(Format::Blocks) && super::blocks::is_call_line(content))
        {
            // `--format blocks` also takes a tool call (`{"path", "diff"}`, `<apply_diff>`).
            Some(Format::Blocks)
        } else if content.starts_with(b"diff --git ") {
            Some(Format::Unified)
        } else if content.starts_with(b"{")
            || (only == Some(Format::Json) && content.trim_ascii_start().starts_with(b"{"))
        {
            // `--format json` also takes an indented request (serde skips the blanks).
            Some(Format::Json)
        } else {
            if content.starts_with(b"--- ") {
                previous = Some(offset);
            }
            None
        };
        if let Some(format) = format.filter(|&f| wanted(f)) {
            return Some(found(input, format, offset));
        }
    }
    None
}

fn found(input: &[u8], format: Format, start: usize) -> Detected {
    let cd = heredoc_before(input, start).and_then(|h| h.cd);
    Detected { format, start, cd }
}

/// Byte offset after a leading BOM.
fn body_start(input: &[u8]) -> usize {
    bom(input).map_or(0, |(_, mark)| mark.len())
}

/// Every line after the BOM: its byte offset and its content without the line ending.
fn lines(input: &[u8]) -> impl Iterator<Item = (usize, &[u8])> {
    let mut rest = &input[body_start(input)..];
    std::iter::from_fn(move || {
        let at = input.len() - rest.len();
        let (next, content) = prose_line(rest).ok()?;
        rest = next;
        Some((at, strip_cr(content)))
    })
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii()
}

/// grammar: bom
pub(crate) fn bom(i: &[u8]) -> IResult<&[u8], &[u8]> {
    tag(BOM).parse(i)
}

/// grammar: prose_line
///
/// Any line before the patch that detection does not take for the start of a patch.
pub(crate) fn prose_line(i: &[u8]) -> IResult<&[u8], &[u8]> {
    if i.is_empty() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Eof,
        )));
    }
    let (rest, line) = take_while(|b| b != b'\n').parse(i)?;
    let (rest, _) = opt(tag("\n")).parse(rest)?;
    Ok((rest, line))
}

/// grammar: heredoc_open
///
/// `[cd DIR &&] apply_patch <<['"]TAG['"]`, the way agents wrap a patch in a shell command;
/// parses one line's content (no line ending).
pub(crate) fn heredoc_open(i: &[u8]) -> IResult<&[u8], Heredoc<'_>> {
    let blanks = || take_while(|b| b == b' ' || b == b'\t');
    let (i, _) = blanks().parse(i)?;
    let (i, cd) = opt(delimited(
        (tag("cd"), take_while1(|b| b == b' ' || b == b'\t')),
        shell_word,
        (blanks(), tag("&&"), blanks()),
    ))
    .parse(i)?;
    let (i, _) = (
        nom::branch::alt((tag("apply_patch"), tag("applypatch"))),
        blanks(),
        tag("<<"),
        blanks(),
    )
        .parse(i)?;
    let (i, tag_word) = heredoc_tag(i)?;
    let (i, _) = terminated(blanks(), eof).parse(i)?;
    let cd = cd.map(|dir| String::from_utf8_lossy(dir).into_owned());
    Ok((i, Heredoc { cd, tag: tag_word }))
}

/// grammar: heredoc_tag
///
/// The heredoc's closing word, bare or in single or double quotes.
fn heredoc_tag(i: &[u8]) -> IResult<&[u8], &[u8]> {
    nom::branch::alt((
        delimited(tag("'"), word, tag("'")),
        delimited(tag("\""), word, tag("\"")),
        word,
    ))
    .parse(i)
}

/// grammar: word
fn word(i: &[u8]) -> IResult<&[u8], &[u8]> {
    take_while1(|b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-').parse(i)
}

/// grammar: dir
///
/// The directory of `cd DIR`: a shell word, bare or quoted.
fn shell_word(i: &[u8]) -> IResult<&[u8], &[u8]> {
    let bare = |b: u8| !b.is_ascii_whitespace() && b != b'\'' && b != b'"' && b != b'&';
    nom::branch::alt((
        delimited(tag("'"), take_while1(|b| b != b'\''), tag("'")),
        delimited(tag("\""), take_while1(|b| b != b'"'), tag("\"")),
        take_while1(bare),
    ))
    .parse(i)
}

/// The patch body that starts at byte `start` of `input`: up to the closing word when a
/// heredoc opener stands right before it, else to the end; and the `cd DIR` of that opener.
pub(crate) fn patch_body(input: &[u8], start: usize) -> (&[u8], Option<String>) {
    let start = start.min(input.len());
    match heredoc_before(input, start) {
        Some(h) => (heredoc_close(&input[start..], h.tag), h.cd),
        None => (&input[start..], None),
    }
}

/// grammar: heredoc_close
///
/// The line that is exactly the heredoc's tag; returns the input that precedes it (the
/// heredoc's body) or all of `i` when the tag never stands alone on a line.
pub(crate) fn heredoc_close<'a>(i: &'a [u8], word: &[u8]) -> &'a [u8] {
    let mut offset = 0;
    for raw in i.split_inclusive(|&b| b == b'\n') {
        let content = strip_cr(raw.strip_suffix(b"\n").unwrap_or(raw));
        if content == word {
            return &i[..offset];
        }
        offset += raw.len();
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detected(input: &str) -> Option<(Format, usize, Option<String>)> {
        detect(input.as_bytes()).map(|d| (d.format, d.start, d.cd))
    }

    #[test]
    fn finds_each_format_after_prose() {
        assert_eq!(
            detected("hi\n*** Begin Patch\n"),
            Some((Format::Agent, 3, None))
        );
        assert_eq!(
            detected("Subject: x\n\ndiff --git a/x b/x\n"),
            Some((Format::Unified, 12, None))
        );
        assert_eq!(
            detected("note\n--- a\n+++ b\n"),
            Some((Format::Unified, 5, None))
        );
        assert_eq!(detected("\n{\"edits\": []}"), Some((Format::Json, 1, None)));
    }

    #[test]
    fn a_dashed_line_without_plus_line_is_prose() {
        assert_eq!(detected("--- note\nmore\n"), None);
        assert_eq!(
            detected("--- note\n*** Begin Patch\n"),
            Some((Format::Agent, 9, None))
        );
    }

    #[test]
    fn bom_and_whitespace_padding_are_skipped() {
        assert_eq!(
            detected("\u{feff}  *** Begin Patch  \r\n"),
            Some((Format::Agent, 3, None))
        );
    }

    #[test]
    fn heredoc_opener_gives_the_cd() {
        let input = "cd 'my dir' && apply_patch <<\"PATCH\"\n*** Begin Patch\n";
        let (format, _, cd) = detected(input).expect("found");
        assert_eq!(format, Format::Agent);
        assert_eq!(cd.as_deref(), Some("my dir"));
        let here = heredoc_before(input.as_bytes(), 36).expect("opener");
        assert_eq!(here.tag, b"PATCH");
    }

    #[test]
    fn heredoc_opener_forms() {
        for line in [
            "apply_patch <<EOF",
            "apply_patch <<'EOF'",
            "applypatch << \"EOF\"",
            "cd src&&apply_patch <<'EOF'",
        ] {
            assert!(heredoc_open(line.as_bytes()).is_ok(), "{line}");
        }
        for line in [
            "apply_patch <<'EOF' extra",
            "cat <<EOF",
            "cd && apply_patch <<EOF",
        ] {
            assert!(heredoc_open(line.as_bytes()).is_err(), "{line}");
        }
    }

    #[test]
    fn a_closed_heredoc_gives_no_cd() {
        let input = "cd x && apply_patch <<EOF\nold\nEOF\nprose\n*** Begin Patch\n";
        let (_, _, cd) = detected(input).expect("found");
        assert_eq!(cd, None);
        let input = "cd x && apply_patch <<EOF\nprose\n\n*** Begin Patch\n";
        assert_eq!(detected(input).expect("found").2.as_deref(), Some("x"));
        let input = "cd y && apply_patch <<EOF\n--- a/f\n+++ b/f\n";
        assert_eq!(detected(input).expect("found").2.as_deref(), Some("y"));
    }

    #[test]
    fn heredoc_close_cuts_at_the_tag_line() {
        assert_eq!(heredoc_close(b"a\nEOF\nb\n", b"EOF"), b"a\n");
        assert_eq!(heredoc_close(b"a\n EOF\n", b"EOF"), b"a\n EOF\n");
    }

    #[test]
    fn forced_format_finds_its_own_start_or_quotes_nothing() {
        let d = detect_as(b"x\n{\n", Format::Json).expect("a JSON start");
        assert_eq!(d.start, 2);
        let d = detect_as(b"x\n  {}\n", Format::Json).expect("an indented JSON start");
        assert_eq!(d.start, 2);
        let err = detect_as(b"\n\nsecret words\n", Format::Agent).expect_err("none");
        assert!(!err.located && !err.to_string().contains("secret"), "{err}");
        let err = detect_as(b"secret\n*** Begin Patch\n", Format::Unified).expect_err("none");
        assert!(
            err.message.contains("line 2 starts an agent patch"),
            "{err}"
        );
        assert!(!err.to_string().contains("secret"));
    }

    #[test]
    fn inline_patch_text_needs_a_newline() {
        assert!(is_inline_patch_text("*** Begin Patch\n"));
        assert!(!is_inline_patch_text("*** Begin Patch"));
        assert!(!is_inline_patch_text("x\n*** Begin Patch\n"));
    }

    #[test]
    fn nothing_found_distinguishes_empty_input() {
        assert_eq!(nothing_found(b"\n \n").message, "the patch is empty");
        assert!(nothing_found(b"hello")
            .message
            .starts_with("no patch found"));
    }
}
