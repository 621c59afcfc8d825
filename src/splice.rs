//! Stage: plan (bytes). Turns a file's [`Text`] and the placements of its hunks into the new
//! bytes, keeping every byte outside the edited lines (SPEC §6): untouched lines keep their
//! own endings, an inserted line takes the ending of the line it replaces, else of the line
//! above, else of the line below, else LF; the BOM and the final-newline state are kept unless
//! a placement decides the latter.
//!
//! Pure; no I/O.

use crate::content::{Recorder, Runs};
use crate::locate::{Piece, Placement};
use crate::text::{Ending, Text, BOM};

/// Build the new content of a file. `placements` must be sorted by `start` and must not
/// overlap (the locator guarantees both; pure insertions at one point keep their order).
///
/// Streams straight into the output buffer, sized up front, so a large file costs its input
/// and its output and nothing per line in between.
pub fn splice(text: &Text<'_>, placements: &[Placement]) -> Vec<u8> {
    let capacity = output_size(text, placements);
    splice_into(text, placements, Vec::with_capacity(capacity))
}

/// What [`splice`] builds, as a recipe of `base` (the bytes `text` was parsed from):
/// untouched runs of the file stay references to it, so a large file's new content costs
/// the inserted bytes, not a second copy of the file (see
/// `Content::spliced`).
pub(crate) fn splice_runs(base: &[u8], text: &Text<'_>, placements: &[Placement]) -> Runs {
    splice_into(text, placements, Recorder::new(base)).finish()
}

/// Where the spliced bytes go.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Sink for Recorder<'_> {
    fn put(&mut self, bytes: &[u8]) {
        Recorder::put(self, bytes);
    }
}

fn splice_into<S: Sink>(text: &Text<'_>, placements: &[Placement], sink: S) -> S {
    let (lines, endings) = (text.contents(), text.endings());
    let n = lines.len();
    let mut out = Writer::new(text, sink);
    let mut cursor = 0;
    let mut final_newline = text.ends_with_newline();
    for p in placements {
        let start = p.start.min(n);
        out.push_run(cursor.min(start), start);
        if p.already_applied {
            cursor = cursor.max(start);
            continue;
        }
        let after = endings[(start + p.old_len).min(n)..]
            .iter()
            .copied()
            .find(|e| *e != Ending::None);
        let mut below = Below::new(after);
        for (k, piece) in p.pieces.iter().enumerate() {
            match piece {
                Piece::Keep(i) => {
                    if let Some(line) = text.get(*i) {
                        out.push(line.content, line.ending);
                    }
                }
                Piece::Insert {
                    text: new,
                    replaces,
                } => {
                    let replaced = replaces
                        .and_then(|i| endings.get(i).copied())
                        .filter(|e| *e != Ending::None);
                    let above = out.last_ending.filter(|e| *e != Ending::None);
                    let ending = replaced
                        .or(above)
                        .or_else(|| below.at(k, &p.pieces, endings))
                        .unwrap_or(Ending::Lf);
                    out.push(new.as_slice(), ending);
                }
            }
        }
        if let Some(decided) = p.final_newline {
            final_newline = decided;
        }
        cursor = cursor.max(start + p.old_len);
    }
    out.push_run(cursor.min(n), n);
    out.finish(final_newline)
}

/// "The line below" an inserted line (SPEC §6): the next line of the result that comes from
/// the file — a later `Keep` piece of the same hunk, else the first line after the hunk's old
/// region — skipping lines without an ending. Asked only when neither the replaced line nor
/// the line above gives an ending, and scanned forward once per hunk, so a long run of
/// insertions stays linear.
struct Below {
    /// Index of the piece the last scan stopped at (0: not scanned yet; a scan for piece
    /// `k` always stops after `k`).
    at: usize,
    /// The ending of the `Keep` piece at `at`, None when no later `Keep` has one.
    found: Option<Ending>,
    /// The ending of the first line after the old region that has one.
    after: Option<Ending>,
}

impl Below {
    fn new(after: Option<Ending>) -> Self {
        Below {
            at: 0,
            found: None,
            after,
        }
    }

    /// The ending of the line below piece `k`.
    fn at(&mut self, k: usize, pieces: &[Piece], endings: &[Ending]) -> Option<Ending> {
        if self.at <= k {
            self.found = None;
            self.at = pieces.len();
            for (j, piece) in pieces.iter().enumerate().skip(k + 1) {
                let ending = match piece {
                    Piece::Keep(i) => endings.get(*i).copied(),
                    Piece::Insert { .. } => None,
                };
                if let Some(e) = ending.filter(|e| *e != Ending::None) {
                    (self.at, self.found) = (j, Some(e));
                    break;
                }
            }
        }
        self.found.or(self.after)
    }
}

/// An upper bound of the result's size: the file plus every inserted line with a CRLF.
fn output_size(text: &Text<'_>, placements: &[Placement]) -> usize {
    let file = text.span(0, text.len()).len();
    let inserted: usize = placements
        .iter()
        .flat_map(|p| &p.pieces)
        .map(|piece| match piece {
            Piece::Insert { text, .. } => text.len() + 2,
            Piece::Keep(_) => 0,
        })
        .sum();
    // A last line that gains an ending, and the BOM.
    file + inserted + 2 + BOM.len()
}

/// Writes lines one behind: a line's ending is only known once it is known whether it is
/// the last one.
struct Writer<'t, 'x, S> {
    text: &'x Text<'t>,
    out: S,
    /// The line pushed last, not written yet; `Ending::None` means "not decided yet".
    pending: Option<(&'x [u8], Ending)>,
    /// The ending recorded for the line pushed last (the "line above" of SPEC §6).
    last_ending: Option<Ending>,
    /// The real ending of the last written line.
    previous: Option<Ending>,
}

impl<'t, 'x, S: Sink> Writer<'t, 'x, S> {
    fn new(text: &'x Text<'t>, mut out: S) -> Self {
        if text.bom {
            out.put(BOM);
        }
        Writer {
            text,
            out,
            pending: None,
            last_ending: None,
            previous: None,
        }
    }

    fn push(&mut self, mut content: &'x [u8], ending: Ending) {
        // The file's BOM is written once, before line 1: a BOM that a patch line carries
        // into line 1 (a diff shows it there) is not written a second time.
        if self.text.bom && self.previous.is_none() && self.pending.is_none() {
            content = content.strip_prefix(BOM).unwrap_or(content);
        }
        if let Some((c, e)) = self.pending.take() {
            self.write(c, e, true);
        }
        self.pending = Some((content, ending));
        self.last_ending = Some(ending);
    }

    /// Untouched lines `from..to`, in bulk: all but the last of them are followed by another
    /// line, so their own endings are final (only a file's last line lacks one) and they are
    /// copied as the one slice of the file they are.
    fn push_run(&mut self, from: usize, to: usize) {
        if from >= to {
            return;
        }
        if to - from > 1 {
            if let Some((c, e)) = self.pending.take() {
                self.write(c, e, true);
            }
            self.out.put(self.text.span(from, to - 1));
            self.previous = self.text.endings().get(to - 2).copied();
        }
        if let Some(last) = self.text.get(to - 1) {
            self.push(last.content, last.ending);
        }
    }

    /// Every line but the last gets a real ending (a line that lost its place as the last
    /// one takes the ending of the line above, else the file's dominant one).
    fn write(&mut self, content: &[u8], ending: Ending, with_ending: bool) {
        self.out.put(content);
        let real = match ending {
            Ending::None => self.previous.unwrap_or_else(|| self.text.dominant_ending()),
            e => e,
        };
        if with_ending {
            self.out.put(real.as_bytes());
        }
        self.previous = Some(real);
    }

    /// The last line ends in a newline exactly when `final_newline`.
    fn finish(mut self, final_newline: bool) -> S {
        if let Some((c, e)) = self.pending.take() {
            self.write(c, e, final_newline);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::Content;
    use crate::locate::Level;

    fn placement(start: usize, old_len: usize, pieces: Vec<Piece>) -> Placement {
        Placement {
            hunk: 0,
            start,
            old_len,
            level: Level::Exact,
            offset: None,
            already_applied: false,
            fuzz: crate::locate::Fuzz::default(),
            pieces,
            final_newline: None,
        }
    }

    /// [`splice`], checked against the recipe [`splice_runs`] records of the same input.
    fn spliced(text: &Text<'_>, placements: &[Placement]) -> Vec<u8> {
        let bytes = splice(text, placements);
        let base = text.span(0, text.len());
        let runs = splice_runs(base, text, placements);
        let recipe = Content::spliced(Content::from(base), runs);
        assert_eq!(recipe.sha256(), crate::hash::sha256(&bytes));
        assert_eq!(recipe.as_slice(), bytes.as_slice());
        bytes
    }

    fn insert(text: &str, replaces: Option<usize>) -> Piece {
        Piece::Insert {
            text: text.as_bytes().to_vec(),
            replaces,
        }
    }

    #[test]
    fn replaced_line_gives_its_ending() {
        let text = Text::parse(b"a\nb\r\nc\n");
        let p = placement(1, 1, vec![insert("B", Some(1))]);
        assert_eq!(spliced(&text, &[p]), b"a\nB\r\nc\n");
    }

    #[test]
    fn pure_insert_takes_line_above_then_below() {
        let text = Text::parse(b"a\r\nb\n");
        let p = placement(1, 0, vec![insert("x", None)]);
        assert_eq!(spliced(&text, &[p]), b"a\r\nx\r\nb\n");
        let top = placement(0, 0, vec![insert("x", None)]);
        assert_eq!(spliced(&text, &[top]), b"x\r\na\r\nb\n");
    }

    #[test]
    fn insert_at_top_of_a_whole_file_hunk_takes_the_kept_line_below() {
        // Found by the harden property test: the hunk covers the whole CRLF file, so there is
        // no line after it; the line below the inserted one is the kept line 1.
        let text = Text::parse(b"\r\n}\r\n}\r\n");
        let p = placement(
            0,
            3,
            vec![insert("}", None), Piece::Keep(0), Piece::Keep(2)],
        );
        assert_eq!(spliced(&text, &[p]), b"}\r\n\r\n}\r\n");
    }

    #[test]
    fn an_insert_at_the_top_takes_the_ending_of_a_kept_line_below() {
        // `@@ -1 +1,2 @@` / `+a` / ` ` on a CRLF file holding one empty line.
        let text = Text::parse(b"\r\n");
        let p = placement(0, 1, vec![insert("a", None), Piece::Keep(0)]);
        assert_eq!(spliced(&text, &[p]), b"a\r\n\r\n");
        // Inserted lines before the kept one all take its ending; the lines after the hunk
        // come only after the hunk's own kept lines.
        let text = Text::parse(b"k\r\nz\n");
        let p = placement(
            0,
            1,
            vec![insert("a", None), insert("b", None), Piece::Keep(0)],
        );
        assert_eq!(spliced(&text, &[p]), b"a\r\nb\r\nk\r\nz\n");
        // No kept line below in the hunk: the first line after it.
        let p = placement(0, 1, vec![insert("a", None)]);
        assert_eq!(spliced(&text, &[p]), b"a\nz\n");
    }

    #[test]
    fn missing_final_newline_is_kept() {
        let text = Text::parse(b"a\r\nb");
        let p = placement(2, 0, vec![insert("c", None)]);
        assert_eq!(spliced(&text, &[p]), b"a\r\nb\r\nc");
    }

    #[test]
    fn placement_can_decide_final_newline() {
        let text = Text::parse(b"a\nb");
        let mut p = placement(1, 1, vec![insert("b", Some(1))]);
        p.final_newline = Some(true);
        assert_eq!(spliced(&text, &[p]), b"a\nb\n");
    }

    #[test]
    fn bom_and_untouched_lines_survive() {
        let text = Text::parse(b"\xEF\xBB\xBFkeep\r\nold\nkeep2");
        let p = placement(1, 1, vec![Piece::Keep(1), insert("new", None)]);
        assert_eq!(spliced(&text, &[p]), b"\xEF\xBB\xBFkeep\r\nold\nnew\nkeep2");
    }

    #[test]
    fn a_bom_is_written_once() {
        let text = Text::parse(b"\xEF\xBB\xBFa\nb\n");
        let p = placement(0, 1, vec![insert("\u{FEFF}x", Some(0))]);
        assert_eq!(spliced(&text, &[p]), b"\xEF\xBB\xBFx\nb\n");
    }

    #[test]
    fn deleting_everything_leaves_bom_only() {
        let text = Text::parse(b"\xEF\xBB\xBFa\n");
        let p = placement(0, 1, vec![]);
        assert_eq!(spliced(&text, &[p]), BOM);
    }
}
