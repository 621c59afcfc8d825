//! SPEC §5 "Order": the hunks of one file are placed in patch order — each begins below the
//! first line of the previous hunk's match, at every level, in the window and file-wide;
//! anchors are exempt, so consecutive hunks may repeat one anchor.

use apply_patch::locate::{LocateError, LocateOptions};
use apply_patch::Format;

use super::{apply, hunk, run};

/// `fn a` and a long `fn b`: the `}` of `fn a` is within the window of the line after the
/// first hunk, the `}` of `fn b` is not.
fn two_functions() -> String {
    let mut file = String::from("fn a() {\n    x();\n}\n\nfn b() {\n    old();\n");
    for i in 0..25 {
        file.push_str(&format!("    step({i});\n"));
    }
    file.push_str("}\n");
    file
}

#[test]
fn a_one_line_context_above_the_previous_hunk_is_not_a_candidate() {
    let file = two_functions();
    let got = apply(
        &file,
        &[
            " fn b() {\n-    old();\n+    new();",
            " }\n+\n+fn show() {}",
        ],
        Format::Agent,
    )
    .expect("the `}` below the first hunk");
    let want = file.replace("old()", "new()") + "\nfn show() {}\n";
    assert_eq!(got, want);
}

#[test]
fn order_holds_at_loose_levels_too() {
    // The only `}` below the first hunk has trailing blanks (level 2); the exact one above
    // the first hunk is not a candidate.
    let file = two_functions().replace("    step(24);\n}\n", "    step(24);\n}  \n");
    let got = apply(
        &file,
        &[" fn b() {\n-    old();\n+    new();", " }\n+fn show() {}"],
        Format::Agent,
    )
    .expect("the `}  ` at the end");
    assert!(got.ends_with("}  \nfn show() {}\n"), "{got}");
}

#[test]
fn unified_hunks_out_of_order_are_refused_naming_the_place_above() {
    let file = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let hunks = [hunk("@@ -7,2\n-g\n+G\n h"), hunk("@@ -2,2\n-b\n+B\n c")];
    let err = run(
        file.as_bytes(),
        &hunks,
        Format::Unified,
        &LocateOptions::default(),
    )
    .expect_err("hunk 2 only fits above hunk 1");
    match err {
        LocateError::ContextNotFound {
            hunk,
            message,
            nearest,
            hint,
            ..
        } => {
            assert_eq!(hunk, 1);
            assert!(message.contains("below hunk 1"), "{message}");
            assert!(message.contains("above, at line 2"), "{message}");
            assert_eq!(nearest.map(|n| n.start_line), Some(2));
            assert!(hint.contains("patch order"), "{hint}");
        }
        other => panic!("want context_not_found: {other:?}"),
    }
}

#[test]
fn two_hunks_may_repeat_one_anchor() {
    let mut file = String::from(
        "class A:\n    def run(self):\n        a = 1\n        b = 2\n        c = 3\n        return a + b + c\n",
    );
    for i in 0..25 {
        file.push_str(&format!("# {i}\n"));
    }
    file.push_str("class B:\n    def run(self):\n        d = 4\n");
    let hunks = [
        "@@ class A:\n@@     def run(self):\n-        a = 1\n+        a = 10",
        "@@     def run(self):\n-        c = 3\n+        c = 30",
    ];
    let got = apply(&file, &hunks, Format::Agent).expect("both hunks in A.run");
    let want = file
        .replacen("a = 1\n", "a = 10\n", 1)
        .replacen("c = 3\n", "c = 30\n", 1);
    assert_eq!(got, want);
    // The anchor narrows from above only: a second `c = 3` below it (in B.run) makes the
    // hunk ambiguous, however near A.run the first one is (SPEC §5: a hunk without line
    // numbers must be unique below the previous hunk and its anchor).
    let both = file.replace("d = 4", "c = 3");
    let err = apply(&both, &hunks, Format::Agent).expect_err("c = 3 twice below");
    assert!(
        matches!(err, LocateError::AmbiguousMatch { hunk: 1, .. }),
        "{err}"
    );
}

#[test]
fn an_insertion_after_an_anchor_above_the_previous_hunk_is_refused() {
    let file = "fn f() {\n    a();\n    b();\n}\n";
    let hunks = [
        hunk("@@ fn f() {\n-    b();\n+    c();"),
        hunk("@@ fn f() {\n+    first();"),
    ];
    let err = run(
        file.as_bytes(),
        &hunks,
        Format::Agent,
        &LocateOptions::default(),
    )
    .expect_err("the insertion goes above hunk 1");
    assert_eq!(err.code().as_str(), "context_not_found");
    assert!(err.to_string().contains("above hunk 1"), "{err}");
}

#[test]
fn a_patch_sent_twice_is_already_applied_in_order() {
    let file = two_functions();
    let specs = [
        " fn a() {\n-    x();\n+    y();",
        " fn b() {\n-    old();\n+    new();",
    ];
    let once = apply(&file, &specs, Format::Agent).expect("applies");
    let hunks: Vec<_> = specs.iter().map(|s| hunk(s)).collect();
    let (bytes, placed) = run(
        once.as_bytes(),
        &hunks,
        Format::Agent,
        &LocateOptions::default(),
    )
    .expect("already applied");
    assert!(placed.iter().all(|p| p.already_applied), "{placed:?}");
    assert_eq!(bytes, once.as_bytes());
}

#[test]
fn a_hunk_may_share_the_first_line_of_one_that_inserts_above_it() {
    // Hunk 1 inserts above line 1 and quotes it; hunk 2 quotes it too: shared context.
    let got = apply(
        "0:\n1:\n2:\n",
        &["+top\n 0:", " 0:\n+mid\n 1:"],
        Format::Agent,
    );
    assert_eq!(got.expect("shared context"), "top\n0:\nmid\n1:\n2:\n");
}
