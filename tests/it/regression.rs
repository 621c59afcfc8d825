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
fn agent_patch_cut_off_before_end_patch_is_refused_not_half_applied() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    // A model's output truncated by a token limit: the second file stops mid-line.
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n\
                 *** Add File: notes.md\n+# Notes\n+The model was cut off in the mid";
    let out = run_checked(&t, &["--json"], patch);
    assert_eq!(out.status, 1, "{}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "parse_error");
    assert!(error["message"]
        .as_str()
        .is_some_and(|m| m.contains("cut off")));
    // The same in a heredoc that closes before `*** End Patch`.
    let heredoc =
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\nEOF\n";
    assert_eq!(run_checked(&t, &[], heredoc).status, 1);
    // A whole heredoc still applies.
    let whole = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n\
                 *** End Patch\nEOF\n";
    applies(&t, &[], whole);
    assert_eq!(t.read_str("a.txt"), "ONE\n");
}

#[test]
fn heredoc_cd_to_an_absolute_folder_is_that_folder_not_a_relative_one() {
    let t = TempTree::with(&[("sub/a.txt", "one\n")]);
    let root = std::fs::canonicalize(t.root()).expect("canonical root");
    let patch = |dir: &str| {
        format!(
            "cd {dir} && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n\
             +two\n*** Add File: b.txt\n+bee\n*** End Patch\nEOF\n"
        )
    };
    applies(&t, &[], &patch(&format!("{}/sub", root.display())));
    assert_eq!(t.read_str("sub/a.txt"), "two\n");
    assert_eq!(t.read_str("sub/b.txt"), "bee\n");
    // Outside the root, an absolute DIR is an escape, whatever lies below the root.
    let outside = t.outside("elsewhere");
    std::fs::create_dir_all(outside.join("sub")).expect("mkdir outside");
    let out = run_checked(&t, &["--json"], &patch(&outside.display().to_string()));
    assert_eq!(out.json()["error"]["code"], "path_escape", "{}", out.stdout);
    assert!(!outside.join("b.txt").exists());
}

#[test]
fn corrupt_git_index_warns_on_a_plain_apply_and_refuses_index_flags() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .current_dir(t.root())
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "a.txt"]);
    git(&["commit", "-qm", "init"]);
    std::fs::write(t.root().join(".git/index"), b"DIRC garbage").expect("corrupt the index");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n";
    for flag in ["--index", "--cached", "--3way"] {
        let out = run_checked(&t, &["--json", flag], patch);
        assert_eq!(
            out.json()["error"]["code"],
            "io_error",
            "{flag}: {}",
            out.stdout
        );
    }
    let out = applies(&t, &["--json"], patch);
    assert_eq!(out.json()["warnings"][0]["code"], "index_unreadable");
    assert_eq!(t.read_str("a.txt"), "two\n");
}

#[test]
fn nul_in_a_path_is_a_parse_error_and_an_add_of_a_folder_path_is_refused() {
    let t = TempTree::new();
    for patch in [
        "*** Begin Patch\n*** Add File: a\0b\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: dir/\n+x\n*** End Patch\n",
        r#"{"edits": [{"op": "create", "path": "a\u0000b", "content": "x\n"}]}"#,
        r#"{"edits": [{"op": "create", "path": "dir/", "content": "x\n"}]}"#,
    ] {
        let out = run_checked(&t, &["--json"], patch);
        assert_eq!(
            out.json()["error"]["code"],
            "parse_error",
            "{patch:?}: {}",
            out.stdout
        );
    }
    assert!(t.snapshot().is_empty(), "no file `dir` or `a` was made");
}
