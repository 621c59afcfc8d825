//! The command line end to end: the real binary on real temp trees. Every case snapshots
//! stdout, stderr and the exit status; every refusal also proves the tree did not change.

use std::ffi::OsStr;

use crate::assert_cli_snapshot;
use crate::util::{Entry, Output, TempTree};

/// Run a patch that must be refused with `code`; the tree must be byte-identical afterwards.
fn refused(tree: &TempTree, args: &[&str], stdin: &str, code: &str) -> Output {
    let before = tree.snapshot();
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let json = tree.run(&json_args, stdin);
    assert_eq!(json.json()["error"]["code"], code, "{}", json.stdout);
    assert_eq!(json.json()["ok"], false);
    let out = tree.run(args, stdin);
    assert_ne!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.snapshot(), before, "a refusal changed the tree");
    out
}

const AGENT: &str = "\
*** Begin Patch
*** Add File: notes/todo.txt
+write tests
+ship it
*** Update File: src/greet.py
@@ def greet(name):
-    print(\"Hello, \" + name)
+    print(f\"Hello, {name}!\")
*** Delete File: old.txt
*** End Patch
";

fn sample() -> TempTree {
    TempTree::with(&[
        ("src/greet.py", "import sys\n\ndef greet(name):\n    print(\"Hello, \" + name)\n\nif __name__ == \"__main__\":\n    greet(sys.argv[1])\n"),
        ("old.txt", "obsolete\n"),
    ])
}

#[test]
fn agent_patch_adds_updates_deletes() {
    let tree = sample();
    let out = tree.run(&[], AGENT);
    assert_cli_snapshot!("agent_add_update_delete", out);
    assert_eq!(tree.read_str("notes/todo.txt"), "write tests\nship it\n");
    assert!(tree
        .read_str("src/greet.py")
        .contains("print(f\"Hello, {name}!\")"));
    assert!(!tree.root().join("old.txt").exists());
}

#[test]
fn agent_patch_as_inline_argument() {
    let tree = sample();
    let out = tree.run(&[AGENT], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read_str("notes/todo.txt"), "write tests\nship it\n");
}

#[test]
fn patch_file_with_root_option() {
    let tree = sample();
    let patch = tree.outside("change.patch");
    std::fs::write(&patch, AGENT).expect("write patch");
    let root = tree.root();
    let out = tree.run(
        &["--root", &root.to_string_lossy(), &patch.to_string_lossy()],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(!root.join("old.txt").exists());
}

#[test]
fn json_report_on_success() {
    let tree = sample();
    let out = tree.run(&["--json"], AGENT);
    assert_cli_snapshot!("json_success", out);
    let v = out.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["files"].as_array().map(Vec::len), Some(3));
    assert_eq!(v["files"][1]["hunks"][0]["line"], 4);
}

#[test]
fn check_writes_nothing() {
    let tree = sample();
    let before = tree.snapshot();
    let out = tree.run(&["--check"], AGENT);
    assert_cli_snapshot!("check", out);
    assert_eq!(out.status, 0);
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn diff_prints_the_result() {
    let tree = sample();
    let out = tree.run(&["--check", "--diff"], AGENT);
    assert_cli_snapshot!("check_diff", out);
    assert!(out.stdout.contains("+    print(f\"Hello, {name}!\")"));
}

const GIT_DIFF: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 3b18e51..a0b1c2d 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 pub fn answer() -> u32 {
-    41
+    42
 }
diff --git a/run.sh b/run.sh
new file mode 100755
index 0000000..1111111
--- /dev/null
+++ b/run.sh
@@ -0,0 +1,2 @@
+#!/bin/sh
+cargo test
diff --git a/README b/README.md
similarity index 100%
rename from README
rename to README.md
";

fn rust_tree() -> TempTree {
    TempTree::with(&[
        ("src/lib.rs", "pub fn answer() -> u32 {\n    41\n}\n"),
        ("README", "# demo\n"),
    ])
}

#[test]
fn git_diff_modifies_adds_executable_and_renames() {
    let tree = rust_tree();
    let out = tree.run(&[], GIT_DIFF);
    assert_cli_snapshot!("git_diff", out);
    assert_eq!(
        tree.read_str("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n"
    );
    let snap = tree.snapshot();
    assert_eq!(
        snap.get("run.sh"),
        Some(&Entry::File {
            bytes: b"#!/bin/sh\ncargo test\n".to_vec(),
            mode: 0o755
        })
    );
    assert!(snap.contains_key("README.md") && !snap.contains_key("README"));
}

#[test]
fn reverse_undoes_a_git_diff() {
    let tree = rust_tree();
    let before = tree.snapshot();
    assert_eq!(tree.run(&[], GIT_DIFF).status, 0);
    let out = tree.run(&["--reverse"], GIT_DIFF);
    assert_cli_snapshot!("reverse", out);
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn strip_zero_keeps_paths() {
    let tree = TempTree::with(&[("a/x.txt", "one\ntwo\n")]);
    let diff = "--- a/x.txt\n+++ a/x.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n";
    let out = tree.run(&["-p", "0"], diff);
    assert_cli_snapshot!("strip_zero", out);
    assert_eq!(tree.read_str("a/x.txt"), "one\n2\n");
}

#[test]
fn include_and_exclude_select_files() {
    let tree = rust_tree();
    let out = tree.run(&["--include", "src/**", "--exclude", "README*"], GIT_DIFF);
    assert_cli_snapshot!("include_exclude", out);
    assert!(tree.root().join("README").exists());
    assert!(!tree.root().join("run.sh").exists());
    assert!(tree.read_str("src/lib.rs").contains("42"));
}

#[test]
fn json_edit_request() {
    let tree = TempTree::with(&[("config.toml", "name = \"demo\"\nversion = \"0.1.0\"\n")]);
    let edits = r#"{"edits": [{"op": "replace", "path": "config.toml", "old": "version = \"0.1.0\"", "new": "version = \"0.2.0\""}]}"#;
    let out = tree.run(&[], edits);
    assert_cli_snapshot!("json_edits", out);
    assert_eq!(
        tree.read_str("config.toml"),
        "name = \"demo\"\nversion = \"0.2.0\"\n"
    );
}

#[test]
fn whole_patch_already_applied_is_a_noop() {
    let tree = sample();
    assert_eq!(tree.run(&[], AGENT).status, 0);
    let again = "*** Begin Patch\n*** Update File: src/greet.py\n@@ def greet(name):\n-    print(\"Hello, \" + name)\n+    print(f\"Hello, {name}!\")\n*** End Patch\n";
    let before = tree.snapshot();
    let out = tree.run(&[], again);
    assert_cli_snapshot!("already_applied_noop", out);
    assert_eq!(out.status, 0);
    assert_eq!(tree.snapshot(), before);
}

#[test]
fn codex_drop_in_output() {
    let tree = sample();
    let out = tree.run_as_codex(&[OsStr::new(AGENT)], "");
    assert_cli_snapshot!("codex_mode", out);
    assert_eq!(tree.read_str("notes/todo.txt"), "write tests\nship it\n");
}

#[test]
fn codex_drop_in_refusal() {
    let tree = TempTree::with(&[("a.txt", "x\n")]);
    let before = tree.snapshot();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-missing\n+changed\n*** End Patch\n";
    let out = tree.run_as_codex(&[OsStr::new(patch)], "");
    assert_cli_snapshot!("codex_mode_refused", out);
    assert_eq!(out.status, 1);
    assert_eq!(tree.snapshot(), before);
}

// ---- refusals: one per error code ----

#[test]
fn parse_error_shows_the_line() {
    let tree = TempTree::with(&[("foo.txt", "x\n")]);
    let out = refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n",
        "parse_error",
    );
    assert_cli_snapshot!("err_parse_error", out);
}

#[test]
fn context_not_found_shows_nearest_text() {
    let tree = TempTree::with(&[("a.py", "def f():\n\treturn 1\n\ndef g():\n\treturn 2\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def g():\n-    return 3\n+    return 4\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "context_not_found");
    assert_cli_snapshot!("err_context_not_found", out);
}

#[test]
fn ambiguous_match_lists_candidates() {
    let tree = TempTree::with(&[("a.txt", "x = 1\ny\nx = 1\nz\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x = 1\n+x = 2\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "ambiguous_match");
    assert_cli_snapshot!("err_ambiguous_match", out);
}

#[test]
fn delete_of_missing_file() {
    let tree = TempTree::with(&[("foo.txt", "x\n")]);
    let out = refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n",
        "file_not_found",
    );
    assert_cli_snapshot!("err_file_not_found", out);
    assert!(out.stderr.contains("may already have been deleted"));
}

#[test]
fn add_over_existing_file() {
    let tree = TempTree::with(&[("a.txt", "old\n")]);
    let out = refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Add File: a.txt\n+new\n*** End Patch\n",
        "file_exists",
    );
    assert_cli_snapshot!("err_file_exists", out);
}

#[test]
fn move_onto_existing_file() {
    let tree = TempTree::with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let patch =
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n*** End Patch\n";
    refused(&tree, &[], patch, "file_exists");
}

#[test]
fn delete_of_directory() {
    let tree = TempTree::with(&[("dir/foo.txt", "x\n")]);
    let out = refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Delete File: dir\n*** End Patch\n",
        "is_directory",
    );
    assert_cli_snapshot!("err_is_directory", out);
}

#[test]
fn paths_outside_the_root() {
    let tree = TempTree::with(&[("a.txt", "x\n")]);
    let out = refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n",
        "path_escape",
    );
    assert_cli_snapshot!("err_path_escape", out);
    refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+x\n*** End Patch\n",
        "path_escape",
    );
    refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Add File: /etc/apply-patch-test\n+x\n*** End Patch\n",
        "path_escape",
    );
    assert!(!tree.outside("escape.txt").exists());
}

#[test]
fn symlink_leading_outside_is_refused() {
    let tree = TempTree::with(&[("a.txt", "x\n")]);
    std::fs::write(tree.outside("secret.txt"), "secret\n").expect("write outside");
    tree.symlink("link.txt", "../secret.txt");
    let patch = "*** Begin Patch\n*** Update File: link.txt\n@@\n-secret\n+leaked\n*** End Patch\n";
    refused(&tree, &[], patch, "path_escape");
    assert_eq!(
        std::fs::read_to_string(tree.outside("secret.txt"))
            .ok()
            .as_deref(),
        Some("secret\n")
    );
}

#[test]
fn symlink_inside_is_followed_for_update_and_deleted_as_link() {
    let tree = TempTree::with(&[("real.txt", "one\n")]);
    tree.symlink("link.txt", "real.txt");
    let patch = "*** Begin Patch\n*** Update File: link.txt\n@@\n-one\n+two\n*** End Patch\n";
    let out = tree.run(&[], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read_str("real.txt"), "two\n");
    assert_eq!(
        tree.snapshot().get("link.txt"),
        Some(&Entry::Symlink(b"real.txt".to_vec()))
    );
    let out = tree.run(
        &[],
        "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch\n",
    );
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(!tree.snapshot().contains_key("link.txt"));
    assert_eq!(tree.read_str("real.txt"), "two\n");
}

#[test]
fn binary_file_is_refused() {
    let tree = TempTree::new();
    tree.write("data.bin", b"head\n\0\x01\x02\ntail\n");
    let patch = "*** Begin Patch\n*** Update File: data.bin\n@@\n-tail\n+TAIL\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "binary_file");
    assert_cli_snapshot!("err_binary_file", out);
}

#[test]
fn invalid_utf8_for_agent_patches() {
    let tree = TempTree::new();
    tree.write("latin1.txt", b"caf\xe9\nbar\n");
    let patch = "*** Begin Patch\n*** Update File: latin1.txt\n@@\n-bar\n+baz\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "invalid_utf8");
    assert_cli_snapshot!("err_invalid_utf8", out);
    // A unified diff edits the same file byte for byte.
    let diff = "--- a/latin1.txt\n+++ b/latin1.txt\n@@ -2 +2 @@\n-bar\n+baz\n";
    let out = tree.run(&["--unidiff-zero"], diff);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read("latin1.txt"), b"caf\xe9\nbaz\n");
}

#[test]
fn notebooks_need_permission() {
    let tree = TempTree::with(&[("nb.ipynb", "{\n \"cells\": []\n}\n")]);
    let patch = "*** Begin Patch\n*** Update File: nb.ipynb\n@@\n- \"cells\": []\n+ \"cells\": [1]\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "unsupported_file");
    assert_cli_snapshot!("err_unsupported_file", out);
    let out = tree.run(&["--allow-notebooks"], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
}

#[test]
fn protected_files() {
    let tree = TempTree::with(&[("Cargo.lock", "# lock\n")]);
    let patch =
        "*** Begin Patch\n*** Update File: Cargo.lock\n@@\n-# lock\n+# edited\n*** End Patch\n";
    let out = refused(&tree, &["--protect", "*.lock"], patch, "protected_file");
    assert_cli_snapshot!("err_protected_file", out);
}

#[test]
fn stale_base() {
    let tree = TempTree::with(&[("a.txt", "one\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n*** Base: 0123456789abcdef\n@@\n-one\n+two\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "stale_file");
    assert_cli_snapshot!("err_stale_file", out);
}

#[test]
fn blob_id_mismatch_warns_or_refuses_with_strict_base() {
    let tree = TempTree::with(&[("a.txt", "one\n")]);
    let diff = "diff --git a/a.txt b/a.txt\nindex 1234567..89abcde 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n";
    refused(&tree, &["--strict-base"], diff, "stale_file");
    let out = tree.run(&[], diff);
    assert_cli_snapshot!("base_mismatch_warning", out);
    assert_eq!(tree.read_str("a.txt"), "two\n");
}

#[test]
fn partly_applied_patch_is_refused() {
    let tree = TempTree::with(&[("a.txt", "one\ntwo\nthree\nfour\nfive\nsix\nseven\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n@@\n six\n-seven\n+SEVEN\n*** End Patch\n";
    assert_eq!(tree.run(&[], patch).status, 0);
    tree.write("a.txt", b"one\nTWO\nthree\nfour\nfive\nsix\nseven\n");
    let out = refused(&tree, &[], patch, "already_applied");
    assert_cli_snapshot!("err_already_applied", out);
}

#[test]
fn all_or_nothing_when_a_later_file_fails() {
    let tree = TempTree::with(&[("a.txt", "a\n")]);
    let patch = "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: missing.txt\n@@\n-old\n+new\n*** End Patch\n";
    let out = refused(&tree, &[], patch, "file_not_found");
    assert_cli_snapshot!("err_all_or_nothing", out);
}

// ---- usage errors ----

#[test]
fn reverse_needs_a_unified_diff() {
    let tree = sample();
    let out = refused(&tree, &["--reverse"], AGENT, "usage");
    assert_eq!(out.status, 2);
    assert_cli_snapshot!("err_usage_reverse", out);
}

#[test]
fn agent_options_with_git_flags_that_mean_nothing_are_a_usage_error_saying_why() {
    // The agent options combine with the git flags (tests/it/git/combine.rs); these pairs
    // cannot mean anything, and the message says why.
    let tree = sample();
    let out = refused(&tree, &["--rebase", "--cached"], AGENT, "usage");
    assert_eq!(out.status, 2);
    assert_cli_snapshot!("err_usage_agent_with_git", out);
    for (args, why) in [
        (
            &["--preview", "--3way", "--conflict-markers"][..],
            "not a change to confirm",
        ),
        (
            &["--post-check", "true", "--check"],
            "a check writes nothing",
        ),
        (&["--max-risk", "50", "--3way"], "needs a git work tree"),
        (&["--preview", "--index"], "needs a git work tree"),
    ] {
        let out = refused(&tree, args, AGENT, "usage");
        assert_eq!(out.status, 2, "{args:?}: {}", out.normalized());
        assert!(out.stderr.contains(why), "{args:?}: {}", out.stderr);
    }
}

#[test]
fn unknown_flag_is_a_usage_error_also_in_json() {
    let tree = sample();
    let out = tree.run(&["--frobnicate"], "");
    assert_eq!(out.status, 2);
    let out = tree.run(&["--json", "--frobnicate"], "");
    assert_cli_snapshot!("err_usage_json", out);
    assert_eq!(out.json()["error"]["code"], "usage");
}

#[test]
fn missing_patch_file_is_a_usage_error() {
    let tree = sample();
    let out = tree.run(&["--json", "no-such.patch"], "");
    assert_eq!(out.status, 2);
    assert_eq!(out.json()["error"]["code"], "usage");
}

#[test]
fn empty_input_is_a_parse_error() {
    let tree = sample();
    let out = refused(&tree, &[], "", "parse_error");
    assert_eq!(out.status, 1);
}

#[test]
fn help_shows_examples() {
    let tree = TempTree::new();
    let out = tree.run(&["--help"], "");
    assert_eq!(out.status, 0);
    assert!(out.stdout.contains("Examples:"));
}

#[test]
fn completions_and_man_page() {
    let tree = TempTree::new();
    let out = tree.run(&["completions", "bash"], "");
    assert_eq!(out.status, 0);
    assert!(out.stdout.contains("apply-patch"));
    let out = tree.run(&["man"], "");
    assert_eq!(out.status, 0);
    assert!(out.stdout.contains(".TH"));
}

#[test]
fn shipped_examples_apply_cleanly() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for patch in [
        "rename-and-edit.patch",
        "quiet-flag.diff",
        "bump-version.json",
    ] {
        let tree = TempTree::new();
        crate::util::copy_dir(&examples.join("project"), &tree.root());
        let path = examples.join("patches").join(patch);
        let out = tree.run(&["--json", &path.to_string_lossy()], "");
        assert_eq!(out.status, 0, "{patch}: {}", out.stdout);
        assert!(
            out.json()["warnings"].as_array().is_some_and(Vec::is_empty),
            "{patch}: {}",
            out.stdout
        );
    }
}

// ---- binary, symlink and mode changes from git diffs ----

const BINARY_AND_LINK: &str = "\
diff --git a/b.bin b/b.bin
old mode 100644
new mode 100755
index 5e07d261855586626d75321e8ab899341f972802..ebc7c557c00d16e93b2e89451cf2c90cd8ce2e22
GIT binary patch
literal 7
OcmZQzWJ*j*VFdsKjsY+L

literal 6
NcmZQzWJ*j*1^@zG0V)6h

diff --git a/link b/link
new file mode 120000
index 0000000..52110cb
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+b.bin
\\ No newline at end of file
";

#[test]
fn git_binary_patch_symlink_and_mode() {
    let tree = TempTree::new();
    tree.write("b.bin", b"\x00\x01\x02abc");
    let out = tree.run(&[], BINARY_AND_LINK);
    assert_cli_snapshot!("binary_symlink_mode", out);
    let snap = tree.snapshot();
    assert_eq!(
        snap.get("b.bin"),
        Some(&Entry::File {
            bytes: b"\x00\x01\x02abd\x05".to_vec(),
            mode: 0o755
        })
    );
    assert_eq!(snap.get("link"), Some(&Entry::Symlink(b"b.bin".to_vec())));
    // Reversed, it restores the old bytes and mode and removes the link.
    let out = tree.run(&["-R"], BINARY_AND_LINK);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let snap = tree.snapshot();
    assert_eq!(
        snap.get("b.bin"),
        Some(&Entry::File {
            bytes: b"\x00\x01\x02abc".to_vec(),
            mode: 0o644
        })
    );
    assert!(!snap.contains_key("link"));
}

#[test]
fn binary_patch_on_another_base_is_refused() {
    let tree = TempTree::new();
    tree.write("b.bin", b"\x00other");
    refused(&tree, &[], BINARY_AND_LINK, "stale_file");
}

#[test]
fn binary_files_differ_without_data() {
    let tree = TempTree::new();
    tree.write("img.png", b"\x89PNG\x00");
    let diff = "diff --git a/img.png b/img.png\nindex 1111111..2222222 100644\nBinary files a/img.png and b/img.png differ\n";
    refused(&tree, &[], diff, "binary_file");
}

#[test]
fn heredoc_cd_is_the_base_of_paths() {
    let tree = TempTree::with(&[("sub/a.txt", "one\n")]);
    let patch = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\nEOF\n";
    let out = tree.run(&[], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read_str("sub/a.txt"), "two\n");
    let escape = "cd .. && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\nEOF\n";
    refused(&tree, &[], escape, "path_escape");
}

#[test]
fn directory_option_prefixes_paths() {
    let tree = TempTree::with(&[("pkg/x.txt", "one\ntwo\n")]);
    let diff = "--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n";
    let out = tree.run(&["--directory", "pkg"], diff);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read_str("pkg/x.txt"), "one\n2\n");
}

#[test]
fn crlf_bom_and_missing_final_newline_survive() {
    let tree = TempTree::new();
    tree.write("w.txt", b"\xEF\xBB\xBFa\r\nb\r\nc");
    let patch = "*** Begin Patch\n*** Update File: w.txt\n@@\n a\n-b\n+B\n+B2\n*** End Patch\n";
    let out = tree.run(&[], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read("w.txt"), b"\xEF\xBB\xBFa\r\nB\r\nB2\r\nc");
}

#[test]
fn executable_bit_is_kept_on_update() {
    let tree = TempTree::new();
    tree.write_mode("run.sh", b"#!/bin/sh\necho a\n", 0o755);
    let patch = "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo a\n+echo b\n*** End Patch\n";
    assert_eq!(tree.run(&[], patch).status, 0);
    assert_eq!(
        tree.snapshot().get("run.sh"),
        Some(&Entry::File {
            bytes: b"#!/bin/sh\necho b\n".to_vec(),
            mode: 0o755
        })
    );
}

#[test]
fn undo_restores_and_recover_has_nothing_to_do() {
    let tree = sample();
    let before = tree.snapshot();
    assert_eq!(tree.run(&[], AGENT).status, 0);
    let out = tree.run(&["undo"], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(
        out.stdout.starts_with("undid transaction "),
        "{}",
        out.stdout
    );
    assert_eq!(tree.snapshot(), before);
    let out = tree.run(&["recover"], "");
    assert_cli_snapshot!("recover_nothing", out);
    let out = tree.run(&["undo", "--json"], "");
    assert_eq!(out.json()["ok"], true);
}

#[test]
fn convert_agent_to_unified() {
    let tree = TempTree::new();
    let patch = "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n";
    let out = tree.run(&["convert", "--to", "unified"], patch);
    assert_cli_snapshot!("convert_to_unified", out);
}

#[test]
fn binary_deletion_without_data_needs_a_full_blob_id() {
    let tree = TempTree::new();
    tree.write("b.bin", b"\x00\x01\x02abc");
    let short = "diff --git a/b.bin b/b.bin\ndeleted file mode 100644\nindex 5e07d26..0000000\nBinary files a/b.bin and /dev/null differ\n";
    refused(&tree, &[], short, "binary_file");
    let full = "diff --git a/b.bin b/b.bin\ndeleted file mode 100644\nindex 5e07d261855586626d75321e8ab899341f972802..0000000000000000000000000000000000000000\nBinary files a/b.bin and /dev/null differ\n";
    let out = tree.run(&[], full);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(!tree.root().join("b.bin").exists());
}

#[test]
fn symlink_changed_and_deleted_by_a_diff() {
    let tree = TempTree::with(&[("b.txt", "b\n"), ("c.txt", "c\n")]);
    tree.symlink("link", "b.txt");
    let change = "diff --git a/link b/link\nindex 1111111..2222222 120000\n--- a/link\n+++ b/link\n@@ -1 +1 @@\n-b.txt\n\\ No newline at end of file\n+c.txt\n\\ No newline at end of file\n";
    let out = tree.run(&[], change);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let snap = tree.snapshot();
    assert_eq!(snap.get("link"), Some(&Entry::Symlink(b"c.txt".to_vec())));
    assert_eq!(tree.read_str("b.txt"), "b\n");
    let delete = "diff --git a/link b/link\ndeleted file mode 120000\nindex 2222222..0000000\n--- a/link\n+++ /dev/null\n@@ -1 +0,0 @@\n-c.txt\n\\ No newline at end of file\n";
    let out = tree.run(&[], delete);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let snap = tree.snapshot();
    assert!(!snap.contains_key("link"));
    assert_eq!(tree.read_str("c.txt"), "c\n");
}

#[test]
fn fuzzy_and_offset_warnings() {
    let tree = TempTree::with(&[("a.txt", "x\ny\none  \ntwo\nthree\n")]);
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
    let out = tree.run(&["--json"], diff);
    assert_cli_snapshot!("fuzzy_offset_json", out);
    assert_eq!(tree.read_str("a.txt"), "x\ny\none  \nTWO\nthree\n");
}

/// SPEC §5 "Fuzz", §8: a hunk whose outer context lines drifted is placed with them ignored;
/// the report gives its `fuzz` and a `fuzz` warning quotes the lines (`-F 0`: refused).
#[test]
fn fuzz_report_and_warning() {
    let file = "fn begin() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    let z = 9;\n}\n";
    let tree = TempTree::with(&[("a.rs", file)]);
    let diff = "--- a/a.rs\n+++ b/a.rs\n@@ -1,5 +1,5 @@\n fn start() {\n     let a = 1;\n-    let b = 2;\n+    let b = 20;\n     let c = 3;\n     let z = 0;\n";
    let out = tree.run(&["--json", "-F", "0"], diff);
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert!(
        out.stdout.contains("context_not_found"),
        "{}",
        out.normalized()
    );
    let out = tree.run(&["--json", "--check"], diff);
    assert_cli_snapshot!("fuzz_json", out);
    let out = tree.run(&[], diff);
    assert_cli_snapshot!("fuzz_human", out);
    let done = file.replace("b = 2;", "b = 20;");
    assert_eq!(tree.read_str("a.rs"), done);
    // Sent again, the trimmed hunk is found already applied: a no-op, not a second edit.
    let out = tree.run(&["--json"], diff);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let codes: Vec<&str> = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(
        codes.contains(&"already_applied") && codes.contains(&"fuzz"),
        "{report}"
    );
    assert_eq!(tree.read_str("a.rs"), done);
}

#[test]
fn absolute_paths_inside_the_root_are_accepted() {
    let tree = TempTree::with(&[("a.txt", "one\n")]);
    let root = tree.root();
    let patch = format!(
        "*** Begin Patch\n*** Update File: {0}/a.txt\n@@\n-one\n+two\n*** Add File: {0}/new/b.txt\n+b\n*** End Patch\n",
        root.display()
    );
    let out = tree.run(&["--json"], &patch);
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(out.json()["files"][1]["path"], "new/b.txt");
    assert_eq!(tree.read_str("a.txt"), "two\n");
    assert_eq!(tree.read_str("new/b.txt"), "b\n");
}

#[test]
fn overlapping_hunks_are_refused() {
    let tree = TempTree::with(&[("a.txt", "one\ntwo\nthree\n")]);
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n@@ -2,2 +2,2 @@\n-two\n+TWO\n three\n";
    let out = refused(&tree, &[], diff, "overlapping_hunks");
    assert_cli_snapshot!("err_overlapping_hunks", out);
}

#[test]
fn line_range_expected_mismatch() {
    let tree = TempTree::with(&[("a.txt", "alpha\nbeta\ngamma\ndelta\n")]);
    let edits = r#"{"edits": [{"op": "line_range", "path": "a.txt", "start_line": 1, "end_line": 3, "expected": "alpha\nbeta\nepsilon\n", "new_content": "x\n"}]}"#;
    let out = refused(&tree, &[], edits, "expected_mismatch");
    assert_cli_snapshot!("err_expected_mismatch", out);
}

#[test]
fn memory_and_disk_trees_give_the_same_report() {
    use apply_patch::pipeline::{apply_bytes, Mode, Options, Target};
    use apply_patch::report::Report;
    use apply_patch::tree::MemTree;
    let tree = sample();
    let mut mem = MemTree::new();
    for (path, entry) in tree.snapshot() {
        if let Entry::File { bytes, .. } = entry {
            mem.insert(&path, bytes);
        }
    }
    // `check` on both: the disk run must not need a state directory (no environment to set
    // in a test binary whose threads run in parallel).
    let diff = Options::builder().diff(true).build();
    let disk = Report::from(&apply_bytes(
        Target::Dir(&tree.root()),
        AGENT.as_bytes(),
        &diff,
        Mode::Check,
    ));
    let memory = Report::from(&apply_bytes(
        Target::Memory(&mut mem),
        AGENT.as_bytes(),
        &diff,
        Mode::Check,
    ));
    assert!(disk.ok, "{:?}", disk.error);
    assert_eq!(disk, memory);
    let applied = Report::from(&apply_bytes(
        Target::Memory(&mut mem),
        AGENT.as_bytes(),
        &Options::default(),
        Mode::Write,
    ));
    assert!(applied.ok);
    assert_eq!(tree.run(&[], AGENT).status, 0);
    for (path, entry) in tree.snapshot() {
        if let Entry::File { bytes, .. } = entry {
            assert_eq!(mem.get(&path), Some(bytes.as_slice()), "{path}");
        }
    }
    assert!(mem.get("old.txt").is_none());
}

#[test]
fn directory_symlinks_and_nested_repositories() {
    let tree = TempTree::with(&[
        ("real/a.txt", "one\n"),
        ("sub/.git", "gitdir: ../.git/modules/sub\n"),
        ("sub/b.txt", "b\n"),
    ]);
    tree.symlink("alias", "real");
    std::fs::create_dir(tree.outside("elsewhere")).expect("mkdir outside");
    tree.symlink("out", "../elsewhere");
    // A directory symlink inside the root is followed.
    let patch = "*** Begin Patch\n*** Update File: alias/a.txt\n@@\n-one\n+two\n*** End Patch\n";
    let out = tree.run(&[], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(tree.read_str("real/a.txt"), "two\n");
    // One leading outside is not, even to create a file.
    refused(
        &tree,
        &[],
        "*** Begin Patch\n*** Add File: out/x.txt\n+x\n*** End Patch\n",
        "path_escape",
    );
    assert!(!tree.outside("elsewhere/x.txt").exists());
    // Outside a git work tree a folder with its own `.git` is just a folder…
    let patch = "*** Begin Patch\n*** Update File: sub/b.txt\n@@\n-b\n+B\n*** End Patch\n";
    let out = tree.run(&["--check"], patch);
    assert_eq!(out.status, 0, "{}", out.normalized());
    // …but inside one it is a submodule (or nested repository): out of bounds.
    tree.git_dir();
    let out = refused(&tree, &[], patch, "path_escape");
    assert_cli_snapshot!("err_path_escape_submodule", out);
}

/// A file over 1 MiB takes the large-file path (hunks placed on two threads, the new content
/// a recipe of the old one written piece by piece, its SHA-256 taken while it is staged):
/// the result, the report's hashes, a dry run, `--diff` and undo are as for any file.
#[test]
fn a_large_file_gets_the_same_result_report_and_undo_as_any_file() {
    use sha2::Digest;
    let hex = |bytes: &[u8]| {
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let old: String = (0..60_000)
        .map(|i| format!("line {i} of a large file\n"))
        .collect();
    assert!(old.len() > 1 << 20, "large enough for the large-file path");
    let tree = TempTree::new();
    tree.write("big.txt", old.as_bytes());
    let patch = "--- a/big.txt\n+++ b/big.txt\n\
        @@ -10,3 +10,4 @@\n line 9 of a large file\n-line 10 of a large file\n+line ten\n+line ten and a half\n line 11 of a large file\n\
        @@ -59990,3 +59991,2 @@\n line 59989 of a large file\n-line 59990 of a large file\n line 59991 of a large file\n";
    let new = old
        .replace(
            "\nline 10 of a large file\n",
            "\nline ten\nline ten and a half\n",
        )
        .replace("\nline 59990 of a large file\n", "\n");

    let checked = tree.run(&["--check", "--json", "--diff"], patch);
    assert_eq!(checked.status, 0, "{}", checked.normalized());
    let json = checked.json();
    assert_eq!(json["files"][0]["old_sha256"], hex(old.as_bytes()));
    assert_eq!(json["files"][0]["new_sha256"], hex(new.as_bytes()));
    let diff = json["diff"].as_str().expect("a diff");
    assert!(diff.contains("+line ten and a half\n") && diff.contains("-line 59990 of"));
    assert_eq!(
        tree.read("big.txt"),
        old.as_bytes(),
        "a dry run writes nothing"
    );

    let applied = tree.run(&["--json"], patch);
    assert_eq!(applied.status, 0, "{}", applied.normalized());
    assert_eq!(tree.read_str("big.txt"), new);
    assert_eq!(
        applied.json()["files"][0]["new_sha256"],
        hex(new.as_bytes())
    );

    let undone = tree.run(&["undo"], "");
    assert_eq!(undone.status, 0, "{}", undone.normalized());
    assert_eq!(tree.read_str("big.txt"), old);
}
