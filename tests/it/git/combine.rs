//! Every cell of the README's combinations table ("Applying: the command line"), through the
//! binary in a real repository: the agent options (`--check`, `--preview` + `confirm`,
//! `--rebase`, `--post-check` with and without `--rollback-on-fail`, `--max-risk`) with the
//! git modes (`--index`, `--cached`, `--3way`, `--3way --conflict-markers`); each result is
//! read back with `git status`, the index and the files. A combination that cannot mean
//! anything is a usage error (exit 2) whose message says why.

use super::Scratch;

const OLD: &str = "one\ntwo\nthree\n";
const NEW: &str = "one\nTWO\nthree\n";
const DIFF: &str = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";

fn repo() -> Scratch {
    let s = Scratch::new(&[]);
    s.write("a.txt", OLD);
    s.commit_all("init");
    s
}

fn json(run: &super::cli::Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr))
}

fn staged(s: &Scratch) -> String {
    s.git(&["show", ":a.txt"])
}

fn file(s: &Scratch) -> String {
    std::fs::read_to_string(s.dir.join("a.txt")).expect("read a.txt")
}

/// A usage error (exit 2) whose message contains `why`; nothing changed.
fn refused_as_usage(args: &[&str], why: &str) {
    let s = repo();
    let run = s.apply_patch(args, DIFF);
    assert_eq!(run.status, 2, "{args:?}: {}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(why), "{args:?}: {}", run.stderr);
    s.assert_status("");
}

#[test]
fn check_combines_with_every_git_mode_and_writes_nothing() {
    for mode in [
        &["--index"][..],
        &["--cached"],
        &["--3way"],
        &["--3way", "--conflict-markers"],
    ] {
        let s = repo();
        let mut args = vec!["--check", "--max-risk", "50"];
        args.extend_from_slice(mode);
        let run = s.apply_patch(&args, DIFF);
        assert_eq!(run.status, 0, "{args:?}: {}", run.stderr);
        s.assert_status("");
    }
}

/// `--preview` with a git mode, then `confirm`: the status it leaves.
fn preview_then_confirm(mode: &[&str], status: &str) -> Scratch {
    let s = repo();
    let mut args = vec!["--preview", "--json"];
    args.extend_from_slice(mode);
    let run = s.apply_patch(&args, DIFF);
    assert_eq!(run.status, 0, "{mode:?}: {}{}", run.stdout, run.stderr);
    s.assert_status("");
    let id = json(&run)["preview"]
        .as_str()
        .expect("a preview id")
        .to_string();
    let confirmed = s.apply_patch(&["confirm", &id], "");
    assert_eq!(confirmed.status, 0, "{mode:?}: {}", confirmed.stderr);
    s.assert_status(status);
    s
}

#[test]
fn a_preview_with_index_is_confirmed_into_the_work_tree_and_the_index() {
    let s = preview_then_confirm(&["--index"], "M  a.txt\n");
    assert_eq!((file(&s), staged(&s)), (NEW.to_string(), NEW.to_string()));
}

#[test]
fn a_preview_with_cached_is_confirmed_into_the_index_only() {
    let s = preview_then_confirm(&["--cached"], "MM a.txt\n");
    assert_eq!((file(&s), staged(&s)), (OLD.to_string(), NEW.to_string()));
}

#[test]
fn a_preview_with_3way_is_confirmed_into_the_work_tree() {
    let s = preview_then_confirm(&["--3way"], " M a.txt\n");
    assert_eq!(file(&s), NEW);
}

#[test]
fn a_confirm_with_index_refuses_a_file_changed_in_the_index_since() {
    let s = repo();
    let run = s.apply_patch(&["--preview", "--index", "--json"], DIFF);
    let id = json(&run)["preview"]
        .as_str()
        .expect("a preview id")
        .to_string();
    s.write("b.txt", "b\n");
    // The work tree still matches the preview, but a.txt's index entry no longer matches it.
    s.write("a.txt", "one\ntwo\nthree\nfour\n");
    s.git(&["add", "a.txt"]);
    s.write("a.txt", OLD);
    let confirmed = s.apply_patch(&["confirm", &id], "");
    assert_eq!(confirmed.status, 1, "{}", confirmed.stderr);
    assert!(
        confirmed.stderr.contains("index_mismatch"),
        "{}",
        confirmed.stderr
    );
    assert_eq!(staged(&s), "one\ntwo\nthree\nfour\n");
}

#[test]
fn preview_with_conflict_markers_is_a_usage_error() {
    refused_as_usage(
        &["--preview", "--3way", "--conflict-markers"],
        "a conflict to resolve, not a change to confirm",
    );
}

/// A repository whose a.txt changed (and was staged) since the version an agent patch names.
fn rebased(mode: &[&str]) -> (Scratch, super::cli::Run) {
    let s = repo();
    let base = apply_patch::hash::sha256_hex(OLD.as_bytes());
    s.write("a.txt", &format!("zero\n{OLD}"));
    s.git(&["add", "a.txt"]);
    let patch = format!(
        "*** Begin Patch\n*** Update File: a.txt\n*** Base: {}\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n",
        &base[..12]
    );
    let mut args = vec!["--rebase"];
    args.extend_from_slice(mode);
    let run = s.apply_patch(&args, &patch);
    (s, run)
}

#[test]
fn rebase_with_index_merges_into_the_work_tree_and_the_index() {
    let (s, run) = rebased(&["--index"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let want = format!("zero\n{NEW}");
    assert_eq!((file(&s), staged(&s)), (want.clone(), want));
    s.assert_status("M  a.txt\n");
}

#[test]
fn rebase_with_3way_merges_into_the_work_tree() {
    let (s, run) = rebased(&["--3way"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(file(&s), format!("zero\n{NEW}"));
    s.assert_status("MM a.txt\n");
}

#[test]
fn rebase_with_cached_is_a_usage_error() {
    refused_as_usage(
        &["--rebase", "--cached"],
        "a cached apply plans against the index",
    );
}

#[test]
fn a_failed_post_check_with_index_rolls_back_the_work_tree_and_the_index() {
    let s = repo();
    let args = [
        "--index",
        "--post-check",
        "false",
        "--rollback-on-fail",
        "--json",
    ];
    let run = s.apply_patch(&args, DIFF);
    assert_eq!(run.status, 1, "{}{}", run.stdout, run.stderr);
    let v = json(&run);
    assert_eq!(v["error"]["code"], "post_check_failed", "{v}");
    assert_eq!(v["verification"]["rolled_back"], true, "{v}");
    assert_eq!((file(&s), staged(&s)), (OLD.to_string(), OLD.to_string()));
    s.assert_status("");
}

#[test]
fn a_failed_post_check_with_index_and_no_rollback_keeps_both_and_exits_4() {
    let s = repo();
    let run = s.apply_patch(&["--index", "--post-check", "false"], DIFF);
    assert_eq!(run.status, 4, "{}", run.stderr);
    s.assert_status("M  a.txt\n");
}

#[test]
fn a_failed_post_check_with_cached_rolls_back_the_index() {
    let s = repo();
    let args = ["--cached", "--post-check", "false", "--rollback-on-fail"];
    let run = s.apply_patch(&args, DIFF);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert_eq!(staged(&s), OLD);
    s.assert_status("");
}

#[test]
fn a_passing_post_check_with_3way_keeps_the_change() {
    let s = repo();
    let run = s.apply_patch(
        &["--3way", "--post-check", "true", "--rollback-on-fail"],
        DIFF,
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    s.assert_status(" M a.txt\n");
}

#[test]
fn post_check_with_check_or_preview_is_a_usage_error() {
    refused_as_usage(
        &["--check", "--post-check", "true"],
        "a check writes nothing",
    );
    refused_as_usage(
        &["--preview", "--post-check", "true"],
        "a preview writes nothing",
    );
}

#[test]
fn max_risk_gates_every_git_mode() {
    for mode in [
        &["--index"][..],
        &["--cached"],
        &["--3way"],
        &["--3way", "--conflict-markers"],
        &["--preview", "--index"],
    ] {
        let s = repo();
        let mut args = vec!["--max-risk", "0", "--json"];
        args.extend_from_slice(mode);
        let run = s.apply_patch(&args, DIFF);
        assert_eq!(run.status, 1, "{mode:?}: {}", run.stdout);
        assert_eq!(json(&run)["error"]["code"], "risk_exceeded", "{mode:?}");
        s.assert_status("");
        let mut args = vec!["--max-risk", "50"];
        args.extend_from_slice(&mode[..1]);
        let run = s.apply_patch(&args, DIFF);
        assert_eq!(run.status, 0, "{mode:?}: {}", run.stderr);
    }
}

#[test]
fn a_confirmed_previews_audit_line_is_a_direct_applys() {
    let audit = |s: &Scratch| -> serde_json::Value {
        let text = std::fs::read_to_string(s.dir.join(".git/apply-patch/audit.jsonl"))
            .expect("an audit log");
        let line: serde_json::Value =
            serde_json::from_str(text.lines().last().expect("a line")).expect("JSON");
        line["files"].clone()
    };
    let direct = repo();
    assert_eq!(direct.apply_patch(&["--index"], DIFF).status, 0);
    let confirmed = preview_then_confirm(&["--index"], "M  a.txt\n");
    let files = audit(&direct);
    assert_eq!(files[0]["lines_added"], 1, "{files}");
    assert_eq!(files, audit(&confirmed));
}
