//! The agent interface end to end through the binary: `read`, `--preview` / `confirm`,
//! chips, `--post-check`, `--max-risk` and `--rebase` on realistic concurrent edits.

use crate::util::TempTree;

macro_rules! assert_agent_snapshot {
    ($name:expr, $value:expr) => {
        insta::with_settings!({
            snapshot_path => "../../snapshots/agent",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!($name, $value);
        })
    };
}

const PY: &str = "\
import os
import sys


def load(path):
\twith open(path) as f:
\t\treturn f.read()


def greet(name):
    message = 'hello ' + name
    print(message)
    return message


def main():
    greet(sys.argv[1])
";

/// The version `read --json` hands out for `path`.
fn base_of(t: &TempTree, path: &str) -> String {
    let out = t.run(&["read", path, "--json"], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    out.json()["base"]
        .as_str()
        .expect("base is a string")
        .to_string()
}

fn greet_patch(base: &str) -> String {
    format!(
        "*** Begin Patch\n*** Update File: app.py\n*** Base: {base}\n@@ def greet(name):\n-    message = 'hello ' + name\n+    message = 'hello, ' + name + '!'\n     print(message)\n*** End Patch\n"
    )
}

#[test]
fn read_numbers_lines_and_hands_out_the_version() {
    let t = TempTree::with(&[("app.py", PY)]);
    let out = t.run(&["read", "app.py", "--lines", "5:8"], "");
    assert_agent_snapshot!("read_lines", out.normalized());
    let json = t.run(&["read", "app.py", "--json"], "").json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["total_lines"], 17);
    assert_eq!(json["lines"][5], "\twith open(path) as f:");
    let sha = json["sha256"].as_str().expect("sha256");
    assert!(sha.starts_with(json["base"].as_str().expect("base")));
    assert_eq!(json["base"].as_str().map(str::len), Some(16));
}

#[test]
fn read_refuses_binary_and_non_utf8_files() {
    let t = TempTree::new();
    t.write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    t.write("latin1.txt", b"caf\xe9\n");
    let out = t.run(&["read", "logo.png"], "");
    assert_eq!(out.status, 1);
    assert!(out.stdout.is_empty(), "nothing printed: {:?}", out.stdout);
    assert!(out.stderr.contains("error[binary_file]"), "{}", out.stderr);
    let json = t.run(&["read", "latin1.txt", "--json"], "").json();
    assert_eq!(json["error"]["code"], "invalid_utf8");
    assert!(json["error"]["details"]["base"].is_string());
    let out = t.run(&["read", "../outside.txt", "--json"], "");
    assert_eq!(out.json()["error"]["code"], "path_escape");
}

#[test]
fn a_base_from_read_applies_and_a_stale_one_is_refused() {
    let t = TempTree::with(&[("app.py", PY)]);
    let base = base_of(&t, "app.py");
    t.write("app.py", PY.replace("import os\n", "").as_bytes());
    let out = t.run(&["--json", &greet_patch(&base)], "");
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "stale_file");
}

#[test]
fn preview_then_confirm_applies_exactly_once() {
    let t = TempTree::with(&[("app.py", PY)]);
    let before = t.snapshot();
    let patch = greet_patch(&base_of(&t, "app.py"));
    let out = t.run(&["--preview", &patch], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(t.snapshot(), before, "a preview writes nothing");
    assert!(
        out.stdout.contains("+    message = 'hello, ' + name + '!'"),
        "{}",
        out.stdout
    );
    let json = t.run(&["--preview", "--json", &patch], "").json();
    let id = json["preview"].as_str().expect("a preview id").to_string();
    assert!(json["diff"]
        .as_str()
        .is_some_and(|d| d.contains("--- a/app.py")));

    let out = t.run(&["confirm", &id], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(t.read_str("app.py").contains("'hello, ' + name + '!'"));
    assert_eq!(
        out.stdout,
        format!("confirmed preview {id}\nmodify app.py\n")
    );

    let again = t.run(&["confirm", &id, "--json"], "");
    assert_eq!(again.status, 1);
    assert_eq!(again.json()["error"]["code"], "unknown_preview");
    let unknown = t.run(&["confirm", "0123456789ab", "--json"], "");
    assert_eq!(unknown.json()["error"]["code"], "unknown_preview");
}

/// Issue 25 item 1: `confirm` leaves the root's check to the run's one opening of it; a root
/// that is no directory is refused like any confirm (the report names the preview).
#[test]
fn confirm_on_a_root_that_is_no_directory_is_refused_by_the_run() {
    let t = TempTree::with(&[("app.py", PY)]);
    let out = t.run(&["--root", "no-such-dir", "confirm", "0123456789ab"], "");
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the root no-such-dir is not a directory"),
        "{}",
        out.stderr
    );
    assert!(out
        .stderr
        .contains("pass an existing directory with --root"));
    let out = t.run(
        &["--root", "no-such-dir", "confirm", "0123456789ab", "--json"],
        "",
    );
    assert_eq!(out.status, 2, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["error"]["code"], "usage");
    assert_eq!(json["preview"], "0123456789ab", "{json}");
    assert_eq!(t.snapshot(), TempTree::with(&[("app.py", PY)]).snapshot());
}

#[test]
fn confirm_refuses_when_a_target_changed_since_the_preview() {
    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch(&base_of(&t, "app.py"));
    let json = t.run(&["--preview", "--json", &patch], "").json();
    let id = json["preview"].as_str().expect("a preview id").to_string();
    t.write("app.py", format!("{PY}# edited meanwhile\n").as_bytes());
    let out = t.run(&["confirm", &id, "--json"], "");
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "stale_file");
    assert!(t.read_str("app.py").ends_with("# edited meanwhile\n"));
}

#[test]
fn a_refused_patch_is_kept_as_a_chip_naming_the_hunks_that_would_apply() {
    let t = TempTree::with(&[("app.py", PY), ("b.txt", "one\ntwo\n")]);
    let patch = "*** Begin Patch\n*** Update File: app.py\n@@ def load(path):\n-\twith open(path) as f:\n+\twith open(path, encoding='utf-8') as f:\n@@ def greet(name):\n-    message = 'bye ' + name\n+    message = 'hi ' + name\n*** Update File: b.txt\n@@\n-two\n+2\n*** End Patch\n";
    let before = t.snapshot();
    let out = t.run(&["--json", patch], "");
    assert_eq!(out.status, 1);
    assert_eq!(t.snapshot(), before);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "context_not_found");
    let chip = e["details"]["chip"]
        .as_str()
        .expect("a chip id")
        .to_string();
    let applicable: Vec<(String, u64)> = e["details"]["applicable"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap_or("").to_string(),
                h["hunk"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(applicable, vec![("app.py".into(), 1), ("b.txt".into(), 1)]);
    assert_eq!(e["details"]["failed"][0]["hunk"], 2);
    let hint = e["hint"].as_str().expect("a hint");
    assert!(hint.contains("only hunk 2 of app.py failed"), "{hint}");
    let kept = t.run(&["chip", &chip], "");
    assert_eq!(kept.status, 0);
    assert_eq!(kept.stdout, patch);
}

#[test]
fn post_check_reports_and_rolls_back_on_request() {
    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch(&base_of(&t, "app.py"));
    let out = t.run(
        &[
            "--json",
            "--post-check",
            "grep -q \"hello, \" app.py",
            &patch,
        ],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stdout);
    let v = &out.json()["verification"];
    assert_eq!(v["status"], "passed");
    assert_eq!(v["exit_code"], 0);

    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch(&base_of(&t, "app.py"));
    let out = t.run(
        &["--json", "--post-check", "echo broken >&2; exit 3", &patch],
        "",
    );
    assert_eq!(out.status, 4, "applied, but the check failed");
    let json = out.json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["verification"]["status"], "failed");
    assert_eq!(json["verification"]["stderr_tail"], "broken\n");
    assert!(t.read_str("app.py").contains("'hello, '"));

    let t = TempTree::with(&[("app.py", PY)]);
    let before = t.snapshot();
    let patch = greet_patch(&base_of(&t, "app.py"));
    let out = t.run(
        &[
            "--post-check",
            "python3 -c 'raise SystemExit(2)'",
            "--rollback-on-fail",
            &patch,
        ],
        "",
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("error[post_check_failed]"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("exited with status 2"),
        "{}",
        out.stderr
    );
    assert_eq!(t.snapshot(), before, "the change was rolled back");
}

#[test]
fn max_risk_refuses_before_anything_is_written() {
    let t = TempTree::with(&[("app.py", PY)]);
    let add_env = "*** Begin Patch\n*** Add File: .env\n+TOKEN=secret\n*** End Patch\n";
    let before = t.snapshot();
    let out = t.run(&["--json", "--max-risk", "10", add_env], "");
    assert_eq!(out.status, 1);
    let json = out.json();
    assert_eq!(json["error"]["code"], "risk_exceeded");
    assert_eq!(json["risk"]["score"], 22);
    assert_eq!(t.snapshot(), before);
    let out = t.run(
        &[
            "--json",
            "--max-risk",
            "3",
            &greet_patch(&base_of(&t, "app.py")),
        ],
        "",
    );
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert_eq!(out.json()["risk"]["score"], 3);
}

/// A formatter ran between the read and the edit: it sorted the imports and rewrote the
/// quotes of another function. The edit still lands, merged onto the formatted file.
#[test]
fn rebase_survives_a_formatter_run_between_read_and_edit() {
    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch(&base_of(&t, "app.py"));
    let formatted = PY
        .replace("import os\nimport sys\n", "import sys\nimport os\n")
        .replace("\t\treturn f.read()", "\t\treturn f.read()  # whole file")
        .replace("    greet(sys.argv[1])", "    greet(sys.argv[-1])");
    t.write("app.py", formatted.as_bytes());
    let refused = t.run(&["--json", &patch], "");
    assert_eq!(refused.json()["error"]["code"], "stale_file");
    let out = t.run(&["--rebase", "--json", &patch], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    let json = out.json();
    assert_eq!(json["warnings"][0]["code"], "rebased");
    let want = formatted.replace("'hello ' + name", "'hello, ' + name + '!'");
    assert_eq!(t.read_str("app.py"), want);
}

/// A second agent changed another function of the same file.
#[test]
fn rebase_merges_with_a_second_agent_editing_another_function() {
    let t = TempTree::with(&[("app.py", PY)]);
    let mine = greet_patch(&base_of(&t, "app.py"));
    let theirs = format!(
        "*** Begin Patch\n*** Update File: app.py\n*** Base: {}\n@@ def load(path):\n-\twith open(path) as f:\n+\twith open(path, encoding='utf-8') as f:\n*** End Patch\n",
        base_of(&t, "app.py")
    );
    assert_eq!(t.run(&[&theirs], "").status, 0);
    let out = t.run(&["--rebase", &mine], "");
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(out.stderr.contains("warning[rebased]"), "{}", out.stderr);
    let text = t.read_str("app.py");
    assert!(
        text.contains("encoding='utf-8'") && text.contains("'hello, ' + name + '!'"),
        "{text}"
    );
}

/// Both changed the same line: a true conflict, nothing written, both sides shown.
#[test]
fn rebase_refuses_a_true_conflict_with_the_conflicting_lines() {
    let t = TempTree::with(&[("app.py", PY)]);
    let mine = greet_patch(&base_of(&t, "app.py"));
    let other = PY.replace("'hello ' + name", "'good day ' + name");
    t.write("app.py", other.as_bytes());
    let out = t.run(&["--rebase", "--json", &mine], "");
    assert_eq!(out.status, 1);
    let e = &out.json()["error"];
    assert_eq!(e["code"], "merge_conflict");
    let region = &e["details"]["conflicts"][0];
    assert_eq!(region["ours"][0], "    message = 'good day ' + name");
    assert_eq!(region["theirs"][0], "    message = 'hello, ' + name + '!'");
    assert_eq!(t.read_str("app.py"), other);
}

#[test]
fn rebase_without_a_known_base_stays_stale() {
    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch("00112233445566aa");
    let out = t.run(&["--rebase", "--json", &patch], "");
    assert_eq!(out.status, 1);
    assert_eq!(out.json()["error"]["code"], "stale_file");
    let t = TempTree::with(&[("app.py", PY)]);
    let base = base_of(&t, "app.py");
    t.write("app.py", format!("{PY}\n").as_bytes());
    let delete =
        format!("*** Begin Patch\n*** Delete File: app.py\n*** Base: {base}\n*** End Patch\n");
    let out = t.run(&["--rebase", "--json", &delete], "");
    assert_eq!(
        out.json()["error"]["code"],
        "stale_file",
        "a stale delete is never merged"
    );
}

/// A stale Base whose content `read` kept: the refusal names `--rebase` (which then
/// merges); without a kept snapshot it does not.
#[test]
fn a_stale_base_with_a_kept_snapshot_names_rebase() {
    let t = TempTree::with(&[("app.py", PY)]);
    let patch = greet_patch(&base_of(&t, "app.py"));
    t.write("app.py", PY.replace("import os\n", "").as_bytes());
    let out = t.run(&[&patch], "");
    assert_eq!(out.status, 1);
    assert_agent_snapshot!("stale_with_snapshot", out.normalized());
    let json = t.run(&["--json", &patch], "").json();
    assert_eq!(json["error"]["details"]["rebase"], "possible");
    let unread = greet_patch("00112233445566aa");
    let out = t.run(&[&unread], "");
    assert_eq!(out.status, 1);
    assert!(!out.stderr.contains("--rebase"), "{}", out.stderr);
    assert_eq!(t.run(&["--rebase", &patch], "").status, 0);
}

/// `--rebase` with no content of the Base's version known says why nothing was merged.
#[test]
fn rebase_without_a_snapshot_says_why() {
    let t = TempTree::with(&[("app.py", PY)]);
    let out = t.run(&["--rebase", &greet_patch("00112233445566aa")], "");
    assert_eq!(out.status, 1);
    assert_agent_snapshot!("rebase_without_snapshot", out.normalized());
}

/// Inside a git work tree, the HEAD version is a base even without a read.
#[test]
fn rebase_uses_the_head_version_in_a_git_work_tree() {
    let t = TempTree::with(&[("app.py", PY)]);
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(t.root())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !git(&["init", "-q"]) {
        eprintln!("skipped: git is not available");
        return;
    }
    assert!(git(&["add", "app.py"]));
    assert!(git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "c"
    ]));
    let head_version = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(PY.as_bytes());
        d.iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    t.write(
        "app.py",
        PY.replace("sys.argv[1]", "sys.argv[2]").as_bytes(),
    );
    let out = t.run(&["--rebase", "--json", &greet_patch(&head_version)], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert!(out.json()["warnings"][0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("git index")));
    let text = t.read_str("app.py");
    assert!(
        text.contains("sys.argv[2]") && text.contains("'hello, '"),
        "{text}"
    );
}

/// A stale rename: the moved file gets the merged content, the old path is gone.
#[test]
fn rebase_follows_a_move() {
    let t = TempTree::with(&[("app.py", PY)]);
    let base = base_of(&t, "app.py");
    let other = PY.replace("sys.argv[1]", "sys.argv[-1]");
    t.write("app.py", other.as_bytes());
    let patch = format!(
        "*** Begin Patch\n*** Update File: app.py\n*** Move to: src/app.py\n*** Base: {base}\n@@ def greet(name):\n-    message = 'hello ' + name\n+    message = 'hi ' + name\n*** End Patch\n"
    );
    let out = t.run(&["--rebase", "--json", &patch], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    assert!(!t.root().join("app.py").exists());
    assert_eq!(t.read_str("src/app.py"), other.replace("'hello '", "'hi '"));
}

/// CRLF endings and a missing final newline survive the merge byte for byte.
#[test]
fn rebase_keeps_crlf_endings() {
    let crlf = PY.replace('\n', "\r\n");
    let crlf = crlf.trim_end_matches("\r\n").to_string();
    let t = TempTree::with(&[("app.py", &crlf)]);
    let base = base_of(&t, "app.py");
    let other = crlf.replace("import os\r\n", "import os\r\nimport re\r\n");
    t.write("app.py", other.as_bytes());
    let out = t.run(&["--rebase", "--json", &greet_patch(&base)], "");
    assert_eq!(out.status, 0, "{}", out.stdout);
    let want = other.replace("'hello ' + name", "'hello, ' + name + '!'");
    assert_eq!(t.read_str("app.py"), want);
}
