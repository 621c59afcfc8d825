//! A folder the commit creates is replaced by a symlink while the commit is paused (issue 23,
//! item 7): the commit, or the recovery after it is killed, finishes — it reports the path it
//! cannot reach, keeps what it cannot restore, never follows or removes the foreign symlink —
//! and the root is usable again. Before, the commit ended in `rollback_failed` and every
//! `recover` after it failed the same way. The real binary, paused by a failpoint. (Once a
//! folder is open, the live commit goes on through its handle wherever it was moved; a
//! recovery walks from the root again and meets the symlink.)

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use crate::util::TempTree;

/// Updates `a.txt` and adds `new/dir/f.txt` (the commit creates `new` and `new/dir`).
const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: new/dir/f.txt\n+made\n*** End Patch\n";

/// A git work tree with `a.txt`, and an empty folder `elsewhere` beside it.
fn tree() -> TempTree {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    t.git_dir();
    std::fs::create_dir(t.outside("elsewhere")).expect("mkdir");
    t
}

/// Runs the patch with the failpoint `commit:<k>:pause` at the first step `k` whose name is
/// `step` (a fresh tree for each try) and returns the tree and the paused child.
fn paused_at(step: &str, pause_ms: u32) -> (TempTree, Child) {
    for k in 1..40 {
        let t = tree();
        let mut cmd = t.command(env!("CARGO_BIN_EXE_apply-patch"));
        cmd.args(["--json", PATCH])
            .env("APPLY_PATCH_FAILPOINT", format!("commit:{k}:pause"))
            .env("APPLY_PATCH_FAILPOINT_PAUSE_MS", pause_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn apply-patch");
        let stderr = child.stderr.take().expect("piped stderr");
        let line = BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains(":pause at "))
            .unwrap_or_default();
        if line.ends_with(&format!(":pause at {step}")) {
            return (t, child);
        }
        child.kill().expect("kill");
        child.wait().expect("reap");
    }
    panic!("no step named {step}");
}

/// Swaps the folder `new` the commit made for a symlink to `elsewhere` (moving the real one
/// to `new.moved`), as another program could.
fn swap(t: &TempTree) {
    std::fs::rename(t.root().join("new"), t.outside("new.moved")).expect("move the folder");
    crate::util::symlink(
        &t.outside("elsewhere").display().to_string(),
        &t.root().join("new"),
    );
}

/// The symlink is still there, pointing where it did; nothing was written through it.
fn assert_link_untouched(t: &TempTree) {
    let link = std::fs::read_link(t.root().join("new")).expect("the symlink is kept");
    assert_eq!(link, t.outside("elsewhere"));
    let through = std::fs::read_dir(t.outside("elsewhere"))
        .expect("elsewhere")
        .count();
    assert_eq!(through, 0, "something was written through the symlink");
}

/// The root is usable: no journal is left, and a patch applies.
fn assert_usable(t: &TempTree) {
    assert!(!t.root().join(".git/apply-patch/journal").exists());
    let again = t.run(
        &[
            "--json",
            "*** Begin Patch\n*** Add File: b.txt\n+bee\n*** End Patch\n",
        ],
        "",
    );
    assert_eq!(again.status, 0, "{} {}", again.stdout, again.stderr);
    assert_eq!(t.read_str("b.txt"), "bee\n");
}

#[cfg_attr(windows, ignore = "makes a Unix symlink to a folder")]
#[test]
fn a_symlink_swapped_in_before_anything_is_written_under_it_is_a_clean_refusal() {
    let (t, child) = paused_at("mkdir new/dir", 2000);
    swap(&t);
    let out = child.wait_with_output().expect("the commit finishes");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(out.status.code(), Some(1), "{json}");
    assert_eq!(json["error"]["code"], "path_escape", "{json}");
    assert_eq!(t.read_str("a.txt"), "one\n", "rolled back");
    assert_link_untouched(&t);
    assert_usable(&t);
}

#[cfg_attr(windows, ignore = "makes a Unix symlink to a folder")]
#[test]
fn a_commit_killed_after_a_symlink_was_swapped_in_is_recovered_and_the_path_reported() {
    // Before any rename, and after every rename (the new file is then in the moved folder).
    for step in ["mkdir new/dir", "verify a.txt"] {
        let (t, mut child) = paused_at(step, 30_000);
        swap(&t);
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        let recover = t.run(&["--json", "recover"], "");
        assert_eq!(
            recover.status, 0,
            "{step}: {} {}",
            recover.stdout, recover.stderr
        );
        let report = recover.json();
        assert_eq!(report["action"], "rolled_back", "{step}: {report}");
        assert_eq!(
            report["conflicts"],
            serde_json::json!(["new/dir/f.txt"]),
            "{step}"
        );
        assert_eq!(report["blocked"][0]["at"], "new", "{step}: {report}");
        assert_eq!(report["blocked"][0]["symlink"], true, "{step}");
        let kept = report["kept"]
            .as_str()
            .expect("the journal and backups are kept");
        assert!(
            std::path::Path::new(kept).join("journal.json").is_file(),
            "{step}"
        );
        assert_eq!(t.read_str("a.txt"), "one\n", "{step}: rolled back");
        assert_link_untouched(&t);
        // What was written before the swap is where the other program moved it.
        let moved = std::fs::read(t.outside("new.moved/dir/f.txt")).ok();
        assert_eq!(moved.is_some(), step == "verify a.txt", "{step}");
        assert_usable(&t);
    }
}
