//! Stage: parse — a text of SEARCH/REPLACE blocks (SPEC §4b): the blocks, their markers and
//! Roo's header, and the path of each (out of band, Aider's path line, or the previous
//! block's); the lines of SEARCH and REPLACE are read by `part`. Pure; produces raw blocks
//! whose positions are still addresses (the module root turns them into line numbers).
//! Nothing here decides where a block goes.

use std::borrow::Cow;

use nom::combinator::eof;
use nom::Parser;

use super::lex::{
    fail, failure, is_closer, is_divider, is_fence, is_opener, line, marker, number, peek,
    tool_tag, trimmed, ws, Fail, In, Marker, Res, END_LINE, START_LINE,
};
use super::part::{escapable, texts};
use super::{HintSource, LineHint, PathFrom};
use crate::parse::position::{count_newlines, shown};

/// A block as read, before its positions become line numbers.
#[derive(Debug)]
pub(super) struct RawBlock<'a> {
    pub path: String,
    pub path_from: RawPathFrom,
    pub search: Vec<Cow<'a, [u8]>>,
    pub replace: Vec<Cow<'a, [u8]>>,
    pub hint: Option<LineHint>,
    pub end_line: Option<usize>,
    /// Address of the opener line.
    pub at: usize,
    /// Address just after the closer line.
    pub end: usize,
}

/// [`PathFrom`] with a path line still as an address.
#[derive(Debug)]
pub(super) enum RawPathFrom {
    Line(usize),
    Other(PathFrom),
}

/// The text being read (for line numbers inside messages) and the path given for every
/// block, if any.
struct Doc<'a, 'p> {
    text: In<'a>,
    given: Option<(&'p str, PathFrom)>,
}

impl Doc<'_, '_> {
    /// The 1-based line of `at` (a slice of the text).
    fn line_of(&self, at: In<'_>) -> usize {
        let offset = (at.as_ptr() as usize).saturating_sub(self.text.as_ptr() as usize);
        1 + count_newlines(&self.text[..offset.min(self.text.len())])
    }
}

const HINT_BLOCK: &str = "a block is a line `<<<<<<< SEARCH` (or `------- SEARCH`), the lines \
to find, a line `=======`, the new lines, and a line `>>>>>>> REPLACE` (or `+++++++ REPLACE`)";

/// grammar: block_document
///
/// `doc` is a slice of `text`, the text line numbers count in (the whole input, or a JSON
/// tool call's `diff` string); `given` is the path of every block, when it came out of band
/// or with a tool call.
pub(super) fn block_document<'a>(
    text: In<'a>,
    doc: In<'a>,
    given: Option<(&str, PathFrom)>,
) -> Result<Vec<RawBlock<'a>>, nom::Err<Fail>> {
    let ctx = Doc { text, given };
    let mut i = doc;
    let mut blocks: Vec<RawBlock<'a>> = Vec::new();
    // The last line outside a block since the previous block that is not a fence: the line
    // that may name the next block's file (SPEC §4b: the line right before the opener, or
    // right before the fence lines above it).
    let mut candidate: Option<In<'a>> = None;
    while !i.is_empty() {
        if is_opener(peek(i)) {
            let (rest, parsed) = block(&ctx, i)?;
            let (path, path_from) = block_path(&ctx, i, candidate, &blocks)?;
            blocks.push(RawBlock {
                path,
                path_from,
                search: parsed.search,
                replace: parsed.replace,
                hint: parsed.hint,
                end_line: parsed.end_line,
                at: i.as_ptr() as usize,
                end: rest.as_ptr() as usize,
            });
            candidate = None;
            i = rest;
        } else {
            let (rest, content) = outside_line(i)?;
            if !is_fence(content) {
                candidate = Some(content);
            }
            i = rest;
        }
    }
    if blocks.is_empty() {
        let found = if doc.trim_ascii().is_empty() {
            "the input is empty: no SEARCH/REPLACE block"
        } else {
            "no SEARCH/REPLACE block found: expected a line `<<<<<<< SEARCH` or `------- SEARCH`"
        };
        return Err(failure(doc, found, HINT_BLOCK));
    }
    Ok(blocks)
}

/// grammar: outside_line
///
/// A line before, between or after the blocks: prose, a path line or a fence. A closer here
/// means a block whose opener is malformed, and a tool call's tag a second call: both are
/// refused rather than skipped.
fn outside_line(i: In<'_>) -> Res<'_, In<'_>> {
    let (rest, content) = line(i)?;
    if is_closer(content) {
        return fail(
            at_text(content),
            format!(
                "`{}` outside any block: no SEARCH opener before it",
                shown(trimmed(content))
            ),
            "start each block with a line `<<<<<<< SEARCH` (5 or more `<`) or `------- SEARCH` \
             (3 or more `-`), one space before SEARCH; check the opener above for a typo",
        );
    }
    if let Some((at, tool)) = tool_tag(content) {
        return fail(
            &content[at..],
            format!("a `<{tool}>` tool call among SEARCH/REPLACE blocks"),
            "send one tool call, or blocks alone, per run",
        );
    }
    Ok((rest, content))
}

/// The file of the block that starts at `opener` (SPEC §4b "Paths").
fn block_path<'a>(
    ctx: &Doc<'a, '_>,
    opener: In<'a>,
    candidate: Option<In<'a>>,
    blocks: &[RawBlock<'a>],
) -> Result<(String, RawPathFrom), nom::Err<Fail>> {
    if let Some((path, from)) = ctx.given {
        return Ok((path.to_string(), RawPathFrom::Other(from)));
    }
    if let Some(content) = candidate {
        if let Some(path) = path_line(content)? {
            return Ok((path, RawPathFrom::Line(content.as_ptr() as usize)));
        }
    }
    match blocks.last() {
        Some(previous) => Ok((
            previous.path.clone(),
            RawPathFrom::Other(PathFrom::Previous(blocks.len())),
        )),
        None => Err(failure(
            at_text(peek(opener)),
            format!(
                "the block on line {} names no file: no path line right before it (or before \
                 its fence lines) and no block before it",
                ctx.line_of(opener)
            ),
            "write the file's path alone on the line right before `<<<<<<< SEARCH` (or before \
             the opening ``` fence), or give the path out of band (`--path FILE`)",
        )),
    }
}

/// grammar: path_line
///
/// The line's text without Markdown decoration around it: leading `#`, `*` and backticks,
/// trailing `*`, backticks and `:`. `None` when nothing is left, or when the line looks like
/// a marker (`=======`, `---`): such a line names no file.
fn path_line(content: In<'_>) -> Result<Option<String>, nom::Err<Fail>> {
    if escapable(content) {
        return Ok(None);
    }
    let mut t = content;
    loop {
        let before = t.len();
        t = t.trim_ascii();
        while let Some((&first, rest)) = t.split_first() {
            if !matches!(first, b'#' | b'*' | b'`') {
                break;
            }
            t = rest;
        }
        while let Some((&last, rest)) = t.split_last() {
            if !matches!(last, b'*' | b'`' | b':') {
                break;
            }
            t = rest;
        }
        if t.len() == before {
            break;
        }
    }
    if t.is_empty() {
        return Ok(None);
    }
    checked_path(t)
        .map(Some)
        .map_err(|(message, hint)| failure(t, message, hint))
}

/// grammar: path
///
/// A path as the model keeps it: UTF-8, trimmed, a leading `./` dropped; empty, NUL, a line
/// break or a trailing `/` (a folder) is refused as (message, hint).
pub(super) fn checked_path(raw: &[u8]) -> Result<String, (String, String)> {
    let Ok(text) = std::str::from_utf8(raw) else {
        return Err((
            "the path is not valid UTF-8".into(),
            "SEARCH/REPLACE blocks name files by UTF-8 paths; use a unified diff for other \
             names"
                .into(),
        ));
    };
    let mut p = text.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.trim_start_matches('/');
    }
    let refused = |message: String, hint: &str| Err((message, hint.to_string()));
    if p.is_empty() || p == "." {
        return refused(
            "the path is empty".into(),
            "name the file, relative to the root",
        );
    }
    if p.contains('\0') {
        return refused(
            "the path holds a NUL byte".into(),
            "no file name can hold a NUL byte; write the path without it",
        );
    }
    if p.contains(['\n', '\r']) {
        return refused(
            "the path holds a line break".into(),
            "give the path on one line",
        );
    }
    if p.ends_with('/') {
        return refused(
            format!(
                "the path `{}` ends in `/`: it names a folder, not a file",
                shown(p.as_bytes())
            ),
            "name a file",
        );
    }
    Ok(p.to_string())
}

/// A block's parts as read, before prefixes and escapes are taken off.
struct Parsed<'a> {
    search: Vec<Cow<'a, [u8]>>,
    replace: Vec<Cow<'a, [u8]>>,
    hint: Option<LineHint>,
    end_line: Option<usize>,
}

/// grammar: block
fn block<'a>(ctx: &Doc<'a, '_>, opened: In<'a>) -> Res<'a, Parsed<'a>> {
    let (i, _) = line(opened)?;
    let (i, (start_line, end_line)) = roo_header(i)?;
    let (i, search) = search_part(ctx, i, opened)?;
    let separator = i;
    let (i, _) = line(i)?;
    let (i, replace) = replace_part(ctx, i, opened, separator)?;
    let (i, _) = line(i)?;
    let (search, replace, numbered) = texts(&search, &replace)?;
    let hint = match (start_line, numbered) {
        (Some(line), _) => Some(LineHint {
            line,
            source: HintSource::StartLine,
        }),
        (None, Some(line)) => Some(LineHint {
            line,
            source: HintSource::LinePrefixes,
        }),
        (None, None) => None,
    };
    let parsed = Parsed {
        search,
        replace,
        hint,
        end_line,
    };
    Ok((i, parsed))
}

/// grammar: roo_header
///
/// `:start_line:N`, then `:end_line:N`, then `-------`, each optional, right after the opener.
fn roo_header(i: In<'_>) -> Res<'_, (Option<usize>, Option<usize>)> {
    let (i, start) = start_line(i)?;
    let (i, end) = end_line(i)?;
    let i = if is_divider(peek(i)) && !i.is_empty() {
        line(i)?.0
    } else {
        i
    };
    Ok((i, (start, end)))
}

/// grammar: start_line
fn start_line(i: In<'_>) -> Res<'_, Option<usize>> {
    header_number(i, START_LINE)
}

/// grammar: end_line
fn end_line(i: In<'_>) -> Res<'_, Option<usize>> {
    header_number(i, END_LINE)
}

/// The number of a Roo header line `NAME N` when the next line is one (a helper of the two
/// header productions, not one itself).
fn header_number<'a>(i: In<'a>, name: &[u8]) -> Res<'a, Option<usize>> {
    let Ok((rest, content)) = line(i) else {
        return Ok((i, None));
    };
    let Some(arg) = trimmed(content).strip_prefix(name) else {
        return Ok((i, None));
    };
    let label = String::from_utf8_lossy(name);
    let parsed: Res<'_, _> = (ws, number, ws, eof).parse(arg);
    match parsed {
        Ok((_, (_, Some(n), _, _))) if n >= 1 => Ok((rest, Some(n))),
        Ok((_, (_, Some(_), _, _))) => fail(
            arg,
            format!("`{label}0`: line numbers start at 1"),
            format!("write `{label}N` with the 1-based line where SEARCH starts"),
        ),
        Ok((_, (_, None, _, _))) => fail(arg, "line number too large", "use the real line number"),
        Err(_) => fail(
            arg,
            format!(
                "expected a line number after `{label}`, found `{}`",
                shown(arg.trim_ascii())
            ),
            format!("write `{label}N` with the 1-based line where SEARCH starts"),
        ),
    }
}

/// grammar: search_part
///
/// The lines up to the separator (not consumed).
fn search_part<'a>(ctx: &Doc<'a, '_>, mut i: In<'a>, opened: In<'a>) -> Res<'a, Vec<In<'a>>> {
    let mut lines = Vec::new();
    loop {
        let Ok((rest, content)) = line(i) else {
            return Err(cut_off(ctx, opened, "its `=======` line and its closer"));
        };
        match marker(content) {
            Some(Marker::Separator) => return Ok((i, lines)),
            Some(Marker::Closer) => {
                return fail(
                    at_text(content),
                    format!(
                        "`{}` before the `=======` line of the block that starts on line {}",
                        shown(trimmed(content)),
                        ctx.line_of(opened)
                    ),
                    "separate SEARCH from REPLACE with a line `=======`; if this line is text \
                     of the file, write it with a `\\` in front",
                )
            }
            Some(Marker::Opener) => return Err(nested(ctx, content, opened)),
            Some(Marker::Header) => return Err(misplaced_header(content)),
            None => {
                lines.push(content);
                i = rest;
            }
        }
    }
}

/// grammar: replace_part
///
/// The lines up to the closer (not consumed). `separator` is the block's `=======` line.
fn replace_part<'a>(
    ctx: &Doc<'a, '_>,
    mut i: In<'a>,
    opened: In<'a>,
    separator: In<'a>,
) -> Res<'a, Vec<In<'a>>> {
    let mut lines = Vec::new();
    loop {
        let Ok((rest, content)) = line(i) else {
            return Err(cut_off(ctx, opened, "its closer"));
        };
        match marker(content) {
            Some(Marker::Closer) => return Ok((i, lines)),
            Some(Marker::Separator) => {
                return fail(
                    at_text(content),
                    format!(
                        "a second `=======` in the block that starts on line {} (its separator \
                         is line {})",
                        ctx.line_of(opened),
                        ctx.line_of(separator)
                    ),
                    "a block has one `=======` line, between SEARCH and REPLACE; a line of \
                     text that is itself `=======` is written `\\=======`",
                )
            }
            Some(Marker::Opener) => return Err(nested(ctx, content, opened)),
            Some(Marker::Header) => return Err(misplaced_header(content)),
            None => {
                lines.push(content);
                i = rest;
            }
        }
    }
}

/// The error for a block that reaches the end of its text before `missing` (SPEC §4b: cut
/// off, as a missing `*** End Patch`): most often a model's output truncated by a token
/// limit. It must never be half applied, so it is refused at its last non-blank line.
fn cut_off(ctx: &Doc<'_, '_>, opened: In<'_>, missing: &str) -> nom::Err<Fail> {
    let content = opened.trim_ascii_end();
    let last = content
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    failure(
        &opened[last..],
        format!(
            "the block that starts on line {} ends without {missing}: it looks cut off (a \
             truncated output?), so none of the blocks is applied",
            ctx.line_of(opened)
        ),
        "send the whole reply again; every block ends with a line `>>>>>>> REPLACE` (or \
         `+++++++ REPLACE`)",
    )
}

/// The error for an opener inside a block: the block above it lacks its closer.
fn nested(ctx: &Doc<'_, '_>, content: In<'_>, opened: In<'_>) -> nom::Err<Fail> {
    failure(
        at_text(content),
        format!(
            "a SEARCH opener inside the block that starts on line {}: that block has no closer",
            ctx.line_of(opened)
        ),
        "end every block with `>>>>>>> REPLACE` (or `+++++++ REPLACE`) before the next one; a \
         line of text that looks like an opener is written with a `\\` in front",
    )
}

/// The error for Roo's `:start_line:` / `:end_line:` away from its place.
fn misplaced_header(content: In<'_>) -> nom::Err<Fail> {
    let name = if trimmed(content).starts_with(START_LINE) {
        ":start_line:"
    } else {
        ":end_line:"
    };
    failure(
        at_text(content),
        format!("`{name}` inside a block's text: it belongs right after the SEARCH opener"),
        format!(
            "write the line hint right after `<<<<<<< SEARCH` (`:start_line:`, then \
             `:end_line:`, then `-------`); a line of text starting with `{name}` is written \
             `\\{name}`"
        ),
    )
}

/// A line's content from its first non-blank byte (where a caret should point).
fn at_text(content: In<'_>) -> In<'_> {
    let blanks = content.len() - content.trim_ascii_start().len();
    &content[blanks..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lines_lose_markdown_decoration() {
        for (line, path) in [
            ("src/a.rs", "src/a.rs"),
            ("### `src/a.rs`:", "src/a.rs"),
            ("**src/a.rs**", "src/a.rs"),
            ("  # ./docs/read me.md  ", "docs/read me.md"),
            ("`a.py`:\r", "a.py"),
        ] {
            let got = path_line(line.as_bytes())
                .expect("a path")
                .expect("not empty");
            assert_eq!(got, path, "{line:?}");
        }
        for no_path in ["", "   ", "**", "# ", "=======", "---", "<<<<<<< HEAD"] {
            assert_eq!(
                path_line(no_path.as_bytes()).expect("no error"),
                None,
                "{no_path:?}"
            );
        }
        assert!(path_line(b"src/").is_err());
        assert!(path_line(b"a\0b").is_err());
        assert!(path_line(b"\xff.txt").is_err());
    }

    #[test]
    fn checked_paths() {
        assert_eq!(checked_path(b" ./a/b ").expect("ok"), "a/b");
        assert_eq!(checked_path(b".//a").expect("ok"), "a");
        for bad in [&b""[..], b"./", b".", b"a\nb", b"dir/"] {
            assert!(checked_path(bad).is_err(), "{bad:?}");
        }
    }
}
