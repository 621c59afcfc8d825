//! Stage: parse — the tool-call forms around SEARCH/REPLACE blocks (SPEC §4b "Paths"): the
//! JSON arguments `{"path": P, "diff": D}` and the XML-ish calls `<replace_in_file>` (Cline)
//! and `<apply_diff>` (Roo Code) with `<path>` and `<diff>`. The call's path applies to every
//! block of its diff. Pure; no XML entity is decoded (the peers decode none either).

use std::borrow::Cow;

use nom::bytes::complete::{tag, take_until};
use nom::combinator::opt;
use nom::Parser;
use serde_json::value::RawValue;

use super::document::checked_path;
use super::lex::{fail, failure, is_opener, line, tool_tag, trimmed, Fail, In, Res};
use super::{read_document, to_parse_error, Blocks, Form, PathFrom};
use crate::parse::json::{kind_of, syntax_error, Fields};
use crate::parse::position::shown;
use crate::parse::ParseError;

/// The form of the input and where it starts: the first line that is a SEARCH opener (bare
/// blocks), starts with a tool call's opening tag (from that tag), or starts with `{` (SPEC
/// §1 detection reads `{` so too). `None`: none of them.
pub(super) fn form_of(body: In<'_>) -> Option<(In<'_>, Form)> {
    let mut rest = body;
    while let Ok((next, content)) = line(rest) {
        if is_opener(content) {
            return Some((rest, Form::Text));
        }
        if let Some((at, tool)) = tool_tag(content) {
            return Some((&rest[at..], Form::XmlCall(tool)));
        }
        if content.starts_with(b"{") {
            return Some((rest, Form::JsonCall));
        }
        rest = next;
    }
    None
}

/// grammar: json_call
///
/// `from` is the slice of `input` from the `{` line. The `diff` string is read as blocks
/// whose path is `path`; error positions inside it are lines of that string.
pub(super) fn json_call<'a>(
    input: &'a [u8],
    from: &'a [u8],
    given: Option<&str>,
) -> Result<Blocks<'a>, ParseError> {
    let start = offset(input, from);
    let text = std::str::from_utf8(from).map_err(|e| {
        ParseError::at(
            input,
            start + e.valid_up_to(),
            "the tool call is not valid UTF-8",
        )
        .with_hint("JSON text must be UTF-8")
    })?;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let root = match stream.next() {
        Some(Ok(root)) => root,
        Some(Err(e)) => return Err(syntax_error(input, start, text, &e)),
        None => return Err(ParseError::at(input, start, "the tool call is empty")),
    };
    let end = stream.byte_offset();
    let rest = &text[end..];
    if !rest.trim().is_empty() {
        let at = start + end + (rest.len() - rest.trim_start().len());
        return Err(ParseError::at(
            input,
            at,
            "unexpected text after the tool call's JSON object",
        )
        .with_hint("send one JSON object; put nothing after its closing `}`"));
    }
    let (path_raw, diff_raw) = json_members(input, root)?;
    let error_at = |raw: &RawValue, message: String, hint: &str| {
        ParseError::at(input, offset(input, raw.get().as_bytes()), message).with_hint(hint)
    };
    let path: String = serde_json::from_str::<String>(path_raw.get()).map_err(|_| {
        let found = kind_of(path_raw);
        error_at(
            path_raw,
            format!("`path` must be a string, found {found}"),
            "give the file's path",
        )
    })?;
    let path = checked_path(path.as_bytes()).map_err(|(m, h)| error_at(path_raw, m, &h))?;
    agree(&path, given).map_err(|(m, h)| error_at(path_raw, m, &h))?;
    let diff: Cow<'_, str> = serde_json::from_str(diff_raw.get()).map_err(|_| {
        let found = kind_of(diff_raw);
        error_at(
            diff_raw,
            format!("`diff` must be a string, found {found}"),
            "give the blocks as one string",
        )
    })?;
    let from = if given.is_some() {
        PathFrom::Given
    } else {
        PathFrom::ToolCall
    };
    let blocks = read_document(diff.as_bytes(), diff.as_bytes(), Some(&path), from)
        .map_err(in_diff_string)?;
    let blocks = Blocks {
        form: Form::JsonCall,
        blocks,
    };
    Ok(blocks.into_owned())
}

/// The `path` and `diff` members of the JSON tool call, each exactly once, nothing else.
fn json_members<'a>(
    input: &[u8],
    root: &'a RawValue,
) -> Result<(&'a RawValue, &'a RawValue), ParseError> {
    let at = |raw: &RawValue| offset(input, raw.get().as_bytes());
    let fields = serde_json::from_str::<Fields<'a>>(root.get()).map_err(|_| {
        ParseError::at(
            input,
            at(root),
            format!(
                "the tool call must be a JSON object, found {}",
                kind_of(root)
            ),
        )
        .with_hint("send {\"path\": \"FILE\", \"diff\": \"<<<<<<< SEARCH\\n…\"}")
    })?;
    let (mut path, mut diff) = (None, None);
    for (key, value) in fields.0 {
        let slot = match key.as_str() {
            "path" => &mut path,
            "diff" => &mut diff,
            _ => {
                return Err(ParseError::at(
                    input,
                    at(value),
                    format!("unknown field `{}` in the tool call", shown(key.as_bytes())),
                )
                .with_hint("a SEARCH/REPLACE tool call has `path` and `diff`"))
            }
        };
        if slot.replace(value).is_some() {
            return Err(
                ParseError::at(input, at(value), format!("field `{key}` given twice"))
                    .with_hint("keep one"),
            );
        }
    }
    match (path, diff) {
        (Some(path), Some(diff)) => Ok((path, diff)),
        (p, _) => {
            let missing = if p.is_none() { "path" } else { "diff" };
            Err(ParseError::at(
                input,
                at(root),
                format!("missing field `{missing}` in the tool call"),
            )
            .with_hint("a SEARCH/REPLACE tool call has `path` and `diff`"))
        }
    }
}

/// An error inside a JSON tool call's `diff` string: its position is a line of that string.
fn in_diff_string(err: ParseError) -> ParseError {
    ParseError {
        within: Some(crate::parse::InputPart::DiffString),
        ..err
    }
}

/// The tool call's path against the one given out of band: they must agree.
fn agree(path: &str, given: Option<&str>) -> Result<(), (String, String)> {
    match given {
        Some(g) if g != path => Err((
            format!(
                "the tool call names `{}` but the path given is `{}`",
                shown(path.as_bytes()),
                shown(g.as_bytes())
            ),
            "give one path: drop the out-of-band path, or make the two agree".into(),
        )),
        _ => Ok(()),
    }
}

fn offset(input: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(input.as_ptr() as usize)
        .min(input.len())
}

/// The members of an XML-ish tool call, as read.
#[derive(Default)]
struct Members<'a> {
    path: Option<In<'a>>,
    diff: Option<In<'a>>,
    progress: bool,
}

enum Member<'a> {
    Path(In<'a>),
    Diff(In<'a>),
    Progress,
}

/// grammar: xml_call
///
/// `from` is the slice of `input` from the opening tag of `tool`.
pub(super) fn xml_call<'a>(
    input: &'a [u8],
    from: &'a [u8],
    tool: &'static str,
    given: Option<&str>,
) -> Result<Blocks<'a>, ParseError> {
    let (path_raw, diff) = xml_parts(from, tool).map_err(|e| match e {
        nom::Err::Error(f) | nom::Err::Failure(f) => to_parse_error(input, f),
        nom::Err::Incomplete(_) => ParseError::at(input, input.len(), "the tool call ends early"),
    })?;
    let error_at = |(message, hint): (String, String)| {
        ParseError::at(input, offset(input, path_raw), message).with_hint(hint)
    };
    let path = checked_path(path_raw).map_err(error_at)?;
    agree(&path, given).map_err(error_at)?;
    let from = if given.is_some() {
        PathFrom::Given
    } else {
        PathFrom::ToolCall
    };
    let blocks = read_document(input, diff, Some(&path), from)?;
    Ok(Blocks {
        form: Form::XmlCall(tool),
        blocks,
    })
}

/// The raw path and the diff of the call, after checking its shape and what follows it.
fn xml_parts<'a>(from: In<'a>, tool: &str) -> Result<(In<'a>, In<'a>), nom::Err<Fail>> {
    let (mut i, ()) = xml_open(from, tool)?;
    let mut members = Members::default();
    loop {
        i = i.trim_ascii_start();
        if let Ok((rest, ())) = xml_close(i, tool) {
            i = rest;
            break;
        }
        if i.is_empty() {
            return Err(call_cut_off(from, tool, &format!("`</{tool}>`")));
        }
        let (rest, member) = xml_member(i, from, tool)?;
        let twice = match member {
            Member::Path(p) => members.path.replace(p).is_some(),
            Member::Diff(d) => members.diff.replace(d).is_some(),
            Member::Progress => std::mem::replace(&mut members.progress, true),
        };
        if twice {
            return fail(
                i,
                format!("a second `{}` in `<{tool}>`", shown(peek_tag(i))),
                "keep one",
            );
        }
        i = rest;
    }
    let (Some(path), Some(diff)) = (members.path, members.diff) else {
        let missing = if members.path.is_none() {
            "<path>"
        } else {
            "<diff>"
        };
        return fail(
            from,
            format!("the `<{tool}>` call has no `{missing}`"),
            format!(
                "write `<{tool}>`, `<path>FILE</path>`, `<diff>` with the blocks `</diff>`, \
                 `</{tool}>`"
            ),
        );
    };
    while !i.is_empty() {
        (i, ()) = trailer_line(i, tool)?;
    }
    Ok((path, diff))
}

/// grammar: xml_open
fn xml_open<'a>(i: In<'a>, tool: &str) -> Res<'a, ()> {
    let open = format!("<{tool}>");
    let (rest, _) = tag(open.as_bytes()).parse(i)?;
    Ok((rest, ()))
}

/// grammar: xml_close
fn xml_close<'a>(i: In<'a>, tool: &str) -> Res<'a, ()> {
    let close = format!("</{tool}>");
    let (rest, _) = tag(close.as_bytes()).parse(i)?;
    Ok((rest, ()))
}

/// grammar: xml_member
///
/// `<path>`, `<diff>` or Cline's `<task_progress>` (a checklist, ignored); anything else in
/// the call is refused, naming it.
fn xml_member<'a>(i: In<'a>, call: In<'a>, tool: &str) -> Res<'a, Member<'a>> {
    if i.starts_with(b"<path>") {
        xml_path(i, call, tool)
    } else if i.starts_with(b"<diff>") {
        xml_diff(i, call, tool)
    } else if i.starts_with(b"<task_progress>") {
        xml_progress(i, call, tool)
    } else if i.starts_with(b"</") {
        fail(
            i,
            format!("`{}` does not close `<{tool}>`", shown(peek_tag(i))),
            format!("close the call with `</{tool}>`"),
        )
    } else if i.starts_with(b"<") {
        fail(
            i,
            format!("unknown element `{}` in `<{tool}>`", shown(peek_tag(i))),
            format!(
                "`<{tool}>` takes `<path>` and `<diff>`; a line hint goes inside a block, as \
                 `:start_line:N` right after `<<<<<<< SEARCH`"
            ),
        )
    } else {
        let (_, content) = line(i)?;
        fail(
            i,
            format!(
                "unexpected text `{}` in `<{tool}>`",
                shown(trimmed(content))
            ),
            format!("`<{tool}>` holds only `<path>…</path>` and `<diff>…</diff>`"),
        )
    }
}

/// grammar: xml_path
fn xml_path<'a>(i: In<'a>, call: In<'a>, tool: &str) -> Res<'a, Member<'a>> {
    let (i, text) = element(i, call, tool, "path")?;
    Ok((i, Member::Path(text)))
}

/// grammar: xml_diff
///
/// The text after `<diff>` (and its line ending) up to the first `</diff>`.
fn xml_diff<'a>(i: In<'a>, call: In<'a>, tool: &str) -> Res<'a, Member<'a>> {
    let (i, _) = tag("<diff>").parse(i)?;
    let (i, _) = opt(nom::branch::alt((tag("\r\n"), tag("\n")))).parse(i)?;
    let (i, text) = until_close(i, call, tool, "diff")?;
    Ok((i, Member::Diff(text)))
}

/// grammar: xml_progress
fn xml_progress<'a>(i: In<'a>, call: In<'a>, tool: &str) -> Res<'a, Member<'a>> {
    let (i, _) = element(i, call, tool, "task_progress")?;
    Ok((i, Member::Progress))
}

/// `<NAME>text</NAME>`: the text (a helper of the member productions, not one itself).
fn element<'a>(i: In<'a>, call: In<'a>, tool: &str, name: &str) -> Res<'a, In<'a>> {
    let open = format!("<{name}>");
    let (i, _) = tag(open.as_bytes()).parse(i)?;
    until_close(i, call, tool, name)
}

/// The text up to `</NAME>` and the input after that tag; a call that ends first is cut off.
fn until_close<'a>(i: In<'a>, call: In<'a>, tool: &str, name: &str) -> Res<'a, In<'a>> {
    let close = format!("</{name}>");
    let found: Res<'a, In<'a>> = take_until(close.as_bytes()).parse(i);
    let Ok((rest, text)) = found else {
        return Err(call_cut_off(call, tool, &format!("`{close}`")));
    };
    Ok((&rest[close.len()..], text))
}

/// The error for a tool call that ends before `missing`: cut off, as a block would be.
fn call_cut_off(call: In<'_>, tool: &str, missing: &str) -> nom::Err<Fail> {
    let content = call.trim_ascii_end();
    let last = content
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |at| at + 1);
    failure(
        &call[last..],
        format!(
            "the `<{tool}>` call ends without {missing}: it looks cut off (a truncated \
             output?), so none of it is applied"
        ),
        format!("send the whole call again, ending with `</{tool}>`"),
    )
}

/// grammar: trailer_line
///
/// Prose after the call is ignored, but not a SEARCH opener or a second call: one run
/// applies one call, and blocks outside it would have no path.
fn trailer_line<'a>(i: In<'a>, tool: &str) -> Res<'a, ()> {
    let (rest, content) = line(i)?;
    if is_opener(content) || tool_tag(content).is_some() {
        return fail(
            i,
            format!("`{}` after the `<{tool}>` call", shown(trimmed(content))),
            "send one tool call per run, with every block inside its `<diff>`",
        );
    }
    Ok((rest, ()))
}

/// The tag at the start of `i`, for messages (`<name>` or `</name>`).
fn peek_tag(i: In<'_>) -> &[u8] {
    let end = i
        .iter()
        .position(|&b| b == b'>')
        .map_or(i.len().min(40), |at| at + 1);
    &i[..end.min(80)]
}
