//! CRLF files created and deleted by git diffs: the diff's own line endings are the file's
//! (README, unified diffs, "Line endings"), compared with `git apply` byte for byte.

use super::Scratch;

/// A repository that keeps CRLF bytes as they are (`core.autocrlf=false`).
fn crlf_repo() -> Scratch {
    let s = Scratch::new(&[]);
    s.git(&["config", "core.autocrlf", "false"]);
    s.write("base.txt", "base\n");
    s.commit_all("init");
    s
}

/// The staged diff of `edit`, then the repository put back to HEAD.
fn staged_diff(s: &Scratch, edit: &dyn Fn(&Scratch)) -> String {
    edit(s);
    s.git(&["add", "-A"]);
    let diff = s.git(&["diff", "--cached"]);
    s.git(&["reset", "-q", "--hard"]);
    s.git(&["clean", "-fdq"]);
    diff
}

const CRLF: &str = "one\r\ntwo\r\n\r\nlast\r\n";

#[test]
fn a_new_crlf_file_keeps_its_crlf_like_git_apply() {
    let ours = crlf_repo();
    let theirs = crlf_repo();
    let diff = staged_diff(&ours, &|s| s.write("dir/new.txt", CRLF));
    assert!(diff.contains("+one\r\n"), "git writes the CRs: {diff:?}");
    let run = ours.apply_patch(&[], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&[], &diff), 0);
    let bytes = std::fs::read(ours.dir.join("dir/new.txt")).unwrap();
    assert_eq!(bytes, CRLF.as_bytes());
    assert_eq!(ours.state(), theirs.state());
}

#[test]
fn a_crlf_file_deletion_applies_and_reverses_to_the_exact_bytes() {
    let s = crlf_repo();
    s.write("dos.txt", CRLF);
    s.commit_all("dos");
    let diff = staged_diff(&s, &|s| {
        std::fs::remove_file(s.dir.join("dos.txt")).unwrap();
    });
    assert!(diff.contains("-one\r\n"), "git writes the CRs: {diff:?}");
    // The deleted-content check accepts the CRLF file.
    let run = s.apply_patch(&[], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert!(!s.dir.join("dos.txt").exists());
    // Its reverse gives the file back byte for byte.
    let run = s.apply_patch(&["--reverse"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        std::fs::read(s.dir.join("dos.txt")).unwrap(),
        CRLF.as_bytes()
    );
    s.assert_status("");
}

#[test]
fn inserted_lines_of_a_changed_file_still_take_the_files_endings() {
    let s = crlf_repo();
    s.write("lf.txt", "a\nb\nc\n");
    s.commit_all("lf");
    // A diff whose `+` line ends in CRLF, against an LF file: the line is LF (SPEC §6).
    let diff = "--- a/lf.txt\n+++ b/lf.txt\n@@ -1,3 +1,4 @@\n a\n+new\r\n b\n c\n";
    let run = s.apply_patch(&[], diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        std::fs::read(s.dir.join("lf.txt")).unwrap(),
        b"a\nnew\nb\nc\n"
    );
}
