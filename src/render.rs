//! Stage: render. The model back to text: git-style unified diffs, the agent patch language,
//! and a unified diff of two file contents (`--diff`, previews); plus `convert`.
//!
//! Pure: no I/O, no placement. What a target format cannot express is refused with a `usage`
//! error, never dropped silently.

use std::fmt::Write as _;

use crate::error::Error;
use crate::model::{Body, FileOp, FilePatch, Format, Hunk, LineKind, Mode, PatchSet};
use crate::parse::binary;
use crate::parse::unified::own_endings;
use crate::parse::ParseOptions;
use crate::quote::quote;
/// The refusals of [`to_agent`] and [`convert_set`] (a rewrite the target format has no form
/// for); `?` into [`Error`] makes the boundary error of one.
pub use crate::transform::{ConvertError, Irreversible, NoAgentForm};

const NO_NEWLINE: &str = "\\ No newline at end of file\n";

/// `prefix` + `path`, quoted as git quotes it when needed. (An absolute path would read back
/// relative: [`convert_set`] refuses those.)
fn side(prefix: &str, path: &str) -> String {
    quote(format!("{prefix}{path}").as_bytes())
}

fn mode_text(m: Mode) -> String {
    format!("{:06o}", m.0)
}

/// A git-style unified diff of `set`: `diff --git`, extended headers, quoted paths where
/// needed, hunks with counts taken from their lines, `\ No newline at end of file` markers.
/// Hunks without line numbers (agent hunks) start at line 1 (or 0 when their old side is
/// empty); anchors and JSON edits have no unified form and are left out (see [`convert`],
/// which refuses them).
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// use apply_patch::render::to_unified;
/// let diff = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(to_unified(&set), diff.to_vec());
/// ```
pub fn to_unified(set: &PatchSet<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    // The agent language and JSON have no modes: an added or deleted file is a regular one,
    // and git wants its mode line. A plain diff's Add stays as it was (it reads back the same).
    let default_modes = set.rules.modeless;
    for fp in &set.files {
        file_to_unified(fp, default_modes, &mut out);
    }
    out
}

fn file_to_unified(fp: &FilePatch<'_>, default_modes: bool, out: &mut Vec<u8>) {
    let old = fp
        .old_path
        .as_deref()
        .or(fp.new_path.as_deref())
        .unwrap_or("");
    let new = fp
        .new_path
        .as_deref()
        .or(fp.old_path.as_deref())
        .unwrap_or("");
    let mut head = format!("diff --git {} {}\n", side("a/", old), side("b/", new));
    let mode_on_index = mode_lines(fp, default_modes, &mut head);
    let word = match fp.op {
        FileOp::Rename => Some("rename"),
        FileOp::Copy => Some("copy"),
        _ => None,
    };
    if let Some(w) = word {
        let (o, n) = (quote(old.as_bytes()), quote(new.as_bytes()));
        let _ = writeln!(head, "{w} from {o}\n{w} to {n}");
    }
    if let Some(ids) = &fp.blob_ids {
        let _ = write!(head, "index {}..{}", ids.old, ids.new);
        if let Some(m) = mode_on_index {
            let _ = write!(head, " {}", mode_text(m));
        }
        head.push('\n');
    }
    out.extend_from_slice(head.as_bytes());
    let old_name = match fp.op {
        FileOp::Add => "/dev/null".to_string(),
        _ => side("a/", old),
    };
    let new_name = match fp.op {
        FileOp::Delete => "/dev/null".to_string(),
        _ => side("b/", new),
    };
    let names = format!("--- {old_name}\n+++ {new_name}\n");
    // An Add or Delete without a mode line is only recognisable by its /dev/null side.
    let needs_names = (fp.op == FileOp::Add && fp.new_mode.is_none())
        || (fp.op == FileOp::Delete && fp.old_mode.is_none());
    match &fp.body {
        Body::Hunks(hunks) if !hunks.is_empty() => {
            out.extend_from_slice(names.as_bytes());
            let mut pos = Position {
                drift: 0,
                next_old: 1,
            };
            let keep_cr = own_endings(fp.op, hunks);
            for h in hunks {
                hunk_to_unified(h, &mut pos, keep_cr, out);
            }
        }
        Body::Binary(b) => {
            if needs_names {
                out.extend_from_slice(names.as_bytes());
            }
            out.extend_from_slice(binary::encode(b).as_bytes());
        }
        Body::BinaryWithoutData => {
            if needs_names {
                out.extend_from_slice(names.as_bytes());
            }
            let line = format!("Binary files {old_name} and {new_name} differ\n");
            out.extend_from_slice(line.as_bytes());
        }
        Body::Hunks(_) | Body::Edits(_) => {}
    }
}

/// The mode lines of a file patch's header. Returns the mode to write on the index line
/// instead (an unchanged mode of a file patch with blob ids, as git does). `default_modes`:
/// an added or deleted file without a mode gets `100644`.
fn mode_lines(fp: &FilePatch<'_>, default_modes: bool, head: &mut String) -> Option<Mode> {
    let empty = default_modes || matches!(&fp.body, Body::Hunks(h) if h.is_empty());
    match fp.op {
        FileOp::Add => {
            if fp.new_mode.is_some() || empty {
                let m = fp.new_mode.unwrap_or(Mode::FILE);
                let _ = writeln!(head, "new file mode {}", mode_text(m));
            }
            None
        }
        FileOp::Delete => {
            if fp.old_mode.is_some() || empty {
                let m = fp.old_mode.unwrap_or(Mode::FILE);
                let _ = writeln!(head, "deleted file mode {}", mode_text(m));
            }
            None
        }
        _ => match (fp.old_mode, fp.new_mode) {
            (Some(o), Some(n)) if o == n && fp.blob_ids.is_some() => Some(o),
            (o, n) => {
                if let Some(o) = o {
                    let _ = writeln!(head, "old mode {}", mode_text(o));
                }
                if let Some(n) = n {
                    let _ = writeln!(head, "new mode {}", mode_text(n));
                }
                None
            }
        },
    }
}

/// `START[,COUNT]` as git writes it (`,1` left out).
fn range(start: usize, count: usize) -> String {
    if count == 1 {
        format!("{start}")
    } else {
        format!("{start},{count}")
    }
}

/// Where the previous hunk of a file left off, to give hunks without line numbers (agent
/// hunks) increasing ones.
struct Position {
    /// New minus old lines of the hunks so far.
    drift: isize,
    /// The old line right after the previous hunk.
    next_old: usize,
}

fn hunk_to_unified(h: &Hunk<'_>, pos: &mut Position, keep_cr: (bool, bool), out: &mut Vec<u8>) {
    let old_count = h.old_lines().count();
    let new_count = h.new_lines().count();
    // A range of no lines names the line before it (`-5,0`: after line 5).
    let old_start = h.old_start.unwrap_or(match old_count {
        0 => pos.next_old.saturating_sub(1),
        _ => pos.next_old,
    });
    let new_start = h.new_start.unwrap_or_else(|| {
        let first = if old_count == 0 {
            old_start.saturating_add(1)
        } else {
            old_start
        };
        let s = (first as isize).saturating_add(pos.drift).max(1) as usize;
        if new_count == 0 {
            s - 1
        } else {
            s
        }
    });
    pos.drift = pos
        .drift
        .saturating_add(new_count as isize - old_count as isize);
    pos.next_old = old_start.saturating_add(old_count.max(1));
    out.extend_from_slice(
        format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_count),
            range(new_start, new_count)
        )
        .as_bytes(),
    );
    write_lines(h, keep_cr, out);
}

/// The lines of a hunk with their `\ No newline at end of file` markers. `keep_cr`: whether
/// the parser keeps the CR of a `+` line and of a `-` line of this file patch
/// ([`own_endings`]).
fn write_lines(h: &Hunk<'_>, keep_cr: (bool, bool), out: &mut Vec<u8>) {
    let last_old = h.lines.iter().rposition(|l| l.kind != LineKind::Insert);
    let last_new = h.lines.iter().rposition(|l| l.kind != LineKind::Delete);
    for (i, l) in h.lines.iter().enumerate() {
        out.push(match l.kind {
            LineKind::Context => b' ',
            LineKind::Delete => b'-',
            LineKind::Insert => b'+',
        });
        out.extend_from_slice(&l.text);
        // The parser drops one CR before a line's LF (CRLF diffs read like LF ones), so a
        // line whose own text ends in CR needs one more to read back the same — unless the
        // parser keeps that CR as content (a created or deleted file's own endings).
        let kept = match l.kind {
            LineKind::Insert => keep_cr.0,
            LineKind::Delete => keep_cr.1,
            LineKind::Context => false,
        };
        if l.text.ends_with(b"\r") && !kept {
            out.push(b'\r');
        }
        out.push(b'\n');
        let marks_old = h.old_no_newline && last_old == Some(i);
        let marks_new = h.new_no_newline && last_new == Some(i);
        if marks_old || marks_new {
            out.extend_from_slice(NO_NEWLINE.as_bytes());
        }
    }
}

fn usage(fp: &FilePatch<'_>, what: NoAgentForm) -> ConvertError {
    ConvertError::NoAgentForm {
        path: fp.path().to_string(),
        what,
    }
}

/// The agent patch language form of `set`. Refused (`usage`): binary changes, JSON edits,
/// copies, mode changes, symlinks and gitlinks, non-UTF-8 lines, a change of the final
/// newline, an Add without a final newline, and context lines that would read as markers.
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// use apply_patch::render::to_agent;
/// let diff = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -4,2 +4,2 @@\n k\n-old\n+new\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(
///     to_agent(&set).unwrap(),
///     "*** Begin Patch\n*** Update File: x\n@@ -4,2 +4,2 @@\n k\n-old\n+new\n*** End Patch\n"
/// );
/// ```
pub fn to_agent(set: &PatchSet<'_>) -> Result<String, ConvertError> {
    let mut out = String::from("*** Begin Patch\n");
    for fp in &set.files {
        if set.rules.sequential {
            for section in in_sections(fp) {
                file_to_agent(&section, &mut out)?;
            }
        } else {
            file_to_agent(fp, &mut out)?;
        }
    }
    out.push_str("*** End Patch\n");
    Ok(out)
}

/// A file patch whose hunks apply in sequence (SEARCH/REPLACE blocks) as file patches of one
/// hunk each: the agent language runs its file operations in sequence, each on what the ones
/// before it left, and a lone hunk without a line number is placed by file-wide uniqueness,
/// as a block is. A line hint counts only under the file's Base, which names the file before
/// the first section: the first section keeps both, the others neither.
fn in_sections<'a>(fp: &FilePatch<'a>) -> Vec<FilePatch<'a>> {
    let Body::Hunks(hunks) = &fp.body else {
        return vec![fp.clone()];
    };
    if fp.op != FileOp::Modify || hunks.len() < 2 && fp.base.is_some() {
        return vec![fp.clone()];
    }
    hunks
        .iter()
        .enumerate()
        .map(|(n, h)| {
            let mut h = h.clone();
            let mut section = fp.clone();
            if n > 0 || fp.base.is_none() {
                h.old_start = None;
                section.base = None;
            }
            section.body = Body::Hunks(vec![h]);
            section.patch_line = h_line(&section);
            section
        })
        .collect()
}

fn h_line(fp: &FilePatch<'_>) -> usize {
    fp.body
        .hunks()
        .first()
        .map_or(fp.patch_line, |h| h.patch_line)
}

fn check_agent_modes(fp: &FilePatch<'_>) -> Result<(), ConvertError> {
    for m in [fp.old_mode, fp.new_mode].into_iter().flatten() {
        if m.is_symlink() || m.is_gitlink() {
            return Err(usage(fp, NoAgentForm::LinkOrSubmodule));
        }
    }
    let changed = match fp.op {
        FileOp::Add => fp.new_mode.is_some_and(|m| m != Mode::FILE),
        FileOp::Delete => false,
        _ => fp.old_mode.is_some() && fp.new_mode.is_some() && fp.old_mode != fp.new_mode,
    };
    if changed {
        return Err(usage(fp, NoAgentForm::ModeChange));
    }
    Ok(())
}

fn file_to_agent(fp: &FilePatch<'_>, out: &mut String) -> Result<(), ConvertError> {
    match &fp.body {
        Body::Binary(_) | Body::BinaryWithoutData => return Err(usage(fp, NoAgentForm::Binary)),
        Body::Edits(_) => return Err(usage(fp, NoAgentForm::JsonEdit)),
        Body::Hunks(_) => {}
    }
    match fp.op {
        FileOp::Copy => return Err(usage(fp, NoAgentForm::Copy)),
        FileOp::Mode => return Err(usage(fp, NoAgentForm::ModeChange)),
        _ => {}
    }
    check_agent_modes(fp)?;
    for p in [fp.old_path.as_deref(), fp.new_path.as_deref()]
        .into_iter()
        .flatten()
    {
        let blank_edge = p.trim_matches(|c: char| c.is_ascii_whitespace()) != p;
        if blank_edge || p.chars().any(char::is_control) {
            return Err(usage(fp, NoAgentForm::UnwritablePath));
        }
    }
    let hunks = fp.body.hunks();
    let text = |t: &[u8], n: usize| utf8(fp, t, n);
    match fp.op {
        FileOp::Add => {
            let _ = writeln!(out, "*** Add File: {}", fp.path());
            for (n, h) in hunks.iter().enumerate() {
                if h.new_no_newline {
                    return Err(usage(fp, NoAgentForm::AddWithoutNewline));
                }
                for l in h.new_lines() {
                    let _ = writeln!(out, "+{}", text(l, n + 1)?);
                }
            }
        }
        FileOp::Delete => {
            let _ = writeln!(out, "*** Delete File: {}", fp.path());
            base_line(fp, out);
        }
        _ => {
            let _ = writeln!(
                out,
                "*** Update File: {}",
                fp.old_path.as_deref().unwrap_or("")
            );
            if fp.op == FileOp::Rename {
                let _ = writeln!(out, "*** Move to: {}", fp.new_path.as_deref().unwrap_or(""));
            }
            if hunks.is_empty() && fp.op != FileOp::Rename {
                return Err(usage(fp, NoAgentForm::UpdateWithoutHunks));
            }
            base_line(fp, out);
            for (n, h) in hunks.iter().enumerate() {
                hunk_to_agent(fp, h, n + 1, out, &text)?;
            }
        }
    }
    Ok(())
}

/// A hunk line's text as UTF-8, or the refusal naming the hunk.
fn utf8(fp: &FilePatch<'_>, t: &[u8], n: usize) -> Result<String, ConvertError> {
    String::from_utf8(t.to_vec()).map_err(|_| usage(fp, NoAgentForm::NonUtf8Line { hunk: n }))
}

type TextFn<'f> = dyn Fn(&[u8], usize) -> Result<String, ConvertError> + 'f;

fn base_line(fp: &FilePatch<'_>, out: &mut String) {
    if let Some(b) = &fp.base {
        let _ = writeln!(out, "*** Base: {b}");
    }
}

/// True when a hunk line holding `text` would read as a marker of the agent language (the
/// line, trimmed of ASCII blanks, is or starts with one).
fn reads_as_marker(text: &str) -> bool {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    ["*** Begin Patch", "*** End Patch", "*** End of File"].contains(&t)
        || [
            "*** Add File:",
            "*** Delete File:",
            "*** Update File:",
            "*** Move to:",
            "*** Base:",
        ]
        .iter()
        .any(|m| t.starts_with(m))
}

fn hunk_to_agent(
    fp: &FilePatch<'_>,
    h: &Hunk<'_>,
    n: usize,
    out: &mut String,
    text: &TextFn<'_>,
) -> Result<(), ConvertError> {
    if h.old_no_newline != h.new_no_newline {
        return Err(usage(fp, NoAgentForm::FinalNewline { hunk: n }));
    }
    for a in &h.anchors {
        let a = text(a, n)?;
        if a.trim_matches(|c: char| c.is_ascii_whitespace()).is_empty()
            || a.ends_with(|c: char| c.is_ascii_whitespace())
        {
            return Err(usage(fp, NoAgentForm::BlankAnchor { hunk: n }));
        }
        let _ = writeln!(out, "@@ {a}");
    }
    if let Some(start) = h.old_start {
        let mut head = format!("@@ -{start}");
        if let Some(c) = h.old_count {
            let _ = write!(head, ",{c}");
        }
        if let Some(s) = h.new_start {
            let _ = write!(head, " +{s}");
            if let Some(c) = h.new_count {
                let _ = write!(head, ",{c}");
            }
        }
        let _ = writeln!(out, "{head} @@");
    } else if h.anchors.is_empty() {
        out.push_str("@@\n");
    }
    for l in &h.lines {
        let t = text(&l.text, n)?;
        if l.kind == LineKind::Context && reads_as_marker(&t) {
            return Err(usage(fp, NoAgentForm::MarkerContext { hunk: n }));
        }
        let c = match l.kind {
            LineKind::Context => ' ',
            LineKind::Delete => '-',
            LineKind::Insert => '+',
        };
        // As in unified diffs: the parser drops one CR before the LF.
        let cr = if t.ends_with('\r') { "\r" } else { "" };
        let _ = writeln!(out, "{c}{t}{cr}");
    }
    if h.end_of_file {
        out.push_str("*** End of File\n");
    }
    Ok(())
}

mod diff;
pub use diff::file_diff;

/// `apply-patch convert --to unified|agent`: parse `input` (any format, detected as
/// [`crate::parse::parse`] does, or forced by `opts.format`) and render it in `to`.
/// It joins two stages, so its refusal is the boundary [`Error`], made once from the
/// parser's [`ParseError`](crate::parse::ParseError) or the [`ConvertError`].
///
/// ```
/// use apply_patch::parse::ParseOptions;
/// use apply_patch::render::convert;
/// use apply_patch::Format;
/// let agent = b"*** Begin Patch\n*** Update File: a.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n*** End Patch\n";
/// let diff = convert(agent, &ParseOptions::default(), Format::Unified).unwrap();
/// assert_eq!(
///     String::from_utf8(diff).unwrap(),
///     "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n keep\n-old\n+new\n"
/// );
/// ```
pub fn convert(input: &[u8], opts: &ParseOptions, to: Format) -> Result<Vec<u8>, Error> {
    let mut set = crate::parse::parse(input, opts)?;
    // A heredoc's `cd DIR` has no form in either output: its paths take DIR instead.
    if let Some(dir) = set.cd.take() {
        set = crate::transform::prefix(set, &dir);
    }
    convert_set(&set, to).map_err(Error::from)
}

/// [`convert`] of an already parsed patch set. JSON edits and agent anchors have no unified
/// form, and JSON is not a target: all are `usage` errors.
pub fn convert_set(set: &PatchSet<'_>, to: Format) -> Result<Vec<u8>, ConvertError> {
    match to {
        Format::Agent => to_agent(set).map(String::into_bytes),
        Format::Unified => {
            for fp in &set.files {
                let absolute = [fp.old_path.as_deref(), fp.new_path.as_deref()]
                    .into_iter()
                    .flatten()
                    .any(|p| p.starts_with('/'));
                if absolute {
                    return Err(ConvertError::AbsoluteInUnified {
                        path: fp.path().to_string(),
                    });
                }
                if matches!(fp.body, Body::Edits(_)) {
                    return Err(ConvertError::EditsToUnified);
                }
                if let Some(n) = fp.body.hunks().iter().position(|h| !h.anchors.is_empty()) {
                    return Err(ConvertError::AnchorToUnified {
                        path: fp.path().to_string(),
                        hunk: n + 1,
                    });
                }
            }
            Ok(to_unified(set))
        }
        Format::Json => Err(ConvertError::ToJson),
        Format::Blocks => Err(ConvertError::ToBlocks),
    }
}

#[cfg(test)]
mod tests;
