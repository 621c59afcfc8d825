//! `apply-patch convert`: the parse options it takes, and unified output that `git apply`
//! accepts for added and deleted files of agent patches and JSON requests.

use crate::util::TempTree;
use std::process::Command;

/// `git apply --check` of `diff` in `dir`; None when git is not installed.
fn git_apply_check(dir: &std::path::Path, diff: &str) -> Option<(bool, String)> {
    use std::io::Write;
    let mut child = match Command::new("git")
        .args(["apply", "--check", "-"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", dir)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => return None,
    };
    let mut stdin = child.stdin.take().expect("piped");
    stdin
        .write_all(diff.as_bytes())
        .expect("the diff is written");
    drop(stdin);
    let out = child.wait_with_output().expect("git finishes");
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn convert_takes_the_parse_options() {
    let tree = TempTree::new();
    // -p 2 strips `x/y/`.
    let deep = "--- x/y/f.txt\n+++ x/y/f.txt\n@@ -1 +1 @@\n-a\n+b\n";
    let out = tree.run(&["convert", "--to", "agent", "-p", "2"], deep);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("*** Update File: f.txt\n"),
        "{}",
        out.stdout
    );
    // --recount: counts that are wrong are counted instead.
    let miscounted = "--- a/f.txt\n+++ b/f.txt\n@@ -1,5 +1,5 @@\n a\n-b\n+c\n";
    let out = tree.run(&["convert", "--to", "agent", "--json"], miscounted);
    assert_eq!(out.json()["error"]["code"], "parse_error");
    let out = tree.run(&["convert", "--to", "agent", "--recount"], miscounted);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("-b\n+c\n"), "{}", out.stdout);
    // --unidiff-zero: a zero-context hunk in the middle of a file.
    let zero = "--- a/f.txt\n+++ b/f.txt\n@@ -5,0 +6 @@\n+x\n";
    let out = tree.run(&["convert", "--to", "unified", "--json"], zero);
    assert_eq!(out.json()["error"]["code"], "parse_error");
    let out = tree.run(&["convert", "--to", "unified", "--unidiff-zero"], zero);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stdout.contains("@@ -5,0 +6 @@\n+x\n"), "{}", out.stdout);
    // --format forces the format (here a diff read as JSON is refused).
    let out = tree.run(
        &["convert", "--to", "agent", "--format", "json", "--json"],
        deep,
    );
    assert_eq!(out.json()["error"]["code"], "parse_error");
    // Before the subcommand they work too.
    let out = tree.run(&["-p", "2", "convert", "--to", "agent"], deep);
    assert_eq!(out.status, 0, "{}", out.stderr);
    // Other subcommands still refuse them, and convert refuses the other apply options.
    let out = tree.run(&["-p", "2", "undo", "--json"], "");
    assert_eq!(out.json()["error"]["code"], "usage");
    let out = tree.run(&["--reverse", "convert", "--to", "agent", "--json"], deep);
    assert_eq!(out.json()["error"]["code"], "usage");
}

#[test]
fn converted_added_and_deleted_files_have_git_mode_lines() {
    // An agent or JSON delete carries no content, so its diff has no hunk, and git accepts
    // a deletion without a hunk only for an empty file ("removal patch leaves file contents").
    let tree = TempTree::with(&[("old.txt", ""), ("keep.txt", "k\n")]);
    let agent = "*** Begin Patch\n*** Add File: dir/new.txt\n+hello\n*** Delete File: old.txt\n*** End Patch\n";
    let json = r#"{"edits": [{"op": "create", "path": "dir/new.txt", "content": "hello\n"},
        {"op": "delete", "path": "old.txt"}]}"#;
    for patch in [agent, json] {
        let out = tree.run(&["convert", "--to", "unified"], patch);
        assert_eq!(out.status, 0, "{}", out.stderr);
        let diff = &out.stdout;
        assert!(
            diff.contains("new file mode 100644\n--- /dev/null\n+++ b/dir/new.txt\n"),
            "{diff}"
        );
        assert!(
            diff.ends_with("diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n"),
            "{diff}"
        );
        match git_apply_check(&tree.root(), diff) {
            None => eprintln!("skipped: git is not installed"),
            Some((ok, stderr)) => assert!(ok, "git apply --check refused:\n{stderr}\n{diff}"),
        }
    }
}
