//! The front door of the command line (issue 15): patch text as the argument, the flags
//! people type from `git apply` and GNU `patch`, and output that says what happened. The real
//! binary on temp trees; `--stat`/`--numstat`/`--summary` are compared with `git apply`.

use std::ffi::OsStr;
use std::path::Path;

use crate::assert_cli_snapshot;
use crate::util::TempTree;

const AGENT: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n";
const DIFF: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";

fn tree() -> TempTree {
    TempTree::with(&[("a.txt", "one\ntwo\nthree\n")])
}

#[test]
fn patch_text_argument_after_a_heredoc_opener_and_prose() {
    for text in [
        format!("Here is the fix.\n\napply_patch <<'EOF'\n{AGENT}EOF\n"),
        format!("\u{feff}\n\n{AGENT}"),
        DIFF.to_string(),
        r#"{"edits": [{"op": "replace", "path": "a.txt", "old": "two", "new": "2"}]}"#.into(),
    ] {
        let t = tree();
        let out = t.run(&[&text], "");
        assert_eq!(out.status, 0, "{text:?}: {}", out.normalized());
        assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n", "{text:?}");
        // The Codex drop-in name reads its argument the same way.
        let t = tree();
        let out = t.run_as_codex(&[OsStr::new(&text)], "");
        assert_eq!(out.status, 0, "{text:?}: {}", out.normalized());
        assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n", "{text:?}");
    }
}

#[test]
fn an_existing_file_wins_over_text() {
    // A file whose name would also read as JSON text is read as the file.
    let t = tree();
    t.write("{x}", AGENT.as_bytes());
    let out = t.run(&["{x}"], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
}

#[test]
fn argument_neither_file_nor_patch_is_a_short_usage_error() {
    let t = tree();
    let long = format!("please change two to 2 {}", "and more words ".repeat(400));
    let out = t.run(&[&long], "");
    assert_eq!(out.status, 2, "{}", out.normalized());
    assert!(
        !out.stderr.contains("please"),
        "echoes the text: {}",
        out.stderr
    );
    assert_cli_snapshot!("front_neither_file_nor_patch", out);
    // The drop-in's argument is patch text, always: one without a patch is a parse error
    // that quotes none of it.
    let out = t.run_as_codex(&[OsStr::new(&long)], "");
    assert_eq!(out.status, 1, "{}", out.normalized());
    assert!(out.stderr.contains("no patch found") && !out.stderr.contains("please"));
    let json = t.run(&["--json", "nosuch.patch"], "");
    assert_eq!(json.json()["error"]["code"], "usage");
}

#[test]
fn dry_run_is_check() {
    let t = tree();
    let out = t.run(&["--dry-run", AGENT], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(out.stderr.contains("nothing was written"));
    assert_eq!(t.read_str("a.txt"), "one\ntwo\nthree\n");
}

#[test]
fn input_option_reads_the_patch_file() {
    for flag in ["-i", "--input"] {
        let t = tree();
        let patch = t.outside("fix.diff");
        std::fs::write(&patch, DIFF).expect("write patch");
        let out = t.run(&[flag, &patch.to_string_lossy()], "");
        assert_eq!(out.status, 0, "{flag}: {}", out.normalized());
        assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
    }
    let t = tree();
    let out = t.run(&["-i", "-"], DIFF);
    assert_eq!(out.status, 0, "{}", out.normalized());
    let out = t.run(&["-i", "x.diff", "y.diff"], "");
    assert_eq!(out.status, 2, "-i and PATCH together: {}", out.normalized());
}

#[test]
fn three_short_flag_is_three_way() {
    let t = tree();
    let short = t.run(&["-3", "--check", DIFF], "");
    let long = t.run(&["--3way", "--check", DIFF], "");
    assert_eq!(short.normalized(), long.normalized());
}

#[test]
fn forward_is_accepted_and_documented() {
    for flag in ["-N", "--forward"] {
        let t = tree();
        assert_eq!(t.run(&[flag, AGENT], "").status, 0);
        let again = t.run(&[flag, AGENT], "");
        assert_eq!(again.status, 0, "{}", again.normalized());
        assert!(again.stderr.contains("already applied"));
    }
    let help = tree().run(&["--help"], "");
    assert!(help.stdout.contains("--forward") && help.stdout.contains("already the default"));
}

#[test]
fn reject_is_a_usage_error_naming_what_to_use() {
    let out = tree().run(&["--reject", AGENT], "");
    assert_eq!(out.status, 2);
    assert!(!out.stderr.contains("--recount"), "{}", out.stderr);
    assert_cli_snapshot!("front_reject", out);
}

#[test]
fn verbose_names_where_each_hunk_went() {
    let t = TempTree::with(&[("a.txt", "zero\none\ntwo\nthree\n")]);
    let out = t.run(&["-v", DIFF], "");
    assert_cli_snapshot!("front_verbose", out);
}

#[test]
fn reverse_of_a_patch_never_applied_is_already_reverted() {
    let t = tree();
    let out = t.run(&["-R", DIFF], "");
    assert_eq!(out.status, 0);
    assert_cli_snapshot!("front_reverse_noop", out);
    let json = t.run(&["-R", "--json", DIFF], "");
    assert!(json.json()["warnings"][0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("already reverted")));
}

#[test]
fn no_op_run_marks_its_files_as_already_there() {
    let t = tree();
    assert_eq!(t.run(&[AGENT], "").status, 0);
    let out = t.run(&[AGENT], "");
    assert_eq!(out.status, 0);
    assert!(!out.stdout.contains("+0 -0"), "{}", out.stdout);
    assert_cli_snapshot!("front_noop_marked", out);
}

#[test]
fn apply_options_with_a_subcommand_are_usage_errors() {
    let t = tree();
    for args in [
        &["--preview", "undo"][..],
        &["--check", "recover"],
        &["--stat", "undo"],
        &["-N", "undo"],
        &["--window", "5", "undo"],
        &["--window", "20", "undo"],
        &["a.patch", "undo"],
    ] {
        let out = t.run(args, "");
        assert_eq!(out.status, 2, "{args:?}: {}", out.normalized());
        assert!(
            out.stderr.contains("cannot be combined with a subcommand"),
            "{args:?}: {}",
            out.stderr
        );
    }
    // convert reads a patch: the parse options stay allowed before it.
    let out = t.run(&["-p1", "convert", "--to", "agent", DIFF], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
}

/// A diff with a modification big enough to scale the graph, a nested rename with an edit,
/// an addition, a deletion and a mode change.
fn stat_case() -> (TempTree, String) {
    let big_old: String = (0..120).map(|i| format!("line {i}\n")).collect();
    let t = TempTree::with(&[
        ("src/deep/folder/big.txt", &big_old),
        ("lib/old_name.txt", "keep\nme\nhere\n"),
        ("gone.txt", "a\nb\n"),
        ("run.sh", "echo hi\n"),
    ]);
    let mut diff = String::from(
        "diff --git a/src/deep/folder/big.txt b/src/deep/folder/big.txt\n\
         --- a/src/deep/folder/big.txt\n+++ b/src/deep/folder/big.txt\n@@ -1,120 +1,120 @@\n",
    );
    for i in 0..120 {
        diff.push_str(&format!("-line {i}\n"));
    }
    for i in 0..120 {
        diff.push_str(&format!("+LINE {i}\n"));
    }
    diff.push_str(
        "diff --git a/lib/old_name.txt b/lib/new_name.txt\nsimilarity index 66%\n\
         rename from lib/old_name.txt\nrename to lib/new_name.txt\n\
         --- a/lib/old_name.txt\n+++ b/lib/new_name.txt\n@@ -1,3 +1,3 @@\n keep\n-me\n+you\n here\n\
         diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n\
         @@ -0,0 +1,2 @@\n+x\n+y\n\
         diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n\
         +++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n\
         diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n",
    );
    (t, diff)
}

fn git_apply(dir: &Path, flag: &str, patch: &Path) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["apply", flag])
        .arg(patch)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn stat_numstat_summary_match_git_apply_and_write_nothing() {
    let (t, diff) = stat_case();
    let patch = t.outside("case.diff");
    std::fs::write(&patch, &diff).expect("write patch");
    let before = t.snapshot();
    for flag in ["--stat", "--numstat", "--summary"] {
        let ours = t.run(&[flag, &patch.to_string_lossy()], "");
        assert_eq!(ours.status, 0, "{flag}: {}", ours.normalized());
        assert_eq!(t.snapshot(), before, "{flag} wrote");
        match git_apply(&t.root(), flag, &patch) {
            Some(git) => assert_eq!(ours.stdout, git, "{flag} differs from git apply"),
            None => eprintln!("git is not installed: {flag} not compared with git apply"),
        }
    }
    let all = t.run(
        &["--stat", "--numstat", "--summary", &patch.to_string_lossy()],
        "",
    );
    assert_cli_snapshot!("front_stat_numstat_summary", all);
}

#[test]
fn stat_with_apply_prints_and_writes() {
    let t = tree();
    let out = t.run(&["--stat", "--apply", DIFF], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(
        out.stdout,
        " a.txt |    2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"
    );
    assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
    let out = t.run(&["--apply", DIFF], "");
    assert_eq!(out.status, 2, "--apply alone: {}", out.normalized());
}

#[test]
fn stat_of_an_agent_patch_counts_a_deleted_file_from_disk() {
    let t = TempTree::with(&[("a.txt", "one\ntwo\nthree\n"), ("b.txt", "1\n2\n")]);
    let patch = format!(
        "{}*** Delete File: b.txt\n*** End Patch\n",
        AGENT.trim_end_matches("*** End Patch\n")
    );
    let out = t.run(&["--numstat", &patch], "");
    assert_eq!(
        out.stdout,
        "1\t1\ta.txt\n0\t2\tb.txt\n",
        "{}",
        out.normalized()
    );
    assert!(t.root().join("b.txt").exists());
}

#[test]
fn file_not_found_names_a_file_of_that_name_elsewhere() {
    let t = TempTree::with(&[
        ("src/app/config.py", "a = 1\n"),
        ("target/config.py", "a = 1\n"),
    ]);
    let patch = "*** Begin Patch\n*** Update File: config.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n";
    let out = t.run(&[patch], "");
    assert_eq!(out.status, 1);
    assert!(
        out.stderr.contains("did you mean `src/app/config.py`?"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("target/"),
        "a build folder is searched: {}",
        out.stderr
    );
    assert_cli_snapshot!("front_file_not_found_elsewhere", out);
}

/// An agent option takes the same rendering path as a plain apply: `-v`'s hunk lines and the
/// "already reverted" wording of `-R` are there with `--max-risk`, and the risk line too.
#[test]
fn verbose_and_reverse_wording_with_an_agent_option() {
    let t = TempTree::with(&[("a.txt", "zero\none\ntwo\nthree\n")]);
    let out = t.run(&["-v", "--max-risk", "1000", DIFF], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(out.stdout.contains("hunk 1 at line"), "{}", out.stdout);
    assert!(out.stderr.contains("risk: "), "{}", out.stderr);
    assert_cli_snapshot!("front_verbose_max_risk", out);

    let t = tree();
    let out = t.run(&["-R", "--max-risk", "1000", DIFF], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert!(out.stderr.contains("already reverted"), "{}", out.stderr);
    assert!(!out.stderr.contains("already applied"), "{}", out.stderr);
    assert_cli_snapshot!("front_reverse_noop_max_risk", out);
    assert_eq!(t.read_str("a.txt"), "one\ntwo\nthree\n");
}

/// "Did you mean" with `--preview`, and `--stat --apply` with `--max-risk`.
#[test]
fn did_you_mean_and_stat_with_agent_options() {
    let t = TempTree::with(&[("src/app/config.py", "a = 1\n")]);
    let patch = "*** Begin Patch\n*** Update File: config.py\n@@\n-a = 1\n+a = 2\n*** End Patch\n";
    let out = t.run(&["--preview", patch], "");
    assert_eq!(out.status, 1);
    assert!(
        out.stderr.contains("did you mean `src/app/config.py`?"),
        "{}",
        out.stderr
    );
    assert_cli_snapshot!("front_file_not_found_elsewhere_preview", out);

    let t = tree();
    let out = t.run(&["--stat", "--apply", "--max-risk", "1000", DIFF], "");
    assert_eq!(out.status, 0, "{}", out.normalized());
    assert_eq!(
        out.stdout,
        " a.txt |    2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n"
    );
    assert!(out.stderr.starts_with("risk: "), "{}", out.stderr);
    assert_eq!(t.read_str("a.txt"), "one\n2\nthree\n");
}
