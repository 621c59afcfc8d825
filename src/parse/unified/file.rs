//! Stage: parse (unified diffs). One file patch: its headers, names, op, modes and body,
//! assembled into a [`FilePatch`] following the model conventions of INTERFACES.md.
//!
//! No I/O; placement-related checks are limited to what the diff itself proves (counts,
//! zero-context hunks).

use std::borrow::Cow;

use nom::bytes::complete::tag;
use nom::combinator::rest;
use nom::sequence::preceded;
use nom::Parser;

use super::header::{self, Extended, FileName};
use super::hunk::hunk;
use super::lines::{with_hint, Cursor, RawLine};
use super::paths;
use crate::model::{BlobIds, Body, FileOp, FilePatch, Hunk, LineKind, Mode};
use crate::parse::binary;
use crate::parse::position::shown;
use crate::parse::quoted::{Fail, PResult};
use crate::parse::{ParseError, ParseOptions};

/// grammar: file_patch
pub fn file_patch<'a>(
    cur: &mut Cursor<'a>,
    opts: &ParseOptions,
) -> Result<FilePatch<'a>, ParseError> {
    let line = cur
        .peek()
        .ok_or_else(|| cur.error_at_end("expected a file header"))?;
    if line.body().starts_with(b"diff --git ") {
        git_file_patch(cur, opts)
    } else if let Ok((_, names)) = binary_files_differ(line.body()) {
        cur.pos += 1;
        plain_binary(line, names, opts)
    } else {
        plain_file_patch(cur, opts)
    }
}

/// grammar: binary_files_differ
///
/// `Binary files OLD and NEW differ`: a binary change without data.
pub fn binary_files_differ(i: &[u8]) -> PResult<'_, &[u8]> {
    let (r, names) = preceded(tag(&b"Binary files "[..]), rest).parse(i)?;
    match names.strip_suffix(b" differ") {
        Some(n) if !n.is_empty() => Ok((r, n)),
        _ => Err(nom::Err::Error(Fail::at(
            i,
            "expected 'Binary files … differ'",
        ))),
    }
}

/// What the extended headers of a git file patch said.
#[derive(Debug, Default)]
struct GitHeaders {
    old_mode: Option<Mode>,
    new_mode: Option<Mode>,
    deleted_mode: Option<Mode>,
    new_file_mode: Option<Mode>,
    rename_from: Option<Vec<u8>>,
    rename_to: Option<Vec<u8>>,
    copy_from: Option<Vec<u8>>,
    copy_to: Option<Vec<u8>>,
    index: Option<(String, String, Option<Mode>)>,
}

impl GitHeaders {
    fn record(&mut self, e: Extended) {
        match e {
            Extended::OldMode(m) => self.old_mode = Some(m),
            Extended::NewMode(m) => self.new_mode = Some(m),
            Extended::DeletedFileMode(m) => self.deleted_mode = Some(m),
            Extended::NewFileMode(m) => self.new_file_mode = Some(m),
            Extended::RenameFrom(p) => self.rename_from = Some(p),
            Extended::RenameTo(p) => self.rename_to = Some(p),
            Extended::CopyFrom(p) => self.copy_from = Some(p),
            Extended::CopyTo(p) => self.copy_to = Some(p),
            Extended::Similarity => {}
            Extended::Index { old, new, mode } => self.index = Some((old, new, mode)),
        }
    }
}

/// The `---` / `+++` names and the body that follow the headers.
struct Content<'a> {
    names: Option<(FileName, FileName, RawLine<'a>)>,
    body: Body<'a>,
}

/// grammar: git_file_patch
fn git_file_patch<'a>(
    cur: &mut Cursor<'a>,
    opts: &ParseOptions,
) -> Result<FilePatch<'a>, ParseError> {
    let first = cur
        .next_line()
        .ok_or_else(|| cur.error_at_end("expected 'diff --git'"))?;
    let names = match header::git_header(first.body()) {
        Ok((_, n)) => n,
        Err(_) => return Err(first.error("expected 'diff --git a/PATH b/PATH'")),
    };
    let mut h = GitHeaders::default();
    while let Some(line) = cur.peek() {
        match header::extended_header(line.body()) {
            Ok((_, e)) => h.record(e),
            Err(nom::Err::Failure(f)) => return Err(line.error_from(line.body(), f)),
            Err(_) => break,
        }
        cur.pos += 1;
    }
    let content = content(cur, opts, true)?;
    let strip = opts.strip.unwrap_or(1);
    assemble_git(first, names, h, content, strip, opts)
}

/// grammar: file_body
///
/// The names and body after a git file patch's headers (or a plain patch's start).
fn content<'a>(
    cur: &mut Cursor<'a>,
    opts: &ParseOptions,
    git: bool,
) -> Result<Content<'a>, ParseError> {
    let mut names = None;
    if let Some(line) = cur.peek().filter(|l| l.body().starts_with(b"--- ")) {
        let old = parse_line(line, header::old_file_line)?;
        cur.pos += 1;
        let Some(next) = cur.peek().filter(|l| l.body().starts_with(b"+++ ")) else {
            return Err(match cur.peek() {
                Some(l) => l.error("expected a '+++ ' line after the '--- ' line"),
                None => cur.error_at_end("expected a '+++ ' line after the '--- ' line"),
            });
        };
        let new = parse_line(next, header::new_file_line)?;
        cur.pos += 1;
        names = Some((old, new, line));
    }
    if let Some(line) = cur.peek() {
        if line.body() == b"GIT binary patch" {
            let data = binary::git_binary_patch(cur)?;
            return Ok(Content {
                names,
                body: Body::Binary(data),
            });
        }
        if git && binary_files_differ(line.body()).is_ok() {
            cur.pos += 1;
            return Ok(Content {
                names,
                body: Body::BinaryWithoutData,
            });
        }
    }
    let mut hunks = Vec::new();
    while cur.peek().is_some_and(|l| l.body().starts_with(b"@@ ")) {
        hunks.push(hunk(cur, opts)?);
    }
    if names.is_some() && hunks.is_empty() {
        let err = match cur.peek() {
            Some(l) => l.error("expected a hunk header '@@ -N,M +N,M @@'"),
            None => cur.error_at_end("expected a hunk header '@@ -N,M +N,M @@'"),
        };
        return Err(with_hint(err, super::hunk::NO_NUMBERS_HINT));
    }
    if !opts.recount {
        check_no_stray_lines(cur)?;
    }
    Ok(Content {
        names,
        body: Body::Hunks(hunks),
    })
}

fn parse_line<'a, T>(
    line: RawLine<'a>,
    f: impl Fn(&'a [u8]) -> PResult<'a, T>,
) -> Result<T, ParseError> {
    match f(line.body()) {
        Ok((_, v)) => Ok(v),
        Err(nom::Err::Failure(e)) | Err(nom::Err::Error(e)) => Err(line.error_from(line.body(), e)),
        Err(nom::Err::Incomplete(_)) => Err(line.error("incomplete line")),
    }
}

/// After the last hunk of a file: a `+`, `-` or ` ` line that is not a header means the
/// hunk's counts were too small; ignoring it would drop part of the change.
fn check_no_stray_lines(cur: &Cursor<'_>) -> Result<(), ParseError> {
    let Some(line) = cur.peek() else {
        return Ok(());
    };
    let body = line.body();
    let hunkish = matches!(body.first(), Some(b'+' | b'-' | b' '));
    if hunkish && body != b"-- " && !super::is_header_start(cur) {
        return Err(with_hint(
            line.error(
                "this line follows a complete hunk: the hunk has more lines than its header counts",
            ),
            super::hunk::recount_step(),
        ));
    }
    Ok(())
}

fn finish_path(line: RawLine<'_>, raw: &[u8], strip: usize) -> Result<String, ParseError> {
    paths::finish(raw, strip).map_err(|m| {
        let prefixed = raw.starts_with(b"a/") || raw.starts_with(b"b/");
        use crate::spelling::{Hint, Opt, Value};
        let hint = if !m.contains("strip") {
            Hint::from("the patch must name files by UTF-8 paths")
        } else if strip == 1 && !prefixed {
            Hint::new()
                .text("the names have no a/ and b/ prefixes (git diff --no-prefix?)")
                .clause(
                    Hint::new()
                        .text(": pass ")
                        .opt(Opt::Strip, Value::Number("0".into())),
                )
        } else {
            Hint::new().clause(
                Hint::new()
                    .text("pass a smaller ")
                    .opt(Opt::Strip, Value::Name),
            )
        };
        with_hint(line.error(m), hint)
    })
}

/// What the headers say the file patch does.
#[derive(Debug, Clone, Copy)]
struct Kind {
    add: bool,
    delete: bool,
    rename: bool,
    copy: bool,
}

impl Kind {
    fn of(
        first: RawLine<'_>,
        h: &GitHeaders,
        names: &Option<(FileName, FileName, RawLine<'_>)>,
    ) -> Result<Kind, ParseError> {
        let (old_null, new_null) = match names {
            Some((o, n, _)) => (*o == FileName::DevNull, *n == FileName::DevNull),
            None => (false, false),
        };
        let k = Kind {
            add: h.new_file_mode.is_some() || old_null,
            delete: h.deleted_mode.is_some() || new_null,
            rename: h.rename_from.is_some() || h.rename_to.is_some(),
            copy: h.copy_from.is_some() || h.copy_to.is_some(),
        };
        if k.add && k.delete {
            return Err(first.error("a file patch cannot both create and delete its file"));
        }
        if k.rename && k.copy {
            return Err(first.error("a file patch cannot be both a rename and a copy"));
        }
        if (k.rename || k.copy) && (k.add || k.delete) {
            return Err(first.error("a rename or copy needs both 'from' and 'to' paths"));
        }
        Ok(k)
    }
}

/// The old and new paths: from the `---`/`+++` lines, else the rename/copy lines (stripped by
/// one component less: they carry no `a/`), else the `diff --git` line.
fn git_paths(
    first: RawLine<'_>,
    names: &[u8],
    h: &GitHeaders,
    content: &Content<'_>,
    kind: Kind,
    strip: usize,
) -> Result<(Option<String>, Option<String>), ParseError> {
    let split = || {
        paths::split_git_names(names, strip)
            .or_else(|| paths::split_git_names(names, 1))
            .ok_or_else(|| {
                with_hint(
                    first.error("cannot tell the two paths of the 'diff --git' line apart"),
                    "paths holding spaces must be the same on both sides or be quoted",
                )
            })
    };
    let inner = strip.saturating_sub(1);
    let side = |dash: Option<&FileName>, moved: Option<&Vec<u8>>, old: bool| {
        if let Some(FileName::Path(p)) = dash {
            return finish_path(first, p, strip).map(Some);
        }
        if let Some(p) = moved {
            return finish_path(first, p, inner).map(Some);
        }
        let (o, n) = split()?;
        finish_path(first, if old { &o } else { &n }, strip).map(Some)
    };
    let dash = content.names.as_ref();
    let old = match kind.add {
        true => None,
        false => side(
            dash.map(|d| &d.0),
            h.rename_from.as_ref().or(h.copy_from.as_ref()),
            true,
        )?,
    };
    let new = match kind.delete {
        true => None,
        false => side(
            dash.map(|d| &d.1),
            h.rename_to.as_ref().or(h.copy_to.as_ref()),
            false,
        )?,
    };
    if let (Some(o), Some(n), false, false) = (&old, &new, kind.rename, kind.copy) {
        if o != n {
            return Err(with_hint(
                first.error(format!(
                    "the file patch names two different files ('{}' and '{}') without a 'rename from' or 'copy from' header",
                    shown(o.as_bytes()),
                    shown(n.as_bytes())
                )),
                "add 'rename from'/'rename to' lines, or split the change into a delete and an add",
            ));
        }
    }
    Ok((old, new))
}

/// Turn a git file patch's parts into the model.
fn assemble_git<'a>(
    first: RawLine<'a>,
    names: &[u8],
    h: GitHeaders,
    content: Content<'a>,
    strip: usize,
    opts: &ParseOptions,
) -> Result<FilePatch<'a>, ParseError> {
    let kind = Kind::of(first, &h, &content.names)?;
    let (old_path, new_path) = git_paths(first, names, &h, &content, kind, strip)?;
    let index_mode = h.index.as_ref().and_then(|i| i.2);
    let old_mode = (!kind.add)
        .then(|| h.old_mode.or(h.deleted_mode).or(index_mode))
        .flatten();
    let new_mode = (!kind.delete)
        .then(|| h.new_mode.or(h.new_file_mode).or(index_mode))
        .flatten();
    let body_empty = matches!(&content.body, Body::Hunks(v) if v.is_empty());
    // Judged on the resolved modes, so that `new mode` with the mode of an `index` line reads
    // the same as the `old mode`/`new mode` pair the renderer writes for it.
    let mode_change = old_mode.is_some() && new_mode.is_some() && old_mode != new_mode;
    let op = match kind {
        Kind { add: true, .. } => FileOp::Add,
        Kind { delete: true, .. } => FileOp::Delete,
        Kind { rename: true, .. } => FileOp::Rename,
        Kind { copy: true, .. } => FileOp::Copy,
        _ if body_empty && mode_change => FileOp::Mode,
        // SPEC §1: a header that changes nothing is no patch (git apply: "No valid patches
        // in input", or "patch with only garbage" beside other file patches).
        _ if body_empty => return Err(bare_header(first)),
        _ => FileOp::Modify,
    };
    let mut fp = FilePatch {
        op,
        old_path,
        new_path,
        old_mode,
        new_mode,
        base: None,
        blob_ids: h.index.map(|(old, new, _)| BlobIds { old, new }),
        body: content.body,
        patch_line: first.number,
    };
    check_body(&mut fp, opts, first)?;
    Ok(fp)
}

/// The refusal of a `diff --git` section with neither hunks nor a change of mode, name or
/// existence: taken for an empty change, it would report success for a patch that says
/// nothing (a stray or truncated header).
fn bare_header(first: RawLine<'_>) -> ParseError {
    with_hint(
        first.error(
            "a `diff --git` header with neither hunks nor a change of mode, name or existence \
             changes nothing: it is no patch (git apply refuses it too)",
        ),
        "give the file's hunks after its header, or drop the header",
    )
}

/// grammar: plain_file_patch
fn plain_file_patch<'a>(
    cur: &mut Cursor<'a>,
    opts: &ParseOptions,
) -> Result<FilePatch<'a>, ParseError> {
    let first = cur
        .peek()
        .ok_or_else(|| cur.error_at_end("expected a '--- ' line"))?;
    let pos = cur.pos;
    cur.pos = pos + 1;
    let plus = cur.peek();
    cur.pos = pos;
    let content = content(cur, opts, false)?;
    let Some((old, new, _)) = content.names.clone() else {
        return Err(first.error("expected a '--- ' line followed by a '+++ ' line"));
    };
    let raw = |n: &FileName| match n {
        FileName::Path(p) => Some(p.clone()),
        FileName::DevNull => None,
    };
    let (mut old, mut new) = (raw(&old), raw(&new));
    // `diff -N` names a missing side with the epoch as its timestamp, not /dev/null (git
    // apply and GNU patch read it so); trusted only when every hunk agrees that side is empty.
    let hunks = content.body.hunks();
    let empty_side = |count: fn(&Hunk<'_>) -> Option<usize>| {
        !hunks.is_empty() && hunks.iter().all(|h| count(h) == Some(0))
    };
    let old_epoch = has_epoch_timestamp(first.body()) && empty_side(|h| h.old_count);
    let new_epoch =
        plus.is_some_and(|l| has_epoch_timestamp(l.body())) && empty_side(|h| h.new_count);
    if old.is_some() && new.is_some() && old_epoch != new_epoch {
        if old_epoch {
            old = None;
        } else {
            new = None;
        }
    }
    let mut fp = plain_model(first, old.as_deref(), new.as_deref(), opts, content.body)?;
    check_body(&mut fp, opts, first)?;
    Ok(fp)
}

/// True when a `---` / `+++` line's timestamp (after its TAB) is the Unix epoch, in any time
/// zone: `1970-01-01 00:00:00.000000000 +0000`, `1969-12-31 19:00:00 -0500`.
pub(super) fn has_epoch_timestamp(line: &[u8]) -> bool {
    let Some(tab) = line.iter().rposition(|&b| b == b'\t') else {
        return false;
    };
    let Ok(stamp) = std::str::from_utf8(&line[tab + 1..]) else {
        return false;
    };
    let mut parts = stamp.split_whitespace();
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    let zone = parts.next().unwrap_or("+0000");
    let day: i64 = match date {
        "1970-01-01" => 0,
        "1969-12-31" => -1,
        _ => return false,
    };
    let (clock, fraction) = time.split_once('.').unwrap_or((time, "0"));
    let num = |s: &str| s.parse::<i64>().ok();
    let hms: Vec<Option<i64>> = clock.split(':').map(num).collect();
    let [Some(h), Some(m), Some(sec)] = hms[..] else {
        return false;
    };
    if !fraction.bytes().all(|b| b == b'0') || zone.len() != 5 {
        return false;
    }
    let sign = match zone.as_bytes()[0] {
        b'+' => 1,
        b'-' => -1,
        _ => return false,
    };
    let (Some(zh), Some(zm)) = (num(&zone[1..3]), num(&zone[3..5])) else {
        return false;
    };
    day * 86_400 + h * 3_600 + m * 60 + sec - sign * (zh * 3_600 + zm * 60) == 0
}

/// A plain diff's file patch. With two different names, the `+++` name is the file changed
/// (as git does for `diff -u old.c.orig old.c`).
fn plain_model<'a>(
    first: RawLine<'a>,
    old: Option<&[u8]>,
    new: Option<&[u8]>,
    opts: &ParseOptions,
    body: Body<'a>,
) -> Result<FilePatch<'a>, ParseError> {
    let strip = opts
        .strip
        .unwrap_or_else(|| paths::default_plain_strip(old, new));
    let (op, old_path, new_path) = match (old, new) {
        (None, None) => return Err(first.error("both sides of the file patch are /dev/null")),
        (None, Some(n)) => (FileOp::Add, None, Some(finish_path(first, n, strip)?)),
        (Some(o), None) => (FileOp::Delete, Some(finish_path(first, o, strip)?), None),
        (Some(_), Some(n)) => {
            let p = finish_path(first, n, strip)?;
            (FileOp::Modify, Some(p.clone()), Some(p))
        }
    };
    Ok(FilePatch::new(op, old_path, new_path, body, first.number))
}

/// A stand-alone `Binary files OLD and NEW differ` line (GNU `diff -r` output).
fn plain_binary<'a>(
    line: RawLine<'a>,
    names: &[u8],
    opts: &ParseOptions,
) -> Result<FilePatch<'a>, ParseError> {
    let at = names
        .windows(5)
        .position(|w| w == b" and ")
        .ok_or_else(|| line.error("expected 'Binary files OLD and NEW differ'"))?;
    let side = |n: &[u8]| (n != b"/dev/null").then(|| n.to_vec());
    let (old, new) = (side(&names[..at]), side(&names[at + 5..]));
    plain_model(
        line,
        old.as_deref(),
        new.as_deref(),
        opts,
        Body::BinaryWithoutData,
    )
}

/// Checks that need the whole file patch: an Add only inserts, a Delete only deletes, and a
/// zero-context hunk must cover the whole file unless `--unidiff-zero`.
fn check_body(
    fp: &mut FilePatch<'_>,
    opts: &ParseOptions,
    first: RawLine<'_>,
) -> Result<(), ParseError> {
    let op = fp.op;
    let Body::Hunks(hunks) = &mut fp.body else {
        return Ok(());
    };
    keep_own_endings(op, hunks);
    let only = hunks.len() == 1;
    for h in hunks.iter_mut() {
        let at = |h: &Hunk<'_>, msg: &str| ParseError {
            line: h.patch_line,
            line_text: header_text(h),
            ..first.error(msg)
        };
        match op {
            FileOp::Add if !h.is_pure_insertion() => {
                return Err(at(h, "a hunk of a new file can only insert lines ('+')"));
            }
            FileOp::Delete if h.lines.iter().any(|l| l.kind != LineKind::Delete) => {
                return Err(at(
                    h,
                    "a hunk of a deleted file can only delete lines ('-')",
                ));
            }
            FileOp::Add | FileOp::Delete => continue,
            _ => {}
        }
        if opts.unidiff_zero || h.lines.iter().any(|l| l.kind == LineKind::Context) {
            continue;
        }
        if only && h.old_start.unwrap_or(0) <= 1 {
            // No context because the hunk spans the whole file: it must then end there too.
            h.end_of_file = true;
            continue;
        }
        let err = at(
            h,
            "hunk has no context lines (a diff made with -U0) and does not cover the whole file",
        );
        return Err(with_hint(
            err,
            crate::spelling::Hint::new()
                .clause(
                    crate::spelling::Hint::new()
                        .text("pass ")
                        .on(crate::spelling::Opt::UnidiffZero)
                        .text(" to place it at its line numbers exactly, or "),
                )
                .text("make the diff with context (git diff -U3)"),
        ));
    }
    Ok(())
}

/// Whether the CR at the end of a `+` line, and of a `-` line, is content (kept in the line's
/// text) in a file patch: for `+` lines only when it creates a file (an Add, or a copy or
/// rename whose every line is inserted), for `-` lines only in a Delete. So a new CRLF file
/// stays CRLF and the reverse of a CRLF file's deletion gives its bytes back; elsewhere
/// inserted lines take the file's endings (SPEC §6) and the CR is dropped. The renderer asks
/// the same question to write lines that read back the same.
pub(crate) fn own_endings(op: FileOp, hunks: &[Hunk<'_>]) -> (bool, bool) {
    let keep_insert = match op {
        FileOp::Add => true,
        FileOp::Copy | FileOp::Rename => hunks
            .iter()
            .all(|h| h.lines.iter().all(|l| l.kind == LineKind::Insert)),
        _ => false,
    };
    (keep_insert, op == FileOp::Delete)
}

/// Drops the CR that the parser kept at the end of `+` and `-` lines where it is not content
/// ([`own_endings`]).
fn keep_own_endings(op: FileOp, hunks: &mut [Hunk<'_>]) {
    let (keep_insert, keep_delete) = own_endings(op, hunks);
    for l in hunks.iter_mut().flat_map(|h| h.lines.iter_mut()) {
        let keep = match l.kind {
            LineKind::Insert => keep_insert,
            LineKind::Delete => keep_delete,
            LineKind::Context => true,
        };
        if !keep && l.text.ends_with(b"\r") {
            l.text = match std::mem::take(&mut l.text) {
                Cow::Borrowed(b) => Cow::Borrowed(&b[..b.len() - 1]),
                Cow::Owned(mut v) => {
                    v.pop();
                    Cow::Owned(v)
                }
            };
        }
    }
}

/// A hunk header as git writes it, for error lines.
fn header_text(h: &Hunk<'_>) -> String {
    let n = |v: Option<usize>| v.unwrap_or(0);
    format!(
        "@@ -{},{} +{},{} @@",
        n(h.old_start),
        n(h.old_count),
        n(h.new_start),
        n(h.new_count)
    )
}
