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
fn three_way_rename_keeps_the_local_edit_of_the_old_path() {
    // The hunk (line 6) does not fit because of a local edit in its context (line 4): the
    // fallback must merge into a.txt as it is, not write the patched base blob to b.txt.
    let s = crate::git::Scratch::new(&[]);
    let numbered: String = (1..=9).map(|i| format!("{i}\n")).collect();
    s.write("a.txt", &numbered);
    s.commit_all("init");
    s.git(&["mv", "a.txt", "b.txt"]);
    s.write("b.txt", &numbered.replace("6\n", "six\n"));
    s.git(&["add", "-A"]);
    let diff = s.git(&["diff", "--cached", "-M"]);
    s.git(&["reset", "-q", "--hard"]);
    s.write("a.txt", &numbered.replace("4\n", "four\n"));

    let run = s.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["warnings"][0]["code"], "merged", "{}", run.stdout);
    assert_eq!(report["warnings"][0]["path"], "b.txt");
    let merged = std::fs::read_to_string(s.dir.join("b.txt")).unwrap();
    assert_eq!(merged, "1\n2\n3\nfour\n5\nsix\n7\n8\n9\n");
    assert!(!s.dir.join("a.txt").exists());
}

#[test]
fn a_git_file_whose_gitdir_is_no_git_dir_is_not_followed() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    let elsewhere = t.outside("elsewhere");
    let text = format!("gitdir: {}\n", elsewhere.display());
    std::fs::write(t.root().join(".git"), text).expect("plant the .git file");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n";
    applies(&t, &["--json"], patch);
    assert!(
        !elsewhere.exists(),
        "state was created where the .git file points"
    );
    // An existing folder that is no git dir is not followed either.
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+three\n*** End Patch\n";
    applies(&t, &["--json"], patch);
    let inside: Vec<_> = std::fs::read_dir(&elsewhere).expect("list").collect();
    assert!(
        inside.is_empty(),
        "state was created in {}",
        elsewhere.display()
    );
    assert_eq!(t.read_str("a.txt"), "three\n");
}

#[test]
fn second_hunk_with_one_line_of_context_lands_below_the_first_not_above() {
    let mut file = String::from("fn a() {\n    x();\n}\n\nfn b() {\n    old();\n");
    for i in 0..25 {
        file.push_str(&format!("    step({i});\n"));
    }
    file.push_str("}\n");
    let t = TempTree::with(&[("m.rs", file.as_str())]);
    let patch = "*** Begin Patch\n*** Update File: m.rs\n@@\n fn b() {\n-    old();\n+    new();\n@@\n }\n+\n+fn show() {}\n*** End Patch\n";
    applies(&t, &["--json"], patch);
    let want = file.replace("old()", "new()") + "\nfn show() {}\n";
    assert_eq!(t.read_str("m.rs"), want);
}

#[test]
fn an_ambiguous_hunk_resent_with_a_candidates_selector_lands_there() {
    // Equal once whitespace is ignored: a level-3 ambiguity, which a line hint used to leave
    // ambiguous.
    let file = "a:\n\tgo()\nb:\n  go()\n";
    let t = TempTree::with(&[("p.txt", file)]);
    let patch = |header: &str| {
        format!("*** Begin Patch\n*** Update File: p.txt\n{header}\n-    go()\n+    stop()\n*** End Patch\n")
    };
    let out = run_checked(&t, &["--json"], &patch("@@"));
    assert_eq!(
        out.json()["error"]["code"],
        "ambiguous_match",
        "{}",
        out.stdout
    );
    let cands = out.json()["error"]["candidates"].clone();
    let selects: Vec<String> = cands
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| c["select"].as_str().expect("an @@ line").to_string())
        .collect();
    assert_eq!(selects, ["@@ -2 @@", "@@ -4 @@"]);
    applies(&t, &["--json"], &patch(&selects[1]));
    assert_eq!(t.read_str("p.txt"), "a:\n\tgo()\nb:\n  stop()\n");
}

#[test]
fn an_ambiguous_replace_resent_as_its_candidates_line_range_lands_there() {
    let file = "x = 1\nx = 2\nkeep\nlast\n";
    let t = TempTree::with(&[("c.py", file)]);
    let replace = r#"{"edits": [{"op": "replace", "path": "c.py", "old": "x", "new": "y"}]}"#;
    let out = run_checked(&t, &["--json"], replace);
    assert_eq!(
        out.json()["error"]["code"],
        "ambiguous_match",
        "{}",
        out.stdout
    );
    let select = out.json()["error"]["candidates"][1]["select"].clone();
    assert_eq!(select["path"], "c.py");
    let request = serde_json::json!({ "edits": [select] }).to_string();
    applies(&t, &["--json"], &request);
    assert_eq!(t.read_str("c.py"), "x = 1\ny = 2\nkeep\nlast\n");
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

/// Issue 14: a failed post-check's rollback undid *whichever transaction was last*: it looked
/// at the undo history before taking the root's lock, so a transaction that was committing
/// meanwhile (here: paused by a failpoint while it holds the lock) was the one reverted. The
/// revert now names its transaction id and decides under the lock: refused
/// (`rollback_failed`, naming it), and the other writer's change stays.
#[test]
fn a_post_check_rollback_never_reverts_another_writers_transaction() {
    let t = TempTree::with(&[("a.txt", "one\n"), ("b.txt", "bee\n")]);
    let other = t.outside("other.patch");
    std::fs::write(
        &other,
        "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n",
    )
    .expect("write the other patch");
    // The post-check starts another writer that takes the lock and pauses in its commit,
    // then fails; the rollback has to wait for the lock, and by then the other committed.
    let check = format!(
        "APPLY_PATCH_FAILPOINT=commit:1:pause APPLY_PATCH_FAILPOINT_PAUSE_MS=1000 {} {} \
         >/dev/null 2>&1 & sleep 0.4; exit 1",
        env!("CARGO_BIN_EXE_apply-patch"),
        other.display()
    );
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let out = t.run(
        &[
            "--json",
            "--post-check",
            &check,
            "--rollback-on-fail",
            patch,
        ],
        "",
    );
    // Both changes stand: this run's (not rolled back) and the other writer's.
    assert_eq!(t.read_str("a.txt"), "ONE\n");
    assert_eq!(t.read_str("b.txt"), "BEE\n");
    assert_eq!(out.status, 3, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["error"]["code"], "rollback_failed", "{json}");
    let message = json["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("committed after it"), "{message}");
    assert!(
        json["error"]["details"]["transaction"].is_string(),
        "{json}"
    );
    assert_eq!(json["verification"]["rolled_back"], false, "{json}");
}
