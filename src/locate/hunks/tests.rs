//! Unit tests of the hunk locator (`super`).

use super::*;
use crate::model::{Format, Line};
use crate::text::Text;

/// A hunk from lines written as in a patch: " ctx", "-del", "+ins" (also used by the fuzz
/// tests).
pub(super) fn hunk(spec: &str) -> Hunk<'static> {
    let lines = spec
        .lines()
        .map(|l| {
            let (kind, text) = match l.split_at(1) {
                ("-", t) => (LineKind::Delete, t),
                ("+", t) => (LineKind::Insert, t),
                (_, t) => (LineKind::Context, t),
            };
            Line::new(kind, t_owned(text))
        })
        .collect();
    Hunk {
        lines,
        ..Hunk::default()
    }
}

fn t_owned(t: &str) -> Vec<u8> {
    t.as_bytes().to_vec()
}

fn apply(file: &str, hunks: &[Hunk<'_>], format: Format) -> Result<String, LocateError> {
    let text = Text::parse(file.as_bytes());
    let lines = text.contents();
    let placed = locate_hunks(lines, hunks, format, &LocateOptions::default())?;
    Ok(String::from_utf8(crate::splice::splice(&text, &placed)).expect("utf-8 in, utf-8 out"))
}

#[test]
fn first_agent_hunk_without_hint_needs_file_wide_uniqueness() {
    let file = "a\nx\nb\nx\n";
    let err = apply(file, &[hunk("-x\n+y")], Format::Agent).expect_err("two places");
    assert!(matches!(err, LocateError::AmbiguousMatch { .. }));
    let ok = apply(file, &[hunk(" b\n-x\n+y")], Format::Agent).expect("unique");
    assert_eq!(ok, "a\nx\nb\ny\n");
}

#[test]
fn a_second_agent_hunk_without_numbers_must_be_unique_below_the_first() {
    // "The line after the previous hunk" is a hint nobody wrote: it opens no window (SPEC §5
    // "Trust in line numbers"), so the `x` right after the first hunk does not win.
    let mut file = String::from("start\nx\n");
    file.push_str(&"filler\n".repeat(30));
    file.push_str("x\n");
    let hunks = [hunk("-start\n+begin"), hunk("-x\n+y")];
    let err = apply(&file, &hunks, Format::Agent).expect_err("x twice below the first hunk");
    assert!(
        matches!(err, LocateError::AmbiguousMatch { hunk: 1, .. }),
        "{err}"
    );
    // Written line numbers still open a window around them.
    let mut numbered = hunk("-x\n+y");
    numbered.old_start = Some(2);
    let got = apply(&file, &[hunk("-start\n+begin"), numbered], Format::Agent).expect("near 2");
    assert!(got.starts_with("begin\ny\nfiller\n"), "{got}");
}

#[test]
fn explicit_hint_and_drift() {
    let file: String = (1..=100).map(|i| format!("l{}\n", i % 10)).collect();
    // Line 25 is "l5", as are 5, 15, 35…: the hint picks line 25, even 2 lines off.
    // A line of context below: without one, a unified hunk is pinned to the end of the file.
    let mut h = hunk("-l5\n+five\n l6");
    h.old_start = Some(27);
    h.old_count = Some(2);
    let text = Text::parse(file.as_bytes());
    let lines = text.contents();
    let opts = LocateOptions {
        window: 5,
        ..LocateOptions::default()
    };
    let placed = locate_hunks(lines, &[h.clone()], Format::Unified, &opts).expect("one l5 near");
    assert_eq!((placed[0].start, placed[0].offset), (24, Some(-2)));
    // With the default window of 20, lines 15, 25 and 35 are all near: ambiguous.
    let wide = locate_hunks(lines, &[h], Format::Unified, &LocateOptions::default());
    assert!(matches!(wide, Err(LocateError::AmbiguousMatch { .. })));
}

#[test]
fn anchors_narrow_step_by_step() {
    let file = "impl A {\n  fn f() {\n    x();\n  }\n}\nimpl B {\n  fn f() {\n    x();\n  }\n}\n";
    let mut h = hunk("-    x();\n+    y();");
    h.anchors = vec![
        b"impl B {".as_slice().into(),
        b"  fn f() {".as_slice().into(),
    ];
    let got = apply(file, &[h], Format::Agent).expect("anchored");
    assert!(
        got.ends_with("impl B {\n  fn f() {\n    y();\n  }\n}\n"),
        "{got}"
    );
    let mut missing = hunk("-    x();\n+    y();");
    missing.anchors = vec![b"impl C {".as_slice().into()];
    let err = apply(file, &[missing], Format::Agent).expect_err("no such anchor");
    assert!(
        err.to_string().contains("anchor `impl C {` not found"),
        "{err}"
    );
}

#[test]
fn end_of_file_pins_the_hunk() {
    let file = "x\ny\nx\n";
    let mut h = hunk("-x\n+z");
    h.end_of_file = true;
    assert_eq!(
        apply(file, &[h], Format::Agent).expect("pinned"),
        "x\ny\nz\n"
    );
}

#[test]
fn pure_insertions_go_after_anchor_hint_or_end() {
    let file = "a\nb\n";
    assert_eq!(
        apply(file, &[hunk("+c")], Format::Agent).expect("end"),
        "a\nb\nc\n"
    );
    let mut anchored = hunk("+c");
    anchored.anchors = vec![b"a".as_slice().into()];
    assert_eq!(
        apply(file, &[anchored], Format::Agent).expect("anchor"),
        "a\nc\nb\n"
    );
    let mut hinted = hunk("+c");
    hinted.old_start = Some(0);
    hinted.old_count = Some(0);
    assert_eq!(
        apply(file, &[hinted.clone()], Format::Agent).expect("top"),
        "c\na\nb\n"
    );
    // A unified hunk without context is the diff of an empty file (SPEC §5 "Anchored
    // ends"): it fills an empty file, and nothing else.
    let refused = apply(file, &[hinted.clone()], Format::Unified).expect_err("not empty");
    assert!(
        refused.to_string().contains("fills an empty file"),
        "{refused}"
    );
    assert_eq!(apply("", &[hinted], Format::Unified).expect("empty"), "c\n");
}

#[test]
fn already_applied_is_detected_before_the_ladder() {
    let file = "a\nnew\nc\n";
    let text = Text::parse(file.as_bytes());
    let lines = text.contents();
    let h = hunk(" a\n-old\n+new\n c");
    let placed =
        locate_hunks(lines, &[h], Format::Agent, &LocateOptions::default()).expect("already there");
    assert!(placed[0].already_applied);
    assert_eq!(crate::splice::splice(&text, &placed), file.as_bytes());
}

#[test]
fn a_deletion_is_already_applied_when_its_context_stands_joined() {
    let text = Text::parse(b"a\nc\nd\n");
    let lines = text.contents();
    let opts = LocateOptions::default();
    let placed = locate_hunks(lines, &[hunk(" a\n-b\n c")], Format::Agent, &opts)
        .expect("b is gone from between a and c");
    assert!(placed[0].already_applied);
    assert_eq!(crate::splice::splice(&text, &placed), b"a\nc\nd\n");
    // Context on one side only, or joined context found twice, proves nothing.
    let one_side = locate_hunks(lines, &[hunk("-b\n c\n d")], Format::Agent, &opts);
    assert!(matches!(one_side, Err(LocateError::ContextNotFound { .. })));
    let text = Text::parse(b"a\nc\na\nc\n");
    let twice = locate_hunks(text.contents(), &[hunk(" a\n-b\n c")], Format::Agent, &opts);
    assert!(matches!(twice, Err(LocateError::ContextNotFound { .. })));
}

#[test]
fn whitespace_level_rebases_inserted_lines() {
    let file = "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n";
    let h = hunk(" if x {\n-    y();\n+    z();\n+    w();\n }");
    let got = apply(file, &[h], Format::Agent).expect("level 3");
    assert_eq!(got, "fn f() {\n\tif x {\n\t\tz();\n\t\tw();\n\t}\n}\n");
}

#[test]
fn unidiff_zero_places_exactly() {
    let file = "a\nb\nc\n";
    let mut h = hunk("+x\n+y");
    h.old_start = Some(2);
    h.old_count = Some(0);
    let text = Text::parse(file.as_bytes());
    let lines = text.contents();
    let opts = LocateOptions {
        unidiff_zero: true,
        ..LocateOptions::default()
    };
    let placed = locate_hunks(lines, &[h], Format::Unified, &opts).expect("exact");
    assert_eq!(crate::splice::splice(&text, &placed), b"a\nb\nx\ny\nc\n");
}

#[test]
fn unidiff_zero_past_the_end_is_refused_not_appended() {
    let text = Text::parse(b"a\nb\nc\n");
    let lines = text.contents();
    let opts = LocateOptions {
        unidiff_zero: true,
        ..LocateOptions::default()
    };
    // `@@ -7,0 +8 @@`: after line 7 of a 3-line file (git appends it at the end).
    let mut insert = hunk("+x");
    insert.old_start = Some(7);
    insert.old_count = Some(0);
    // `@@ -5,2 +4,0 @@`: lines 5-6 of a 3-line file.
    let mut delete = hunk("-d\n-e");
    delete.old_start = Some(5);
    delete.old_count = Some(2);
    for h in [insert, delete] {
        match locate_hunks(lines, &[h], Format::Unified, &opts) {
            Err(LocateError::ContextNotFound { message, hint, .. }) => {
                assert!(message.contains("the file has only 3 lines"), "{message}");
                assert!(hint.contains("longer version of the file"), "{hint}");
            }
            other => panic!("must be refused: {other:?}"),
        }
    }
    // Right after the last line is still the end of the file.
    let mut at_end = hunk("+x");
    at_end.old_start = Some(3);
    at_end.old_count = Some(0);
    let placed = locate_hunks(lines, &[at_end], Format::Unified, &opts).expect("at the end");
    assert_eq!(crate::splice::splice(&text, &placed), b"a\nb\nc\nx\n");
}

#[test]
fn replaced_lines_are_recorded() {
    let text = Text::parse(b"a\nb\nc\n");
    let lines = text.contents();
    let h = hunk(" a\n-b\n-c\n+B\n+C\n+D");
    let placed =
        locate_hunks(lines, &[h], Format::Agent, &LocateOptions::default()).expect("exact");
    let replaces: Vec<Option<usize>> = placed[0]
        .pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Insert { replaces, .. } => Some(*replaces),
            Piece::Keep(_) => None,
        })
        .collect();
    assert_eq!(replaces, [Some(1), Some(2), None]);
}

/// `hunk` with a unified line-number hint (`@@ -start,count`).
fn at(spec: &str, start: usize) -> Hunk<'static> {
    let mut h = hunk(spec);
    h.old_start = Some(start);
    h.old_count = Some(h.old_lines().count());
    h
}

#[test]
fn a_unified_hunk_without_leading_context_from_line_1_is_pinned_to_the_start() {
    let file = "a\nb\nx\ny\n";
    let err = apply(file, &[at("+top\n x\n y", 1)], Format::Unified).expect_err("not at 1");
    assert!(
        err.to_string().contains("at the start of the file"),
        "{err}"
    );
    // From another line, or with leading context, or as an agent hunk: not pinned.
    assert_eq!(
        apply(file, &[at("+top\n x\n y", 3)], Format::Unified).expect("found"),
        "a\nb\ntop\nx\ny\n"
    );
    assert_eq!(
        apply(file, &[at("+top\n x\n y", 1)], Format::Agent).expect("found"),
        "a\nb\ntop\nx\ny\n"
    );
}

#[test]
fn a_unified_hunk_without_trailing_context_is_pinned_to_the_end() {
    let file = "a\nb\na\nb\nc\n";
    // `a b` twice, but only the end can take it; at the end it is not there.
    let err = apply(file, &[at(" a\n b\n+end", 1)], Format::Unified).expect_err("not at the end");
    assert!(err.to_string().contains("at the end of the file"), "{err}");
    let file = "a\nb\nc\na\nb\n";
    assert_eq!(
        apply(file, &[at(" a\n b\n+end", 1)], Format::Unified).expect("the end"),
        "a\nb\nc\na\nb\nend\n"
    );
    // With --unidiff-zero it is not pinned (and the window around its hint decides).
    let opts = LocateOptions {
        unidiff_zero: true,
        ..LocateOptions::default()
    };
    let text = Text::parse(file.as_bytes());
    let placed = locate_hunks(
        text.contents(),
        &[at(" a\n b\n+end", 1)],
        Format::Unified,
        &opts,
    )
    .expect("at its hint");
    assert_eq!(placed[0].start, 0);
}

#[test]
fn an_insertion_sent_again_whose_context_also_stands_elsewhere_is_refused() {
    // The old side (`a`) stands inside the inserted block's own earlier result and once more
    // far below: the window must not pick the place that applies the hunk a second time.
    let mut file = String::from("import os\na\n");
    file.push_str(&"filler\n".repeat(40));
    file.push_str("a\n");
    let resent = at("+import os\n a", 1);
    let err = apply(&file, std::slice::from_ref(&resent), Format::Agent).expect_err("two places");
    assert!(matches!(err, LocateError::AmbiguousMatch { .. }), "{err}");
    // Without the copy below, it is already applied.
    let once = "import os\na\nb\n";
    assert_eq!(
        apply(once, &[resent], Format::Agent).expect("applied"),
        once
    );
}

#[test]
fn a_hunk_changing_only_the_final_newline_is_applied_when_the_file_ends_so() {
    let mut add = at(" p\n-q\n+q", 1);
    add.old_no_newline = true;
    for (file, ends, applied) in [
        ("p\nq\n", Some(true), true),
        ("p\nq", Some(false), false),
        // Not known: placed as any hunk.
        ("p\nq\n", None, false),
    ] {
        let text = Text::parse(file.as_bytes());
        let opts = LocateOptions {
            ends_with_newline: ends,
            ..LocateOptions::default()
        };
        let placed =
            locate_hunks(text.contents(), &[add.clone()], Format::Unified, &opts).expect("placed");
        assert_eq!(placed[0].already_applied, applied, "{file:?}");
        let out = crate::splice::splice(&text, &placed);
        assert_eq!(out, b"p\nq\n", "{file:?}");
    }
}

#[test]
fn a_deletion_pinned_to_an_end_is_already_applied_when_its_context_stands_there() {
    // The reverse of an insertion at the top (or the end), sent twice.
    for h in [at("-top\n x\n y", 1), at(" x\n y\n-end", 1)] {
        let text = Text::parse(b"x\ny\n");
        let placed = locate_hunks(
            text.contents(),
            &[h],
            Format::Unified,
            &LocateOptions::default(),
        )
        .expect("already applied");
        assert!(placed[0].already_applied);
    }
}
