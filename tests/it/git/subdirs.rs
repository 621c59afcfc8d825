//! Files in nested subdirectories (`src/a/b.rs`) inside a git work tree, every git flag and
//! a run from a subdirectory, each compared with `git apply` (same flags) on a twin
//! repository: `git ls-files --stage`, `git status --porcelain` and the files' bytes.

use super::Scratch;
use std::path::Path;
use std::process::Stdio;

fn lines(from: usize, to: usize) -> String {
    (from..=to).map(|i| format!("line {i}\n")).collect()
}

fn nested(s: &Scratch) {
    s.write("src/a/b.rs", &lines(1, 12));
    s.write("src/x/gone.rs", "bye\n");
    s.write("top.txt", "top\n");
    s.commit_all("init");
}

/// Two repositories set up by `setup`, and the staged diff (with renames) of `edit` made in
/// a third one.
fn twins_and_diff(
    setup: &dyn Fn(&Scratch),
    edit: &dyn Fn(&Scratch),
    diff_args: &[&str],
) -> (Scratch, Scratch, String) {
    let t = Scratch::new(&[]);
    nested(&t);
    edit(&t);
    t.git(&["add", "-A"]);
    let mut args = vec!["diff", "--cached", "-M"];
    args.extend_from_slice(diff_args);
    let diff = t.git(&args);
    let (a, b) = (Scratch::new(&[]), Scratch::new(&[]));
    setup(&a);
    setup(&b);
    assert_eq!(a.state(), b.state(), "the twins start equal");
    (a, b, diff)
}

fn edit_nested(s: &Scratch) {
    s.write(
        "src/a/b.rs",
        &lines(1, 12).replace("line 8\n", "line eight\n"),
    );
    s.write("src/a/c/new.rs", "fn new() {}\n");
    std::fs::remove_file(s.dir.join("src/x/gone.rs")).unwrap();
}

/// `git apply ARGS` of `patch` run in `dir`; its exit status.
fn git_apply_in(s: &Scratch, dir: &Path, args: &[&str], patch: &str) -> i32 {
    use std::io::Write;
    let mut all = vec!["apply"];
    all.extend_from_slice(args);
    let mut child = s
        .command(dir, &all)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("git runs");
    let mut stdin = child.stdin.take().expect("piped");
    stdin.write_all(patch.as_bytes()).expect("written");
    drop(stdin);
    child.wait().expect("git finishes").code().unwrap_or(-1)
}

fn same_as_git(flags: &[&str], expected_status: &[&str]) {
    let (ours, theirs, diff) = twins_and_diff(&nested, &edit_nested, &[]);
    let run = ours.apply_patch(flags, &diff);
    assert_eq!(run.status, 0, "{flags:?}: {}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(flags, &diff), 0, "git apply {flags:?}");
    assert_eq!(ours.state(), theirs.state(), "{flags:?}");
    ours.assert_status_set(expected_status);
}

#[test]
fn nested_files_plain_apply_inside_a_repository() {
    same_as_git(&[], &[" M src/a/b.rs", "?? src/a/c/", " D src/x/gone.rs"]);
}

#[test]
fn nested_files_with_index() {
    same_as_git(
        &["--index"],
        &["M  src/a/b.rs", "A  src/a/c/new.rs", "D  src/x/gone.rs"],
    );
}

#[test]
fn nested_files_with_cached() {
    same_as_git(
        &["--cached"],
        &[
            // --cached leaves the work tree as it was (at HEAD).
            "MM src/a/b.rs",
            "AD src/a/c/new.rs",
            "D  src/x/gone.rs",
            "?? src/x/",
        ],
    );
}

#[test]
fn nested_file_three_way_clean_merge() {
    let moved_on = |s: &Scratch| {
        nested(s);
        s.write(
            "src/a/b.rs",
            &lines(1, 12).replace("line 3\n", "line three\n"),
        );
        s.commit_all("three");
    };
    let change = |s: &Scratch| {
        s.write(
            "src/a/b.rs",
            &lines(1, 12).replace("line 9\n", "line nine\n"),
        );
    };
    let (ours, theirs, diff) = twins_and_diff(&moved_on, &change, &[]);
    // git's --3way works on the index too.
    let run = ours.apply_patch(&["--3way", "--index"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&["--3way"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    ours.assert_status("M  src/a/b.rs\n");
    let text = std::fs::read_to_string(ours.dir.join("src/a/b.rs")).unwrap();
    assert!(
        text.contains("line three\n") && text.contains("line nine\n"),
        "{text}"
    );
}

#[test]
fn nested_rename_across_directories_with_index() {
    let rename = |s: &Scratch| {
        std::fs::create_dir_all(s.dir.join("lib/c")).unwrap();
        std::fs::rename(s.dir.join("src/a/b.rs"), s.dir.join("lib/c/d.rs")).unwrap();
        s.write(
            "lib/c/d.rs",
            &lines(1, 12).replace("line 12\n", "line twelve\n"),
        );
    };
    let (ours, theirs, diff) = twins_and_diff(&nested, &rename, &[]);
    assert!(
        diff.contains("rename from src/a/b.rs\nrename to lib/c/d.rs\n"),
        "{diff}"
    );
    let run = ours.apply_patch(&["--index"], &diff);
    assert_eq!(run.status, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(theirs.git_apply(&["--index"], &diff), 0);
    assert_eq!(ours.state(), theirs.state());
    ours.assert_status("R  src/a/b.rs -> lib/c/d.rs\n");
    assert!(
        !ours.dir.join("src/a").exists(),
        "the emptied directory goes, as with git"
    );
}

#[test]
fn run_from_a_subdirectory_with_root_at_the_repository() {
    for flags in [&[][..], &["--index"][..]] {
        let (ours, theirs, diff) = twins_and_diff(&nested, &edit_nested, &[]);
        let root = ours.dir.to_str().unwrap().to_string();
        let mut args = vec!["--root", root.as_str()];
        args.extend_from_slice(flags);
        let run = ours.apply_patch_in(&ours.dir.join("src/a"), &args, &diff);
        assert_eq!(run.status, 0, "{flags:?}: {}{}", run.stdout, run.stderr);
        // git reads the same root-relative paths when run at the top (from src/a it would
        // skip the files outside src/a).
        assert_eq!(theirs.git_apply(flags, &diff), 0);
        assert_eq!(ours.state(), theirs.state(), "{flags:?}");
    }
}

#[test]
fn run_from_a_subdirectory_with_root_at_the_subdirectory() {
    // Paths relative to src/ (git diff --relative), applied from src/.
    let edit = |s: &Scratch| {
        s.write(
            "src/a/b.rs",
            &lines(1, 12).replace("line 8\n", "line eight\n"),
        );
        s.write("src/a/c/new.rs", "fn new() {}\n");
    };
    for flags in [&[][..], &["--index"][..]] {
        for root in [".", "ABSOLUTE"] {
            let (ours, theirs, diff) = twins_and_diff(&nested, &edit, &["--relative=src"]);
            assert!(diff.contains("+++ b/a/b.rs\n"), "{diff}");
            let sub = ours.dir.join("src");
            let sub_text = sub.to_str().unwrap().to_string();
            let root = if root == "." { root } else { sub_text.as_str() };
            let mut args = vec!["--root", root];
            args.extend_from_slice(flags);
            let run = ours.apply_patch_in(&sub, &args, &diff);
            assert_eq!(
                run.status, 0,
                "{flags:?} {root}: {}{}",
                run.stdout, run.stderr
            );
            // git apply takes a diff's paths as relative to the top of the work tree (and
            // skips those outside the current directory): --directory=src says where they are.
            let mut git_args = vec!["--directory=src"];
            git_args.extend_from_slice(flags);
            let theirs_sub = theirs.dir.join("src");
            assert_eq!(git_apply_in(&theirs, &theirs_sub, &git_args, &diff), 0);
            assert_eq!(ours.state(), theirs.state(), "{flags:?} {root}");
            assert_eq!(
                std::fs::read_to_string(sub.join("a/c/new.rs")).unwrap(),
                "fn new() {}\n"
            );
        }
    }
}
