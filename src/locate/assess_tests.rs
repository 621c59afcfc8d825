//! Stage: locate — tests that the one-pass assessment of which hunks would apply gives the
//! same answer as locating a growing trial list once per hunk (its definition).
//!
//! Test-only; must not be used by the library.

use proptest::prelude::*;

use super::hunks::{assess_hunks, locate_hunks};
use super::LocateOptions;
use crate::error::ErrorCode;
use crate::model::{Format, Hunk, Line, LineKind};

/// The definition: hunk `i` applies when the applicable hunks before it and it place.
fn by_trials(lines: &[&[u8]], hunks: &[Hunk<'_>], format: Format) -> Vec<Result<(), ErrorCode>> {
    let opts = LocateOptions::default();
    let mut accepted: Vec<Hunk<'_>> = Vec::new();
    let mut out = Vec::new();
    for h in hunks {
        let mut trial = accepted.clone();
        trial.push(h.clone());
        let r = locate_hunks(lines, &trial, format, &opts);
        if r.is_ok() {
            accepted = trial;
        }
        out.push(r.map(|_| ()).map_err(|e| e.code()));
    }
    out
}

fn hunk_strategy() -> impl Strategy<Value = Hunk<'static>> {
    let line = (0u8..3, 0u8..4).prop_map(|(kind, letter)| {
        let kind = match kind {
            0 => LineKind::Context,
            1 => LineKind::Delete,
            _ => LineKind::Insert,
        };
        Line::new(kind, vec![b'a' + letter])
    });
    (
        prop::collection::vec(line, 1..5),
        prop::option::of(1usize..12),
    )
        .prop_map(|(lines, start)| Hunk {
            old_start: start,
            lines,
            ..Hunk::default()
        })
}

proptest! {
    #[test]
    fn assessment_matches_trial_lists(
        file in prop::collection::vec(0u8..4, 0..14),
        hunks in prop::collection::vec(hunk_strategy(), 1..7),
        unified in any::<bool>(),
    ) {
        let text: Vec<Vec<u8>> = file.iter().map(|b| vec![b'a' + b]).collect();
        let lines: Vec<&[u8]> = text.iter().map(Vec::as_slice).collect();
        let format = if unified { Format::Unified } else { Format::Agent };
        let got = assess_hunks(&lines, &hunks, format, &LocateOptions::default());
        prop_assert_eq!(got, by_trials(&lines, &hunks, format));
    }
}

#[test]
fn shared_context_and_overlaps_are_judged_as_by_trials() {
    let text: Vec<&[u8]> = vec![b"a", b"b", b"c", b"d", b"e"];
    let h = |spec: &[(LineKind, &'static [u8])]| Hunk {
        lines: spec
            .iter()
            .map(|&(k, t)| Line::new(k, t.to_vec()))
            .collect(),
        ..Hunk::default()
    };
    use LineKind::{Context as C, Delete as D, Insert as I};
    let hunks = vec![
        h(&[(C, b"a"), (D, b"b"), (I, b"B"), (C, b"c")]),
        h(&[(C, b"c"), (D, b"d"), (I, b"D"), (C, b"e")]),
        h(&[(D, b"b"), (D, b"c")]),
        h(&[(C, b"x"), (D, b"e")]),
    ];
    for format in [Format::Agent, Format::Unified] {
        let got = assess_hunks(&text, &hunks, format, &LocateOptions::default());
        assert_eq!(got, by_trials(&text, &hunks, format));
        assert!(got[0].is_ok() && got[1].is_ok() && got[2].is_err() && got[3].is_err());
    }
}
