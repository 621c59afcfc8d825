//! Stage: parse — the agent patch language (SPEC §2; normative grammar: `grammar/agent.ebnf`)
//! into the model. Every nom function here implements one production of the grammar and names
//! it in a `/// grammar:` line. Pure: no I/O and no placement decisions (where a hunk goes is
//! the locator's business); nom's error type stays in this module and leaves it as a
//! [`ParseError`]. Line text borrows from the input. Submodules: `lex` (lines, markers,
//! the private error type) and `hunk` (`@@` headers and hunk bodies).

use nom::bytes::complete::take_while;
use nom::combinator::opt;
use nom::Parser;

use super::position::{shown, LineCounter};
use super::{detect, one_patch, ParseError, ParseOptions};
use crate::model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet, Rules};

mod hunk;
mod lex;

use hunk::{empty_line, first_hunk, hunk};
use lex::{
    begin_marker, blank_lines, end_marker, end_of_file, fail, failure, is_marker_line, line,
    marker_with_arg, miss, peek, ws, Fail, In, Res,
};

const HINT_FILE_OPS: &str = "between `*** Begin Patch` and `*** End Patch` write `*** Add File: \
PATH`, `*** Delete File: PATH` or `*** Update File: PATH` (each followed by its lines)";
const HINT_HUNK_LINE: &str = "start context lines with one space, deleted lines with `-`, \
inserted lines with `+`, and each new hunk with an `@@` line";

/// Read an agent patch from byte offset `start` of `input` (the `*** Begin Patch` line found by
/// detection). A heredoc opener right before `start` makes its closing word end the input and
/// its `cd DIR` the patch's [`PatchSet::cd`].
///
/// grammar: agent_document
///
/// ```
/// use apply_patch::parse::{agent, ParseOptions};
/// use apply_patch::FileOp;
/// let input = b"*** Begin Patch\n*** Update File: a.txt\n@@ fn main\n-x\n+y\n*** End Patch\n";
/// let set = agent::parse(input, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(set.files[0].op, FileOp::Modify);
/// assert_eq!(set.files[0].body.hunks()[0].anchors[0].as_ref(), b"fn main");
/// ```
pub fn parse<'a>(
    input: &'a [u8],
    start: usize,
    _opts: &ParseOptions,
) -> Result<PatchSet<'a>, ParseError> {
    let start = start.min(input.len());
    let (body, cd) = detect::patch_body(input, start);
    let end = start + body.len();
    // One patch per input, checked first: a second envelope after this one is named as such
    // (with both lines), not as a stray marker after `*** End Patch`.
    if let Some(envelope) = envelope_end(body) {
        one_patch::nothing_after(input, (Format::Agent, start), start + envelope)?;
    }
    match agent_input(body) {
        Ok((_, mut files)) => {
            number_lines(&mut files, &input[..end]);
            Ok(PatchSet {
                format: Format::Agent,
                rules: Rules::AGENT,
                cd,
                files,
            })
        }
        Err(nom::Err::Error(f) | nom::Err::Failure(f)) => {
            let offset = f.addr.saturating_sub(input.as_ptr() as usize).min(end);
            let err = ParseError::at(input, offset, f.message);
            Err(match f.hint {
                Some(hint) => err.with_hint(hint),
                None => err,
            })
        }
        Err(nom::Err::Incomplete(_)) => Err(ParseError::at(input, end, "the patch ends too early")
            .with_hint("finish the patch with `*** End Patch`")),
    }
}

/// Where the envelope that starts `body` ends: after its first line that, trimmed, is
/// `*** End Patch` (a marker wherever it stands, as the parser reads it); `None` when there
/// is none (the patch is cut off, which the parser refuses).
fn envelope_end(body: &[u8]) -> Option<usize> {
    let mut offset = 0;
    for raw in body.split_inclusive(|&b| b == b'\n') {
        offset += raw.len();
        if raw.trim_ascii() == b"*** End Patch" {
            return Some(offset);
        }
    }
    None
}

/// While parsing, `patch_line` fields hold the remaining input length at the file patch or
/// hunk (the parsers see only slices); here they become 1-based line numbers of `scope`.
fn number_lines(files: &mut [FilePatch<'_>], scope: &[u8]) {
    let mut counter = LineCounter::new(scope);
    let mut line_of = |rest: usize| counter.line_of(scope.len() - rest.min(scope.len()));
    for file in files {
        file.patch_line = line_of(file.patch_line);
        if let Body::Hunks(hunks) = &mut file.body {
            for hunk in hunks {
                hunk.patch_line = line_of(hunk.patch_line);
            }
        }
    }
}

/// grammar: agent_input
fn agent_input(i: In<'_>) -> Res<'_, Vec<FilePatch<'_>>> {
    let (mut i, files) = patch(i)?;
    while !i.is_empty() {
        (i, ()) = trailer_line(i)?;
    }
    Ok((i, files))
}

/// grammar: patch
fn patch(i: In<'_>) -> Res<'_, Vec<FilePatch<'_>>> {
    let whole = i;
    let (mut i, ()) = match begin_marker(i) {
        Ok(ok) => ok,
        Err(nom::Err::Error(_)) => {
            let found = if i.is_empty() {
                "the end of the input".to_string()
            } else {
                format!("`{}`", shown(peek(i)))
            };
            return fail(
                i,
                format!("expected `*** Begin Patch`, found {found}"),
                "an agent patch starts with the line `*** Begin Patch` and ends with `*** End \
                 Patch`",
            );
        }
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    loop {
        i = blank_lines(i);
        if i.is_empty() {
            return Err(cut_off(whole));
        }
        if let Ok((rest, ())) = end_marker(i) {
            if files.is_empty() {
                return fail(i, "the patch has no file operation", HINT_FILE_OPS);
            }
            return Ok((rest, files));
        }
        match file_op(i) {
            Ok((rest, file)) => {
                files.push(file);
                i = rest;
            }
            Err(nom::Err::Error(_)) => return Err(not_a_file_op(i)),
            Err(e) => return Err(e),
        }
    }
}

/// The error for a patch that ends without `*** End Patch` (SPEC §2): most often a model's
/// output cut off by a token limit, whose last file may be cut mid-line. It must never be
/// half applied, so it is refused at its last (non-blank) line.
fn cut_off(patch: In<'_>) -> nom::Err<Fail> {
    let content = patch.trim_ascii_end();
    let last = content
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    failure(
        &patch[last..],
        "the patch ends without `*** End Patch`: it looks cut off (a truncated output?), so \
         none of it is applied",
        "send the whole patch again, ending with the line `*** End Patch`",
    )
}

/// The error for a line where a file operation or `*** End Patch` was expected.
fn not_a_file_op(i: In<'_>) -> nom::Err<Fail> {
    let content = peek(i);
    let indent = content.len() - content.trim_ascii_start().len();
    let at = &i[indent.min(i.len())..];
    let found = shown(content.trim_ascii());
    let (message, hint) = match content.trim_ascii() {
        t if t.starts_with(b"*** Move to:") => (
            "`*** Move to:` must directly follow `*** Update File:`".to_string(),
            "write `*** Move to: NEW` right after the `*** Update File: OLD` line".to_string(),
        ),
        t if t.starts_with(b"*** Base:") => (
            "`*** Base:` must directly follow `*** Update File:` or `*** Delete File:` (or \
             `*** Move to:`)"
                .to_string(),
            "put the base hash right after the file's header line".to_string(),
        ),
        t if t == b"*** Begin Patch" => (
            "`*** Begin Patch` inside a patch".to_string(),
            "close the previous patch with `*** End Patch` and send one patch at a time"
                .to_string(),
        ),
        t if t.starts_with(b"@@") || matches!(content.first(), Some(b' ' | b'-' | b'+')) => (
            format!("hunk line outside an `*** Update File:` section: `{found}`"),
            "hunks belong to `*** Update File: PATH`; an added file's lines start with `+`"
                .to_string(),
        ),
        _ => (
            format!(
                "expected a file operation (`*** Add File: `, `*** Delete File: `, `*** Update \
                 File: `) or `*** End Patch`, found `{found}`"
            ),
            HINT_FILE_OPS.to_string(),
        ),
    };
    failure(at, message, hint)
}

/// grammar: file_op
fn file_op(i: In<'_>) -> Res<'_, FilePatch<'_>> {
    nom::branch::alt((add_file, delete_file, update_file)).parse(i)
}

/// grammar: add_header
fn add_header(i: In<'_>) -> Res<'_, String> {
    let Some((rest, arg)) = marker_with_arg(i, b"*** Add File:") else {
        return miss(i);
    };
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: delete_header
fn delete_header(i: In<'_>) -> Res<'_, String> {
    let Some((rest, arg)) = marker_with_arg(i, b"*** Delete File:") else {
        return miss(i);
    };
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: update_header
fn update_header(i: In<'_>) -> Res<'_, String> {
    let Some((rest, arg)) = marker_with_arg(i, b"*** Update File:") else {
        return miss(i);
    };
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: move_line
fn move_line(i: In<'_>) -> Res<'_, String> {
    let Some((rest, arg)) = marker_with_arg(i, b"*** Move to:") else {
        return miss(i);
    };
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: base_line
fn base_line(i: In<'_>) -> Res<'_, String> {
    let Some((rest, arg)) = marker_with_arg(i, b"*** Base:") else {
        return miss(i);
    };
    let (arg, _) = ws(arg)?;
    let (tail, digits) = hex(arg)?;
    if !tail.trim_ascii().is_empty() {
        return fail(
            tail,
            "unexpected text after the `*** Base:` hash",
            "write only the hexadecimal hash after `*** Base: `",
        );
    }
    Ok((rest, String::from_utf8_lossy(digits).to_ascii_lowercase()))
}

/// grammar: hex
fn hex(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, digits) = take_while(|b: u8| b.is_ascii_hexdigit()).parse(i)?;
    if digits.len() < 8 {
        return fail(
            i,
            format!(
                "`*** Base:` needs at least 8 hexadecimal digits, found {}",
                digits.len()
            ),
            "give a prefix of the SHA-256 of the file's bytes as they are on disk (`sha256sum \
             FILE`)",
        );
    }
    Ok((rest, digits))
}

/// grammar: path
///
/// The path after a marker's colon: trimmed, UTF-8, a leading `./` dropped. A NUL byte or a
/// trailing `/` (a folder: `*** Add File: dir/` must not create a file `dir`) is refused.
fn path(i: In<'_>) -> Res<'_, String> {
    let (i, _) = ws(i)?;
    let raw = i.trim_ascii_end();
    let Ok(text) = std::str::from_utf8(raw) else {
        return fail(
            i,
            "the path is not valid UTF-8",
            "agent patches name files by UTF-8 paths; use a unified diff for other names",
        );
    };
    let mut p = text;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.trim_start_matches('/');
    }
    if p.is_empty() || p == "." {
        return fail(
            i,
            "missing path after the marker",
            "write the file's path (relative to the root) after the colon",
        );
    }
    if let Some(at) = p.find('\0') {
        let offset = text.len() - p.len() + at;
        return fail(
            &i[offset..],
            "the path holds a NUL byte",
            "no file name can hold a NUL byte; write the path without it",
        );
    }
    if p.ends_with('/') {
        return fail(
            &i[text.len() - 1..],
            format!(
                "the path `{}` ends in `/`: it names a folder, not a file",
                shown(p.as_bytes())
            ),
            "name a file (a folder is made for the files added inside it)",
        );
    }
    Ok((&i[i.len()..], p.to_string()))
}

/// grammar: add_file
fn add_file(i: In<'_>) -> Res<'_, FilePatch<'_>> {
    let header_at = i.len();
    let (mut i, path) = add_header(i)?;
    let body_at = i.len();
    let mut lines = Vec::new();
    // Leniency: empty lines between `+` lines are lines of the file; after the last `+`
    // line they only separate file operations.
    let mut blanks = Vec::new();
    loop {
        if let Ok((rest, text)) = added_line(i) {
            lines.append(&mut blanks);
            lines.push(Line::new(LineKind::Insert, text));
            i = rest;
        } else if let (false, Ok((rest, text))) = (is_marker_line(i), empty_line(i)) {
            blanks.push(Line::new(LineKind::Insert, text));
            i = rest;
        } else {
            break;
        }
    }
    if !i.is_empty() && !is_marker_line(i) {
        return fail(
            i,
            "expected a `+` line of the added file, or the next file operation",
            "every line of an added file starts with `+` (an empty line is a lone `+`)",
        );
    }
    let hunks = if lines.is_empty() {
        Vec::new()
    } else {
        vec![Hunk {
            lines,
            patch_line: body_at,
            ..Hunk::default()
        }]
    };
    let file = file_patch(FileOp::Add, None, Some(path), hunks, header_at);
    Ok((i, file))
}

/// grammar: added_line
fn added_line(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = line(i)?;
    match content.strip_prefix(b"+") {
        Some(text) => Ok((rest, text)),
        None => miss(i),
    }
}

/// grammar: delete_file
fn delete_file(i: In<'_>) -> Res<'_, FilePatch<'_>> {
    let header_at = i.len();
    let (i, path) = delete_header(i)?;
    let (i, base) = opt(base_line).parse(i)?;
    let mut file = file_patch(FileOp::Delete, Some(path), None, Vec::new(), header_at);
    file.base = base;
    Ok((i, file))
}

/// grammar: update_file
fn update_file(i: In<'_>) -> Res<'_, FilePatch<'_>> {
    let header_at = i.len();
    let (i, path) = update_header(i)?;
    let (i, (move_to, base)) = update_meta(i)?;
    let mut i = blank_lines(i);
    let mut hunks = Vec::new();
    loop {
        if i.is_empty() || (is_marker_line(i) && end_of_file(i).is_err()) {
            break;
        }
        let parsed = if hunks.is_empty() {
            first_hunk(i)
        } else {
            hunk(i)
        };
        match parsed {
            Ok((rest, h)) => {
                hunks.push(h);
                i = rest;
            }
            Err(nom::Err::Error(_)) => {
                let found = shown(peek(i));
                return fail(
                    i,
                    format!(
                        "expected a hunk line starting with ' ', '-' or '+', an `@@` line or \
                         the next file operation, found `{found}`"
                    ),
                    HINT_HUNK_LINE,
                );
            }
            Err(e) => return Err(e),
        }
    }
    if hunks.is_empty() && move_to.is_none() {
        let next = shown(peek(i).trim_ascii());
        let found = if i.is_empty() {
            "the end of the input".to_string()
        } else {
            format!("`{next}`")
        };
        return fail(
            i,
            format!(
                "`*** Update File: {}` has no hunk: expected an `@@` line, found {found}",
                shown(path.as_bytes())
            ),
            "give at least one hunk (`@@` then ` context`, `-deleted` and `+inserted` lines); \
             to only rename, add `*** Move to: NEW`",
        );
    }
    let op = if move_to.is_some() {
        FileOp::Rename
    } else {
        FileOp::Modify
    };
    let new_path = Some(move_to.unwrap_or_else(|| path.clone()));
    let mut file = file_patch(op, Some(path), new_path, hunks, header_at);
    file.base = base;
    Ok((i, file))
}

type Meta = (Option<String>, Option<String>);

/// grammar: update_meta
///
/// The optional `*** Move to:` and `*** Base:` lines after `*** Update File:`, in either
/// order, each at most once.
fn update_meta(mut i: In<'_>) -> Res<'_, Meta> {
    let (mut move_to, mut base) = (None, None);
    loop {
        match move_line(i) {
            Ok((rest, p)) => {
                if move_to.replace(p).is_some() {
                    return fail(i, "a second `*** Move to:` for one file", "keep one");
                }
                i = rest;
                continue;
            }
            Err(nom::Err::Error(_)) => {}
            Err(e) => return Err(e),
        }
        match base_line(i) {
            Ok((rest, b)) => {
                if base.replace(b).is_some() {
                    return fail(i, "a second `*** Base:` for one file", "keep one");
                }
                i = rest;
            }
            Err(nom::Err::Error(_)) => return Ok((i, (move_to, base))),
            Err(e) => return Err(e),
        }
    }
}

fn file_patch<'a>(
    op: FileOp,
    old_path: Option<String>,
    new_path: Option<String>,
    hunks: Vec<Hunk<'a>>,
    at: usize,
) -> FilePatch<'a> {
    FilePatch::new(op, old_path, new_path, Body::Hunks(hunks), at)
}

/// grammar: trailer_line
///
/// Leniency: text after `*** End Patch` is ignored, unless it is a marker (a second patch or a
/// stray file operation would otherwise be skipped silently).
fn trailer_line(i: In<'_>) -> Res<'_, ()> {
    if is_marker_line(i) {
        let next = shown(peek(i).trim_ascii());
        return fail(
            i,
            format!("`{next}` after `*** End Patch`"),
            "put every file operation between `*** Begin Patch` and `*** End Patch`, and send \
             one patch at a time",
        );
    }
    let (rest, _) = line(i)?;
    Ok((rest, ()))
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn parse_ok(input: &str) -> PatchSet<'_> {
        match parse(input.as_bytes(), 0, &ParseOptions::default()) {
            Ok(set) => set,
            Err(e) => panic!("{}", e.render()),
        }
    }

    fn parse_err(input: &str) -> ParseError {
        match parse(input.as_bytes(), 0, &ParseOptions::default()) {
            Ok(set) => panic!("parsed: {set:?}"),
            Err(e) => e,
        }
    }

    fn texts(hunk: &Hunk<'_>) -> Vec<(LineKind, String)> {
        hunk.lines
            .iter()
            .map(|l| (l.kind, String::from_utf8_lossy(&l.text).into_owned()))
            .collect()
    }

    #[test]
    fn line_text_borrows_from_the_input() {
        let set = parse_ok("*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch\n");
        let hunk = &set.files[0].body.hunks()[0];
        assert!(hunk
            .lines
            .iter()
            .all(|l| matches!(l.text, Cow::Borrowed(_))));
    }

    #[test]
    fn crlf_lines_lose_their_cr() {
        let set = parse_ok(
            "*** Begin Patch\r\n*** Update File: a\r\n@@ f\r\n x\r\n-y\r\n+z\r\n*** End Patch\r\n",
        );
        let hunk = &set.files[0].body.hunks()[0];
        assert_eq!(hunk.anchors[0].as_ref(), b"f");
        assert_eq!(
            texts(hunk),
            vec![
                (LineKind::Context, "x".into()),
                (LineKind::Delete, "y".into()),
                (LineKind::Insert, "z".into())
            ]
        );
    }

    #[test]
    fn trailing_empty_lines_separate_hunks_but_inner_ones_are_context() {
        let set = parse_ok(
            "*** Begin Patch\n*** Update File: a\n@@\n x\n\n-y\n\n@@ g\n+z\n\n*** End Patch\n",
        );
        let hunks = set.files[0].body.hunks();
        assert_eq!(hunks.len(), 2);
        assert_eq!(texts(&hunks[0]).len(), 3);
        assert_eq!(texts(&hunks[1]), vec![(LineKind::Insert, "z".into())]);
    }

    #[test]
    fn empty_lines_before_end_of_file_are_kept() {
        let set = parse_ok(
            "*** Begin Patch\n*** Update File: a\n@@\n x\n\n*** End of File\n*** End Patch\n",
        );
        let hunk = &set.files[0].body.hunks()[0];
        assert!(hunk.end_of_file);
        assert_eq!(hunk.lines.len(), 2);
    }

    #[test]
    fn hint_and_anchors_combine() {
        let set = parse_ok(
            "*** Begin Patch\n*** Update File: a\n@@ class A\n@@ -10,3 +10,4 @@ def f\n@@     def g\n x\n*** End Patch\n",
        );
        let hunk = &set.files[0].body.hunks()[0];
        assert_eq!(hunk.old_start, Some(10));
        assert_eq!(hunk.old_count, Some(3));
        assert_eq!(hunk.new_start, Some(10));
        assert_eq!(hunk.new_count, Some(4));
        let anchors: Vec<&[u8]> = hunk.anchors.iter().map(|a| a.as_ref()).collect();
        assert_eq!(anchors, vec![&b"class A"[..], b"    def g"]);
    }

    #[test]
    fn patch_lines_are_one_based_input_lines() {
        let input = "x\n*** Begin Patch\n*** Add File: n\n+a\n*** Update File: a\n\n@@\n-x\n*** End Patch\n";
        let set = parse(input.as_bytes(), 2, &ParseOptions::default()).expect("parses");
        assert_eq!(set.files[0].patch_line, 3);
        assert_eq!(set.files[0].body.hunks()[0].patch_line, 4);
        assert_eq!(set.files[1].patch_line, 5);
        assert_eq!(set.files[1].body.hunks()[0].patch_line, 7);
    }

    #[test]
    fn paths_lose_a_leading_dot_slash() {
        let set = parse_ok("*** Begin Patch\n*** Delete File: ./src/a.rs  \n*** End Patch");
        assert_eq!(set.files[0].old_path.as_deref(), Some("src/a.rs"));
    }

    #[test]
    fn base_is_lowercased_and_checked() {
        let set =
            parse_ok("*** Begin Patch\n*** Delete File: a\n*** Base: ABCDEF0123\n*** End Patch\n");
        assert_eq!(set.files[0].base.as_deref(), Some("abcdef0123"));
        let err = parse_err("*** Begin Patch\n*** Delete File: a\n*** Base: abc\n");
        assert_eq!((err.line, err.column), (3, 11));
        assert!(err.message.contains("at least 8"));
    }

    #[test]
    fn refusals_point_at_the_offending_line() {
        let err = parse_err("*** Begin Patch\n*** End Patch\n");
        assert_eq!(
            (err.line, err.message.as_str()),
            (2, "the patch has no file operation")
        );
        let err = parse_err("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n");
        assert_eq!(err.line, 3);
        assert!(err.message.contains("has no hunk"), "{}", err.message);
        let err = parse_err("*** Begin Patch\n  *** Frobnicate File: foo\n*** End Patch\n");
        assert_eq!((err.line, err.column), (2, 3));
        let err = parse_err("*** Begin Patch\n*** Update File: a\n@@\n x\nbad\n");
        assert_eq!(err.line, 5);
    }

    #[test]
    fn end_of_file_must_end_its_hunk() {
        let err = parse_err("*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n+y\n");
        assert_eq!(err.line, 6);
    }

    #[test]
    fn a_patch_cut_off_before_end_patch_is_refused_at_its_last_line() {
        // An added file cut mid-line, then an update cut in its hunk, then trailing blanks.
        for (input, line) in [
            ("*** Begin Patch\n*** Add File: a\n+one\n+tw", 4),
            ("*** Begin Patch\n*** Update File: a\n@@\n x\n-y\n+z\n", 6),
            ("*** Begin Patch\n*** Delete File: a\n\n\n", 2),
            ("*** Begin Patch\n", 1),
        ] {
            let err = parse_err(input);
            assert_eq!(err.line, line, "{input:?}");
            assert!(err.message.contains("cut off"), "{}", err.message);
        }
    }

    #[test]
    fn a_nul_or_a_trailing_slash_in_a_path_is_refused_where_it_stands() {
        let err = parse_err("*** Begin Patch\n*** Add File: a\0b\n+x\n*** End Patch\n");
        assert_eq!((err.line, err.column), (2, 16));
        assert!(err.message.contains("NUL"), "{}", err.message);
        let err = parse_err("*** Begin Patch\n*** Add File: dir/\n+x\n*** End Patch\n");
        assert_eq!((err.line, err.column), (2, 18));
        assert!(err.message.contains("folder"), "{}", err.message);
    }

    #[test]
    fn markers_after_end_patch_are_refused_but_prose_is_not() {
        let ok = "*** Begin Patch\n*** Delete File: a\n*** End Patch\nDone.\n";
        assert_eq!(parse_ok(ok).files.len(), 1);
        let err =
            parse_err("*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Begin Patch\n");
        assert_eq!(err.line, 4);
    }
}
