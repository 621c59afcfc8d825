//! Stage: parse — the agent patch language (SPEC §2; normative grammar: `grammar/agent.ebnf`)
//! into the model. Every nom function here implements one production of the grammar and names
//! it in a `/// grammar:` line. Pure: no I/O and no placement decisions (where a hunk goes is
//! the locator's business); nom's error type stays in this file and leaves it as a
//! [`ParseError`]. Line text borrows from the input.

use std::borrow::Cow;

use nom::bytes::complete::{tag, take_till, take_while};
use nom::character::complete::digit1;
use nom::combinator::{eof, opt};
use nom::error::ErrorKind;
use nom::sequence::preceded;
use nom::{IResult, Parser};

use super::position::{shown, LineCounter};
use super::{detect, ParseError, ParseOptions};
use crate::model::{Body, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet};

type In<'a> = &'a [u8];
type Res<'a, O> = IResult<In<'a>, O, Fail>;

/// Why a production failed. `addr` is the address of the offending spot: every slice the
/// parsers see lies inside the input, so the byte offset is recovered from the input's address
/// (slices of a line's content are not suffixes of the input, so a remaining length would not
/// do).
#[derive(Debug)]
struct Fail {
    addr: usize,
    message: String,
    hint: Option<String>,
}

impl<'a> nom::error::ParseError<In<'a>> for Fail {
    fn from_error_kind(i: In<'a>, kind: ErrorKind) -> Self {
        Fail {
            addr: i.as_ptr() as usize,
            message: format!("unexpected input ({})", kind.description()),
            hint: None,
        }
    }

    fn append(_: In<'a>, _: ErrorKind, other: Self) -> Self {
        other
    }
}

/// A hard failure at `at`: no other production can apply.
fn fail<'a, O>(at: In<'a>, message: impl Into<String>, hint: impl Into<String>) -> Res<'a, O> {
    Err(failure(at, message, hint))
}

fn failure(at: In<'_>, message: impl Into<String>, hint: impl Into<String>) -> nom::Err<Fail> {
    nom::Err::Failure(Fail {
        addr: at.as_ptr() as usize,
        message: message.into(),
        hint: Some(hint.into()),
    })
}

/// Not this production: let the caller try another.
fn miss<O>(at: In<'_>) -> Res<'_, O> {
    Err(nom::Err::Error(Fail {
        addr: at.as_ptr() as usize,
        message: "unexpected input".into(),
        hint: None,
    }))
}

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
    let heredoc = detect::heredoc_before(input, start);
    let body = match &heredoc {
        Some(h) => detect::heredoc_close(&input[start..], h.tag),
        None => &input[start..],
    };
    let end = start + body.len();
    match agent_input(body) {
        Ok((_, mut files)) => {
            number_lines(&mut files, &input[..end]);
            Ok(PatchSet {
                format: Format::Agent,
                cd: heredoc.and_then(|h| h.cd),
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
    let (mut i, ()) = match begin_marker(i) {
        Ok(ok) => ok,
        Err(nom::Err::Error(_)) => return fail(
            i,
            "expected `*** Begin Patch`",
            "an agent patch starts with the line `*** Begin Patch` and ends with `*** End Patch`",
        ),
        Err(e) => return Err(e),
    };
    let mut files = Vec::new();
    loop {
        i = blank_lines(i);
        if i.is_empty() {
            // Leniency: a missing final `*** End Patch` at the end of the input.
            break;
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
    if files.is_empty() {
        return fail(i, "the patch has no file operation", HINT_FILE_OPS);
    }
    Ok((i, files))
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

/// grammar: begin_marker
fn begin_marker(i: In<'_>) -> Res<'_, ()> {
    exact_marker(i, b"*** Begin Patch")
}

/// grammar: end_marker
fn end_marker(i: In<'_>) -> Res<'_, ()> {
    exact_marker(i, b"*** End Patch")
}

/// grammar: end_of_file
fn end_of_file(i: In<'_>) -> Res<'_, ()> {
    exact_marker(i, b"*** End of File")
}

/// A line that, trimmed, is exactly `marker`.
fn exact_marker<'a>(i: In<'a>, marker: &[u8]) -> Res<'a, ()> {
    let (rest, content) = line(i)?;
    if content.trim_ascii() == marker {
        Ok((rest, ()))
    } else {
        miss(i)
    }
}

/// A line that, trimmed, starts with `name` (`*** Add File:`…): the bytes after it.
fn marker_with_arg<'a>(i: In<'a>, name: &[u8]) -> Res<'a, In<'a>> {
    let (rest, content) = line(i)?;
    match content.trim_ascii().strip_prefix(name) {
        Some(arg) => Ok((rest, arg)),
        None => miss(i),
    }
}

/// Prefixes (of the trimmed line) that make a line a marker wherever it stands (SPEC §2).
const MARKER_PREFIXES: [&[u8]; 5] = [
    b"*** Add File:",
    b"*** Delete File:",
    b"*** Update File:",
    b"*** Move to:",
    b"*** Base:",
];
const MARKER_LINES: [&[u8]; 3] = [b"*** Begin Patch", b"*** End Patch", b"*** End of File"];

/// True when the next line is a marker (and so ends any hunk or added file it follows).
fn is_marker_line(i: In<'_>) -> bool {
    let t = peek(i).trim_ascii();
    MARKER_LINES.contains(&t) || MARKER_PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The next line's content (no ending), without consuming it.
fn peek(i: In<'_>) -> &[u8] {
    line(i).map_or(&[][..], |(_, content)| content)
}

/// grammar: add_header
fn add_header(i: In<'_>) -> Res<'_, String> {
    let (rest, arg) = marker_with_arg(i, b"*** Add File:")?;
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: delete_header
fn delete_header(i: In<'_>) -> Res<'_, String> {
    let (rest, arg) = marker_with_arg(i, b"*** Delete File:")?;
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: update_header
fn update_header(i: In<'_>) -> Res<'_, String> {
    let (rest, arg) = marker_with_arg(i, b"*** Update File:")?;
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: move_line
fn move_line(i: In<'_>) -> Res<'_, String> {
    let (rest, arg) = marker_with_arg(i, b"*** Move to:")?;
    let (_, p) = path(arg)?;
    Ok((rest, p))
}

/// grammar: base_line
fn base_line(i: In<'_>) -> Res<'_, String> {
    let (rest, arg) = marker_with_arg(i, b"*** Base:")?;
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
/// The path after a marker's colon: trimmed, UTF-8, a leading `./` dropped.
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
    FilePatch {
        op,
        old_path,
        new_path,
        old_mode: None,
        new_mode: None,
        base: None,
        blob_ids: None,
        body: Body::Hunks(hunks),
        patch_line: at,
    }
}

/// A hunk's `@@` lines gathered: anchors outermost first, at most one line-number hint.
#[derive(Debug, Default)]
struct Header<'a> {
    anchors: Vec<Cow<'a, [u8]>>,
    hint: Option<Hint>,
}

#[derive(Debug, Clone, Copy)]
struct Hint {
    old_start: usize,
    old_count: Option<usize>,
    new: Option<(usize, Option<usize>)>,
}

enum HeaderLine<'a> {
    Hint(Hint),
    Anchor(Option<&'a [u8]>),
}

/// grammar: first_hunk
///
/// Leniency: the first hunk of a file may omit its `@@` line.
fn first_hunk(i: In<'_>) -> Res<'_, Hunk<'_>> {
    let start = i;
    let (i, header) = opt(hunk_header).parse(i)?;
    hunk_body(i, header.unwrap_or_default(), start)
}

/// grammar: hunk
fn hunk(i: In<'_>) -> Res<'_, Hunk<'_>> {
    let start = i;
    let (i, header) = hunk_header(i)?;
    hunk_body(i, header, start)
}

/// grammar: hunk_header
///
/// Several `@@ ANCHOR` lines in a row narrow step by step (outermost first).
fn hunk_header(i: In<'_>) -> Res<'_, Header<'_>> {
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
fn header_line(i: In<'_>) -> Res<'_, HeaderLine<'_>> {
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
fn line_hint(i: In<'_>) -> Res<'_, Hint> {
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
fn anchor(i: In<'_>) -> Res<'_, Option<&[u8]>> {
    let (i, _) = opt(nom::branch::alt((tag(" "), tag("\t")))).parse(i)?;
    let (rest, t) = text(i)?;
    let t = t.trim_ascii_end();
    Ok((rest, (!t.trim_ascii().is_empty()).then_some(t)))
}

/// grammar: number
fn number(i: In<'_>) -> Res<'_, usize> {
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

/// grammar: hunk_body
///
/// `start` is where the hunk (its header, if any) began.
fn hunk_body<'a>(mut i: In<'a>, header: Header<'a>, start: In<'a>) -> Res<'a, Hunk<'a>> {
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
fn hunk_line(i: In<'_>) -> Res<'_, (Line<'_>, bool)> {
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
fn context_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b' ', LineKind::Context)
}

/// grammar: removed_line
fn removed_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b'-', LineKind::Delete)
}

/// grammar: inserted_line
fn inserted_line(i: In<'_>) -> Res<'_, Line<'_>> {
    prefixed_line(i, b'+', LineKind::Insert)
}

fn prefixed_line(i: In<'_>, prefix: u8, kind: LineKind) -> Res<'_, Line<'_>> {
    let (rest, content) = line(i)?;
    match content.split_first() {
        Some((&first, text)) if first == prefix => Ok((rest, Line::new(kind, text))),
        _ => miss(i),
    }
}

/// grammar: empty_line
///
/// Leniency: a line of only blanks (or none) inside a hunk is a context line of that text
/// (an empty line: an empty context line).
fn empty_line(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = line(i)?;
    if content.iter().all(|&b| b == b' ' || b == b'\t') {
        Ok((rest, content))
    } else {
        miss(i)
    }
}

/// grammar: blank_line
fn blank_line(i: In<'_>) -> Res<'_, ()> {
    let (rest, content) = line(i)?;
    if content.trim_ascii().is_empty() {
        Ok((rest, ()))
    } else {
        miss(i)
    }
}

/// Skip blank lines.
fn blank_lines(mut i: In<'_>) -> In<'_> {
    while let Ok((rest, ())) = blank_line(i) {
        i = rest;
    }
    i
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

/// One physical line: its text (without the ending) — never matches at the end of the input.
fn line(i: In<'_>) -> Res<'_, In<'_>> {
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
fn text(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = take_till(|b| b == b'\n').parse(i)?;
    Ok((rest, content.strip_suffix(b"\r").unwrap_or(content)))
}

/// grammar: eol
fn eol(i: In<'_>) -> Res<'_, In<'_>> {
    nom::branch::alt((tag("\n"), eof)).parse(i)
}

/// grammar: ws
fn ws(i: In<'_>) -> Res<'_, In<'_>> {
    take_while(|b| b == b' ' || b == b'\t').parse(i)
}

/// grammar: ws1
fn ws1(i: In<'_>) -> Res<'_, In<'_>> {
    nom::bytes::complete::take_while1(|b| b == b' ' || b == b'\t').parse(i)
}

#[cfg(test)]
mod tests {
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
        let set = parse_ok("*** Begin Patch\r\n*** Update File: a\r\n@@ f\r\n x\r\n-y\r\n+z\r\n");
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
        let set = parse_ok("*** Begin Patch\n*** Update File: a\n@@\n x\n\n*** End of File\n");
        let hunk = &set.files[0].body.hunks()[0];
        assert!(hunk.end_of_file);
        assert_eq!(hunk.lines.len(), 2);
    }

    #[test]
    fn hint_and_anchors_combine() {
        let set = parse_ok(
            "*** Begin Patch\n*** Update File: a\n@@ class A\n@@ -10,3 +10,4 @@ def f\n@@     def g\n x\n",
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
        let input = "x\n*** Begin Patch\n*** Add File: n\n+a\n*** Update File: a\n\n@@\n-x\n";
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
        let set = parse_ok("*** Begin Patch\n*** Delete File: a\n*** Base: ABCDEF0123\n");
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
    fn markers_after_end_patch_are_refused_but_prose_is_not() {
        let ok = "*** Begin Patch\n*** Delete File: a\n*** End Patch\nDone.\n";
        assert_eq!(parse_ok(ok).files.len(), 1);
        let err =
            parse_err("*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Begin Patch\n");
        assert_eq!(err.line, 4);
    }
}
