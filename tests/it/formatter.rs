//! `--formatter GLOB=CMD` end to end through the binary (issue 25 item 2): the formatted
//! bytes are what is written, shown (diff, hashes, line counts) and undone; a failing or
//! hanging formatter refuses the patch with nothing written; other files are left as the
//! patch made them.

use std::time::{Duration, Instant};

use sha2::Digest as _;

use crate::util::TempTree;

/// Spaces around `=`: a formatter anyone has (`sed`).
const SPACE_EQUALS: &str = "*.py=sed 's/ *= */ = /'";

const PATCH: &str = "\
*** Begin Patch
*** Update File: app.py
@@
-y=2
+y=3
*** Add File: new.py
+z=4
*** Update File: notes.txt
@@
-k=v
+k=w
*** Delete File: old.py
*** End Patch
";

fn tree() -> TempTree {
    TempTree::with(&[
        ("app.py", "x=1\ny=2\n"),
        ("notes.txt", "k=v\n"),
        ("old.py", "gone=1\n"),
    ])
}

fn sha256(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn formatted_bytes_are_written_shown_and_undone() {
    let t = tree();
    let before = t.snapshot();
    let out = t.run(&["--json", "--diff", "--formatter", SPACE_EQUALS], PATCH);
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(t.read_str("app.py"), "x = 1\ny = 3\n");
    assert_eq!(t.read_str("new.py"), "z = 4\n");
    // The glob does not match: the patch's bytes, as they were planned.
    assert_eq!(t.read_str("notes.txt"), "k=w\n");
    assert!(!t.root().join("old.py").exists());
    let json = out.json();
    let files = json["files"].as_array().expect("files");
    let file = |path: &str| {
        files
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {json}"))
    };
    for path in ["app.py", "new.py", "notes.txt"] {
        assert_eq!(file(path)["new_sha256"], sha256(&t.read(path)), "{path}");
    }
    assert_eq!(
        file("app.py")["snippet"]["lines"],
        serde_json::json!(["x = 1", "y = 3"])
    );
    let diff = json["diff"].as_str().expect("a diff");
    for line in [
        "-x=1\n-y=2\n+x = 1\n+y = 3\n",
        "+z = 4\n",
        "-k=v\n+k=w\n",
        "-gone=1\n",
    ] {
        assert!(diff.contains(line), "{line:?} not in\n{diff}");
    }
    // The human summary counts the formatted lines (2 changed in app.py, not 1).
    let t2 = tree();
    let human = t2.run(&["--formatter", SPACE_EQUALS], PATCH);
    assert_eq!(human.status, 0, "{}", human.stderr);
    assert!(
        human.stdout.contains("app.py") && human.stdout.contains("+2 -2"),
        "{}",
        human.stdout
    );
    let undo = t.run(&["undo"], "");
    assert_eq!(undo.status, 0, "{}", undo.stderr);
    assert_eq!(t.snapshot(), before, "undo reverts the formatted write");
}

#[test]
fn a_failing_formatter_refuses_the_patch_and_writes_nothing() {
    let t = tree();
    let before = t.snapshot();
    let out = t.run(
        &[
            "--json",
            "--formatter",
            "*.py=echo 'cannot parse' >&2; exit 3",
        ],
        PATCH,
    );
    assert_eq!(out.status, 1, "{}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "formatter_failed");
    assert_eq!(error["path"], "app.py");
    assert_eq!(
        error["message"],
        "the formatter `echo 'cannot parse' >&2; exit 3` failed on app.py: exited with status 3"
    );
    assert_eq!(error["details"]["stderr_tail"], "cannot parse\n");
    assert_eq!(error["details"]["exit_code"], 3);
    assert_eq!(t.snapshot(), before, "nothing written");
}

/// A formatter that rewrites the file in place and prints nothing (`prettier --write`) would
/// empty every file it matched: refused, nothing written.
#[test]
fn a_formatter_that_prints_nothing_for_a_non_empty_file_refuses() {
    let t = tree();
    let before = t.snapshot();
    let out = t.run(&["--json", "--formatter", "*.py=cat >/dev/null"], PATCH);
    assert_eq!(out.status, 1, "{}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "formatter_failed");
    assert_eq!(error["details"]["status"], "empty_output");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("printed nothing")),
        "{error}"
    );
    assert_eq!(t.snapshot(), before, "nothing written");
}

#[test]
fn a_hanging_formatter_is_killed_at_its_timeout_and_refuses() {
    let t = tree();
    let before = t.snapshot();
    let started = Instant::now();
    let out = t.run(
        &[
            "--json",
            "--formatter",
            "*.py=sleep 30",
            "--formatter-timeout",
            "1",
        ],
        PATCH,
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "killed in time"
    );
    assert_eq!(out.status, 1, "{}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "formatter_failed");
    assert_eq!(error["details"]["status"], "timed_out");
    assert_eq!(t.snapshot(), before, "nothing written");
}

#[test]
fn a_formatter_sees_the_path_and_runs_in_the_root() {
    let t = tree();
    t.write("prefix", b"# formatted\n");
    let out = t.run(
        &[
            "--formatter",
            "*.py=cat prefix -; echo \"# $APPLY_PATCH_PATH\"",
        ],
        PATCH,
    );
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(t.read_str("new.py"), "# formatted\nz=4\n# new.py\n");
}

#[test]
fn a_formatter_that_is_not_glob_equals_command_is_a_usage_error() {
    let t = tree();
    let before = t.snapshot();
    for (spec, why) in [
        ("black -", "it has no `=` between the glob and the command"),
        ("=black -", "the glob before `=` is empty"),
        ("*.py=", "the command after `=` is empty"),
    ] {
        let out = t.run(&["--json", "--formatter", spec], PATCH);
        assert_eq!(out.status, 2, "{spec}");
        let error = &out.json()["error"];
        assert_eq!(error["code"], "usage");
        assert_eq!(
            error["message"],
            format!("{spec:?} is not a formatter: {why}")
        );
    }
    assert_eq!(t.snapshot(), before);
}

/// The formatted file's own diff piece is changed, wherever the planner recorded it: a
/// patch that deletes and adds the same path (two pieces, neither a modify) and one that
/// updates a path twice (two pieces, each a step) show the formatted bytes in the piece
/// that wrote them. The diff was once patched by searching its text for the file's whole
/// diff (its content before the patch to the planned content), which is in neither.
#[test]
fn the_diff_shows_the_formatted_bytes_when_a_path_has_more_than_one_piece() {
    let replaced = "\
*** Begin Patch
*** Delete File: app.py
*** Add File: app.py
+w=0
*** End Patch
";
    let twice = "\
*** Begin Patch
*** Update File: app.py
@@
-x=1
+x=5
*** Update File: app.py
@@
-y=2
+y=6
*** End Patch
";
    for (patch, written, shown) in [
        (replaced, "w = 0\n", "+w = 0\n"),
        (twice, "x = 5\ny = 6\n", "+y = 6\n"),
    ] {
        let t = tree();
        let out = t.run(&["--json", "--diff", "--formatter", SPACE_EQUALS], patch);
        assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
        assert_eq!(t.read_str("app.py"), written);
        let json = out.json();
        let diff = json["diff"].as_str().expect("a diff");
        assert!(diff.contains(shown), "{shown:?} not in\n{diff}");
    }
}

/// Two files with the same content and the same change, one matched by the glob: only its
/// piece shows the formatted bytes (each piece is its file's, not the first equal text).
#[test]
fn only_the_matched_file_of_two_equal_changes_is_formatted_in_the_diff() {
    let t = TempTree::with(&[("a.txt", "x=1\n"), ("b.py", "x=1\n")]);
    let patch = "\
*** Begin Patch
*** Update File: a.txt
@@
-x=1
+x=2
*** Update File: b.py
@@
-x=1
+x=2
*** End Patch
";
    let out = t.run(&["--json", "--diff", "--formatter", SPACE_EQUALS], patch);
    assert_eq!(out.status, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    let diff = json["diff"].as_str().expect("a diff");
    let want = "\
diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-x=1
+x=2
diff --git a/b.py b/b.py
--- a/b.py
+++ b/b.py
@@ -1 +1 @@
-x=1
+x = 2
";
    assert_eq!(diff, want);
}
