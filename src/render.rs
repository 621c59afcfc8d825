//! Stage: render. The model back to text: git-style unified diffs, the agent patch language,
//! and a unified diff of two file contents (`--diff`, previews); plus `convert`.
//!
//! Pure: no I/O, no placement. What a target format cannot express is refused with a `usage`
//! error, never dropped silently.

// The interfaces return `crate::Error` by value (INTERFACES.md); it is large but rare.
#![allow(clippy::result_large_err)]

use std::fmt::Write as _;

use crate::error::{Error, ErrorCode};
use crate::model::{Body, FileOp, FilePatch, Format, Hunk, LineKind, Mode, PatchSet};
use crate::parse::binary;
use crate::parse::quoted::quote;

const NO_NEWLINE: &str = "\\ No newline at end of file\n";

/// `prefix` + `path`, quoted as git quotes it when needed.
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
    for fp in &set.files {
        file_to_unified(fp, &mut out);
    }
    out
}

fn file_to_unified(fp: &FilePatch<'_>, out: &mut Vec<u8>) {
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
    let hunks = fp.body.hunks();
    match fp.op {
        FileOp::Add => {
            if fp.new_mode.is_some() || matches!(&fp.body, Body::Hunks(h) if h.is_empty()) {
                let m = fp.new_mode.unwrap_or(Mode::FILE);
                let _ = writeln!(head, "new file mode {}", mode_text(m));
            }
        }
        FileOp::Delete => {
            if fp.old_mode.is_some() || matches!(&fp.body, Body::Hunks(h) if h.is_empty()) {
                let m = fp.old_mode.unwrap_or(Mode::FILE);
                let _ = writeln!(head, "deleted file mode {}", mode_text(m));
            }
        }
        _ => {
            if let (Some(o), Some(n)) = (fp.old_mode, fp.new_mode) {
                if o != n {
                    let _ = writeln!(head, "old mode {}\nnew mode {}", mode_text(o), mode_text(n));
                }
            }
        }
    }
    let word = match fp.op {
        FileOp::Rename => Some("rename"),
        FileOp::Copy => Some("copy"),
        _ => None,
    };
    if let Some(w) = word {
        let _ = writeln!(
            head,
            "{w} from {}\n{w} to {}",
            quote(old.as_bytes()),
            quote(new.as_bytes())
        );
    }
    if let Some(ids) = &fp.blob_ids {
        let _ = write!(head, "index {}..{}", ids.old, ids.new);
        match (fp.op, fp.old_mode, fp.new_mode) {
            (FileOp::Add | FileOp::Delete, _, _) => {}
            (_, Some(o), Some(n)) if o == n => {
                let _ = write!(head, " {}", mode_text(o));
            }
            _ => {}
        }
        head.push('\n');
    }
    out.extend_from_slice(head.as_bytes());
    let old_name = if fp.op == FileOp::Add {
        "/dev/null".to_string()
    } else {
        side("a/", old)
    };
    let new_name = if fp.op == FileOp::Delete {
        "/dev/null".to_string()
    } else {
        side("b/", new)
    };
    match &fp.body {
        Body::Hunks(_) if !hunks.is_empty() => {
            out.extend_from_slice(format!("--- {old_name}\n+++ {new_name}\n").as_bytes());
            let mut drift: isize = 0;
            for h in hunks {
                hunk_to_unified(h, &mut drift, out);
            }
        }
        Body::Binary(b) => out.extend_from_slice(binary::encode(b).as_bytes()),
        Body::BinaryWithoutData => out.extend_from_slice(
            format!("Binary files {old_name} and {new_name} differ\n").as_bytes(),
        ),
        Body::Hunks(_) | Body::Edits(_) => {}
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

fn hunk_to_unified(h: &Hunk<'_>, drift: &mut isize, out: &mut Vec<u8>) {
    let old_count = h.old_lines().count();
    let new_count = h.new_lines().count();
    let old_start = h.old_start.unwrap_or(usize::from(old_count > 0));
    let new_start = h.new_start.unwrap_or_else(|| {
        let base = if old_count == 0 {
            old_start + 1
        } else {
            old_start
        };
        let s = (base as isize + *drift).max(1) as usize;
        if new_count == 0 {
            s - 1
        } else {
            s
        }
    });
    *drift += new_count as isize - old_count as isize;
    out.extend_from_slice(
        format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_count),
            range(new_start, new_count)
        )
        .as_bytes(),
    );
    write_lines(h, out);
}

/// The lines of a hunk with their `\ No newline at end of file` markers.
fn write_lines(h: &Hunk<'_>, out: &mut Vec<u8>) {
    let last_old = h.lines.iter().rposition(|l| l.kind != LineKind::Insert);
    let last_new = h.lines.iter().rposition(|l| l.kind != LineKind::Delete);
    for (i, l) in h.lines.iter().enumerate() {
        out.push(match l.kind {
            LineKind::Context => b' ',
            LineKind::Delete => b'-',
            LineKind::Insert => b'+',
        });
        out.extend_from_slice(&l.text);
        out.push(b'\n');
        let marks_old = h.old_no_newline && last_old == Some(i);
        let marks_new = h.new_no_newline && last_new == Some(i);
        if marks_old || marks_new {
            out.extend_from_slice(NO_NEWLINE.as_bytes());
        }
    }
}

fn usage(fp: &FilePatch<'_>, what: &str) -> Error {
    Error::new(
        ErrorCode::Usage,
        format!(
            "{}: {what} cannot be expressed in the agent patch language",
            fp.path()
        ),
    )
    .with_path(fp.path())
    .with_hint("convert to a unified diff instead (--to unified)")
}

/// The agent patch language form of `set`. Refused (`usage`): binary changes, JSON edits,
/// copies, mode changes, symlinks and gitlinks, non-UTF-8 lines, a change of the final
/// newline, an Add without a final newline, and context lines that would read as markers.
pub fn to_agent(set: &PatchSet<'_>) -> Result<String, Error> {
    let mut out = String::from("*** Begin Patch\n");
    for fp in &set.files {
        file_to_agent(fp, &mut out)?;
    }
    out.push_str("*** End Patch\n");
    Ok(out)
}

fn check_agent_modes(fp: &FilePatch<'_>) -> Result<(), Error> {
    for m in [fp.old_mode, fp.new_mode].into_iter().flatten() {
        if m.is_symlink() || m.is_gitlink() {
            return Err(usage(fp, "a symbolic link or submodule"));
        }
    }
    let changed = match fp.op {
        FileOp::Add => fp.new_mode.is_some_and(|m| m != Mode::FILE),
        FileOp::Delete => false,
        _ => fp.old_mode.is_some() && fp.new_mode.is_some() && fp.old_mode != fp.new_mode,
    };
    if changed {
        return Err(usage(fp, "a file mode change"));
    }
    Ok(())
}

fn file_to_agent(fp: &FilePatch<'_>, out: &mut String) -> Result<(), Error> {
    match &fp.body {
        Body::Binary(_) | Body::BinaryWithoutData => return Err(usage(fp, "a binary change")),
        Body::Edits(_) => return Err(usage(fp, "a JSON edit")),
        Body::Hunks(_) => {}
    }
    match fp.op {
        FileOp::Copy => return Err(usage(fp, "a copy")),
        FileOp::Mode => return Err(usage(fp, "a file mode change")),
        _ => {}
    }
    check_agent_modes(fp)?;
    let hunks = fp.body.hunks();
    let text = |t: &[u8], n: usize| utf8(fp, t, n);
    match fp.op {
        FileOp::Add => {
            let _ = writeln!(out, "*** Add File: {}", fp.path());
            for (n, h) in hunks.iter().enumerate() {
                if h.new_no_newline {
                    return Err(usage(fp, "a new file without a final newline"));
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
            base_line(fp, out);
            for (n, h) in hunks.iter().enumerate() {
                hunk_to_agent(fp, h, n + 1, out, &text)?;
            }
        }
    }
    Ok(())
}

/// A hunk line's text as UTF-8, or the refusal naming the hunk.
fn utf8(fp: &FilePatch<'_>, t: &[u8], n: usize) -> Result<String, Error> {
    String::from_utf8(t.to_vec()).map_err(|_| usage(fp, &format!("a non-UTF-8 line (hunk {n})")))
}

type TextFn<'f> = dyn Fn(&[u8], usize) -> Result<String, Error> + 'f;

fn base_line(fp: &FilePatch<'_>, out: &mut String) {
    if let Some(b) = &fp.base {
        let _ = writeln!(out, "*** Base: {b}");
    }
}

/// True when a hunk line holding `text` would read as a marker of the agent language.
fn reads_as_marker(text: &str) -> bool {
    let t = text.trim();
    ["*** Begin Patch", "*** End Patch", "*** End of File"].contains(&t)
        || [
            "*** Add File: ",
            "*** Delete File: ",
            "*** Update File: ",
            "*** Move to: ",
            "*** Base: ",
        ]
        .iter()
        .any(|m| t.starts_with(m.trim_end()) && t.len() > m.trim_end().len())
}

fn hunk_to_agent(
    fp: &FilePatch<'_>,
    h: &Hunk<'_>,
    n: usize,
    out: &mut String,
    text: &TextFn<'_>,
) -> Result<(), Error> {
    if h.old_no_newline != h.new_no_newline {
        return Err(usage(
            fp,
            &format!("a change of the final newline (hunk {n})"),
        ));
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
    } else {
        for a in &h.anchors {
            let _ = writeln!(out, "@@ {}", text(a, n)?);
        }
    }
    for l in &h.lines {
        let t = text(&l.text, n)?;
        if l.kind == LineKind::Context && reads_as_marker(&t) {
            return Err(usage(
                fp,
                &format!("a context line that reads as a marker (hunk {n})"),
            ));
        }
        let c = match l.kind {
            LineKind::Context => ' ',
            LineKind::Delete => '-',
            LineKind::Insert => '+',
        };
        let _ = writeln!(out, "{c}{t}");
    }
    if h.end_of_file {
        out.push_str("*** End of File\n");
    }
    Ok(())
}

mod diff;
pub use diff::file_diff;

/// `apply-patch convert --to unified|agent`: parse `input` (any format, detected as
/// `parse::parse` does) and render it in `to`. JSON input and agent anchors have no unified
/// form, and JSON is not a target: both are `usage` errors.
pub fn convert_set(set: &PatchSet<'_>, to: Format) -> Result<Vec<u8>, Error> {
    match to {
        Format::Agent => to_agent(set).map(String::into_bytes),
        Format::Unified => {
            for fp in &set.files {
                if matches!(fp.body, Body::Edits(_)) {
                    return Err(Error::new(
                        ErrorCode::Usage,
                        "JSON edit requests cannot be converted to a unified diff: their edits are not line hunks",
                    ));
                }
                if let Some(n) = fp.body.hunks().iter().position(|h| !h.anchors.is_empty()) {
                    return Err(Error::new(
                        ErrorCode::Usage,
                        format!(
                            "{}: hunk {} has an anchor ('@@ TEXT') that a unified diff cannot express",
                            fp.path(),
                            n + 1
                        ),
                    )
                    .with_path(fp.path())
                    .with_hunk(n + 1));
                }
            }
            Ok(to_unified(set))
        }
        Format::Json => Err(Error::new(
            ErrorCode::Usage,
            "convert can write 'unified' or 'agent', not 'json'",
        )),
    }
}

#[cfg(test)]
mod tests;
