//! Nothing from the tree steers the writer: a journal or undo record is acted on only for the
//! root whose state place holds it (issue 13, items 1, 8, 12, 13). The real binary, on temp
//! trees with a private state directory; planted journals are written by hand.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use apply_patch::hash::sha256_hex as hex;
use apply_patch::txn::journal::VERSION;

use crate::util::TempTree;

/// Runs the binary in `dir` with the tree's private state directory and `env`.
fn run_in(t: &TempTree, dir: &Path, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Run {
    use std::io::Write;
    let mut cmd = t.command(env!("CARGO_BIN_EXE_apply-patch"));
    cmd.args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the binary runs");
    let mut input = child.stdin.take().expect("piped stdin");
    // A child that crashes early may not read it all.
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    let out = child.wait_with_output().expect("the binary finishes");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        status: out.status.code().unwrap_or(-1),
    }
}

#[derive(Debug)]
struct Run {
    stdout: String,
    stderr: String,
    status: i32,
}

impl Run {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("one JSON object ({e}): {} {}", self.stdout, self.stderr))
    }
}

const ID: &str = "1764460800000000000-4242";

/// A prepared journal for `root` whose rollback, were it trusted, would delete `victim.txt`
/// (its "new" state is the victim's content), write `written.txt` from the backup `b0`, and
/// put a symlink to /etc/passwd at `passwd`.
fn planted_journal(root: &str, phase: &str, victim: &[u8]) -> serde_json::Value {
    serde_json::json!({
        "version": VERSION,
        "id": ID,
        "root": root,
        "phase": phase,
        "operation": "apply",
        "undoes": null,
        "entries": [
            {
                "path": "victim.txt",
                "before": {"kind": "missing"},
                "after": {"kind": "file", "sha256": hex(victim), "mode": 0o644},
                "backup": null,
                "stage": null
            },
            {
                "path": "written.txt",
                "before": {"kind": "file", "sha256": hex(b"planted\n"), "mode": 0o644},
                "after": {"kind": "missing"},
                "backup": "b0",
                "stage": null
            },
            {
                "path": "passwd",
                "before": {"kind": "symlink", "target": b"/etc/passwd".to_vec()},
                "after": {"kind": "missing"},
                "backup": null,
                "stage": null
            }
        ],
        "created_dirs": [],
        "audit": {"files": []}
    })
}

/// Writes `journal` (and its backup `b0`) into the folder `dir`.
fn plant(dir: &Path, journal: &serde_json::Value) {
    std::fs::create_dir_all(dir).expect("mkdir the planted folder");
    let text = serde_json::to_vec_pretty(journal).expect("JSON");
    std::fs::write(dir.join("journal.json"), text).expect("plant the journal");
    std::fs::write(dir.join("b0"), b"planted\n").expect("plant the backup");
}

/// Nothing outside the root changed: the victim is whole, nothing was written or linked.
fn assert_outside_untouched(t: &TempTree) {
    assert_eq!(
        std::fs::read(t.outside("victim.txt")).ok(),
        Some(b"victim\n".to_vec()),
        "the file outside the root was deleted"
    );
    assert!(
        !t.outside("written.txt").exists(),
        "a file was written outside"
    );
    assert!(
        std::fs::symlink_metadata(t.outside("passwd")).is_err(),
        "a symlink was made outside"
    );
}

fn assert_refused(run: &Run, journal: &Path) {
    assert_eq!(run.status, 1, "{} {}", run.stdout, run.stderr);
    let error = &run.json()["error"];
    assert_eq!(error["code"], "io_error", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("refusing the apply-patch journal"),
        "{message}"
    );
    assert!(journal.is_file(), "the refused journal is left alone");
}

/// The work tree without `.git` (where the state place writes its own files).
fn work_tree(t: &TempTree) -> crate::util::TreeSnapshot {
    let mut snap = t.snapshot();
    snap.retain(|path, _| path != ".git" && !path.starts_with(".git/"));
    snap
}

const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";

#[test]
fn a_journal_planted_in_the_tree_is_refused_and_nothing_outside_changes() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    std::fs::write(t.outside("victim.txt"), b"victim\n").expect("victim");
    let outside = t.outside("").canonicalize().expect("canonical");
    // Relative (the apply runs in the root, so `..` is the folder around it) and absolute.
    for root in ["..".to_string(), outside.display().to_string()] {
        let jdir = t.root().join(".apply-patch-txn");
        plant(&jdir, &planted_journal(&root, "prepared", b"victim\n"));
        let before = t.snapshot();
        for args in [&["--json"][..], &["--json", "recover"][..]] {
            let run = run_in(&t, &t.root(), args, PATCH, &[]);
            assert_refused(&run, &jdir.join("journal.json"));
            assert_outside_untouched(&t);
            assert_eq!(t.snapshot(), before, "{root}: the tree changed");
        }
        std::fs::remove_dir_all(&jdir).expect("the user removes it, as the hint says");
    }
    // Removed, it stands in the way of nothing.
    let run = run_in(&t, &t.root(), &["--json"], PATCH, &[]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(t.read_str("a.txt"), "ONE\n");
}

#[test]
fn a_journal_planted_in_the_git_state_place_is_refused() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    t.git_dir();
    std::fs::write(t.outside("victim.txt"), b"victim\n").expect("victim");
    let outside = t.outside("").canonicalize().expect("canonical");
    let jdir = t.root().join(".git/apply-patch/journal");
    plant(
        &jdir,
        &planted_journal(&outside.display().to_string(), "committed", b"victim\n"),
    );
    let before = work_tree(&t);
    let run = run_in(&t, &t.root(), &["--json", "recover"], "", &[]);
    assert_refused(&run, &jdir.join("journal.json"));
    // Even one that names this very root: its MAC is not made with this state place's secret.
    let root = t.root().canonicalize().expect("canonical");
    plant(
        &jdir,
        &planted_journal(&root.display().to_string(), "prepared", b"one\n"),
    );
    let run = run_in(&t, &t.root(), &["--json"], PATCH, &[]);
    assert_refused(&run, &jdir.join("journal.json"));
    assert_outside_untouched(&t);
    assert_eq!(work_tree(&t), before);
}

#[test]
fn a_planted_undo_record_is_refused() {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    t.git_dir();
    std::fs::write(t.outside("victim.txt"), b"victim\n").expect("victim");
    let outside = t.outside("").canonicalize().expect("canonical");
    let record = t.root().join(format!(".git/apply-patch/undo/{ID}"));
    plant(
        &record,
        &planted_journal(&outside.display().to_string(), "committed", b"victim\n"),
    );
    let before = work_tree(&t);
    let run = run_in(&t, &t.root(), &["--json", "undo"], "", &[]);
    assert_refused(&run, &record.join("journal.json"));
    assert_outside_untouched(&t);
    assert_eq!(work_tree(&t), before);
}

/// `a.txt` and `b.txt`, both edited by [`TWO`].
fn two_files() -> TempTree {
    TempTree::with(&[("a.txt", "one\n"), ("b.txt", "bee\n")])
}

const TWO: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n";

/// Step 8 of [`TWO`]'s commit is the folder sync: both files are renamed, no commit mark.
const AFTER_THE_RENAMES: &str = "commit:8:abort";

#[test]
fn recover_in_a_copy_of_a_crashed_tree_leaves_the_original_alone() {
    let t = two_files();
    let crash = run_in(
        &t,
        &t.root(),
        &[],
        TWO,
        &[("APPLY_PATCH_FAILPOINT", AFTER_THE_RENAMES)],
    );
    assert_ne!(crash.status, 0, "the child crashed: {}", crash.stderr);
    assert_eq!(t.read_str("a.txt"), "ONE\n", "crashed after the renames");
    let crashed = t.snapshot();
    let copy = t.outside("copy");
    crate::util::copy_dir(&t.root(), &copy);
    let copied = crate::util::snapshot_dir(&copy);
    let run = run_in(&t, &copy, &["--json", "recover"], "", &[]);
    assert_refused(&run, &copy.join(".apply-patch-txn/journal.json"));
    assert_eq!(t.snapshot(), crashed, "the original was touched");
    assert_eq!(
        crate::util::snapshot_dir(&copy),
        copied,
        "the copy was touched"
    );
    // The original's own recovery still works.
    let run = run_in(&t, &t.root(), &["--json", "recover"], "", &[]);
    assert_eq!(run.status, 0, "{} {}", run.stdout, run.stderr);
    assert_eq!(t.read_str("a.txt"), "one\n");
    assert_eq!(t.read_str("b.txt"), "bee\n");
    assert!(!t.root().join(".apply-patch-txn").exists());
}

#[test]
fn undo_refuses_when_the_last_transactions_record_could_not_be_written() {
    let t = two_files();
    let first = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n";
    let second = "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n*** End Patch\n";
    assert_eq!(run_in(&t, &t.root(), &["--json"], first, &[]).status, 0);
    // One modified file: journal, stage, backup, rename, folder sync, verify, commit mark,
    // prune, audit, and step 10 moves the journal into the undo history.
    let run = run_in(
        &t,
        &t.root(),
        &["--json"],
        second,
        &[("APPLY_PATCH_FAILPOINT", "commit:10:fail")],
    );
    assert_eq!(run.status, 0, "{}", run.stdout);
    let warnings = run.json()["warnings"].to_string();
    assert!(warnings.contains("cleanup"), "{warnings}");
    let run = run_in(&t, &t.root(), &["--json", "undo"], "", &[]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    let message = run.json()["error"]["message"].to_string();
    assert!(message.contains("has no undo record"), "{message}");
    assert_eq!(
        t.read_str("a.txt"),
        "ONE\n",
        "the earlier transaction was reverted"
    );
    assert_eq!(t.read_str("b.txt"), "BEE\n");
    // A later transaction with its record is undone, and then the one without still stops undo.
    let third = "*** Begin Patch\n*** Update File: a.txt\n@@\n-ONE\n+1\n*** End Patch\n";
    assert_eq!(run_in(&t, &t.root(), &["--json"], third, &[]).status, 0);
    let run = run_in(&t, &t.root(), &["--json", "undo"], "", &[]);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(t.read_str("a.txt"), "ONE\n");
    let run = run_in(&t, &t.root(), &["--json", "undo"], "", &[]);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert_eq!(t.read_str("a.txt"), "ONE\n");
}

/// Unmounts a bind mount when dropped (also when the test fails).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Makes `dir` a read-only bind mount of itself; `None` (with a message) where this machine
/// does not allow it.
fn read_only(dir: &Path) -> Option<Mounted> {
    let quiet = |args: &[&str]| {
        Command::new("mount")
            .args(args)
            .arg(dir)
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !quiet(&["--bind"]) {
        eprintln!("skipped: cannot bind-mount here (needs root and mount)");
        return None;
    }
    let mounted = Mounted(dir.to_path_buf());
    if !quiet(&["-o", "remount,bind,ro"]) {
        eprintln!("skipped: cannot remount read-only here");
        return None;
    }
    Some(mounted)
}

#[test]
fn a_clean_failure_on_a_read_only_mount_is_not_a_rollback_failure() {
    let t = TempTree::with(&[("a.txt", "one\n"), ("ro/b.txt", "bee\n")]);
    let Some(_mounted) = read_only(&t.root().join("ro")) else {
        return;
    };
    let both = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: ro/b.txt\n@@\n-bee\n+BEE\n*** End Patch\n";
    let before = t.snapshot();
    let run = run_in(&t, &t.root(), &["--json"], both, &[]);
    assert_eq!(run.status, 1, "{} {}", run.stdout, run.stderr);
    assert_ne!(run.json()["error"]["code"], "rollback_failed");
    assert_eq!(
        t.snapshot(),
        before,
        "every file is as it was, and no journal is left"
    );
    // Nothing blocks the next run.
    let run = run_in(&t, &t.root(), &["--json"], PATCH, &[]);
    assert_eq!(run.status, 0, "{} {}", run.stdout, run.stderr);
    assert_eq!(t.read_str("a.txt"), "ONE\n");
}

/// `git` in the root, quietly; its stdout.
fn git(t: &TempTree, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(t.root())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", t.outside("state"))
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {:?}", out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository with `a.txt` committed.
fn committed_repo() -> TempTree {
    let t = TempTree::with(&[("a.txt", "one\n")]);
    git(&t, &["init", "-q"]);
    git(&t, &["add", "a.txt"]);
    git(&t, &["commit", "-qm", "init"]);
    t
}

#[test]
fn a_crash_of_an_index_apply_at_any_step_leaves_the_work_tree_and_the_index_together() {
    // The repository is made and read with the git CLI (not there under Wine).
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let mut k = 1;
    loop {
        let t = committed_repo();
        let point = format!("commit:{k}:abort");
        let run = run_in(
            &t,
            &t.root(),
            &["--index"],
            PATCH,
            &[("APPLY_PATCH_FAILPOINT", &point)],
        );
        let crashed = run.status != 0;
        if crashed {
            let run = run_in(&t, &t.root(), &["--json", "recover"], "", &[]);
            assert_eq!(run.status, 0, "step {k}: {} {}", run.stdout, run.stderr);
        }
        // Step 1 comes before the journal is written: nothing records the index lock then
        // (as after a crash while planning), and the old index and tree are both in place.
        let lock = t.root().join(".git/index.lock");
        if k == 1 {
            let _ = std::fs::remove_file(&lock);
        }
        assert!(!lock.exists(), "step {k}: the index lock is left");
        assert_eq!(
            git(&t, &["diff"]),
            "",
            "step {k}: work tree and index differ"
        );
        let new = t.read_str("a.txt") == "ONE\n";
        let staged = git(&t, &["diff", "--cached", "--name-only"]);
        assert_eq!(
            staged == "a.txt\n",
            new,
            "step {k}: index {staged:?}, new {new}"
        );
        if !crashed {
            assert!(new, "the run without a crash applied");
            break;
        }
        k += 1;
        assert!(k < 30, "the child never finished");
    }
}
