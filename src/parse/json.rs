//! Stage: parse — JSON edit requests (SPEC §4) into the model. Pure: no I/O, no placement.
//!
//! The request is read in two steps so that every error can name the edit and the field and
//! point at the exact spot of the input: serde_json first splits the text into raw values
//! (syntax errors carry serde_json's line and column), then each field is checked and typed
//! here. Strings borrow from the input when they hold no escape.
//!
//! Decisions (also in the README):
//! - `create` becomes an Add (one hunk of inserted lines; content without a final `\n` sets
//!   `new_no_newline`; a CR before a `\n` stays in the line, so the file gets CRLF), `delete` a
//!   Delete, and the other ops of one path are gathered into one Modify with `Body::Edits`, in
//!   the request order of each path's first appearance.
//! - A path that a `create` or `delete` names may have no other edit in the same request: the
//!   other edits refer to the file as it was before the request, which a create or delete
//!   makes meaningless. Such a request is a `parse_error`.
//! - Unknown fields are refused (a mistyped `replace_all` must not pass silently).

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::position::{shown, LineCounter};
use super::{detect, one_patch, ParseError, ParseOptions};
use crate::model::{Body, Edit, FileOp, FilePatch, Format, Hunk, Line, LineKind, PatchSet, Rules};

const OPS: &str = "replace, line_range, insert, append, create, delete";

/// Read a JSON edit request from byte offset `start` of `input` (the `{` line).
///
/// ```
/// use apply_patch::parse::{json, ParseOptions};
/// use apply_patch::{Body, FileOp};
/// let input = br#"{"edits": [{"op": "append", "path": "a.txt", "content": "x"}]}"#;
/// let set = json::parse(input, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(set.files[0].op, FileOp::Modify);
/// assert!(matches!(set.files[0].body, Body::Edits(ref e) if e.len() == 1));
/// ```
pub fn parse<'a>(
    input: &'a [u8],
    start: usize,
    _opts: &ParseOptions,
) -> Result<PatchSet<'a>, ParseError> {
    let start = start.min(input.len());
    let (body, cd) = detect::patch_body(input, start);
    let text = std::str::from_utf8(body).map_err(|e| {
        ParseError::at(
            input,
            start + e.valid_up_to(),
            "the JSON request is not valid UTF-8",
        )
        .with_hint("JSON text must be UTF-8; escape other bytes as \\uXXXX")
    })?;
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<&RawValue>();
    let root = match stream.next() {
        Some(Ok(root)) => root,
        Some(Err(e)) => return Err(syntax_error(input, start, text, &e)),
        None => {
            return Err(ParseError::at(input, start, "the JSON request is empty")
                .with_hint("send {\"edits\": [...]}"))
        }
    };
    let end = stream.byte_offset();
    // One patch per input: the request ends at its closing `}` (the strings inside it may
    // hold any patch text).
    one_patch::nothing_after(input, (Format::Json, start), start + end)?;
    let rest = &text[end..];
    if !rest.trim().is_empty() {
        let at = start + end + (rest.len() - rest.trim_start().len());
        return Err(
            ParseError::at(input, at, "unexpected text after the JSON request")
                .with_hint("send one JSON object; put nothing after its closing `}`"),
        );
    }
    let mut reader = Reader { input };
    let files = reader.request(root)?;
    Ok(PatchSet {
        format: Format::Json,
        rules: Rules::JSON,
        cd,
        files,
    })
}

/// A serde_json syntax error at the position serde_json reports (relative to `text`, which
/// starts at byte `start` of `input`).
pub(super) fn syntax_error(
    input: &[u8],
    start: usize,
    text: &str,
    e: &serde_json::Error,
) -> ParseError {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = start + line_start + e.column().saturating_sub(1);
    let full = e.to_string();
    let what = full.split(" at line ").next().unwrap_or(&full);
    let what = if e.is_eof() {
        format!("the JSON request ends too early ({what})")
    } else {
        format!("invalid JSON: {what}")
    };
    ParseError::at(input, offset, what)
        .with_hint("check the JSON syntax: quotes, commas and brackets around this spot")
}

/// The fields of one JSON object, in order, with duplicates kept (to refuse them).
pub(super) struct Fields<'a>(pub(super) Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut fields = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    fields.push((key, map.next_value::<&'de RawValue>()?));
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(V)
    }
}

/// What a JSON value is, for "found …" in messages.
pub(super) fn kind_of(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// One edit of the request, checked and typed.
struct JsonEdit<'a> {
    /// 1-based position in `edits`.
    index: usize,
    path: String,
    /// Byte offset of the edit's `{`.
    at: usize,
    /// Byte offset of its `path` value (where an error about the path points, so that the
    /// path it quotes is on the line it shows).
    path_at: usize,
    kind: Kind<'a>,
}

enum Kind<'a> {
    Create(Cow<'a, str>),
    Delete,
    Edit(Edit<'a>),
}

struct Reader<'a> {
    input: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Byte offset of a raw value (a slice of the input).
    fn offset(&self, raw: &RawValue) -> usize {
        let at = raw.get().as_ptr() as usize;
        at.saturating_sub(self.input.as_ptr() as usize)
            .min(self.input.len())
    }

    fn error(&self, raw: &RawValue, message: String, hint: &str) -> ParseError {
        ParseError::at(self.input, self.offset(raw), message).with_hint(hint)
    }

    fn fields(
        &self,
        raw: &'a RawValue,
        what: &str,
    ) -> Result<Vec<(String, &'a RawValue)>, ParseError> {
        serde_json::from_str::<Fields<'a>>(raw.get())
            .map(|f| f.0)
            .map_err(|_| {
                self.error(
                    raw,
                    format!("{what} must be an object, found {}", kind_of(raw)),
                    "write it as {\"field\": value, ...}",
                )
            })
    }

    fn request(&mut self, root: &'a RawValue) -> Result<Vec<FilePatch<'a>>, ParseError> {
        let mut edits = None;
        let mut base = None;
        for (key, value) in self.fields(root, "the JSON request")? {
            let slot = match key.as_str() {
                "edits" => &mut edits,
                "base" => &mut base,
                _ => {
                    return Err(self.error(
                        value,
                        format!("unknown field `{}` in the request", shown(key.as_bytes())),
                        "a request has `edits` and, optionally, `base`",
                    ))
                }
            };
            if slot.replace(value).is_some() {
                return Err(self.error(
                    value,
                    format!("field `{}` given twice", shown(key.as_bytes())),
                    "keep one",
                ));
            }
        }
        let Some(edits) = edits else {
            return Err(self.error(
                root,
                "missing field `edits` in the request".into(),
                "send {\"edits\": [{\"op\": ..., \"path\": ...}, ...]}",
            ));
        };
        let items: Vec<&'a RawValue> = serde_json::from_str(edits.get()).map_err(|_| {
            self.error(
                edits,
                format!("field `edits` must be an array, found {}", kind_of(edits)),
                "write `edits` as [ {...}, {...} ]",
            )
        })?;
        if items.is_empty() {
            return Err(self.error(
                edits,
                "the request has no edit".into(),
                "give at least one edit in `edits`",
            ));
        }
        let mut typed = Vec::with_capacity(items.len());
        for (n, raw) in items.into_iter().enumerate() {
            typed.push(self.edit(n + 1, raw)?);
        }
        let bases = match base {
            Some(raw) => self.bases(raw)?,
            None => Vec::new(),
        };
        self.assemble(typed, bases)
    }

    fn edit(&self, index: usize, raw: &'a RawValue) -> Result<JsonEdit<'a>, ParseError> {
        let fields = self.fields(raw, &format!("edit {index}"))?;
        let f = EditFields {
            reader: self,
            index,
            raw,
            fields,
        };
        let op_raw = f.required("op")?;
        let op = f.string("op", op_raw)?;
        let allowed: &[&str] = match op.as_ref() {
            "replace" => &["op", "path", "old", "new", "replace_all"],
            "line_range" => &[
                "op",
                "path",
                "start_line",
                "end_line",
                "expected",
                "new_content",
            ],
            "insert" => &["op", "path", "after_line", "content"],
            "append" | "create" => &["op", "path", "content"],
            "delete" => &["op", "path"],
            other => {
                return Err(self.error(
                    op_raw,
                    format!("edit {index}: unknown op `{}`", shown(other.as_bytes())),
                    &format!("use one of: {OPS}"),
                ))
            }
        };
        f.check_names(&op, allowed)?;
        let path = f.path()?;
        let kind = match op.as_ref() {
            "replace" => {
                let old = f.text("old")?;
                if old.is_empty() {
                    return Err(f.bad("old", "must not be empty", "give the text to replace"));
                }
                let new = f.text("new")?;
                let all = f.optional_bool("replace_all")?.unwrap_or(false);
                Kind::Edit(Edit::Replace { old, new, all })
            }
            "line_range" => f.line_range()?,
            "insert" => Kind::Edit(Edit::Insert {
                after: f.number("after_line")?,
                content: f.text("content")?,
            }),
            "append" => Kind::Edit(Edit::Append {
                content: f.text("content")?,
            }),
            "create" => Kind::Create(f.text("content")?),
            _ => Kind::Delete,
        };
        Ok(JsonEdit {
            index,
            path,
            at: self.offset(raw),
            path_at: self.offset(f.required("path")?),
            kind,
        })
    }

    /// `base`: an object of path → hex prefix of the file's SHA-256.
    fn bases(&self, raw: &'a RawValue) -> Result<Vec<(String, String, &'a RawValue)>, ParseError> {
        let mut out: Vec<(String, String, &'a RawValue)> = Vec::new();
        for (key, value) in self.fields(raw, "field `base`")? {
            let path = normalise_path(&key).ok_or_else(|| {
                self.error(
                    value,
                    "field `base`: empty path".into(),
                    "name the file's path",
                )
            })?;
            let hex: String = serde_json::from_str::<String>(value.get()).map_err(|_| {
                self.error(
                    value,
                    format!(
                        "field `base`: `{}` must be a string, found {}",
                        shown(key.as_bytes()),
                        kind_of(value)
                    ),
                    "give a hex prefix of the file's SHA-256",
                )
            })?;
            if hex.len() < 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(self.error(
                    value,
                    format!(
                        "field `base`: `{}` needs at least 8 hexadecimal digits",
                        shown(key.as_bytes())
                    ),
                    "give a prefix of the SHA-256 of the file's bytes as they are on disk",
                ));
            }
            if out.iter().any(|(p, _, _)| *p == path) {
                return Err(self.error(
                    value,
                    format!("field `base`: `{}` given twice", shown(key.as_bytes())),
                    "keep one",
                ));
            }
            out.push((path, hex.to_ascii_lowercase(), value));
        }
        Ok(out)
    }

    /// Gather the edits into file patches, one per path in order of first appearance.
    fn assemble(
        &self,
        edits: Vec<JsonEdit<'a>>,
        bases: Vec<(String, String, &'a RawValue)>,
    ) -> Result<Vec<FilePatch<'a>>, ParseError> {
        let mut files: Vec<(FilePatch<'a>, usize)> = Vec::new();
        let mut counter = LineCounter::new(self.input);
        for edit in edits {
            let existing = files.iter_mut().find(|(f, _)| f.path() == edit.path);
            match (existing, edit.kind) {
                (Some((file, _)), Kind::Edit(e)) if file.op == FileOp::Modify => {
                    if let Body::Edits(list) = &mut file.body {
                        list.push(e);
                    }
                }
                (Some((file, first)), _) => {
                    let what = match file.op {
                        FileOp::Add => "created",
                        FileOp::Delete => "deleted",
                        _ => "edited",
                    };
                    return Err(ParseError::at(
                        self.input,
                        edit.path_at,
                        format!(
                            "edit {}: `{}` is already {what} by edit {first}; a file that is \
                             created or deleted can have no other edit in the same request",
                            edit.index,
                            shown(edit.path.as_bytes())
                        ),
                    )
                    .with_hint(
                        "put the whole content in one `create`, or send the other edits in a \
                         second request",
                    ));
                }
                (None, kind) => {
                    let line = counter.line_of(edit.at);
                    files.push((file_patch(edit.path, kind, line), edit.index));
                }
            }
        }
        let mut files: Vec<FilePatch<'a>> = files.into_iter().map(|(f, _)| f).collect();
        for (path, hex, raw) in bases {
            match files.iter_mut().find(|f| f.path() == path) {
                Some(file) if file.op != FileOp::Add => file.base = Some(hex),
                Some(_) => {
                    return Err(self.error(
                        raw,
                        format!(
                            "field `base`: `{}` is created by the request",
                            shown(path.as_bytes())
                        ),
                        "a base hash checks an existing file; drop it for created files",
                    ))
                }
                None => {
                    return Err(self.error(
                        raw,
                        format!("field `base`: no edit names `{}`", shown(path.as_bytes())),
                        "give a base only for files the request edits or deletes",
                    ))
                }
            }
        }
        Ok(files)
    }
}

fn file_patch<'a>(path: String, kind: Kind<'a>, line: usize) -> FilePatch<'a> {
    let (op, old_path, new_path, body) = match kind {
        Kind::Create(content) => (FileOp::Add, None, Some(path), create_body(content, line)),
        Kind::Delete => (FileOp::Delete, Some(path), None, Body::Hunks(Vec::new())),
        Kind::Edit(e) => (
            FileOp::Modify,
            Some(path.clone()),
            Some(path),
            Body::Edits(vec![e]),
        ),
    };
    FilePatch::new(op, old_path, new_path, body, line)
}

/// The one hunk of an added file: the content split at `\n` (a final `\n` ends the last line
/// and adds no empty one); none for empty content.
fn create_body(content: Cow<'_, str>, line: usize) -> Body<'_> {
    if content.is_empty() {
        return Body::Hunks(Vec::new());
    }
    let no_newline = !content.ends_with('\n');
    let lines = match content {
        Cow::Borrowed(s) => split_lines(s.as_bytes())
            .map(|l| Line::new(LineKind::Insert, l))
            .collect(),
        Cow::Owned(s) => split_lines(s.as_bytes())
            .map(|l| Line::new(LineKind::Insert, l.to_vec()))
            .collect(),
    };
    Body::Hunks(vec![Hunk {
        lines,
        new_no_newline: no_newline,
        patch_line: line,
        ..Hunk::default()
    }])
}

fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    body.split(|&b| b == b'\n')
}

/// A path as the model keeps it: trimmed, no leading `./`; `None` when nothing is left.
fn normalise_path(raw: &str) -> Option<String> {
    let mut p = raw.trim();
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.trim_start_matches('/');
    }
    (!p.is_empty() && p != ".").then(|| p.to_string())
}

/// The fields of one edit, with typed getters whose errors name the edit and the field.
struct EditFields<'r, 'a> {
    reader: &'r Reader<'a>,
    index: usize,
    raw: &'a RawValue,
    fields: Vec<(String, &'a RawValue)>,
}

impl<'a> EditFields<'_, 'a> {
    fn get(&self, name: &str) -> Option<&'a RawValue> {
        self.fields.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }

    fn required(&self, name: &str) -> Result<&'a RawValue, ParseError> {
        self.get(name).ok_or_else(|| {
            self.reader.error(
                self.raw,
                format!("edit {}: missing field `{name}`", self.index),
                &format!("add \"{name}\": … to edit {}", self.index),
            )
        })
    }

    fn bad(&self, name: &str, what: &str, hint: &str) -> ParseError {
        let at = self.get(name).unwrap_or(self.raw);
        self.reader.error(
            at,
            format!("edit {}: field `{name}` {what}", self.index),
            hint,
        )
    }

    /// Every field must belong to the op, and appear once.
    fn check_names(&self, op: &str, allowed: &[&str]) -> Result<(), ParseError> {
        for (n, (key, value)) in self.fields.iter().enumerate() {
            if !allowed.contains(&key.as_str()) {
                return Err(self.reader.error(
                    value,
                    format!(
                        "edit {}: unknown field `{}` for op `{op}`",
                        self.index,
                        shown(key.as_bytes())
                    ),
                    &format!("the fields of `{op}` are: {}", allowed.join(", ")),
                ));
            }
            if self.fields[..n].iter().any(|(k, _)| k == key) {
                return Err(self.reader.error(
                    value,
                    format!(
                        "edit {}: field `{}` given twice",
                        self.index,
                        shown(key.as_bytes())
                    ),
                    "keep one",
                ));
            }
        }
        Ok(())
    }

    /// A string value; borrowed from the input when it holds no escape.
    fn string(&self, name: &str, raw: &'a RawValue) -> Result<Cow<'a, str>, ParseError> {
        if let Ok(s) = serde_json::from_str::<&'a str>(raw.get()) {
            return Ok(Cow::Borrowed(s));
        }
        serde_json::from_str::<String>(raw.get())
            .map(Cow::Owned)
            .map_err(|_| {
                self.bad(
                    name,
                    &format!("must be a string, found {}", kind_of(raw)),
                    "write the value in double quotes",
                )
            })
    }

    fn text(&self, name: &str) -> Result<Cow<'a, str>, ParseError> {
        let raw = self.required(name)?;
        self.string(name, raw)
    }

    fn path(&self) -> Result<String, ParseError> {
        let p = self.text("path")?;
        normalise_path(&p).ok_or_else(|| {
            self.bad(
                "path",
                "must not be empty",
                "name the file relative to the root",
            )
        })
    }

    fn number(&self, name: &str) -> Result<usize, ParseError> {
        let raw = self.required(name)?;
        serde_json::from_str::<u64>(raw.get())
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                self.bad(
                    name,
                    &format!(
                        "must be a whole number ≥ 0, found `{}`",
                        shown(raw.get().as_bytes())
                    ),
                    "line numbers count from 1 (0 for `after_line` means: at the top)",
                )
            })
    }

    fn optional_bool(&self, name: &str) -> Result<Option<bool>, ParseError> {
        let Some(raw) = self.get(name) else {
            return Ok(None);
        };
        serde_json::from_str::<bool>(raw.get())
            .map(Some)
            .map_err(|_| {
                self.bad(
                    name,
                    &format!("must be true or false, found {}", kind_of(raw)),
                    "write true or false without quotes",
                )
            })
    }

    fn line_range(&self) -> Result<Kind<'a>, ParseError> {
        let start = self.number("start_line")?;
        let end = self.number("end_line")?;
        if start == 0 {
            return Err(self.bad("start_line", "must be at least 1", "lines count from 1"));
        }
        if end < start {
            return Err(self.bad(
                "end_line",
                &format!("({end}) is before `start_line` ({start})"),
                "the range is inclusive: end_line ≥ start_line",
            ));
        }
        Ok(Kind::Edit(Edit::LineRange {
            start,
            end,
            expected: self.text("expected")?,
            new_content: self.text("new_content")?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(input: &str) -> Result<PatchSet<'_>, ParseError> {
        parse(input.as_bytes(), 0, &ParseOptions::default())
    }

    #[test]
    fn edits_of_one_path_gather_in_first_appearance_order() {
        let set = parse_str(
            r#"{"edits": [
              {"op": "append", "path": "b", "content": "x"},
              {"op": "replace", "path": "./a", "old": "o", "new": "n"},
              {"op": "insert", "path": "b", "after_line": 0, "content": "y"}
            ], "base": {"b": "ABCDEF012"}}"#,
        )
        .expect("parses");
        let paths: Vec<&str> = set.files.iter().map(|f| f.path()).collect();
        assert_eq!(paths, vec!["b", "a"]);
        assert_eq!(set.files[0].base.as_deref(), Some("abcdef012"));
        assert_eq!(set.files[0].patch_line, 2);
        match &set.files[0].body {
            Body::Edits(e) => assert_eq!(e.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn strings_without_escapes_borrow() {
        let set = parse_str(r#"{"edits": [{"op": "append", "path": "a", "content": "x"}]}"#)
            .expect("parses");
        match &set.files[0].body {
            Body::Edits(e) => assert!(matches!(
                e[0],
                Edit::Append {
                    content: Cow::Borrowed(_)
                }
            )),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn create_splits_lines_and_notes_a_missing_final_newline() {
        let set = parse_str(
            r#"{"edits": [{"op": "create", "path": "a", "content": "x\r\ny"}, {"op": "create", "path": "e", "content": ""}]}"#,
        )
        .expect("parses");
        let hunk = &set.files[0].body.hunks()[0];
        let lines: Vec<&[u8]> = hunk.lines.iter().map(|l| l.text.as_ref()).collect();
        assert_eq!(lines, vec![&b"x\r"[..], b"y"]);
        assert!(hunk.new_no_newline);
        assert!(set.files[1].body.hunks().is_empty());
    }

    #[test]
    fn errors_name_the_edit_and_the_field_at_its_position() {
        let err = parse_str(
            "{\"edits\": [\n {\"op\": \"replace\", \"path\": \"a\", \"old\": 1, \"new\": \"\"}]}",
        )
        .expect_err("mistyped");
        assert_eq!(
            err.message,
            "edit 1: field `old` must be a string, found a number"
        );
        assert_eq!((err.line, err.column), (2, 40));
        let err = parse_str(r#"{"edits": [{"op": "insert", "path": "a", "content": ""}]}"#)
            .expect_err("missing");
        assert_eq!(err.message, "edit 1: missing field `after_line`");
        let err = parse_str(r#"{"edits": [{"op": "frob", "path": "a"}]}"#).expect_err("op");
        assert_eq!(err.message, "edit 1: unknown op `frob`");
    }

    #[test]
    fn syntax_errors_carry_serde_positions() {
        let err = parse_str("{\"edits\": [\n  {\"op\" \"x\"}]}").expect_err("syntax");
        assert_eq!(err.line, 2);
        assert!(
            err.message.starts_with("invalid JSON: expected `:`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn create_or_delete_excludes_other_edits_of_the_path() {
        let err = parse_str(
            r#"{"edits": [{"op": "delete", "path": "a"}, {"op": "append", "path": "a", "content": "x"}]}"#,
        )
        .expect_err("mixed");
        assert!(
            err.message.contains("already deleted by edit 1"),
            "{}",
            err.message
        );
    }
}
