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
