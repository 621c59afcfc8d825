//! Regression tests from adversarial end-to-end runs of the real binary: one test per bug,
//! named after the bug. Every refusal also checks that the tree is byte-identical.

use crate::util::TempTree;

/// Run `args` + the patch on stdin; on a non-zero exit, the tree must be unchanged.
fn run_checked(t: &TempTree, args: &[&str], patch: &str) -> crate::util::Output {
    let before = t.snapshot();
    let out = t.run(args, patch);
    if out.status != 0 {
        assert_eq!(t.snapshot(), before, "a refusal changed the tree");
    }
    out
}

/// [`run_checked`] of a patch that must apply.
fn applies(t: &TempTree, args: &[&str], patch: &str) -> crate::util::Output {
    let out = run_checked(t, args, patch);
    assert_eq!(out.status, 0, "{}", out.stdout);
    out
}

#[test]
fn absolute_path_with_dotdot_back_into_the_root_is_accepted() {
    let t = TempTree::with(&[("x", "a\n")]);
    let root = std::fs::canonicalize(t.root()).expect("canonical root");
    let name = root
        .file_name()
        .expect("the root has a name")
        .to_string_lossy();
    let path = format!("{}/../{name}/x", root.display());
    let patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n");
    applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("x"), "b\n");
    // Folding still confines: climbing out of the root stays refused.
    let out_patch = format!(
        "*** Begin Patch\n*** Update File: {}/../x\n@@\n-b\n+c\n*** End Patch\n",
        root.display()
    );
    let out = run_checked(&t, &["--json"], &out_patch);
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "path_escape");
}

#[test]
fn file_and_folder_at_the_same_path_is_refused_at_planning_not_commit() {
    let t = TempTree::with(&[("x", "a\n")]);
    for patch in [
        "*** Begin Patch\n*** Add File: n\n+b\n*** Add File: n/sub\n+c\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: d/sub\n+c\n*** Add File: d\n+b\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: x\n*** Move to: m/e/f\n@@\n-a\n+b\n*** Add File: m/e\n+b\n*** End Patch\n",
    ] {
        // --check must give the same answer as the real run.
        let check = run_checked(&t, &["--json", "--check"], patch);
        assert_eq!(check.status, 1, "{}", check.stdout);
        assert_eq!(check.json()["error"]["code"], "file_exists");
        let out = run_checked(&t, &["--json"], patch);
        assert_eq!(out.status, 1, "{}", out.stdout);
        assert_eq!(out.json()["error"]["code"], "file_exists");
    }
}

const BOM: &str = "\u{feff}";

#[test]
fn git_diff_of_line_1_of_a_bom_file_does_not_double_the_bom() {
    let t = TempTree::with(&[("f", &format!("{BOM}a\nb\nc\n"))]);
    let patch =
        format!("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-{BOM}a\n+{BOM}A\n b\n");
    let out = applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}A\nb\nc\n"));
    // Placed exactly: the BOM is not a difference the ladder has to forgive.
    assert_eq!(out.json()["files"][0]["hunks"][0]["level"], "exact");
    assert_eq!(out.json()["warnings"], serde_json::json!([]));
    // And back again.
    applies(&t, &["--json", "-R"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}a\nb\nc\n"));
}

#[test]
fn git_diff_removing_the_bom_removes_it() {
    let t = TempTree::with(&[("f", &format!("{BOM}a\nb\n"))]);
    let patch = format!("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-{BOM}a\n+a\n b\n");
    applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("f"), "a\nb\n");
    applies(&t, &["--json", "-R"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}a\nb\n"));
}

#[test]
fn git_deletion_diff_of_a_bom_file_is_accepted() {
    let t = TempTree::with(&[("f", &format!("{BOM}a\nb\n")), ("keep", "k\n")]);
    let patch = format!(
        "diff --git a/f b/f\ndeleted file mode 100644\n--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-{BOM}a\n-b\n"
    );
    applies(&t, &["--json"], &patch);
    assert!(!t.root().join("f").exists());
    // Reversed, it brings the file back byte for byte.
    applies(&t, &["--json", "-R"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}a\nb\n"));
}

#[test]
fn git_diff_inserting_above_the_bom_line_keeps_the_bom_at_the_top() {
    // git's own diff shows the BOM moving to line 2; the BOM is not part of a line here, so
    // it stays first, the inserted line after it (and the reverse gives the original back).
    let t = TempTree::with(&[("f", &format!("{BOM}{{\nbar\n"))]);
    let patch =
        format!("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+top\n {BOM}{{\n bar\n");
    applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}top\n{{\nbar\n"));
    applies(&t, &["--json", "-R"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}{{\nbar\n"));
}

#[test]
fn git_diffs_of_a_file_holding_only_a_bom_apply() {
    let t = TempTree::with(&[("f", BOM), ("g", BOM)]);
    let patch = format!(
        "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-{BOM}\n\\ No newline at end of file\n+{BOM}x\n\\ No newline at end of file\n\
         diff --git a/g b/g\ndeleted file mode 100644\n--- a/g\n+++ /dev/null\n@@ -1 +0,0 @@\n-{BOM}\n\\ No newline at end of file\n"
    );
    applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}x"));
    assert!(!t.root().join("g").exists());
    applies(&t, &["--json", "-R"], &patch);
    assert_eq!(t.read_str("f"), BOM);
    assert_eq!(t.read_str("g"), BOM);
}

#[test]
fn diff_dash_ru_capital_n_new_and_deleted_files_are_created_and_deleted() {
    // `diff -ruN old new` writes no /dev/null: a missing side has the epoch as timestamp.
    let t = TempTree::with(&[("gone.txt", "bye\n"), ("keep.txt", "a\n")]);
    let patch = "diff -ruN o/gone.txt n/gone.txt\n\
        --- o/gone.txt\t2026-11-30 03:43:01.588323270 +0000\n\
        +++ n/gone.txt\t1970-01-01 00:00:00.000000000 +0000\n\
        @@ -1 +0,0 @@\n-bye\n\
        diff -ruN o/new.txt n/new.txt\n\
        --- o/new.txt\t1970-01-01 00:00:00.000000000 +0000\n\
        +++ n/new.txt\t2026-11-30 03:43:01.588674793 +0000\n\
        @@ -0,0 +1,2 @@\n+hello\n+world\n";
    applies(&t, &["--json", "-p1"], patch);
    assert!(!t.root().join("gone.txt").exists());
    assert_eq!(t.read_str("new.txt"), "hello\nworld\n");
    applies(&t, &["--json", "-p1", "-R"], patch);
    assert_eq!(t.read_str("gone.txt"), "bye\n");
    assert!(!t.root().join("new.txt").exists());
}

#[test]
fn agent_patch_carrying_the_bom_on_line_1_does_not_double_it() {
    // An agent that read the raw bytes writes the BOM into its first line.
    let t = TempTree::with(&[("f", &format!("{BOM}a\nb\n"))]);
    let patch =
        format!("*** Begin Patch\n*** Update File: f\n@@\n-{BOM}a\n+{BOM}A\n b\n*** End Patch\n");
    applies(&t, &["--json"], &patch);
    assert_eq!(t.read_str("f"), format!("{BOM}A\nb\n"));
}

#[test]
fn unidiff_zero_hunk_past_the_end_of_the_file_is_refused_not_appended() {
    let t = TempTree::with(&[("f.txt", "1\n2\n3\n")]);
    for patch in [
        "--- a/f.txt\n+++ b/f.txt\n@@ -7,0 +8 @@\n+eight\n",
        "--- a/f.txt\n+++ b/f.txt\n@@ -5,2 +4,0 @@\n-5\n-6\n",
    ] {
        let out = run_checked(&t, &["--json", "--unidiff-zero"], patch);
        assert_eq!(out.status, 1, "{}", out.stdout);
        let error = &out.json()["error"];
        assert_eq!(error["code"], "context_not_found");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("the file has only 3 lines"), "{message}");
    }
    // After the last line is the end of the file, as before.
    let out = run_checked(
        &t,
        &["--unidiff-zero"],
        "--- a/f.txt\n+++ b/f.txt\n@@ -3,0 +4 @@\n+4\n",
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(t.read_str("f.txt"), "1\n2\n3\n4\n");
}

#[test]
fn reindented_hunk_shifts_inserted_lines_shallower_than_its_first_line() {
    // The patch is 2 columns shallower than the file; the new step is shallower than the
    // hunk's first line. Written as the patch had it, it ended the `run: |` block scalar.
    let yaml = "jobs:\n  build:\n    steps:\n      - name: test\n        run: |\n          \
                cargo test\n      - name: lint\n        run: cargo clippy\n";
    let t = TempTree::with(&[("ci.yml", yaml)]);
    let patch = "*** Begin Patch\n*** Update File: ci.yml\n@@\n       run: |\n         cargo \
                 test\n+    - name: docs\n+      run: cargo doc\n     - name: lint\n*** End Patch\n";
    applies(&t, &["--json"], patch);
    assert_eq!(
        t.read_str("ci.yml"),
        "jobs:\n  build:\n    steps:\n      - name: test\n        run: |\n          cargo test\n      \
         - name: docs\n        run: cargo doc\n      - name: lint\n        run: cargo clippy\n"
    );
    // A line the shift would put left of column 0 is refused, not guessed.
    let t = TempTree::with(&[("a.yml", "a:\n  b: 1\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.yml\n@@\n     b: 1\n+x: 2\n*** End Patch\n";
    let out = run_checked(&t, &["--json"], patch);
    assert_eq!(out.status, 1, "{}", out.stdout);
    assert_eq!(out.json()["error"]["code"], "context_not_found");
    let message = out.json()["error"]["message"].to_string();
    assert!(message.contains("negative indentation"), "{message}");
}

/// The warning codes of a run.
fn warning_codes(out: &crate::util::Output) -> Vec<String> {
    let json = out.json();
    let warnings = json["warnings"].as_array().cloned().unwrap_or_default();
    warnings
        .iter()
        .map(|w| w["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Send `patch` twice: the second run is an already-applied no-op that changes nothing.
fn resend_is_a_no_op(t: &TempTree, patch: &str) {
    let first = applies(t, &["--json"], patch);
    assert!(!warning_codes(&first).contains(&"already_applied".to_string()));
    let after = t.snapshot();
    let second = applies(t, &["--json"], patch);
    assert_eq!(
        warning_codes(&second),
        ["already_applied"],
        "{}",
        second.stdout
    );
    assert_eq!(t.snapshot(), after, "a re-sent patch changed the tree");
}

#[test]
fn resent_deletion_only_hunks_are_already_applied() {
    let lines: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    let t = TempTree::with(&[("a.txt", &lines), ("b.txt", &lines)]);
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -2,7 +2,6 @@\n l2\n l3\n l4\n-l5\n l6\n l7\n l8\n\
                @@ -17,7 +16,6 @@\n l17\n l18\n l19\n-l20\n l21\n l22\n l23\n";
    resend_is_a_no_op(&t, diff);
    let agent = "*** Begin Patch\n*** Update File: b.txt\n@@\n l2\n-l3\n l4\n@@\n l10\n-l11\n\
                 -l12\n l13\n*** End Patch\n";
    resend_is_a_no_op(&t, agent);
    // Without context below the deleted line there is nothing to prove it was deleted here.
    let t = TempTree::with(&[("c.txt", "a\nb\nc\n")]);
    let top = "*** Begin Patch\n*** Update File: c.txt\n@@\n-a\n b\n c\n*** End Patch\n";
    applies(&t, &["--json"], top);
    let out = run_checked(&t, &["--json"], top);
    assert_eq!(out.json()["error"]["code"], "context_not_found");
    // The nearest text is the same lines offset by one: named as a missing line, not as
    // a changed identifier.
    let message = out.json()["error"]["message"].to_string();
    assert!(!message.contains("changed identifier"), "{message}");
    assert!(message.contains("1 line missing"), "{message}");
}

#[test]
fn resent_delete_file_is_a_no_op_only_beside_other_already_applied_operations() {
    let t = TempTree::with(&[("gone.txt", "bye\n"), ("x.txt", "a\nb\nc\n")]);
    let patch = "*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: x.txt\n@@\n a\n\
                 -b\n+B\n c\n*** End Patch\n";
    resend_is_a_no_op(&t, patch);
    // Alone, a Delete of a missing file may be a mistyped path: file_not_found.
    let alone = "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n";
    let out = run_checked(&t, &["--json"], alone);
    assert_eq!(out.json()["error"]["code"], "file_not_found");
    let message = out.json()["error"]["message"].to_string();
    assert!(
        message.contains("may already have been deleted"),
        "{message}"
    );
    // Beside an operation that still changes something: file_not_found too.
    let changing = "*** Begin Patch\n*** Delete File: gone.txt\n*** Update File: x.txt\n@@\n a\n\
                    -B\n+b2\n c\n*** End Patch\n";
    let out = run_checked(&t, &["--json"], changing);
    assert_eq!(out.json()["error"]["code"], "file_not_found");
    // Two Deletes of missing files have no already-applied operation to vouch for them.
    let two = "*** Begin Patch\n*** Delete File: gone.txt\n*** Delete File: nope.txt\n\
               *** End Patch\n";
    let out = run_checked(&t, &["--json"], two);
    assert_eq!(out.json()["error"]["code"], "file_not_found");
}

/// A code-like file (blank and `}` lines repeat, every 7-line window is unique) and a unified
/// diff of `hunks` edits cycling replace / insert / delete, one every 100 lines: the shape
/// of the synthetic benchmark's 10,000-hunk diff, smaller.
fn many_hunk_diff(hunks: usize) -> (String, String) {
    let lines: Vec<String> = (0..hunks * 100 + 100)
        .map(|i| match i % 10 {
            0 => String::new(),
            9 => "}".to_string(),
            1 => format!("fn item_{i:07}(x: usize) -> Result<(), Error> {{"),
            _ => format!("    let v_{i} = w.call({}, \"k\");", i % 97),
        })
        .collect();
    let mut diff = String::from("--- a/big.txt\n+++ b/big.txt\n");
    let mut delta: isize = 0;
    for k in 0..hunks {
        let a = 55 + k * 100 + k % 7;
        let ctx = |r: std::ops::Range<usize>| -> String {
            r.map(|i| format!(" {}\n", lines[i])).collect()
        };
        let (lo, body, old_len, new_len) = match k % 3 {
            0 => {
                let new = format!("{} // edited {k}", lines[a]);
                let body = format!(
                    "{}-{}\n+{new}\n{}",
                    ctx(a - 3..a),
                    lines[a],
                    ctx(a + 1..a + 4)
                );
                (a - 3, body, 7, 7)
            }
            1 => {
                let ins = format!("+    // inserted {k}\n+    trace!(\"hunk {k}\");\n");
                (
                    a - 2,
                    format!("{}{ins}{}", ctx(a - 2..a + 1), ctx(a + 1..a + 4)),
                    6,
                    8,
                )
            }
            _ => {
                let body = format!("{}-{}\n{}", ctx(a - 3..a), lines[a], ctx(a + 1..a + 4));
                (a - 3, body, 7, 6)
            }
        };
        let new_start = lo as isize + 1 + delta;
        diff.push_str(&format!(
            "@@ -{},{old_len} +{new_start},{new_len} @@\n{body}",
            lo + 1
        ));
        delta += new_len as isize - old_len as isize;
    }
    let file = lines.iter().map(|l| format!("{l}\n")).collect();
    (file, diff)
}

#[test]
fn many_hunk_diff_sent_twice_is_a_no_op() {
    let (file, diff) = many_hunk_diff(300);
    let t = TempTree::with(&[("big.txt", &file)]);
    resend_is_a_no_op(&t, &diff);
    let got = t.read_str("big.txt");
    assert_eq!(got.matches("// edited").count(), 100);
    assert_eq!(got.matches("trace!").count(), 100);
    assert_eq!(got.lines().count(), file.lines().count() + 100);
}
