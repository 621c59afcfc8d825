//! Fuzz the locator and splicer: any file bytes and any hunks (or JSON edits) must give
//! placements that are sorted, inside the file and not overlapping, and bytes from the
//! splicer — or a refusal that converts to an error — never a panic.
//!
//! Input: one option byte, then the file, a NUL byte, then the hunks in a small notation,
//! one entry per line: ` x` / `-x` / `+x`, `@@ -N[,M]` (hint), `@@ TEXT` (anchor), `@@` (a new
//! hunk), `*** End of File`.
#![no_main]

use apply_patch::locate::{locate_edits, locate_hunks, LocateOptions, Piece, Placement};
use apply_patch::model::Edit;
use apply_patch::splice::splice;
use apply_patch::text::Text;
use apply_patch::{Format, Hunk, Line, LineKind};
use libfuzzer_sys::fuzz_target;

fn hunks(spec: &[u8]) -> Vec<Hunk<'_>> {
    let mut out = vec![Hunk::default()];
    for l in spec.split(|&b| b == b'\n') {
        let h = out
            .last_mut()
            .expect("out starts with one hunk and only grows");
        if l == b"@@" {
            out.push(Hunk::default());
        } else if let Some(nums) = l.strip_prefix(b"@@ -") {
            let nums = String::from_utf8_lossy(nums);
            let (start, count) = nums.split_once(',').unwrap_or((&nums, ""));
            h.old_start = start.parse().ok();
            h.old_count = count.parse().ok();
        } else if let Some(anchor) = l.strip_prefix(b"@@ ") {
            h.anchors.push(anchor.into());
        } else if l == b"*** End of File" {
            h.end_of_file = true;
        } else if let Some((&first, text)) = l.split_first() {
            let kind = match first {
                b'-' => LineKind::Delete,
                b'+' => LineKind::Insert,
                _ => LineKind::Context,
            };
            h.lines.push(Line::new(kind, text));
        }
    }
    out
}

fn check(n: usize, placed: &[Placement]) {
    let mut end = 0;
    for p in placed {
        assert!(
            p.start + p.old_len <= n,
            "a placement past the end of the file"
        );
        for piece in &p.pieces {
            if let Piece::Keep(i) = piece {
                assert!(
                    *i >= p.start && *i < p.start + p.old_len,
                    "a kept line outside"
                );
            }
        }
        if !p.already_applied {
            assert!(p.start >= end, "overlapping placements");
            end = p.start + p.old_len;
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (file, spec) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &[][..]),
    };
    let opts = LocateOptions::default()
        .with_window(usize::from(flags & 0x1f))
        .with_unidiff_zero(flags & 0x20 != 0)
        .with_bytes_only(flags & 0x40 != 0);
    let format = if flags & 0x80 != 0 {
        Format::Unified
    } else {
        Format::Agent
    };
    let text = Text::parse(file);
    let lines = text.contents();
    match locate_hunks(&lines, &hunks(spec), format, &opts) {
        Ok(placed) => {
            check(lines.len(), &placed);
            let _ = splice(&text, &placed);
        }
        Err(err) => {
            let _ = err.into_error("fuzz.txt");
        }
    }
    let (old, new) = match std::str::from_utf8(spec) {
        Ok(s) => s.split_once('\u{1}').unwrap_or((s, "")),
        Err(_) => return,
    };
    let edits = [
        Edit::Replace {
            old: old.into(),
            new: new.into(),
            all: flags & 1 != 0,
        },
        Edit::LineRange {
            start: usize::from(flags >> 4),
            end: usize::from(flags >> 2),
            expected: old.into(),
            new_content: new.into(),
        },
        Edit::Insert {
            after: usize::from(flags & 7),
            content: new.into(),
        },
        Edit::Append {
            content: new.into(),
        },
    ];
    for k in 0..edits.len() {
        match locate_edits(&text, &edits[k..=k], &opts) {
            Ok(placed) => {
                check(lines.len(), &placed);
                let _ = splice(&text, &placed);
            }
            Err(err) => {
                let _ = err.into_error("fuzz.txt");
            }
        }
    }
});
