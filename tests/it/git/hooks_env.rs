//! A run from a git hook: git sets `GIT_DIR` and `GIT_WORK_TREE` (here a separated layout,
//! `git --git-dir=X --work-tree=Y`, where Y has no `.git` at all). The one discovery finds the
//! repository for `--index`, for `check-patches` and for the state place.

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// A git dir `X` apart from its work tree `Y`, one commit of `a.txt`.
struct Separated {
    _tmp: tempfile::TempDir,
    git_dir: std::path::PathBuf,
    work: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl Separated {
    fn new() -> Separated {
        let tmp = tempfile::tempdir().expect("temp dir");
        let base = tmp.path().canonicalize().expect("canonical");
        let (git_dir, work, home) = (base.join("X.git"), base.join("Y"), base.join("home"));
        for d in [&work, &home] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let s = Separated {
            _tmp: tmp,
            git_dir,
            work,
            home,
        };
        s.git(&["init", "-q", "-b", "main"]);
        std::fs::write(s.work.join("a.txt"), "one\ntwo\n").expect("write");
        s.git(&["add", "a.txt"]);
        s.git(&[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ]);
        s
    }

    fn env<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work)
            .env_remove("GIT_INDEX_FILE")
            .env("HOME", &self.home)
            .env("XDG_STATE_HOME", self.home.join("state"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", self.home.join("gitconfig"))
            .env("NO_COLOR", "1")
            .current_dir(&self.work)
    }

    fn git(&self, args: &[&str]) -> String {
        let out = self
            .env(&mut Command::new("git"))
            .args(args)
            .output()
            .expect("git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn run(&self, args: &[&str], stdin: &str) -> Output {
        use std::io::Write;
        let mut child = self
            .env(&mut Command::new(env!("CARGO_BIN_EXE_apply-patch")))
            .arg("--root")
            .arg(&self.work)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary runs");
        let written = child
            .stdin
            .take()
            .expect("piped")
            .write_all(stdin.as_bytes());
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.expect("write stdin"),
        }
        child.wait_with_output().expect("finishes")
    }
}

const PATCH: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_hook_run_with_git_dir_and_work_tree_finds_the_repository() {
    let s = Separated::new();
    assert!(
        !s.work.join(".git").exists(),
        "the work tree has no .git of its own"
    );
    // check-patches checks against X's index.
    std::fs::write(s.home.join("one.patch"), PATCH).expect("write patch");
    let patch_file = s.home.join("one.patch");
    let out = s.run(&["check-patches", patch_file.to_str().expect("utf-8")], "");
    ok(&out);
    // apply --index stages into X's index.
    let out = s.run(&["--index", "-"], PATCH);
    ok(&out);
    assert_eq!(s.git(&["diff", "--cached", "--name-only"]), "a.txt\n");
    assert_eq!(
        std::fs::read_to_string(s.work.join("a.txt")).expect("read"),
        "one\nTWO\n"
    );
    // The state place is X's, not the user's state directory.
    assert!(
        s.git_dir.join("apply-patch/audit.jsonl").is_file(),
        "audit log in the git dir"
    );
    assert!(
        !s.home.join("state/apply-patch").exists(),
        "nothing in the user's state dir"
    );
    // And undo finds that history again.
    ok(&s.run(&["undo"], ""));
    assert_eq!(
        std::fs::read_to_string(s.work.join("a.txt")).expect("read"),
        "one\ntwo\n"
    );
}

/// The root is checked once: the same `usage` refusal (with its hint, exit status 2) from
/// every entry point, for a file and for a missing path.
#[test]
fn a_root_that_is_not_a_directory_is_the_same_usage_error_everywhere() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").expect("write");
    let missing = tmp.path().join("missing");
    let patch = tmp.path().join("add.patch");
    std::fs::write(
        &patch,
        "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
    )
    .expect("write");
    let patch = patch.to_str().expect("utf-8");
    for root in [&file, &missing] {
        let shown = root.display().to_string();
        for args in [
            vec![patch],
            vec!["--index", patch],
            vec!["read", "x"],
            vec!["undo"],
            vec!["recover"],
            vec!["check-patches"],
            vec!["mcp"],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_apply-patch"))
                .arg("--root")
                .arg(root)
                .args(&args)
                .env("XDG_STATE_HOME", tmp.path().join("state"))
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .output()
                .expect("runs");
            // check-patches prints its report (an error too) on stdout.
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(2), "{args:?} on {shown}: {stderr}");
            assert!(
                stderr.contains(&format!(
                    "error[usage]: the root {shown} is not a directory"
                )) && stderr.contains("hint: pass an existing directory with --root"),
                "{args:?} on {shown}: {stderr}"
            );
        }
        root_refused_by_the_library(root);
    }
}

fn root_refused_by_the_library(root: &Path) {
    use apply_patch::pipeline::{self, Mode, Options, Target};
    let patch = b"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
    let refused = pipeline::apply_bytes(Target::Dir(root), patch, &Options::default(), Mode::Write)
        .expect_err("refused");
    assert_eq!(refused.error.code, apply_patch::ErrorCode::Usage);
    let e = apply_patch::state::StateDir::for_root(root).expect_err("refused");
    assert_eq!(e.code, apply_patch::ErrorCode::Usage);
    let e = apply_patch::git::Repo::discover(root).expect_err("refused");
    let e = apply_patch::Error::from(e);
    assert_eq!(e.code, apply_patch::ErrorCode::Usage);
    let e = apply_patch::pipeline::check_patches(root, &[], None).expect_err("refused");
    assert_eq!(e.code, apply_patch::ErrorCode::Usage);
}
