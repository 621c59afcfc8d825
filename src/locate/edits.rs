//! Stage: locate — the JSON edits of SPEC §4 (`replace`, `line_range`, `insert`, `append`)
//! placed against the file as it was before the request, all together.
//!
//! Pure. Must not touch line endings (the splicer gives written lines the endings of §6);
//! `create` and `delete` are file operations and never reach this module.

use crate::error::{Nearest, NumberedLine};
use crate::model::Edit;
use crate::text::Text;

use super::diagnose::{self, lossy};
use super::hunks::ambiguous_error;
use super::ladder::{fold_quotes, trim};
use super::reindent::{self, Rebase, Unit};
use super::search::{FileView, Pattern};
use super::{Fuzz, Level, LocateError, LocateOptions, PatchPart, Piece, Placement};

/// The ways out of an ambiguous `replace`.
const REPLACE_WAYS_OUT: &str = "say which one: send instead the `line_range` edit its candidate \
    names (`select`), or make `old` longer so that it occurs once (include a neighbouring \
    line), or set replace_all to change every occurrence";

/// Place JSON edits. See [`super::locate_edits`].
pub(crate) fn locate_edits(
    text: &Text<'_>,
    edits: &[Edit<'_>],
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    let lines = text.contents();
    let mut view = FileView::new(lines);
    let mut placements = Vec::new();
    let mut appended: Option<(usize, String)> = None;
    let mut flat: Option<Flat> = None;
    for (index, edit) in edits.iter().enumerate() {
        match edit {
            Edit::Replace { old, new, all } => {
                // The flat copy of the file is made once, for the first `replace`.
                let flat = flat.get_or_insert_with(|| Flat::new(text));
                placements.extend(replace(flat, &mut view, index, old, new, *all, opts)?);
            }
            Edit::LineRange {
                start,
                end,
                expected,
                new_content,
            } => placements.push(line_range(
                lines,
                index,
                *start,
                *end,
                expected,
                new_content,
            )?),
            Edit::Insert { after, content } => {
                placements.push(insert(lines, index, *after, content)?)
            }
            // Appends all go after the last byte, in order: one placement for all of them.
            Edit::Append { content } => match &mut appended {
                Some((_, all)) => all.push_str(content),
                None => appended = Some((index, content.to_string())),
            },
        }
    }
    if let Some((index, content)) = appended {
        placements.extend(append(text, index, &content));
    }
    super::overlap::arrange(placements)
}

/// Split a string into lines at `\n` (a final `\n` ends the last line; `\r\n` counts as one).
fn split_lines(s: &str) -> Vec<&str> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    if s.is_empty() {
        return Vec::new();
    }
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

fn inserts<'a>(new: impl Iterator<Item = &'a [u8]>, start: usize, old_len: usize) -> Vec<Piece> {
    new.enumerate()
        .map(|(k, t)| Piece::Insert {
            text: t.to_vec(),
            replaces: (k < old_len).then_some(start + k),
        })
        .collect()
}

fn placement(index: usize, start: usize, old_len: usize, pieces: Vec<Piece>) -> Placement {
    Placement {
        hunk: index,
        start,
        old_len,
        level: Level::Exact,
        offset: None,
        already_applied: false,
        fuzz: Fuzz::default(),
        pieces,
        final_newline: None,
    }
}

/// The file as one string with `\n` line endings, and where each line starts in it.
struct Flat {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Flat {
    fn new(text: &Text<'_>) -> Flat {
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(text.len());
        for (i, content) in text.contents().iter().enumerate() {
            starts.push(bytes.len());
            bytes.extend_from_slice(content);
            if i + 1 < text.len() || text.ends_with_newline() {
                bytes.push(b'\n');
            }
        }
        Flat { bytes, starts }
    }

    /// The line holding byte `pos`.
    fn line_of(&self, pos: usize) -> usize {
        self.starts.partition_point(|&s| s <= pos).saturating_sub(1)
    }

    /// The byte after line `line` (its `\n` included).
    fn line_end(&self, line: usize) -> usize {
        self.starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.bytes.len())
    }

    /// Starts of `needle` (overlapping ones too unless `disjoint`).
    fn find_all(&self, needle: &[u8], disjoint: bool) -> Vec<usize> {
        let mut found = Vec::new();
        let (hay, Some(&first)) = (&self.bytes[..], needle.first()) else {
            return found;
        };
        let mut pos = 0;
        while pos + needle.len() <= hay.len() {
            let Some(i) = hay[pos..=hay.len() - needle.len()]
                .iter()
                .position(|&b| b == first)
            else {
                break;
            };
            let at = pos + i;
            if &hay[at..at + needle.len()] == needle {
                found.push(at);
                pos = at + if disjoint { needle.len() } else { 1 };
            } else {
                pos = at + 1;
            }
        }
        found
    }
}

fn replace(
    flat: &Flat,
    view: &mut FileView<'_>,
    index: usize,
    old: &str,
    new: &str,
    all: bool,
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    let old = old.replace("\r\n", "\n");
    let new = new.replace("\r\n", "\n");
    if !old.is_empty() {
        let found = flat.find_all(old.as_bytes(), all);
        match found.len() {
            0 => {}
            1 => return Ok(substring_placements(flat, &found, old.len(), &new, index)),
            _ if all => return Ok(substring_placements(flat, &found, old.len(), &new, index)),
            _ => {
                let lines: Vec<usize> = found.iter().map(|&p| flat.line_of(p)).collect();
                let first: Vec<&[u8]> = split_lines(&old).iter().map(|l| l.as_bytes()).collect();
                let what = "`old`";
                // Each occurrence alone, as the line_range edit that writes the same lines.
                let selects = |k: usize| {
                    let one = substring_placements(flat, &found[k..=k], old.len(), &new, index);
                    one.first().and_then(|p| line_range_edit(view.lines, p))
                };
                return Err(ambiguous_error(
                    (PatchPart::Edit, index),
                    what,
                    &first,
                    view.lines,
                    &lines,
                    Level::Exact,
                    selects,
                    REPLACE_WAYS_OUT,
                ));
            }
        }
    }
    replace_lines(view, index, &old, &new, all, opts)
}

/// Level-1 `replace`: each group of occurrences sharing lines becomes one placement whose
/// lines are rewritten whole (the text around the occurrences kept).
fn substring_placements(
    flat: &Flat,
    found: &[usize],
    old_len: usize,
    new: &str,
    index: usize,
) -> Vec<Placement> {
    let n = flat.starts.len();
    let mut out = Vec::new();
    let mut k = 0;
    while k < found.len() {
        let first = flat.line_of(found[k]);
        let mut written: Vec<u8> = Vec::new();
        let mut cur = flat.starts[first];
        let (mut last, mut end);
        loop {
            let (a, b) = (found[k], found[k] + old_len);
            written.extend_from_slice(&flat.bytes[cur..a]);
            written.extend_from_slice(new.as_bytes());
            cur = b;
            k += 1;
            last = flat.line_of(b - 1);
            end = flat.line_end(last);
            // A replacement that no longer ends its last line joins the next line.
            if cur == end && !written.is_empty() && !written.ends_with(b"\n") && last + 1 < n {
                last += 1;
                end = flat.line_end(last);
            }
            if k >= found.len() || found[k] >= end {
                break;
            }
        }
        written.extend_from_slice(&flat.bytes[cur..end]);
        let old_lines = last + 1 - first;
        let text = String::from_utf8_lossy(&written).into_owned();
        let new_lines = split_lines(&text);
        let mut p = placement(
            index,
            first,
            old_lines,
            inserts(new_lines.iter().map(|l| l.as_bytes()), first, old_lines),
        );
        if last + 1 == n && !written.is_empty() {
            p.final_newline = Some(written.ends_with(b"\n"));
        }
        out.push(p);
    }
    out
}

/// Levels 2–4 of `replace`: `old` as whole lines (without leading and trailing blank lines),
/// matched like a hunk's old side, file-wide; `new` re-based.
fn replace_lines(
    view: &mut FileView<'_>,
    index: usize,
    old: &str,
    new: &str,
    all: bool,
    opts: &LocateOptions,
) -> Result<Vec<Placement>, LocateError> {
    let (old_lines, lead, trail) = strip_blank(split_lines(old));
    let mut new_lines = split_lines(new);
    // Drop as many blank lines around `new` as were dropped around `old`.
    let drop_lead = new_lines
        .iter()
        .take(lead)
        .take_while(|l| l.trim().is_empty())
        .count();
    new_lines.drain(..drop_lead);
    for _ in 0..trail {
        if new_lines.last().is_some_and(|l| l.trim().is_empty()) {
            new_lines.pop();
        }
    }
    let expected: Vec<&[u8]> = old_lines.iter().map(|l| l.as_bytes()).collect();
    if !old_lines.is_empty() && !opts.bytes_only {
        let mut pat = Pattern::new(expected.clone());
        for &level in &Level::ALL[1..] {
            let found = view.all_matches(&mut pat, level, 0);
            let starts = match (found.len(), all) {
                (0, _) => continue,
                (1, _) => found,
                (_, true) => disjoint(found, pat.len()),
                (_, false) => {
                    let unit = (level >= Level::Whitespace)
                        .then(|| reindent::unit_of(view.lines.iter().copied()))
                        .flatten();
                    // A candidate whose `new` cannot be re-based there has no selector.
                    let places: Vec<Option<Placement>> = found
                        .iter()
                        .map(|&s| {
                            line_placement(view, index, s, &expected, &new_lines, level, unit).ok()
                        })
                        .collect();
                    let selects = |k: usize| {
                        places[k]
                            .as_ref()
                            .and_then(|p| line_range_edit(view.lines, p))
                    };
                    return Err(ambiguous_error(
                        (PatchPart::Edit, index),
                        "`old`",
                        &expected,
                        view.lines,
                        &found,
                        level,
                        selects,
                        REPLACE_WAYS_OUT,
                    ));
                }
            };
            // The file's indentation unit, once for every match (levels 3 and 4 re-base).
            let unit = (level >= Level::Whitespace)
                .then(|| reindent::unit_of(view.lines.iter().copied()))
                .flatten();
            return starts
                .into_iter()
                .map(|s| line_placement(view, index, s, &expected, &new_lines, level, unit))
                .collect();
        }
    }
    let nearest = diagnose::nearest(view, &expected, 0, None);
    let message = "`old` not found in the file (exactly, nor as whole lines with \
                   whitespace or punctuation differences)"
        .to_string();
    let below = nearest
        .as_ref()
        .map(|near| diagnose::comparison(&expected, near));
    Err(LocateError::ContextNotFound {
        unit: PatchPart::Edit,
        hunk: index,
        message,
        below,
        expected: old_lines.iter().map(|l| l.to_string()).collect(),
        nearest: nearest.map(Box::new),
        hint: "copy `old` exactly from the file (see the nearest text), or re-read the file"
            .to_string(),
    })
}

fn strip_blank(mut lines: Vec<&str>) -> (Vec<&str>, usize, usize) {
    let lead = lines.iter().take_while(|l| l.trim().is_empty()).count();
    lines.drain(..lead);
    let trail = lines
        .iter()
        .rev()
        .take_while(|l| l.trim().is_empty())
        .count();
    lines.truncate(lines.len() - trail);
    (lines, lead, trail)
}

/// Keep matches that do not overlap an earlier kept one.
fn disjoint(found: Vec<usize>, len: usize) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    for s in found {
        if kept.last().is_none_or(|&k| s >= k + len) {
            kept.push(s);
        }
    }
    kept
}

fn line_placement(
    view: &FileView<'_>,
    index: usize,
    s: usize,
    old: &[&[u8]],
    new: &[&str],
    level: Level,
    unit: Option<Unit>,
) -> Result<Placement, LocateError> {
    let m = old.len();
    let new_bytes: Vec<&[u8]> = new.iter().map(|l| l.as_bytes()).collect();
    let rebase = (level >= Level::Whitespace)
        .then(|| {
            let patch: Vec<&[u8]> = old.iter().chain(&new_bytes).copied().collect();
            Rebase::new(old, &view.lines[s..s + m], &patch, unit)
        })
        .flatten();
    let written = new_bytes
        .iter()
        .map(|l| match &rebase {
            Some(r) => r.apply(l),
            None => Ok(l.to_vec()),
        })
        .collect::<Result<Vec<Vec<u8>>, _>>()
        .map_err(|e| e.into_error((PatchPart::Edit, index), s, old))?;
    let mut p = placement(
        index,
        s,
        m,
        inserts(written.iter().map(Vec::as_slice), s, m),
    );
    p.level = level;
    Ok(p)
}

/// The `line_range` edit that writes what placement `p` (of a `replace`) writes, with an
/// `expected` that proves its lines (SPEC §4): the range itself, widened as `line_range`
/// widens it until it has enough non-blank lines. None when the file has too few. The
/// boundary adds the `path`.
fn line_range_edit(lines: &[&[u8]], p: &Placement) -> Option<serde_json::Value> {
    let (first, n) = (p.start, lines.len());
    let norm = |l: &[u8]| fold_quotes(&lossy(trim(l))).into_owned();
    let proof = (p.old_len.max(1)..=n).find_map(|k| {
        let (from, to) = if k > p.old_len {
            let to = (first + k).min(n);
            (to.saturating_sub(k).min(first), to)
        } else {
            (first, first + p.old_len)
        };
        let non_blank: Vec<String> = lines[from..to]
            .iter()
            .map(|l| norm(l))
            .filter(|l| !l.is_empty())
            .collect();
        let needed = if non_blank.iter().any(|l| l.chars().count() < 3) {
            4
        } else {
            3
        };
        (non_blank.len() >= needed).then_some((from, to))
    })?;
    let join = |texts: Vec<String>| -> String { texts.iter().map(|t| format!("{t}\n")).collect() };
    let expected = join(lines[proof.0..proof.1].iter().map(|l| lossy(l)).collect());
    let new_content = join(
        p.pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Insert { text, .. } => Some(lossy(text)),
                Piece::Keep(i) => lines.get(*i).map(|l| lossy(l)),
            })
            .collect(),
    );
    Some(serde_json::json!({
        "op": "line_range",
        "start_line": first + 1,
        "end_line": first + p.old_len,
        "expected": expected,
        "new_content": new_content,
    }))
}

fn mismatch(index: usize, message: String, lines: &[&[u8]], from: usize, to: usize) -> LocateError {
    LocateError::ExpectedMismatch {
        hunk: index,
        message,
        actual: diagnose::numbered(lines, from, to),
        hint: "re-read the lines and send them as `expected`, or use `replace`".to_string(),
    }
}

/// `line_range`: replace lines start..=end (1-based), proven by `expected`.
fn line_range(
    lines: &[&[u8]],
    index: usize,
    start: usize,
    end: usize,
    expected: &str,
    new_content: &str,
) -> Result<Placement, LocateError> {
    let n = lines.len();
    if start == 0 || end < start || end > n {
        let message =
            format!("line_range {start}-{end} is not a range of the file, which has {n} line(s)");
        let from = start.saturating_sub(1).min(n);
        return Err(mismatch(index, message, lines, from, end.min(n)));
    }
    let exp_lines = split_lines(expected);
    let norm = |l: &[u8]| fold_quotes(&lossy(trim(l))).into_owned();
    let non_blank: Vec<String> = exp_lines
        .iter()
        .map(|l| norm(l.as_bytes()))
        .filter(|l| !l.is_empty())
        .collect();
    let needed = if non_blank.iter().any(|l| l.chars().count() < 3) {
        4
    } else {
        3
    };
    if non_blank.len() < needed {
        let message = format!(
            "`expected` must have at least {needed} non-blank lines to prove lines \
             {start}-{end}; it has {}",
            non_blank.len()
        );
        return Err(mismatch(index, message, lines, start - 1, end));
    }
    // Widen the range to as many lines as `expected` has: downward, else upward at the end.
    let (mut from, mut to) = (start - 1, end);
    if to - from < exp_lines.len() {
        to = (from + exp_lines.len()).min(n);
        from = to.saturating_sub(exp_lines.len()).min(from);
    }
    let actual: std::collections::HashSet<String> =
        lines[from..to].iter().map(|l| norm(l)).collect();
    if let Some(missing) = non_blank.iter().find(|l| !actual.contains(*l)) {
        let message = format!(
            "`expected` does not match lines {}-{}: `{missing}` is not among them",
            from + 1,
            to
        );
        return Err(mismatch(index, message, lines, from, to));
    }
    let new = split_lines(new_content);
    let old_len = end - start + 1;
    Ok(placement(
        index,
        start - 1,
        old_len,
        inserts(new.iter().map(|l| l.as_bytes()), start - 1, old_len),
    ))
}

/// `insert`: `content` as new lines after line `after` (0: at the top).
fn insert(
    lines: &[&[u8]],
    index: usize,
    after: usize,
    content: &str,
) -> Result<Placement, LocateError> {
    let n = lines.len();
    if after > n {
        let message = format!("insert after line {after}: the file has only {n} line(s)");
        return Err(mismatch(index, message, lines, n.saturating_sub(3), n));
    }
    let new = split_lines(content);
    Ok(placement(
        index,
        after,
        0,
        inserts(new.iter().map(|l| l.as_bytes()), after, 0),
    ))
}

/// `append`: `content` after the last byte. Content not ending in a newline leaves the file
/// without one; a file without a final newline has its last line continued.
fn append(text: &Text<'_>, index: usize, content: &str) -> Option<Placement> {
    let content = content.replace("\r\n", "\n");
    if content.is_empty() {
        return None;
    }
    let n = text.len();
    let ends_in_newline = content.ends_with('\n');
    let (start, old_len, joined) = match text.contents().last() {
        Some(last) if !text.ends_with_newline() => {
            let mut joined = lossy(last);
            joined.push_str(&content);
            (n - 1, 1, joined)
        }
        _ => (n, 0, content),
    };
    let new = split_lines(&joined);
    let mut p = placement(
        index,
        start,
        old_len,
        inserts(new.iter().map(|l| l.as_bytes()), start, old_len),
    );
    p.final_newline = Some(ends_in_newline);
    Some(p)
}

/// The actual lines of an `expected_mismatch`, as a [`Nearest`] for the shared error shape.
pub(crate) fn actual_as_nearest(actual: &[NumberedLine]) -> Option<Nearest> {
    let first = actual.first()?;
    Some(Nearest {
        start_line: first.line,
        lines: actual.to_vec(),
        difference: None,
        similarity: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_like_the_spec() {
        assert_eq!(split_lines(""), Vec::<&str>::new());
        assert_eq!(split_lines("a\n"), vec!["a"]);
        assert_eq!(split_lines("a\nb"), vec!["a", "b"]);
        assert_eq!(split_lines("\n"), vec![""]);
        assert_eq!(split_lines("a\r\n\n"), vec!["a", ""]);
    }
}
