//! The commit stage's refusals as boundary errors: code, message, path, hint and details.

use super::*;

#[test]
fn a_refusal_keeps_its_causes_code_path_and_details() {
    let cause = Error::new(ErrorCode::PermissionDenied, "cannot write a.txt: denied")
        .with_path("a.txt")
        .with_hint("fix the permissions")
        .with_details(serde_json::json!({"k": 1}));
    let failed: Error = TxnError::RecoveryFailed {
        cause: Box::new(cause.clone().into()),
    }
    .into();
    assert_eq!(failed.code, ErrorCode::PermissionDenied);
    assert_eq!(failed.path.as_deref(), Some("a.txt"));
    assert_eq!(failed.details(), cause.details());
    assert!(failed
        .message
        .ends_with("recovering it failed: cannot write a.txt: denied"));
    assert!(failed
        .hint
        .is_some_and(|h| h.contains("apply-patch recover")));
    let rolled: Error = TxnError::RolledBack {
        cause: Box::new(cause.clone().into()),
    }
    .into();
    assert_eq!(
        rolled.message,
        "cannot write a.txt: denied; the work-tree changes were rolled back"
    );
    assert_eq!(
        rolled.hint, cause.hint,
        "the cause's own next step still holds"
    );
}

#[test]
fn a_stale_file_after_a_recovery_keeps_its_message_and_says_why() {
    let cause = Error::new(ErrorCode::StaleFile, "a.txt changed since it was read")
        .with_path("a.txt")
        .with_hint("read the file again");
    let out: Error = TxnError::StaleAfterRecovery {
        cause: Box::new(cause.clone().into()),
    }
    .into();
    assert_eq!(out.code, ErrorCode::StaleFile);
    assert_eq!(out.message, cause.message);
    assert!(out
        .hint
        .is_some_and(|h| h.starts_with("an interrupted transaction was just recovered")));
}

#[test]
fn a_failed_revert_is_rollback_failed_with_the_causes_details() {
    let cause = Error::new(ErrorCode::Busy, "another transaction committed since")
        .with_path("a.txt")
        .with_details(serde_json::json!({"other": "t2"}));
    let out: Error = TxnError::RevertFailed {
        cause: Box::new(cause.clone()),
    }
    .into();
    assert_eq!(out.code, ErrorCode::RollbackFailed);
    assert_eq!(
        out.message,
        "the post-check failed and the change could not be rolled back: another \
         transaction committed since"
    );
    assert_eq!(out.path, None);
    assert_eq!(out.details(), cause.details());
    assert!(out.hint.is_some_and(|h| h.contains("apply-patch undo")));
}

#[test]
fn an_undo_refusal_names_the_transactions_and_files() {
    let late: Error = TxnError::NotTheLast {
        id: "t1".into(),
        last: Some("t2".into()),
    }
    .into();
    assert_eq!(late.code, ErrorCode::RollbackFailed);
    assert_eq!(
        late.message,
        "cannot roll back transaction t1: transaction t2 was committed after it, and \
         reverting in its place would undo another change"
    );
    assert_eq!(
        late.details(),
        Some(&serde_json::json!({"transaction": "t1", "last": "t2"}))
    );
    let changed: Error = TxnError::ChangedSinceApplied {
        id: "t1".into(),
        changed: vec!["a.txt".into(), "b.txt".into()],
    }
    .into();
    assert_eq!(changed.code, ErrorCode::StaleFile);
    assert_eq!(changed.path.as_deref(), Some("a.txt"));
    assert!(changed.message.ends_with("changed since it was applied: a.txt, b.txt"));
    let none: Error = TxnError::NoRecordOfTheLast {
        last: "t3".into(),
        newest: None,
    }
    .into();
    assert_eq!(none.code, ErrorCode::IoError);
    assert!(none.message.contains("; there is none, and reverting"));
    assert_eq!(
        TxnError::NotAFile { path: "d".into() }.code(),
        ErrorCode::IoError
    );
}

#[test]
fn a_failed_restore_lists_every_failure_and_keeps_the_commits_cause() {
    let cause = Error::new(ErrorCode::IoError, "cannot rename a.txt").with_path("a.txt");
    let failure = Error::new(ErrorCode::IoError, "cannot restore b.txt").with_path("b.txt");
    let out: Error = TxnError::RestoreFailed {
        during: Restoring::FailedCommit {
            cause: Box::new(cause.into()),
        },
        journal: Path::new("/s/j1").into(),
        failures: vec![failure],
        conflicts: vec!["c.txt".into(), "n/d.txt".into()],
        blocked: vec![Blocked {
            path: "n/d.txt".into(),
            at: "n".into(),
            symlink: true,
        }],
    }
    .into();
    assert_eq!(out.code, ErrorCode::RollbackFailed);
    assert_eq!(
        out.message,
        "cannot rename a.txt — and restoring the old state failed; cannot restore b.txt; \
         c.txt holds neither its old nor its new content; n/d.txt cannot be reached: n on its \
         path is a symbolic link (never followed) now, put there by another program"
    );
    let details = out.details().expect("a failed restore has details");
    assert_eq!(details["journal"], "/s/j1");
    assert_eq!(details["failures"][0]["path"], "b.txt");
    assert_eq!(details["conflicts"][0], "c.txt");
    assert_eq!(details["blocked"][0]["at"], "n");
    assert_eq!(details["cause"]["path"], "a.txt");
    assert!(out.hint.is_some_and(|h| h.contains("apply-patch recover")));
    let recovering: Error = TxnError::RestoreFailed {
        during: Restoring::Recovery { id: "t9".into() },
        journal: Path::new("/s/j9").into(),
        failures: Vec::new(),
        conflicts: Vec::new(),
        blocked: Vec::new(),
    }
    .into();
    assert_eq!(
        recovering.message,
        "recovering transaction t9 could not restore every file"
    );
    assert!(recovering.details().is_some_and(|d| d.get("cause").is_none()));
}

#[test]
fn a_journal_refusal_names_the_journal_and_the_next_step() {
    let untrusted: Error = TxnError::Untrusted {
        place: "/s/j1".into(),
        reason: "its secret differs".into(),
    }
    .into();
    assert_eq!(untrusted.code, ErrorCode::IoError);
    assert_eq!(
        untrusted.message,
        "refusing the apply-patch journal /s/j1: its secret differs; it was left as it is"
    );
    assert_eq!(untrusted.path.as_deref(), Some("/s/j1"));
    assert!(untrusted
        .hint
        .as_deref()
        .is_some_and(|h| h.starts_with("if it came with a copy or an archive of the tree, remove /s/j1;")));
    assert_eq!(
        untrusted.details(),
        Some(&serde_json::json!({"journal": "/s/j1", "reason": "its secret differs"}))
    );
    let link: Error = TxnError::SymlinkOnPath {
        path: "a/b/c.txt".into(),
        symlink: "a/b".into(),
    }
    .into();
    assert_eq!(link.code, ErrorCode::PathEscape);
    assert_eq!(link.path.as_deref(), Some("a/b/c.txt"));
    assert_eq!(link.details(), Some(&serde_json::json!({"symlink": "a/b"})));
    let version: Error = TxnError::JournalVersion {
        journal: "j.json".into(),
        version: 9,
        reads: 2,
    }
    .into();
    assert_eq!(
        version.message,
        "the journal j.json has version 9; this apply-patch reads version 2"
    );
    assert!(version.hint.is_some());
    // No refusal of a journal leads to restoring some files by hand into a mixed tree.
    let leftovers: Error = TxnError::Leftovers {
        place: "/s/j2".into(),
    }
    .into();
    let hints = [&untrusted, &version, &leftovers].map(|e| e.hint.clone().unwrap_or_default());
    assert!(hints[0].contains("never some only"), "{}", hints[0]);
    assert!(hints[1].contains("never some only"), "{}", hints[1]);
    assert_eq!(
        hints[2],
        "remove it (`rm -r /s/j2`); do not restore files from it: its backups are old versions \
         of files the finished transaction replaced"
    );
    assert_eq!(leftovers.details(), Some(&serde_json::json!({"journal": "/s/j2"})));
    assert_eq!(
        leftovers.message,
        "refusing /s/j2: it holds files but no journal; apply-patch removes a journal only \
         once its transaction is over (the tree is then wholly old or wholly new), so these \
         are the leftovers of an interrupted clean-up (or a copy of the tree carried them); it \
         was left as it is"
    );
}

#[test]
fn busy_names_the_lock_and_how_long_it_waited() {
    let busy: Error = TxnError::Busy {
        lock: "/s/lock".into(),
        waited: std::time::Duration::from_millis(2500),
    }
    .into();
    assert_eq!(busy.code, ErrorCode::Busy);
    assert_eq!(
        busy.message,
        "another apply-patch transaction holds this root (waited 2.5 s for /s/lock)"
    );
    assert_eq!(busy.path, None);
    assert_eq!(
        busy.hint.as_deref(),
        Some("wait for the other run to finish, then try again")
    );
    assert_eq!(busy.details(), Some(&serde_json::json!({"lock": "/s/lock"})));
    let check: Error = TxnError::UnfinishedUnderCheck {
        journal: PathBuf::from("/s/journal"),
    }
    .into();
    assert_eq!(check.code, ErrorCode::Busy);
    assert_eq!(
        check.message,
        "an interrupted transaction of this root was not finished (/s/journal remains), and \
         --check writes nothing, so it cannot recover it; the tree may be half old, half new"
    );
    assert!(check.hint.as_deref().is_some_and(|h| h.starts_with("run `apply-patch recover`")));
    assert_eq!(check.details(), None);
}

#[test]
fn a_stale_target_says_how_it_changed() {
    let stale = |how| -> Error {
        TxnError::Stale {
            path: "a.txt".into(),
            how,
        }
        .into()
    };
    for (how, text) in [
        (Staleness::ExistsNow, "a.txt changed since it was read: it exists now"),
        (Staleness::Removed, "a.txt changed since it was read: it was removed"),
        (
            Staleness::Size { now: 3, was: 5 },
            "a.txt changed since it was read: its size is 3 bytes, was 5",
        ),
        (
            Staleness::Mode {
                now: 0o100755,
                was: 0o100644,
            },
            "a.txt changed since it was read: its mode is 100755, was 100644",
        ),
        (
            Staleness::SymlinkElsewhere,
            "a.txt changed since it was read: the symlink points elsewhere",
        ),
        (
            Staleness::OtherKind,
            "a.txt changed since it was read: it is a different kind of file",
        ),
        (
            Staleness::DuringCommit,
            "a.txt changed while the patch was being committed",
        ),
    ] {
        let out = stale(how);
        assert_eq!(out.code, ErrorCode::StaleFile);
        assert_eq!(out.message, text);
        assert_eq!(out.path.as_deref(), Some("a.txt"));
        assert_eq!(
            out.hint.as_deref(),
            Some("read the file again and make the patch against its current content")
        );
        assert_eq!(out.details(), None, "{text}");
    }
    let content = stale(Staleness::Content {
        expected: "aa".into(),
        actual: "bb".into(),
    });
    assert_eq!(
        content.message,
        "a.txt changed since it was read: its content differs"
    );
    assert_eq!(
        content.details(),
        Some(&serde_json::json!({
            "path": "a.txt", "expected_sha256": "aa", "actual_sha256": "bb"
        }))
    );
}

#[test]
fn the_commits_own_refusals_keep_their_code_message_and_path() {
    let cases: Vec<(TxnError, ErrorCode, &str, Option<&str>)> = vec![
        (
            TxnError::WorkerPanicked {
                worker: Worker::Pruning,
            },
            ErrorCode::IoError,
            "the thread pruning the undo history panicked",
            None,
        ),
        (
            TxnError::WorkerPanicked {
                worker: Worker::Sync,
            },
            ErrorCode::IoError,
            "a sync thread panicked",
            None,
        ),
        (
            TxnError::PathNotUtf8,
            ErrorCode::IoError,
            "a path of the transaction is not UTF-8",
            None,
        ),
        (
            TxnError::Twice { path: "a".into() },
            ErrorCode::IoError,
            "a appears twice in one transaction",
            Some("a"),
        ),
        (
            TxnError::FolderNotCreated { path: "d/a".into() },
            ErrorCode::IoError,
            "the folder of d/a could not be created",
            Some("d/a"),
        ),
        (
            TxnError::NotNormalised { path: "../a".into() },
            ErrorCode::PathEscape,
            "path ../a is not a normalised path inside the root",
            Some("../a"),
        ),
        (
            TxnError::NotRegular { path: "f".into() },
            ErrorCode::UnsupportedFile,
            "f is not a regular file, symlink or folder (a device, socket or fifo)",
            Some("f"),
        ),
        (
            TxnError::ChangedWhileFinishing { id: "t1".into() },
            ErrorCode::IoError,
            "the tree changed while transaction t1 was being finished",
            None,
        ),
        (
            TxnError::StagedContentWrong { path: "a".into() },
            ErrorCode::IoError,
            "the staged new content of a is not what the journal names",
            Some("a"),
        ),
    ];
    check_own(cases);
}

#[test]
fn the_recoverys_own_refusals_keep_their_code_message_and_path() {
    let cases: Vec<(TxnError, ErrorCode, &str, Option<&str>)> = vec![
        (
            TxnError::IndexLockGone {
                id: "t1".into(),
                lock: "/g/index.lock".into(),
            },
            ErrorCode::IoError,
            "the new git index of transaction t1 is gone (/g/index.lock was removed): the \
             index does not hold its changes",
            Some("/g/index.lock"),
        ),
        (
            TxnError::IndexLockChanged {
                id: "t1".into(),
                lock: "/g/index.lock".into(),
            },
            ErrorCode::IoError,
            "/g/index.lock does not hold the new git index of transaction t1; it was left as \
             it is",
            Some("/g/index.lock"),
        ),
        (
            TxnError::BackupMissing { path: "a".into() },
            ErrorCode::IoError,
            "the backup of a is missing",
            Some("a"),
        ),
        (
            TxnError::BackupWrong { path: "a".into() },
            ErrorCode::IoError,
            "the backup of a does not hold its old content",
            Some("a"),
        ),
        (
            TxnError::NotAFileToRestore { path: "d".into() },
            ErrorCode::IoError,
            "d was not a file; cannot restore it",
            Some("d"),
        ),
    ];
    check_own(cases);
}

/// Each refusal becomes a boundary error with this code, message and path, and no hint
/// or details of its own.
fn check_own(cases: Vec<(TxnError, ErrorCode, &str, Option<&str>)>) {
    for (err, code, message, path) in cases {
        assert_eq!(err.code(), code, "{message}");
        let out: Error = err.into();
        assert_eq!(out.code, code);
        assert_eq!(out.message, message);
        assert_eq!(out.path.as_deref(), path, "{message}");
        assert_eq!(out.hint, None, "{message}");
        assert_eq!(out.details(), None, "{message}");
    }
}

/// The commit's own I/O refusals are typed now: the boundary error is the one `Error::io`
/// made before (code, message, path), with the typed error, then the I/O failure, below it.
#[test]
fn an_io_refusal_of_the_commit_is_the_error_io_made() {
    use std::error::Error as _;
    for os in [13, 2, 28] {
        let err = std::io::Error::from_raw_os_error(os);
        let before = Error::io("a/b.txt", "cannot write the journal", &err);
        let typed = TxnError::io("a/b.txt", "cannot write the journal", err);
        assert_eq!(typed.code(), before.code);
        let now = Error::from(typed.clone());
        assert_eq!(now, before);
        assert_eq!(now.path_unnamed(), before.path_unnamed());
        let source = now.source().expect("the typed error");
        assert_eq!(source.downcast_ref::<TxnError>(), Some(&typed));
        let io = source
            .source()
            .and_then(|s| s.source())
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .expect("the I/O failure");
        assert_eq!(io.raw_os_error(), Some(os));
    }
    let copied = TxnError::io_of("x", "cannot read", &std::io::Error::other("gone"));
    assert_eq!(
        Error::from(copied),
        Error::io("x", "cannot read", &std::io::Error::other("gone"))
    );
}

#[test]
fn a_refusal_from_outside_the_transaction_passes_through_unchanged() {
    use crate::error::stage_checks::{foreign, passes_through};
    passes_through(&foreign(), TxnError::code);
    let usage = Error::new(ErrorCode::Usage, "the state folder s is writable by others")
        .with_path("s")
        .with_hint("chmod go-w s");
    passes_through(&usage, TxnError::code);
}

#[test]
fn a_failed_recovery_chains_to_the_recoverys_own_refusal() {
    use std::error::Error as _;
    let denied = std::io::Error::from_raw_os_error(13);
    let step = TxnError::io_of("a.txt", "cannot restore", &denied);
    let out: Error = TxnError::RecoveryFailed {
        cause: Box::new(step.clone()),
    }
    .into();
    let plain = Error::from(step.clone());
    assert_eq!(out.code, ErrorCode::PermissionDenied);
    assert_eq!(out.path, plain.path);
    assert!(out.message.ends_with(&format!("recovering it failed: {}", plain.message)));
    let top = out.source().expect("the wrapper");
    assert!(matches!(
        top.downcast_ref::<TxnError>(),
        Some(TxnError::RecoveryFailed { .. })
    ));
    let cause = top.source().expect("the step");
    assert_eq!(cause.downcast_ref::<Box<TxnError>>().map(|c| &**c), Some(&step));
    // A refusal from outside the transaction layer keeps its code, path and details.
    let outside = Error::new(ErrorCode::ProtectedFile, "the state place is not yours")
        .with_path("s")
        .with_details(serde_json::json!({"state": "s", "found": "link"}));
    let out: Error = TxnError::RecoveryFailed {
        cause: Box::new(outside.clone().into()),
    }
    .into();
    assert_eq!(
        (out.code, &out.path, out.details()),
        (outside.code, &outside.path, outside.details())
    );
    assert!(out.message.ends_with("recovering it failed: the state place is not yours"));
}
