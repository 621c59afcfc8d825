//! Locator tests: the table-driven tester that runs every case through every level of the
//! ladder (and through LF, CRLF and BOM files), rules one by one, JSON edits, snapshots of
//! every refusal, and property tests against a brute-force reading of SPEC §5.

// `LocateError` carries its teaching by value (the contract); helpers pass it on as is.
#![allow(clippy::result_large_err)]

mod edits;
mod fuzz;
mod hints;
mod order;
mod props;
mod refusals;
mod reindent;
mod rules;
mod table;

use apply_patch::locate::{locate_hunks, LineNumbers, LocateError, LocateOptions, Placement};
use apply_patch::splice::splice;
use apply_patch::text::Text;
use apply_patch::{Format, Hunk, Line, LineKind};

/// A hunk written in a small test notation, one entry per line:
/// ` x` / `-x` / `+x` (an empty entry is an empty context line), `@@ -N[,M]` (line-number
/// hint), `@@ TEXT` (anchor), `*** End of File`, `\ old` / `\ new` (no newline markers).
pub fn hunk(spec: &str) -> Hunk<'static> {
    let mut h = Hunk::default();
    for l in spec.split('\n') {
        if let Some(nums) = l.strip_prefix("@@ -") {
            let (start, count) = match nums.split_once(',') {
                Some((s, c)) => (s, Some(c)),
                None => (nums, None),
            };
            h.old_start = Some(start.parse().expect("a test hint is a number"));
            h.old_count = count.map(|c| c.parse().expect("a test count is a number"));
        } else if let Some(anchor) = l.strip_prefix("@@ ") {
            h.anchors.push(anchor.as_bytes().to_vec().into());
        } else if l == "*** End of File" {
            h.end_of_file = true;
        } else if l == "\\ old" {
            h.old_no_newline = true;
        } else if l == "\\ new" {
            h.new_no_newline = true;
        } else {
            let (kind, text) = match l.chars().next() {
                Some('-') => (LineKind::Delete, &l[1..]),
                Some('+') => (LineKind::Insert, &l[1..]),
                Some(' ') => (LineKind::Context, &l[1..]),
                _ => (LineKind::Context, l),
            };
            h.lines.push(Line::new(kind, text.as_bytes().to_vec()));
        }
    }
    h
}

/// Locate `hunks` in `file` and splice: the new bytes and the placements.
pub fn run(
    file: &[u8],
    hunks: &[Hunk<'_>],
    format: Format,
    opts: &LocateOptions,
) -> Result<(Vec<u8>, Vec<Placement>), LocateError> {
    let text = Text::parse(file);
    let lines = text.contents();
    let placed = locate_hunks(lines, hunks, format, opts)?;
    Ok((splice(&text, &placed), placed))
}

/// Locate and splice with default options; the result as a string.
pub fn apply(file: &str, specs: &[&str], format: Format) -> Result<String, LocateError> {
    apply_with(file, specs, format, &LocateOptions::default())
}

/// [`apply`] with `opts`.
pub fn apply_with(
    file: &str,
    specs: &[&str],
    format: Format,
    opts: &LocateOptions,
) -> Result<String, LocateError> {
    let hunks: Vec<Hunk<'_>> = specs.iter().map(|s| hunk(s)).collect();
    let (bytes, _) = run(file.as_bytes(), &hunks, format, opts)?;
    Ok(String::from_utf8(bytes).expect("utf-8 in, utf-8 out"))
}

/// Options under which line numbers are trusted, as an agent patch's are under a matching
/// `*** Base:` (SPEC §5 "Trust in line numbers").
pub fn trusted() -> LocateOptions {
    LocateOptions::default().with_line_numbers(LineNumbers::Trusted)
}
