//! Crash tests: the test binary runs itself as a child that crashes (failpoint `abort`) or
//! is SIGKILLed (failpoint `pause`) mid-commit; then recovery must leave the tree wholly old
//! or wholly new. Also the journal and audit formats, snapshotted.

use std::path::{Path, PathBuf};
use std::process::Command;

use apply_patch::txn::{self, AuditRecord, Change, NewState, Snapshot, TxnOptions};
use apply_patch::ErrorCode;

use super::{audit_lines, expected_new, file, multi_change, opts, repo, snap, tree, write};

// ---- crash tests: the test binary runs itself as a child that crashes mid-commit ----

const CHILD_ENV: &str = "APPLY_PATCH_TXN_CHILD_ROOT";

/// Child mode: commit the multi-file change under the root the parent names (the failpoint
/// comes from `APPLY_PATCH_FAILPOINT`). Does nothing in an ordinary test run.
#[test]
#[ignore = "child process of the crash tests"]
fn crash_child() {
    let Some(root) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let root = PathBuf::from(root);
    if std::env::var_os(UNDO_ENV).is_some() {
        apply_patch::transaction::undo(&root).expect("child undo");
        return;
    }
    let opts = TxnOptions {
        durability: if std::env::var_os(ATOMIC_ENV).is_some() {
            txn::Durability::Atomic
        } else {
            txn::Durability::Full
        },
        ..TxnOptions::new(&root)
    };
    let changes = if std::env::var_os(MANY_ENV).is_some() {
        many_change(&root)
    } else if std::env::var_os(SPREAD_ENV).is_some() {
        spread_change(&root)
    } else if std::env::var_os(LARGE_ENV).is_some() {
        large_change(&root)
    } else {
        multi_change(&root)
    };
    txn::commit(&opts, changes, &AuditRecord::default()).expect("child commit");
}

/// The child undoes the last transaction instead of committing.
const UNDO_ENV: &str = "APPLY_PATCH_TXN_CHILD_UNDO";

/// The child commits without any flush ([`txn::Durability::Atomic`]).
const ATOMIC_ENV: &str = "APPLY_PATCH_TXN_CHILD_ATOMIC";

const MANY_ENV: &str = "APPLY_PATCH_TXN_CHILD_MANY";
const MANY: usize = 300;

/// A tree of `MANY` files in 10 folders.
fn many_repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    super::git_dir_layout(&root.join(".git"));
    for i in 0..MANY {
        write(
            &root,
            &format!("d{}/f{i}.txt", i % 10),
            format!("old {i}\n").as_bytes(),
        );
    }
    (tmp, root)
}

/// Rewrites every file of [`many_repo`].
fn many_change(root: &Path) -> Vec<Change> {
    (0..MANY)
        .map(|i| {
            let path = format!("d{}/f{i}.txt", i % 10);
            Change {
                before: snap(root, &path),
                after: file(format!("new {i}\n").as_bytes()),
                path,
            }
        })
        .collect()
}

/// Starts the child on the many-file tree with `commit:<k>:pause` and returns it once it
/// reports the pause (it then sleeps 30 s holding the lock).
fn paused_child(root: &Path, k: usize) -> std::process::Child {
    use std::io::{BufRead, BufReader};
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "txn::crash::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, root)
        .env(MANY_ENV, "1")
        .env("APPLY_PATCH_FAILPOINT", format!("commit:{k}:pause"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let stderr = child.stderr.take().expect("piped stderr");
    let paused = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains(":pause at "));
    assert!(paused, "the child reached the failpoint");
    child
}

/// [`paused_child`], SIGKILLed at its pause.
fn kill_during_pause(root: &Path, k: usize) {
    let mut child = paused_child(root, k);
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

#[test]
fn a_commit_while_another_process_commits_is_busy_and_the_killed_one_is_recovered() {
    let (_tmp, root) = many_repo();
    let old = tree(&root);
    let mut child = paused_child(&root, 1 + MANY + 10);
    let mut o = opts(&root, None);
    o.lock_wait = std::time::Duration::from_millis(300);
    let change = Change {
        path: "d0/f0.txt".into(),
        before: snap(&root, "d0/f0.txt"),
        after: file(b"mine\n"),
    };
    let err = txn::commit(&o, vec![change], &AuditRecord::default()).expect_err("busy");
    assert_eq!(err.code, ErrorCode::Busy);
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
    // The kernel dropped the dead process's lock: the next run gets it and recovers.
    let report = apply_patch::transaction::recover(&root).expect("recover");
    assert_eq!(report.action, Some(txn::RecoverAction::RolledBack));
    assert_eq!(tree(&root), old);
}

/// Runs the child on `root` with `commit:<k>:abort`; true when it crashed.
fn crash_at(root: &Path, k: usize) -> bool {
    crash_child_at(root, k, None)
}

/// [`crash_at`], the child's change chosen by the environment variable `mode` when given.
fn crash_child_at(root: &Path, k: usize, mode: Option<&str>) -> bool {
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Command::new(exe);
    if let Some(mode) = mode {
        child.env(mode, "1");
    }
    let status = child
        .args([
            "--exact",
            "txn::crash::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, root)
        .env("APPLY_PATCH_FAILPOINT", format!("commit:{k}:abort"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("spawn the child");
    !status.success()
}

const LARGE_ENV: &str = "APPLY_PATCH_TXN_CHILD_LARGE";

const SPREAD_ENV: &str = "APPLY_PATCH_TXN_CHILD_SPREAD";

/// [`repo`] with 12 more files in 4 folders.
fn spread_repo() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = repo();
    for i in 0..12 {
        write(
            &root,
            &format!("s{}/f{i}.txt", i % 4),
            format!("old {i}\n").as_bytes(),
        );
    }
    (tmp, root)
}

/// Edits 8 files of [`spread_repo`] in 4 folders, deletes 2, and adds 4 in 2 new folders:
/// many files staged (and backed up) between the journal's durability point and the one
/// before the renames.
fn spread_change(root: &Path) -> Vec<Change> {
    let mut changes: Vec<Change> = (0..12)
        .map(|i| {
            let path = format!("s{}/f{i}.txt", i % 4);
            let after = if i < 10 {
                file(format!("new {i}\n").as_bytes())
            } else {
                NewState::Absent
            };
            Change {
                before: snap(root, &path),
                after,
                path,
            }
        })
        .collect();
    for i in 0..4 {
        let path = format!("n{}/deep/g{i}.txt", i % 2);
        changes.push(Change {
            before: Snapshot::Missing,
            after: file(format!("added {i}\n").as_bytes()),
            path,
        });
    }
    changes
}

/// The old content of [`large_repo`]'s large file: over 1 MiB, so that a new content of it
/// whose hash is not known yet is hashed while it is staged.
fn large_old() -> Vec<u8> {
    (0..100_000)
        .flat_map(|i| format!("old line {i}\n").into_bytes())
        .collect()
}

/// [`repo`] with a large file.
fn large_repo() -> (tempfile::TempDir, PathBuf) {
    let (tmp, root) = repo();
    write(&root, "big.txt", &large_old());
    (tmp, root)
}

/// A longer new content of the large file (its hash left to the transaction) and an edit
/// of a small one.
fn large_change(root: &Path) -> Vec<Change> {
    let mut new = large_old();
    new.extend_from_slice(b"one more line\n");
    vec![
        Change {
            path: "big.txt".into(),
            before: snap(root, "big.txt"),
            after: NewState::File {
                bytes: new.into(),
                mode: 0o644,
            },
        },
        Change {
            path: "a.txt".into(),
            before: snap(root, "a.txt"),
            after: file(b"one\nTWO\n"),
        },
    ]
}

/// The journal of a crashed transaction, as text.
fn journal_text(root: &Path) -> Option<String> {
    std::fs::read_to_string(root.join(".git/apply-patch/journal/journal.json")).ok()
}

/// Crashes the child at every step `k` = 1, 2, … of its commit (the change `mode` picks)
/// until it runs to the end, on a fresh tree from `setup` each time: recovery must leave the
/// tree wholly old or wholly `new`, without conflicts and without a journal. Before each
/// recovery `no_rename_yet` looks at the crashed root: when it says so, the tree must come
/// back old. Returns whether the old and the new tree were each seen.
fn crash_at_every_step(
    setup: fn() -> (tempfile::TempDir, PathBuf),
    mode: Option<&str>,
    new: &std::collections::BTreeMap<String, String>,
    mut no_rename_yet: impl FnMut(&Path) -> bool,
) -> (bool, bool) {
    let (mut saw_old, mut saw_new) = (false, false);
    let mut k = 1;
    loop {
        let (_tmp, root) = setup();
        let old = tree(&root);
        if !crash_child_at(&root, k, mode) {
            assert_eq!(&tree(&root), new, "the child ran to the end at step {k}");
            return (saw_old, saw_new);
        }
        let untouched = no_rename_yet(&root);
        let report = apply_patch::transaction::recover(&root).expect("recover");
        assert!(report.conflicts.is_empty(), "step {k}: {report:?}");
        let t = tree(&root);
        if t == old {
            saw_old = true;
        } else {
            assert!(
                !untouched,
                "step {k}: a rename before the journal allowed it"
            );
            assert_eq!(&t, new, "step {k}: mixed tree after recovery");
            saw_new = true;
        }
        assert!(!root.join(".git/apply-patch/journal").exists(), "step {k}");
        k += 1;
        assert!(k < 100, "the child never finished");
    }
}

#[test]
fn a_crash_at_every_step_of_a_commit_that_hashes_while_staging_recovers_to_old_or_new() {
    let new = {
        let (_tmp, root) = large_repo();
        let changes = large_change(&root);
        txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
        tree(&root)
    };
    // Until the journal holds the large file's hash, no rename may have happened.
    let mut saw_pending = false;
    let pending = |root: &Path| {
        let pending = journal_text(root).is_some_and(|j| j.contains("\"sha256\": \"\""));
        saw_pending |= pending;
        pending
    };
    let (saw_old, saw_new) = crash_at_every_step(large_repo, Some(LARGE_ENV), &new, pending);
    assert!(
        saw_pending,
        "a crash while the hash was being taken was seen"
    );
    assert!(
        saw_old && saw_new,
        "crashes before and after the commit point"
    );
}

#[test]
fn a_crash_at_every_step_with_many_files_between_two_durability_points_recovers() {
    let new = {
        let (_tmp, root) = spread_repo();
        let changes = spread_change(&root);
        txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
        tree(&root)
    };
    // Staged files beside targets that all still hold their old content: the crash came
    // between the durability point of the journal and the renames, so the tree comes back
    // old (and without the staged files).
    let mut saw_staged = 0;
    let staged = |root: &Path| {
        let t = tree(root);
        let pending = t.keys().filter(|k| k.ends_with(".tmp")).count();
        let old = (0..12).all(|i| {
            std::fs::read_to_string(root.join(format!("s{}/f{i}.txt", i % 4))).ok()
                == Some(format!("old {i}\n"))
        });
        if old && pending > 0 {
            saw_staged = saw_staged.max(pending);
        }
        old
    };
    let (saw_old, saw_new) = crash_at_every_step(spread_repo, Some(SPREAD_ENV), &new, staged);
    assert!(saw_staged >= 12, "a crash with every file staged was seen");
    assert!(
        saw_old && saw_new,
        "crashes before and after the commit point"
    );
}

#[test]
fn a_crash_at_every_step_of_a_commit_without_flushes_recovers_to_wholly_old_or_wholly_new() {
    // Every step happens in the same order, only no flush is made: a crashed process (not
    // the machine) is recovered exactly as with full durability.
    let (saw_old, saw_new) =
        crash_at_every_step(repo, Some(ATOMIC_ENV), &expected_new(), |_| false);
    assert!(
        saw_old && saw_new,
        "crashes before and after the commit point were both seen"
    );
}

#[test]
fn a_crash_at_every_step_recovers_to_wholly_old_or_wholly_new() {
    let (saw_old, saw_new) = crash_at_every_step(repo, None, &expected_new(), |_| false);
    assert!(
        saw_old && saw_new,
        "crashes before and after the commit point were both seen"
    );
}

#[test]
fn sigkill_in_the_middle_of_300_renames_recovers_to_old_and_after_the_mark_to_new() {
    let (_tmp, root) = many_repo();
    let old = tree(&root);
    // Steps: journal 1, stages 300, backups 300, then the renames: stop after 150 of them.
    kill_during_pause(&root, 1 + 2 * MANY + 151);
    let renamed = (0..MANY)
        .filter(|i| {
            std::fs::read(root.join(format!("d{}/f{i}.txt", i % 10))).ok()
                == Some(format!("new {i}\n").into_bytes())
        })
        .count();
    assert_eq!(
        renamed, 150,
        "precondition: the tree is half new before recovery"
    );
    let report = apply_patch::transaction::recover(&root).expect("recover");
    assert_eq!(report.restored.len(), 150);
    assert_eq!(tree(&root), old);

    // After the commit mark (renames, sync, 300 verifications, mark): completed as new.
    let (_tmp2, root2) = many_repo();
    kill_during_pause(&root2, 1 + 3 * MANY + 1 + MANY + 1 + 1);
    let report = apply_patch::transaction::recover(&root2).expect("recover");
    assert_eq!(report.action, Some(txn::RecoverAction::Completed));
    assert!((0..MANY).all(
        |i| std::fs::read(root2.join(format!("d{}/f{i}.txt", i % 10))).ok()
            == Some(format!("new {i}\n").into_bytes())
    ));
}

#[test]
fn the_next_commit_recovers_a_crash_first_and_says_so() {
    let (_tmp, root) = repo();
    let old = tree(&root);
    assert!(crash_at(&root, 12), "crashed mid-commit");
    let change = Change {
        path: "keep/k.txt".into(),
        before: snap(&root, "keep/k.txt"),
        after: file(b"K\n"),
    };
    let done =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    assert_eq!(
        done.recovered.first().map(|w| w.code.as_str()),
        Some("recovered")
    );
    let mut expected = old;
    expected.insert("keep/k.txt".into(), "644 K\n".into());
    assert_eq!(tree(&root), expected);
}

#[test]
fn recovery_never_overwrites_a_file_edited_after_the_crash() {
    // Step 10 is the rename of a.txt (the first): nothing is renamed yet, so an edit of
    // a.txt now is one our rename would have refused (stale): the rest is rolled back.
    let (_tmp, root) = repo();
    let old = tree(&root);
    assert!(crash_at(&root, 10), "crashed mid-commit");
    write(&root, "a.txt", b"edited after the crash\n");
    let report = apply_patch::transaction::recover(&root).expect("recover");
    assert_eq!(report.action, Some(txn::RecoverAction::RolledBack));
    assert_eq!(report.conflicts, vec!["a.txt".to_string()]);
    let mut expected = old;
    expected.insert("a.txt".into(), "644 edited after the crash\n".into());
    assert_eq!(tree(&root), expected);
    assert!(report.kept.is_some(), "the journal and backups are kept");
}

#[test]
fn a_file_edited_after_its_rename_is_kept_and_the_crashed_commit_finished_around_it() {
    let mut expected = expected_new();
    expected.insert("a.txt".into(), "644 edited after its rename\n".into());
    // Step 15 is the folder sync (every rename done); step 12 the removal of gone/d.txt
    // (a.txt and added.txt renamed, the rest to do).
    for k in [15, 12] {
        let (_tmp, root) = repo();
        assert!(crash_at(&root, k), "crashed mid-commit");
        assert_eq!(
            std::fs::read(root.join("a.txt")).expect("read"),
            b"one\nTWO\n",
            "precondition: renamed"
        );
        write(&root, "a.txt", b"edited after its rename\n");
        let report = apply_patch::transaction::recover(&root).expect("recover");
        assert_eq!(report.action, Some(txn::RecoverAction::Completed), "{k}");
        assert_eq!(report.conflicts, vec!["a.txt".to_string()], "{k}");
        let later: Vec<_> = report
            .warnings
            .iter()
            .filter(|w| w.code == txn::TxnWarningCode::LaterEdit)
            .map(|w| w.path.as_deref())
            .collect();
        assert_eq!(later, vec![Some("a.txt")], "{k}");
        assert_eq!(tree(&root), expected, "step {k}: every other file new");
        assert!(!root.join(".git/apply-patch/journal").exists(), "{k}");
    }
}

/// Issue 23, item 6: an undo killed at any step — its clean-up included (dropping the
/// record it reverts, naming the last transaction, removing its journal folder file by
/// file) — is recovered by the next run: the tree is wholly undone or wholly not, no journal
/// folder is left, and the root is usable (undo again works, or has nothing left to undo).
/// Before, a kill while the journal folder was being removed left backups without a journal,
/// which every later run refused.
#[test]
fn a_crash_at_every_step_of_an_undo_recovers_and_leaves_the_root_usable() {
    let old = {
        let (_tmp, root) = repo();
        tree(&root)
    };
    let new = expected_new();
    let (mut k, mut cleaned_up) = (1, false);
    loop {
        let (_tmp, root) = repo();
        txn::commit(
            &opts(&root, None),
            multi_change(&root),
            &AuditRecord::default(),
        )
        .expect("commit");
        if !crash_child_at(&root, k, Some(UNDO_ENV)) {
            assert_eq!(tree(&root), old, "the undo ran to the end at step {k}");
            break;
        }
        let report =
            apply_patch::transaction::recover(&root).unwrap_or_else(|e| panic!("step {k}: {e:?}"));
        assert!(report.conflicts.is_empty(), "step {k}: {report:?}");
        cleaned_up |= report.action == Some(txn::RecoverAction::CleanedUp);
        assert!(!root.join(".git/apply-patch/journal").exists(), "step {k}");
        if tree(&root) == old {
            let again =
                apply_patch::transaction::undo(&root).unwrap_or_else(|e| panic!("step {k}: {e:?}"));
            assert_eq!(again.undone, None, "step {k}: the undone record is gone");
        } else {
            assert_eq!(tree(&root), new, "step {k}: mixed tree after recovery");
            apply_patch::transaction::undo(&root)
                .unwrap_or_else(|e| panic!("step {k}: undo after it: {e:?}"));
            assert_eq!(tree(&root), old, "step {k}");
        }
        k += 1;
        assert!(k < 100, "the child never finished");
    }
    assert!(
        k > 20,
        "an undo of five paths has more than 20 steps, got {}",
        k - 1
    );
    assert!(
        cleaned_up,
        "some crash fell inside the removal of the journal folder"
    );
}

// ---- formats: the journal and the audit line, snapshotted with volatile fields redacted ----

fn redact(value: &mut serde_json::Value, root: &Path) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match key.as_str() {
                    "id" | "time" | "mac" | "root_dev" | "root_ino" => {
                        *v = serde_json::Value::String(format!("[{key}]"))
                    }
                    _ => redact(v, root),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| redact(v, root)),
        serde_json::Value::String(s) => {
            let id = regex_free_id(s);
            *s = s
                .replace(&root.display().to_string(), "[root]")
                .replace(&id, "[id]");
        }
        _ => {}
    }
}

/// The transaction id inside a staged name `.apply-patch-<id>-<n>.tmp`, if any.
fn regex_free_id(s: &str) -> String {
    s.strip_prefix(".apply-patch-")
        .and_then(|rest| rest.rsplit_once('-'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_else(|| "\u{0}".into())
}

#[test]
fn journal_format_of_a_crashed_commit() {
    let (_tmp, root) = repo();
    assert!(crash_at(&root, 15), "crashed before the commit point");
    let text = std::fs::read_to_string(root.join(".git/apply-patch/journal/journal.json"))
        .expect("journal");
    let mut journal: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    redact(&mut journal, &root);
    insta::with_settings!({snapshot_path => "../../../snapshots/txn", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("journal_prepared", journal);
    });
}

#[test]
fn audit_line_uses_the_planners_record() {
    let (_tmp, root) = repo();
    let changes = vec![
        Change {
            path: "old/c.txt".into(),
            before: snap(&root, "old/c.txt"),
            after: NewState::Absent,
        },
        Change {
            path: "new/c.txt".into(),
            before: Snapshot::Missing,
            after: file(b"sea\nshore\n"),
        },
    ];
    let record = AuditRecord {
        files: vec![txn::AuditFile {
            path: "new/c.txt".into(),
            old_path: Some("old/c.txt".into()),
            op: "rename".into(),
            lines_added: 1,
            lines_removed: 0,
        }],
    };
    txn::commit(&opts(&root, None), changes, &record).expect("commit");
    let mut line = audit_lines(&root).pop().expect("one line");
    redact(&mut line, &root);
    insta::with_settings!({snapshot_path => "../../../snapshots/txn", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("audit_rename", line);
    });
}

#[test]
fn a_recovery_that_cannot_restore_fails_with_rollback_failed_and_keeps_the_journal() {
    let (_tmp, root) = repo();
    assert!(crash_at(&root, 15), "crashed after the renames");
    let journal = root.join(".git/apply-patch/journal");
    std::fs::remove_file(journal.join("b0")).expect("lose the backup of a.txt");
    let err = apply_patch::transaction::recover(&root).expect_err("cannot restore a.txt");
    assert_eq!(err.code, ErrorCode::RollbackFailed);
    assert_eq!(err.exit_status(), 3);
    assert!(err.message.contains("a.txt"), "{}", err.message);
    assert!(err
        .hint
        .as_deref()
        .unwrap_or_default()
        .contains("apply-patch recover"));
    assert!(
        journal.join("journal.json").is_file(),
        "the journal stays for another try"
    );
    // Every other path was restored; only a.txt still holds the new content.
    assert!(!root.join("added.txt").exists());
    assert_eq!(
        std::fs::read(root.join("gone/d.txt")).expect("restored"),
        b"dee\n"
    );
}

#[test]
fn a_patch_planned_against_a_crashed_tree_is_stale_with_a_hint_to_run_again() {
    let (_tmp, root) = repo();
    assert!(crash_at(&root, 15), "crashed after the renames");
    // Planned while a.txt still holds the crashed transaction's new content.
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"mine\n"),
    };
    let err =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert!(
        err.hint
            .as_deref()
            .unwrap_or_default()
            .contains("run the command again"),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("read"),
        b"one\ntwo\n",
        "recovered to old"
    );
}

#[test]
fn an_edit_made_during_the_commit_is_caught_before_its_rename_and_kept() {
    use std::io::{BufRead, BufReader, Read};
    let (_tmp, root) = repo();
    let old = tree(&root);
    let exe = std::env::current_exe().expect("test binary");
    // Step 7 is the first backup: everything is checked and staged, nothing renamed yet.
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "txn::crash::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &root)
        .env("APPLY_PATCH_FAILPOINT", "commit:7:pause")
        .env("APPLY_PATCH_FAILPOINT_PAUSE_MS", "1500")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let mut stderr = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut line = String::new();
    while !line.contains(":pause at ") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("read") > 0,
            "the child reached the failpoint"
        );
    }
    // Another program edits a file the commit will replace (its 4th rename).
    write(&root, "old/c.txt", b"edited during the commit\n");
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).expect("read the rest");
    let status = child.wait().expect("reap");
    assert!(!status.success());
    assert!(
        rest.contains("StaleFile") && rest.contains("while the patch was being committed"),
        "{rest}"
    );
    // The three files already renamed are back; the edit is kept; nothing is left over.
    let mut expected = old;
    expected.insert("old/c.txt".into(), "644 edited during the commit\n".into());
    assert_eq!(tree(&root), expected);
    assert!(!root.join(".git/apply-patch/journal").exists());
}
