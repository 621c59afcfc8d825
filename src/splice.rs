//! Stage: plan (bytes). Turns a file's [`Text`] and the placements of its hunks into the new
//! bytes, keeping every byte outside the edited lines (SPEC §6): untouched lines keep their
//! own endings, an inserted line takes the ending of the line it replaces, else of the line
//! above, else of the line below, else LF; the BOM and the final-newline state are kept unless
//! a placement decides the latter.
//!
//! Pure; no I/O.

use crate::locate::{Piece, Placement};
use crate::text::{Ending, Text, BOM};

/// Build the new content of a file. `placements` must be sorted by `start` and must not
/// overlap (the locator guarantees both; pure insertions at one point keep their order).
pub fn splice(text: &Text<'_>, placements: &[Placement]) -> Vec<u8> {
    let lines = &text.lines;
    // (content, ending) of the result; `Ending::None` here means "not decided yet".
    let mut out: Vec<(&[u8], Ending)> = Vec::with_capacity(lines.len());
    let mut cursor = 0;
    let mut final_newline = text.ends_with_newline();
    for p in placements {
        let start = p.start.min(lines.len());
        for line in &lines[cursor.min(start)..start] {
            out.push((line.content, line.ending));
        }
        if p.already_applied {
            cursor = cursor.max(start);
            continue;
        }
        let below = lines[(start + p.old_len).min(lines.len())..]
            .iter()
            .map(|l| l.ending)
            .find(|e| *e != Ending::None);
        // The ending of the next kept line with one, for each piece: "the line below" an
        // inserted line is the next line of the result, which may lie inside the hunk.
        let mut next_kept = vec![below; p.pieces.len()];
        let mut seen = below;
        for (k, piece) in p.pieces.iter().enumerate().rev() {
            next_kept[k] = seen;
            if let Piece::Keep(i) = piece {
                if let Some(e) = lines
                    .get(*i)
                    .map(|l| l.ending)
                    .filter(|e| *e != Ending::None)
                {
                    seen = Some(e);
                }
            }
        }
        for (k, piece) in p.pieces.iter().enumerate() {
            match piece {
                Piece::Keep(i) => {
                    if let Some(line) = lines.get(*i) {
                        out.push((line.content, line.ending));
                    }
                }
                Piece::Insert {
                    text: new,
                    replaces,
                } => {
                    let replaced = replaces
                        .and_then(|i| lines.get(i))
                        .map(|l| l.ending)
                        .filter(|e| *e != Ending::None);
                    let above = out.last().map(|l| l.1).filter(|e| *e != Ending::None);
                    let ending = replaced.or(above).or(next_kept[k]).unwrap_or(Ending::Lf);
                    out.push((new.as_slice(), ending));
                }
            }
        }
        if let Some(decided) = p.final_newline {
            final_newline = decided;
        }
        cursor = start + p.old_len;
    }
    for line in lines.get(cursor..).unwrap_or(&[]) {
        out.push((line.content, line.ending));
    }
    assemble(text.bom, &out, final_newline, text.dominant_ending())
}

/// Join lines, giving every line but the last a real ending (a line that lost its place as
/// the last one takes the ending of the line above, else the file's dominant one) and the
/// last one an ending exactly when `final_newline`.
fn assemble(bom: bool, out: &[(&[u8], Ending)], final_newline: bool, dominant: Ending) -> Vec<u8> {
    let size: usize = out.iter().map(|(c, _)| c.len() + 2).sum();
    let mut bytes = Vec::with_capacity(size + BOM.len());
    if bom {
        bytes.extend_from_slice(BOM);
    }
    let mut previous = None;
    for (i, (content, ending)) in out.iter().enumerate() {
        bytes.extend_from_slice(content);
        let real = match ending {
            Ending::None => previous.unwrap_or(dominant),
            e => *e,
        };
        let is_last = i + 1 == out.len();
        if !is_last || final_newline {
            bytes.extend_from_slice(real.as_bytes());
        }
        previous = Some(real);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::Level;

    fn placement(start: usize, old_len: usize, pieces: Vec<Piece>) -> Placement {
        Placement {
            hunk: 0,
            start,
            old_len,
            level: Level::Exact,
            offset: None,
            already_applied: false,
            pieces,
            final_newline: None,
        }
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
        assert_eq!(splice(&text, &[p]), b"a\nB\r\nc\n");
    }

    #[test]
    fn pure_insert_takes_line_above_then_below() {
        let text = Text::parse(b"a\r\nb\n");
        let p = placement(1, 0, vec![insert("x", None)]);
        assert_eq!(splice(&text, &[p]), b"a\r\nx\r\nb\n");
        let top = placement(0, 0, vec![insert("x", None)]);
        assert_eq!(splice(&text, &[top]), b"x\r\na\r\nb\n");
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
        assert_eq!(splice(&text, &[p]), b"}\r\n\r\n}\r\n");
    }

    #[test]
    fn missing_final_newline_is_kept() {
        let text = Text::parse(b"a\r\nb");
        let p = placement(2, 0, vec![insert("c", None)]);
        assert_eq!(splice(&text, &[p]), b"a\r\nb\r\nc");
    }

    #[test]
    fn placement_can_decide_final_newline() {
        let text = Text::parse(b"a\nb");
        let mut p = placement(1, 1, vec![insert("b", Some(1))]);
        p.final_newline = Some(true);
        assert_eq!(splice(&text, &[p]), b"a\nb\n");
    }

    #[test]
    fn bom_and_untouched_lines_survive() {
        let text = Text::parse(b"\xEF\xBB\xBFkeep\r\nold\nkeep2");
        let p = placement(1, 1, vec![Piece::Keep(1), insert("new", None)]);
        assert_eq!(splice(&text, &[p]), b"\xEF\xBB\xBFkeep\r\nold\nnew\nkeep2");
    }

    #[test]
    fn deleting_everything_leaves_bom_only() {
        let text = Text::parse(b"\xEF\xBB\xBFa\n");
        let p = placement(0, 1, vec![]);
        assert_eq!(splice(&text, &[p]), BOM);
    }
}
