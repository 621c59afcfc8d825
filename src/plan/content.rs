//! Stage: plan (content). Pure helpers of the planner: the bytes of an added file, the
//! permission bits after a mode change, the report snippet, and the planner's own errors.
//! No I/O.

use crate::content::Content;
use crate::locate::{Level, Placement};
use crate::model::{Body, FilePatch, Hunk, LineKind, Mode};
use crate::report::Snippet;
use crate::text::{Text, BOM};
use crate::tree::Node;

use super::{BinaryWhy, PlanError};

/// Lines of context around the edited region in a report snippet.
const SNIPPET_CONTEXT: usize = 3;

/// The new file of an Add: its `+` lines, each ending in a newline unless the diff says
/// `\ No newline at end of file`; a symlink when the mode says so; binary data decoded.
pub(super) fn added_node(fp: &FilePatch<'_>, shown: &str) -> Result<Node, PlanError> {
    let bytes = match &fp.body {
        Body::BinaryWithoutData => {
            return Err(PlanError::Binary {
                path: shown.into(),
                why: BinaryWhy::AddedWithoutData,
            })
        }
        Body::Binary(b) => {
            crate::parse::binary::apply(b"", &b.forward).map_err(|why| PlanError::Binary {
                path: shown.into(),
                why: BinaryWhy::Undecodable(why.to_string()),
            })?
        }
        Body::Hunks(hunks) => added_bytes(hunks),
        Body::Edits(_) => Vec::new(),
    };
    let mode = fp.new_mode.unwrap_or(Mode::FILE);
    Ok(if mode.is_symlink() {
        let mut target = bytes;
        if target.last() == Some(&b'\n') {
            target.pop();
        }
        Node::Symlink { target }
    } else {
        Node::File {
            bytes: bytes.into(),
            mode: if mode.is_executable() { 0o755 } else { 0o644 },
        }
    })
}

pub(super) fn added_bytes(hunks: &[Hunk<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut no_newline = false;
    for h in hunks {
        for l in h.lines.iter().filter(|l| l.kind == LineKind::Insert) {
            out.extend_from_slice(&l.text);
            out.push(b'\n');
        }
        no_newline = h.new_no_newline;
    }
    if no_newline && out.last() == Some(&b'\n') {
        out.pop();
    }
    out
}

/// How many lines [`Text::parse`] finds in `bytes`, counted without splitting them (the
/// report's line counts of an added or deleted file).
pub(super) fn line_count(bytes: &[u8]) -> usize {
    let body = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let unended = body.last().is_some_and(|&b| b != b'\n');
    memchr::memchr_iter(b'\n', body).count() + usize::from(unended)
}

/// A git deletion diff's `-` lines must be the file's lines (endings aside).
pub(super) fn deletion_matches(bytes: &[u8], hunks: &[Hunk<'_>]) -> bool {
    let text = Text::parse(bytes);
    let file = text.contents();
    let mut deleted: Vec<&[u8]> = hunks.iter().flat_map(|h| h.old_lines()).collect();
    // A diff's line 1 carries the file's BOM (diff tools do not know about it); ours does not.
    if text.bom {
        if let Some(first) = deleted.first_mut() {
            *first = first.strip_prefix(BOM).unwrap_or(first);
        }
    }
    // A CRLF file's deletion keeps the diff's CRs (parse::unified); endings never count.
    fn no_cr(l: &[u8]) -> &[u8] {
        l.strip_suffix(b"\r").unwrap_or(l)
    }
    let same =
        file.len() == deleted.len() && file.iter().zip(&deleted).all(|(f, d)| no_cr(f) == no_cr(d));
    // A file holding only a BOM has no lines, but a diff shows the BOM as one.
    same || (bytes == BOM && deleted == [b""])
}

/// Hunks against a file that starts with a BOM: diff tools (and agents that read the raw
/// bytes) write the BOM as part of the file's first line, while [`Text`] keeps it apart (SPEC §5: "a BOM is never
/// part of line 1"). In a hunk at the top of the file (or without a line number), the first old-side line and the first
/// new-side line that start with the BOM lose it (one context line may be both; after an
/// insertion at the top it is no longer line 1 of the new side). Returns the hunks and whether
/// the diff removes the BOM (the old side has it, the new side does not); None when no hunk
/// at the top carries a BOM.
pub(super) fn without_bom<'a>(hunks: &[Hunk<'a>]) -> Option<(Vec<Hunk<'a>>, bool)> {
    let first_with_bom = |h: &Hunk<'_>, skip: LineKind| {
        h.lines
            .iter()
            .position(|l| l.kind != skip && l.text.starts_with(BOM))
    };
    let at_top = |h: &Hunk<'_>| matches!(h.old_start, None | Some(0 | 1)) || h.new_start == Some(1);
    let touches = |h: &Hunk<'_>| {
        at_top(h)
            && first_with_bom(h, LineKind::Insert)
                .or(first_with_bom(h, LineKind::Delete))
                .is_some()
    };
    if !hunks.iter().any(touches) {
        return None;
    }
    let mut drops_bom = false;
    let mut out = hunks.to_vec();
    for h in out.iter_mut().filter(|h| touches(h)) {
        let old = first_with_bom(h, LineKind::Insert);
        let new = first_with_bom(h, LineKind::Delete);
        drops_bom |= old.is_some() && new.is_none();
        for i in [old, new].into_iter().flatten() {
            if let Some(rest) = h.lines[i].text.strip_prefix(BOM) {
                h.lines[i].text = std::borrow::Cow::Owned(rest.to_vec());
            }
        }
    }
    Some((out, drops_bom))
}

/// Permission bits after a patch's mode change (only the executable bits move).
pub(super) fn changed_mode(mode: u32, fp: &FilePatch<'_>) -> u32 {
    let Some(new) = fp.new_mode else { return mode };
    if fp.old_mode == Some(new) || new.is_symlink() {
        return mode;
    }
    if new.is_executable() {
        mode | ((mode & 0o444) >> 2)
    } else {
        mode & !0o111
    }
}

pub(super) fn node_bytes(node: &Node) -> &[u8] {
    match node {
        Node::File { bytes, .. } => bytes,
        Node::Symlink { target } => target,
        _ => &[],
    }
}

/// The SHA-256 of a node's bytes (a file's content remembers it once taken).
pub(super) fn node_sha256(node: &Node) -> [u8; 32] {
    match node {
        Node::File { bytes, .. } => bytes.sha256(),
        other => crate::txn::sha256(node_bytes(other)),
    }
}

/// The most lines of the new file the edited region (first to last edited line) may span for a
/// report snippet: a snippet is for reading, and a whole-file one would cost a copy of the file.
pub(crate) const SNIPPET_MAX_LINES: usize = 200;

/// Where a placed hunk's new side stands in the new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    /// 0-based index of the hunk (or edit).
    pub hunk: usize,
    /// 0-based first line of its new side in the new file.
    pub start: usize,
    /// Lines of its new side.
    pub len: usize,
    pub already_applied: bool,
}

/// The spans of placements sorted by start, all made in the same file.
pub(super) fn spans(placements: &[Placement]) -> Vec<Span> {
    let mut drift: isize = 0;
    let mut out = Vec::with_capacity(placements.len());
    for p in placements {
        out.push(Span {
            hunk: p.hunk,
            start: (p.start as isize + drift).max(0) as usize,
            len: p.pieces.len(),
            already_applied: p.already_applied,
        });
        drift += p.pieces.len() as isize - p.old_len as isize;
    }
    out
}

/// The spans of placements made one after the other, each in the content the previous ones
/// left (SEARCH/REPLACE blocks): a later placement moves the spans that lie below what it
/// replaced.
pub(super) fn sequential_spans(placements: &[Placement]) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::with_capacity(placements.len());
    for p in placements {
        let delta = p.pieces.len() as isize - p.old_len as isize;
        for s in out.iter_mut().filter(|s| s.start >= p.start + p.old_len) {
            s.start = (s.start as isize + delta).max(0) as usize;
        }
        out.push(Span {
            hunk: p.hunk,
            start: p.start,
            len: p.pieces.len(),
            already_applied: p.already_applied,
        });
    }
    out
}

/// The edited region of the new file with ±3 lines, numbered as in the new file; `None` when
/// nothing was edited or the region spans more than [`SNIPPET_MAX_LINES`] lines.
pub(super) fn snippet(new: &Content, spans: &[Span]) -> Option<Snippet> {
    let mut region: Option<(usize, usize)> = None;
    for s in spans.iter().filter(|s| !s.already_applied) {
        let (lo, hi) = region.unwrap_or((s.start, s.start + s.len));
        region = Some((lo.min(s.start), hi.max(s.start + s.len)));
    }
    let (lo, hi) = region?;
    if hi - lo > SNIPPET_MAX_LINES {
        return None;
    }
    let from = lo.saturating_sub(SNIPPET_CONTEXT);
    let to = hi + SNIPPET_CONTEXT;
    Some(Snippet {
        start_line: from + 1,
        lines: line_range(new, from, to)?,
    })
}

/// Lines `from..to` (0-based, `to` clipped at the end) of `new` without their endings, as
/// `Text::parse` splits them, found without splitting the whole file (or joining a recipe).
fn line_range(new: &Content, from: usize, to: usize) -> Option<Vec<String>> {
    let body = line_bytes(new.pieces(), from, to)?;
    let body = body.as_slice();
    let body = match from {
        0 => body.strip_prefix(crate::text::BOM).unwrap_or(body),
        _ => body,
    };
    let lines = body.split_inclusive(|&b| b == b'\n').map(|line| {
        let content = match line.strip_suffix(b"\n") {
            Some(c) => c.strip_suffix(b"\r").unwrap_or(c),
            None => line,
        };
        String::from_utf8_lossy(content).into_owned()
    });
    Some(lines.collect())
}

/// The bytes of lines `from..to` (with their endings) of the bytes `pieces` make; `None`
/// when there is no line `from` (and `from` is not 0).
fn line_bytes<'a>(
    pieces: impl Iterator<Item = &'a [u8]>,
    from: usize,
    to: usize,
) -> Option<Vec<u8>> {
    let mut newlines = 0;
    let mut started = from == 0;
    let mut out = Vec::new();
    if started && to <= from {
        return Some(out);
    }
    for piece in pieces {
        let mut at = 0;
        while at < piece.len() {
            let next = memchr::memchr(b'\n', &piece[at..]).map(|i| at + i + 1);
            if started {
                let end = next.unwrap_or(piece.len());
                out.extend_from_slice(&piece[at..end]);
                at = end;
                if next.is_some() {
                    newlines += 1;
                    if newlines == to {
                        return Some(out);
                    }
                }
            } else {
                let Some(end) = next else { break };
                at = end;
                newlines += 1;
                if newlines == from {
                    if to <= from {
                        return Some(out);
                    }
                    started = true;
                }
            }
        }
    }
    started.then_some(out)
}

pub(super) fn level_words(level: Level) -> &'static str {
    match level {
        Level::Exact => "nothing",
        Level::TrailingWhitespace => "trailing whitespace",
        Level::Whitespace => "leading and trailing whitespace",
        Level::Unicode => "whitespace and Unicode punctuation",
    }
}

/// True when the diff's `index` line names the file's exact blob with a full-length id.
pub(super) fn full_blob_matches(fp: &FilePatch<'_>, bytes: &[u8]) -> bool {
    fp.blob_ids.as_ref().is_some_and(|ids| {
        matches!(ids.old.len(), 40 | 64)
            && crate::hash::blob_matches(&ids.old, bytes).is_some_and(|(ok, _)| ok)
    })
}

/// Submodules (mode 160000) are never changed.
pub(super) fn refuse_gitlinks(fp: &FilePatch<'_>) -> Result<(), PlanError> {
    if [fp.old_mode, fp.new_mode]
        .into_iter()
        .flatten()
        .any(Mode::is_gitlink)
    {
        return Err(PlanError::Gitlink {
            path: fp.path().to_string(),
        });
    }
    Ok(())
}

/// The diff says the path is a symlink (mode 120000): its content is the link target.
pub(super) fn is_link_patch(fp: &FilePatch<'_>) -> bool {
    [fp.old_mode, fp.new_mode]
        .into_iter()
        .flatten()
        .any(Mode::is_symlink)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `line_count` is the number of lines `Text::parse` splits.
        #[test]
        fn line_count_matches_text_parse(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(0xEF), Just(0xBB), Just(0xBF)],
                0..40,
            ),
        ) {
            prop_assert_eq!(line_count(&bytes), Text::parse(&bytes).len());
        }

        /// `line_range` agrees with `Text::parse` on every range of every file, whether the
        /// file is one buffer or a recipe of several pieces.
        #[test]
        fn line_range_matches_text_parse(
            bytes in proptest::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b'a'), Just(0xEF), Just(0xBB), Just(0xBF)],
                0..40,
            ),
            from in 0usize..12,
            extra in 1usize..12,
            cuts in proptest::collection::vec(0usize..40, 0..4),
        ) {
            let text = Text::parse(&bytes);
            let to = from + extra;
            let want: Option<Vec<String>> = text
                .contents()
                .get(from..to.min(text.len()))
                .map(|ls| ls.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut pieces = Vec::new();
            let mut at = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                pieces.push(&bytes[at..cut]);
                at = cut;
            }
            prop_assert_eq!(
                line_bytes(pieces.into_iter(), from, to),
                line_bytes(std::iter::once(bytes.as_slice()), from, to)
            );
            let got = line_range(&Content::from(bytes.clone()), from, to);
            if from < text.len() || from == 0 {
                prop_assert_eq!(got, want);
            } else {
                prop_assert!(got.is_none() || got == Some(Vec::new()));
            }
        }
    }
}
