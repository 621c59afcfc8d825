//! CLI level: every run recovers a crashed transaction before it plans (SPEC §6). The real
//! binary crashes (failpoint `abort`) at every step of a commit; the next run — the same
//! patch again, or an unrelated one — must leave the crashed patch's files wholly old or
//! wholly new, and no later run may roll them back.

use std::process::Command;

use crate::util::{Output, TempTree, TreeSnapshot};

/// Update, add (in a new folder), delete (emptying its folder) and move with an edit.
const PATCH: &str = "*** Begin Patch
*** Update File: a.txt
@@
 one
-two
+TWO
*** Add File: new/b.txt
+bee
*** Delete File: gone/d.txt
*** Update File: old/c.txt
*** Move to: moved/c.txt
@@
-sea
+SEA
*** End Patch
";

/// [`PATCH`] without its Delete, so that it can be sent again once applied (a Delete of a
/// file already gone stays `file_not_found`).
const RESENT: &str = "*** Begin Patch
*** Update File: a.txt
@@
 one
-two
+TWO
*** Add File: new/b.txt
+bee
*** Update File: old/c.txt
*** Move to: moved/c.txt
@@
-sea
+SEA
*** End Patch
";

/// Touches none of [`PATCH`]'s files.
const UNRELATED: &str = "*** Begin Patch
*** Update File: keep/k.txt
@@
-kay
+KAY
*** End Patch
";

/// A second unrelated patch, run after [`UNRELATED`].
const LATER: &str = "*** Begin Patch
*** Update File: keep/k.txt
@@
-KAY
+kay again
*** End Patch
";

fn tree() -> TempTree {
    TempTree::with(&[
        ("a.txt", "one\ntwo\n"),
        ("gone/d.txt", "dee\n"),
        ("old/c.txt", "sea\n"),
        ("keep/k.txt", "kay\n"),
    ])
}

/// Runs the binary on `t` with `args` and the patch on stdin, and the failpoint `fp`.
fn run_with_failpoint(t: &TempTree, args: &[&str], patch: &str, fp: &str) -> i32 {
    use std::io::Write as _;
    let state = t.outside("state");
    let mut child = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
        .args(args)
        .current_dir(t.root())
        .env("XDG_STATE_HOME", &state)
        .env("HOME", &state)
        .env("APPLY_PATCH_FAILPOINT", fp)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(patch.as_bytes()).expect("write stdin");
    drop(stdin);
    let status = child.wait().expect("the binary finishes");
    match status.code() {
        // `abort()` ends a Windows process with STATUS_STACK_BUFFER_OVERRUN (a fail-fast
        // exit), where a Unix one dies of SIGABRT and has no exit code.
        Some(code) if cfg!(windows) && code as u32 == 0xC000_0409 => -1,
        Some(code) => code,
        None => -1,
    }
}

/// The paths [`PATCH`] touches, as `t` holds them (folders included).
fn patched_part(snapshot: &TreeSnapshot) -> TreeSnapshot {
    snapshot
        .iter()
        .filter(|(p, _)| !p.starts_with("keep"))
        .map(|(p, e)| (p.clone(), e.clone()))
        .collect()
}

/// The tree before and after `patch`.
fn old_and_new(patch: &str) -> (TreeSnapshot, TreeSnapshot) {
    let t = tree();
    let old = t.snapshot();
    let out = t.run(&["--json"], patch);
    assert_eq!(out.status, 0, "{}", out.stdout);
    (old, t.snapshot())
}

fn applied(out: &Output, what: &str) {
    assert_eq!(out.status, 0, "{what}: {}{}", out.stdout, out.stderr);
}

/// Crashes `patch` at every step `k`; returns the trees the crash left (stops at the first
/// step the run gets past).
fn crashed_trees(patch: &str) -> Vec<(usize, TempTree)> {
    let mut out = Vec::new();
    for k in 1.. {
        let t = tree();
        let status = run_with_failpoint(&t, &[], patch, &format!("commit:{k}:abort"));
        if status == 0 {
            break;
        }
        assert_eq!(status, -1, "step {k}: the run aborted");
        out.push((k, t));
    }
    assert!(out.len() > 10, "the commit has a step per file and phase");
    out
}

#[test]
fn after_a_crash_at_any_step_the_same_patch_again_applies_it_wholly() {
    let (_, new) = old_and_new(RESENT);
    for (k, t) in crashed_trees(RESENT) {
        let out = t.run(&["--json"], RESENT);
        applied(&out, &format!("step {k}: the same patch again"));
        assert_eq!(t.snapshot(), new, "step {k}: wholly new");
        applied(&t.run(&[], UNRELATED), &format!("step {k}: unrelated"));
        assert_eq!(
            patched_part(&t.snapshot()),
            patched_part(&new),
            "step {k}: an unrelated apply rolled nothing back"
        );
    }
}

#[test]
fn after_a_crash_at_any_step_an_unrelated_patch_leaves_it_old_or_new_for_good() {
    let (old, new) = old_and_new(PATCH);
    for (k, t) in crashed_trees(PATCH) {
        // Without a journal file the crash came before anything was written.
        let journaled = t.root().join(".apply-patch-txn/journal.json").exists();
        let out = t.run(&["--json"], UNRELATED);
        applied(&out, &format!("step {k}: unrelated"));
        let part = patched_part(&t.snapshot());
        assert!(
            part == patched_part(&old) || part == patched_part(&new),
            "step {k}: wholly old or wholly new, found {part:?}"
        );
        let warned = out.json()["warnings"]
            .as_array()
            .is_some_and(|w| w.iter().any(|w| w["code"] == "recovered"));
        assert_eq!(
            warned, journaled,
            "step {k}: the recovery is reported: {}",
            out.stdout
        );
        applied(&t.run(&[], LATER), &format!("step {k}: later"));
        assert_eq!(
            patched_part(&t.snapshot()),
            part,
            "step {k}: a later apply changed nothing of the recovered patch"
        );
        assert_eq!(t.read_str("keep/k.txt"), "kay again\n");
    }
}

#[test]
fn check_after_a_crash_refuses_naming_recover_and_writes_nothing() {
    let (old, new) = old_and_new(PATCH);
    let crashed = crashed_trees(PATCH);
    // A crash after every rename, before the commit mark: the tree holds the new files.
    // The files only: folders emptied by the Delete go after the commit point.
    let visible = |s: TreeSnapshot| -> TreeSnapshot {
        s.into_iter()
            .filter(|(p, e)| !p.contains(".apply-patch") && *e != crate::util::Entry::Dir)
            .collect()
    };
    let (k, t) = crashed
        .iter()
        .find(|(_, t)| visible(patched_part(&t.snapshot())) == visible(patched_part(&new)))
        .expect("some step leaves every rename done");
    let before = t.snapshot();
    let out = t.run(&["--json", "--check"], PATCH);
    assert_eq!(out.status, 1, "step {k}: {}", out.stdout);
    let error = &out.json()["error"];
    assert_eq!(error["code"], "busy", "step {k}");
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("apply-patch recover")),
        "{error}"
    );
    assert_eq!(t.snapshot(), before, "--check wrote nothing");
    let out = t.run(&["recover"], "");
    applied(&out, "recover");
    assert_eq!(patched_part(&t.snapshot()), patched_part(&old));
    applied(&t.run(&["--check"], PATCH), "check after recover");
}
