//! CLI level: `apply-patch` on a patch of 300 files, SIGKILLed mid-commit (failpoint
//! `pause`), then `apply-patch recover`: the tree is wholly old or wholly new.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use super::tree;

const FILES: usize = 300;

fn path_of(i: usize) -> String {
    format!("d{}/f{i}.txt", i % 10)
}

/// A root (with a `.git` folder, so the state stays inside it) of 300 three-line files.
fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical");
    super::git_dir_layout(&root.join(".git"));
    for i in 0..FILES {
        super::write(
            &root,
            &path_of(i),
            format!("first {i}\nold {i}\nlast {i}\n").as_bytes(),
        );
    }
    (tmp, root)
}

/// An agent patch that changes the middle line of every file.
fn patch(dir: &Path) -> std::path::PathBuf {
    let mut text = String::from("*** Begin Patch\n");
    for i in 0..FILES {
        text.push_str(&format!(
            "*** Update File: {}\n@@\n first {i}\n-old {i}\n+new {i}\n last {i}\n",
            path_of(i)
        ));
    }
    text.push_str("*** End Patch\n");
    let file = dir.join("change.patch");
    std::fs::write(&file, text).expect("write the patch");
    file
}

fn is_new(root: &Path, i: usize) -> bool {
    std::fs::read(root.join(path_of(i))).ok()
        == Some(format!("first {i}\nnew {i}\nlast {i}\n").into_bytes())
}

/// Runs `apply-patch` with `commit:<k>:pause`, waits for the pause, SIGKILLs it.
fn kill_mid_commit(root: &Path, patch: &Path, k: usize) {
    kill_mid_commit_with(root, patch, k, &[]);
}

/// [`kill_mid_commit`] with more arguments before the patch.
fn kill_mid_commit_with(root: &Path, patch: &Path, k: usize, args: &[&str]) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .args(args)
        .arg("--root")
        .arg(root)
        .arg(patch)
        .env("APPLY_PATCH_FAILPOINT", format!("commit:{k}:pause"))
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn apply-patch");
    let stderr = child.stderr.take().expect("piped stderr");
    let paused = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains(":pause at "));
    assert!(paused, "apply-patch reached failpoint step {k}");
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

fn recover(root: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .arg("recover")
        .arg("--root")
        .arg(root)
        .env("NO_COLOR", "1")
        .output()
        .expect("run apply-patch recover")
}

#[test]
fn sigkill_mid_commit_of_300_files_then_recover_is_old_or_new() {
    let patches = tempfile::tempdir().expect("patch dir");
    let patch = patch(patches.path());
    // Steps: journal 1, stages 300, backups 300, renames 300, sync, verifications 300, mark.
    for (k, want_new) in [
        (1 + 2 * FILES + 120, false),
        (1 + 3 * FILES + 1 + FILES + 1 + 1, true),
    ] {
        let (_tmp, root) = setup();
        let old = tree(&root);
        kill_mid_commit(&root, &patch, k);
        let mixed = (0..FILES).filter(|&i| is_new(&root, i)).count();
        assert!(
            mixed > 0,
            "step {k}: some files were already renamed when it was killed"
        );
        let out = recover(&root);
        assert!(
            out.status.success(),
            "recover at step {k}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if want_new {
            assert!((0..FILES).all(|i| is_new(&root, i)), "step {k}: wholly new");
        } else {
            assert_eq!(tree(&root), old, "step {k}: wholly old");
        }
        let again = recover(&root);
        assert!(again.status.success(), "a second recover has nothing to do");
    }
}

#[test]
fn sigkill_mid_commit_without_flushes_then_recover_is_old_or_new() {
    // `--durability atomic` flushes nothing, and keeps the order of every step: a killed
    // process is recovered as with full durability (only a power loss is not covered).
    let patches = tempfile::tempdir().expect("patch dir");
    let patch = patch(patches.path());
    let atomic = ["--durability", "atomic"];
    for (k, want_new) in [
        (1 + 2 * FILES + 120, false),
        (1 + 3 * FILES + 1 + FILES + 1 + 1, true),
    ] {
        let (_tmp, root) = setup();
        let old = tree(&root);
        kill_mid_commit_with(&root, &patch, k, &atomic);
        assert!(
            (0..FILES).any(|i| is_new(&root, i)),
            "step {k}: some files were already renamed when it was killed"
        );
        let out = recover(&root);
        assert!(out.status.success(), "recover at step {k}");
        if want_new {
            assert!((0..FILES).all(|i| is_new(&root, i)), "step {k}: wholly new");
        } else {
            assert_eq!(tree(&root), old, "step {k}: wholly old");
        }
    }
    // And run to the end, the same commit as with full durability.
    let (_tmp, root) = setup();
    let out = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .args(atomic)
        .arg("--root")
        .arg(&root)
        .arg(&patch)
        .output()
        .expect("run apply-patch");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!((0..FILES).all(|i| is_new(&root, i)), "wholly new");
}
