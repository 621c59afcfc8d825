//! The command line inside repositories, compared with `git apply` on the same cases: every
//! result checked with `git ls-files --stage`, `git status`, the files' bytes and modes, and
//! `git fsck`.

use super::Scratch;
use std::path::Path;
use std::process::Command;

/// What a run of the binary returned.
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Scratch {
    /// Run apply-patch in the repository with `args`, the patch on standard input.
    pub fn apply_patch(&self, args: &[&str], patch: &str) -> Run {
        self.apply_patch_in(&self.dir, args, patch)
    }

    pub fn apply_patch_in(&self, dir: &Path, args: &[&str], patch: &str) -> Run {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.home.join("state"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("APPLY_PATCH_FAILPOINT")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("apply-patch runs");
        let mut stdin = child.stdin.take().expect("piped");
        // A run that answers without reading its input (a usage error) closes the pipe
        // first: its output is what the test checks (as in `util.rs`).
        match stdin.write_all(patch.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.expect("the patch is written"),
        }
        drop(stdin);
        let out = child.wait_with_output().expect("apply-patch finishes");
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Run `git apply` with `args` and the patch on standard input.
    pub fn git_apply(&self, args: &[&str], patch: &str) -> i32 {
        use std::io::Write;
        let mut all = vec!["apply"];
        all.extend_from_slice(args);
        let mut child = self
            .command(&self.dir, &all)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("git runs");
        let mut stdin = child.stdin.take().expect("piped");
        stdin
            .write_all(patch.as_bytes())
            .expect("the patch is written");
        drop(stdin);
        child.wait().expect("git finishes").code().unwrap_or(-1)
    }

    /// Everything git-visible: staged entries, status, and the bytes of every file.
    pub fn state(&self) -> String {
        let mut out = self.git(&["ls-files", "--stage"]);
        out.push_str("--\n");
        out.push_str(&self.git(&["status", "--porcelain", "--untracked-files=all"]));
        out.push_str("--\n");
        let files = self.git(&["ls-files", "-co", "--exclude-standard"]);
        let mut names: Vec<&str> = files.lines().collect();
        names.sort();
        names.dedup();
        for name in names {
            let path = self.dir.join(name);
            let meta = std::fs::symlink_metadata(&path);
            let content = match meta {
                Ok(m) if m.file_type().is_symlink() => {
                    format!("-> {}", std::fs::read_link(&path).unwrap().display())
                }
                Ok(m) if m.is_dir() => "(directory)".to_string(),
                Ok(m) => {
                    let mode = std::os::unix::fs::PermissionsExt::mode(&m.permissions());
                    format!(
                        "{:o} {:?}",
                        mode & 0o111,
                        String::from_utf8_lossy(&std::fs::read(&path).unwrap())
                    )
                }
                Err(_) => "(missing)".to_string(),
            };
            out.push_str(&format!("{name}: {content}\n"));
        }
        out
    }
}

/// Two identical repositories made by the same script, and the diff `make_diff` produced in
/// the first (then undone there by `reset`).
fn twins(setup: &dyn Fn(&Scratch)) -> (Scratch, Scratch) {
    let a = Scratch::new(&[]);
    let b = Scratch::new(&[]);
    setup(&a);
    setup(&b);
    assert_eq!(a.state(), b.state(), "the twins start equal");
    (a, b)
}

/// A diff made by git: the work tree edited by `edit`, diffed (staged, with renames), then
/// the repository put back to HEAD.
fn git_diff(s: &Scratch, edit: &dyn Fn(&Scratch)) -> String {
    edit(s);
    s.git(&["add", "-A"]);
    let diff = s.git(&["diff", "--cached", "-M", "--binary"]);
    s.git(&["reset", "-q", "--hard"]);
    s.git(&["clean", "-fdq"]);
    diff
}

fn base_files(s: &Scratch) {
    s.write("mod.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n");
    s.write("gone.txt", "bye\n");
    s.write("old-name.txt", "a\nb\nc\nd\ne\nf\ng\n");
    s.write("tool.sh", "echo hi\n");
    s.commit_all("init");
}

fn many_changes(s: &Scratch) {
    s.write("mod.txt", "1\n2\n3\n4\n5\n6\n7\nEIGHT\n9\n10\n11\n12\n");
    std::fs::remove_file(s.dir.join("gone.txt")).unwrap();
    std::fs::rename(s.dir.join("old-name.txt"), s.dir.join("new-name.txt")).unwrap();
    s.write("new-name.txt", "a\nb\nc\nd\ne\nf\nG\n");
    s.write("added/fresh.txt", "fresh\n");
    let mut perms = std::fs::metadata(s.dir.join("tool.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(s.dir.join("tool.sh"), perms).unwrap();
}

#[test]
fn index_applies_like_git_apply_index() {
    let (ours, theirs) = twins(&base_files);
    let diff = git_diff(&ours, &many_changes);
    let run = ours.apply_patch(&["--index"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&["--index"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    ours.assert_status_set(&[
        "M  mod.txt",
        "R  old-name.txt -> new-name.txt",
        "A  added/fresh.txt",
        "D  gone.txt",
        "M  tool.sh",
    ]);
    assert_eq!(ours.git(&["diff"]), "", "work tree and index agree");
    assert_eq!(
        ours.git(&["diff", "--cached"]),
        theirs.git(&["diff", "--cached"])
    );
}

#[test]
fn index_refuses_unstaged_changes_and_changes_nothing() {
    let s = Scratch::new(&[]);
    base_files(&s);
    let diff = git_diff(&s, &many_changes);
    s.write("mod.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nlocal edit\n");
    let before = s.state();
    let run = s.apply_patch(&["--index", "--json"], &diff);
    assert_eq!(run.status, 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "index_mismatch");
    assert!(report["error"]["message"]
        .as_str()
        .unwrap()
        .contains("mod.txt (the work-tree file differs from the index)"));
    assert_eq!(s.state(), before);
    // git agrees that this cannot be applied with --index.
    assert_ne!(s.git_apply(&["--index"], &diff), 0);
    // Without --index the same patch applies to the work tree (git would too).
    let run = s.apply_patch(&[], &diff);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(s.git(&["status", "--porcelain"]).contains(" M mod.txt"));
}

#[test]
fn cached_applies_like_git_apply_cached() {
    let (ours, theirs) = twins(&|s: &Scratch| {
        base_files(s);
        // An unstaged edit that --cached must neither read nor touch.
        s.write("mod.txt", "work tree only\n");
    });
    let diff = {
        let t = Scratch::new(&[]);
        base_files(&t);
        git_diff(&t, &many_changes)
    };
    let run = ours.apply_patch(&["--cached"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&["--cached"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    assert_eq!(
        ours.git(&["diff", "--cached"]),
        theirs.git(&["diff", "--cached"])
    );
    assert_eq!(
        std::fs::read_to_string(ours.dir.join("mod.txt")).unwrap(),
        "work tree only\n"
    );
    ours.git(&["fsck", "--strict", "--no-progress"]);
}

fn numbered(s: &Scratch) {
    s.write(
        "a.txt",
        &(1..=12).map(|i| format!("{i}\n")).collect::<String>(),
    );
    s.commit_all("init");
}

#[test]
fn three_way_clean_merge_matches_git_apply_three_way() {
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        git_diff(&t, &|t: &Scratch| {
            let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
            t.write("a.txt", &text.replace("8\n", "eight\n"));
        })
    };
    let (ours, theirs) = twins(&|s: &Scratch| {
        numbered(s);
        let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
        s.write("a.txt", &text.replace("5\n", "five\n"));
        s.commit_all("five");
    });
    // A plain apply without fuzz refuses: the context changed. (Fuzz would place it,
    // ignoring the changed outer line; with --3way the merge comes first.)
    let run = ours.apply_patch(&["--json", "--fuzz", "0"], &diff);
    assert_eq!(run.status, 1);
    let run = ours.apply_patch(&["--json", "--check"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert!(run.stdout.contains("\"code\": \"fuzz\""), "{}", run.stdout);
    let run = ours.apply_patch(&["--3way", "--index", "--json"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let warning = &report["warnings"][0];
    assert_eq!(warning["code"], "merged");
    assert_eq!(warning["hunk"], 1);
    assert_eq!(theirs.git_apply(&["--3way"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    ours.assert_status("M  a.txt\n");
}

#[test]
fn three_way_conflicts_are_refused_or_marked_like_git() {
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        git_diff(&t, &|t: &Scratch| {
            let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
            t.write("a.txt", &text.replace("8\n", "eight\n"));
        })
    };
    let (ours, theirs) = twins(&|s: &Scratch| {
        numbered(s);
        let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
        s.write("a.txt", &text.replace("8\n", "ACHT\n"));
        s.commit_all("acht");
    });
    let before = ours.state();
    let run = ours.apply_patch(&["--3way", "--json"], &diff);
    assert_eq!(run.status, 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "merge_conflict");
    let conflicts = &report["error"]["details"]["conflicts"][0];
    assert_eq!(conflicts["ours"], serde_json::json!(["ACHT"]));
    assert_eq!(conflicts["theirs"], serde_json::json!(["eight"]));
    assert_eq!(ours.state(), before, "a refused merge writes nothing");

    let run = ours.apply_patch(&["--3way", "--index", "--conflict-markers"], &diff);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    assert_ne!(theirs.git_apply(&["--3way"], &diff), 0);
    // The same markers in the work tree, the same stages 1/2/3 in the index.
    assert_eq!(ours.state(), theirs.state());
    ours.assert_status("UU a.txt\n");
    assert!(std::fs::read_to_string(ours.dir.join("a.txt"))
        .unwrap()
        .contains("<<<<<<< ours\nACHT\n=======\neight\n>>>>>>> theirs\n"));
}

#[test]
fn git_flags_outside_a_repository_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(tmp.path())
        .output()
        .expect("git runs");
    if probe.status.success() {
        eprintln!("skipped: the temp dir is inside a git work tree");
        return;
    }
    let s = Scratch::new(&[]);
    let patch = "*** Begin Patch\n*** Add File: x.txt\n+x\n*** End Patch\n";
    for flag in ["--index", "--cached", "--3way"] {
        let run = s.apply_patch_in(tmp.path(), &[flag], patch);
        assert_eq!(run.status, 2, "{flag}: {}", run.stderr);
        assert!(
            run.stderr.contains("needs a git work tree"),
            "{}",
            run.stderr
        );
    }
    // Without a flag, outside a repository everything git-specific is skipped quietly.
    let run = s.apply_patch_in(tmp.path(), &[], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let run = s.apply_patch(&["--conflict-markers"], patch);
    assert_eq!(run.status, 2);
}

#[test]
fn blob_ids_go_through_the_filters_inside_a_repository() {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "true"]);
    s.write("a.txt", "one\r\ntwo\r\nthree\r\n");
    s.commit_all("init");
    // git's diff names the LF blob; the work-tree file has CRLF: not a mismatch for git.
    s.write("a.txt", "one\r\nTWO\r\nthree\r\n");
    let diff = s.git(&["diff"]);
    s.git(&["checkout", "--", "a.txt"]);
    let run = s.apply_patch(&["--json", "--strict-base"], &diff);
    assert_eq!(run.status, 0, "{}", run.stdout);
    assert_eq!(
        std::fs::read_to_string(s.dir.join("a.txt")).unwrap(),
        "one\r\nTWO\r\nthree\r\n"
    );
    // A file changed since: base_mismatch, or stale_file with --strict-base.
    s.git(&["checkout", "--", "a.txt"]);
    s.write("a.txt", "zero\r\none\r\ntwo\r\nthree\r\n");
    let run = s.apply_patch(&["--json", "--check"], &diff);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["warnings"][0]["code"], "base_mismatch", "{report}");
    let run = s.apply_patch(&["--json", "--strict-base"], &diff);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "stale_file");
}

// An external clean filter (gix hands its output back as a reader, not a buffer): the blob id
// is taken of what the filter makes, not of the work-tree bytes.
#[test]
fn blob_ids_go_through_an_external_clean_filter() {
    let s = Scratch::new(&[]);
    s.git(&["config", "filter.upper.clean", "tr a-z A-Z"]);
    s.git(&["config", "filter.upper.smudge", "cat"]);
    s.write(".gitattributes", "*.txt filter=upper\n");
    s.write("a.txt", "one\ntwo\n");
    s.commit_all("init");
    let id = |text: &str| {
        s.write("blob.tmp", text);
        let id = s.git(&["hash-object", "--no-filters", "blob.tmp"]);
        std::fs::remove_file(s.dir.join("blob.tmp")).expect("remove the temporary blob");
        id.trim().to_string()
    };
    let (upper, raw) = (id("ONE\nTWO\n"), id("one\ntwo\n"));
    let patch = |old: &str| {
        format!(
            "diff --git a/a.txt b/a.txt\nindex {old}..{old} 100644\n--- a/a.txt\n+++ b/a.txt\n\
             @@ -1,2 +1,2 @@\n one\n-two\n+three\n"
        )
    };
    // The filtered blob is what git stored: it matches.
    let run = s.apply_patch(&["--json", "--check", "--strict-base"], &patch(&upper));
    assert_eq!(run.status, 0, "{}", run.stdout);
    // The raw bytes' blob is not what `git add` would store: stale with --strict-base.
    let run = s.apply_patch(&["--json", "--check", "--strict-base"], &patch(&raw));
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "stale_file", "{report}");
}

#[test]
fn submodule_paths_are_refused_from_the_superproject() {
    let sub = Scratch::new(&[]);
    sub.write("inner.txt", "inner\n");
    sub.commit_all("sub");
    let s = Scratch::new(&[]);
    s.write("a.txt", "a\n");
    s.commit_all("init");
    s.git(&[
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        sub.dir.to_str().unwrap(),
        "sub",
    ]);
    s.git(&["commit", "-q", "-m", "sub"]);
    let patch =
        "*** Begin Patch\n*** Update File: sub/inner.txt\n@@\n-inner\n+changed\n*** End Patch\n";
    let before = s.state();
    let run = s.apply_patch(&["--json"], patch);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "path_escape", "{report}");
    assert_eq!(s.state(), before);
    // From inside the submodule it applies, with --index to the submodule's own index.
    let run = s.apply_patch_in(
        &s.dir.join("sub"),
        &["--index"],
        patch.replace("sub/", "").as_str(),
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        s.git_in(&s.dir.join("sub"), &["status", "--porcelain"]),
        "M  inner.txt\n"
    );
    s.git_in(&s.dir.join("sub"), &["fsck", "--strict", "--no-progress"]);
}

#[test]
fn index_works_in_a_linked_worktree_and_without_commits() {
    let s = Scratch::new(&[]);
    let patch = "*** Begin Patch\n*** Add File: first.txt\n+first\n*** End Patch\n";
    let run = s.apply_patch(&["--index"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    s.assert_status("A  first.txt\n");
    s.git(&["commit", "-q", "-m", "first"]);
    let linked = s.dir.parent().unwrap().join("linked");
    s.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "side",
        linked.to_str().unwrap(),
    ]);
    let patch = "*** Begin Patch\n*** Update File: first.txt\n@@\n-first\n+second\n*** End Patch\n";
    let run = s.apply_patch_in(&linked, &["--index"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        s.git_in(&linked, &["status", "--porcelain"]),
        "M  first.txt\n"
    );
    s.assert_status("");
}

#[test]
fn a_held_index_lock_refuses_before_anything_changes() {
    let s = Scratch::new(&[]);
    numbered(&s);
    std::fs::write(s.dir.join(".git/index.lock"), "").unwrap();
    let before = std::fs::read(s.dir.join("a.txt")).unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+one\n*** End Patch\n";
    let run = s.apply_patch(&["--index", "--json"], patch);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "busy", "{report}");
    assert_eq!(std::fs::read(s.dir.join("a.txt")).unwrap(), before);
    std::fs::remove_file(s.dir.join(".git/index.lock")).unwrap();
}

#[test]
fn check_patches_checks_series_against_the_staged_tree() {
    let s = Scratch::new(&[]);
    numbered(&s);
    let first = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-1\n+one\n 2\n 3\n";
    let second = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+two\n 3\n";
    s.write("patches/0001-one.patch", first);
    s.write("patches/0002-two.patch", second);
    s.commit_all("patches");
    let run = s.apply_patch(&["check-patches", "patches"], "");
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("ok    patches/0001-one.patch\nok    patches/0002-two.patch\n"),
        "{}",
        run.stdout
    );
    // A series file that reverses the order: the second no longer applies, the first is fine.
    s.write("patches/series", "0002-two.patch\n0001-one.patch\n");
    let run = s.apply_patch(&["check-patches", "--json", "patches"], "");
    assert_eq!(run.status, 1);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["patches"][0]["ok"], false);
    assert_eq!(report["patches"][0]["error"]["code"], "context_not_found");
    assert_eq!(report["patches"][1]["skipped"], true);
    std::fs::remove_file(s.dir.join("patches/series")).unwrap();
    // The staged tree counts, not the work tree: an unstaged edit does not break the check,
    // a staged one does.
    s.write("a.txt", "changed everything\n");
    let run = s.apply_patch(&["check-patches", "patches"], "");
    assert_eq!(run.status, 0, "{}", run.stdout);
    s.git(&["add", "a.txt"]);
    let run = s.apply_patch(&["check-patches", "patches"], "");
    assert_eq!(run.status, 1);
    assert!(
        run.stdout
            .contains("FAIL  patches/0001-one.patch: context_not_found"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("skip  patches/0002-two.patch"),
        "{}",
        run.stdout
    );
    // Nothing was written by any check.
    assert_eq!(
        std::fs::read_to_string(s.dir.join("a.txt")).unwrap(),
        "changed everything\n"
    );
}

#[test]
fn check_patches_reads_search_replace_blocks() {
    let s = Scratch::new(&[]);
    numbered(&s);
    let blocks = "a.txt\n<<<<<<< SEARCH\n1\n2\n=======\none\n2\n>>>>>>> REPLACE\n";
    s.write("patches/0001-one.patch", blocks);
    let wrong = "a.txt\n<<<<<<< SEARCH\nnine hundred\n=======\nx\n>>>>>>> REPLACE\n";
    s.write("other/0001-wrong.patch", wrong);
    s.commit_all("patches");
    let run = s.apply_patch(&["check-patches", "patches"], "");
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("ok    patches/0001-one.patch"),
        "{}",
        run.stdout
    );
    let run = s.apply_patch(&["check-patches", "--json", "other"], "");
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["patches"][0]["error"]["code"], "context_not_found");
}

impl Scratch {
    /// As [`Scratch::apply_patch`] with one more environment variable.
    pub fn apply_patch_env(&self, args: &[&str], patch: &str, key: &str, value: &str) -> Run {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
            .args(args)
            .current_dir(&self.dir)
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.home.join("state"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env(key, value)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("apply-patch runs");
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(patch.as_bytes())
            .expect("the patch is written");
        let out = child.wait_with_output().expect("apply-patch finishes");
        Run {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

#[test]
fn index_and_work_tree_fail_together() {
    let s = Scratch::new(&[]);
    base_files(&s);
    let diff = git_diff(&s, &many_changes);
    let before = s.state();
    // The work tree fails: the index is untouched (and the work tree rolled back).
    let run = s.apply_patch_env(
        &["--index"],
        &diff,
        "APPLY_PATCH_FAILPOINT",
        "commit:3:fail",
    );
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(s.state(), before);
    assert!(!s.dir.join(".git/index.lock").exists());
    // The index fails after the work tree was written: the work tree is rolled back.
    let run = s.apply_patch_env(
        &["--index", "--json"],
        &diff,
        "APPLY_PATCH_FAILPOINT",
        "git-index:fail",
    );
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        report["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rolled back"),
        "{report}"
    );
    assert_eq!(s.state(), before);
    assert!(!s.dir.join(".git/index.lock").exists());
    // And without a failure both change.
    let run = s.apply_patch(&["--index"], &diff);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_ne!(s.state(), before);
    assert_eq!(s.git(&["diff"]), "");
}

#[test]
fn cached_three_way_matches_git_apply_cached_three_way() {
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        git_diff(&t, &|t: &Scratch| {
            let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
            t.write("a.txt", &text.replace("8\n", "eight\n"));
        })
    };
    let (ours, theirs) = twins(&|s: &Scratch| {
        numbered(s);
        let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
        s.write("a.txt", &text.replace("5\n", "five\n"));
        s.git(&["add", "a.txt"]);
        s.write("a.txt", "unstaged\n");
    });
    let run = ours.apply_patch(&["--3way", "--cached"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&["--3way", "--cached"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    assert_eq!(ours.git(&["show", ":a.txt"]).lines().nth(7), Some("eight"));
}

/// Human output of a run: stdout, stderr and the exit status.
fn shown(run: &Run) -> String {
    format!(
        "{}\n----- stderr -----\n{}\n[exit status: {}]",
        run.stdout, run.stderr, run.status
    )
}

#[test]
fn human_output_of_git_refusals_and_check_patches() {
    let s = Scratch::new(&[]);
    numbered(&s);
    let diff = git_diff(&s, &|t: &Scratch| {
        let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
        t.write("a.txt", &text.replace("8\n", "eight\n"));
    });
    let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
    s.write("a.txt", &text.replace("8\n", "ACHT\n"));
    s.commit_all("acht");
    let conflict = s.apply_patch(&["--3way"], &diff);
    s.write("a.txt", "local\n");
    let mismatch = s.apply_patch(&["--index"], &diff);
    s.git(&["checkout", "--", "a.txt"]);
    s.write("p/0001-x.patch", &diff);
    s.write("p/0002-y.patch", &diff);
    let checked = s.apply_patch(&["check-patches", "p"], "");
    insta::with_settings!({snapshot_path => "../../../snapshots/git", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("three_way_conflict", shown(&conflict));
        insta::assert_snapshot!("index_mismatch", shown(&mismatch));
        insta::assert_snapshot!("check_patches", shown(&checked));
    });
}

/// SPEC §5 "Fuzz": a patch that applies only with outer context lines ignored needs
/// refreshing; `check-patches` fails it unless `--fuzz N` (or `-F N`) is given.
#[test]
fn check_patches_fails_a_patch_that_needs_fuzz_unless_fuzz_is_given() {
    let s = Scratch::new(&[]);
    numbered(&s);
    // The outer context line `3` is `three` in the patch: found only with fuzz 1.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -3,7 +3,7 @@\n three\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n";
    s.write("p/0001-six.patch", patch);
    s.commit_all("patch");
    let run = s.apply_patch(&["check-patches", "--json", "p"], "");
    assert_eq!(run.status, 1, "{}", run.stdout);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let error = &report["patches"][0]["error"];
    assert_eq!(error["code"], "context_not_found", "{report}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("hunk 1 of a.txt applies only with 2 outer context lines ignored"),
        "{message}"
    );
    assert!(
        error["hint"]
            .as_str()
            .is_some_and(|h| h.contains("--fuzz N")),
        "{error}"
    );
    for given in [["--fuzz", "1"], ["-F", "2"]] {
        let run = s.apply_patch(&["check-patches", given[0], given[1], "p"], "");
        assert_eq!(run.status, 0, "{given:?}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stdout.contains("ok    p/0001-six.patch"),
            "{}",
            run.stdout
        );
    }
    // --fuzz 0 turns fuzz off: the hunk is simply not found.
    let run = s.apply_patch(&["check-patches", "--json", "--fuzz", "0", "p"], "");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let message = report["patches"][0]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("not found"), "{report}");
    // Nothing was written by any check.
    let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
    assert!(text.contains("\n6\n"), "{text}");
}

/// A patch whose hunk does not fit the staged file: its `FAIL` line is followed by the
/// nearest text of the file, with line numbers and what differs, and the hint.
#[test]
fn check_patches_fail_shows_the_nearest_text_and_the_hint() {
    let s = Scratch::new(&[]);
    s.write(
        "greet.py",
        "def greet(name):\n    print('hello ' + name)\n    return name\n",
    );
    s.commit_all("init");
    let patch = "--- a/greet.py\n+++ b/greet.py\n@@ -1,3 +1,3 @@\n def greet(name):\n-    print(\"hello \" + name)\n+    print(\"hi \" + name)\n     return name\n";
    s.write("p/0001-hi.patch", patch);
    let checked = s.apply_patch(&["check-patches", "p"], "");
    assert_eq!(checked.status, 1);
    assert!(checked.stdout.contains("hint: "), "{}", checked.stdout);
    assert!(
        checked.stdout.contains("print('hello ' + name)"),
        "{}",
        checked.stdout
    );
    insta::with_settings!({snapshot_path => "../../../snapshots/git", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("check_patches_fail_nearest", shown(&checked));
    });
}

#[test]
fn cached_conflicts_with_markers_write_only_the_stages() {
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        git_diff(&t, &|t: &Scratch| {
            let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
            t.write("a.txt", &text.replace("8\n", "eight\n"));
        })
    };
    let (ours, theirs) = twins(&|s: &Scratch| {
        numbered(s);
        let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
        s.write("a.txt", &text.replace("8\n", "ACHT\n"));
        s.commit_all("acht");
    });
    let run = ours.apply_patch(&["--3way", "--cached"], &diff);
    assert_eq!(run.status, 1);
    ours.assert_status("");
    let run = ours.apply_patch(&["--3way", "--cached", "--conflict-markers"], &diff);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_ne!(theirs.git_apply(&["--3way", "--cached"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    assert!(!std::fs::read_to_string(ours.dir.join("a.txt"))
        .unwrap()
        .contains("<<<<<<<"));
}

#[test]
fn three_way_merges_crlf_checkouts_in_their_own_form() {
    let diff = {
        let t = Scratch::new(&[]);
        numbered(&t);
        git_diff(&t, &|t: &Scratch| {
            let text = std::fs::read_to_string(t.dir.join("a.txt")).unwrap();
            t.write("a.txt", &text.replace("8\n", "eight\n"));
        })
    };
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "true"]);
    numbered(&s);
    let crlf = |text: &str| text.replace('\n', "\r\n");
    let text = std::fs::read_to_string(s.dir.join("a.txt")).unwrap();
    s.write("a.txt", &crlf(&text.replace("5\n", "five\n")));
    s.git(&["add", "a.txt"]);
    let run = s.apply_patch(&["--3way", "--index"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let expected: String = (1..=12)
        .map(|i| match i {
            5 => "five\r\n".to_string(),
            8 => "eight\r\n".to_string(),
            _ => format!("{i}\r\n"),
        })
        .collect();
    assert_eq!(
        std::fs::read_to_string(s.dir.join("a.txt")).unwrap(),
        expected
    );
    assert_eq!(s.git(&["show", ":a.txt"]), expected.replace("\r\n", "\n"));
    s.assert_status("M  a.txt\n");
}

#[test]
fn without_core_filemode_the_index_keeps_its_modes() {
    let s = Scratch::new(&[]);
    s.write("run.sh", "echo 1\n");
    let mut perms = std::fs::metadata(s.dir.join("run.sh"))
        .unwrap()
        .permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(s.dir.join("run.sh"), perms.clone()).unwrap();
    s.commit_all("init");
    s.git(&["config", "core.fileMode", "false"]);
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o644);
    std::fs::set_permissions(s.dir.join("run.sh"), perms).unwrap();
    let patch = "*** Begin Patch\n*** Update File: run.sh\n@@\n-echo 1\n+echo 2\n*** End Patch\n";
    let run = s.apply_patch(&["--index"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(s
        .git(&["ls-files", "--stage", "run.sh"])
        .starts_with("100755 "));
    s.assert_status("M  run.sh\n");
}

#[test]
fn cached_check_reads_the_index_without_locking_it() {
    let s = Scratch::new(&[]);
    numbered(&s);
    s.write("a.txt", "unstaged\n");
    std::fs::write(s.dir.join(".git/index.lock"), "").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+one\n*** End Patch\n";
    let run = s.apply_patch(&["--cached", "--check"], patch);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    let run = s.apply_patch(&["--cached", "--json"], patch);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["error"]["code"], "busy", "{report}");
    std::fs::remove_file(s.dir.join(".git/index.lock")).unwrap();
    let run = s.apply_patch(&["--cached"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(s.git(&["show", ":a.txt"]).lines().next(), Some("one"));
    s.assert_status("MM a.txt\n");
}

#[test]
fn index_writes_the_index_git_index_file_names() {
    let s = Scratch::new(&[]);
    numbered(&s);
    let alt = s.dir.join(".git/hook-index");
    let status = s
        .command(&s.dir, &["read-tree", "HEAD"])
        .env("GIT_INDEX_FILE", &alt)
        .status()
        .unwrap();
    assert!(status.success());
    let main_index = std::fs::read(s.dir.join(".git/index")).unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+one\n*** End Patch\n";
    let run = s.apply_patch_env(&["--index"], patch, "GIT_INDEX_FILE", alt.to_str().unwrap());
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(std::fs::read(s.dir.join(".git/index")).unwrap(), main_index);
    let staged = s
        .command(&s.dir, &["show", ":a.txt"])
        .env("GIT_INDEX_FILE", &alt)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&staged.stdout).lines().next(),
        Some("one")
    );
}

#[test]
fn a_change_in_the_second_the_index_was_written_is_noticed() {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.trustctime", "false"]);
    numbered(&s);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-1\n+X\n*** End Patch\n";
    let run = s.apply_patch(&["--index"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // Change the file at once, keep its size and restore its exact mtime: the stat alone
    // cannot tell, so the entry must count as racily clean (we also smudge it, as git does).
    let path = s.dir.join("a.txt");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let since = mtime.duration_since(std::time::UNIX_EPOCH).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, written.replacen('X', "Y", 1)).unwrap();
    let stamp = format!("@{}.{:09}", since.as_secs(), since.subsec_nanos());
    let ok = Command::new("touch")
        .args(["-d", &stamp])
        .arg(&path)
        .status()
        .unwrap();
    assert!(ok.success());
    let index_mtime = std::fs::metadata(s.dir.join(".git/index"))
        .unwrap()
        .modified()
        .unwrap();
    // Git compares whole seconds: the race exists only while both stamps fall in one second
    // (10.9 s and 11.1 s are 0.2 s apart yet in two seconds, and git then trusts the stat).
    let second = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs()
    };
    if second(index_mtime) != second(mtime) {
        eprintln!("skipped: the index was written in a later second than the file");
        return;
    }
    assert_eq!(s.git(&["status", "--porcelain"]), "MM a.txt\n");
}

/// Racy git the other way round: a file written and staged with `git add` in the second the
/// index is written (its entry racily clean) is the index's, and `--index` applies at once;
/// one rewritten after the `git add`, same size, same second, is not (`index_mismatch`).
#[test]
fn index_right_after_git_add_in_the_same_second_applies() {
    let s = Scratch::new(&[]);
    s.write("a.txt", "v0\n");
    s.commit_all("base");
    for round in 1..=8 {
        s.write("a.txt", &format!("w{round}\n"));
        s.git(&["add", "a.txt"]);
        let patch = format!(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-w{round}\n+v{round}\n*** End Patch\n"
        );
        let run = s.apply_patch(&["--index", "--json"], &patch);
        assert_eq!(run.status, 0, "round {round}: {}", run.stdout);
        assert_eq!(
            s.git(&["diff"]),
            "",
            "round {round}: work tree and index agree"
        );
        assert_eq!(s.git(&["status", "--porcelain"]), "M  a.txt\n");
        // Staged, then rewritten at once with the same size: the stat cannot tell.
        s.write("a.txt", &format!("u{round}\n"));
        let fits_the_work_tree = format!(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-u{round}\n+x{round}\n*** End Patch\n"
        );
        let run = s.apply_patch(&["--index", "--json"], &fits_the_work_tree);
        assert_eq!(run.status, 1, "round {round}: {}", run.stdout);
        assert!(run.stdout.contains("\"index_mismatch\""), "{}", run.stdout);
        let now = std::fs::read_to_string(s.dir.join("a.txt")).unwrap_or_default();
        assert_eq!(now, format!("u{round}\n"), "nothing written");
    }
}

#[test]
fn index_follows_a_patch_that_touches_a_path_twice() {
    let s = Scratch::new(&[]);
    numbered(&s);
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+one\n*** Update File: new.txt\n@@\n-one\n+two\n*** Delete File: a.txt\n*** Add File: a.txt\n+fresh\n*** End Patch\n";
    let run = s.apply_patch(&["--index"], patch);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    s.assert_status_set(&["M  a.txt", "A  new.txt"]);
    assert_eq!(s.git(&["show", ":new.txt"]), "two\n");
    assert_eq!(s.git(&["show", ":a.txt"]), "fresh\n");
}

#[test]
fn a_touched_but_unchanged_file_still_matches_the_index() {
    let (ours, theirs) = twins(&numbered);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-1\n+one\n 2\n";
    for s in [&ours, &theirs] {
        let ok = Command::new("touch")
            .args(["-d", "@2000000000"])
            .arg(s.dir.join("a.txt"))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let run = ours.apply_patch(&["--index"], patch);
    assert_eq!(run.status, 0, "{}", run.stderr);
    ours.assert_status("M  a.txt\n");
    // git compares the stat only and refuses until the index is refreshed.
    assert_ne!(theirs.git_apply(&["--index"], patch), 0);
    theirs.git(&["update-index", "--refresh"]);
    assert_eq!(theirs.git_apply(&["--index"], patch), 0);
    assert_eq!(
        ours.git(&["ls-files", "--stage"]),
        theirs.git(&["ls-files", "--stage"])
    );
}

/// check-patches reads each patch file as the command line reads PATCH (one reader,
/// `patch_file::read_patch_file`): a file over the 1 GiB limit is refused `usage` before it
/// is read (it was read whole into memory), as a FIFO is refused at once instead of waited on.
#[test]
fn check_patches_reads_patch_files_with_the_command_lines_limits() {
    let s = Scratch::new(&[]);
    numbered(&s);
    s.write(
        "patches/0001-one.patch",
        "a.txt\n<<<<<<< SEARCH\n1\n=======\none\n>>>>>>> REPLACE\n",
    );
    s.commit_all("patches");
    // Sparse, and not committed: no gigabyte is written or hashed.
    s.write("patches/0002-big.patch", "");
    std::fs::OpenOptions::new()
        .write(true)
        .open(s.dir.join("patches/0002-big.patch"))
        .and_then(|f| f.set_len((1 << 30) + 1))
        .expect("a sparse file over the limit");
    let run = s.apply_patch(&["check-patches", "--json", "patches"], "");
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["patches"][0]["ok"], true, "{report}");
    let error = &report["patches"][1]["error"];
    assert_eq!(error["code"], "usage", "{report}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("1 GiB"),
        "{report}"
    );
}
