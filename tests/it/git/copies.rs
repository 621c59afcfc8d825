//! Copy and rename sources of a git diff read the file as it was before the diff (a git diff
//! is a snapshot of two trees; `git apply` reads those sources from the preimage), checked
//! against `git apply` on the same diff, made by `git diff -M -C -C --find-copies-harder`
//! (or by joining two such diffs where git itself never writes the combination).

use super::Scratch;

const F: &str = "one\ntwo\nthree\nfour\nfive\n";

/// Two repositories holding `f.txt` and `k.txt`, committed.
fn twins() -> (Scratch, Scratch) {
    let make = || {
        let s = Scratch::new(&[]);
        s.write("f.txt", F);
        s.write("k.txt", "x\n");
        s.commit_all("init");
        s
    };
    let (a, b) = (make(), make());
    assert_eq!(a.state(), b.state(), "the twins start equal");
    (a, b)
}

/// The diff git makes, with copies found everywhere, of what `edit` does to the work tree;
/// the repository is then put back to HEAD.
fn git_diff(s: &Scratch, edit: &dyn Fn(&Scratch)) -> String {
    edit(s);
    s.git(&["add", "-A"]);
    let diff = s.git(&["diff", "--cached", "-M", "-C", "-C", "--find-copies-harder"]);
    s.git(&["reset", "-q", "--hard"]);
    s.git(&["clean", "-fdq"]);
    diff
}

/// The file patches of a diff (each from its `diff --git` line), to reorder them.
fn file_patches(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in diff.split_inclusive('\n') {
        match out.last_mut() {
            Some(last) if !line.starts_with("diff --git ") => last.push_str(line),
            _ => out.push(line.to_string()),
        }
    }
    out
}

fn copy_f_to(s: &Scratch, name: &str, extra: &str) {
    s.write(name, &format!("{F}{extra}"));
}

fn modify_f(s: &Scratch) {
    s.write("f.txt", &F.replace("two", "TWO"));
}

/// git and apply-patch apply `diff` with `args` to twin repositories: both succeed and leave
/// the same index, status, files and modes; that state is returned.
fn same_as_git(a: &Scratch, b: &Scratch, args: &[&str], diff: &str) -> String {
    assert_eq!(
        a.git_apply(args, diff),
        0,
        "git apply {args:?} takes\n{diff}"
    );
    let run = b.apply_patch(args, diff);
    assert_eq!(
        run.status, 0,
        "{args:?}\n{diff}{}{}",
        run.stdout, run.stderr
    );
    assert!(!run.stderr.contains("base_mismatch"), "{}", run.stderr);
    assert_eq!(b.state(), a.state(), "{args:?}\n{diff}");
    b.state()
}

/// Modify f.txt and copy it (unchanged) to `dest` with a line added; `dest` before f.txt in
/// name order puts the copy first in git's output.
fn modify_and_copy(dest: &str) {
    for args in [&[][..], &["--index"], &["--cached"]] {
        let (a, b) = twins();
        let diff = git_diff(&a, &|s| {
            copy_f_to(s, dest, "six\n");
            modify_f(s);
        });
        let copy_first = diff.find("copy from").expect("git found the copy")
            < diff.find("--- a/f.txt\n+++ b/f.txt").expect("and the edit");
        assert_eq!(copy_first, dest < "f.txt", "{diff}");
        same_as_git(&a, &b, args, &diff);
        if args.is_empty() {
            let copied = std::fs::read_to_string(b.dir.join(dest)).expect("copied");
            assert_eq!(copied, format!("{F}six\n"));
        }
    }
}

#[test]
fn modify_then_copy_of_the_same_file_copies_the_preimage() {
    modify_and_copy("g.txt");
}

#[test]
fn copy_then_modify_of_the_same_file_copies_the_preimage() {
    modify_and_copy("a.txt");
}

#[test]
fn modify_and_copy_in_either_order_apply_alike() {
    let (a, b) = twins();
    let diff = git_diff(&a, &|s| {
        copy_f_to(s, "g.txt", "six\n");
        modify_f(s);
    });
    let mut parts = file_patches(&diff);
    parts.reverse();
    same_as_git(&a, &b, &[], &parts.concat());
}

#[test]
fn a_file_rewritten_with_another_ones_content_and_copied_away() {
    // f.txt moves on to c.txt and k.txt onto f.txt: git writes a copy of f.txt (its old
    // content) to c.txt, a rewrite of f.txt and a delete of k.txt; in either order.
    for (args, reorder) in [
        (&[][..], false),
        (&[], true),
        (&["--index"], true),
        (&["--cached"], true),
    ] {
        let (a, b) = twins();
        let diff = git_diff(&a, &|s| {
            std::fs::rename(s.dir.join("f.txt"), s.dir.join("c.txt")).expect("move f.txt");
            std::fs::rename(s.dir.join("k.txt"), s.dir.join("f.txt")).expect("move k.txt");
        });
        assert!(diff.contains("copy from f.txt"), "{diff}");
        assert!(diff.contains("deleted file mode"), "{diff}");
        let mut parts = file_patches(&diff);
        if reorder {
            parts.reverse();
        }
        same_as_git(&a, &b, args, &parts.concat());
        if args.is_empty() {
            let read = |p: &str| std::fs::read_to_string(b.dir.join(p)).expect("read");
            assert_eq!(
                (read("c.txt"), read("f.txt")),
                (F.to_string(), "x\n".into())
            );
        }
    }
}

#[test]
fn a_modify_and_copy_applied_twice_is_the_already_applied_no_op() {
    let (a, b) = twins();
    let diff = git_diff(&a, &|s| {
        copy_f_to(s, "g.txt", "six\n");
        s.write("f.txt", &F.replace("five", "FIVE"));
    });
    same_as_git(&a, &b, &[], &diff);
    let applied = b.state();
    let run = b.apply_patch(&["--json"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let codes: Vec<&str> = out["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w["code"].as_str())
        .collect();
    assert!(codes.contains(&"already_applied"), "{out}");
    assert_eq!(b.state(), applied);
    // A destination with other content is still refused, never taken for the copy.
    std::fs::write(b.dir.join("g.txt"), "other\n").expect("write g.txt");
    let run = b.apply_patch(&["--json"], &diff);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        std::fs::read_to_string(b.dir.join("g.txt")).expect("read"),
        "other\n"
    );
}

#[test]
fn two_copies_of_one_file() {
    for args in [&[][..], &["--index"], &["--cached"]] {
        let (a, b) = twins();
        let diff = git_diff(&a, &|s| {
            copy_f_to(s, "b.txt", "");
            copy_f_to(s, "c.txt", "six\n");
        });
        assert_eq!(diff.matches("copy from f.txt").count(), 2, "{diff}");
        same_as_git(&a, &b, args, &diff);
    }
}

#[test]
fn copy_and_rename_of_one_file_in_either_order() {
    for reorder in [false, true] {
        for args in [&[][..], &["--index"], &["--cached"]] {
            let (a, b) = twins();
            let diff = git_diff(&a, &|s| {
                copy_f_to(s, "b.txt", "");
                copy_f_to(s, "c.txt", "six\n");
                std::fs::remove_file(s.dir.join("f.txt")).expect("remove f.txt");
            });
            assert!(diff.contains("copy from f.txt"), "{diff}");
            assert!(diff.contains("rename from f.txt"), "{diff}");
            let mut parts = file_patches(&diff);
            if reorder {
                parts.reverse();
            }
            let state = same_as_git(&a, &b, args, &parts.concat());
            if args.is_empty() {
                assert!(!b.dir.join("f.txt").exists(), "{state}");
            }
        }
    }
}

#[test]
fn copy_and_delete_of_one_file_in_either_order() {
    for reorder in [false, true] {
        for args in [&[][..], &["--index"], &["--cached"]] {
            let (a, b) = twins();
            // git writes a copy plus a deletion as a rename: join a copy's diff and a
            // deletion's diff instead.
            let copy = git_diff(&a, &|s| copy_f_to(s, "b.txt", "six\n"));
            let delete = git_diff(&a, &|s| {
                std::fs::remove_file(s.dir.join("f.txt")).expect("remove f.txt");
            });
            assert!(copy.contains("copy from f.txt"), "{copy}");
            assert!(delete.contains("deleted file mode"), "{delete}");
            let diff = if reorder {
                format!("{delete}{copy}")
            } else {
                format!("{copy}{delete}")
            };
            same_as_git(&a, &b, args, &diff);
        }
    }
}

#[test]
fn rename_with_a_mode_change_and_an_edit() {
    for args in [&[][..], &["--index"], &["--cached"]] {
        let (a, b) = twins();
        let diff = git_diff(&a, &|s| {
            s.git(&["mv", "f.txt", "g.txt"]);
            copy_f_to(s, "g.txt", "six\n");
            super::super::util::set_mode(&s.dir.join("g.txt"), 0o755);
        });
        assert!(diff.contains("rename from f.txt"), "{diff}");
        assert!(diff.contains("new mode 100755"), "{diff}");
        same_as_git(&a, &b, args, &diff);
    }
}

#[test]
fn check_of_a_modify_and_copy_passes_and_changes_nothing() {
    let (a, b) = twins();
    // The edit touches the copy's context: read after the edit, the copy would not apply.
    let diff = git_diff(&a, &|s| {
        copy_f_to(s, "g.txt", "six\n");
        s.write("f.txt", &F.replace("five", "FIVE"));
    });
    let before = b.state();
    assert_eq!(a.git_apply(&["--check"], &diff), 0);
    let run = b.apply_patch(&["--check"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(b.state(), before);
}

#[test]
fn reverse_of_a_copy_is_refused_as_git_does() {
    let (a, b) = twins();
    let diff = git_diff(&a, &|s| {
        copy_f_to(s, "g.txt", "six\n");
        modify_f(s);
    });
    assert_eq!(a.git_apply(&[], &diff), 0);
    assert_eq!(b.git_apply(&[], &diff), 0);
    let applied = b.state();
    // git would re-create f.txt from g.txt and finds f.txt in the way.
    assert_ne!(a.git_apply(&["-R"], &diff), 0);
    let run = b.apply_patch(&["-R"], &diff);
    assert_eq!(run.status, 2, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("a copy cannot be reversed"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("delete the copy by hand"),
        "{}",
        run.stderr
    );
    assert_eq!(b.state(), applied);
}

#[test]
fn reverse_of_a_rename_with_a_mode_change_restores_the_old_tree() {
    let (a, b) = twins();
    let start = b.state();
    let diff = git_diff(&a, &|s| {
        s.git(&["mv", "f.txt", "g.txt"]);
        copy_f_to(s, "g.txt", "six\n");
        super::super::util::set_mode(&s.dir.join("g.txt"), 0o755);
    });
    same_as_git(&a, &b, &["--index"], &diff);
    same_as_git(&a, &b, &["--index", "-R"], &diff);
    assert_eq!(b.state(), start);
}

#[test]
fn a_diff_that_changes_a_file_and_then_renames_it_away_is_refused() {
    let (_, b) = twins();
    let edit = git_diff(&b, &modify_f);
    let rename = git_diff(&b, &|s| {
        s.git(&["mv", "f.txt", "g.txt"]);
    });
    let before = b.state();
    let run = b.apply_patch(&["--json"], &format!("{edit}{rename}"));
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(out["error"]["code"], "overlapping_hunks", "{out}");
    assert_eq!(out["error"]["path"], "f.txt", "{out}");
    assert_eq!(b.state(), before);
}

#[test]
fn a_diff_that_changes_a_file_it_renamed_or_deleted_before_is_refused_as_git_does() {
    let (a, b) = twins();
    let rename = git_diff(&b, &|s| {
        s.git(&["mv", "f.txt", "g.txt"]);
    });
    let delete = git_diff(&b, &|s| {
        std::fs::remove_file(s.dir.join("f.txt")).expect("remove f.txt");
    });
    let edit = git_diff(&b, &modify_f);
    let before = b.state();
    for first in [&rename, &delete] {
        for then in [&edit, &delete] {
            let diff = format!("{first}{then}");
            assert_ne!(a.git_apply(&[], &diff), 0, "git refuses\n{diff}");
            let run = b.apply_patch(&["--json"], &diff);
            assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
            let out: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
            assert_eq!(out["error"]["code"], "file_not_found", "{out}");
            let message = out["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains("deleted it or renamed it away"), "{out}");
            assert_eq!(b.state(), before);
        }
    }
}

#[test]
fn the_agent_language_still_moves_the_file_as_the_operations_before_left_it() {
    let (_, b) = twins();
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n one\n-two\n+TWO\n three\n\
                 *** Update File: f.txt\n*** Move to: g.txt\n@@\n TWO\n three\n+THREE\n\
                 *** End Patch\n";
    let run = b.apply_patch(&[], patch);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let moved = std::fs::read_to_string(b.dir.join("g.txt")).expect("moved");
    assert_eq!(moved, "one\nTWO\nthree\nTHREE\nfour\nfive\n");
    assert!(!b.dir.join("f.txt").exists());
}

mod props {
    //! For random small trees: `git diff -M -C -C --find-copies-harder` between two trees,
    //! applied by apply-patch to the first, gives the second.

    use super::Scratch;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// What becomes of a file of the first tree.
    #[derive(Debug, Clone)]
    enum Fate {
        Keep,
        /// Line N (modulo the length) rewritten.
        Modify(usize),
        Delete,
    }

    fn content() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec("[a-e]{1,3}", 4..8)
    }

    /// A new file: a copy of the first tree's file N (modulo), with one line appended or not.
    fn new_file() -> impl Strategy<Value = (usize, bool)> {
        (0usize..3, any::<bool>())
    }

    fn fate() -> impl Strategy<Value = Fate> {
        prop_oneof![
            Just(Fate::Keep),
            (0usize..8).prop_map(Fate::Modify),
            Just(Fate::Delete)
        ]
    }

    fn text(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Every file of the work tree (outside `.git`) with its content.
    fn files(s: &Scratch) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(&s.dir).expect("read the work tree") {
            let entry = entry.expect("a directory entry");
            let name = entry.file_name().to_string_lossy().into_owned();
            if name != ".git" {
                let bytes = std::fs::read(entry.path()).expect("read a file");
                out.insert(name, String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        out
    }

    proptest! {
        // Each case runs git about a dozen times: few cases, kept under a few seconds.
        #![proptest_config(ProptestConfig::with_cases(20))]

        #[test]
        fn git_diffs_with_copies_and_renames_give_the_second_tree(
            base in prop::collection::vec((content(), fate()), 1..4),
            new in prop::collection::vec(new_file(), 0..3),
        ) {
            let s = Scratch::new(&[]);
            for (i, (lines, _)) in base.iter().enumerate() {
                s.write(&format!("f{i}.txt"), &text(lines));
            }
            s.commit_all("first tree");
            for (n, (source, grow)) in new.iter().enumerate() {
                let mut lines = base[source % base.len()].0.clone();
                if *grow {
                    lines.push("new".to_string());
                }
                s.write(&format!("n{n}.txt"), &text(&lines));
            }
            for (i, (lines, fate)) in base.iter().enumerate() {
                let path = s.dir.join(format!("f{i}.txt"));
                match fate {
                    Fate::Keep => {}
                    Fate::Modify(at) => {
                        let mut lines = lines.clone();
                        let at = at % lines.len();
                        lines[at] = format!("{}!", lines[at]);
                        s.write(&format!("f{i}.txt"), &text(&lines));
                    }
                    Fate::Delete => std::fs::remove_file(path).expect("remove"),
                }
            }
            let second = files(&s);
            s.git(&["add", "-A"]);
            let diff = s.git(&["diff", "--cached", "-M", "-C", "-C", "--find-copies-harder"]);
            s.git(&["reset", "-q", "--hard"]);
            s.git(&["clean", "-fdq"]);
            if diff.is_empty() {
                // No change: git writes no diff, and an empty input is no patch.
                return Ok(());
            }
            let run = s.apply_patch(&[], &diff);
            prop_assert_eq!(run.status, 0, "{}\n{}{}", diff, run.stdout, run.stderr);
            prop_assert_eq!(files(&s), second, "{}", diff);
        }
    }
}
