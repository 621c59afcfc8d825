//! Stage: parse. The unified-diff front end (SPEC §3): git diffs with extended headers, plain
//! `---`/`+++` diffs, several files per input, prose before the first header, binary patches.
//! The normative grammar is `grammar/unified.ebnf`; every production names its function here
//! or in a sub-module (`/// grammar: NAME`).
//!
//! No I/O and no placement: paths are stripped and checked for syntax only (the guard decides
//! whether they stay inside the root), and hunks keep their line numbers as hints.

mod file;
mod header;
mod hunk;
pub(crate) mod lines;
mod paths;

pub(crate) use file::own_endings;
use lines::{with_hint, Cursor};

use crate::model::{Format, PatchSet, Rules};
use crate::parse::{one_patch, ParseError, ParseOptions};

/// grammar: patch
///
/// Parse the unified diff that starts at byte offset `start` of `input` (a line start); line
/// numbers in errors and in the model count from the beginning of `input`.
///
/// ```
/// use apply_patch::parse::{unified, ParseOptions};
/// let diff = b"diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-old\n+new\n";
/// let set = unified::parse(diff, 0, &ParseOptions::default()).unwrap();
/// assert_eq!(set.files[0].path(), "x.txt");
/// assert_eq!(set.files[0].body.hunks()[0].lines.len(), 2);
/// ```
pub fn parse<'a>(
    input: &'a [u8],
    start: usize,
    opts: &ParseOptions,
) -> Result<PatchSet<'a>, ParseError> {
    // A UTF-8 BOM before the first line is not part of it.
    let start = match input.get(start..) {
        Some(rest) if rest.starts_with(crate::text::BOM) => start + crate::text::BOM.len(),
        _ => start,
    };
    // A diff inside a heredoc ends at the heredoc's closing word, as an agent patch does.
    let (body, _) = crate::parse::detect::patch_body(input, start);
    let end = start + body.len();
    let first = (Format::Unified, start);
    let mut cur = Cursor::new(&input[..end], start);
    let mut files = Vec::new();
    loop {
        let prose = cur.peek().map(|l| offset_of(input, l));
        skip_to_header(&mut cur, !files.is_empty())?;
        // Prose between or after file patches may hold no patch of another kind (SPEC §1:
        // one patch per input); the diff's own sections are one patch.
        if let (Some(from), false) = (prose, files.is_empty()) {
            let to = cur.peek().map_or(end, |l| offset_of(input, l));
            one_patch::nothing_in_prose(input, first, from, to)?;
        }
        if cur.peek().is_none() {
            break;
        }
        files.push(file::file_patch(&mut cur, opts)?);
    }
    if files.is_empty() {
        // No patch at all: nothing of the input is quoted (SPEC §1).
        return Err(ParseError::about_input(
            "no unified diff found: expected a 'diff --git' line or a '--- ' line followed by a '+++ ' line",
        )
        .with_hint("make the patch with 'git diff' or 'diff -u', or use the agent patch language"));
    }
    one_patch::nothing_after(input, first, end)?;
    Ok(PatchSet {
        format: Format::Unified,
        rules: Rules::UNIFIED,
        cd: None,
        files,
    })
}

/// The byte offset of `line` in `input` (every line is a slice of it).
fn offset_of(input: &[u8], line: lines::RawLine<'_>) -> usize {
    (line.text.as_ptr() as usize).saturating_sub(input.as_ptr() as usize)
}

/// True when the line at the cursor starts a file patch: `diff --git `, a `--- ` line
/// followed by a `+++ ` line (a lone `--- ` is e-mail prose or a diffstat rule), or a
/// stand-alone `Binary files … differ`.
pub(crate) fn is_header_start(cur: &Cursor<'_>) -> bool {
    let Some(line) = cur.peek() else {
        return false;
    };
    let body = line.body();
    body.starts_with(b"diff --git ")
        || (body.starts_with(b"--- ")
            && cur
                .peek_at(1)
                .is_some_and(|n| n.body().starts_with(b"+++ ")))
        || file::binary_files_differ(body).is_ok()
}

/// grammar: trailing_line
///
/// Skip prose up to the next file header. Before the first file anything is skipped (an
/// e-mail, a commit message, a diffstat); after a file, a hunk header with no file header
/// is refused, since skipping it would drop a change silently.
fn skip_to_header(cur: &mut Cursor<'_>, after_file: bool) -> Result<(), ParseError> {
    while let Some(line) = cur.peek() {
        if is_header_start(cur) {
            return Ok(());
        }
        if after_file && line.body().starts_with(b"@@ -") {
            return Err(with_hint(
                line.error(
                    "hunk header outside a file patch: the previous hunk ended before this line",
                ),
                crate::spelling::Hint::new()
                    .text("check the line counts of the previous hunk")
                    .clause(
                        crate::spelling::Hint::new()
                            .text(", or pass ")
                            .on(crate::spelling::Opt::Recount),
                    ),
            ));
        }
        cur.pos += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
