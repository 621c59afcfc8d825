//! Transaction layer: all-or-nothing commits on real temp dirs, fault injection at every
//! step (in process and by crashing a child process), recovery, undo, locking, staleness and
//! symlink races.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use apply_patch::content::ContentHash;
use apply_patch::hash::sha256_hex as hex;
use apply_patch::state::StateDir;
use apply_patch::txn::{
    self, Action, AuditRecord, Change, Failpoint, NewState, Snapshot, TxnOptions,
};
use apply_patch::ErrorCode;

mod blocked;
mod cli;
mod crash;
mod first;
#[cfg(unix)]
mod hostile;
#[cfg(unix)]
mod owner;
mod prop;
mod trust;

/// A temp dir with a `.git` folder, so the state place lives inside it.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    git_dir_layout(&root.join(".git"));
    populate(&root);
    (tmp, root)
}

/// The files that make `dir` a valid git dir (for gix and git), so that the state place is
/// in it: an empty `.git` folder is no repository.
pub(crate) fn git_dir_layout(dir: &Path) {
    for sub in ["objects", "refs/heads"] {
        std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
    }
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/main\n").expect("write HEAD");
}

fn populate(root: &Path) {
    write(root, "a.txt", b"one\ntwo\n");
    write(root, "gone/d.txt", b"dee\n");
    write(root, "old/c.txt", b"sea\n");
    write(root, "keep/k.txt", b"kay\n");
}

fn write(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("has a parent")).expect("mkdir");
    std::fs::write(&full, bytes).expect("write");
    // Fixed bits, whatever the umask, so that trees and snapshots are reproducible.
    crate::util::set_mode(&full, 0o644);
}

fn snap(root: &Path, path: &str) -> Snapshot {
    txn::read_snapshot(root, path).expect("snapshot").0
}

fn file(bytes: &[u8]) -> NewState {
    NewState::File {
        bytes: bytes.to_vec().into(),
        mode: 0o644,
    }
}

/// Modify + add + delete (emptying its folder) + move into a new folder (with an edit).
fn multi_change(root: &Path) -> Vec<Change> {
    vec![
        Change {
            path: "a.txt".into(),
            before: snap(root, "a.txt"),
            after: file(b"one\nTWO\n"),
        },
        Change {
            path: "added.txt".into(),
            before: snap(root, "added.txt"),
            after: file(b"new\n"),
        },
        Change {
            path: "gone/d.txt".into(),
            before: snap(root, "gone/d.txt"),
            after: NewState::Absent,
        },
        Change {
            path: "old/c.txt".into(),
            before: snap(root, "old/c.txt"),
            after: NewState::Absent,
        },
        Change {
            path: "new/deep/c.txt".into(),
            before: snap(root, "new/deep/c.txt"),
            after: file(b"sea\nshore\n"),
        },
    ]
}

/// Everything in the tree except `.git`: files with bytes and mode, links, folders.
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for item in std::fs::read_dir(dir).expect("read_dir") {
        let item = item.expect("dir entry");
        let path = item.path();
        let rel = path
            .strip_prefix(root)
            .expect("under root")
            .display()
            .to_string()
            .replace('\\', "/");
        if rel == ".git" {
            continue;
        }
        let meta = std::fs::symlink_metadata(&path).expect("lstat");
        if meta.file_type().is_symlink() {
            out.insert(
                rel,
                format!("link {:?}", std::fs::read_link(&path).expect("readlink")),
            );
        } else if meta.is_dir() {
            out.insert(rel.clone() + "/", "dir".into());
            walk(root, &path, out);
        } else {
            let bytes = std::fs::read(&path).expect("read");
            let mode = crate::util::mode_of(&meta);
            out.insert(rel, format!("{mode:o} {}", String::from_utf8_lossy(&bytes)));
        }
    }
}

fn opts(root: &Path, failpoint: Option<Failpoint>) -> TxnOptions {
    let mut o = TxnOptions::new(root);
    o.failpoint = failpoint;
    o
}

fn audit_lines(root: &Path) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(root.join(".git/apply-patch/audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).expect("audit line is JSON"))
        .collect()
}

/// The tree the multi-file change leads to, computed by committing it on a fresh copy.
fn expected_new() -> BTreeMap<String, String> {
    let (_tmp, root) = repo();
    txn::commit(
        &opts(&root, None),
        multi_change(&root),
        &AuditRecord::default(),
    )
    .expect("commit");
    tree(&root)
}

#[test]
fn deletes_in_nested_folders_remove_every_folder_left_empty_and_keep_the_others() {
    let (_tmp, root) = repo();
    let deleted = [
        "p/b/c/1.txt",
        "p/b/d/2.txt",
        "p/x/3.txt",
        "e/f/g/4.txt",
        "e/f/5.txt",
    ];
    for path in deleted {
        write(&root, path, b"x\n");
    }
    write(&root, "p/stays.txt", b"s\n");
    write(&root, "p/b/d/other/o.txt", b"o\n");
    let changes = deleted
        .iter()
        .map(|path| Change {
            path: path.to_string(),
            before: snap(&root, path),
            after: NewState::Absent,
        })
        .collect();
    let done = txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    let t = tree(&root);
    // p/b/c and p/x went; p/b/d holds a folder of its own, so p/b and p stay; all of e went.
    for gone in ["p/b/c/", "p/x/", "e/"] {
        assert!(!t.contains_key(gone), "{gone} removed: {t:?}");
    }
    for kept in ["p/", "p/b/", "p/b/d/", "p/b/d/other/", "p/stays.txt"] {
        assert!(t.contains_key(kept), "{kept} kept: {t:?}");
    }
}

#[test]
fn multi_file_commit_writes_everything_and_prunes_emptied_folders() {
    let (_tmp, root) = repo();
    let done = txn::commit(
        &opts(&root, None),
        multi_change(&root),
        &AuditRecord::default(),
    )
    .expect("commit");
    assert_eq!(done.written.len(), 5);
    assert!(done.warnings.is_empty(), "{:?}", done.warnings);
    let t = tree(&root);
    assert_eq!(t["a.txt"], "644 one\nTWO\n");
    assert_eq!(t["added.txt"], "644 new\n");
    assert_eq!(t["new/deep/c.txt"], "644 sea\nshore\n");
    assert!(!t.contains_key("gone/"), "emptied folder removed: {t:?}");
    assert!(!t.contains_key("old/"), "emptied folder removed: {t:?}");
    assert!(t.contains_key("keep/"));
    assert!(
        !root.join(".git/apply-patch/journal").exists(),
        "journal removed after commit"
    );
    let audit = audit_lines(&root);
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["outcome"], "committed");
    assert_eq!(audit[0]["operation"], "apply");
    assert_eq!(audit[0]["files"].as_array().map(Vec::len), Some(5));
    assert_eq!(audit[0]["files"][0]["op"], "modify");
}

#[test]
#[cfg(unix)]
fn read_snapshot_reports_files_links_folders_and_missing_paths() {
    use apply_patch::txn::Found;
    let (_tmp, root) = repo();
    std::os::unix::fs::symlink("a.txt", root.join("link")).expect("symlink");
    let (s, c) = txn::read_snapshot(&root, "a.txt").expect("file");
    assert_eq!(c, Found::File(b"one\ntwo\n".to_vec().into()));
    assert!(matches!(s, Snapshot::File { len: 8, .. }));
    let (s, c) = txn::read_snapshot(&root, "link").expect("link");
    assert_eq!(c, Found::Symlink(b"a.txt".to_vec()));
    assert_eq!(
        s,
        Snapshot::Symlink {
            target: b"a.txt".to_vec()
        }
    );
    assert_eq!(
        txn::read_snapshot(&root, "keep").expect("dir").1,
        Found::Directory
    );
    assert_eq!(
        txn::read_snapshot(&root, "no/such/file")
            .expect("missing")
            .1,
        Found::Missing
    );
    let err = txn::read_snapshot(&root, "../x").expect_err("escape");
    assert_eq!(err.code(), ErrorCode::PathEscape);
}

#[test]
#[cfg(unix)]
fn unchanged_content_and_mode_is_not_rewritten() {
    let (_tmp, root) = repo();
    let before = snap(&root, "a.txt");
    let ino = std::fs::metadata(root.join("a.txt"))
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .expect("stat");
    let change = Change {
        path: "a.txt".into(),
        before,
        after: file(b"one\ntwo\n"),
    };
    let done =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    assert!(done.written.is_empty());
    let after = std::fs::metadata(root.join("a.txt"))
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .expect("stat");
    assert_eq!(ino, after, "same inode: the file was not replaced");
}

#[test]
#[cfg(unix)]
fn permission_bits_are_kept_and_set_regardless_of_umask() {
    let (_tmp, root) = repo();
    std::fs::set_permissions(
        root.join("a.txt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o751),
    )
    .expect("chmod");
    let changes = vec![
        Change {
            path: "a.txt".into(),
            before: snap(&root, "a.txt"),
            after: NewState::File {
                bytes: b"x\n".to_vec().into(),
                mode: 0o751,
            },
        },
        Change {
            path: "run.sh".into(),
            before: Snapshot::Missing,
            after: NewState::File {
                bytes: b"#!/bin/sh\n".to_vec().into(),
                mode: 0o755,
            },
        },
    ];
    txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
    let t = tree(&root);
    assert_eq!(t["a.txt"], "751 x\n");
    assert_eq!(t["run.sh"], "755 #!/bin/sh\n");
}

#[test]
#[cfg(unix)]
fn symlinks_are_created_as_links_and_deleted_as_links() {
    let (_tmp, root) = repo();
    std::os::unix::fs::symlink("keep/k.txt", root.join("old-link")).expect("symlink");
    let changes = vec![
        Change {
            path: "link".into(),
            before: Snapshot::Missing,
            after: NewState::Symlink {
                target: b"a.txt".to_vec(),
            },
        },
        Change {
            path: "old-link".into(),
            before: snap(&root, "old-link"),
            after: NewState::Absent,
        },
    ];
    txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
    let t = tree(&root);
    assert_eq!(t["link"], "link \"a.txt\"");
    assert!(!t.contains_key("old-link"));
    assert_eq!(
        t["keep/k.txt"], "644 kay\n",
        "the link's target is untouched"
    );
}

#[test]
fn a_stale_snapshot_is_refused_and_nothing_is_written() {
    let (_tmp, root) = repo();
    let changes = multi_change(&root);
    write(&root, "old/c.txt", b"edited meanwhile\n");
    let old = tree(&root);
    let err = txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert_eq!(err.path.as_deref(), Some("old/c.txt"));
    assert_eq!(tree(&root), old);
}

#[test]
fn a_same_size_edit_is_caught_by_the_hash() {
    let (_tmp, root) = repo();
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"z\n"),
    };
    write(&root, "a.txt", b"one\nTWO\n");
    let err =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert!(err.message.contains("content differs"), "{}", err.message);
}

/// Another program's edit of `path` that the stat check cannot see: its modification time is
/// put back.
fn edit_keeping_mtime(root: &Path, path: &str, bytes: &[u8]) {
    let full = root.join(path);
    let mtime = std::fs::metadata(&full)
        .and_then(|m| m.modified())
        .expect("mtime");
    std::fs::write(&full, bytes).expect("write");
    std::fs::File::options()
        .write(true)
        .open(&full)
        .and_then(|f| f.set_modified(mtime))
        .expect("put the mtime back");
}

#[test]
fn a_same_size_edit_with_the_same_recent_mtime_is_caught_while_staging() {
    // The stat check cannot see this edit (size and modification time are as planned, the
    // time only seconds old): the content re-check that runs beside the staging does, and
    // the staged files go again before any target is touched.
    let (_tmp, root) = repo();
    let changes = multi_change(&root);
    edit_keeping_mtime(&root, "a.txt", b"ONE\nTWO\n");
    let old = tree(&root);
    let err = txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile, "{err}");
    assert_eq!(err.path.as_deref(), Some("a.txt"));
    assert!(err.message.contains("content differs"), "{}", err.message);
    assert_eq!(tree(&root), old);
    assert!(!root.join(".git/apply-patch/journal").exists());
}

#[test]
fn a_same_size_edit_is_caught_whether_the_snapshot_holds_the_bytes_or_only_their_hash() {
    // A snapshot read from disk holds the bytes (the re-check compares with them); one made
    // elsewhere may hold only the hash (the re-check hashes the file).
    for keep_bytes in [true, false] {
        let (_tmp, root) = repo();
        let mut changes = multi_change(&root);
        if !keep_bytes {
            let Snapshot::File { sha256, .. } = &mut changes[0].before else {
                panic!("a.txt is a file");
            };
            *sha256 = ContentHash::Known(sha256.get());
        }
        edit_keeping_mtime(&root, "a.txt", b"one\ntwo\r");
        let old = tree(&root);
        let err = txn::commit(&opts(&root, None), changes, &AuditRecord::default())
            .expect_err(&format!("stale ({keep_bytes})"));
        assert_eq!(err.code, ErrorCode::StaleFile, "{err}");
        let details = err.details().expect("details");
        assert_eq!(details["actual_sha256"], hex(b"one\ntwo\r"), "{keep_bytes}");
        assert_eq!(tree(&root), old);
    }
}

#[test]
fn a_large_same_size_change_is_written_and_undone_and_the_same_bytes_are_not_written() {
    let (_tmp, root) = repo();
    let old: Vec<u8> = (0..100_000)
        .flat_map(|i| format!("line {i:06}\n").into_bytes())
        .collect();
    assert!(
        old.len() > 1 << 20,
        "large enough to be hashed while staged"
    );
    write(&root, "big.txt", &old);
    let content = |bytes: &[u8]| NewState::File {
        bytes: bytes.to_vec().into(),
        mode: 0o644,
    };
    let same = Change {
        path: "big.txt".into(),
        before: snap(&root, "big.txt"),
        after: content(&old),
    };
    let done =
        txn::commit(&opts(&root, None), vec![same], &AuditRecord::default()).expect("commit");
    assert!(done.written.is_empty(), "the same bytes are not written");
    let mut new = old.clone();
    new[5] = b'X';
    let changed = Change {
        path: "big.txt".into(),
        before: snap(&root, "big.txt"),
        after: content(&new),
    };
    let done =
        txn::commit(&opts(&root, None), vec![changed], &AuditRecord::default()).expect("commit");
    assert_eq!(done.written, vec!["big.txt".to_string()]);
    assert_eq!(std::fs::read(root.join("big.txt")).expect("read"), new);
    // Undo finds the journaled hash of what was written.
    apply_patch::transaction::undo(&root).expect("undo");
    assert_eq!(std::fs::read(root.join("big.txt")).expect("read"), old);
}

#[test]
fn an_add_over_a_file_created_meanwhile_is_stale() {
    let (_tmp, root) = repo();
    let change = Change {
        path: "added.txt".into(),
        before: snap(&root, "added.txt"),
        after: file(b"new\n"),
    };
    write(&root, "added.txt", b"someone else's\n");
    let err =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert_eq!(
        std::fs::read(root.join("added.txt")).expect("read"),
        b"someone else's\n"
    );
}

#[test]
#[cfg(unix)]
fn a_symlink_swapped_into_a_folder_after_planning_is_refused() {
    let (_tmp, root) = repo();
    let outside = tempfile::tempdir().expect("outside dir");
    write(outside.path(), "k.txt", b"kay\n");
    let change = Change {
        path: "keep/k.txt".into(),
        before: snap(&root, "keep/k.txt"),
        after: file(b"pwned\n"),
    };
    std::fs::rename(root.join("keep"), root.join("keep-moved")).expect("move away");
    std::os::unix::fs::symlink(outside.path(), root.join("keep")).expect("swap in a symlink");
    let err =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect_err("escape");
    assert_eq!(err.code, ErrorCode::PathEscape, "{err}");
    assert_eq!(
        std::fs::read(outside.path().join("k.txt")).expect("read"),
        b"kay\n"
    );
}

#[test]
fn a_held_lock_makes_the_commit_busy() {
    let (_tmp, root) = repo();
    let state = StateDir::for_root(&root).expect("state");
    state.ensure().expect("state dir");
    let _held =
        txn::lock::Lock::acquire(&state.lock_path(), Duration::from_millis(10)).expect("lock");
    let mut o = opts(&root, None);
    o.lock_wait = Duration::from_millis(200);
    let old = tree(&root);
    let err = txn::commit(&o, multi_change(&root), &AuditRecord::default()).expect_err("busy");
    assert_eq!(err.code, ErrorCode::Busy);
    assert_eq!(tree(&root), old);
}

#[test]
fn failing_at_every_step_leaves_the_tree_wholly_old() {
    let new = expected_new();
    let mut k = 1;
    loop {
        let (_tmp, root) = repo();
        let old = tree(&root);
        let fp = Failpoint {
            step: k,
            action: Action::Fail,
        };
        match txn::commit(
            &opts(&root, Some(fp)),
            multi_change(&root),
            &AuditRecord::default(),
        ) {
            Err(err) => {
                assert_eq!(tree(&root), old, "step {k}: {err}");
                assert!(
                    !root.join(".git/apply-patch/journal").exists(),
                    "step {k}: journal left"
                );
                let last = audit_lines(&root).last().map(|l| l["outcome"].clone());
                assert_eq!(last, Some("rolled_back".into()), "step {k}");
            }
            Ok(done) if done.warnings.is_empty() => break,
            Ok(done) => {
                // A failure after the commit point: the change stands, the clean-up warns.
                assert!(
                    done.warnings[0].message.contains("failpoint"),
                    "{:?}",
                    done.warnings
                );
                let mut t = tree(&root);
                t.retain(|p, _| p != ".git");
                let mut n = new.clone();
                // Folders are pruned in the first clean-up step; a failure there keeps them.
                t.retain(|p, _| p != "gone/" && p != "old/");
                n.retain(|p, _| p != "gone/" && p != "old/");
                assert_eq!(t, n, "step {k}");
            }
        }
        k += 1;
        assert!(k < 100, "the failpoint never stopped firing");
    }
    assert!(
        k > 20,
        "a 5-path change has more than 20 steps, got {}",
        k - 1
    );
}

#[test]
fn undo_round_trip_restores_the_old_tree() {
    let (_tmp, root) = repo();
    let old = tree(&root);
    let done = txn::commit(
        &opts(&root, None),
        multi_change(&root),
        &AuditRecord::default(),
    )
    .expect("commit");
    assert_ne!(tree(&root), old);
    let report = apply_patch::transaction::undo(&root).expect("undo");
    assert_eq!(report.undone.as_deref(), Some(done.id.as_str()));
    assert_eq!(tree(&root), old);
    assert_eq!(
        apply_patch::transaction::undo(&root)
            .expect("nothing left")
            .undone,
        None
    );
    let audit = audit_lines(&root);
    let last = audit.last().expect("an undo line");
    assert_eq!(last["operation"], "undo");
    assert_eq!(last["undoes"], done.id.as_str());
}

#[test]
fn undo_is_refused_after_a_later_edit() {
    let (_tmp, root) = repo();
    txn::commit(
        &opts(&root, None),
        multi_change(&root),
        &AuditRecord::default(),
    )
    .expect("commit");
    write(&root, "a.txt", b"hand edit\n");
    let before = tree(&root);
    let err = apply_patch::transaction::undo(&root).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert!(err.message.contains("a.txt"), "{}", err.message);
    assert_eq!(tree(&root), before);
}

#[test]
fn undo_history_is_bounded() {
    let (_tmp, root) = repo();
    for i in 0..23 {
        let change = Change {
            path: "a.txt".into(),
            before: snap(&root, "a.txt"),
            after: file(format!("v{i}\n").as_bytes()),
        };
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    }
    let records = std::fs::read_dir(root.join(".git/apply-patch/undo"))
        .expect("undo dir")
        .count();
    assert_eq!(records, txn::recover::UNDO_HISTORY);
    apply_patch::transaction::undo(&root).expect("undo");
    assert_eq!(std::fs::read(root.join("a.txt")).expect("read"), b"v21\n");
}

#[test]
fn a_full_history_of_large_records_drops_the_oldest_beside_the_commit() {
    // Each record holds more backups than are removed inline before the staging: the
    // oldest goes on the pruning thread instead, and the history stays bounded and usable.
    let (_tmp, root) = repo();
    let names: Vec<String> = (0..20).map(|i| format!("f{i}.txt")).collect();
    for name in &names {
        write(&root, name, b"v\n");
    }
    let undo_dir = root.join(".git/apply-patch/undo");
    let mut oldest = None;
    for i in 0..=txn::recover::UNDO_HISTORY {
        let changes = names
            .iter()
            .map(|name| Change {
                path: name.clone(),
                before: snap(&root, name),
                after: file(format!("v{i}\n").as_bytes()),
            })
            .collect();
        txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
        if i == 0 {
            let mut ids: Vec<_> = std::fs::read_dir(&undo_dir)
                .expect("undo")
                .flatten()
                .collect();
            let record = ids.pop().expect("one record").path();
            assert!(std::fs::read_dir(&record).expect("record").count() > 16);
            oldest = Some(record);
        }
    }
    let records = std::fs::read_dir(&undo_dir).expect("undo dir").count();
    assert_eq!(records, txn::recover::UNDO_HISTORY);
    assert!(!oldest.expect("kept").exists(), "the oldest record went");
    apply_patch::transaction::undo(&root).expect("undo");
    assert_eq!(std::fs::read(root.join("f7.txt")).expect("read"), b"v19\n");
}

#[test]
fn a_full_undo_history_makes_room_while_the_commit_runs_and_a_refused_one_keeps_it() {
    let (_tmp, root) = repo();
    let records = || {
        std::fs::read_dir(root.join(".git/apply-patch/undo"))
            .expect("undo dir")
            .count()
    };
    let commit = |text: &[u8]| {
        let change = Change {
            path: "a.txt".into(),
            before: snap(&root, "a.txt"),
            after: file(text),
        };
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    };
    for i in 0..txn::recover::UNDO_HISTORY {
        commit(format!("v{i}\n").as_bytes());
    }
    assert_eq!(records(), txn::recover::UNDO_HISTORY);
    // A commit refused by the staleness check touches nothing, the history neither.
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"stale\n"),
    };
    write(&root, "a.txt", b"someone else's edit\n");
    let err = txn::commit(&opts(&root, None), vec![change], &AuditRecord::default());
    assert_eq!(err.expect_err("stale").code, ErrorCode::StaleFile);
    assert_eq!(records(), txn::recover::UNDO_HISTORY);
    // One that fails later, while staging, has already let the oldest record go.
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"failed\n"),
    };
    let failing = opts(
        &root,
        Some(Failpoint {
            step: 2,
            action: Action::Fail,
        }),
    );
    let err = txn::commit(&failing, vec![change], &AuditRecord::default());
    assert_eq!(err.expect_err("failpoint").code, ErrorCode::IoError);
    assert_eq!(records(), txn::recover::UNDO_HISTORY - 1);
    commit(b"next\n");
    assert_eq!(records(), txn::recover::UNDO_HISTORY);
    apply_patch::transaction::undo(&root).expect("undo");
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("read"),
        b"someone else's edit\n"
    );
}

#[test]
fn outside_git_the_journal_is_a_hidden_folder_that_disappears() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("root");
    write(&root, "a.txt", b"one\n");
    let state = StateDir::outside_git(&root, tmp.path().join("state")).expect("state");
    assert_eq!(
        state.journal_dir(),
        root.canonicalize().expect("canon").join(".apply-patch-txn")
    );
    let mut o = opts(&root, None);
    o.state = Some(state.clone());
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"two\n"),
    };
    txn::commit(&o, vec![change], &AuditRecord::default()).expect("commit");
    assert!(!root.join(".apply-patch-txn").exists());
    assert_eq!(
        std::fs::read_dir(state.undo_dir()).expect("undo").count(),
        1
    );
    assert!(state.audit_log().is_file());
    txn::undo_with(&state, None).expect("undo");
    assert_eq!(std::fs::read(root.join("a.txt")).expect("read"), b"one\n");
}

#[test]
fn recover_with_nothing_to_do_is_empty() {
    let (_tmp, root) = repo();
    let report = apply_patch::transaction::recover(&root).expect("recover");
    assert!(report.is_empty());
}

#[test]
fn other_hard_links_keep_the_old_content() {
    let (_tmp, root) = repo();
    std::fs::hard_link(root.join("a.txt"), root.join("keep/a-link")).expect("hard link");
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"new\n"),
    };
    txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    assert_eq!(std::fs::read(root.join("a.txt")).expect("read"), b"new\n");
    assert_eq!(
        std::fs::read(root.join("keep/a-link")).expect("read"),
        b"one\ntwo\n"
    );
}

#[test]
#[cfg(unix)]
fn a_git_dir_on_another_file_system_gets_copied_backups_and_still_rolls_back() {
    use std::os::unix::fs::MetadataExt;
    let shm = Path::new("/dev/shm");
    let tmp = tempfile::tempdir().expect("temp dir");
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    if !shm.is_dir() || dev(shm) == dev(tmp.path()) {
        eprintln!("skipped: /dev/shm is missing or on the temp dir's file system");
        return;
    }
    let gitdir = tempfile::tempdir_in(shm).expect("git dir on tmpfs");
    let root = tmp.path().canonicalize().expect("canonical");
    std::fs::write(
        root.join(".git"),
        format!("gitdir: {}\n", gitdir.path().display()),
    )
    .expect(".git file");
    populate(&root);
    let old = tree(&root);
    for k in [6, 9, 12, 15] {
        let fp = Failpoint {
            step: k,
            action: Action::Fail,
        };
        let err = txn::commit(
            &opts(&root, Some(fp)),
            multi_change(&root),
            &AuditRecord::default(),
        )
        .expect_err("the failpoint fires");
        assert_eq!(err.code, ErrorCode::IoError, "step {k}: {err}");
        assert_eq!(tree(&root), old, "step {k}");
    }
    txn::commit(
        &opts(&root, None),
        multi_change(&root),
        &AuditRecord::default(),
    )
    .expect("commit");
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("read"),
        b"one\nTWO\n"
    );
    apply_patch::transaction::undo(&root).expect("undo from copied backups");
    assert_eq!(tree(&root), old);
}

#[test]
#[cfg(unix)]
fn owner_and_group_are_kept_where_permitted() {
    use std::os::unix::fs::MetadataExt;
    let (_tmp, root) = repo();
    if std::os::unix::fs::chown(root.join("a.txt"), Some(4321), Some(4321)).is_err() {
        eprintln!("skipped: only root may give a file to another owner");
        return;
    }
    let change = Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: file(b"new\n"),
    };
    txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect("commit");
    let meta = std::fs::metadata(root.join("a.txt")).expect("stat");
    assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
}

#[test]
#[cfg(unix)]
fn every_mode_is_set_exactly_whatever_the_umask_took_and_with_a_new_owner() {
    use std::os::unix::fs::MetadataExt;
    let (_tmp, root) = repo();
    // Bits a usual umask takes (0o666), set-id bits (which creation does not give), a
    // read-only file, and one that creation gives as is.
    let modes = [0o666, 0o4755, 0o2750, 0o444, 0o600];
    let mut changes = Vec::new();
    for (i, mode) in modes.iter().enumerate() {
        let path = format!("m{i}.txt");
        write(&root, &path, b"old\n");
        changes.push(Change {
            path: path.clone(),
            before: snap(&root, &path),
            after: NewState::File {
                bytes: format!("new {mode:o}\n").into_bytes().into(),
                mode: *mode,
            },
        });
    }
    // A file of another owner keeps its owner and gets its set-id mode back after the chown.
    let chowned = std::os::unix::fs::chown(root.join("a.txt"), Some(4321), Some(4321)).is_ok();
    changes.push(Change {
        path: "a.txt".into(),
        before: snap(&root, "a.txt"),
        after: NewState::File {
            bytes: b"owned\n".to_vec().into(),
            mode: 0o6755,
        },
    });
    txn::commit(&opts(&root, None), changes, &AuditRecord::default()).expect("commit");
    for (i, mode) in modes.iter().enumerate() {
        let meta = std::fs::metadata(root.join(format!("m{i}.txt"))).expect("stat");
        assert_eq!(meta.mode() & 0o7777, *mode, "m{i}.txt");
    }
    let meta = std::fs::metadata(root.join("a.txt")).expect("stat");
    assert_eq!(meta.mode() & 0o7777, 0o6755);
    if chowned {
        assert_eq!((meta.uid(), meta.gid()), (4321, 4321));
    }
}

#[test]
#[cfg(unix)]
fn a_symlink_swapped_in_for_the_file_itself_is_stale_and_not_followed() {
    let (_tmp, root) = repo();
    let outside = tempfile::tempdir().expect("outside dir");
    write(outside.path(), "k.txt", b"kay\n");
    let change = Change {
        path: "keep/k.txt".into(),
        before: snap(&root, "keep/k.txt"),
        after: file(b"pwned\n"),
    };
    std::fs::remove_file(root.join("keep/k.txt")).expect("rm");
    std::os::unix::fs::symlink(outside.path().join("k.txt"), root.join("keep/k.txt"))
        .expect("swap");
    let err =
        txn::commit(&opts(&root, None), vec![change], &AuditRecord::default()).expect_err("stale");
    assert_eq!(err.code, ErrorCode::StaleFile);
    assert_eq!(
        std::fs::read(outside.path().join("k.txt")).expect("read"),
        b"kay\n"
    );
}

#[test]
fn a_restore_that_fails_during_rollback_is_rollback_failed_and_keeps_the_journal() {
    let (_tmp, root) = repo();
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    let set_mtime = |t| {
        let f = std::fs::File::options()
            .write(true)
            .open(root.join("a.txt"))
            .expect("open");
        f.set_modified(t).expect("set mtime");
    };
    set_mtime(hour_ago);
    let changes = multi_change(&root);
    // A same-size edit with the old mtime put back passes the stat check (the documented
    // limit of stat-based staleness); its backup then no longer matches the planned old hash.
    std::fs::write(root.join("a.txt"), b"ONE\nTWO\n").expect("write");
    set_mtime(hour_ago);
    // Step 16 is the first verification: after every rename, before the commit point.
    let fp = Failpoint {
        step: 16,
        action: Action::Fail,
    };
    let err =
        txn::commit(&opts(&root, Some(fp)), changes, &AuditRecord::default()).expect_err("fails");
    assert_eq!(err.code, ErrorCode::RollbackFailed, "{err}");
    assert_eq!(err.exit_status(), 3);
    assert!(err.message.contains("backup of a.txt"), "{}", err.message);
    let details = err.details().expect("details");
    assert_eq!(details["cause"]["code"], "io_error");
    assert!(root.join(".git/apply-patch/journal/journal.json").is_file());
    // Every other path is back; a.txt keeps the new content rather than a wrong "old" one.
    assert!(!root.join("added.txt").exists());
    assert_eq!(
        std::fs::read(root.join("gone/d.txt")).expect("restored"),
        b"dee\n"
    );
    assert_eq!(
        std::fs::read(root.join("a.txt")).expect("read"),
        b"one\nTWO\n"
    );
    assert_eq!(
        audit_lines(&root).last().map(|l| l["outcome"].clone()),
        Some("rollback_failed".into())
    );
}

/// Runs git with a fixed identity; `None` when git is not installed.
fn git(dir: &Path, args: &[&str]) -> Option<()> {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(())
}

#[test]
fn state_of_a_real_linked_worktree_is_its_own_git_dir() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let main = tmp.path().canonicalize().expect("canonical").join("main");
    std::fs::create_dir(&main).expect("mkdir");
    if git(&main, &["init", "-q"]).is_none() {
        eprintln!("skipped: git is not installed");
        return;
    }
    write(&main, "a.txt", b"one\n");
    git(&main, &["add", "a.txt"]);
    git(&main, &["commit", "-q", "-m", "one"]);
    git(&main, &["worktree", "add", "-q", "../wt"]);
    let wt = main.parent().expect("parent").join("wt");
    let state = StateDir::for_root(&wt.join(".")).expect("state");
    assert_eq!(
        state.git_dir(),
        Some(main.join(".git/worktrees/wt").as_path())
    );
    let change = Change {
        path: "a.txt".into(),
        before: snap(&wt, "a.txt"),
        after: file(b"two\n"),
    };
    txn::commit(&opts(&wt, None), vec![change], &AuditRecord::default()).expect("commit");
    assert!(main
        .join(".git/worktrees/wt/apply-patch/audit.jsonl")
        .is_file());
    assert_eq!(
        std::fs::read(main.join("a.txt")).expect("read"),
        b"one\n",
        "main untouched"
    );
    apply_patch::transaction::undo(&wt).expect("undo");
    assert_eq!(std::fs::read(wt.join("a.txt")).expect("read"), b"one\n");
}
