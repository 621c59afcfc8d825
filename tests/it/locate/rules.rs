//! One test per rule of SPEC §5 that the table cannot express (offsets, options, markers,
//! patch-side differences, re-basing).

use apply_patch::locate::{Level, LocateError, LocateOptions, Piece};
use apply_patch::Format;

use super::{apply, apply_with, hunk, run, trusted};

fn opts() -> LocateOptions {
    LocateOptions::default()
}

#[test]
fn drift_carries_the_first_offset_to_later_hunks() {
    let file: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    let hunks = [
        hunk("@@ -13,3\n line 10\n-line 11\n+eleven\n line 12"),
        hunk("@@ -103,3\n line 100\n-line 101\n+hundred and one\n line 102"),
    ];
    let (_, placed) = run(file.as_bytes(), &hunks, Format::Unified, &opts()).expect("placed");
    assert_eq!((placed[0].start, placed[0].offset), (9, Some(-3)));
    // The second hint is shifted by the first offset, so it is exact.
    assert_eq!((placed[1].start, placed[1].offset), (99, Some(0)));
}

#[test]
fn far_off_hint_falls_back_to_the_whole_file() {
    let file: String = (1..=200).map(|i| format!("line {i}\n")).collect();
    let h = hunk("@@ -150,2\n-line 7\n+seven\n line 8");
    let (_, placed) = run(file.as_bytes(), &[h], Format::Unified, &opts()).expect("unique");
    assert_eq!((placed[0].start, placed[0].offset), (6, Some(-143)));
}

#[test]
fn agent_hunks_may_carry_line_numbers() {
    // Under a matching `*** Base:` the number chooses; without one it only centres the
    // window, and both `x` are in it (SPEC §5 "Trust in line numbers").
    let file = "x\ny\nx\ny\n";
    let got = apply_with(file, &["@@ -3\n-x\n+z"], Format::Agent, &trusted());
    assert_eq!(got.expect("hint picks line 3"), "x\ny\nz\ny\n");
    let guessed = apply(file, &["@@ -3\n-x\n+z"], Format::Agent);
    assert!(matches!(guessed, Err(LocateError::AmbiguousMatch { .. })));
}

#[test]
fn window_option_is_honoured() {
    let mut file = String::from("t\n");
    file.push_str(&"f\n".repeat(8));
    file.push_str("t\nf\n");
    let h = hunk("@@ -3,2\n-t\n+T\n f");
    let narrow = opts().with_window(3);
    let (bytes, _) = run(
        file.as_bytes(),
        std::slice::from_ref(&h),
        Format::Unified,
        &narrow,
    )
    .expect("near");
    assert!(bytes.starts_with(b"T\n"));
    let wide = run(file.as_bytes(), &[h], Format::Unified, &opts());
    assert!(matches!(wide, Err(LocateError::AmbiguousMatch { .. })));
}

#[test]
fn hunk_is_searched_only_after_its_anchor() {
    let file = "x\nfn g\nx\n";
    let got = apply(file, &["@@ fn g\n-x\n+y"], Format::Agent).expect("after anchor");
    assert_eq!(got, "x\nfn g\ny\n");
}

#[test]
fn non_utf8_files_match_exactly_only() {
    let file = b"a\xff\nb \n";
    let bytes_only = opts().with_bytes_only(true);
    let loose = run(file, &[hunk("-b\n+c")], Format::Unified, &bytes_only);
    assert!(matches!(loose, Err(LocateError::ContextNotFound { .. })));
    let mut exact = hunk("-b \n+c\n b ");
    exact.lines[0].text = b"a\xff".to_vec().into();
    let (bytes, _) = run(file, &[exact], Format::Unified, &bytes_only).expect("exact");
    assert_eq!(bytes, b"c\nb \n");
}

#[test]
fn no_newline_markers_decide_the_final_newline() {
    let added = apply("a\nb", &[" a\n-b\n\\ old\n+b"], Format::Unified).expect("placed");
    assert_eq!(added, "a\nb\n");
    let removed = apply("a\nb\n", &[" a\n-b\n+b\n\\ new"], Format::Unified).expect("placed");
    assert_eq!(removed, "a\nb");
    // A hunk away from the end leaves the state alone.
    let kept = apply("a\nb\nc", &["-a\n+A\n b"], Format::Unified).expect("placed");
    assert_eq!(kept, "A\nb\nc");
}

#[test]
fn unidiff_zero_places_at_line_numbers() {
    let zero = opts().with_unidiff_zero(true);
    let file = b"x\nx\nx\n";
    let del = hunk("@@ -2,1\n-x");
    let (bytes, placed) = run(file, &[del], Format::Unified, &zero).expect("exact");
    assert_eq!((bytes.as_slice(), placed[0].start), (&b"x\nx\n"[..], 1));
    let ins = hunk("@@ -3,0\n+y");
    let (bytes, _) = run(file, &[ins], Format::Unified, &zero).expect("after line 3");
    assert_eq!(bytes, b"x\nx\nx\ny\n");
    let wrong = run(file, &[hunk("@@ -2,1\n-q")], Format::Unified, &zero);
    assert!(matches!(wrong, Err(LocateError::ContextNotFound { .. })));
}

#[test]
fn already_applied_needs_a_unique_new_side() {
    let file = "a\nB\nc\na\nB\nc\n";
    let twice = apply(file, &[" a\n-b\n+B\n c"], Format::Agent);
    assert!(matches!(twice, Err(LocateError::ContextNotFound { .. })));
    // A deletion-only hunk is already applied when its context, joined, stands once...
    let gone = apply("a\nc\n", &[" a\n-b\n c"], Format::Agent).expect("b already deleted");
    assert_eq!(gone, "a\nc\n");
    // ...not when it stands twice, nor without context on both sides of the deletion.
    let twice = apply("a\nc\na\nc\n", &[" a\n-b\n c"], Format::Agent);
    assert!(matches!(twice, Err(LocateError::ContextNotFound { .. })));
    let above_only = apply("a\nc\n", &[" a\n-b"], Format::Agent);
    assert!(matches!(
        above_only,
        Err(LocateError::ContextNotFound { .. })
    ));
}

#[test]
fn patch_side_punctuation_matches_at_level_four_and_keeps_the_file() {
    let file = "say(\"it's\");\nnext();\n";
    let h = hunk(" say(\u{201C}it\u{2019}s\u{201D});\n-next();\n+done();");
    let (bytes, placed) = run(file.as_bytes(), &[h], Format::Agent, &opts()).expect("unicode");
    assert_eq!(placed[0].level, Level::Unicode);
    assert_eq!(bytes, b"say(\"it's\");\ndone();\n");
}

#[test]
fn rebase_converts_units_when_the_file_is_clear() {
    let file = "fn f() {\n  if x {\n    y();\n  }\n}\n";
    let h = hunk("     if x {\n-        y();\n+        z();\n+            w();\n     }");
    let (bytes, placed) = run(file.as_bytes(), &[h], Format::Agent, &opts()).expect("level 3");
    assert_eq!(placed[0].level, Level::Whitespace);
    assert_eq!(
        String::from_utf8(bytes).expect("utf-8"),
        "fn f() {\n  if x {\n    z();\n      w();\n  }\n}\n"
    );
}

#[test]
fn trailing_whitespace_level_writes_inserts_verbatim() {
    let file = "a  \nb\n";
    let (bytes, placed) = run(
        file.as_bytes(),
        &[hunk(" a\n-b\n+  c")],
        Format::Agent,
        &opts(),
    )
    .expect("level 2");
    assert_eq!(placed[0].level, Level::TrailingWhitespace);
    assert_eq!(bytes, b"a  \n  c\n");
}

#[test]
fn context_lines_are_kept_pieces() {
    let (_, placed) =
        run(b"a \nb\n", &[hunk(" a\n-b\n+c")], Format::Agent, &opts()).expect("level 2");
    assert_eq!(placed[0].pieces[0], Piece::Keep(0));
}

#[test]
fn empty_file_takes_insertions_only() {
    assert_eq!(
        apply("", &["+a\n+b"], Format::Agent).expect("insert"),
        "a\nb\n"
    );
    let err = apply("", &["-a\n+b"], Format::Agent).expect_err("nothing to find");
    assert!(matches!(err, LocateError::ContextNotFound { .. }));
}

#[test]
fn a_bom_in_the_patch_is_not_part_of_line_one() {
    let file = "\u{FEFF}first\nsecond\n";
    let h = hunk("-\u{FEFF}first\n+\u{FEFF}one\n second");
    let (bytes, placed) = run(file.as_bytes(), &[h], Format::Unified, &opts()).expect("exact");
    assert_eq!(placed[0].level, Level::Exact);
    assert_eq!(bytes, "\u{FEFF}one\nsecond\n".as_bytes());
}

#[test]
fn readme_rebase_example_holds() {
    let file = "fn f() {\n\tif x {\n\t\ty();\n\t}\n";
    let got = apply(
        file,
        &["@@ fn f() {\n if x {\n-    y();\n+    z();"],
        Format::Agent,
    );
    assert_eq!(got.expect("level 3"), "fn f() {\n\tif x {\n\t\tz();\n\t}\n");
}
