//! JSON edits (SPEC §4): replace, line_range, insert, append, all against the original file.

use std::borrow::Cow;

use apply_patch::locate::{locate_edits, Level, LocateError, LocateOptions};
use apply_patch::model::Edit;
use apply_patch::splice::splice;
use apply_patch::text::Text;

fn edit(file: &str, edits: &[Edit<'_>]) -> Result<String, LocateError> {
    let text = Text::parse(file.as_bytes());
    let placed = locate_edits(&text, edits, &LocateOptions::default())?;
    Ok(String::from_utf8(splice(&text, &placed)).expect("utf-8"))
}

fn replace(old: &'static str, new: &'static str, all: bool) -> Edit<'static> {
    Edit::Replace {
        old: Cow::Borrowed(old),
        new: Cow::Borrowed(new),
        all,
    }
}

fn range(start: usize, end: usize, expected: &'static str, new: &'static str) -> Edit<'static> {
    Edit::LineRange {
        start,
        end,
        expected: Cow::Borrowed(expected),
        new_content: Cow::Borrowed(new),
    }
}

fn code(r: Result<String, LocateError>) -> &'static str {
    r.expect_err("a refusal").code().as_str()
}

#[test]
fn replace_exact_substring_across_lines() {
    let got = edit(
        "one two\nthree four\n",
        &[replace("two\nthree", "2\n3", false)],
    );
    assert_eq!(got.expect("unique"), "one 2\n3 four\n");
    // Line endings are normalised: a CRLF file matches an LF `old` and keeps CRLF.
    let crlf = edit("a\r\nb\r\nc\r\n", &[replace("a\nb", "x\ny\nz", false)]);
    assert_eq!(crlf.expect("unique"), "x\r\ny\r\nz\r\nc\r\n");
}

#[test]
fn replace_must_be_unique_unless_all() {
    assert_eq!(
        code(edit("ab ab\n", &[replace("ab", "x", false)])),
        "ambiguous_match"
    );
    let all = edit("ab ab\nab\n", &[replace("ab", "x", true)]);
    assert_eq!(all.expect("every occurrence"), "x x\nx\n");
    assert_eq!(
        code(edit("abc\n", &[replace("zz", "x", false)])),
        "context_not_found"
    );
}

#[test]
fn replace_joining_lines() {
    let got = edit("a\nb\nc\n", &[replace("a\n", "x", false)]);
    assert_eq!(got.expect("unique"), "xb\nc\n");
}

#[test]
fn replace_including_final_newline_decides_it() {
    let got = edit("a\nb\n", &[replace("b\n", "c", false)]);
    assert_eq!(got.expect("unique"), "a\nc");
    let kept = edit("a\nb\n", &[replace("b", "c", false)]);
    assert_eq!(kept.expect("unique"), "a\nc\n");
}

#[test]
fn replace_falls_back_to_whole_lines_and_rebases() {
    let file = "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n";
    let text = Text::parse(file.as_bytes());
    let old = "\nif x {\n    y();\n}\n\n";
    let new = "\nif x {\n    z();\n}\n\n";
    let placed = locate_edits(
        &text,
        &[Edit::Replace {
            old: old.into(),
            new: new.into(),
            all: false,
        }],
        &LocateOptions::default(),
    )
    .expect("level 3");
    assert_eq!(placed[0].level, Level::Whitespace);
    assert_eq!(
        splice(&text, &placed),
        b"fn f() {\n\tif x {\n\t\tz();\n\t}\n}\n"
    );
}

#[test]
fn line_range_checks_expected() {
    let file = "aa1\nbb2\ncc3\ndd4\nee5\n";
    let ok = edit(file, &[range(2, 4, "bb2\n  cc3 \ndd4\n", "X\n")]);
    assert_eq!(ok.expect("proven"), "aa1\nX\nee5\n");
    // Order and repetition do not matter; curly quotes fold.
    let quotes = edit(
        "\u{2018}q\u{2019}\nrrr\nsss\n",
        &[range(1, 3, "sss\n'q'\nrrr\nrrr\n", "")],
    );
    assert_eq!(quotes.expect("proven"), "");
    assert_eq!(
        code(edit(file, &[range(2, 4, "bb2\ncc3\n", "X")])),
        "expected_mismatch"
    );
    assert_eq!(
        code(edit(file, &[range(2, 4, "bb2\ncc3\nzzz\n", "X")])),
        "expected_mismatch"
    );
    assert_eq!(
        code(edit(file, &[range(4, 9, "bb2\ncc3\ndd4\n", "X")])),
        "expected_mismatch"
    );
    // Short lines need four.
    assert_eq!(
        code(edit("a\nb\nc\nd\n", &[range(1, 3, "a\nb\nc\n", "")])),
        "expected_mismatch"
    );
    assert_eq!(
        edit("a\nb\nc\nd\n", &[range(1, 3, "a\nb\nc\nd\n", "")]).expect("four"),
        "d\n"
    );
}

#[test]
fn line_range_widens_the_check_downward_then_upward() {
    let file = "ln1\nln2\nln3\nln4\nln5\n";
    // One line replaced, proven by the three lines from it down.
    let down = edit(file, &[range(2, 2, "ln2\nln3\nln4\n", "X")]);
    assert_eq!(down.expect("widened"), "ln1\nX\nln3\nln4\nln5\n");
    // At the end of the file the check widens upward.
    let up = edit(file, &[range(5, 5, "ln3\nln4\nln5\n", "X")]);
    assert_eq!(up.expect("widened"), "ln1\nln2\nln3\nln4\nX\n");
}

#[test]
fn insert_and_append() {
    let ins = Edit::Insert {
        after: 0,
        content: "top\n".into(),
    };
    assert_eq!(edit("a\n", &[ins]).expect("top"), "top\na\n");
    let end = Edit::Insert {
        after: 1,
        content: "z".into(),
    };
    assert_eq!(edit("a\n", &[end]).expect("end"), "a\nz\n");
    let past = Edit::Insert {
        after: 5,
        content: "z".into(),
    };
    assert_eq!(code(edit("a\n", &[past])), "expected_mismatch");
    let app = |c: &'static str| Edit::Append { content: c.into() };
    assert_eq!(edit("a\n", &[app("b\n")]).expect("append"), "a\nb\n");
    assert_eq!(
        edit("a", &[app("b\nc")]).expect("continues the line"),
        "ab\nc"
    );
    assert_eq!(
        edit("a\r\n", &[app("b\nc\n")]).expect("crlf"),
        "a\r\nb\r\nc\r\n"
    );
    assert_eq!(edit("", &[app("x\n")]).expect("empty"), "x\n");
    assert_eq!(
        edit("a\n", &[app("b"), app("c\n")]).expect("in order"),
        "a\nbc\n"
    );
}

#[test]
fn edits_use_original_numbering_and_refuse_overlaps() {
    let file = "aaa\nbbb\nccc\nddd\n";
    let both = [
        Edit::Insert {
            after: 1,
            content: "x".into(),
        },
        replace("ddd", "D", false),
        range(3, 3, "aaa\nbbb\nccc\n", "C"),
    ];
    // line_range 3..3 widened upward to lines 2-4 does not include `a`.
    assert_eq!(code(edit(file, &both)), "expected_mismatch");
    let fine = [
        Edit::Insert {
            after: 1,
            content: "x".into(),
        },
        replace("ddd", "D", false),
        range(2, 2, "bbb\nccc\nddd\n", "B"),
    ];
    assert_eq!(edit(file, &fine).expect("together"), "aaa\nx\nB\nccc\nD\n");
    let clash = [
        replace("bbb", "B", false),
        range(1, 2, "aaa\nbbb\nccc\n", "Z"),
    ];
    assert_eq!(code(edit(file, &clash)), "overlapping_hunks");
}

#[test]
fn empty_file_finds_nothing() {
    assert_eq!(
        code(edit("", &[replace("a", "b", false)])),
        "context_not_found"
    );
    assert_eq!(
        code(edit("", &[range(1, 1, "aaa\nbbb\nccc\n", "x")])),
        "expected_mismatch"
    );
}
