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

// Unix only: the git fixtures need the git CLI (absent under Wine).
#[test]
#[cfg(unix)]
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

/// The selectors of an ambiguity's candidates (`error.candidates[].select`), each split into
/// its lines: the line that makes the file's numbers trusted (`*** Base:` or `index`), if any,
/// then the `@@` line. Also checks that the refusal is `ambiguous_match`.
fn selectors(out: &crate::util::Output) -> Vec<(Option<String>, String)> {
    let json = out.json();
    assert_eq!(json["error"]["code"], "ambiguous_match", "{}", out.stdout);
    json["error"]["candidates"]
        .as_array()
        .expect("candidates")
        .iter()
        .map(|c| {
            let select = c["select"].as_str().expect("a selector");
            match select.rsplit_once('\n') {
                Some((trust, at)) => (Some(trust.to_string()), at.to_string()),
                None => (None, select.to_string()),
            }
        })
        .collect()
}

/// Send `patch(trust line, @@ line)` with each candidate's selector of the refusal of
/// `patch(None, first)` on `file`: each must land on its candidate, giving `want[k]`.
fn every_candidate_lands(
    file: &str,
    first: &str,
    patch: impl Fn(Option<&str>, &str) -> String,
    want: &[&str],
) {
    let t = TempTree::with(&[("p.txt", file)]);
    let out = run_checked(&t, &["--json"], &patch(None, first));
    let selects = selectors(&out);
    assert_eq!(selects.len(), want.len(), "{}", out.stdout);
    for ((trust, at), want) in selects.iter().zip(want) {
        let t = TempTree::with(&[("p.txt", file)]);
        let sent = patch(trust.as_deref(), at);
        applies(&t, &["--json"], &sent);
        assert_eq!(t.read_str("p.txt"), *want, "{sent}");
    }
}

#[test]
fn an_ambiguous_hunk_resent_with_a_candidates_selector_lands_there() {
    // Agent hunks: the selector is the file's `*** Base:` line (numbers count only under it,
    // SPEC §5 "Trust in line numbers") and an `@@ -N @@` line in place of the hunk's @@ lines.
    let agent = |body: &'static str| {
        move |trust: Option<&str>, at: &str| {
            let base = trust.map(|b| format!("{b}\n")).unwrap_or_default();
            format!("*** Begin Patch\n*** Update File: p.txt\n{base}{at}\n{body}*** End Patch\n")
        }
    };
    // Equal once whitespace is ignored: a level-3 ambiguity.
    every_candidate_lands(
        "a:\n\tgo()\nb:\n  go()\n",
        "@@",
        agent("-    go()\n+    stop()\n"),
        &["a:\n\tstop()\nb:\n  go()\n", "a:\n\tgo()\nb:\n  stop()\n"],
    );
    // Exact copies; a guessed number between them chooses nothing.
    every_candidate_lands(
        "x = 1\ny\nx = 1\nz\n",
        "@@ -2 @@",
        agent("-x = 1\n+x = 2\n"),
        &["x = 2\ny\nx = 1\nz\n", "x = 1\ny\nx = 2\nz\n"],
    );
    // An anchor in two places: its selector goes above the anchor line.
    let far = "//\n".repeat(25);
    let file = format!("impl A {{\n    x();\n}}\n{far}impl A {{\n    x();\n}}\n");
    let first = file.replacen("    x();", "    y();", 1);
    let second = {
        let cut = file.rfind("    x();").expect("the second x");
        format!("{}    y();{}", &file[..cut], &file[cut + 8..])
    };
    every_candidate_lands(
        &file,
        "@@",
        |trust, at| agent("@@ impl A {\n-    x();\n+    y();\n")(trust, at),
        &[&first, &second],
    );
    // A unified diff whose `index` id says the file changed since: its numbers do not
    // choose; the selector gives the `index` line with the file's blob id.
    let unified = |trust: Option<&str>, at: &str| {
        let index = trust.unwrap_or("index 1234567..89abcde");
        format!(
            "diff --git a/p.txt b/p.txt\n{index} 100644\n--- a/p.txt\n+++ b/p.txt\n{at}\n \n+// added\n /**\n"
        )
    };
    let file = format!("fn a() {{}}\n\n/**\n */\n{}\n/**\n */\n", "x\n".repeat(12));
    let near = file.replacen("\n\n/**", "\n\n// added\n/**", 1);
    let far = {
        let cut = file.rfind("\n\n/**").expect("the second place");
        format!("{}\n\n// added\n{}", &file[..cut], &file[cut + 2..])
    };
    every_candidate_lands(&file, "@@ -17,2 +17,3 @@", unified, &[&near, &far]);
}

/// Issue 24, wrong case (a): a two-line generic context (a blank line and `/**`) matched
/// exactly at the diff's line number in a file whose `index` blob id said it had changed
/// since, and also 15 lines above: the line number chose, and chose wrong. An untrusted
/// number no longer chooses; a trusted one (no `index` line, or a matching one) still does.
#[test]
fn a_line_number_of_a_diff_whose_index_says_the_file_changed_chooses_nothing() {
    let file = format!("fn a() {{}}\n\n/**\n */\n{}\n/**\n */\n", "x\n".repeat(12));
    let diff = |index: &str| {
        format!(
            "diff --git a/p.txt b/p.txt\n{index}--- a/p.txt\n+++ b/p.txt\n@@ -17,2 +17,3 @@\n \n+// added\n /**\n"
        )
    };
    let t = TempTree::with(&[("p.txt", &file)]);
    let out = run_checked(&t, &["--json"], &diff("index 1234567..89abcde 100644\n"));
    assert_eq!(
        out.json()["error"]["code"],
        "ambiguous_match",
        "{}",
        out.stdout
    );
    // The same diff without the stale id: its number is evidence, and chooses line 17.
    applies(&t, &["--json"], &diff(""));
    let cut = file.rfind("\n\n/**").expect("the second place");
    let want = format!("{}\n\n// added\n{}", &file[..cut], &file[cut + 2..]);
    assert_eq!(t.read_str("p.txt"), want);
}

/// Issue 24, wrong case (b): an agent hunk without numbers whose only context was `}` was
/// taken as unique in the window around "the line after the previous hunk", a hint nobody
/// wrote. It must be unique below the previous hunk: two `}` there is `ambiguous_match`.
#[test]
fn a_derived_hint_opens_no_window() {
    let mut file = String::from("fn a() {\n    one();\n}\n");
    for i in 0..25 {
        file.push_str(&format!("// {i}\n"));
    }
    file.push_str("fn b() {\n}\n");
    let t = TempTree::with(&[("m.rs", &file)]);
    let patch = "*** Begin Patch\n*** Update File: m.rs\n@@\n fn a() {\n-    one();\n+    uno();\n@@\n }\n+// after a\n*** End Patch\n";
    let out = run_checked(&t, &["--json"], patch);
    assert_eq!(out.status, 1, "{}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(
        (&error["code"], &error["hunk"]),
        (&"ambiguous_match".into(), &2.into())
    );
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

/// Runs the binary in the root with `args`, killed after `secs`: `None` when it had to be
/// (a read that blocks forever), else the exit status, stdout and stderr.
#[cfg(unix)]
fn run_bounded(t: &TempTree, args: &[&str], secs: u64) -> Option<(i32, String, String)> {
    use std::io::Read as _;
    let mut child = t
        .command(env!("CARGO_BIN_EXE_apply-patch"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the binary") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    let _ = child.stdout.take().map(|mut s| s.read_to_string(&mut out));
    let _ = child.stderr.take().map(|mut s| s.read_to_string(&mut err));
    Some((status.code().unwrap_or(-1), out, err))
}

/// A raw MCP session over the binary's stdin/stdout: `lines` are sent (after the
/// handshake), and the answers with an `id` are returned by id, as long as they come within
/// `secs`.
fn mcp_session(
    t: &TempTree,
    lines: &[String],
    secs: u64,
) -> std::collections::HashMap<String, serde_json::Value> {
    use std::io::{BufRead as _, Write as _};
    let mut child = t
        .command(env!("CARGO_BIN_EXE_apply-patch"))
        .arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the server starts");
    let stdout = child.stdout.take().expect("stdout was piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin was piped");
    let hello = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let mut send = |line: &str| {
        let _ = stdin.write_all(line.as_bytes());
        let _ = stdin.write_all(b"\n");
        let _ = stdin.flush();
    };
    send(hello);
    let timeout = std::time::Duration::from_secs(secs);
    let mut answers = std::collections::HashMap::new();
    if let Ok(line) = rx.recv_timeout(timeout) {
        answers.insert("init".to_string(), serde_json::Value::String(line));
    }
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    for line in lines {
        send(line);
    }
    let deadline = std::time::Instant::now() + timeout;
    while answers.len() < lines.len() + 1 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            break;
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        let id = match &value["id"] {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        answers.insert(id, value);
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    answers
}

/// A `tools/call` request line with the id `id`.
fn tool_call(id: &str, tool: &str, args: serde_json::Value) -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    })
    .to_string()
}

/// The error code of a tool answer (`""` when it succeeded).
fn tool_error(answer: Option<&serde_json::Value>) -> String {
    let answer = answer.expect("the server answered");
    answer["result"]["structuredContent"]["error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn read_of_an_in_root_symlink_to_git_config_is_refused_like_a_read_of_git_config() {
    let t = TempTree::with(&[(".git/config", "[remote]\n\turl = https://tok@h/r\n")]);
    t.symlink("cfg", ".git/config");
    t.symlink("gitdir", ".git");
    for path in ["cfg", "gitdir/config", ".git/config", ".GIT/config"] {
        let out = t.run(&["read", path, "--json"], "");
        assert_eq!(out.status, 1, "read {path}: {}", out.stdout);
        assert_eq!(out.json()["error"]["code"], "path_escape", "{path}");
        assert!(!out.stdout.contains("tok@"), "{}", out.stdout);
    }
    let calls = vec![
        tool_call("1", "read", serde_json::json!({"path": "cfg"})),
        tool_call("2", "range", serde_json::json!({"path": "cfg", "line": 1})),
        tool_call(
            "3",
            "check_balance",
            serde_json::json!({"path": "gitdir/config"}),
        ),
    ];
    let answers = mcp_session(&t, &calls, 20);
    for id in ["1", "2", "3"] {
        assert_eq!(tool_error(answers.get(id)), "path_escape", "call {id}");
        assert!(!answers[id].to_string().contains("tok@"), "call {id}");
    }
    // A link to a file inside the root is still followed.
    t.write("real.txt", b"inside\n");
    t.symlink("link", "real.txt");
    let out = t.run(&["read", "link", "--json"], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(out.json()["lines"][0], "inside");
}

// Unix only: Windows has no FIFO.
#[test]
#[cfg(unix)]
fn read_range_and_check_balance_refuse_a_fifo_instead_of_blocking() {
    let t = TempTree::new();
    let fifo = std::ffi::CString::new(t.root().join("p.rs").to_string_lossy().as_bytes())
        .expect("no NUL in a temp path");
    // SAFETY: a valid C string; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    for args in [
        &["read", "p.rs", "--json"][..],
        &["read", "p.rs", "--around", "1", "--json"],
        &["range", "p.rs", "--line", "1", "--json"],
        &["check-balance", "p.rs", "--json"],
    ] {
        let (status, stdout, _) =
            run_bounded(&t, args, 10).unwrap_or_else(|| panic!("{args:?} blocked on a fifo"));
        assert_eq!(status, 1, "{args:?}: {stdout}");
        let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
        assert_eq!(json["error"]["code"], "unsupported_file", "{args:?}");
    }
    let calls = vec![
        tool_call("1", "read", serde_json::json!({"path": "p.rs"})),
        tool_call("2", "range", serde_json::json!({"path": "p.rs", "line": 1})),
        tool_call("3", "check_balance", serde_json::json!({"path": "p.rs"})),
    ];
    let answers = mcp_session(&t, &calls, 10);
    for id in ["1", "2", "3"] {
        assert_eq!(tool_error(answers.get(id)), "unsupported_file", "call {id}");
    }
}

/// Applies `patch` with the commit paused at failpoint step `k`, which must be the step named
/// `step`; runs `meanwhile` during the pause and returns the exit status and the JSON report.
fn apply_paused_at(
    t: &TempTree,
    patch: &str,
    (k, step): (usize, &str),
    meanwhile: impl FnOnce(),
) -> (i32, serde_json::Value) {
    use std::io::{BufRead as _, Read as _, Write as _};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .arg("--json")
        .current_dir(t.root())
        .env("XDG_STATE_HOME", t.outside("state"))
        .env("HOME", t.outside("state"))
        .env("APPLY_PATCH_FAILPOINT", format!("commit:{k}:pause"))
        .env("APPLY_PATCH_FAILPOINT_PAUSE_MS", "1500")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("stdin was piped");
    stdin.write_all(patch.as_bytes()).expect("write the patch");
    drop(stdin);
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("stderr was piped"));
    let mut line = String::new();
    stderr.read_line(&mut line).expect("read stderr");
    assert!(line.contains(&format!("pause at {step}")), "{line}");
    meanwhile();
    let mut stdout = String::new();
    let mut out = child.stdout.take().expect("stdout was piped");
    out.read_to_string(&mut stdout).expect("read stdout");
    let status = child.wait().expect("the binary finishes");
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    (status.code().unwrap_or(-1), json)
}

#[test]
fn an_edit_by_another_program_after_our_rename_is_kept_and_the_rest_is_committed() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\
                 *** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n";
    // Steps: journal, stage a, stage b, backup a, backup b, rename a, rename b, folder sync.
    let at = (8, "folder sync");
    // An editor appends to a.txt once it holds our content.
    let t = TempTree::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let (status, json) = apply_paused_at(&t, patch, at, || {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(t.root().join("a.txt"))
            .expect("open a.txt");
        std::io::Write::write_all(&mut f, b"later\n").expect("append");
    });
    assert_eq!(status, 0, "{json}");
    assert_eq!(t.read_str("a.txt"), "A\nlater\n");
    assert_eq!(t.read_str("b.txt"), "B\n");
    let warning = json["warnings"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["code"] == "later_edit"))
        .unwrap_or_else(|| panic!("a later_edit warning: {json}"));
    assert_eq!(warning["path"], "a.txt");
    // Nothing is left to recover: the tree stays as it is.
    let out = t.run(&["recover", "--json"], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(t.read_str("a.txt"), "A\nlater\n");
    assert_eq!(t.read_str("b.txt"), "B\n");

    // An editor that saves exactly our new bytes (a new file renamed over ours) is not
    // reverted either.
    let t = TempTree::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let (status, json) = apply_paused_at(&t, patch, at, || {
        std::fs::write(t.root().join("a.saved"), "A\n").expect("write");
        std::fs::rename(t.root().join("a.saved"), t.root().join("a.txt")).expect("rename");
    });
    assert_eq!(status, 0, "{json}");
    assert_eq!(
        (t.read_str("a.txt"), t.read_str("b.txt")),
        ("A\n".into(), "B\n".into())
    );
}

/// Runs the binary through `sh -c 'ulimit -n N; exec …'` with the patch on stdin.
fn run_with_open_file_limit(
    t: &TempTree,
    limit: usize,
    args: &[&str],
    patch: &str,
) -> (i32, String) {
    use std::io::Write as _;
    let script = format!("ulimit -n {limit} && exec \"$0\" \"$@\"");
    let mut child = t
        .command("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_apply-patch"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut stdin = child.stdin.take().expect("stdin was piped");
    stdin.write_all(patch.as_bytes()).expect("write the patch");
    drop(stdin);
    let out = child.wait_with_output().expect("the binary finishes");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn a_patch_adding_files_in_1500_folders_commits_under_an_open_file_limit_of_256() {
    let t = TempTree::with(&[("keep.txt", "k\n")]);
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..1500 {
        patch.push_str(&format!("*** Add File: d{i}/sub/f.txt\n+{i}\n"));
    }
    patch.push_str("*** End Patch\n");
    let (status, out) = run_with_open_file_limit(&t, 256, &["--json"], &patch);
    assert_eq!(status, 0, "{}", &out[..out.len().min(2000)]);
    assert_eq!(t.read_str("d0/sub/f.txt"), "0\n");
    assert_eq!(t.read_str("d1499/sub/f.txt"), "1499\n");
}

#[test]
fn output_that_cannot_be_written_is_reported_not_ignored() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: this machine has no /dev/full");
        return;
    };
    let t = TempTree::with(&[("a.txt", "a\n")]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .args(["read", "a.txt", "--json"])
        .current_dir(t.root())
        .env("XDG_STATE_HOME", t.outside("state"))
        .env("HOME", t.outside("state"))
        .stdout(full)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("the binary runs");
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write the output"), "{stderr}");
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
    // The other writer gets a second to reach its commit (a debug binary on a loaded
    // machine), and pauses 1.5 s there: less than the 2 s the rollback waits for the lock.
    let check = format!(
        "APPLY_PATCH_FAILPOINT=commit:1:pause APPLY_PATCH_FAILPOINT_PAUSE_MS=1500 {} {} \
         >/dev/null 2>&1 & sleep 1; exit 1",
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

/// Applies `patch` with the commit crashing (failpoint `abort`) at step `k`, which must be
/// the step named `step`.
fn apply_crashing_at(t: &TempTree, patch: &str, (k, step): (usize, &str)) {
    let out = t.run_with_failpoint(&[], patch, &format!("commit:{k}:abort"));
    let abort = format!("abort at {step}");
    assert!(out.stderr.contains(&abort), "{}", out.stderr);
}

#[test]
fn a_crash_after_a_rename_then_an_edit_by_another_program_is_finished_not_rolled_back() {
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n\
                 *** Update File: b.txt\n@@\n-b\n+B\n*** End Patch\n";
    // Steps: journal, stage a, stage b, backup a, backup b, rename a, rename b: the crash
    // comes with a.txt renamed and b.txt not; then an editor appends to a.txt.
    let crashed_and_edited = || {
        let t = TempTree::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
        apply_crashing_at(&t, patch, (7, "rename b.txt"));
        assert_eq!(
            (t.read_str("a.txt"), t.read_str("b.txt")),
            ("A\n".into(), "b\n".into()),
            "precondition: half renamed"
        );
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(t.root().join("a.txt"))
            .expect("open a.txt");
        std::io::Write::write_all(&mut f, b"later\n").expect("append");
        t
    };
    let later_edit = |warnings: &serde_json::Value| {
        warnings.as_array().is_some_and(|w| {
            w.iter()
                .any(|w| w["code"] == "later_edit" && w["path"] == "a.txt")
        })
    };

    // `recover` finishes the commit around the edit: b.txt new, a.txt as the editor left it.
    let t = crashed_and_edited();
    let out = t.run(&["recover", "--json"], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["action"], "completed", "{json}");
    assert!(later_edit(&json["warnings"]), "{json}");
    assert_eq!(t.read_str("a.txt"), "A\nlater\n");
    assert_eq!(t.read_str("b.txt"), "B\n");
    let again = t.run(&["recover", "--json"], "");
    assert_eq!(
        again.json()["action"],
        serde_json::Value::Null,
        "{}",
        again.stdout
    );

    // So does the next run, which says so in its warnings before applying its own patch.
    let t = crashed_and_edited();
    let add = "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch\n";
    let out = t.run(&["--json"], add);
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert!(later_edit(&out.json()["warnings"]), "{}", out.stdout);
    assert_eq!(t.read_str("a.txt"), "A\nlater\n");
    assert_eq!(t.read_str("b.txt"), "B\n");
    assert_eq!(t.read_str("c.txt"), "c\n");
}

#[test]
fn an_mcp_request_over_16_mib_is_answered_with_an_error_and_the_server_goes_on() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    let huge = format!(
        "*** Begin Patch\n*** Add File: big.txt\n{}*** End Patch\n",
        "+x\n".repeat(17 * 1024 * 1024 / 3)
    );
    let big = tool_call("big", "apply_patch", serde_json::json!({ "patch": huge }));
    assert!(big.len() > 17 * 1024 * 1024, "precondition: over 16 MiB");
    // The same without a readable id: answered without one.
    let anonymous = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#,
        "y".repeat(17 << 20)
    );
    let calls = vec![
        big,
        anonymous,
        tool_call("after", "read", serde_json::json!({"path": "a.txt"})),
    ];
    let answers = mcp_session(&t, &calls, 60);
    let error = &answers.get("big").expect("the big request was answered")["error"];
    assert_eq!(error["code"], -32600, "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("limit")),
        "{error}"
    );
    let anonymous = answers
        .get("null")
        .expect("the request without an id was answered");
    assert_eq!(anonymous["error"]["code"], -32600, "{anonymous}");
    assert_eq!(
        tool_error(answers.get("after")),
        "",
        "{:?}",
        answers.get("after")
    );
    assert!(!t.root().join("big.txt").exists());
}

#[test]
fn an_add_1000_folders_deep_with_long_folder_names_is_written() {
    // A 101 KB path: far past PATH_MAX, so no lookup by the whole path can work.
    let t = TempTree::with(&[("keep.txt", "k\n")]);
    let folders: Vec<String> = (0..1000)
        .map(|i| format!("{i:04}{}", "d".repeat(96)))
        .collect();
    let path = format!("{}/f.txt", folders.join("/"));
    let patch = format!("*** Begin Patch\n*** Add File: {path}\n+deep\n*** End Patch\n");
    let out = t.run(&["--json"], &patch);
    assert_eq!(
        out.status,
        0,
        "{}",
        &out.stdout[..out.stdout.len().min(2000)]
    );
    assert!(t.root().join(&folders[0]).join(&folders[1]).is_dir());
    // Read back through the tool (the whole path is too long for one open).
    let read = t.run(&["read", &path, "--json"], "");
    assert_eq!(
        read.status,
        0,
        "{}",
        &read.stdout[..read.stdout.len().min(2000)]
    );
    assert_eq!(read.json()["lines"][0], "deep");
}

#[test]
fn git_diff_copying_a_file_it_also_modifies_copies_the_file_as_it_was() {
    // `git diff -C -C --find-copies-harder` of: f.txt edited, g.txt a copy of the old
    // f.txt with a line added. The copy's source is f.txt before the diff (as in git), not
    // f.txt as the first file patch left it.
    let t = TempTree::with(&[("f.txt", "one\ntwo\nthree\n")]);
    let patch = "diff --git a/f.txt b/f.txt\nindex 4cb29ea..ddc897f 100644\n--- a/f.txt\n\
                 +++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\
                 diff --git a/f.txt b/g.txt\nsimilarity index 73%\ncopy from f.txt\n\
                 copy to g.txt\nindex 4cb29ea..f384549 100644\n--- a/f.txt\n+++ b/g.txt\n\
                 @@ -1,3 +1,4 @@\n one\n two\n three\n+four\n";
    let out = applies(&t, &[], patch);
    assert!(!out.stdout.contains("base_mismatch"), "{}", out.stdout);
    assert_eq!(t.read_str("f.txt"), "one\nTWO\nthree\n");
    assert_eq!(t.read_str("g.txt"), "one\ntwo\nthree\nfour\n");
}

/// An agent patch that inserts at the top of a file and one that appends at its end, sent
/// twice (as an agent resends after a time-out): the second run is the already-applied no-op,
/// through the command line and the Codex drop-in (SPEC §5 "Already applied": a match of the
/// old side inside the new side's one match does not count).
#[test]
fn an_agent_insertion_at_either_end_sent_twice_is_applied_once() {
    use std::ffi::OsStr;
    let file = "def load(path):\n    return open(path).read()\n";
    let top =
        "*** Begin Patch\n*** Update File: m.py\n@@\n+import os\n def load(path):\n*** End Patch\n";
    let end = "*** Begin Patch\n*** Update File: m.py\n@@\n     return open(path).read()\n+\n+LIMIT = 3\n*** End Patch\n";
    let want = format!("import os\n{file}\nLIMIT = 3\n");
    let t = TempTree::with(&[("m.py", file)]);
    for patch in [top, end] {
        applies(&t, &["--json"], patch);
        let again = applies(&t, &["--json"], patch);
        let json = again.json();
        let codes: Vec<&serde_json::Value> = json["warnings"]
            .as_array()
            .map(|w| w.iter().map(|w| &w["code"]).collect())
            .unwrap_or_default();
        assert_eq!(codes, ["already_applied"], "{}", again.stdout);
    }
    assert_eq!(t.read_str("m.py"), want);
    let codex = TempTree::with(&[("m.py", file)]);
    for patch in [top, top, end, end] {
        let out = codex.run_as_codex(&[OsStr::new(patch)], "");
        assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    }
    assert_eq!(codex.read_str("m.py"), want);
}

/// A unified diff that adds a line at the start, one that adds a line at the end, and one that
/// only adds the final newline, each sent twice: `git apply` refuses the second run; we see
/// every one of them already applied (SPEC §5 "Anchored ends", "Already applied").
#[test]
fn a_unified_diff_at_the_ends_of_files_sent_twice_is_applied_once() {
    let t = TempTree::with(&[("a", "x\ny\nz\n"), ("b", "x\ny\nz\n"), ("c", "p\nq")]);
    let diff = "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,3 +1,4 @@\n+top\n x\n y\n z\n\
                diff --git a/b b/b\n--- a/b\n+++ b/b\n@@ -1,3 +1,4 @@\n x\n y\n z\n+end\n\
                diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,2 +1,2 @@\n p\n-q\n\\ No newline at end of file\n+q\n";
    applies(&t, &["--json"], diff);
    let after = t.snapshot();
    let again = applies(&t, &["--json"], diff);
    assert_eq!(again.json()["warnings"][0]["code"], "already_applied");
    assert_eq!(t.snapshot(), after);
    assert_eq!(
        (t.read_str("a"), t.read_str("b"), t.read_str("c")),
        (
            "top\nx\ny\nz\n".into(),
            "x\ny\nz\nend\n".into(),
            "p\nq\n".into()
        )
    );
    // And back, twice.
    applies(&t, &["--json", "-R"], diff);
    let before = t.snapshot();
    let again = applies(&t, &["--json", "-R"], diff);
    assert_eq!(again.json()["warnings"][0]["code"], "already_applied");
    assert_eq!(t.snapshot(), before);
    assert_eq!(t.read_str("c"), "p\nq");
}

/// Replay benchmark, ripgrep:bc9d12c4c82d: a diff of `benchsuite/benchsuite` onto a tree
/// where `benchsuite` is still the file was `io_error` ("benchsuite ... is not a folder").
/// A file under a file does not exist: a change to it is `file_not_found`, a deletion too,
/// and an addition `file_exists` naming the file in the way.
#[test]
fn a_path_under_a_file_is_a_missing_file_not_an_io_error() {
    let t = TempTree::with(&[("tool", "#!/bin/sh\necho one\n")]);
    let code = |patch: &str| {
        let out = run_checked(&t, &["--json"], patch);
        assert_ne!(out.status, 0, "{}", out.stdout);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json report");
        json["error"]["code"].as_str().expect("a code").to_string()
    };
    let unified =
        "--- a/tool/tool\n+++ b/tool/tool\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo one\n+echo two\n";
    assert_eq!(code(unified), "file_not_found");
    let agent =
        "*** Begin Patch\n*** Update File: tool/tool\n@@\n-echo one\n+echo two\n*** End Patch\n";
    assert_eq!(code(agent), "file_not_found");
    let delete = "*** Begin Patch\n*** Delete File: tool/tool\n*** End Patch\n";
    assert_eq!(code(delete), "file_not_found");
    let add = "*** Begin Patch\n*** Add File: tool/x\n+x\n*** End Patch\n";
    assert_eq!(code(add), "file_exists");
    assert_eq!(t.read_str("tool"), "#!/bin/sh\necho one\n");
}

/// Replayed from click's history (970364db2570 onto a base 19 commits older): a hunk near the
/// top of a file whose upper context had changed, and whose lower context is two blank lines
/// and a `def`. Fuzz stopped at step 1, since step 2 on both ends would leave only the blank
/// lines; the top end alone may lose its second line, and the insertion lands where git puts it.
#[test]
fn fuzz_goes_on_at_one_end_when_both_would_leave_only_blank_lines() {
    let file = "import sys\nimport codecs\nfrom collections import deque\n\nfrom ._compat import text_type, string_types, PY2\n\n\ndef unpack_args(args, nargs_spec):\n    \"\"\"Given an iterable of arguments\n    \"\"\"\n    return args\n";
    let t = TempTree::with(&[("utils.py", file)]);
    let patch = "--- a/utils.py\n+++ b/utils.py\n@@ -4,6 +4,9 @@ from collections import deque\n from ._compat import text_type, string_types, \\\n      PY2, get_best_encoding\n \n+if not PY2:\n+    from ._compat import _find_binary_writer\n+\n \n def unpack_args(args, nargs_spec):\n     \"\"\"Given an iterable of arguments\n";
    let out = applies(&t, &["--json"], patch);
    let want = file.replace(
        "PY2\n\n\ndef",
        "PY2\n\nif not PY2:\n    from ._compat import _find_binary_writer\n\n\ndef",
    );
    assert_eq!(t.read_str("utils.py"), want);
    assert!(out.stdout.contains("\"fuzz\": 3"), "{}", out.stdout);
}
