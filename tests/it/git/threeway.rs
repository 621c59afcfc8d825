//! `--3way` on every operation kind of a git diff (modify, rename, rename with a mode change,
//! copy, delete) with a local edit in or outside the hunk, staged or not, each compared with
//! `git apply --3way` on a twin repository: the work-tree files, modes and index must agree,
//! and the user's edit must survive wherever the file goes. Where we deliberately differ
//! from git, the test asserts our documented behaviour and says why.

use super::Scratch;
use serde_json::Value;
use std::collections::BTreeMap;

/// The operation a diff makes on `a.txt` (lines 1..12); every one but the delete also
/// changes line 6 to `six`.
#[derive(Clone, Copy, Debug)]
enum Op {
    Modify,
    Rename,
    RenameMode,
    Copy,
    Delete,
}

/// What both tools make of a case.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Applied; `merged` when the hunk did not fit and the fallback merged.
    Clean { merged: bool },
    /// The local edit and the patch change the same line.
    Conflict,
    /// Refused with this code, nothing changed (git refuses too).
    Refused(&'static str),
}

fn numbered(s: &Scratch) {
    s.write(
        "a.txt",
        &(1..=12).map(|i| format!("{i}\n")).collect::<String>(),
    );
    s.commit_all("init");
}

/// `a.txt` with line `n` replaced by `text`.
fn edit_line(s: &Scratch, path: &str, n: usize, text: &str) {
    let old = std::fs::read_to_string(s.dir.join(path)).unwrap();
    let new: String = old
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}\n", if i + 1 == n { text } else { l }))
        .collect();
    s.write(path, &new);
}

fn chmod(s: &Scratch, path: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(s.dir.join(path), std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The diff of `op`, made by git (renames and copies detected) in a repository of its own.
fn diff_of(op: Op) -> String {
    let t = Scratch::new(&[]);
    numbered(&t);
    match op {
        Op::Modify => edit_line(&t, "a.txt", 6, "six"),
        Op::Rename | Op::RenameMode => {
            t.git(&["mv", "a.txt", "b.txt"]);
            edit_line(&t, "b.txt", 6, "six");
            if matches!(op, Op::RenameMode) {
                chmod(&t, "b.txt", 0o755);
            }
        }
        Op::Copy => {
            std::fs::copy(t.dir.join("a.txt"), t.dir.join("b.txt")).unwrap();
            edit_line(&t, "b.txt", 6, "six");
        }
        Op::Delete => std::fs::remove_file(t.dir.join("a.txt")).unwrap(),
    }
    t.git(&["add", "-A"]);
    t.git(&["diff", "--cached", "-M", "-C", "--find-copies-harder"])
}

/// A repository at `numbered` with line `line` of `a.txt` edited locally, staged or not.
fn edited(line: usize, text: &str, staged: bool) -> Scratch {
    let s = Scratch::new(&[]);
    numbered(&s);
    edit_line(&s, "a.txt", line, text);
    if staged {
        s.git(&["add", "a.txt"]);
    }
    s
}

/// Every file of the work tree (outside `.git`) with its executable bits and content.
fn files(s: &Scratch) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&s.dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&entry.metadata().unwrap().permissions());
        let content = std::fs::read_to_string(entry.path()).unwrap();
        out.insert(name, format!("{:o} {content:?}", mode & 0o111));
    }
    out
}

fn report(run: &super::cli::Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|_| panic!("JSON: {}{}", run.stdout, run.stderr))
}

fn merged_warnings(report: &Value) -> usize {
    report["warnings"]
        .as_array()
        .map_or(0, |w| w.iter().filter(|w| w["code"] == "merged").count())
}

/// Run the case staged (against git on a twin) and unstaged; returns what git made of the
/// staged case.
fn compare(op: Op, line: usize, text: &str, expect: Expect) {
    let diff = diff_of(op);
    let reference = staged(&diff, line, text, expect);
    unstaged(&diff, line, text, expect, &reference);
}

/// A staged local edit: `--3way --index` against `git apply --3way` (which implies
/// `--index`); `--3way` alone against the same work tree and an untouched index.
fn staged(diff: &str, line: usize, text: &str, expect: Expect) -> BTreeMap<String, String> {
    let (ours, theirs) = (edited(line, text, true), edited(line, text, true));
    let before = ours.state();
    let git = theirs.git_apply(&["--3way"], diff);
    let run = ours.apply_patch(&["--3way", "--index", "--json"], diff);
    let got = report(&run);
    match expect {
        Expect::Clean { merged } => {
            assert_eq!((run.status, git), (0, 0), "{}", run.stdout);
            assert_eq!(ours.state(), theirs.state());
            assert_eq!(merged_warnings(&got), usize::from(merged), "{}", run.stdout);
            // The local edit survives wherever the file went.
            let target = if ours.dir.join("b.txt").exists() {
                "b.txt"
            } else {
                "a.txt"
            };
            let content = std::fs::read_to_string(ours.dir.join(target)).unwrap();
            assert!(content.contains(&format!("{text}\n")), "{content}");
            assert!(content.contains("six\n"), "{content}");
            // Without --index: the same files, the index as it was.
            let alone = edited(line, text, true);
            let index = alone.git(&["ls-files", "--stage"]);
            let run = alone.apply_patch(&["--3way", "--json"], diff);
            assert_eq!(run.status, 0, "{}", run.stdout);
            assert_eq!(files(&alone), files(&theirs));
            assert_eq!(alone.git(&["ls-files", "--stage"]), index);
        }
        Expect::Conflict => {
            // Deliberate difference: without --conflict-markers we refuse and write nothing
            // (git always writes the markers); with it, the same markers and stages as git.
            assert_eq!(run.status, 1);
            assert_eq!(got["error"]["code"], "merge_conflict", "{}", run.stdout);
            assert_eq!(ours.state(), before, "a refused merge writes nothing");
            let run = ours.apply_patch(&["--3way", "--index", "--conflict-markers"], diff);
            assert_eq!((run.status, git == 0), (1, false), "{}", run.stdout);
            assert_eq!(ours.state(), theirs.state());
        }
        Expect::Refused(code) => {
            assert_eq!((run.status, git == 0), (1, false), "{}", run.stdout);
            assert_eq!(got["error"]["code"], code, "{}", run.stdout);
            assert_eq!(ours.state(), before);
            assert_eq!(theirs.state(), before, "git refuses too");
        }
    }
    files(&theirs)
}

/// An unstaged local edit: git refuses (`--3way` implies `--index`, and the work tree does not
/// match it), as does `--3way --index`; `--3way` alone merges into the work tree as git does
/// for the staged edit (`reference`), the index untouched.
fn unstaged(
    diff: &str,
    line: usize,
    text: &str,
    expect: Expect,
    reference: &BTreeMap<String, String>,
) {
    let (ours, theirs) = (edited(line, text, false), edited(line, text, false));
    let before = ours.state();
    assert_ne!(theirs.git_apply(&["--3way"], diff), 0);
    let run = ours.apply_patch(&["--3way", "--index", "--json"], diff);
    assert_eq!(
        report(&run)["error"]["code"],
        "index_mismatch",
        "{}",
        run.stdout
    );
    assert_eq!(ours.state(), theirs.state());
    assert_eq!(ours.state(), before);

    let run = ours.apply_patch(&["--3way", "--json"], diff);
    let got = report(&run);
    match expect {
        Expect::Clean { merged } => {
            assert_eq!(run.status, 0, "{}", run.stdout);
            assert_eq!(merged_warnings(&got), usize::from(merged), "{}", run.stdout);
            assert_eq!(&files(&ours), reference);
            assert_eq!(
                ours.git(&["ls-files", "--stage"]),
                theirs.git(&["ls-files", "--stage"])
            );
        }
        Expect::Conflict => {
            assert_eq!(got["error"]["code"], "merge_conflict", "{}", run.stdout);
            assert_eq!(ours.state(), before);
        }
        Expect::Refused(code) => {
            assert_eq!(got["error"]["code"], code, "{}", run.stdout);
            assert_eq!(ours.state(), before);
        }
    }
}

const IN_HUNK: (usize, &str) = (4, "four");
const OUTSIDE: (usize, &str) = (12, "twelve");
const SAME_LINE: (usize, &str) = (6, "SIX");
const MERGED: Expect = Expect::Clean { merged: true };
const DIRECT: Expect = Expect::Clean { merged: false };

#[test]
fn three_way_modify_with_a_local_edit_in_the_hunk() {
    compare(Op::Modify, IN_HUNK.0, IN_HUNK.1, MERGED);
}

#[test]
fn three_way_modify_with_a_local_edit_outside_the_hunk() {
    compare(Op::Modify, OUTSIDE.0, OUTSIDE.1, DIRECT);
}

#[test]
fn three_way_modify_with_a_local_edit_of_the_same_line() {
    compare(Op::Modify, SAME_LINE.0, SAME_LINE.1, Expect::Conflict);
}

#[test]
fn three_way_rename_with_a_local_edit_in_the_hunk() {
    compare(Op::Rename, IN_HUNK.0, IN_HUNK.1, MERGED);
}

#[test]
fn three_way_rename_with_a_local_edit_outside_the_hunk() {
    compare(Op::Rename, OUTSIDE.0, OUTSIDE.1, DIRECT);
}

#[test]
fn three_way_rename_with_a_local_edit_of_the_same_line() {
    compare(Op::Rename, SAME_LINE.0, SAME_LINE.1, Expect::Conflict);
}

#[test]
fn three_way_rename_and_mode_with_a_local_edit_in_the_hunk() {
    compare(Op::RenameMode, IN_HUNK.0, IN_HUNK.1, MERGED);
}

#[test]
fn three_way_rename_and_mode_with_a_local_edit_outside_the_hunk() {
    compare(Op::RenameMode, OUTSIDE.0, OUTSIDE.1, DIRECT);
}

#[test]
fn three_way_rename_and_mode_with_a_local_edit_of_the_same_line() {
    compare(Op::RenameMode, SAME_LINE.0, SAME_LINE.1, Expect::Conflict);
}

#[test]
fn three_way_copy_with_a_local_edit_in_the_hunk() {
    compare(Op::Copy, IN_HUNK.0, IN_HUNK.1, MERGED);
}

#[test]
fn three_way_copy_with_a_local_edit_outside_the_hunk() {
    compare(Op::Copy, OUTSIDE.0, OUTSIDE.1, DIRECT);
}

#[test]
fn three_way_copy_with_a_local_edit_of_the_same_line() {
    compare(Op::Copy, SAME_LINE.0, SAME_LINE.1, Expect::Conflict);
}

// A deletion's one hunk is the whole file, so every local edit lies in it. A deletion is
// never merged: git refuses it ("patch does not apply", no three-way for a delete), and so
// do we (the file is not as the diff deletes it), writing nothing.

#[test]
fn three_way_delete_with_a_local_edit_in_the_middle() {
    compare(
        Op::Delete,
        IN_HUNK.0,
        IN_HUNK.1,
        Expect::Refused("context_not_found"),
    );
}

#[test]
fn three_way_delete_with_a_local_edit_at_the_end() {
    compare(
        Op::Delete,
        OUTSIDE.0,
        OUTSIDE.1,
        Expect::Refused("context_not_found"),
    );
}

/// `--cached --3way` merges a rename against the source's staged content, as git does.
#[test]
fn three_way_cached_rename_merges_the_staged_source() {
    let diff = diff_of(Op::Rename);
    let (ours, theirs) = (edited(4, "four", true), edited(4, "four", true));
    // An unstaged edit on top, which --cached neither reads nor touches.
    for s in [&ours, &theirs] {
        edit_line(s, "a.txt", 12, "work tree only");
    }
    let run = ours.apply_patch(&["--3way", "--cached", "--json"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(merged_warnings(&report(&run)), 1, "{}", run.stdout);
    assert_eq!(theirs.git_apply(&["--3way", "--cached"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    assert_eq!(
        ours.git(&["show", ":b.txt"]),
        "1\n2\n3\nfour\n5\nsix\n7\n8\n9\n10\n11\n12\n"
    );
}

/// A diff that copies `a.txt` and also changes it plans both from the one base: each keeps
/// the local edit, and the copy reads `a.txt` as it was before the diff (without the change
/// to line 10), as git's does. (Not compared with `git apply --3way`, which refuses this
/// tree: the local edit is not staged.)
#[test]
fn three_way_copy_and_modify_of_one_source_both_keep_the_local_edit() {
    let t = Scratch::new(&[]);
    numbered(&t);
    std::fs::copy(t.dir.join("a.txt"), t.dir.join("b.txt")).unwrap();
    edit_line(&t, "b.txt", 6, "six");
    edit_line(&t, "a.txt", 10, "ten");
    t.git(&["add", "-A"]);
    let diff = t.git(&["diff", "--cached", "-C", "--find-copies-harder"]);
    assert!(diff.contains("copy to b.txt"), "{diff}");

    let s = edited(4, "four", false);
    let run = s.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(merged_warnings(&report(&run)), 2, "{}", run.stdout);
    let read = |p: &str| std::fs::read_to_string(s.dir.join(p)).unwrap();
    assert_eq!(read("a.txt"), "1\n2\n3\nfour\n5\n6\n7\n8\n9\nten\n11\n12\n");
    assert_eq!(
        read("b.txt"),
        "1\n2\n3\nfour\n5\nsix\n7\n8\n9\n10\n11\n12\n"
    );
}

/// A repository whose `a.txt` holds the first hunk of the diff already (committed).
fn half_applied() -> Scratch {
    let s = Scratch::new(&[]);
    numbered(&s);
    edit_line(&s, "a.txt", 2, "two");
    s.commit_all("half");
    s
}

#[test]
fn three_way_merges_a_partly_applied_file_as_git_does() {
    // SPEC §7: with --3way a file refused as partly applied is merged from its base blob
    // (a real commit that git cherry-picks cleanly was refused).
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        edit_line(&t, "a.txt", 2, "two");
        edit_line(&t, "a.txt", 11, "eleven");
        t.git(&["add", "-A"]);
        t.git(&["diff", "--cached"])
    };
    let (ours, theirs) = (half_applied(), half_applied());
    let plain = ours.apply_patch(&["--json"], &diff);
    assert_eq!(plain.status, 1, "{}", plain.stdout);
    assert_eq!(report(&plain)["error"]["code"], "already_applied");
    let run = ours.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let report = report(&run);
    assert_eq!(merged_warnings(&report), 1, "{report}");
    let warning = &report["warnings"][0];
    assert!(
        warning["message"]
            .as_str()
            .is_some_and(|m| m.contains("hunk 1 was in the file already")),
        "{warning}"
    );
    assert_eq!(warning["hunk"], 1);
    assert_eq!(theirs.git_apply(&["--3way"], &diff), 0);
    // git's --3way also stages the result; compare the work trees.
    assert_eq!(files(&ours), files(&theirs));
    let text = std::fs::read_to_string(ours.dir.join("a.txt")).unwrap();
    assert!(
        text.contains("two\n") && text.contains("eleven\n"),
        "{text}"
    );
}

#[test]
fn three_way_on_a_partly_applied_file_whose_rest_conflicts_is_a_merge_conflict() {
    // The file holds hunk 1 already and changed hunk 2's line its own way: the merge decides
    // (SPEC §7), and it conflicts, as git's does; nothing is written.
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        edit_line(&t, "a.txt", 2, "two");
        edit_line(&t, "a.txt", 11, "eleven");
        t.git(&["add", "-A"]);
        t.git(&["diff", "--cached"])
    };
    let conflicted = || {
        let s = half_applied();
        edit_line(&s, "a.txt", 11, "ELEVEN");
        s.commit_all("ELEVEN");
        s
    };
    let (ours, theirs) = (conflicted(), conflicted());
    let before = files(&ours);
    let run = ours.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert_eq!(report(&run)["error"]["code"], "merge_conflict");
    assert_eq!(files(&ours), before);
    assert_ne!(theirs.git_apply(&["--3way"], &diff), 0);
}

#[test]
fn three_way_tries_the_merge_before_fuzz_and_a_conflict_is_final() {
    // The diff changes line 6; the file changed line 3 (the hunk's outermost context line,
    // which fuzz would ignore) and line 6 itself: the merge conflicts, and fuzz is not tried.
    let diff = diff_of(Op::Modify);
    let s = edited(6, "SIX", false);
    edit_line(&s, "a.txt", 3, "THREE");
    let before = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
    let run = s.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert_eq!(report(&run)["error"]["code"], "merge_conflict");
    assert_eq!(
        std::fs::read_to_string(s.dir.join("a.txt")).unwrap(),
        before
    );
    // Only line 3 changed: fuzz alone would place the hunk (not with --fuzz 0); the merge,
    // tried first, is clean.
    let s = edited(3, "THREE", false);
    assert_eq!(s.apply_patch(&["--json", "--fuzz", "0"], &diff).status, 1);
    let run = s.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(merged_warnings(&report(&run)), 1, "{}", run.stdout);
}

#[test]
fn three_way_without_a_base_blob_falls_back_to_fuzz() {
    // A plain diff (no `index` line) names no base: the merge cannot help, and fuzz places
    // the hunk whose outer context line `3` reads `three` in the diff.
    let s = Scratch::new(&[]);
    numbered(&s);
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -3,7 +3,7 @@\n three\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n";
    assert_eq!(
        s.apply_patch(&["--3way", "--json", "--fuzz", "0"], diff)
            .status,
        1
    );
    let run = s.apply_patch(&["--3way", "--json"], diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let report = report(&run);
    assert_eq!(merged_warnings(&report), 0, "{report}");
    assert_eq!(report["files"][0]["hunks"][0]["fuzz"], 2, "{report}");
    let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
    assert!(text.contains("\n5\nsix\n7\n"), "{text}");
}
