//! Every refusal message of the locator, snapshotted as the boundary error (message and
//! structured fields), so a change in wording is a reviewed change.

use std::borrow::Cow;

use apply_patch::locate::{locate_edits, LocateError, LocateOptions};
use apply_patch::model::Edit;
use apply_patch::text::Text;
use apply_patch::Format;

use super::{hunk, run};

fn snapshot(name: &str, err: LocateError) {
    let error = err.into_error("src/a.rs");
    insta::with_settings!({
        snapshot_path => "../../../snapshots/locate",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_yaml_snapshot!(name, error);
    });
}

fn refuse(file: &str, specs: &[&str], format: Format, opts: &LocateOptions) -> LocateError {
    let hunks: Vec<_> = specs.iter().map(|s| hunk(s)).collect();
    run(file.as_bytes(), &hunks, format, opts).expect_err("a refusal")
}

fn refuse_edit(file: &str, edits: &[Edit<'_>]) -> LocateError {
    let text = Text::parse(file.as_bytes());
    locate_edits(&text, edits, &LocateOptions::default()).expect_err("a refusal")
}

const CODE: &str = "fn main() {\n\tlet x = compute(1);\n\tprintln!(\"{x}\");\n}\n";

#[test]
fn context_not_found_names_a_changed_identifier() {
    let specs = ["@@ -2,3\n fn main() {\n-    let x = calculate(1);\n+    let x = 2;\n     println!(\"{x}\");"];
    snapshot(
        "context_not_found_identifier",
        refuse(CODE, &specs, Format::Unified, &LocateOptions::default()),
    );
}

#[test]
fn context_not_found_names_tab_vs_spaces_in_exact_mode() {
    let opts = LocateOptions::default().with_bytes_only(true);
    let specs = [" fn main() {\n-    let x = compute(1);\n+    let x = 2;\n \tprintln!(\"{x}\");"];
    snapshot(
        "context_not_found_bytes_only",
        refuse(CODE, &specs, Format::Unified, &opts),
    );
}

#[test]
fn context_not_found_names_a_literal_newline() {
    let specs = ["-\tprintln!(\"{x}\");\\n}\n+\tprintln!(\"{x}!\");\\n}"];
    snapshot(
        "context_not_found_literal_newline",
        refuse(CODE, &specs, Format::Agent, &LocateOptions::default()),
    );
}

#[test]
fn context_not_found_after_an_anchor() {
    let file = "fn a() {\n    one();\n}\nfn b() {\n    two();\n}\n";
    let specs = ["@@ fn b() {\n-    one();\n+    uno();"];
    snapshot(
        "context_not_found_after_anchor",
        refuse(file, &specs, Format::Agent, &LocateOptions::default()),
    );
}

#[test]
fn context_not_found_with_a_curly_quote_and_more() {
    let file = "say(\u{201C}hi\u{201D});\nwave();\n";
    let specs = [" say(\"hi\");\n-wave(1);\n+bow();"];
    snapshot(
        "context_not_found_curly_quote",
        refuse(file, &specs, Format::Agent, &LocateOptions::default()),
    );
}

#[test]
fn anchor_not_found() {
    snapshot(
        "anchor_not_found",
        refuse(
            CODE,
            &["@@ fn mian() {\n-}\n+};"],
            Format::Agent,
            &LocateOptions::default(),
        ),
    );
}

/// The ambiguity fixtures snapshotted here (name, file, hunks, format); `hints` resends
/// each of their candidates as the error says.
pub(super) const AMBIGUOUS: &[(&str, &str, &[&str], Format)] = &[
    (
        "anchor_ambiguous",
        "impl A {\n    one();\n}\nimpl A {\n    two();\n}\n",
        &["@@ impl A {\n-    two();\n+    2();"],
        Format::Agent,
    ),
    (
        "ambiguous_two",
        "a\nx += 1;\nb\nc\nx += 1;\nd\n",
        &["-x += 1;\n+x += 2;"],
        Format::Agent,
    ),
    (
        "ambiguous_many",
        "}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n}  \n",
        &["-}\n+};"],
        Format::Agent,
    ),
];

#[test]
fn ambiguous_matches() {
    for (name, file, specs, format) in AMBIGUOUS {
        snapshot(
            name,
            refuse(file, specs, *format, &LocateOptions::default()),
        );
    }
}

#[test]
fn overlapping_hunks() {
    let file = "a\nb\nc\nd\n";
    snapshot(
        "overlapping_hunks",
        refuse(
            file,
            &[" a\n-b\n+B", "-b\n c\n+C"],
            Format::Agent,
            &LocateOptions::default(),
        ),
    );
}

#[test]
fn unidiff_zero_not_found() {
    let opts = LocateOptions::default().with_unidiff_zero(true);
    snapshot(
        "unidiff_zero_not_found",
        refuse(CODE, &["@@ -3,1\n-}"], Format::Unified, &opts),
    );
}

#[test]
fn replace_refusals() {
    let twice = Edit::Replace {
        old: Cow::Borrowed("x"),
        new: Cow::Borrowed("y"),
        all: false,
    };
    snapshot(
        "replace_ambiguous",
        refuse_edit("x = 1\nx = 2\nkeep\nlast\n", &[twice]),
    );
    let missing = Edit::Replace {
        old: Cow::Borrowed("let x = compute(2);\n"),
        new: Cow::Borrowed("let x = 3;\n"),
        all: false,
    };
    snapshot("replace_not_found", refuse_edit(CODE, &[missing]));
}

#[test]
fn line_range_refusals() {
    let file = "alpha\nbeta\ngamma\ndelta\n";
    let range = |start, end, expected| Edit::LineRange {
        start,
        end,
        expected: Cow::Borrowed(expected),
        new_content: Cow::Borrowed("new\n"),
    };
    snapshot(
        "line_range_outside",
        refuse_edit(file, &[range(3, 7, "gamma\ndelta\n")]),
    );
    snapshot(
        "line_range_too_short",
        refuse_edit(file, &[range(1, 2, "alpha\nbeta\n")]),
    );
    snapshot(
        "line_range_mismatch",
        refuse_edit(file, &[range(1, 3, "alpha\nbeta\nepsilon\n")]),
    );
    let past = Edit::Insert {
        after: 9,
        content: Cow::Borrowed("x\n"),
    };
    snapshot("insert_past_end", refuse_edit(file, &[past]));
}

#[test]
fn end_of_file_not_found_compares_the_end() {
    let file = "a\nb\nc\n";
    snapshot(
        "end_of_file_not_found",
        refuse(
            file,
            &["-a\n+z\n*** End of File"],
            Format::Agent,
            &LocateOptions::default(),
        ),
    );
}

#[test]
fn context_not_found_names_trailing_whitespace_and_nbsp() {
    let opts = LocateOptions::default().with_bytes_only(true);
    snapshot(
        "context_not_found_trailing_whitespace",
        refuse(
            "keep\nx = 1;  \n",
            &[" keep\n-x = 1;\n+x = 2;"],
            Format::Unified,
            &opts,
        ),
    );
    snapshot(
        "context_not_found_nbsp",
        refuse(
            "keep\nx\u{00A0}= 1;\n",
            &[" keep\n-x = 1;\n+x = 2;"],
            Format::Unified,
            &opts,
        ),
    );
}

#[test]
fn hunk_repeating_its_anchor() {
    let file = "def foo():\n    x = 1\n";
    snapshot(
        "context_not_found_repeated_anchor",
        refuse(
            file,
            &["@@ def foo():\n def foo():\n-    x = 1\n+    x = 2"],
            Format::Agent,
            &LocateOptions::default(),
        ),
    );
}
